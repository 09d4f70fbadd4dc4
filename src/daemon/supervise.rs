//! The supervisor: every long-lived task of the daemon runs under it, and
//! nothing ends unnoticed.
//!
//! Contract: a task is either *restartable* (the vty poller, the ZAPI
//! client: what it holds is rebuilt from FRR) or *essential* (the kernel
//! watcher, the owner, the HTTP endpoint, the BMP listener: the state they
//! hold cannot be rebuilt in place). A task that ends before the daemon
//! stops (an error, a plain return, or a panic) is logged with its cause
//! and counted (`ribbridge_task_failures_total{task,how}`). A restartable
//! task is started again after a backoff that doubles from
//! [`BACKOFF_MIN`] to [`BACKOFF_MAX`] (back to the minimum once it ran
//! [`BACKOFF_RESET`]), counted in `ribbridge_task_restarts_total{task}`.
//! An essential task's end is returned by [`Supervisor::watch`]: the daemon
//! marks itself not alive and not ready, stops the rest and returns
//! [`crate::daemon::DaemonError::TaskEnded`] (exit code 4), so the runtime
//! (kubelet, systemd) restarts the process.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use tokio::task::{Id, JoinError, JoinSet};
use tokio::time::Instant;

use crate::telemetry;

/// What a supervised task returns: `Err(why)` when it failed; `Ok(())` when
/// it returned, which before the daemon stops is an end all the same.
pub type TaskResult = Result<(), TaskError>;

/// Why a supervised task failed (its text is [`Ended::cause`] and the log's
/// `cause`). An essential task's failure stops the daemon: its runtime
/// restarts it.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    /// The kernel watcher's netlink socket or dump failed.
    #[error(transparent)]
    Kernel(#[from] crate::kernel::KernelError),
}

/// A task's future, boxed.
pub type TaskFuture = Pin<Box<dyn Future<Output = TaskResult> + Send>>;

/// The first restart's delay.
pub const BACKOFF_MIN: Duration = Duration::from_millis(500);
/// The longest delay between restarts.
pub const BACKOFF_MAX: Duration = Duration::from_secs(30);
/// A task that ran this long before it ended restarts at the minimum.
pub const BACKOFF_RESET: Duration = Duration::from_secs(60);

/// An essential task that ended: the daemon must exit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    /// The task's name (`kernel watcher`, `owner`, ...).
    pub task: &'static str,
    /// What ended it: the error, `returned`, or the panic's message.
    pub cause: String,
}

impl std::fmt::Display for Ended {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the {} task ended: {}", self.task, self.cause)
    }
}

type Factory = Box<dyn FnMut() -> TaskFuture + Send>;

struct Entry {
    name: &'static str,
    /// `None`: essential.
    restart: Option<Factory>,
    /// Restarts since the last reset (the backoff's exponent).
    attempt: u32,
    started: Instant,
}

/// The set of supervised tasks.
#[derive(Default)]
pub struct Supervisor {
    set: JoinSet<TaskResult>,
    tasks: HashMap<Id, Entry>,
}

impl std::fmt::Debug for Supervisor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<_> = self.tasks.values().map(|e| e.name).collect();
        f.debug_struct("Supervisor").field("tasks", &names).finish()
    }
}

/// The delay before restart number `attempt` (0-based).
pub fn backoff(attempt: u32) -> Duration {
    BACKOFF_MIN
        .saturating_mul(2u32.saturating_pow(attempt.min(16)))
        .min(BACKOFF_MAX)
}

/// How a task's end reads in the log and the metric.
fn cause_of(end: Result<TaskResult, JoinError>) -> (&'static str, String) {
    match end {
        Ok(Ok(())) => ("ended", "returned".to_string()),
        Ok(Err(e)) => ("error", e.to_string()),
        Err(e) if e.is_panic() => {
            let p = e.into_panic();
            let msg = p
                .downcast_ref::<&str>()
                .map(ToString::to_string)
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".to_string());
            ("panic", format!("panicked: {msg}"))
        }
        Err(_) => ("ended", "cancelled".to_string()),
    }
}

impl Supervisor {
    /// An empty set.
    pub fn new() -> Supervisor {
        Supervisor::default()
    }

    /// Run an essential task: its end ends the daemon.
    pub fn essential(
        &mut self,
        name: &'static str,
        task: impl Future<Output = TaskResult> + Send + 'static,
    ) {
        let id = self.set.spawn(task).id();
        self.tasks.insert(
            id,
            Entry {
                name,
                restart: None,
                attempt: 0,
                started: Instant::now(),
            },
        );
    }

    /// Run a restartable task: `make` builds it, now and after each end.
    pub fn restartable(
        &mut self,
        name: &'static str,
        mut make: impl FnMut() -> TaskFuture + Send + 'static,
    ) {
        let id = self.set.spawn(make()).id();
        self.tasks.insert(
            id,
            Entry {
                name,
                restart: Some(Box::new(make)),
                attempt: 0,
                started: Instant::now(),
            },
        );
    }

    /// Wait until an essential task ends, restarting the others as they
    /// end. Pending forever when no essential task is in the set.
    pub async fn watch(&mut self) -> Ended {
        loop {
            let Some(end) = self.set.join_next_with_id().await else {
                return std::future::pending().await;
            };
            let id = match &end {
                Ok((id, _)) => *id,
                Err(e) => e.id(),
            };
            let Some(mut entry) = self.tasks.remove(&id) else {
                continue;
            };
            let (how, cause) = cause_of(end.map(|(_, r)| r));
            telemetry::task_failed(entry.name, how);
            let Some(mut make) = entry.restart.take() else {
                tracing::error!(task = entry.name, %cause, "an essential task ended: the daemon stops (the runtime restarts it)");
                return Ended {
                    task: entry.name,
                    cause,
                };
            };
            if entry.started.elapsed() >= BACKOFF_RESET {
                entry.attempt = 0;
            }
            let delay = backoff(entry.attempt);
            tracing::warn!(task = entry.name, %cause, restart_in = ?delay, attempt = entry.attempt + 1, "a task ended: restarting it");
            telemetry::task_restarted(entry.name);
            let next = make();
            let id = self
                .set
                .spawn(async move {
                    tokio::time::sleep(delay).await;
                    next.await
                })
                .id();
            self.tasks.insert(
                id,
                Entry {
                    name: entry.name,
                    restart: Some(make),
                    attempt: entry.attempt.saturating_add(1),
                    // The backoff's sleep counts as running: a restart
                    // that ends at once keeps doubling.
                    started: Instant::now() + delay,
                },
            );
        }
    }

    /// Wait for every task to end, at most `limit`; then abort the rest.
    /// True when all ended in time.
    pub async fn shutdown(mut self, limit: Duration) -> bool {
        let all = async { while self.set.join_next().await.is_some() {} };
        let in_time = tokio::time::timeout(limit, all).await.is_ok();
        self.set.abort_all();
        in_time
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backoff_doubles_to_its_bound() {
        let got: Vec<_> = (0..10).map(backoff).collect();
        assert_eq!(got[0], Duration::from_millis(500));
        assert_eq!(got[1], Duration::from_secs(1));
        assert_eq!(got[5], Duration::from_secs(16));
        assert_eq!(got[6], BACKOFF_MAX);
        assert_eq!(backoff(u32::MAX), BACKOFF_MAX);
    }

    #[tokio::test(start_paused = true)]
    async fn a_restartable_task_restarts_and_an_essential_one_ends_the_watch() {
        let runs = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
        let mut s = Supervisor::new();
        let r = runs.clone();
        s.restartable("poller", move || {
            let r = r.clone();
            Box::pin(async move {
                let n = r.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                if n < 3 {
                    panic!("poll {n} broke");
                }
                std::future::pending::<()>().await;
                Ok(())
            })
        });
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        s.essential("kernel watcher", async move {
            let _ = rx.await;
            Err(netlink_closed().into())
        });
        // The poller panics three times and is restarted each time; the
        // watch goes on until the essential task ends.
        let watched = tokio::spawn(async move { (s.watch().await, s) });
        while runs.load(std::sync::atomic::Ordering::SeqCst) < 4 {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(
            !watched.is_finished(),
            "a restartable end does not end the watch"
        );
        tx.send(()).expect("the watcher task waits");
        let (ended, s) = watched.await.expect("watch");
        assert_eq!(
            ended,
            Ended {
                task: "kernel watcher",
                cause: netlink_closed().to_string()
            }
        );
        assert_eq!(runs.load(std::sync::atomic::Ordering::SeqCst), 4);
        // The restarted poller never ends on its own: shutdown aborts it.
        assert!(!s.shutdown(Duration::from_millis(10)).await);
    }

    /// A kernel watcher's failure, as its socket would end it.
    fn netlink_closed() -> crate::kernel::KernelError {
        crate::kernel::KernelError::Socket {
            step: "recv",
            source: std::io::Error::other("netlink socket closed"),
        }
    }

    #[tokio::test]
    async fn a_panic_is_reported_with_its_message() {
        let mut s = Supervisor::new();
        s.essential("owner", async { panic!("wedged on purpose") });
        let e = s.watch().await;
        assert_eq!(e.task, "owner");
        assert_eq!(e.cause, "panicked: wedged on purpose");
    }
}
