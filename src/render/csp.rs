//! The pages' Content-Security-Policy, and the hash that lets our one
//! stylesheet in.
//!
//! The policy allows nothing by default; styles only from the `<style>`
//! element whose SHA-256 is named (ours, whose text is fixed at build time,
//! so no `'unsafe-inline'`); images only from `data:` URLs; no scripts at
//! all. The hash is computed from the stylesheet itself, by build.rs at
//! build time, so it cannot go stale when the stylesheet changes.

/// The stylesheet, exactly as it goes between `<style>` and `</style>`.
pub const STYLE: &str = include_str!("style.css");

/// The SHA-256 of style.css in hex, from build.rs.
const STYLE_SHA256: &str = env!("AGY_STYLE_SHA256");

/// `default-src 'none'; style-src 'sha256-…'; img-src data:; …`
pub fn policy() -> String {
    let digest = hex::decode(STYLE_SHA256).expect("build.rs writes the digest in hex");
    format!(
        "default-src 'none'; style-src 'sha256-{}'; img-src data:; base-uri 'none'; form-action 'none'",
        base64(&digest)
    )
}

/// Standard base64 with padding (the one encoder of the crate).
pub use crate::stream::message::base64_encode as base64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_pads() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    /// The hash build.rs computed is the one of the text the binary holds.
    #[test]
    fn the_built_hash_is_the_included_stylesheets() {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(STYLE.as_bytes());
        assert_eq!(STYLE_SHA256, hex::encode(digest));
        assert!(policy().contains(&format!("'sha256-{}'", base64(&digest))));
    }

    /// The policy names the stylesheet's hash as coreutils computes it,
    /// when coreutils is there.
    #[test]
    fn the_style_hash_is_the_stylesheets() {
        use std::io::Write;
        let Ok(mut child) = std::process::Command::new("sha256sum")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
        else {
            eprintln!("sha256sum not found; the style hash was not checked");
            return;
        };
        child
            .stdin
            .take()
            .unwrap()
            .write_all(STYLE.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        let digest = hex::decode(text.split_whitespace().next().unwrap()).unwrap();
        assert!(
            policy().contains(&format!("'sha256-{}'", base64(&digest))),
            "{}",
            policy()
        );
    }
}
