//! The index's own thread, at the lowest scheduling priority: it starts the notifications, then maps
//! the index file left by an earlier run and re-checks the tree against it (re-reading only what
//! changed), or builds the index from scratch (ready at once unless notifications were lost during
//! the build); afterwards it re-indexes changed paths and re-checks the tree after lost
//! notifications.
//!
//! Architecture invariant: notifications are started before the tree is read, so every change is
//! either seen by the read or reported afterwards; the index becomes ready only when no
//! notification was lost since the read began.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::build::{self, Extractor};
use super::segment::{self, Segment};
use super::{DeltaFile, FileMeta, FileState, OpenFiles, Phase, Shared, is_under, watch};

/// The index file's name in the index directory.
const FILE_NAME: &str = "project.idx";
/// A file modified this close to the moment it was read may have changed within one timestamp
/// tick; a re-check reads it again.
const RACY_NS: i64 = 2_000_000_000;
/// Changed paths re-indexed per round (the lock is taken once per path).
const ROUND: usize = 256;

/// Lowers the calling thread's scheduling priority (Linux: per thread), so indexing yields the CPU.
pub fn lower_priority() {
    #[cfg(target_os = "linux")]
    let _ = rustix::process::setpriority_process(None, 19);
}

pub fn spawn(shared: Arc<Shared>) {
    let spawned = std::thread::Builder::new().name("search-index".into()).spawn({
        let shared = shared.clone();
        move || run(&shared)
    });
    if let Err(err) = spawned {
        shared.unavailable(format!("the index thread could not start: {err}"));
    }
}

fn now_ns() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i64)
}

fn run(shared: &Arc<Shared>) {
    lower_priority();
    if let Err(err) = std::fs::create_dir_all(&shared.dir) {
        shared.unavailable(format!("the index directory could not be created: {err}"));
        return;
    }
    let listed = match watch::start(shared) {
        Ok(files) => files,
        Err(reason) => return shared.unavailable(reason),
    };
    while shared.options.hold_build.as_ref().is_some_and(|hold| hold.load(Ordering::SeqCst)) {
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let path = shared.dir.join(FILE_NAME);
    // A segment built here is used at once and made durable afterwards.
    let mut unsynced = None;
    let (segment, listed) = match Segment::open(&path) {
        Ok(segment) => (segment, Some(listed)),
        Err(_) => {
            segment::remove_abandoned(&path);
            let built_at = now_ns();
            let stop = || shared.stop.load(Ordering::SeqCst);
            let written = match build::build(&shared.root, listed, &path, built_at, &stop) {
                Ok(written) => written,
                Err(_) if stop() => return,
                Err(err) => return shared.unavailable(format!("the index could not be written: {err}")),
            };
            match Segment::open(written.tmp_path()) {
                Ok(segment) => {
                    unsynced = Some(written);
                    (segment, None)
                }
                Err(err) => return shared.unavailable(format!("the index could not be read back: {err}")),
            }
        }
    };
    let built_here = unsynced.is_some();
    let compare = {
        let mut inner = shared.inner.write();
        inner.dead = vec![0; segment.len().div_ceil(64)];
        inner.open_files = Arc::new(OpenFiles::within_limit());
        inner.base = Some(Arc::new(segment));
        // An index just built read every file after the notifications started, so each change
        // since is marked changed, unless notifications were lost meanwhile.
        let current = built_here && inner.lost_generation == 0 && inner.phase == Phase::Building;
        if current {
            inner.phase = Phase::Ready;
        }
        !current
    };
    if let Some(written) = unsynced
        && let Err(err) = written.persist()
    {
        tracing::warn!("the search index could not be saved for the next start: {err}");
    }
    // An index from an earlier run, or one whose notifications were lost during its build, may
    // differ from the tree: compare.
    if compare {
        match listed {
            // The listing was taken before any notification could be lost.
            Some(files) => recheck(shared, 0, files),
            None => walk_and_recheck(shared),
        }
    }
    // The build's batches and the listing freed several MiB, which glibc would otherwise keep.
    crate::allocator::release_freed_memory();
    let mut extractor = Extractor::new(&shared.root);
    while !shared.stop.load(Ordering::SeqCst) {
        let recheck_now = {
            let mut inner = shared.inner.write();
            // Still building: notifications were lost during the first build or re-check.
            std::mem::take(&mut inner.recheck_wanted) && matches!(inner.phase, Phase::Lost(_) | Phase::Building)
        };
        if recheck_now {
            walk_and_recheck(shared);
            continue;
        }
        if matches!(shared.inner.read().phase, Phase::Unavailable(_)) {
            return;
        }
        let round: Vec<(String, u64)> = shared
            .inner
            .read()
            .dirty
            .iter()
            .take(ROUND)
            .map(|(path, generation)| (path.clone(), *generation))
            .collect();
        if round.is_empty() {
            let mut work = shared.work.lock();
            if !*work {
                shared.work_ready.wait_for(&mut work, Duration::from_secs(5));
            }
            *work = false;
            continue;
        }
        // Let a burst of notifications for the same files settle.
        std::thread::sleep(Duration::from_millis(10));
        for (rel, generation) in round {
            reindex(shared, &mut extractor, &rel, generation);
        }
    }
}

/// Reads what is at `rel` now and replaces the index's entries at and below it.
fn reindex(shared: &Shared, extractor: &mut Extractor, rel: &str, generation: u64) {
    let abs = shared.root.join(rel);
    let in_dot_dir = rel.split('/').rev().skip(1).any(|c| c.starts_with('.'));
    let files = match std::fs::symlink_metadata(&abs) {
        Ok(meta) if meta.is_dir() && !in_dot_dir && !rel.rsplit('/').next().is_some_and(|n| n.starts_with('.')) => {
            match build::walk(&shared.root, &abs) {
                Ok(files) => files,
                Err(reason) => return shared.unavailable(reason),
            }
        }
        Ok(meta) if meta.is_file() && !in_dot_dir => {
            let name = rel.rsplit('/').next().unwrap_or(rel);
            if crate::workspace::write::is_temp_name(name) { Vec::new() } else { vec![rel.to_owned()] }
        }
        _ => Vec::new(),
    };
    let mut entries = Vec::with_capacity(files.len());
    for file in files {
        let read_at_ns = now_ns();
        let Some((meta, state)) = extractor.read(&shared.root.join(&file)) else { continue };
        let mut trigrams = match state {
            FileState::Text => std::mem::take(&mut extractor.trigrams),
            _ => Vec::new(),
        };
        trigrams.sort_unstable();
        entries.push((file, DeltaFile { meta, state, trigrams, read_at_ns }));
    }
    let mut inner = shared.inner.write();
    let inner = &mut *inner;
    if let Some(base) = inner.base.clone() {
        let mut kill = |id: usize| {
            if let Some(word) = inner.dead.get_mut(id / 64) {
                *word |= 1 << (id % 64);
            }
            inner.open_files.forget(id);
        };
        let exact = base.lower_bound(rel);
        if exact < base.len() && base.path(exact) == rel {
            kill(exact);
        }
        let mut id = base.lower_bound(&format!("{rel}/"));
        while id < base.len() && is_under(base.path(id), rel) {
            kill(id);
            id += 1;
        }
    }
    inner.delta.remove(rel);
    let below: Vec<String> = inner
        .delta
        .range(format!("{rel}/")..)
        .take_while(|(path, _)| is_under(path, rel))
        .map(|(path, _)| path.clone())
        .collect();
    for path in below {
        inner.delta.remove(&path);
    }
    inner.delta.extend(entries);
    if inner.dirty.get(rel) == Some(&generation) {
        inner.dirty.remove(rel);
    }
}

/// Walks the tree (after the notifications lost so far) and re-checks the index against it.
fn walk_and_recheck(shared: &Shared) {
    let lost_before = shared.inner.read().lost_generation;
    match build::walk(&shared.root, &shared.root) {
        Ok(files) => recheck(shared, lost_before, files),
        Err(reason) => shared.unavailable(reason),
    }
}

/// Compares the tree's `files` (sorted, listed after `lost_before` notifications had been lost)
/// with the index and marks every difference changed; the index is ready after it unless
/// notifications were lost since the listing.
fn recheck(shared: &Shared, lost_before: u64, files: Vec<String>) {
    // A copy of what the index knows, so that the comparison (a stat of every file) holds no lock:
    // a search never waits for it.
    let (base, dead, delta) = {
        let inner = shared.inner.read();
        let delta: Vec<(String, FileMeta, i64)> =
            inner.delta.iter().map(|(path, file)| (path.clone(), file.meta, file.read_at_ns)).collect();
        (inner.base.clone(), inner.dead.clone(), delta)
    };
    // Both sorted by path, as the listing is: joined in one pass, with no table of the tree.
    let in_base = base.iter().flat_map(|base| {
        let live = (0..base.len()).filter(|id| !segment::has(&dead, *id));
        live.map(|id| (base.path(id), base.meta(id), base.built_at_ns))
    });
    let in_delta = delta.iter().map(|(path, meta, read_at)| (path.as_str(), *meta, *read_at));
    let now = |file: &str| std::fs::symlink_metadata(shared.root.join(file)).ok().map(|m| FileMeta::of(&m));
    let changed = differences(&files, merge_known(in_base, in_delta), now);
    for path in changed {
        shared.mark_dirty(path);
    }
    let mut inner = shared.inner.write();
    if inner.lost_generation == lost_before && !matches!(inner.phase, Phase::Unavailable(_)) {
        inner.phase = Phase::Ready;
    }
}

/// What the index knows of a file: its path, its metadata when read, and when it was read.
type Known<'a> = (&'a str, FileMeta, i64);

/// Two lists sorted by path, merged in order; `later` wins where both hold a path.
fn merge_known<'a>(
    earlier: impl Iterator<Item = Known<'a>>,
    later: impl Iterator<Item = Known<'a>>,
) -> impl Iterator<Item = Known<'a>> {
    let (mut earlier, mut later) = (earlier.peekable(), later.peekable());
    std::iter::from_fn(move || match (earlier.peek(), later.peek()) {
        (Some(a), Some(b)) => match a.0.cmp(b.0) {
            std::cmp::Ordering::Less => earlier.next(),
            std::cmp::Ordering::Equal => {
                earlier.next();
                later.next()
            }
            std::cmp::Ordering::Greater => later.next(),
        },
        (Some(_), None) => earlier.next(),
        (None, _) => later.next(),
    })
}

/// The paths where the listing (`files`) and what the index knows (`known`), both sorted by path,
/// differ: listed but not known, known but not listed, or known with other metadata than `now`
/// gives, or modified too close to when it was read.
fn differences<'a>(
    files: &[String],
    known: impl Iterator<Item = Known<'a>>,
    now: impl Fn(&str) -> Option<FileMeta>,
) -> Vec<String> {
    let mut known = known.peekable();
    let mut changed = Vec::new();
    for file in files {
        // Known paths before this one are listed no more.
        while let Some((gone, ..)) = known.next_if(|(path, ..)| *path < file.as_str()) {
            changed.push(gone.to_owned());
        }
        let same = match (known.next_if(|(path, ..)| *path == file.as_str()), now(file)) {
            (Some((_, meta, read_at)), Some(now)) => meta == now && now.mtime_ns < read_at - RACY_NS,
            _ => false,
        };
        if !same {
            changed.push(file.clone());
        }
    }
    changed.extend(known.map(|(gone, ..)| gone.to_owned()));
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(size: u64) -> FileMeta {
        FileMeta { size, mtime_ns: 1_000, ino: 7 }
    }

    #[test]
    fn the_listing_and_the_index_are_joined_by_path() {
        let read_at = 10 * RACY_NS;
        let base = [("a", meta(1), read_at), ("b", meta(2), read_at), ("d", meta(4), read_at)];
        let delta = [("b", meta(20), read_at), ("c", meta(3), read_at)];
        let known: Vec<Known<'_>> = merge_known(base.into_iter(), delta.into_iter()).collect();
        assert_eq!(known, [base[0], delta[0], delta[1], base[2]], "the later list wins, in path order");

        let files: Vec<String> = ["a", "b", "bb", "d", "e"].map(str::to_owned).to_vec();
        // "a" as indexed; "b" grew since; "bb" and "e" are new; "c" is gone; "d" cannot be read.
        let now = |file: &str| match file {
            "a" => Some(meta(1)),
            "b" => Some(meta(21)),
            "d" => None,
            _ => Some(meta(9)),
        };
        let changed = differences(&files, known.iter().copied(), now);
        assert_eq!(changed, ["b", "bb", "c", "d", "e"]);
        // Modified within RACY_NS of its read: it may have changed after, unseen.
        let racy = [("a", meta(1), 1_000 + RACY_NS)];
        assert_eq!(differences(&files[..1], racy.into_iter(), now), ["a"]);
        assert_eq!(differences(&[], known.into_iter(), now), ["a", "b", "c", "d"]);
    }
}
