//! `make install` installs like a Unix tool: every binary of `src/bin/`,
//! its man page and its completion scripts under `PREFIX` (staged under
//! `DESTDIR`), where `man` and the real bash, zsh and fish find them.
//!
//! The binaries installed are the ones this test run built (`CARGO=true
//! BUILT=…`: a release build inside a test would take minutes). A tool
//! that is not installed is said on stderr and its part passes, unless `CI`
//! is set, where it fails: `.ci/run` installs make, man, zsh and fish.

mod support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use support::shells::{shell, ZSH_DRIVER};
use support::{exe, Scratch};

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The binaries the crate has: `src/bin/*.rs`, as the Makefile lists them.
fn binaries() -> BTreeSet<String> {
    std::fs::read_dir(manifest_dir().join("src/bin"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "rs"))
        .map(|path| path.file_stem().unwrap().to_string_lossy().into_owned())
        .collect()
}

/// Runs `make install` with `vars`; what it printed.
fn make_install(make: &Path, vars: &[String]) -> String {
    let built = exe("agy-dump").parent().unwrap().to_path_buf();
    let out = Command::new(make)
        .arg("-C")
        .arg(manifest_dir())
        .arg("install")
        .arg("CARGO=true")
        .arg(format!("BUILT={}", built.display()))
        .args(vars)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "make install {vars:?}: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Every file under `dir`, relative to it.
fn files_under(dir: &Path) -> BTreeSet<PathBuf> {
    let mut files = BTreeSet::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                files.insert(path.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    files
}

/// What each binary installs, relative to the prefix.
fn expected_files() -> BTreeSet<PathBuf> {
    binaries()
        .iter()
        .flat_map(|bin| {
            [
                format!("bin/{bin}"),
                format!("share/man/man1/{bin}.1"),
                format!("share/bash-completion/completions/{bin}"),
                format!("share/zsh/site-functions/_{bin}"),
                format!("share/fish/vendor_completions.d/{bin}.fish"),
            ]
        })
        .chain(["share/man/man5/agy-store.5".to_string()])
        .map(PathBuf::from)
        .collect()
}

#[test]
fn make_install_stages_every_binary_under_destdir() {
    let Some(make) = shell("make") else { return };
    let scratch = Scratch::new("install-destdir");
    let stage = scratch.path.join("stage");
    make_install(
        &make,
        &[format!("DESTDIR={}", stage.display()), "PREFIX=/usr".into()],
    );
    assert_eq!(files_under(&stage.join("usr")), expected_files());
    assert_eq!(
        files_under(&stage),
        files_under(&stage.join("usr"))
            .into_iter()
            .map(|f| Path::new("usr").join(f))
            .collect()
    );
    for bin in binaries() {
        let installed = stage.join("usr/bin").join(&bin);
        let out = Command::new(&installed).arg("--version").output().unwrap();
        assert!(out.status.success(), "{bin} --version");
        let page = std::fs::read(stage.join(format!("usr/share/man/man1/{bin}.1"))).unwrap();
        let source = std::fs::read(manifest_dir().join(format!("man/{bin}.1"))).unwrap();
        assert_eq!(page, source, "{bin}'s page");
    }
}

#[test]
fn man_and_the_shells_find_what_make_install_put_under_the_prefix() {
    let Some(make) = shell("make") else { return };
    let scratch = Scratch::new("install-prefix");
    let prefix = scratch.path.join("prefix");
    let printed = make_install(&make, &[format!("PREFIX={}", prefix.display())]);
    assert!(printed.contains("installing agy-dump"), "{printed}");
    assert_eq!(files_under(&prefix), expected_files());
    let share = prefix.join("share");

    if let Some(man) = shell("man") {
        let out = Command::new(man)
            .args(["-w", "agy-dump"])
            .env("MANPATH", share.join("man"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let found = String::from_utf8(out.stdout).unwrap();
        assert_eq!(
            found.trim_end(),
            share.join("man/man1/agy-dump.1").to_str().unwrap()
        );
    }

    let line = "agy-dump --n";
    if let Some(bash) = shell("bash") {
        let script = share.join("bash-completion/completions/agy-dump");
        let program = format!(
            "source '{}' && COMP_WORDS=(agy-dump --n) && COMP_CWORD=1 && _agy_dump && \
             printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display()
        );
        let out = Command::new(bash).arg("-c").arg(program).output().unwrap();
        assert_completes("bash", out);
    }
    if let Some(zsh) = shell("zsh") {
        let driver = scratch.path.join("driver.zsh");
        std::fs::write(&driver, ZSH_DRIVER).unwrap();
        let out = Command::new("timeout")
            .arg("60")
            .arg(zsh)
            .arg("-f")
            .arg(&driver)
            .arg(share.join("zsh/site-functions"))
            .arg(line)
            .current_dir(&scratch.path)
            .output()
            .unwrap();
        assert_completes("zsh", out);
    }
    if let Some(fish) = shell("fish") {
        // fish looks in each XDG data directory's vendor_completions.d
        // (/usr/local/share is one by default) for a command on PATH.
        let path = std::env::join_paths(
            std::iter::once(prefix.join("bin"))
                .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
        )
        .unwrap();
        let out = Command::new(fish)
            .arg("-c")
            .arg(format!("complete -C '{line}'"))
            .env("XDG_DATA_DIRS", &share)
            .env("PATH", path)
            .env("HOME", &scratch.path)
            .env("XDG_CONFIG_HOME", scratch.path.join("config"))
            .env("XDG_DATA_HOME", scratch.path.join("data"))
            .output()
            .unwrap();
        assert_completes("fish", out);
    }
}

/// `agy-dump --n` completes to `--no-brain` alone (fish adds a tab and the
/// flag's description).
fn assert_completes(shell: &str, out: std::process::Output) {
    assert!(
        out.status.success(),
        "{shell}: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let words: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('\t').next().unwrap().to_string())
        .filter(|w| !w.is_empty())
        .collect();
    assert_eq!(words, ["--no-brain"], "{shell}");
}
