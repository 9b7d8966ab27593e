//! Killing a whole process tree, including descendants that left the process group.
//!
//! Every child starts in its own process group (Unix) or job object (Windows) through `process-wrap`,
//! and carries a per-launch marker in its environment ([`TREE_MARKER`]), which its descendants inherit.
//! On Linux the server and every leader are child subreapers (`prctl(PR_SET_CHILD_SUBREAPER)`, set
//! in the leader between its creation and its exec, `leader.rs`), so a descendant orphaned by a dying parent (for example a
//! daemon that called `setsid`, double-forked and cleared its environment) is re-parented to its
//! tree's leader while the leader lives, and to the server afterwards, never to init. Killing a tree
//! then means: stop the process group (SIGSTOP: the leader stays alive, so it keeps adopting
//! orphans, and nothing in the group forks any more), SIGKILL every descendant of the leader (found
//! through `/proc` parent links) and every process below the server that carries the tree's marker,
//! repeated until a round finds nothing new; then SIGKILL the leader and its group. Orphans
//! re-parented to the server are reaped here, because no `tokio::process::Child` owns them.
//!
//! A process that reached the server after its leader exited and carries no marker (it cleared its
//! environment) belongs to no tree any more: a *stray*. When the whole process is a server
//! ([`own_every_descendant`], set by the binary, never by the in-process test harness, whose process
//! has children of its own), every kill also kills the strays: direct children of the server that are
//! neither running leaders nor [`detached`](super::detached) children, with everything below them.
//!
//! This is the approach of Jenkins' process-tree killer (an environment cookie) combined with
//! watchexec's and nextest's process groups; the code is ours.
//!
//! Architecture invariant: only pids found below the server (by parent links) are signalled or
//! reaped, and a pid is reaped only while it is a zombie child of the server that is not a leader
//! owned by a `tokio::process::Child`.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;

/// The environment variable carrying a launch's marker.
pub(crate) const TREE_MARKER: &str = "FORGEMCP_PROCESS_TREE";

/// Pids of running leaders: children owned by a `tokio::process::Child`, which must never be reaped
/// by anyone else. Spawning holds the lock until the new leader is inserted.
#[derive(Clone, Default)]
pub(crate) struct Leaders(Arc<Mutex<HashSet<u32>>>);

impl Leaders {
    pub fn lock(&self) -> parking_lot::MutexGuard<'_, HashSet<u32>> {
        self.0.lock()
    }
}

/// Makes the server a child subreaper (Linux), so orphaned descendants stay below it.
pub(crate) fn become_subreaper() {
    #[cfg(target_os = "linux")]
    if let Err(err) = nix::sys::prctl::set_child_subreaper(true) {
        tracing::warn!("cannot become a child subreaper; detached grandchildren may survive a kill: {err}");
    }
}

/// One launched tree. On Windows the job object, terminated through the child wrapper, is the whole
/// tree, so neither field exists there.
#[derive(Debug, Clone)]
pub(crate) struct Tree {
    /// The leader's pid: its process group is signalled, its descendants are walked (Unix).
    #[cfg(unix)]
    pub leader: u32,
    /// The marker the tree's processes inherit, found in `/proc/<pid>/environ` (Linux).
    #[cfg(target_os = "linux")]
    pub marker: String,
}

impl Tree {
    /// Kills every process of the tree that can be found and returns the pids found (without the
    /// leader), so they can be reaped once dead. Synchronous and quick: usable from `Drop`. The
    /// subtrees of the other running `leaders` are not searched: an orphan is only ever re-parented
    /// to an ancestor, and another tree's leader is no ancestor of this tree's processes.
    pub fn kill(&self, leaders: &Leaders) -> Vec<u32> {
        #[cfg(all(unix, not(target_os = "linux")))]
        {
            use nix::sys::signal::{Signal, killpg};
            use nix::unistd::Pid;
            let _ = killpg(Pid::from_raw(self.leader as i32), Signal::SIGKILL);
        }
        #[cfg(target_os = "linux")]
        {
            use nix::sys::signal::{Signal, kill, killpg};
            use nix::unistd::Pid;
            let leader = Pid::from_raw(self.leader as i32);
            // Freeze the group first: nothing in it forks any more, and the leader, a subreaper,
            // stays alive to adopt whatever the kills below orphan.
            let _ = killpg(leader, Signal::SIGSTOP);
            let others: HashSet<u32> = leaders.lock().iter().copied().filter(|&pid| pid != self.leader).collect();
            let mut killed: Vec<u32> = Vec::new();
            let kill_round = |killed: &mut Vec<u32>, spare_leader: bool| {
                let mut signalled = false;
                for (pid, zombie) in linux::members(self, &others) {
                    let spared = zombie || (spare_leader && pid == self.leader) || killed.contains(&pid);
                    if !spared {
                        let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
                        signalled = true;
                    }
                    if !killed.contains(&pid) {
                        killed.push(pid);
                    }
                }
                signalled
            };
            // Bounded: a tree forking faster than it is killed is stopped by the group kill below.
            for _round in 0..16 {
                if !kill_round(&mut killed, true) {
                    break;
                }
            }
            let _ = killpg(leader, Signal::SIGKILL);
            let _ = kill(leader, Signal::SIGKILL);
            // Found nothing at all (the common end: the leader exited, was reaped, and left nothing
            // behind): nothing was killed, so nothing was orphaned for another round to find.
            let found_any = !killed.is_empty();
            for _round in 0..4 {
                if !found_any || !kill_round(&mut killed, false) {
                    break;
                }
            }
            killed.extend(kill_strays(leaders));
            killed.retain(|&pid| pid != self.leader);
            killed.sort_unstable();
            killed.dedup();
            killed
        }
        #[cfg(not(target_os = "linux"))]
        {
            // Elsewhere the process group (Unix) or the job object (Windows, terminated through the
            // child wrapper) is the whole tree.
            let _ = leaders;
            Vec::new()
        }
    }
}

/// Whether every descendant of this process that is not a leader or a detached child is a stray.
static OWNS_EVERY_DESCENDANT: AtomicBool = AtomicBool::new(false);

/// Pids of the [`detached`](super::detached) children (the admin Hub, the browser opener): never
/// strays. Spawning one holds the lock until its pid is inserted.
static DETACHED: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());

/// Declares that every process below this one belongs to the process service or is detached, so
/// kills also end the strays (see the module docs). Called once by the binary's composition root.
pub fn own_every_descendant() {
    OWNS_EVERY_DESCENDANT.store(true, Ordering::SeqCst);
}

/// Holds the detached registry while a detached child is spawned; `insert` the new pid before
/// dropping it.
pub(crate) fn detached_children() -> parking_lot::MutexGuard<'static, BTreeSet<u32>> {
    DETACHED.lock()
}

/// Kills the strays (see the module docs) when this process owns every descendant; returns the
/// pids signalled so they can be reaped.
pub(crate) fn kill_strays(leaders: &Leaders) -> Vec<u32> {
    #[cfg(target_os = "linux")]
    if OWNS_EVERY_DESCENDANT.load(Ordering::SeqCst) {
        use nix::sys::signal::{Signal, kill};
        use nix::unistd::Pid;
        // Both locks while deciding: a leader or detached child being spawned is not yet listed.
        let leaders = leaders.lock();
        let detached = DETACHED.lock();
        let me = std::process::id();
        let skip: HashSet<u32> = leaders.iter().chain(detached.iter()).copied().collect();
        let children = linux::children_map(me, &skip);
        let strays = linux::descendants(&children, me, &skip);
        for &pid in &strays {
            let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
        }
        return strays;
    }
    let _ = leaders;
    Vec::new()
}

/// Reaps those of `pids` that are zombie children of the server and not running leaders. Returns the
/// pids still pending (alive, or not yet re-parented).
pub(crate) fn reap(pids: &[u32], leaders: &Leaders) -> Vec<u32> {
    #[cfg(target_os = "linux")]
    {
        use nix::sys::wait::{WaitPidFlag, waitpid};
        use nix::unistd::Pid;
        let me = std::process::id();
        let leaders = leaders.lock();
        let mut pending = Vec::new();
        for &pid in pids {
            match linux::stat(pid) {
                None => {}
                Some(stat) if stat.state == 'Z' && stat.ppid == me && !leaders.contains(&pid) => {
                    let _ = waitpid(Pid::from_raw(pid as i32), Some(WaitPidFlag::WNOHANG));
                }
                // Alive, or a zombie whose dying parent will reap it or hand it to the server.
                Some(_) => pending.push(pid),
            }
        }
        pending
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (pids, leaders);
        Vec::new()
    }
}

/// Whether `pid` exists and is not a zombie (Linux; elsewhere always false).
pub fn is_alive(pid: u32) -> bool {
    #[cfg(target_os = "linux")]
    {
        linux::stat(pid).is_some_and(|stat| stat.state != 'Z')
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        false
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::{HashMap, HashSet};

    use super::{TREE_MARKER, Tree};

    pub(super) struct Stat {
        pub state: char,
        pub ppid: u32,
        pub pgrp: u32,
    }

    /// Parses `/proc/<pid>/stat`; the command name may contain spaces and parentheses, so fields are
    /// read after the last `)`.
    pub(super) fn stat(pid: u32) -> Option<Stat> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let rest = &text[text.rfind(')')? + 1..];
        let mut fields = rest.split_whitespace();
        let state = fields.next()?.chars().next()?;
        let ppid = fields.next()?.parse().ok()?;
        let pgrp = fields.next()?.parse().ok()?;
        Some(Stat { state, ppid, pgrp })
    }

    /// Parent → children links of the processes below `root`: from each task's `children` file when
    /// the kernel provides them (a few reads for the server's own subtree), otherwise from a scan of
    /// every process's `stat`.
    pub(super) fn children_map(root: u32, skip: &HashSet<u32>) -> HashMap<u32, Vec<u32>> {
        children_below(root, skip).unwrap_or_else(scan_all)
    }

    /// The links below `root` read from `/proc/<pid>/task/<tid>/children` (children are listed per
    /// thread), not looking below the pids in `skip`; `None` without those files (a kernel built
    /// without `CONFIG_PROC_CHILDREN`).
    pub(super) fn children_below(root: u32, skip: &HashSet<u32>) -> Option<HashMap<u32, Vec<u32>>> {
        if !std::path::Path::new("/proc/thread-self/children").exists() {
            return None;
        }
        let mut res: HashMap<u32, Vec<u32>> = HashMap::new();
        let mut stack = vec![root];
        let mut seen = HashSet::new();
        while let Some(pid) = stack.pop() {
            if !seen.insert(pid) || skip.contains(&pid) {
                continue;
            }
            let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { continue };
            let mut children = Vec::new();
            for task in tasks.flatten() {
                if let Ok(text) = std::fs::read_to_string(task.path().join("children")) {
                    children.extend(text.split_whitespace().filter_map(|child| child.parse::<u32>().ok()));
                }
            }
            if !children.is_empty() {
                stack.extend(&children);
                res.insert(pid, children);
            }
        }
        Some(res)
    }

    pub(super) fn scan_all() -> HashMap<u32, Vec<u32>> {
        let mut res: HashMap<u32, Vec<u32>> = HashMap::new();
        let Ok(dir) = std::fs::read_dir("/proc") else { return res };
        for entry in dir.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|name| name.parse::<u32>().ok()) else { continue };
            if let Some(stat) = stat(pid) {
                res.entry(stat.ppid).or_default().push(pid);
            }
        }
        res
    }

    /// The processes below `root`, leaving out the pids in `skip` and everything below them.
    pub(super) fn descendants(children: &HashMap<u32, Vec<u32>>, root: u32, skip: &HashSet<u32>) -> Vec<u32> {
        let mut res = Vec::new();
        let mut stack = vec![root];
        let mut seen = HashSet::new();
        while let Some(pid) = stack.pop() {
            for &child in children.get(&pid).into_iter().flatten() {
                if !skip.contains(&child) && seen.insert(child) {
                    res.push(child);
                    stack.push(child);
                }
            }
        }
        res
    }

    fn carries_marker(pid: u32, marker: &str) -> bool {
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else { return false };
        let wanted = format!("{TREE_MARKER}={marker}");
        environ.split(|&b| b == 0).any(|var| var == wanted.as_bytes())
    }

    /// Processes of the tree below the server: the leader and its descendants, members of the
    /// leader's process group, and every process carrying the tree's marker, none of them below
    /// the `others` (other trees' leaders). Zombies are included (they must be reaped) but cannot
    /// be recognised by their marker any more, since their environment is gone.
    pub(super) fn members(tree: &Tree, others: &HashSet<u32>) -> Vec<(u32, bool)> {
        let me = std::process::id();
        let children = children_map(me, others);
        let mut res: HashSet<u32> = HashSet::new();
        if stat(tree.leader).is_some_and(|s| s.ppid == me) {
            res.insert(tree.leader);
            res.extend(descendants(&children, tree.leader, others));
        }
        for pid in descendants(&children, me, others) {
            if res.contains(&pid) {
                continue;
            }
            if stat(pid).is_some_and(|s| s.pgrp == tree.leader) || carries_marker(pid, &tree.marker) {
                res.insert(pid);
            }
        }
        res.into_iter().filter_map(|pid| Some((pid, stat(pid)?.state == 'Z'))).collect()
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::collections::{BTreeSet, HashSet};

    use super::linux::{children_below, descendants, scan_all};

    #[test]
    fn the_children_files_find_what_a_full_scan_finds() {
        #[expect(clippy::disallowed_methods, reason = "a raw process tree to look for")]
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 30 & sleep 30 & wait"])
            .stdin(std::process::Stdio::null())
            .spawn()
            .expect("sh starts");
        let (me, sh) = (std::process::id(), child.id());
        let none = HashSet::new();
        let below_sh = |map| descendants(&map, sh, &none).into_iter().collect::<BTreeSet<u32>>();
        let mut found = BTreeSet::new();
        for _ in 0..200 {
            found = below_sh(children_below(me, &none).expect("this kernel lists children"));
            if found.len() == 2 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let scanned = below_sh(scan_all());
        let listed = descendants(&children_below(me, &none).expect("children files"), me, &none);
        let skipped =
            descendants(&children_below(me, &HashSet::from([sh])).expect("children files"), me, &HashSet::from([sh]));
        // The sleeps first, so the shell's `wait` reaps them and then exits.
        for pid in &found {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(*pid as i32), nix::sys::signal::Signal::SIGKILL);
        }
        child.wait().expect("reap sh");
        assert_eq!(found.len(), 2, "the shell's two sleeps: {found:?}");
        assert_eq!(found, scanned, "the same sleeps as a full scan");
        assert!(listed.contains(&sh), "the shell is below the test process");
        assert!(!skipped.iter().any(|pid| *pid == sh || found.contains(pid)), "a skipped leader's subtree is left out");
    }
}
