//! The backend probes' task: runs `probe::run` over every configured VIP's
//! `health` and `ready` probes, exports each result (duration, failures by
//! reason, the verdict per VIP and probe) and tells the core each change
//! of verdict (`Event::Backend`).
//!
//! Contract: probes never run on the owner's loop. The prober sends every
//! result on a bounded channel with `try_send` (a full channel drops the
//! result and counts it: a probe never waits); this task reads them and
//! forwards only the verdict changes to the owner over `RESULT_CHANNEL`,
//! waiting there as every task that feeds the core does (a few a minute).
//! When this task ends (a probe task panicked: a bug) the supervisor
//! restarts it; meanwhile the core keeps the last verdicts it was told.

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::seam::{Input, Source};
use crate::model::TableId;
use crate::probe::{Dropped, Key, Kind, Outcome, Probe, ProbeError, State, VipProbes};
use crate::reconcile::{BackendState, Event, ProbeKind};
use crate::telemetry;

/// Probe results between the prober and this task (each probe reports
/// every interval, 1-2 s: 64 is a minute of 2 VIPs' probes).
pub const PROBE_CHANNEL: usize = 64;

/// At most this many probes in flight at once.
pub const PROBES_IN_FLIGHT: usize = 4;

/// Every probe of every VIP, keyed by the node's table; refused specs are
/// errors naming the VIP (the settings were validated: this only reads
/// the CA files).
pub fn probes(table: TableId, vips: &[VipProbes]) -> Result<Vec<Probe<Key>>, ProbeError> {
    let mut out = Vec::new();
    for v in vips {
        for (kind, spec) in v.specs()? {
            let key = Key {
                table,
                prefix: v.prefix,
                kind,
            };
            out.push(Probe::new(key, spec)?);
        }
    }
    Ok(out)
}

/// Run the prober until `stop`; forward verdict changes to the core.
pub async fn run(probes: Vec<Probe<Key>>, results: mpsc::Sender<Input>, stop: CancellationToken) {
    let (tx, mut rx) = mpsc::channel(PROBE_CHANNEL);
    let dropped = Dropped::default();
    let prober = crate::probe::run(probes, tx, PROBES_IN_FLIGHT, dropped.clone());
    tokio::pin!(prober);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            () = &mut prober => return,
            Some(r) = rx.recv() => {
                let kind = r.key.kind.name();
                let failure = match r.outcome {
                    Outcome::Ok => None,
                    Outcome::Fail(reason) => Some(reason.name()),
                };
                let up = match r.state {
                    State::Up => Some(true),
                    State::Down => Some(false),
                    State::Unknown => None,
                };
                telemetry::probe(&r.key.prefix, kind, r.took, failure, up);
                telemetry::probe_reports_dropped(dropped.count());
                if !r.changed {
                    continue;
                }
                tracing::info!(
                    prefix = %r.key.prefix, probe = kind, state = r.state.name(),
                    detail = r.detail.as_deref().unwrap_or(""),
                    "backend probe changed"
                );
                let event = Event::Backend {
                    table: r.key.table,
                    prefix: r.key.prefix,
                    probe: match r.key.kind {
                        Kind::Health => ProbeKind::Health,
                        Kind::Ready => ProbeKind::Ready,
                    },
                    state: match r.state {
                        State::Up => BackendState::Up,
                        State::Down => BackendState::Down,
                        State::Unknown => BackendState::Unknown,
                    },
                };
                if results.send(Input::Core(event, Source::Probe)).await.is_err() {
                    return;
                }
            }
        }
    }
}
