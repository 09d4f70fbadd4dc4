//! Why the daemon cannot start, or a one-shot join cannot be built
//! ([`DaemonError`]): one enum for `run` and `oneshot`, which `cli` turns
//! into exit codes (an essential task's end is 4).

use std::path::PathBuf;

use super::bmp;
use super::supervise;
use crate::kernel::KernelError;

/// Why the daemon cannot start, or a one-shot join cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    /// The metrics recorder cannot be installed.
    #[error(transparent)]
    Telemetry(#[from] crate::telemetry::TelemetryError),
    /// The HTTP endpoint cannot listen.
    #[error(transparent)]
    Http(#[from] crate::http::BindError),
    /// The kernel watcher cannot open its sockets or dump the tables.
    #[error(transparent)]
    Kernel(#[from] KernelError),
    /// The BMP station cannot listen.
    #[error(transparent)]
    Bmp(#[from] bmp::ListenError),
    /// The connection caps do not fit under the descriptor limit.
    #[error(transparent)]
    Descriptors(#[from] crate::config::DescriptorError),
    /// A backend probe cannot be set up (its CA file).
    #[error(transparent)]
    Probe(#[from] crate::probe::ProbeError),
    /// `--record` cannot be created.
    #[error("--record {}: cannot create the event log: {source} (check the directory exists and is writable)", path.display())]
    Record {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// `status --oneshot` was given the settings of another role.
    #[error(
        "status --oneshot joins a node's views, and the settings resolve to the {vantage} vantage: drop `vantage` from the file given with --config (or run `ribbridge status` against that daemon's endpoint)"
    )]
    OneshotNotNode {
        /// The role the settings resolve to.
        vantage: crate::model::Vantage,
    },
    /// A signal handler cannot be installed.
    #[error("cannot install the {signal} handler: {source}")]
    Signal {
        /// SIGTERM or SIGINT.
        signal: &'static str,
        /// Why.
        source: std::io::Error,
    },
    /// An essential task ended (docs/RELIABILITY.md, "Supervision"): the
    /// process exits with code 4 (`cli` numbers it) so that its runtime restarts it.
    #[error(
        "{0} (the daemon stops so that its runtime restarts it: see the log above for the cause)"
    )]
    TaskEnded(supervise::Ended),
    /// zebra gave no complete view (one-shot only; the daemon retries).
    #[error("zebra at {}: {reason} (is FRR running, and is --frr-dir its socket directory?)", dir.display())]
    Zebra {
        /// The socket directory.
        dir: PathBuf,
        /// What went wrong.
        reason: String,
    },
}
