//! The one lock that serializes configure, build, test and direct test runs, and the operation that
//! holds it, so that a call queued behind another says what it waits for.
//!
//! Architecture invariant: the name is the holder's tool (`cmake_build`, …); it may name the
//! previous holder for the instant between a hand-over and the new holder's update, never a
//! call that did not hold the lock.

use tokio::sync::{Mutex, MutexGuard};

pub(super) struct Serial {
    lock: Mutex<()>,
    holder: parking_lot::Mutex<&'static str>,
}

impl Serial {
    pub(super) fn new() -> Serial {
        Serial { lock: Mutex::new(()), holder: parking_lot::Mutex::new("") }
    }

    /// Takes the lock for `operation`; when another call holds it, `waiting` gets the message
    /// saying what this one waits for before it waits.
    pub(super) async fn acquire(&self, operation: &'static str, waiting: impl FnOnce(&str)) -> MutexGuard<'_, ()> {
        let guard = match self.lock.try_lock() {
            Ok(guard) => guard,
            Err(_) => {
                let holder = *self.holder.lock();
                waiting(&format!("Waiting for the running {holder} to finish"));
                self.lock.lock().await
            }
        };
        *self.holder.lock() = operation;
        guard
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_queued_call_says_what_it_waits_for() {
        let serial = std::sync::Arc::new(Serial::new());
        let mut said = Vec::new();
        let held = serial.acquire("cmake_build", |m| said.push(m.to_owned())).await;
        assert!(said.is_empty(), "nothing to wait for");
        let queued = {
            let serial = serial.clone();
            tokio::spawn(async move {
                let mut said = Vec::new();
                drop(serial.acquire("cmake_test", |m| said.push(m.to_owned())).await);
                said
            })
        };
        tokio::task::yield_now().await;
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        drop(held);
        assert_eq!(queued.await.unwrap(), ["Waiting for the running cmake_build to finish"]);
    }
}
