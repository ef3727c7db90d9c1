//! OpenCode's ids for what `--format opencode` writes: the session's,
//! made from the conversation's UUID and read back to it
//! ([`session_id`], [`conversation_id`]), and message and part ids that
//! count up in the order written ([`Ids`]). Moved out of `opencode.rs`
//! whole (a room over ~800 lines splits along its concerns).

use uuid::Uuid;

use crate::format::write;

/// The namespace of the ids written here.
const NAMESPACE: Uuid = Uuid::from_u128(0x9c41_7e02_d35b_4a86_b1f7_60e2_48ad_c319);

/// The digits of the ids' last 14 characters, in ASCII order.
const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// `PREFIX_` and 26 characters, as OpenCode's ids are: 12 hex digits of
/// `high` (48 bits) and 14 base-62 digits of `low` (80 bits).
fn id(prefix: &str, high: u64, low: u128) -> String {
    let mut digits = [b'0'; 14];
    let mut rest = low & ((1 << 80) - 1);
    for digit in digits.iter_mut().rev() {
        *digit = BASE62[(rest % 62) as usize];
        rest /= 62;
    }
    let low = std::str::from_utf8(&digits).expect("ASCII digits");
    format!("{prefix}_{:012x}{low}", high & 0xffff_ffff_ffff)
}

/// The session id of a conversation: its UUID ([`write::session_id`])
/// written as an OpenCode id, from which [`conversation_id`] gets it back.
pub fn session_id(conversation: &str) -> String {
    let uuid = Uuid::parse_str(&write::session_id(conversation))
        .expect("session_id gives a UUID")
        .as_u128();
    id("ses", (uuid >> 80) as u64, uuid)
}

/// The conversation id of an OpenCode session id: the UUID it was written
/// from ([`session_id`]), else one derived from it (OpenCode's own ids
/// hold more than a UUID can).
pub fn conversation_id(session: &str) -> String {
    let decoded = session.strip_prefix("ses_").and_then(|rest| {
        let (high, low) = (rest.get(..12)?, rest.get(12..)?);
        if low.len() != 14 || high.bytes().any(|b| b.is_ascii_uppercase()) {
            return None;
        }
        let high = u128::from(u64::from_str_radix(high, 16).ok()?);
        let low = low.bytes().try_fold(0u128, |n, b| {
            let digit = BASE62.iter().position(|&d| d == b)?;
            Some(n * 62 + digit as u128)
        })?;
        (low < 1 << 80).then(|| Uuid::from_u128(high << 80 | low))
    });
    match decoded {
        Some(uuid) if session_id(&uuid.to_string()) == session => uuid.to_string(),
        _ => crate::id::v5(&NAMESPACE, session.as_bytes()).to_string(),
    }
}

/// Message and part ids that count up in the order they are made, each
/// with 14 digits of its own from the session and its number: OpenCode
/// sorts a message's parts, and messages of the same time, by id.
pub(super) struct Ids {
    pub(super) session: String,
    pub(super) count: u64,
}

impl Ids {
    pub(super) fn next(&mut self, prefix: &str) -> String {
        self.count += 1;
        let name = format!("{}/{}", self.session, self.count);
        let low = crate::id::v5(&NAMESPACE, name.as_bytes()).as_u128();
        id(prefix, self.count, low)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_carry_the_conversation_back() {
        let uuid = "77559890-5f01-4d48-a336-db3155aede22";
        let session = session_id(uuid);
        assert_eq!(session.len(), 30);
        assert!(session.starts_with("ses_775598905f01"), "{session}");
        assert!(session[16..].bytes().all(|b| b.is_ascii_alphanumeric()));
        assert_eq!(conversation_id(&session), uuid);
        // A conversation id that is no UUID goes through the UUID the other
        // formats give it.
        assert_eq!(
            conversation_id(&session_id("not-a-uuid")),
            write::session_id("not-a-uuid")
        );
        // OpenCode's own ids (here one 1.18.33 made) hold more than a UUID:
        // they get one of their own, the same every time.
        let own = "ses_dcc1506f0ffeEmGm4kxyJ2tU07";
        let derived = conversation_id(own);
        assert!(Uuid::parse_str(&derived).is_ok());
        assert_eq!(derived, conversation_id(own));
        assert_ne!(session_id(&derived), own);
        for bad in ["ses_", "msg_775598905f01000000000000000", "ses_ZZ"] {
            assert!(Uuid::parse_str(&conversation_id(bad)).is_ok());
        }
    }

    #[test]
    fn ids_count_up() {
        let mut ids = Ids {
            session: "s".into(),
            count: 0,
        };
        let made: Vec<String> = (0..20).map(|_| ids.next("prt")).collect();
        let mut sorted = made.clone();
        sorted.sort();
        assert_eq!(made, sorted);
        assert!(made[0].starts_with("prt_000000000001"));
    }
}
