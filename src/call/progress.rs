//! Throttled progress reporting for one invocation.
//!
//! Architecture invariant: the first update is delivered at once; later ones at most once per
//! interval; updates inside the interval are dropped, never queued; delivered values strictly
//! increase. An interval of zero disables throttling.

use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// One progress update as services report it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressUpdate {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: String,
    /// When the throttle admitted the update (the instant the interval is measured from).
    pub at: Instant,
}

/// Where delivered updates go (an MCP peer, the admin history, a test).
pub trait ProgressSink: Send + Sync {
    fn deliver(&self, update: ProgressUpdate);
}

/// The per-invocation reporter that services call. Cheap to clone; clones share the throttle.
#[derive(Clone, Default)]
pub struct Progress {
    inner: Option<Arc<Inner>>,
}

struct Inner {
    throttle: Mutex<Throttle>,
    sinks: Vec<Arc<dyn ProgressSink>>,
}

impl Progress {
    /// A reporter that delivers nothing (no progress token, no observer).
    pub fn disabled() -> Progress {
        Progress { inner: None }
    }

    /// A reporter delivering to `sinks`, at most once per `interval` after the first update.
    pub fn new(interval: Duration, sinks: Vec<Arc<dyn ProgressSink>>) -> Progress {
        if sinks.is_empty() {
            return Progress::disabled();
        }
        Progress { inner: Some(Arc::new(Inner { throttle: Mutex::new(Throttle::new(interval)), sinks })) }
    }

    pub fn is_enabled(&self) -> bool {
        self.inner.is_some()
    }

    /// Reports `progress` (of `total`, when known). Cheap when disabled or throttled.
    pub fn report(&self, progress: f64, total: Option<f64>, message: impl Into<String>) {
        self.report_with(progress, total, || message.into());
    }

    /// Reports a lazily built message; the closure runs only when the update will be delivered.
    pub fn report_with(&self, progress: f64, total: Option<f64>, message: impl FnOnce() -> String) {
        let Some(inner) = &self.inner else { return };
        let now = Instant::now();
        // Admitted and delivered under one lock, so that reports from several threads reach the
        // sinks in the order they were admitted: with increasing values.
        let mut throttle = inner.throttle.lock();
        if !throttle.admit(progress, now) {
            return;
        }
        let update = ProgressUpdate { progress, total, message: message(), at: now };
        for sink in &inner.sinks {
            sink.deliver(update.clone());
        }
    }
}

/// The pure admission rule, separated for testing.
#[derive(Debug)]
struct Throttle {
    interval: Duration,
    last_sent_at: Option<Instant>,
    last_value: Option<f64>,
}

impl Throttle {
    fn new(interval: Duration) -> Throttle {
        Throttle { interval, last_sent_at: None, last_value: None }
    }

    fn admit(&mut self, value: f64, now: Instant) -> bool {
        if self.last_value.is_some_and(|last| value <= last) {
            return false;
        }
        if let Some(at) = self.last_sent_at
            && !self.interval.is_zero()
            && now.duration_since(at) < self.interval
        {
            return false;
        }
        self.last_sent_at = Some(now);
        self.last_value = Some(value);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_update_passes_then_interval_applies() {
        let mut t = Throttle::new(Duration::from_millis(200));
        let t0 = Instant::now();
        assert!(t.admit(0.0, t0));
        assert!(!t.admit(1.0, t0 + Duration::from_millis(50)));
        assert!(!t.admit(2.0, t0 + Duration::from_millis(199)));
        assert!(t.admit(3.0, t0 + Duration::from_millis(200)));
        assert!(!t.admit(4.0, t0 + Duration::from_millis(300)));
    }

    #[test]
    fn zero_interval_disables_throttling() {
        let mut t = Throttle::new(Duration::ZERO);
        let t0 = Instant::now();
        assert!((0..10).all(|i| t.admit(f64::from(i), t0)));
    }

    #[test]
    fn delivered_values_strictly_increase() {
        let mut t = Throttle::new(Duration::ZERO);
        let t0 = Instant::now();
        assert!(t.admit(1.0, t0));
        assert!(!t.admit(1.0, t0));
        assert!(!t.admit(0.5, t0));
        assert!(t.admit(2.0, t0));
    }

    #[test]
    fn disabled_reporter_never_builds_messages() {
        Progress::disabled().report_with(1.0, None, || panic!("message built for a disabled reporter"));
    }

    #[test]
    fn reporter_delivers_to_every_sink() {
        struct Collect(Mutex<Vec<ProgressUpdate>>);
        impl ProgressSink for Collect {
            fn deliver(&self, update: ProgressUpdate) {
                self.0.lock().push(update);
            }
        }
        let a = Arc::new(Collect(Mutex::new(Vec::new())));
        let b = Arc::new(Collect(Mutex::new(Vec::new())));
        let p = Progress::new(Duration::ZERO, vec![a.clone(), b.clone()]);
        p.report(0.0, Some(1.0), "start");
        p.report(1.0, Some(1.0), "done");
        assert_eq!(a.0.lock().len(), 2);
        let last = b.0.lock()[1].clone();
        assert_eq!((last.progress, last.total, last.message.as_str()), (1.0, Some(1.0), "done"));
    }
}
