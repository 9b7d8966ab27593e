//! Descriptors of indexed files kept open between searches, so that a search through the index
//! reads the files it admits without opening and closing each again (on DuckDB, opening and
//! closing were 30% of a literal query's time).
//!
//! Architecture invariant: a kept descriptor is only handed out for a file of the index's base
//! that a view lists as unchanged (not re-indexed, not under a path reported changed), so it is
//! the file its path names: any change at or above the path is reported changed before a later
//! search lists it, and re-indexing the path forgets its descriptor for good (a deleted file's
//! space is not held, and a descriptor taken meanwhile is closed when given back).
//! Architecture invariant: at most a share of the process's limit of open files is kept
//! (`share_of_limit`) ([`raise_open_file_limit`] raises it at start-up).

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fs::File;

use parking_lot::Mutex;

/// Descriptors kept at most, whatever the limit of open files.
const MAX_KEPT: usize = 16_384;

/// Descriptors left for everything else the server opens (clangd, builds, pipes, the journal).
const RESERVED: usize = 1_024;

enum Slot {
    /// Open and not in use by a search.
    Idle(File),
    /// Re-indexed: never kept again.
    Forgotten,
}

#[derive(Default)]
struct Kept {
    slots: HashMap<usize, Slot>,
    idle: usize,
}

/// The kept descriptors of one base segment, by file id.
pub struct OpenFiles {
    kept: Mutex<Kept>,
    cap: usize,
}

impl OpenFiles {
    /// An empty set sized to the process's limit of open files now.
    pub fn within_limit() -> OpenFiles {
        OpenFiles { kept: Mutex::new(Kept::default()), cap: share_of_limit() }
    }

    /// The kept descriptor of file `id`, now owned by the caller (give it back with [`Self::give_back`]).
    pub fn take(&self, id: usize) -> Option<File> {
        let mut kept = self.kept.lock();
        let Entry::Occupied(slot) = kept.slots.entry(id) else { return None };
        if matches!(slot.get(), Slot::Forgotten) {
            return None;
        }
        let Slot::Idle(file) = slot.remove() else { return None };
        kept.idle -= 1;
        Some(file)
    }

    /// Keeps `file` (opened as file `id`) for later searches, unless `id` was forgotten meanwhile,
    /// another search kept one already, or the cap is reached; otherwise it is closed.
    pub fn give_back(&self, id: usize, file: File) {
        let mut kept = self.kept.lock();
        let room = kept.idle < self.cap;
        if let (Entry::Vacant(slot), true) = (kept.slots.entry(id), room) {
            slot.insert(Slot::Idle(file));
            kept.idle += 1;
            return;
        }
        drop(kept);
        drop(file);
    }

    /// File `id` changed: its descriptor is closed and never kept again.
    pub fn forget(&self, id: usize) {
        let mut kept = self.kept.lock();
        let old = kept.slots.insert(id, Slot::Forgotten);
        if matches!(old, Some(Slot::Idle(_))) {
            kept.idle -= 1;
        }
        drop(kept);
        drop(old);
    }

    /// Descriptors kept now.
    #[cfg(test)]
    fn idle(&self) -> usize {
        self.kept.lock().idle
    }
}

/// Half of what the limit of open files leaves beyond [`RESERVED`], at most [`MAX_KEPT`].
fn share_of_limit() -> usize {
    #[cfg(unix)]
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX));
    // Without file notifications (only Linux has them here) the index never answers a search.
    #[cfg(not(unix))]
    let limit: usize = 0;
    (limit.saturating_sub(RESERVED) / 2).min(MAX_KEPT)
}

/// Raises the soft limit of open files to the hard one (at most 65,536), as servers that keep
/// many files open do; children inherit it. Failure leaves the limit as it was.
pub fn raise_open_file_limit() {
    #[cfg(unix)]
    {
        use rustix::process::{Resource, getrlimit, setrlimit};
        let limit = getrlimit(Resource::Nofile);
        let wanted = limit.maximum.map_or(65_536, |hard| hard.min(65_536));
        if limit.current.is_some_and(|soft| soft < wanted) {
            let raised = rustix::process::Rlimit { current: Some(wanted), maximum: limit.maximum };
            if let Err(err) = setrlimit(Resource::Nofile, raised) {
                tracing::debug!("the limit of open files stays as it was: {err}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn some_file() -> File {
        File::open(std::env::current_exe().unwrap()).unwrap()
    }

    #[test]
    fn a_forgotten_file_is_never_kept_again() {
        let open = OpenFiles { kept: Mutex::new(Kept::default()), cap: 2 };
        open.give_back(1, some_file());
        assert_eq!(open.idle(), 1);
        let taken = open.take(1).expect("kept");
        assert!(open.take(1).is_none(), "a taken descriptor is the taker's alone");
        open.forget(1);
        open.give_back(1, taken);
        assert_eq!(open.idle(), 0, "given back after it was forgotten: closed");
        open.give_back(2, some_file());
        open.forget(2);
        assert_eq!(open.idle(), 0, "forgetting closes a kept descriptor");
        assert!(open.take(2).is_none());
    }

    #[test]
    fn no_more_than_the_cap_are_kept() {
        let open = OpenFiles { kept: Mutex::new(Kept::default()), cap: 2 };
        for id in 0..4 {
            open.give_back(id, some_file());
        }
        assert_eq!(open.idle(), 2);
        open.give_back(0, some_file());
        assert_eq!(open.idle(), 2, "a second descriptor for a kept file is closed");
        assert!(open.take(3).is_none());
    }
}
