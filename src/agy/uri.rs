//! `file://` URIs, as agy stores paths, and back.

/// A `file://` URI as a path: the scheme is dropped and `%XX` escapes are
/// decoded (kept as written when they do not decode to UTF-8). Anything
/// that is not a `file://` URI is returned as it is.
pub fn uri_to_path(uri: &str) -> String {
    let Some(rest) = uri.strip_prefix("file://") else {
        return uri.to_string();
    };
    if !rest.contains('%') {
        return rest.to_string();
    }
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            if let Some(v) = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| rest.to_string())
}

/// The inverse of [`uri_to_path`] for absolute paths: `file://` plus the
/// path with `%`, controls, spaces and non-ASCII bytes escaped.
pub fn path_to_uri(path: &str) -> String {
    let mut out = String::with_capacity(path.len() + 7);
    out.push_str("file://");
    for &b in path.as_bytes() {
        if b == b'%' || b <= b' ' || b >= 0x7f {
            out.push_str(&format!("%{b:02X}"));
        } else {
            out.push(b as char);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris() {
        for path in ["/a b/ü%20.rs", "/plain", "/"] {
            assert_eq!(uri_to_path(&path_to_uri(path)), path);
        }
        assert_eq!(uri_to_path("file:///x%2"), "/x%2");
        assert_eq!(uri_to_path("/not/a/uri"), "/not/a/uri");
        assert_eq!(uri_to_path("file:///%ff"), "/%ff");
    }
}
