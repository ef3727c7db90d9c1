//! The real shells that the completion scripts are tried in (tests/flags.rs
//! with the generated scripts, tests/install.rs with the installed ones).

use std::path::PathBuf;

/// A shell from `PATH`, or `None` (said on stderr) when it is missing;
/// under CI a missing shell fails the test.
pub fn shell(name: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|candidate| candidate.is_file())
    });
    if found.is_none() {
        let why = format!("{name} is not installed; .ci/run installs it");
        if std::env::var_os("CI").is_some() {
            panic!("{why}");
        }
        eprintln!("SKIPPED: {why}");
    }
    found
}

/// Drives zsh's own completion system in a pseudo-terminal: types `$2`
/// and TAB into an interactive zsh whose `$fpath` has `$1`, and prints
/// each word completion offers (caught at `compadd`) as `HIT:word`.
/// What is typed while the shell is still busy meets the terminal's own
/// line editing, so on a loaded machine it is echoed at once and a ^U in
/// it would erase the line before zsh reads it: the markers are typed as
/// `ST''ART` and `E''ND`, so that only the commands' output says START and
/// END, and the line is cleared with ^X, which the terminal leaves alone.
pub const ZSH_DRIVER: &str = r#"
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "PROMPT=''; fpath=($1 \$fpath); autoload -U compinit; compinit -u -D"
zpty -w z 'compadd () { local -a hits; builtin compadd -O hits "$@"; print -rl -- "" ${^hits/#/HIT:} >/dev/tty; builtin compadd "$@" }'
zpty -w z "bindkey '^I' complete-word; bindkey '^X' kill-whole-line; print READY"
zpty -r z line '*READY*'
zpty -w z "print -r -- ST''ART"$'\n'
zpty -n -w z "$2"$'\t'
zpty -w z $'\C-x'"print -r -- E''ND"$'\n'
out=""
while zpty -r z line; do out+=$line; [[ $out == *START*END* ]] && break; done 2>/dev/null
print -r -- $out | tr -d '\r' | grep -a '^HIT:' | sed 's/^HIT://' | sort -u
"#;
