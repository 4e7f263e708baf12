//! The process's own temporary directory.  Every temporary directory the
//! core makes through the `tempfile` crate (a vector build's shuffle spill
//! and partition scratch) goes under `<base>/lance-c-process-<pid>-<random>/`
//! (base: the host's budget directory, else TMPDIR),
//! made at the first call that starts the runtime.  The process holds an
//! exclusive `flock` on the directory for its whole life and
//! removes the directory when it exits (so a build abandoned in training,
//! whose computation still holds its spill directory, leaves nothing when
//! the process ends).  A process killed with SIGKILL cannot remove its
//! directory, but the kernel drops its lock: the next process's first call
//! takes the lock of every unlocked `lance-c-process-<pid>-<random>`
//! directory and removes it (that exact shape: a host's own directory whose
//! name merely starts the same is never touched).
//! Locks, not process ids, decide (process ids repeat across PID
//! namespaces sharing one temporary directory).

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const PREFIX: &str = "lance-c-process-";
/// Length of the random part of the name (ASCII letters and digits).
const RANDOM_LEN: usize = 6;

struct Owned {
    dir: PathBuf,
    pid: u32,
    /// The directory itself, open and locked for the life of the process.
    lock: File,
}

static OWNED: OnceLock<Option<Owned>> = OnceLock::new();

/// Where temporary files go: the directory of the host's budget (lance.h
/// "Process budget"), else TMPDIR (the system's default when unset).
pub fn base() -> PathBuf {
    crate::process::budget::budget().temp_dir.unwrap_or_else(std::env::temp_dir)
}

/// Sets up the process's directory under `chosen` (the budget's directory,
/// else TMPDIR) and reclaims those of dead processes (once: process/runtime.rs
/// calls it at first use).  Failures leave temporary files directly in the
/// base directory: they still work, only the cleanup after a kill is lost.
pub fn install(chosen: Option<PathBuf>) {
    OWNED.get_or_init(|| {
        let base = chosen.clone().unwrap_or_else(std::env::temp_dir);
        reclaim(&base);
        // A reclaim by another process can take a directory in the moment
        // between its creation and its lock: then try a new one.
        let Some(owned) = (0..3).find_map(|_| create(&base).ok().flatten()) else {
            if chosen.is_some() {
                let _ = tempfile::env::override_temp_dir(&base);
            }
            return None;
        };
        if tempfile::env::override_temp_dir(&owned.dir).is_err() {
            // Someone in this process chose a directory first: keep theirs.
            let _ = std::fs::remove_dir_all(&owned.dir);
            return None;
        }
        // SAFETY: registering a plain extern "C" function with atexit.
        unsafe { libc::atexit(remove_at_exit) };
        Some(owned)
    });
}

/// Makes and locks a new directory; None when it was reclaimed before the
/// lock was taken.
fn create(base: &Path) -> std::io::Result<Option<Owned>> {
    let pid = std::process::id();
    let dir = tempfile::Builder::new()
        .prefix(&format!("{PREFIX}{pid}-"))
        .rand_bytes(RANDOM_LEN)
        // The spill holds the dataset's vectors: the owner's alone.
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir_in(base)?
        .keep();
    let lock = match File::open(&dir) {
        Ok(lock) => lock,
        Err(e) => {
            // (Out of file descriptors, say): never leave an unlocked directory.
            let _ = std::fs::remove_dir(&dir);
            return Err(e);
        }
    };
    if !try_lock(&lock) {
        return Ok(None);
    }
    // Still the directory this process made (not reclaimed and made anew)?
    let same = std::fs::metadata(&dir).ok().zip(lock.metadata().ok());
    if !same.is_some_and(|(path, held)| path.ino() == held.ino() && path.dev() == held.dev()) {
        return Ok(None);
    }
    Ok(Some(Owned { dir, pid, lock }))
}

fn try_lock(file: &File) -> bool {
    // SAFETY: flock on a descriptor the caller owns.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

/// Whether `name` has the shape `create` gives: the prefix, a process id,
/// a dash, RANDOM_LEN letters and digits.
fn named_by_create(name: &str) -> bool {
    let Some((pid, random)) = name.strip_prefix(PREFIX).and_then(|rest| rest.split_once('-')) else {
        return false;
    };
    !pid.is_empty()
        && pid.bytes().all(|b| b.is_ascii_digit())
        && random.len() == RANDOM_LEN
        && random.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// Removes every directory under `base` named as `create` names them that
/// no process holds locked.  (One whose creator is between making it and
/// locking it may be taken too: that creator then makes another.)
fn reclaim(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else { return };
    for entry in entries.flatten() {
        if !entry.file_name().to_str().is_some_and(named_by_create) {
            continue;
        }
        let dir = entry.path();
        let Ok(lock) = File::open(&dir) else { continue };
        if try_lock(&lock) {
            let _ = remove_tree(&dir);
        }
    }
}

extern "C" fn remove_at_exit() {
    if let Some(Some(owned)) = OWNED.get() {
        // A child forked without exec shares the directory: only its
        // creator removes it.
        if owned.pid != std::process::id() {
            return;
        }
        // A full directory (the spill of a build whose own cleanup failed,
        // say for want of descriptors) takes one descriptor to list; a
        // process at its limit may not have even that one: then give up the
        // lock's own and try again (another process reclaiming it meanwhile
        // removes the same directory).
        if remove_tree(&owned.dir).is_ok() {
            return;
        }
        // SAFETY: the lock's descriptor is closed once, at exit; the static
        // holding its File is never dropped, so nothing closes it again.
        unsafe { libc::close(owned.lock.as_raw_fd()) };
        let _ = remove_tree(&owned.dir);
    }
}

/// Removes a process's directory (its own at exit, a dead one's in
/// `reclaim`) holding at most one descriptor at any moment (std's
/// `remove_dir_all` holds one per level, more than a process at its limit
/// has), and none for an empty directory.  Symbolic links are removed, never
/// followed; nobody else can add one: the directory is mode 0700.
fn remove_tree(dir: &Path) -> std::io::Result<()> {
    if std::fs::remove_dir(dir).is_ok() {
        return Ok(());
    }
    let gone = |e: &std::io::Error| e.kind() == std::io::ErrorKind::NotFound;
    // The listing is read whole and its descriptor closed before descending.
    let entries: Vec<PathBuf> =
        std::fs::read_dir(dir)?.map(|entry| entry.map(|e| e.path())).collect::<Result<_, _>>()?;
    for path in entries {
        let removed = match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_dir() => remove_tree(&path),
            Ok(_) => std::fs::remove_file(&path),
            Err(e) => Err(e),
        };
        // (An entry removed meanwhile, by a build ending on another thread.)
        match removed {
            Err(e) if !gone(&e) => return Err(e),
            _ => {}
        }
    }
    std::fs::remove_dir(dir).or_else(|e| if gone(&e) { Ok(()) } else { Err(e) })
}
