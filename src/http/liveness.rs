//! What `/healthz` answers: the owner loop's heartbeat and the
//! supervisor's verdict, shared without a lock on the beat's path.
//!
//! Contract: the owner calls [`Liveness::beat`] on every turn of its loop
//! (it turns at least once a second when idle); the supervisor calls
//! [`Liveness::fail`] when an essential task ended. [`Liveness::check`]
//! is `Err` with the reason once either holds: no beat for longer than the
//! bound (a wedged owner, a deadlocked task), or a recorded failure. A
//! failure is final: the process is about to exit.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

// tokio's clock, not std's: a paused-clock test reaches the bound.
use tokio::time::Instant;

/// The owner's heartbeat and the supervisor's verdict (cheap to clone).
#[derive(Debug, Clone)]
pub struct Liveness {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    epoch: Instant,
    /// Milliseconds since `epoch` of the last beat.
    last_beat_ms: AtomicU64,
    /// How long without a beat is a failure.
    bound: Duration,
    /// Why the daemon is failing (set once, by the supervisor).
    failed: Mutex<Option<String>>,
}

impl Liveness {
    /// A heartbeat that counts as alive now and fails after `bound`
    /// without a beat.
    pub fn new(bound: Duration) -> Liveness {
        Liveness {
            inner: Arc::new(Inner {
                epoch: Instant::now(),
                last_beat_ms: AtomicU64::new(0),
                bound,
                failed: Mutex::new(None),
            }),
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.inner.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// The owner completed a loop turn.
    pub fn beat(&self) {
        self.inner
            .last_beat_ms
            .store(self.now_ms(), Ordering::Relaxed);
    }

    /// How long ago the last beat was.
    pub fn since_beat(&self) -> Duration {
        let last = self.inner.last_beat_ms.load(Ordering::Relaxed);
        Duration::from_millis(self.now_ms().saturating_sub(last))
    }

    /// Record why the daemon is failing (an essential task ended); the
    /// first reason is kept.
    pub fn fail(&self, why: impl Into<String>) {
        let mut f = self
            .inner
            .failed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if f.is_none() {
            *f = Some(why.into());
        }
    }

    /// Why the daemon is failing, once an essential task ended.
    pub fn failed(&self) -> Option<String> {
        self.inner
            .failed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Ok while the owner beats within the bound and nothing failed;
    /// otherwise what is wrong, for `/healthz`'s body.
    pub fn check(&self) -> Result<(), LivenessError> {
        judge(self.failed(), self.since_beat(), self.inner.bound)
    }
}

/// Why the daemon is not alive: `/healthz`'s 503 body and the withheld
/// watchdog ping's log line. Either way the runtime (kubelet, systemd) is to
/// restart the process; the log above says what ended or wedged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LivenessError {
    /// An essential task ended: the supervisor's reason, as it recorded it
    /// ([`Liveness::fail`]); the process is about to exit.
    #[error("{0}")]
    Failed(String),
    /// The owner loop has not turned within the bound: it is wedged.
    #[error(
        "the owner loop has not turned for {:.1} s (bound {:.0} s): it is wedged",
        .since.as_secs_f64(),
        .bound.as_secs_f64()
    )]
    Wedged {
        /// How long ago the last beat was.
        since: Duration,
        /// The bound it passed.
        bound: Duration,
    },
}

/// The verdict: a recorded failure, else a beat older than `bound`.
fn judge(failed: Option<String>, since: Duration, bound: Duration) -> Result<(), LivenessError> {
    if let Some(why) = failed {
        return Err(LivenessError::Failed(why));
    }
    if since > bound {
        return Err(LivenessError::Wedged { since, bound });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Liveness, judge};
    use std::time::Duration;

    #[test]
    fn a_beat_older_than_the_bound_or_a_failure_is_not_alive() {
        let s = Duration::from_secs;
        assert_eq!(judge(None, s(9), s(10)), Ok(()));
        let e = judge(None, s(11), s(10))
            .expect_err("no beat for over the bound")
            .to_string();
        assert!(e.contains("not turned for 11.0 s (bound 10 s)"), "{e}");
        assert_eq!(
            judge(Some("kernel watcher ended".into()), s(0), s(10)).map_err(|e| e.to_string()),
            Err("kernel watcher ended".to_string())
        );
    }

    #[test]
    fn the_first_failure_is_kept_and_beats_do_not_undo_it() {
        let l = Liveness::new(Duration::from_secs(3600));
        l.beat();
        assert_eq!(l.check(), Ok(()));
        l.fail("kernel watcher ended: boom");
        l.fail("a second reason is not kept");
        l.beat();
        assert_eq!(
            l.check().map_err(|e| e.to_string()),
            Err("kernel watcher ended: boom".to_string())
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_paused_clock_reaches_the_bound() {
        let l = Liveness::new(Duration::from_secs(10));
        l.beat();
        tokio::time::advance(Duration::from_secs(9)).await;
        assert_eq!(l.check(), Ok(()));
        tokio::time::advance(Duration::from_secs(2)).await;
        let e = l.check().expect_err("11 s without a beat").to_string();
        assert!(e.contains("not turned for 11.0 s (bound 10 s)"), "{e}");
        l.beat();
        assert_eq!(l.check(), Ok(()));
    }
}
