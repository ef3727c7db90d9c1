//! Each flag is defined once, in `src/cli/flags/defs/`; these tests hold
//! what is generated from the definitions to them: the checked-in man
//! pages, `--help`, the usage errors, and the completion scripts, which
//! are loaded into the real bash, zsh and fish and asked to complete.
//!
//! A shell that is not installed is said on stderr and its test passes,
//! unless `CI` is set, where it fails: `.ci/run` installs zsh and fish.

mod support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use agy_tools::cli::flags::{self, Bin, Complete, Kind};
use support::shells::{shell, ZSH_DRIVER};
use support::{run, run_ok, stderr, Scratch};

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn man_pages_match_the_definitions() {
    for bin in Bin::ALL {
        let name = bin.name();
        let path = manifest_dir().join(format!("man/{name}.1"));
        let checked_in = std::fs::read_to_string(&path).unwrap();
        let generated = String::from_utf8(run_ok(name, &["--generate", "man"], b"")).unwrap();
        assert!(
            generated == checked_in,
            "man/{name}.1 is not what the flag definitions render; after \
             `cargo build --bins`, regenerate it with \
             `target/debug/{name} --generate man > man/{name}.1`\n{}",
            first_difference(&checked_in, &generated)
        );
        // The section really is the rendered one, not a copy of the page.
        let options = flags::man::options(bin);
        assert!(checked_in.contains(&options), "{name}");
        for (flag, _) in flags::of(bin) {
            let long = format!("\\-\\-{}", flag.long.replace('-', "\\-"));
            assert!(options.contains(&long), "{name}: {long}");
        }
    }
}

/// The first line where `a` and `b` differ, for an assertion message.
fn first_difference(a: &str, b: &str) -> String {
    let (mut a_lines, mut b_lines) = (a.lines(), b.lines());
    for number in 1.. {
        match (a_lines.next(), b_lines.next()) {
            (None, None) => break,
            (x, y) if x == y => continue,
            (x, y) => return format!("line {number}: checked in {x:?}, rendered {y:?}"),
        }
    }
    String::new()
}

#[test]
fn a_page_without_an_options_section_is_refused() {
    let err = flags::man::page(Bin::Dump, ".TH X 1\n.SH NAME\nx\n").unwrap_err();
    assert_eq!(
        err.message(),
        "the man page of agy-dump has no OPTIONS section"
    );
    let page = ".TH X 1\n.SH OPTIONS\nold\n.SH SEE ALSO\nx\n";
    let new = flags::man::page(Bin::Render, page).unwrap();
    assert!(new.starts_with(".TH X 1\n.SH OPTIONS\n.TP\n.BR \\-f"));
    assert!(new.ends_with("Print the version and exit.\n.SH SEE ALSO\nx\n"));
    assert!(!new.contains("old"));
}

#[test]
fn help_lists_every_flag_within_80_columns() {
    for bin in Bin::ALL {
        let name = bin.name();
        let help = String::from_utf8(run_ok(name, &["--help"], b"")).unwrap();
        assert!(
            help.starts_with(&format!("Usage: {name} [OPTIONS] ")),
            "{help}"
        );
        let options = format!("\nOptions:\n{}\n", flags::help::options(bin));
        assert!(help.contains(&options), "{name}: {help}");
        let options = &help[help.find("\nOptions:\n").expect(name)..];
        for (flag, _) in flags::of(bin) {
            let mut names = match flag.short {
                Some(c) => format!("  -{c}, --{}", flag.long),
                None => format!("      --{}", flag.long),
            };
            if let Some(value) = flag.value_name() {
                names = format!("{names} {value}");
            }
            assert!(
                options.lines().any(|l| l.starts_with(&format!("{names} "))),
                "{name} --help lacks {names:?}"
            );
        }
        for line in help.lines() {
            assert!(line.len() <= 79, "{name} --help: {line:?}");
        }
        // -h is --help.
        assert_eq!(run_ok(name, &["-h"], b""), help.as_bytes());
    }
}

#[test]
fn usage_errors_keep_their_words() {
    let cases: &[(&str, &[&str], &str)] = &[
        ("agy-dump", &["--bogus"], "invalid option '--bogus'"),
        ("agy-dump", &["-x"], "invalid option '-x'"),
        ("agy-dump", &["--id"], "missing argument for option '--id'"),
        (
            "agy-dump",
            &["--no-brain=yes"],
            "unexpected argument for option '--no-brain': \"yes\"",
        ),
        // A letter one binary has is unknown to another.
        ("agy-dump", &["-f"], "invalid option '-f'"),
        ("agy-render", &["-n"], "invalid option '-n'"),
        ("agy-encode", &["--format", "anthropic"], "--format anthropic is not offered here"),
        ("agy-encode", &["--id", ""], "--id needs a non-empty conversation id"),
        ("agy-encode", &["--all"], "--all is for --onto"),
        (
            "agy-decode",
            &["--cwd", "/x"],
            "--out-dir, --cwd and --force go with --format claude-code, codex, gemini-cli or opencode",
        ),
        ("agy-pack", &["--lane", "moon"], "unknown lane \"moon\" (expected cli, acp or desktop)"),
        (
            "agy-render",
            &["--generate", "complete-tcsh"],
            "--generate takes man, complete-bash, complete-zsh or complete-fish, not \"complete-tcsh\"",
        ),
    ];
    for (bin, args, message) in cases {
        let out = run(bin, args, b"");
        assert_eq!(out.status.code(), Some(2), "{bin} {args:?}");
        assert_eq!(
            stderr(&out),
            format!("{bin}: {message}\nTry '{bin} --help' for more information.\n"),
            "{bin} {args:?}"
        );
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn help_and_version_stop_the_reading_where_they_stand() {
    // What comes after --help is not read; what comes before is.
    assert!(run("agy-dump", &["--help", "--bogus"], b"")
        .status
        .success());
    assert_eq!(
        run("agy-dump", &["--bogus", "--help"], b"").status.code(),
        Some(2)
    );
    assert_eq!(
        run_ok("agy-pack", &["-fV"], b""),
        format!("agy-pack {}\n", env!("CARGO_PKG_VERSION")).as_bytes()
    );
}

/// The completion script of `bin` for `shell`, written into `dir` under
/// the name that shell looks for.
fn script(bin: Bin, shell: &str, dir: &Path) -> PathBuf {
    let name = bin.name();
    let text = run_ok(name, &["--generate", &format!("complete-{shell}")], b"");
    let file = match shell {
        "zsh" => dir.join(format!("_{name}")),
        _ => dir.join(format!("{name}.{shell}")),
    };
    std::fs::write(&file, text).unwrap();
    file
}

fn ok(out: Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what}: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Every name of `bin`'s flags, `-s` and `--long`.
fn flag_names(bin: Bin) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (flag, _) in flags::of(bin) {
        names.insert(format!("--{}", flag.long));
        if let Some(c) = flag.short {
            names.insert(format!("-{c}"));
        }
    }
    names
}

/// What each shell must offer: all flag names after `-`, and for each
/// flag with a list of values, that list.
fn expectations(bin: Bin) -> Vec<(String, BTreeSet<String>)> {
    let name = bin.name();
    let mut cases = vec![(format!("{name} -"), flag_names(bin))];
    for (flag, _) in flags::of(bin) {
        if let Kind::Value {
            complete: Complete::Choices(choices),
            ..
        } = flag.kind
        {
            let words = choices.iter().map(|c| c.to_string()).collect();
            cases.push((format!("{name} --{} ", flag.long), words));
        }
    }
    cases
}

/// A scratch directory holding a directory `sub` and a file `file`, for
/// the completion of a directory value.
fn tree(name: &str) -> Scratch {
    let scratch = Scratch::new(name);
    std::fs::create_dir(scratch.join("sub")).unwrap();
    std::fs::write(scratch.join("file"), b"").unwrap();
    scratch
}

/// The flags of `bin` whose value is a directory.
fn dir_flags(bin: Bin) -> Vec<&'static str> {
    flags::of(bin)
        .filter(|(flag, _)| {
            matches!(
                flag.kind,
                Kind::Value {
                    complete: Complete::Dir,
                    ..
                }
            )
        })
        .map(|(flag, _)| flag.long)
        .collect()
}

/// That `complete` (a shell completing a command line) offers exactly
/// what [`expectations`] says for `bin`, and only the directory `sub` (as
/// the shell writes it: `dir`) for a flag whose value is a directory.
fn assert_completes(shell: &str, bin: Bin, dir: &str, complete: impl Fn(&str) -> BTreeSet<String>) {
    for (line, expected) in expectations(bin) {
        assert_eq!(complete(&line), expected, "{shell}: {line:?}");
    }
    for long in dir_flags(bin) {
        let line = format!("{} --{long} ", bin.name());
        assert_eq!(
            complete(&line),
            BTreeSet::from([dir.to_string()]),
            "{shell}: {line:?}"
        );
    }
}

#[test]
fn bash_completes_every_flag_and_its_values() {
    let Some(bash) = shell("bash") else { return };
    let scratch = tree("complete-bash");
    for bin in Bin::ALL {
        let file = script(bin, "bash", &scratch.path);
        let syntax = Command::new(&bash).arg("-n").arg(&file).output().unwrap();
        ok(syntax, "bash -n");
        let function = format!("_{}", bin.name().replace('-', "_"));
        let complete = |line: &str| -> BTreeSet<String> {
            // The words of `line`, the last one being completed (empty
            // after a trailing space), as bash hands them to the function.
            let mut words: Vec<&str> = line.split(' ').collect();
            if words.is_empty() {
                words.push("");
            }
            let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
            let program = format!(
                "source '{}' && COMP_WORDS=({}) && COMP_CWORD={} && {function} && \
                 printf '%s\\n' \"${{COMPREPLY[@]}}\"",
                file.display(),
                quoted.join(" "),
                words.len() - 1
            );
            let out = Command::new(&bash)
                .arg("-c")
                .arg(&program)
                .current_dir(&scratch.path)
                .output()
                .unwrap();
            ok(out, line).lines().map(str::to_string).collect()
        };
        assert_completes("bash", bin, "sub", complete);
        let registered = Command::new(&bash)
            .arg("-c")
            .arg(format!(
                "source '{}' && complete -p {}",
                file.display(),
                bin.name()
            ))
            .output()
            .unwrap();
        assert_eq!(
            ok(registered, "complete -p"),
            format!("complete -o default -F {function} {}\n", bin.name())
        );
    }
}

#[test]
fn zsh_completes_every_flag_and_its_values() {
    let Some(zsh) = shell("zsh") else { return };
    let scratch = tree("complete-zsh");
    let fpath = Scratch::new("complete-zsh-fpath");
    let driver = fpath.join("driver.zsh");
    std::fs::write(&driver, ZSH_DRIVER).unwrap();
    for bin in Bin::ALL {
        let file = script(bin, "zsh", &fpath.path);
        let syntax = Command::new(&zsh).arg("-n").arg(&file).output().unwrap();
        ok(syntax, "zsh -n");
        let complete = |line: &str| -> BTreeSet<String> {
            let out = Command::new("timeout")
                .arg("60")
                .arg(&zsh)
                .arg("-f")
                .arg(&driver)
                .arg(&fpath.path)
                .arg(line)
                .current_dir(&scratch.path)
                .output()
                .unwrap();
            ok(out, line).lines().map(str::to_string).collect()
        };
        assert_completes("zsh", bin, "sub", complete);
        // Sourced instead of autoloaded, the script registers itself.
        let sourced = Command::new(&zsh)
            .arg("-f")
            .arg("-c")
            .arg(format!(
                "autoload -U compinit && compinit -u -D && source '{}' && print -r -- $_comps[{}]",
                file.display(),
                bin.name()
            ))
            .output()
            .unwrap();
        assert_eq!(ok(sourced, "zsh source"), format!("_{}\n", bin.name()));
    }
}

#[test]
fn fish_completes_every_flag_and_its_values() {
    let Some(fish) = shell("fish") else { return };
    let scratch = tree("complete-fish");
    for bin in Bin::ALL {
        let file = script(bin, "fish", &scratch.path);
        let syntax = Command::new(&fish)
            .arg("--no-execute")
            .arg(&file)
            .output()
            .unwrap();
        ok(syntax, "fish --no-execute");
        let complete = |line: &str| -> BTreeSet<String> {
            let out = Command::new(&fish)
                .arg("--no-config")
                .arg("-c")
                .arg(format!("source '{}'; complete -C '{line}'", file.display()))
                .current_dir(&scratch.path)
                .output()
                .unwrap();
            // Each completion is its word, a tab, and its description.
            ok(out, line)
                .lines()
                .map(|l| l.split('\t').next().unwrap().to_string())
                .collect()
        };
        assert_completes("fish", bin, "sub/", complete);
    }
}
