//! What crosses between the daemon's tasks and its owner loop, apart from
//! any one of them: the results and views the I/O tasks send the owner
//! ([`Input`], labelled with their [`Source`]) and the owner's ask for a
//! vty poll ([`PollTrigger`]).
//!
//! Contract: plain types, no task of their own; every task file may use
//! them and they use no task file, so the tasks and the owner never import
//! one another for them (`tests/architecture.rs` checks the daemon's files
//! import in no cycle).

use std::sync::Arc;

use tokio::sync::Notify;

use crate::reconcile::Event;

/// What the I/O tasks send back to the owner (results and polled views).
#[derive(Debug)]
pub enum Input {
    /// A core event produced by a task (heal result, bgpd or zebra view).
    Core(Event, Source),
}

/// Where a core event came from: the `source` label of
/// `ribbridge_events_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The owner's own heartbeat and deadlines.
    Timer,
    /// The kernel watcher.
    Kernel,
    /// The ZAPI client.
    Zapi,
    /// The vty poller (bgpd's and zebra's views and configuration).
    Vty,
    /// A heal's result.
    Heal,
    /// The drain: the intent file's watch and the re-apply's result.
    Drain,
    /// The backend probes.
    Probe,
}

impl Source {
    /// The label value.
    pub fn name(self) -> &'static str {
        match self {
            Source::Timer => "timer",
            Source::Kernel => "kernel",
            Source::Zapi => "zapi",
            Source::Vty => "vty",
            Source::Heal => "heal",
            Source::Drain => "drain",
            Source::Probe => "probe",
        }
    }
}

/// Coalescing trigger for the poller: many triggers while a poll runs make
/// exactly one more poll.
#[derive(Debug, Clone, Default)]
pub struct PollTrigger(Arc<Notify>);

impl PollTrigger {
    /// Ask for a poll.
    pub fn trigger(&self) {
        self.0.notify_one();
    }

    /// Wait for the next ask (one stored ask is taken at once).
    pub async fn asked(&self) {
        self.0.notified().await;
    }
}
