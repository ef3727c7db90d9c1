//! Differential: hex both ways at every SIMD level this CPU runs, against
//! the hex crate. Encoding is `hex::encode`; decoding the encoding (in
//! either case) gives the bytes back; decoding the raw input as hex agrees
//! with `hex::decode`, down to the position of the first bad digit; the
//! digit check is `is_ascii_hexdigit` on every byte; and reading hex up to
//! where its digits end finds that place and decodes the pairs before it.
#![no_main]

use agy_tools::stream::json;
use agy_tools::stream::record;
use agy_tools::stream::simd::Level;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| agy_fuzz::measure(|| run(data)));

fn run(data: &[u8]) {
    let lower = hex::encode(data);
    let upper = hex::encode_upper(data);
    let text = String::from_utf8_lossy(data);
    let expected = hex::decode(text.as_bytes());
    let all_digits = data.iter().all(u8::is_ascii_hexdigit);
    let mut out = Vec::new();
    for level in Level::supported_levels() {
        out.clear();
        json::write_hex_body_at(level, &mut out, data);
        assert_eq!(out, lower.as_bytes(), "encoding at {level:?}");
        for digits in [&lower, &upper] {
            record::decode_hex_into_at(level, digits, &mut out).unwrap();
            assert_eq!(out, data, "decoding at {level:?}");
            assert!(record::is_hex_digits_at(level, digits.as_bytes()));
        }
        assert_eq!(
            record::is_hex_digits_at(level, data),
            all_digits,
            "digits at {level:?}"
        );
        // Where the digits end, and the pairs before that decoded.
        let digits = data.iter().take_while(|b| b.is_ascii_hexdigit()).count();
        assert_eq!(record::hex_digits_len_at(level, data), digits, "at {level:?}");
        let read = record::decode_hex_prefix_into_at(level, data, &mut out);
        assert_eq!(read, digits, "prefix at {level:?}");
        let prefix = hex::decode(&data[..digits & !1]).expect("hex digits");
        assert_eq!(out, prefix, "prefix decoding at {level:?}");
        let ours = record::decode_hex_into_at(level, &text, &mut out);
        match (&expected, ours) {
            (Ok(bytes), Ok(())) => assert_eq!(&out, bytes, "decoding at {level:?}"),
            (Err(hex::FromHexError::InvalidHexCharacter { index, .. }), Err(e)) => {
                let place = format!("at position {index}");
                assert!(
                    e.message().contains(&place),
                    "at {level:?}: {e}, expected {place}"
                );
            }
            (Err(hex::FromHexError::OddLength), Err(e)) => {
                assert!(e.message().contains("odd number"), "at {level:?}: {e}")
            }
            (expected, ours) => panic!("at {level:?}: hex says {expected:?}, we say {ours:?}"),
        }
    }
}
