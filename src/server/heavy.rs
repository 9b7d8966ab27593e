//! The bound on concurrent CPU-heavy calls (whole-tree searches, listings, file finds and large
//! reads), so that many of them in flight cannot starve the light calls (ping, file info) of CPU.
//!
//! Each heavy call holds a slot while it runs; beyond the slots, calls wait in arrival order,
//! report that they wait as progress, and stay cancellable while they wait. Light calls never
//! wait here.
//!
//! Architecture invariant: at most [`HeavyWork::slots`] heavy calls run at once; a waiting call
//! that is cancelled leaves the queue at once and never runs.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::model::JsonObject;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::allocator::release_freed_memory;
use crate::call::Call;

/// Larger explicit line ranges make `workspace_read_file` a heavy call.
pub const HEAVY_READ_LINES: u64 = 10_000;

/// Whether a call of `tool` with `arguments` is CPU-heavy.
pub fn is_heavy(tool: &str, arguments: &JsonObject) -> bool {
    match tool {
        "workspace_text_search" | "workspace_find_files" | "workspace_list" => true,
        "workspace_read_file" => {
            let line = |key: &str| arguments.get(key).and_then(serde_json::Value::as_u64);
            match line("end_line") {
                Some(end) => end.saturating_sub(line("start_line").unwrap_or(1)) >= HEAVY_READ_LINES,
                None => false,
            }
        }
        _ => false,
    }
}

/// What the limiter has seen, for tests and benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeavyStats {
    pub slots: usize,
    pub running: usize,
    /// The most heavy calls that ever ran at once.
    pub peak_running: usize,
    pub waiting: usize,
    /// Slots handed out so far.
    pub granted: usize,
}

/// The slots for heavy calls.
pub struct HeavyWork {
    semaphore: Arc<Semaphore>,
    slots: usize,
    running: Arc<AtomicUsize>,
    peak_running: AtomicUsize,
    waiting: AtomicUsize,
    granted: Arc<AtomicUsize>,
}

/// A held slot; dropping it frees the slot.
pub struct HeavySlot {
    _permit: OwnedSemaphorePermit,
    running: Arc<AtomicUsize>,
    /// Heavy calls started so far (a trim is due only if none started since the last one ended).
    started: Arc<AtomicUsize>,
}

/// Quiet time after the last heavy call before its freed memory goes back to the system: a burst
/// of calls (an agent's searches one after another) keeps its pages, which a trim after each call
/// would make the next one fault in again (1.5 ms more for a search of DuckDB).
const TRIM_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

impl Drop for HeavySlot {
    fn drop(&mut self) {
        if self.running.fetch_sub(1, Ordering::SeqCst) == 1 {
            // The last heavy call is done: what its threads freed goes back to the system once no
            // heavy call came for `TRIM_AFTER`, on the blocking pool, off the path of any reply.
            let Ok(runtime) = tokio::runtime::Handle::try_current() else { return release_freed_memory() };
            let (running, started) = (self.running.clone(), self.started.clone());
            let started_then = started.load(Ordering::SeqCst);
            runtime.spawn(async move {
                tokio::time::sleep(TRIM_AFTER).await;
                if running.load(Ordering::SeqCst) == 0 && started.load(Ordering::SeqCst) == started_then {
                    drop(tokio::task::spawn_blocking(release_freed_memory));
                }
            });
        }
    }
}

impl Default for HeavyWork {
    /// One slot per core: each heavy call already uses every core (the parallel walkers), so more
    /// slots would only add runnable threads that delay the light calls.
    fn default() -> HeavyWork {
        HeavyWork::new(std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get))
    }
}

impl HeavyWork {
    pub fn new(slots: usize) -> HeavyWork {
        let slots = slots.max(1);
        HeavyWork {
            semaphore: Arc::new(Semaphore::new(slots)),
            slots,
            running: Arc::default(),
            peak_running: AtomicUsize::new(0),
            waiting: AtomicUsize::new(0),
            granted: Arc::default(),
        }
    }

    pub fn slots(&self) -> usize {
        self.slots
    }

    pub fn stats(&self) -> HeavyStats {
        HeavyStats {
            slots: self.slots,
            running: self.running.load(Ordering::SeqCst),
            peak_running: self.peak_running.load(Ordering::SeqCst),
            waiting: self.waiting.load(Ordering::SeqCst),
            granted: self.granted.load(Ordering::SeqCst),
        }
    }

    /// Waits for a free slot; `None` when the call is cancelled first.
    pub async fn acquire(&self, call: &Call) -> Option<HeavySlot> {
        let permit = match self.semaphore.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                self.waiting.fetch_add(1, Ordering::SeqCst);
                call.progress.report(0.0, None, format!("Waiting for one of {} heavy calls to finish", self.slots));
                let permit = tokio::select! {
                    permit = self.semaphore.clone().acquire_owned() => permit.ok(),
                    () = call.cancel.cancelled() => None,
                };
                self.waiting.fetch_sub(1, Ordering::SeqCst);
                permit?
            }
        };
        self.granted.fetch_add(1, Ordering::SeqCst);
        let running = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak_running.fetch_max(running, Ordering::SeqCst);
        Some(HeavySlot { _permit: permit, running: self.running.clone(), started: self.granted.clone() })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn args(value: serde_json::Value) -> JsonObject {
        value.as_object().cloned().expect("object")
    }

    #[test]
    fn searches_listings_and_long_reads_are_heavy() {
        assert!(is_heavy("workspace_text_search", &JsonObject::new()));
        assert!(is_heavy("workspace_list", &args(json!({ "depth": 1 }))));
        assert!(!is_heavy("workspace_file_info", &JsonObject::new()));
        assert!(!is_heavy("workspace_read_file", &args(json!({ "path": "a" }))));
        assert!(!is_heavy("workspace_read_file", &args(json!({ "path": "a", "start_line": 5, "end_line": 900 }))));
        assert!(is_heavy("workspace_read_file", &args(json!({ "path": "a", "end_line": 200_000 }))));
    }

    #[tokio::test]
    async fn waiting_calls_queue_and_cancelled_ones_leave() {
        let work = HeavyWork::new(1);
        let call = Call::detached();
        let held = work.acquire(&call).await.expect("a free slot");
        let waiting = Call::detached();
        let cancel = waiting.cancel.clone();
        let queued = tokio::spawn(async move {
            let work = work;
            let slot = work.acquire(&waiting).await;
            (slot.is_none(), work.stats())
        });
        tokio::task::yield_now().await;
        cancel.cancel();
        let (cancelled, stats) = queued.await.expect("joins");
        assert!(cancelled);
        assert_eq!((stats.running, stats.waiting, stats.peak_running, stats.granted), (1, 0, 1, 1));
        drop(held);
    }
}
