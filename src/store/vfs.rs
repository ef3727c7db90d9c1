//! `agy-ro`, an SQLite VFS that can read a WAL database without writing
//! anything: not the database, not its `-wal`, and no `-shm` beside them.
//!
//! SQLite keeps the index of a WAL (which frame holds which page) in the
//! `-shm` file that every connection maps. A conversation agy has left
//! (FORMAT.md 15.6) has a `-wal` but often no `-shm`, and SQLite's own
//! read-only open then fails or, where the directory is writable, creates
//! one. SQLite already knows how to read a WAL whose shared memory it cannot
//! trust: when the `-shm` is read-only and no writer holds it, it builds the
//! index in its own heap from the `-wal` (recovery: frames checked against
//! the header's salts and the running checksum, a torn or uncommitted tail
//! ignored) and, at the start of each read transaction, checks that the WAL
//! has not been restarted or grown a commit since. This VFS gives SQLite that
//! answer (`SQLITE_READONLY_CANTINIT`) when there is no `-shm` at all, and
//! hands every other shared-memory call to the real `-shm` when there is one
//! (a running or killed agy), opened read-only as `readonly_shm=1` does.
//!
//! Every file beside the database (the database, its WAL and journals) is
//! opened read-only and never created; writes, truncation and deletion are
//! refused, and no lock above SHARED is taken, so a closing connection never
//! tries to checkpoint. What a reader without a `-shm` cannot do is hold a
//! lock that a writer starting meanwhile would see; [`read_without_shm`]
//! tells the caller to check afterwards that nothing changed.
//!
//! Everything else is the platform's `unix` VFS, to which the calls go.
//!
//! One change reaches the unix VFS itself: run as root, it gives every WAL,
//! journal and `-shm` it opens the owner of its database (`fchown`), even
//! when that is already their owner, and that call alone updates the
//! file's inode change time. [`register`] has it skip a change of owner
//! that would change nothing; an owner that differs is still set.

use std::ffi::{c_char, c_int, c_void, CStr, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::atomic::{fence, Ordering};
use std::sync::OnceLock;

use rusqlite::ffi;

/// The name to open a connection with.
pub const NAME: &str = "agy-ro";

/// A file-control opcode of this VFS (SQLite's own are below 100): writes
/// 1 to its `int` argument when the open database's WAL index is in
/// SQLite's heap because there is no `-shm`, else 0.
const FCNTL_NO_SHM: c_int = 0x6167_7900;

/// Registers the VFS once; later calls return the first outcome.
pub fn register() -> Result<(), String> {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    DONE.get_or_init(|| {
        // SAFETY: sqlite3_vfs_find and sqlite3_vfs_register are thread-safe;
        // the struct handed to SQLite is leaked, so it lives as long as the
        // process, as SQLite requires of a registered VFS.
        unsafe {
            let unix = ffi::sqlite3_vfs_find(c"unix".as_ptr());
            if unix.is_null() {
                return Err("SQLite has no unix VFS".to_string());
            }
            let _ = UNIX.set(Unix(unix));
            skip_needless_fchown(unix);
            let mut vfs = *unix;
            vfs.zName = c"agy-ro".as_ptr();
            vfs.szOsFile = INNER as c_int + (*unix).szOsFile;
            vfs.xOpen = Some(open);
            vfs.xDelete = Some(delete);
            vfs.pNext = std::ptr::null_mut();
            let rc = ffi::sqlite3_vfs_register(Box::into_raw(Box::new(vfs)), 0);
            match rc {
                ffi::SQLITE_OK => Ok(()),
                rc => Err(format!("registering the agy-ro VFS failed ({rc})")),
            }
        }
    })
    .clone()
}

/// The unix VFS's `fchown`, before [`skip_needless_fchown`] replaced it.
static FCHOWN: OnceLock<Fchown> = OnceLock::new();
type Fchown = unsafe extern "C" fn(c_int, u32, u32) -> c_int;

/// Routes the unix VFS's `fchown` through [`fchown_if_needed`].
///
/// # Safety
/// `unix` is the registered unix VFS; called once, before this process
/// opens a file through it for this VFS.
unsafe fn skip_needless_fchown(unix: *mut ffi::sqlite3_vfs) {
    let (Some(get), Some(set)) = ((*unix).xGetSystemCall, (*unix).xSetSystemCall) else {
        return;
    };
    let Some(original) = get(unix, c"fchown".as_ptr()) else {
        return;
    };
    // SAFETY: the unix VFS's "fchown" entry is fchown(2)'s signature,
    // stored as a generic function pointer.
    let original: Fchown = std::mem::transmute::<unsafe extern "C" fn(), Fchown>(original);
    if FCHOWN.set(original).is_ok() {
        let ours = std::mem::transmute::<Fchown, unsafe extern "C" fn()>(fchown_if_needed);
        set(unix, c"fchown".as_ptr(), Some(ours));
    }
}

/// `fchown`, but not when the file already has that owner and group.
unsafe extern "C" fn fchown_if_needed(fd: c_int, uid: u32, gid: u32) -> c_int {
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::io::FromRawFd;
    // SAFETY: SQLite passes a file descriptor it has open; the File is
    // never dropped, so the descriptor stays SQLite's.
    let file = std::mem::ManuallyDrop::new(std::fs::File::from_raw_fd(fd));
    if let Ok(meta) = file.metadata() {
        if meta.uid() == uid && meta.gid() == gid {
            return 0;
        }
    }
    (FCHOWN.get().expect("set before it is routed here"))(fd, uid, gid)
}

/// Whether `conn`'s main database is read with SQLite's heap WAL index,
/// because it had a `-wal` and no `-shm`. No writer can be in its locks
/// then; one that started during the read would not have seen this reader.
pub fn read_without_shm(conn: &rusqlite::Connection) -> bool {
    let mut answer: c_int = 0;
    // SAFETY: the handle is live for the borrow of `conn`; the opcode is
    // answered by `file_control` below with one c_int, or not at all by a
    // file of another VFS (SQLITE_NOTFOUND, `answer` untouched).
    let rc = unsafe {
        ffi::sqlite3_file_control(
            conn.handle(),
            c"main".as_ptr(),
            FCNTL_NO_SHM,
            (&mut answer as *mut c_int).cast(),
        )
    };
    rc == ffi::SQLITE_OK && answer == 1
}

/// The `unix` VFS every call goes on to.
struct Unix(*mut ffi::sqlite3_vfs);
// SAFETY: a registered VFS is immutable and shared by SQLite across threads.
unsafe impl Send for Unix {}
unsafe impl Sync for Unix {}
static UNIX: OnceLock<Unix> = OnceLock::new();

fn unix() -> *mut ffi::sqlite3_vfs {
    UNIX.get().expect("registered before any open").0
}

/// What is known of the `-shm` of an open database.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Shm {
    /// Not mapped yet (or unmapped since).
    Unknown,
    /// There is one: the unix VFS maps it, read-only.
    Real,
    /// There is none: SQLite keeps the WAL index in its heap.
    Absent,
}

/// A file of this VFS: SQLite's header, our state, then the unix VFS's own
/// file at [`INNER`].
#[repr(C)]
struct File {
    base: ffi::sqlite3_file,
    shm: Shm,
    /// The database's `-shm` path (main databases only), owned.
    shm_path: *mut PathBuf,
}

/// Where the unix file starts: after ours, at pointer alignment.
const INNER: usize = std::mem::size_of::<File>().next_multiple_of(std::mem::align_of::<u64>());

/// # Safety
/// `file` is a file of this VFS whose open succeeded.
unsafe fn inner(file: *mut ffi::sqlite3_file) -> *mut ffi::sqlite3_file {
    file.cast::<u8>().add(INNER).cast()
}

/// # Safety
/// `file` is a file of this VFS whose open succeeded.
unsafe fn methods(file: *mut ffi::sqlite3_file) -> &'static ffi::sqlite3_io_methods {
    &*(*inner(file)).pMethods
}

/// Files that live beside the database: opened read-only, never created.
const BESIDE: c_int = ffi::SQLITE_OPEN_MAIN_DB
    | ffi::SQLITE_OPEN_MAIN_JOURNAL
    | ffi::SQLITE_OPEN_WAL
    | ffi::SQLITE_OPEN_SUPER_JOURNAL;

unsafe extern "C" fn open(
    _vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let unix = unix();
    let unix_open = (*unix).xOpen.expect("the unix VFS opens files");
    if flags & BESIDE == 0 {
        // A temporary file (a large sort): the unix VFS's, in place, in
        // the temporary directory and deleted on close.
        return unix_open(unix, name, file, flags, out_flags);
    }
    let f = file.cast::<File>();
    (*f).base.pMethods = std::ptr::null();
    (*f).shm = Shm::Unknown;
    (*f).shm_path = std::ptr::null_mut();
    let read_only = (flags
        & !(ffi::SQLITE_OPEN_READWRITE
            | ffi::SQLITE_OPEN_CREATE
            | ffi::SQLITE_OPEN_EXCLUSIVE
            | ffi::SQLITE_OPEN_DELETEONCLOSE))
        | ffi::SQLITE_OPEN_READONLY;
    let rc = unix_open(unix, name, inner(file), read_only, out_flags);
    if rc != ffi::SQLITE_OK {
        return rc;
    }
    if flags & ffi::SQLITE_OPEN_MAIN_DB != 0 && !name.is_null() {
        let mut path = OsStr::from_bytes(CStr::from_ptr(name).to_bytes()).to_os_string();
        path.push("-shm");
        (*f).shm_path = Box::into_raw(Box::new(PathBuf::from(path)));
    }
    (*f).base.pMethods = &METHODS;
    ffi::SQLITE_OK
}

unsafe extern "C" fn delete(_: *mut ffi::sqlite3_vfs, _: *const c_char, _: c_int) -> c_int {
    ffi::SQLITE_IOERR_DELETE
}

static METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 2,
    xClose: Some(close),
    xRead: Some(read),
    xWrite: Some(write),
    xTruncate: Some(truncate),
    xSync: Some(sync),
    xFileSize: Some(file_size),
    xLock: Some(lock),
    xUnlock: Some(unlock),
    xCheckReservedLock: Some(check_reserved_lock),
    xFileControl: Some(file_control),
    xSectorSize: Some(sector_size),
    xDeviceCharacteristics: Some(device_characteristics),
    xShmMap: Some(shm_map),
    xShmLock: Some(shm_lock),
    xShmBarrier: Some(shm_barrier),
    xShmUnmap: Some(shm_unmap),
    xFetch: None,
    xUnfetch: None,
};

unsafe extern "C" fn close(file: *mut ffi::sqlite3_file) -> c_int {
    let rc = (methods(file).xClose.expect("unix files close"))(inner(file));
    let f = file.cast::<File>();
    if !(*f).shm_path.is_null() {
        drop(Box::from_raw((*f).shm_path));
        (*f).shm_path = std::ptr::null_mut();
    }
    rc
}

unsafe extern "C" fn read(
    file: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amount: c_int,
    offset: ffi::sqlite3_int64,
) -> c_int {
    (methods(file).xRead.expect("unix files read"))(inner(file), buf, amount, offset)
}

unsafe extern "C" fn write(
    _: *mut ffi::sqlite3_file,
    _: *const c_void,
    _: c_int,
    _: ffi::sqlite3_int64,
) -> c_int {
    ffi::SQLITE_READONLY
}

unsafe extern "C" fn truncate(_: *mut ffi::sqlite3_file, _: ffi::sqlite3_int64) -> c_int {
    ffi::SQLITE_READONLY
}

/// Nothing was written, so there is nothing to make durable.
unsafe extern "C" fn sync(_: *mut ffi::sqlite3_file, _: c_int) -> c_int {
    ffi::SQLITE_OK
}

unsafe extern "C" fn file_size(
    file: *mut ffi::sqlite3_file,
    size: *mut ffi::sqlite3_int64,
) -> c_int {
    (methods(file).xFileSize.expect("unix files have sizes"))(inner(file), size)
}

/// SHARED and none: what a reader holds. A higher lock is what a writer or
/// a closing connection's checkpoint would want: refused as busy.
unsafe extern "C" fn lock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    if level > ffi::SQLITE_LOCK_SHARED {
        return ffi::SQLITE_BUSY;
    }
    (methods(file).xLock.expect("unix files lock"))(inner(file), level)
}

unsafe extern "C" fn unlock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    (methods(file).xUnlock.expect("unix files unlock"))(inner(file), level)
}

unsafe extern "C" fn check_reserved_lock(file: *mut ffi::sqlite3_file, out: *mut c_int) -> c_int {
    (methods(file)
        .xCheckReservedLock
        .expect("unix files check locks"))(inner(file), out)
}

unsafe extern "C" fn file_control(
    file: *mut ffi::sqlite3_file,
    op: c_int,
    arg: *mut c_void,
) -> c_int {
    if op == FCNTL_NO_SHM {
        *arg.cast::<c_int>() = c_int::from((*file.cast::<File>()).shm == Shm::Absent);
        return ffi::SQLITE_OK;
    }
    (methods(file)
        .xFileControl
        .expect("unix files take controls"))(inner(file), op, arg)
}

unsafe extern "C" fn sector_size(file: *mut ffi::sqlite3_file) -> c_int {
    (methods(file).xSectorSize.expect("unix files have sectors"))(inner(file))
}

unsafe extern "C" fn device_characteristics(file: *mut ffi::sqlite3_file) -> c_int {
    (methods(file)
        .xDeviceCharacteristics
        .expect("unix files have characteristics"))(inner(file))
}

/// Whether the `-shm` exists; `None` for a file that is not a main
/// database (SQLite maps shared memory only for those).
unsafe fn shm_exists(file: *mut ffi::sqlite3_file) -> Option<bool> {
    let path = (*file.cast::<File>()).shm_path;
    (!path.is_null()).then(|| std::fs::symlink_metadata(&*path).is_ok())
}

unsafe extern "C" fn shm_map(
    file: *mut ffi::sqlite3_file,
    page: c_int,
    page_size: c_int,
    extend: c_int,
    out: *mut *mut c_void,
) -> c_int {
    let f = file.cast::<File>();
    if (*f).shm == Shm::Unknown {
        (*f).shm = match shm_exists(file) {
            Some(false) => Shm::Absent,
            _ => Shm::Real,
        };
    }
    if (*f).shm == Shm::Real {
        let map = methods(file).xShmMap.expect("unix files map shared memory");
        let rc = map(inner(file), page, page_size, extend, out);
        // Removed between the look and the open (a writer closing): then
        // there is none after all.
        if rc & 0xff != ffi::SQLITE_CANTOPEN || page != 0 || shm_exists(file) != Some(false) {
            return rc;
        }
        (*f).shm = Shm::Absent;
    }
    // SQLite's answer for a -shm it may not write and no writer holds: it
    // builds the WAL index in its heap from the -wal.
    *out = std::ptr::null_mut();
    ffi::SQLITE_READONLY_CANTINIT
}

unsafe extern "C" fn shm_lock(
    file: *mut ffi::sqlite3_file,
    offset: c_int,
    n: c_int,
    flags: c_int,
) -> c_int {
    match (*file.cast::<File>()).shm {
        Shm::Real => {
            (methods(file)
                .xShmLock
                .expect("unix files lock shared memory"))(inner(file), offset, n, flags)
        }
        // No other connection can hold a lock in a -shm that is not there.
        Shm::Absent => ffi::SQLITE_OK,
        Shm::Unknown => ffi::SQLITE_IOERR_SHMLOCK,
    }
}

unsafe extern "C" fn shm_barrier(file: *mut ffi::sqlite3_file) {
    match (*file.cast::<File>()).shm {
        Shm::Real => (methods(file).xShmBarrier.expect("unix files have barriers"))(inner(file)),
        _ => fence(Ordering::SeqCst),
    }
}

/// Unmaps; the `-shm` is never deleted, whatever SQLite asks.
unsafe extern "C" fn shm_unmap(file: *mut ffi::sqlite3_file, _delete: c_int) -> c_int {
    let f = file.cast::<File>();
    let was = std::mem::replace(&mut (*f).shm, Shm::Unknown);
    match was {
        Shm::Real => (methods(file).xShmUnmap.expect("unix files unmap"))(inner(file), 0),
        _ => ffi::SQLITE_OK,
    }
}
