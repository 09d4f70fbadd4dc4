//! The owner loop every role shares: one task owns the role's state (its
//! [`Instance`]), receives from every channel, answers `/status`, beats
//! `/healthz`'s liveness, and sleeps until an input, the instance's own
//! deadline or the heartbeat, never on a fixed poll.
//!
//! Contract: nothing else holds a role's state. The loop never blocks on
//! I/O: what an instance starts (heals, polls) runs in tasks of its own and
//! comes back as inputs. The order of the arms (rare and cheap first) is
//! written here once, for every role.

use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::bmp::BmpInput;
use super::seam::Input;
use crate::frr::ZapiEvent;
use crate::kernel::KernelEvent;
use crate::reconcile::Millis;
use crate::telemetry;

/// The owner's heartbeat period when nothing else wakes it.
const HEARTBEAT: std::time::Duration = std::time::Duration::from_secs(1);

/// The owner's receivers. A role that has no such input leaves its sender
/// unused: the arm never fires.
#[derive(Debug)]
pub struct Inputs {
    /// From the kernel watcher (node, router).
    pub kernel: mpsc::Receiver<KernelEvent>,
    /// From the ZAPI client (node).
    pub frr: mpsc::Receiver<ZapiEvent>,
    /// From the heal executor, the vty poller, the probes and the drain
    /// state watch (node).
    pub results: mpsc::Receiver<Input>,
    /// Status requests from HTTP: the reply carries `/status` JSON.
    pub status: mpsc::Receiver<oneshot::Sender<String>>,
    /// From the BMP station's sessions (station).
    pub bmp: mpsc::Receiver<BmpInput>,
}

/// One role's state and how its inputs change it: the receive side (each
/// input into the role's events) and the execute side (what it decided,
/// into I/O) live in the role's own file; the loop calls these.
pub(super) trait Instance {
    /// Before the first input: what the role says of its readiness.
    fn start(&mut self, ctx: &mut Ctx);
    /// A kernel watcher's event.
    fn on_kernel(&mut self, _ev: KernelEvent, _ctx: &mut Ctx) {}
    /// A ZAPI client's event.
    fn on_zapi(&mut self, _ev: ZapiEvent, _ctx: &mut Ctx) {}
    /// A task's result.
    fn on_result(&mut self, _input: Input, _ctx: &mut Ctx) {}
    /// A BMP session's input.
    fn on_bmp(&mut self, _input: BmpInput, _ctx: &mut Ctx) {}
    /// The deadline [`Instance::deadline`] named has come.
    fn on_deadline(&mut self, ctx: &mut Ctx);
    /// When the role wants to be woken, on the owner's clock.
    fn deadline(&self) -> Option<Millis>;
    /// `/status` of now (the loop names the node and the time).
    fn status(&self, ctx: &Ctx) -> crate::status::StatusDoc;
    /// The loop ends: flush what is buffered.
    fn stop(&mut self) {}
}

/// What every role's instance is given: the owner's clock and the
/// readiness it publishes.
#[derive(Debug)]
pub(super) struct Ctx {
    start: Instant,
    /// The wall clock's Unix milliseconds at the owner's zero.
    pub zero_unix_ms: u64,
    ready: watch::Sender<(bool, String)>,
    /// Failpoint `owner-wedge` fired: the loop stops turning.
    wedged: bool,
    /// The node's name `/status` gives (`status::node_name`, read once).
    node: Option<String>,
}

impl Ctx {
    /// The owner's clock: milliseconds since it started.
    pub fn now(&self) -> Millis {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Why the role is not ready (None: ready).
    pub fn not_ready(&self) -> Option<String> {
        Some(self.ready.borrow().1.clone()).filter(|w| !w.is_empty())
    }

    /// Set `/readyz`'s answer; log when it changes. True when it changed.
    pub fn publish_ready(&mut self, ready: bool, reason: String) -> bool {
        telemetry::ready(ready);
        let changed = self.ready.send_if_modified(|cur| {
            let next = (ready, if ready { String::new() } else { reason });
            if *cur != next {
                *cur = next;
                true
            } else {
                false
            }
        });
        if changed {
            let why = self.ready.borrow().1.clone();
            if ready {
                tracing::info!(ready, "readiness changed");
            } else {
                tracing::warn!(ready, %why, "readiness changed");
            }
        }
        changed
    }

    /// Failpoint: the owner wedges (awaits what never comes, as a deadlock
    /// would) when this route arrives.
    fn wedge_on(&mut self, ev: &KernelEvent) {
        if let KernelEvent::RouteAdded { route }
        | KernelEvent::RouteChanged { new: route, .. }
        | KernelEvent::Reasserted { route } = ev
        {
            if crate::fault::armed("owner-wedge", &route.prefix) {
                tracing::warn!(prefix = %route.prefix, "failpoint owner-wedge: the owner loop stops turning");
                self.wedged = true;
            }
        }
    }
}

/// The loop around one role's instance.
#[derive(Debug)]
pub(super) struct Owner<I> {
    ctx: Ctx,
    instance: I,
    /// Beaten on every loop turn: `/healthz` fails when it stops.
    live: crate::http::Liveness,
}

impl<I: Instance> Owner<I> {
    /// The loop around `instance`, publishing readiness on `ready`.
    pub fn new(
        instance: I,
        ready: watch::Sender<(bool, String)>,
        live: crate::http::Liveness,
    ) -> Owner<I> {
        let ctx = Ctx {
            start: Instant::now(),
            zero_unix_ms: crate::clock::unix_ms(),
            ready,
            wedged: false,
            node: crate::status::node_name(),
        };
        Owner {
            ctx,
            instance,
            live,
        }
    }

    /// Run until `stop`.
    pub async fn run(mut self, mut inputs: Inputs, stop: CancellationToken) {
        self.instance.start(&mut self.ctx);
        // An idle loop still turns once a second: the heartbeat.
        let mut heartbeat = tokio::time::interval(HEARTBEAT);
        heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            if self.ctx.wedged {
                std::future::pending::<()>().await;
            }
            self.live.beat();
            let wake = self
                .instance
                .deadline()
                .map(|at| self.ctx.start + std::time::Duration::from_millis(at));
            // The order (docs/PERFORMANCE.md, "Fairness"): what is rare
            // and cheap first (a stop, a /status request, the instance's
            // deadline, the heartbeat), then the inputs. With the inputs
            // first, a flood of kernel or ZAPI events held /status past its
            // 5 s and the timers by seconds; the rare arms cannot starve
            // the inputs (a bounded status queue, one deadline at a time,
            // one beat a second).
            let (ctx, x) = (&mut self.ctx, &mut self.instance);
            tokio::select! {
                biased;
                _ = stop.cancelled() => break,
                Some(reply) = inputs.status.recv() => {
                    let mut doc = x.status(ctx);
                    doc.stamp(ctx.node.clone(), crate::clock::unix_ms());
                    let _ = reply.send(json(&doc));
                }
                () = sleep(wake) => {
                    if let Some(due) = wake {
                        telemetry::owner_lag("deadline", due.elapsed());
                    }
                    x.on_deadline(ctx);
                }
                due = heartbeat.tick() => telemetry::owner_lag("heartbeat", due.elapsed()),
                Some(ev) = inputs.kernel.recv() => {
                    ctx.wedge_on(&ev);
                    x.on_kernel(ev, ctx);
                }
                Some(ev) = inputs.frr.recv() => x.on_zapi(ev, ctx),
                Some(input) = inputs.results.recv() => x.on_result(input, ctx),
                Some(input) = inputs.bmp.recv() => x.on_bmp(input, ctx),
            }
        }
        self.instance.stop();
    }
}

async fn sleep(until: Option<Instant>) {
    match until {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}

/// A document as `/status` JSON (an error object if it cannot be written).
fn json<T: serde::Serialize>(doc: &T) -> String {
    serde_json::to_string(doc).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}
