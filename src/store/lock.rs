//! Advisory file locks that die with their process: what proves that no
//! live writer holds a file, where a pid could not (pids are reused, and
//! another pid namespace or host sharing the store has pids of its own).
//! agy-pack's claims on conversations and the index's temporary files use
//! them.

use std::fs::File;

/// Takes an exclusive `flock(2)` on `file` without waiting: `false` when
/// another open file holds it. The lock lasts until every descriptor of
/// this open file is closed, at the latest when the process dies.
///
/// std's `File::try_lock` does the same, but only from Rust 1.89 on, and
/// the crate builds with 1.85.
pub fn try_flock(file: &File) -> std::io::Result<bool> {
    use std::os::fd::AsRawFd;
    extern "C" {
        fn flock(fd: i32, operation: i32) -> i32;
    }
    // The same numbers on Linux, the BSDs and macOS.
    const LOCK_EX: i32 = 2;
    const LOCK_NB: i32 = 4;
    loop {
        // SAFETY: flock takes a descriptor that `file` keeps open and an
        // int; it touches no memory of ours.
        if unsafe { flock(file.as_raw_fd(), LOCK_EX | LOCK_NB) } == 0 {
            return Ok(true);
        }
        let err = std::io::Error::last_os_error();
        match err.kind() {
            std::io::ErrorKind::WouldBlock => return Ok(false),
            std::io::ErrorKind::Interrupted => continue,
            _ => return Err(err),
        }
    }
}

/// Whether another process holds a POSIX (`fcntl`) lock on any of the
/// `len` bytes of `file` from `start`: SQLite's locks, which a `-shm`'s
/// live connections hold. Only asks (`F_GETLK`); takes nothing, so it
/// cannot disturb the holder, and a read-only descriptor may ask.
pub fn posix_lock_held(file: &File, start: u64, len: u64) -> std::io::Result<bool> {
    use std::os::fd::AsRawFd;
    // SAFETY: `flock` is plain data, all zeros a valid value.
    let mut probe: libc::flock = unsafe { std::mem::zeroed() };
    probe.l_type = libc::F_WRLCK as _;
    probe.l_whence = libc::SEEK_SET as _;
    probe.l_start = start as _;
    probe.l_len = len as _;
    // SAFETY: F_GETLK reads and writes the `flock` we pass, which lives
    // through the call, on a descriptor `file` keeps open.
    if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETLK, &mut probe) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(probe.l_type != libc::F_UNLCK as libc::c_short)
}
