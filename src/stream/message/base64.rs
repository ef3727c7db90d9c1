//! Base64, as the Messages API carries image and document bytes: the
//! `base64` crate's standard alphabet, padded.

use base64::alphabet;
use base64::engine::{DecodePaddingMode, Engine, GeneralPurpose, GeneralPurposeConfig};

/// Standard base64, written padded and read only padded. The bits a last
/// digit holds past the data are ignored, as the hand-written decoder this
/// replaced ignored them, so what agy-encode read before it still reads.
const STANDARD: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_encode_padding(true)
        .with_decode_padding_mode(DecodePaddingMode::RequireCanonical)
        .with_decode_allow_trailing_bits(true),
);

/// Standard base64 with padding, as the Messages API carries media.
pub fn base64_encode(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// The inverse of [`base64_encode`]; `None` for anything that is not
/// padded standard base64.
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    STANDARD.decode(text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips() {
        for len in 0..20 {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + 250) as u8).collect();
            assert_eq!(base64_decode(&base64_encode(&bytes)).unwrap(), bytes);
        }
        assert_eq!(base64_encode(b"hello"), "aGVsbG8=");
        assert_eq!(base64_decode("aGVsbG8=").unwrap(), b"hello");
        for bad in [
            "aGVsbG8",
            "a===",
            "aG=s",
            "aGV$",
            "aG==aGVs",
            "aGVsbG8=\n",
            "aGVs bG8=",
        ] {
            assert_eq!(base64_decode(bad), None, "{bad}");
        }
        // Bits past the data in the last digit are ignored, as before.
        assert_eq!(base64_decode("aGVsbG9=").unwrap(), b"hello");
        assert_eq!(base64_decode("AB==").unwrap(), [0]);
    }
}
