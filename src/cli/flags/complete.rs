//! Shell completion scripts, rendered from the definitions: every flag of
//! a binary by its names, with its help text where the shell shows one,
//! and its value completed as the flag says (a word from a list, a
//! directory, a file, or nothing for free text). Arguments that are not
//! flags complete as files.
//!
//! Each script is what `--generate complete-SHELL` prints; the man page
//! of `--generate` says where each shell looks for it.

use crate::cli::flags::{self, Bin, Complete, Flag, Kind};

/// The bash script: a function that completes from the word before the
/// cursor, registered with `-o default` so that whatever it leaves empty
/// (file arguments, file values) gets bash's own file name completion.
pub fn bash(bin: Bin) -> String {
    let name = bin.name();
    let function = format!("_{}", name.replace('-', "_"));
    let mut words = Vec::new();
    let mut cases = String::new();
    for (flag, _) in flags::of(bin) {
        let names = names(flag);
        words.extend(names.iter().cloned());
        let Kind::Value { complete, .. } = &flag.kind else {
            continue;
        };
        let action = match complete {
            // Nothing to offer; an empty reply falls back to file names.
            Complete::Text | Complete::File => "return 0".to_string(),
            Complete::Dir => "compopt -o filenames 2>/dev/null\n            \
                 mapfile -t COMPREPLY < <(compgen -d -- \"$cur\")\n            \
                 return 0"
                .to_string(),
            Complete::Choices(choices) => format!(
                "mapfile -t COMPREPLY < <(compgen -W '{}' -- \"$cur\")\n            return 0",
                choices.join(" ")
            ),
        };
        cases.push_str(&format!(
            "        {})\n            {action}\n            ;;\n",
            names.join("|")
        ));
    }
    format!(
        "# bash completion for {name}, as `{name} --generate complete-bash` prints it.\n\
         {function}() {{\n    \
             local cur=${{COMP_WORDS[COMP_CWORD]}}\n    \
             local prev=${{COMP_WORDS[COMP_CWORD-1]}}\n    \
             COMPREPLY=()\n    \
             case $prev in\n\
         {cases}    \
             esac\n    \
             if [[ $cur == -* ]]; then\n        \
                 mapfile -t COMPREPLY < <(compgen -W '{words}' -- \"$cur\")\n    \
             fi\n\
         }}\n\
         complete -o default -F {function} {name}\n",
        words = words.join(" "),
    )
}

/// The zsh script: one `_arguments` spec per flag. It works both from a
/// file `_NAME` in `$fpath` (autoloaded by compinit) and when sourced.
pub fn zsh(bin: Bin) -> String {
    let name = bin.name();
    let function = format!("_{name}");
    let mut specs = String::new();
    for (flag, doc) in flags::of(bin) {
        // `-s+` and `--long=` take their value in the same word or the next.
        let (short_suffix, long_suffix, value) = match &flag.kind {
            Kind::Switch(_) => ("", "", String::new()),
            Kind::Value { name, complete, .. } => {
                let action = match complete {
                    // A message and nothing to offer.
                    Complete::Text => " ".to_string(),
                    Complete::File => "_files".to_string(),
                    Complete::Dir => "_files -/".to_string(),
                    Complete::Choices(choices) => format!("({})", choices.join(" ")),
                };
                ("+", "=", format!(":{name}:{action}"))
            }
        };
        let long = format!("--{}{long_suffix}", flag.long);
        let names = match flag.short {
            // Either name, and once: each excludes both.
            Some(c) => format!("'(-{c} --{})'{{-{c}{short_suffix},{long}}}'", flag.long),
            None => format!("'{long}"),
        };
        // A description in brackets, inside a single-quoted word.
        let help = doc
            .help
            .replace('\\', "\\\\")
            .replace('[', "\\[")
            .replace(']', "\\]")
            .replace('\'', "'\\''");
        specs.push_str(&format!("        {names}[{help}]{value}' \\\n"));
    }
    format!(
        "#compdef {name}\n\
         # zsh completion for {name}, as `{name} --generate complete-zsh` prints it.\n\
         \n\
         {function}() {{\n    \
             _arguments -s -S \\\n\
         {specs}        '*:file:_files'\n\
         }}\n\
         \n\
         if [ \"$funcstack[1]\" = \"{function}\" ]; then\n    \
             {function} \"$@\"\n\
         else\n    \
             compdef {function} {name}\n\
         fi\n"
    )
}

/// The fish script: one `complete` line per flag.
pub fn fish(bin: Bin) -> String {
    let name = bin.name();
    let mut out =
        format!("# fish completion for {name}, as `{name} --generate complete-fish` prints it.\n");
    for (flag, doc) in flags::of(bin) {
        let mut line = format!("complete -c {name}");
        if let Some(c) = flag.short {
            line.push_str(&format!(" -s {c}"));
        }
        line.push_str(&format!(" -l {}", flag.long));
        // -r: takes a value; -x: and the value is not a file name.
        if let Kind::Value { complete, .. } = &flag.kind {
            match complete {
                Complete::Text => line.push_str(" -x"),
                Complete::File => line.push_str(" -r -F"),
                Complete::Dir => line.push_str(" -x -a '(__fish_complete_directories)'"),
                Complete::Choices(choices) => {
                    line.push_str(&format!(" -x -a '{}'", choices.join(" ")))
                }
            }
        }
        line.push_str(&format!(" -d {}", fish_quote(doc.help)));
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The names a shell completes for `flag`: `-s` (if any) and `--long`.
fn names(flag: &Flag) -> Vec<String> {
    let mut names: Vec<String> = flag.short.map(|c| format!("-{c}")).into_iter().collect();
    names.push(format!("--{}", flag.long));
    names
}

/// A fish single-quoted string.
fn fish_quote(text: &str) -> String {
    format!("'{}'", text.replace('\\', "\\\\").replace('\'', "\\'"))
}
