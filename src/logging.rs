//! The log's writer: every line goes to stderr through a bounded queue that a
//! thread of its own drains, so a reader that stops reading (a pod's log
//! pipe behind a stalled shim, journald's stream socket under load) never
//! blocks the task that logs. The owner loop kept writing into a full pipe
//! before this (`/status` unanswered, `/healthz` 503).
//!
//! Contract: [`writer`] is called once, by the CLI, before anything logs;
//! over [`QUEUE_LINES`] queued lines a line is dropped, never waited for,
//! and counted. [`watch`] (a daemon task) exports the count as
//! `ribbridge_log_lines_dropped_total` and, once per stall, when the reader
//! reads again (a write completed, nothing dropped since the last read),
//! logs how many lines were lost. [`Stalls`] is the pure bookkeeping.

use std::io::Write;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

use tokio_util::sync::CancellationToken;
use tracing_appender::non_blocking::{ErrorCounter, NonBlocking, NonBlockingBuilder, WorkerGuard};

/// Lines the queue holds before it drops: about a second of the heaviest
/// burst measured (a 1 500-route churn logs ~3 000 lines), a few MiB at
/// most, against tracing-appender's default of 128 000 lines (tens of MiB
/// under the pod's 64 Mi limit).
pub const QUEUE_LINES: usize = 8_192;

/// How often [`watch`] reads the drop count.
pub const WATCH_PERIOD: Duration = Duration::from_secs(1);

/// The drop count of the one writer [`writer`] made.
static DROPPED: OnceLock<ErrorCounter> = OnceLock::new();

/// Writes to stderr that completed: a stalled reader stops them.
static WRITTEN: AtomicU64 = AtomicU64::new(0);

/// stderr, counting the writes that complete ([`written`]).
struct Stderr;

impl Write for Stderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = std::io::stderr().write(buf)?;
        WRITTEN.fetch_add(1, Ordering::Relaxed);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// Keeps the writer's thread; dropping it flushes what is queued (for at
/// most a second: tracing-appender's bound, so a stalled reader cannot hold
/// the exit).
#[must_use = "dropping the guard stops the log's writer thread"]
pub struct Guard {
    _worker: WorkerGuard,
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("logging::Guard")
    }
}

/// The non-blocking, lossy writer to stderr, for the subscriber. A second
/// call makes a second writer whose drops are not counted.
pub fn writer() -> (NonBlocking, Guard) {
    let (w, guard) = NonBlockingBuilder::default()
        .lossy(true)
        .buffered_lines_limit(QUEUE_LINES)
        .thread_name("ribbridge-log")
        .finish(Stderr);
    let _ = DROPPED.set(w.error_counter());
    (w, Guard { _worker: guard })
}

/// Lines dropped since the start (0 when [`writer`] was never called).
pub fn dropped() -> u64 {
    DROPPED
        .get()
        .map_or(0, |c| u64::try_from(c.dropped_lines()).unwrap_or(u64::MAX))
}

/// Writes to stderr completed since the start.
pub fn written() -> u64 {
    WRITTEN.load(Ordering::Relaxed)
}

/// One stall of the log's reader, as [`Stalls::observe`] ends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stall {
    /// Lines dropped during it.
    pub lines: u64,
    /// From the first read that saw a drop to the last one.
    pub lasted: Duration,
}

/// Drop and write counts read over time, cut into stalls: a stall begins
/// at a read that sees drops and ends at the first read that sees no new
/// drop once a write has completed since it began (the reader reads
/// again; the queue may have drained between two reads, and a quiet
/// daemon writes nothing after it). A quiet moment with the reader still
/// stalled ends nothing: no write has completed since the stall began.
#[derive(Debug, Default)]
pub struct Stalls {
    dropped: u64,
    written: u64,
    /// The open stall: the drops and the writes before it, and when.
    open: Option<(u64, u64, Instant)>,
}

impl Stalls {
    /// Feed the counts read at `now`; the stall it ends, if any.
    pub fn observe(&mut self, dropped: u64, written: u64, now: Instant) -> Option<Stall> {
        let rose = dropped > self.dropped;
        let before = (self.dropped, self.written);
        self.dropped = self.dropped.max(dropped);
        self.written = self.written.max(written);
        match self.open {
            None if rose => {
                self.open = Some((before.0, self.written, now));
                None
            }
            Some((from, wrote_before, since)) if !rose && self.written > wrote_before => {
                self.open = None;
                Some(Stall {
                    lines: self.dropped - from,
                    lasted: now.saturating_duration_since(since),
                })
            }
            _ => None,
        }
    }
}

/// The daemon's log watch: every [`WATCH_PERIOD`] the drop count to
/// telemetry, and one warning per stall; ends on `stop`.
pub async fn watch(stop: CancellationToken) {
    let mut stalls = Stalls::default();
    let mut tick = tokio::time::interval(WATCH_PERIOD);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = tick.tick() => {}
        }
        let total = dropped();
        crate::telemetry::log_lines_dropped(total);
        if let Some(s) = stalls.observe(total, written(), Instant::now()) {
            tracing::warn!(
                dropped = s.lines,
                secs = s.lasted.as_secs_f64(),
                "log: the log's reader stopped reading and is back; lines were dropped \
                 rather than block the daemon (ribbridge_log_lines_dropped_total counts \
                 them): check the container runtime's log pipe or journald"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stall_is_reported_once_when_the_reader_reads_again() {
        let t0 = Instant::now();
        let at = |s| t0 + Duration::from_secs(s);
        let mut s = Stalls::default();
        assert_eq!(s.observe(0, 5, at(0)), None, "nothing dropped");
        assert_eq!(s.observe(10, 5, at(1)), None, "a stall begins");
        assert_eq!(s.observe(25, 5, at(2)), None, "still dropping");
        assert_eq!(
            s.observe(25, 5, at(3)),
            None,
            "quiet, the reader still stalled"
        );
        assert_eq!(s.observe(40, 6, at(4)), None, "dropping again");
        assert_eq!(
            s.observe(40, 9, at(5)),
            Some(Stall {
                lines: 40,
                lasted: Duration::from_secs(4)
            }),
            "ends when writes complete and nothing more is dropped"
        );
        assert_eq!(s.observe(40, 12, at(6)), None, "reported once");
        assert_eq!(s.observe(47, 12, at(7)), None, "a second stall begins");
        assert_eq!(
            s.observe(47, 13, at(8)).map(|x| x.lines),
            Some(7),
            "counts only its own lines"
        );
    }

    #[test]
    fn a_stall_whose_queue_drained_between_two_reads_ends_at_the_next_quiet_one() {
        // The reader back and the queue written out within one period,
        // the daemon quiet after it: no write at the next read, yet the
        // reader reads again.
        let t0 = Instant::now();
        let at = |s| t0 + Duration::from_secs(s);
        let mut s = Stalls::default();
        assert_eq!(s.observe(0, 5, at(0)), None);
        assert_eq!(s.observe(10, 5, at(1)), None, "a stall begins");
        assert_eq!(
            s.observe(20, 9_000, at(2)),
            None,
            "the last drops, the drain"
        );
        assert_eq!(
            s.observe(20, 9_000, at(3)),
            Some(Stall {
                lines: 20,
                lasted: Duration::from_secs(2)
            })
        );
        assert_eq!(s.observe(20, 9_000, at(4)), None, "reported once");
    }

    #[test]
    fn writes_without_drops_are_no_stall() {
        let t = Instant::now();
        let mut s = Stalls::default();
        for w in 1..5 {
            assert_eq!(s.observe(0, w, t), None);
        }
    }
}
