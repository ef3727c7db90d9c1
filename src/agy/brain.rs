//! What the paths and lines of a brain directory (`brain/<id>/`) say about
//! steps: which files belong to one step, and which are transcripts whose
//! lines each name a step.
//!
//! Every tool that renumbers, cuts or copies a conversation's steps must
//! bring its brain files along by these rules (FORMAT.md 1 and 10): a
//! tool's spilled output lives under `.system_generated/steps/<idx>/`, and
//! the display mirror is written one JSON line per step, each opening with
//! `{"step_index":N`, into `.system_generated/logs/transcript.jsonl` and
//! `transcript_full.jsonl` (agy up to 1.1) or into numbered chunks under
//! `.system_generated/logs/chunks/transcript/` and `…/transcript_full/`
//! (agy 1.2, seen in a public capture of agy 1.2.0 stores).

/// Where transcripts live, relative to the brain directory.
const LOGS: &str = ".system_generated/logs/";

/// Whether a brain path is a transcript: a JSON-lines file, a line per
/// step, whole or in chunks.
pub fn is_transcript(path: &str) -> bool {
    let Some(rest) = path.strip_prefix(LOGS) else {
        return false;
    };
    let rest = rest.strip_prefix("chunks/").unwrap_or(rest);
    rest.starts_with("transcript") && rest.ends_with(".jsonl")
}

/// The step a brain path belongs to: `steps/<idx>/…` or
/// `.system_generated/steps/<idx>/…`.
pub fn step_of_path(path: &str) -> Option<i64> {
    let (_, number, _) = split_step_path(path)?;
    number.parse().ok()
}

/// `path`, a file of step `old` ([`step_of_path`]), as the same file of
/// step `new`.
pub fn path_for_step(path: &str, new: i64) -> Option<String> {
    let (prefix, _, rest) = split_step_path(path)?;
    Some(format!("{prefix}{new}{rest}"))
}

/// A step's path cut around its idx: (before, the digits, after).
fn split_step_path(path: &str) -> Option<(&str, &str, &str)> {
    let prefix_len = if path.starts_with("steps/") {
        "steps/".len()
    } else if path.starts_with(".system_generated/steps/") {
        ".system_generated/steps/".len()
    } else {
        return None;
    };
    let rest = &path[prefix_len..];
    let (number, _) = rest.split_once('/')?;
    let idx: i64 = number.parse().ok()?;
    // `steps/007/` is not step 7's: agy writes plain numbers.
    if idx.to_string() != number {
        return None;
    }
    let end = prefix_len + number.len();
    Some((&path[..prefix_len], number, &path[end..]))
}

/// How a transcript line opens.
pub const LINE_HEAD: &[u8] = b"{\"step_index\":";

/// The step a transcript line names, and where the rest of the line
/// starts after its number: `None` for a line that does not open with
/// `{"step_index":N` (left as it is by every tool).
pub fn line_step(line: &[u8]) -> Option<(i64, usize)> {
    let rest = line.strip_prefix(LINE_HEAD)?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let idx = std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()?;
    Some((idx, LINE_HEAD.len() + digits))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transcripts_whole_and_in_chunks() {
        for path in [
            ".system_generated/logs/transcript.jsonl",
            ".system_generated/logs/transcript_full.jsonl",
            ".system_generated/logs/chunks/transcript/00000000.jsonl",
            ".system_generated/logs/chunks/transcript_full/00000001.jsonl",
        ] {
            assert!(is_transcript(path), "{path}");
        }
        for path in [
            "transcript.jsonl",
            ".system_generated/logs/transcript.txt",
            ".system_generated/logs/other.jsonl",
            ".system_generated/steps/3/output.txt",
            "task.md",
        ] {
            assert!(!is_transcript(path), "{path}");
        }
    }

    #[test]
    fn step_paths_name_their_step() {
        assert_eq!(
            step_of_path(".system_generated/steps/12/output.txt"),
            Some(12)
        );
        assert_eq!(step_of_path("steps/0/a/b"), Some(0));
        assert_eq!(step_of_path("steps/007/output.txt"), None);
        assert_eq!(step_of_path("steps/x/output.txt"), None);
        assert_eq!(step_of_path("steps/12"), None);
        assert_eq!(step_of_path("other/steps/1/x"), None);
        assert_eq!(
            path_for_step(".system_generated/steps/12/output.txt", 3).as_deref(),
            Some(".system_generated/steps/3/output.txt")
        );
        assert_eq!(path_for_step("task.md", 3), None);
    }

    #[test]
    fn lines_name_their_step() {
        let line = br#"{"step_index":42,"source":"MODEL"}"#;
        let (idx, at) = line_step(line).unwrap();
        assert_eq!(idx, 42);
        assert_eq!(&line[at..], br#","source":"MODEL"}"#);
        assert_eq!(line_step(br#"{"source":"MODEL"}"#), None);
        assert_eq!(line_step(br#"{"step_index":"4"}"#), None);
    }
}
