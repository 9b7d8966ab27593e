//! File notifications for the index: on Linux, inotify watches on every directory the index covers
//! (dot-directories are not entered, as the search does not enter them) and on the index directory,
//! where searches write barrier files. Each directory is listed once its watch exists, which gives
//! the index its file list without a second walk. Elsewhere there are none, and every search scans.
//!
//! One thread reads the inotify queue in order, so when a search's barrier notification arrives,
//! every notification queued before it has been applied. A directory that appears (created or
//! moved in) is watched, walking its subtree, before it is reported changed, so a file created in it
//! before its watch existed is found by whoever reads the changed directory afterwards.
//!
//! Architecture invariant: a notification that cannot be applied with certainty (queue overflow,
//! a watch that could not be added, a name that is not Unicode, the root itself moved or deleted)
//! makes the index lost or unavailable; it is never dropped silently.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::Shared;

/// The prefix of this process's barrier files (several servers may share a storage root).
fn barrier_prefix(shared: &Shared) -> String {
    format!("barrier-{}-{:x}-", std::process::id(), std::ptr::from_ref(shared) as usize)
}

/// Writes a barrier file and waits until its notification arrived; `false` when it did not in time.
pub fn barrier(shared: &Arc<Shared>) -> bool {
    let n = shared.barrier_next.fetch_add(1, Ordering::SeqCst) + 1;
    let path = shared.dir.join(format!("{}{n}", barrier_prefix(shared)));
    if std::fs::File::create(&path).is_err() {
        return false;
    }
    let _ = std::fs::remove_file(&path);
    let deadline = std::time::Instant::now() + shared.options.barrier_timeout;
    let mut seen = shared.barrier_seen.lock();
    while *seen < n {
        if shared.barrier_cv.wait_until(&mut seen, deadline).timed_out() {
            return *seen >= n;
        }
    }
    true
}

/// Wakes the notification thread so that it notices `stop`.
pub fn poke(shared: &Arc<Shared>) {
    let path = shared.dir.join(format!("{}stop", barrier_prefix(shared)));
    if std::fs::File::create(&path).is_ok() {
        let _ = std::fs::remove_file(&path);
    }
}

#[cfg(target_os = "linux")]
pub use linux::start;

/// Notifications are not available on this platform: every search scans.
#[cfg(not(target_os = "linux"))]
pub fn start(_shared: &Arc<Shared>) -> Result<Vec<String>, String> {
    Err("file notifications for the index are only implemented on Linux".to_owned())
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::HashMap;
    use std::ffi::OsStr;
    use std::path::Path;
    use std::sync::Arc;
    use std::sync::atomic::Ordering;

    use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask, Watches};

    use super::super::Shared;
    use super::barrier_prefix;
    use crate::workspace::write::is_temp_name;

    /// The watched directories, by descriptor: their paths relative to the root.
    struct Watched {
        watches: Watches,
        dirs: HashMap<WatchDescriptor, String>,
        index_dir: WatchDescriptor,
    }

    fn mask() -> WatchMask {
        WatchMask::CREATE
            | WatchMask::DELETE
            | WatchMask::MODIFY
            | WatchMask::CLOSE_WRITE
            | WatchMask::MOVED_FROM
            | WatchMask::MOVED_TO
            | WatchMask::ATTRIB
            | WatchMask::DONT_FOLLOW
            | WatchMask::ONLYDIR
            | WatchMask::EXCL_UNLINK
    }

    fn add_error(err: &std::io::Error) -> String {
        match err.raw_os_error() {
            Some(code) if code == libc::ENOSPC => {
                "the system's limit of watched directories (fs.inotify.max_user_watches) was reached".to_owned()
            }
            _ => format!("a directory could not be watched: {err}"),
        }
    }

    impl Watched {
        /// Watches `rel` (relative to `root`; `""` is the root) and every directory below it that a
        /// search enters, listing each directory after its watch exists; appends the files found
        /// (relative to `root`, unsorted) to `files`, with the walk rules of `build::walk`.
        fn add_tree(&mut self, root: &Path, rel: &str, files: &mut Vec<String>) -> Result<(), String> {
            let mut stack = vec![rel.to_owned()];
            while let Some(dir) = stack.pop() {
                let abs = if dir.is_empty() { root.to_path_buf() } else { root.join(&dir) };
                let mut mask = mask();
                if dir.is_empty() {
                    mask |= WatchMask::DELETE_SELF | WatchMask::MOVE_SELF;
                }
                match self.watches.add(&abs, mask) {
                    Ok(wd) => {
                        self.dirs.insert(wd, dir.clone());
                    }
                    // Gone again, or replaced by a file or a link: its parent reports that.
                    Err(err) if matches!(err.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR | libc::ELOOP)) => {
                        continue;
                    }
                    Err(err) => return Err(add_error(&err)),
                }
                let Ok(entries) = std::fs::read_dir(&abs) else { continue };
                for entry in entries.flatten() {
                    let Ok(kind) = entry.file_type() else { continue };
                    let name = entry.file_name();
                    if kind.is_dir() && name.as_encoded_bytes().first() == Some(&b'.') {
                        continue;
                    }
                    let Some(name) = name.to_str() else {
                        return Err("a file name is not valid Unicode".to_owned());
                    };
                    // Exactly as long as the path: a tree's paths are most of the list's memory.
                    let mut path = String::with_capacity(dir.len() + 1 + name.len());
                    if !dir.is_empty() {
                        path.push_str(&dir);
                        path.push('/');
                    }
                    path.push_str(name);
                    if kind.is_dir() {
                        stack.push(path);
                    } else if kind.is_file() && !is_temp_name(name) {
                        files.push(path);
                    }
                }
            }
            Ok(())
        }

        fn remove_tree(&mut self, rel: &str) {
            let gone: Vec<WatchDescriptor> = self
                .dirs
                .iter()
                .filter(|(_, dir)| super::super::is_under(dir, rel))
                .map(|(wd, _)| wd.clone())
                .collect();
            for wd in gone {
                self.dirs.remove(&wd);
                let _ = self.watches.remove(wd);
            }
        }
    }

    /// Watches the tree and the index directory, then reads notifications on a thread of its own;
    /// returns the tree's files as `build::walk` lists them (each listed after its directory was
    /// watched, so a change after its listing is notified).
    pub fn start(shared: &Arc<Shared>) -> Result<Vec<String>, String> {
        let inotify = Inotify::init().map_err(|err| format!("file notifications are unavailable: {err}"))?;
        let mut watches = inotify.watches();
        let index_dir = watches
            .add(&shared.dir, WatchMask::CREATE | WatchMask::ONLYDIR)
            .map_err(|err| format!("the index directory could not be watched: {err}"))?;
        let mut watched = Watched { watches, dirs: HashMap::new(), index_dir };
        let mut files = Vec::new();
        watched.add_tree(&shared.root, "", &mut files)?;
        files.sort_unstable();
        let shared = shared.clone();
        std::thread::Builder::new()
            .name("search-index-watch".into())
            .spawn(move || read_loop(inotify, watched, &shared))
            .map(|_| files)
            .map_err(|err| format!("the notification thread could not start: {err}"))
    }

    fn read_loop(mut inotify: Inotify, mut watched: Watched, shared: &Arc<Shared>) {
        let prefix = barrier_prefix(shared);
        let mut buffer = vec![0u8; 64 << 10];
        while !shared.stop.load(Ordering::SeqCst) {
            let events = match inotify.read_events_blocking(&mut buffer) {
                Ok(events) => events,
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(err) => {
                    shared.unavailable(format!("reading file notifications failed: {err}"));
                    return;
                }
            };
            if !shared.options.notification_delay.is_zero() {
                std::thread::sleep(shared.options.notification_delay);
            }
            for event in events {
                if event.mask.contains(EventMask::Q_OVERFLOW) {
                    // The lost notifications may have announced new directories: watch the whole
                    // tree again (existing watches are kept) before the re-check walks it.
                    if let Err(reason) = watched.add_tree(&shared.root, "", &mut Vec::new()) {
                        shared.unavailable(reason);
                        return;
                    }
                    shared.lose("the operating system's file notification queue overflowed".to_owned());
                    continue;
                }
                if event.wd == watched.index_dir {
                    barrier_seen(shared, &prefix, event.name);
                    continue;
                }
                if event.mask.contains(EventMask::IGNORED) {
                    watched.dirs.remove(&event.wd);
                    continue;
                }
                let Some(dir) = watched.dirs.get(&event.wd).cloned() else { continue };
                let Some(name) = event.name else {
                    // Only the root watches itself: moved or deleted.
                    shared.unavailable("the project directory was moved or deleted".to_owned());
                    return;
                };
                let Some(name) = name.to_str() else {
                    shared.unavailable("a file name is not valid Unicode".to_owned());
                    return;
                };
                let is_dir = event.mask.contains(EventMask::ISDIR);
                if is_dir && name.starts_with('.') {
                    continue;
                }
                let rel = if dir.is_empty() { name.to_owned() } else { format!("{dir}/{name}") };
                if is_dir && event.mask.intersects(EventMask::MOVED_FROM | EventMask::DELETE) {
                    watched.remove_tree(&rel);
                }
                if is_dir
                    && event.mask.intersects(EventMask::CREATE | EventMask::MOVED_TO)
                    && let Err(reason) = watched.add_tree(&shared.root, &rel, &mut Vec::new())
                {
                    shared.unavailable(reason);
                    return;
                }
                shared.count_event();
                shared.mark_dirty(rel);
            }
        }
    }

    fn barrier_seen(shared: &Shared, prefix: &str, name: Option<&OsStr>) {
        let Some(n) = name.and_then(OsStr::to_str).and_then(|n| n.strip_prefix(prefix)).and_then(|n| n.parse().ok())
        else {
            return;
        };
        shared.inner.write().events_since_barrier = 0;
        let mut seen = shared.barrier_seen.lock();
        *seen = (*seen).max(n);
        shared.barrier_cv.notify_all();
    }
}
