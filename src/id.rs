//! Ids derived from names: RFC 9562 version-5 UUIDs, the SHA-1 of a
//! namespace and a name. The writers derive every id they must invent
//! (a trajectory, a message, a generation's response, a session of
//! another agent) from the conversation and a position, so that equal
//! input gives equal bytes.
//!
//! The hash is the `sha1` crate's, which uses the CPU's SHA instructions
//! where it has them: `uuid`'s own version 5 hashes in portable Rust, and
//! agy-encode derives two or three ids a message (3 % of its time on the
//! large conversation's first 40 MB).

use sha1::{Digest, Sha1};
use uuid::{Builder, Uuid};

/// The version-5 UUID of `name` in `namespace`, as `Uuid::new_v5` makes
/// it.
pub fn v5(namespace: &Uuid, name: &[u8]) -> Uuid {
    let mut hash = Sha1::new();
    hash.update(namespace.as_bytes());
    hash.update(name);
    let digest = hash.finalize();
    let bytes: [u8; 16] = digest[..16].try_into().expect("SHA-1 gives 20 bytes");
    Builder::from_sha1_bytes(bytes).into_uuid()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rfc_example_and_uuids_own_agree() {
        // RFC 9562 appendix A.4: "www.example.com" in the DNS namespace.
        let dns = Uuid::from_u128(0x6ba7b810_9dad_11d1_80b4_00c04fd430c8);
        assert_eq!(
            v5(&dns, b"www.example.com").to_string(),
            "2ed6657d-e927-568b-95e1-2665a8aea6a2"
        );
    }
}
