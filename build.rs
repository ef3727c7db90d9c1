//! What the binaries would otherwise work out at every start.
//!
//! The stylesheet's SHA-256, which agy-render's Content-Security-Policy
//! names (src/render/csp.rs): hashed here from the same file the binary
//! includes, so it cannot go stale. Hashed at each run, it cost agy-render
//! two `cpuid` instructions (sha2 asks the CPU for its SHA extensions, and
//! a hypervisor traps each ask) and the hash itself, about 1 % of a run on
//! examples/sample, where starting the process is most of the time.

use sha2::{Digest, Sha256};

fn main() {
    let style = "src/render/style.css";
    println!("cargo::rerun-if-changed={style}");
    let text = std::fs::read(style).unwrap_or_else(|e| panic!("{style}: {e}"));
    let digest = Sha256::digest(&text);
    println!("cargo::rustc-env=AGY_STYLE_SHA256={}", hex::encode(digest));
}
