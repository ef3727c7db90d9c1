//! agy-edit: conversation surgery on an agy row stream.

use std::process::ExitCode;

use agy_tools::agy::paths::Move;
use agy_tools::cli;
use agy_tools::cli::flags::{self, Args, Bin, Program};
use agy_tools::edit::{Cut, Editor, Operation};
use agy_tools::error::{Error, Result};
use agy_tools::store::root::Lane;
use agy_tools::stream::io::{self, Lines, Output};

const NAME: &str = PROGRAM.bin.name();

const PROGRAM: Program = Program {
    bin: Bin::Edit,
    about: "\
Usage: agy-edit [OPTIONS] OPERATION [FILE]...
       agy-edit fork (--at STEP | --turn N) [--id ID] [FILE]...
       agy-edit rewind (--to STEP | --turns N) [FILE]...
       agy-edit settle [FILE]...
       agy-edit move OLD NEW [--everywhere] [FILE]...
       agy-edit lane (cli | desktop) [FILE]...

Reads a row stream (from agy-dump) and writes it edited the way agy itself
edits a conversation, for agy-pack; everything an edit need not change goes
out byte for byte.

  fork     a new conversation: the steps up to the cut, copied, with a
           reference to its parent, its own id, trajectory and index row
  rewind   the conversation without the steps from the cut on, as /rewind
  settle   every step a crash left in flight made CANCELED, as resume does
  move     the conversations of a project at or under directory OLD
           re-bound to NEW (with --everywhere, every path in them too)
  lane     each conversation made one of the CLI's or the desktop app's,
           to copy it from one store into the other

With no FILE, or when FILE is -, reads standard input. What changed is
said on standard error, a line per conversation.
",
    after: "\
Exit status: 0 success, 1 a conversation not edited or bad input, 2 usage
error. See agy-edit(1) for what each operation writes.
",
    man: include_str!("../../man/agy-edit.1"),
};

fn main() -> ExitCode {
    cli::run(NAME, run)
}

fn run() -> Result<()> {
    let Some(args) = flags::parse(&PROGRAM)? else {
        return Ok(());
    };
    let (op, files) = operation(args)?;
    let mut out = Output::stdout();
    let mut editor = Editor::new(op);
    let say = |editor: &mut Editor, refused: Option<Error>| {
        for note in editor.take_notes() {
            eprintln!("{NAME}: {note}");
        }
        if let Some(e) = refused {
            eprintln!("{NAME}: {e}");
        }
    };
    for path in io::input_paths(files) {
        let mut lines = Lines::open(&path)?;
        let name = lines.name().to_string();
        while let Some((number, line)) = lines.next_numbered_line()? {
            let refused = editor.line(line, || format!("{name}:{number}"), &mut out)?;
            say(&mut editor, refused);
        }
    }
    let refused = editor.finish(&mut out)?;
    say(&mut editor, refused);
    out.flush()?;
    if editor.failed > 0 {
        return Err(Error::data(format!(
            "{} of {} conversation{} not edited",
            editor.failed,
            editor.seen,
            if editor.seen == 1 { "" } else { "s" }
        )));
    }
    if editor.seen > 1 || editor.changed == 0 {
        eprintln!("{NAME}: {}", closing(&editor));
    }
    Ok(())
}

/// The last line on stderr: how much of the stream changed.
fn closing(editor: &Editor) -> String {
    let of = |n: usize| format!("{n} conversation{}", if n == 1 { "" } else { "s" });
    match editor.changed {
        0 => format!("nothing to change in {}", of(editor.seen)),
        n => format!("changed {n} of {}", of(editor.seen)),
    }
}

/// The operation the command line names, and the files to read.
fn operation(args: Args) -> Result<(Operation, Vec<std::ffi::OsString>)> {
    let mut words = args.paths.into_iter();
    let word = words.next().ok_or_else(|| {
        Error::usage("an operation is needed: fork, rewind, settle, move or lane")
    })?;
    let word = word.to_string_lossy().into_owned();
    let only = |flag: &str, given: bool, ops: &str| -> Result<()> {
        if given {
            return Err(Error::usage(format!("{flag} is for {ops}, not {word}")));
        }
        Ok(())
    };
    let fork_flags = args.at.is_some() || args.turn.is_some();
    let rewind_flags = args.to.is_some() || args.turns.is_some();
    if word != "move" {
        only("--everywhere", args.everywhere, "move")?;
    }
    let op = match word.as_str() {
        "fork" => {
            only("--to and --turns", rewind_flags, "rewind")?;
            let cut = match (args.at, args.turn) {
                (Some(at), None) => Cut::Through(at),
                (None, Some(n)) => Cut::Turns(n),
                _ => return Err(Error::usage("fork needs one of --at STEP and --turn N")),
            };
            if let Some(id) = &args.id {
                agy_tools::store::root::check_conversation_uuid(id)
                    .map_err(|e| Error::usage(format!("--id: {}", e.message())))?;
            }
            Operation::Fork { cut, id: args.id }
        }
        "rewind" => {
            only("--at and --turn", fork_flags, "fork")?;
            only("--id", args.id.is_some(), "fork")?;
            let cut = match (args.to, args.turns) {
                (Some(to), None) => Cut::Before(to),
                (None, Some(n)) => Cut::LastTurns(n),
                _ => return Err(Error::usage("rewind needs one of --to STEP and --turns N")),
            };
            Operation::Rewind { cut }
        }
        "settle" => {
            only("--at and --turn", fork_flags, "fork")?;
            only("--to and --turns", rewind_flags, "rewind")?;
            only("--id", args.id.is_some(), "fork")?;
            Operation::Settle
        }
        "move" => {
            only("--at and --turn", fork_flags, "fork")?;
            only("--to and --turns", rewind_flags, "rewind")?;
            only("--id", args.id.is_some(), "fork")?;
            let mut path = |name: &str| -> Result<String> {
                let word = words.next().ok_or_else(|| {
                    Error::usage(format!("move needs OLD and NEW; {name} is missing"))
                })?;
                word.into_string()
                    .map_err(|w| Error::usage(format!("{name} {w:?} is not UTF-8")))
            };
            let (from, to) = (path("OLD")?, path("NEW")?);
            // Checked now: a path that is no directory is a usage error.
            Move::new(&from, &to)?;
            Operation::Move {
                from,
                to,
                everywhere: args.everywhere,
            }
        }
        "lane" => {
            only("--at and --turn", fork_flags, "fork")?;
            only("--to and --turns", rewind_flags, "rewind")?;
            only("--id", args.id.is_some(), "fork")?;
            let name = words
                .next()
                .ok_or_else(|| Error::usage("lane needs the lane to make: cli or desktop"))?;
            match Lane::parse(&name.to_string_lossy())? {
                Lane::Acp => {
                    return Err(Error::usage(
                        "lane makes conversations of cli or desktop; no fact says what makes one of the ACP lane",
                    ))
                }
                lane => Operation::Lane(lane),
            }
        }
        other => {
            return Err(Error::usage(format!(
                "unknown operation {other:?} (expected fork, rewind, settle, move or lane)"
            )))
        }
    };
    let files: Vec<std::ffi::OsString> = words.collect();
    // `agy-edit settle move /a /b` would read "move" as a file: one
    // operation a run, said so rather than a missing file.
    for file in &files {
        let word = file.to_string_lossy();
        if OPERATIONS.contains(&&*word) && !std::path::Path::new(file).exists() {
            return Err(Error::usage(format!(
                "{word:?} after {}: agy-edit makes one operation a run (pipe one agy-edit into another for two)",
                op.name()
            )));
        }
    }
    Ok((op, files))
}

/// The operations' words.
const OPERATIONS: &[&str] = &["fork", "rewind", "settle", "move", "lane"];
