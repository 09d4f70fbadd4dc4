//! The node's instance: the full join beside FRR. Its state is the pure
//! core's ([`State`]); its receive side turns the kernel's, zebra's and the
//! tasks' inputs into core events (`translate`), records them (`--record`)
//! and steps the core; its execute side is `execute`, one function per kind
//! of the core's action. Also [`oneshot`], the same core run once without a
//! loop (`status --oneshot`).
//!
//! Contract: nothing else holds the node's `State`; every core event passes
//! [`NodeInstance::feed`], so a recording replays what the core was told.

use tokio::sync::mpsc;

use super::error::DaemonError;
use super::execute::{self, Executor};
use super::exports::{RouteExports, next_hops};
use super::owner::{Ctx, Instance};
use super::record::Recorder;
use super::seam::{Input, PollTrigger, Source};
use super::translate::{self, ZapiView, configured, core_config};
use crate::config::{NodeRole, Settings};
use crate::frr::ZapiEvent;
use crate::kernel::{KernelEvent, RouteLookup, RouteSet};
use crate::model::intent::Family;
use crate::reconcile::{self, Action, Event, Millis, State};
use crate::telemetry;

/// The node's state and handles.
#[derive(Debug)]
pub(super) struct NodeInstance {
    state: State,
    role: NodeRole,
    record: Recorder,
    frr_release: Option<crate::model::Release>,
    /// Where the actions that start or wake a task go.
    execute: Executor,
    wake_at: Option<Millis>,
    zapi: ZapiView,
    exports: RouteExports,
    zebra_reason: String,
    /// The ceiling's binding was logged (once per episode).
    ceiling_logged: bool,
    /// `withdraw = true` VIPs held out of BGP, as last exported.
    withdrawn_exported: usize,
}

impl NodeInstance {
    /// A fresh node: its core configured from the settings.
    pub fn new(
        s: &Settings,
        role: &NodeRole,
        results: mpsc::Sender<Input>,
        poll: PollTrigger,
        lookup: Option<RouteLookup>,
    ) -> Result<NodeInstance, DaemonError> {
        let node = NodeInstance {
            state: State::new(core_config(s, role), 0),
            role: role.clone(),
            record: Recorder::open(s)?,
            frr_release: None,
            execute: Executor::new(role, results, poll, lookup),
            wake_at: None,
            zapi: ZapiView::new(role.table),
            exports: RouteExports::new(configured(s, role.table), role.max_detailed_vips),
            zebra_reason: "zebra not connected yet".to_string(),
            ceiling_logged: false,
            withdrawn_exported: 0,
        };
        telemetry::drained(false);
        telemetry::drain_lost(false);
        telemetry::heal_ceiling(0, false);
        telemetry::vips_withdrawn_by_ribbridge(0);
        Ok(node)
    }

    /// A resync: counted; with its whole route list (startup, after a
    /// full channel), the exports, then the core's one event. Without it,
    /// the differences before it already told the exports and the core.
    fn resync(
        &mut self,
        reason: crate::kernel::ResyncReason,
        routes: Option<RouteSet>,
        ctx: &mut Ctx,
    ) {
        super::exports::resynced(reason, routes.as_ref());
        let Some(routes) = routes else {
            return;
        };
        // Every route of the node's table is a VIP.
        self.exports.resync(&routes, |_| true);
        let synced = translate::kernel_synced(&routes);
        // The route list (40 B a route) goes before the core
        // builds its state from the entries: held across the step, it was part
        // of the startup's peak RSS.
        drop(routes);
        self.feed(synced, Source::Kernel, ctx);
    }

    fn zapi(&mut self, ev: ZapiEvent, ctx: &mut Ctx) {
        match &ev {
            ZapiEvent::Connected {
                release,
                mode,
                table,
            } => {
                tracing::info!(%release, ?mode, table, "zebra: subscribed");
                let previous = self
                    .frr_release
                    .replace(*release)
                    .map_or_else(|| telemetry::UNKNOWN_RELEASE.to_string(), |r| r.to_string());
                telemetry::frr_info(Some(&previous), &release.to_string());
                telemetry::zapi_connected(true);
                self.zebra_reason = "zebra's first view is not complete yet".to_string();
            }
            ZapiEvent::Disconnected {
                reason,
                retry_in_ms,
            } => {
                telemetry::zapi_connected(false);
                telemetry::zapi_disconnect();
                let why = format!("zebra not connected: {reason}");
                // Said once per cause, with what to check; the retries
                // (at most 1 s apart) are counted, not logged.
                if why != self.zebra_reason {
                    if !self.role.frr_dir.is_dir() {
                        tracing::error!(
                            frr_dir = %self.role.frr_dir.display(),
                            %reason,
                            "FRR's socket directory does not exist: check --frr-dir, the volume that \
                             shares FRR's sockets (hostPath /run/frr-k8s/sockets or the pod's \
                             /var/run/frr) and that FRR is running; retrying at most 1 s apart, \
                             counted in ribbridge_zapi_disconnects_total"
                        );
                    } else {
                        tracing::warn!(%reason, retry_in_ms, "zebra: disconnected; retrying, logging only changes");
                    }
                }
                self.zebra_reason = why;
            }
            ZapiEvent::Undecodable { command, reason } => {
                tracing::warn!(command, %reason, "zebra: undecodable frame");
            }
            _ => {}
        }
        for e in self.zapi.apply(&ev) {
            self.feed(e, Source::Zapi, ctx);
        }
    }

    /// Record, step, act.
    fn feed(&mut self, ev: Event, source: Source, ctx: &mut Ctx) {
        let now = ctx.now();
        telemetry::event(source.name());
        self.record.write(now, &ev);
        if let Event::BgpView { peers } = &ev {
            for p in peers {
                telemetry::bgp_peer_up(p.peer.as_str(), p.established);
            }
        }
        if let Event::Drain { drained } = &ev {
            telemetry::drained(*drained);
            tracing::info!(
                drained,
                "bgpd's configuration: the node is {}",
                if *drained { "drained" } else { "not drained" }
            );
        }
        if let Event::Intent { intent } = &ev {
            if self.state.intent.is_some() {
                telemetry::intent_changed();
            }
            let t = self.role.table;
            let families: Vec<String> = [Family::Ipv4, Family::Ipv6]
                .iter()
                .map(|&f| match intent.redistribution(t, f) {
                    Some(r) => format!(
                        "table {t} {}: {}",
                        f.name(),
                        r.route_map
                            .as_deref()
                            .map_or("redistributed".to_string(), |m| format!(
                                "redistributed through route-map {m}"
                            ))
                    ),
                    None => format!("table {t} {}: not redistributed", f.name()),
                })
                .collect();
            tracing::info!(
                intent = %families.join("; "),
                route_map_delay_ms = intent.route_map_delay_ms,
                "bgpd's configuration read"
            );
        }
        let deferred = self.state.ceiling.deferred;
        let actions = reconcile::step(&mut self.state, ev, now);
        for a in actions {
            self.act(a, now);
        }
        let c = &self.state.config;
        let binding = self
            .state
            .ceiling
            .binding(c.heal_rate_per_s, c.heal_burst, now);
        let new_deferred = self.state.ceiling.deferred - deferred;
        if new_deferred > 0 && !self.ceiling_logged {
            tracing::warn!(
                rate_per_s = c.heal_rate_per_s,
                burst = c.heal_burst,
                "the node-wide ceiling on heal actions holds heals back: many VIPs drift at once; \
                 each heals in its turn (ribbridge_heal_deferred_total)"
            );
        }
        self.ceiling_logged = binding;
        telemetry::heal_ceiling(new_deferred, binding);
        telemetry::vips_without_series(&self.exports.series);
        // A handful of entries at most: the withdraw = true VIPs.
        let withdrawn = self.state.withdrawals.values().filter(|w| w.out).count();
        if withdrawn != self.withdrawn_exported {
            self.withdrawn_exported = withdrawn;
            telemetry::vips_withdrawn_by_ribbridge(withdrawn);
        }
        let ready = self.state.ready();
        let reason = if !self.state.kernel_synced {
            "kernel mirror not synced yet".to_string()
        } else {
            self.zebra_reason.clone()
        };
        // /readyz's answer changes rarely and an operator wants the why.
        if ctx.publish_ready(ready, reason) {
            for (&(table, prefix), v) in &self.state.vips {
                if !self.exports.series.admit(table, &prefix) {
                    continue;
                }
                if ready {
                    telemetry::vip_state(&prefix, table, v.state);
                } else {
                    telemetry::vip_unknown(&prefix, table);
                }
            }
        }
        // A VIP admitted in this step gets its state now, whatever its
        // first state (its initial `withdrawn` is no state change).
        for (table, prefix) in self.exports.series.take_admitted() {
            match self.state.vips.get(&(table, prefix)) {
                Some(v) if ready => telemetry::vip_state(&prefix, table, v.state),
                _ => telemetry::vip_unknown(&prefix, table),
            }
        }
    }

    /// One action of the core, to the place that executes its kind.
    fn act(&mut self, a: Action, now: Millis) {
        let ready = self.state.ready();
        let x = &self.execute;
        match a {
            Action::RefreshBgp => x.refresh_bgp(),
            Action::WakeAt { at } => execute::wake_at(&mut self.wake_at, at, now),
            Action::StateChanged {
                table,
                prefix,
                from,
                to,
                drift_ms,
            } => execute::state_changed(
                &mut self.exports.series,
                ready,
                (table, prefix),
                (from, to),
                drift_ms,
            ),
            Action::GaveUp {
                table,
                prefix,
                class,
            } => execute::gave_up(&mut self.exports.series, (table, prefix), class),
            Action::Forgot { table, prefix } => execute::forgot(&mut self.exports, (table, prefix)),
            Action::ReapplyDrain => x.reapply_drain(),
            Action::Withdraw {
                table,
                prefix,
                out,
                why,
                first,
            } => x.withdraw((table, prefix), out, why, first),
            Action::DrainLost { lost } => x.drain_lost(lost, self.state.config.mode),
            Action::Heal {
                table,
                prefix,
                action,
            } => x.heal((table, prefix), action),
        }
    }
}

impl Instance for NodeInstance {
    fn start(&mut self, _ctx: &mut Ctx) {}

    fn on_kernel(&mut self, ev: KernelEvent, ctx: &mut Ctx) {
        let ev = match ev {
            KernelEvent::Resynced { reason, routes } => return self.resync(reason, routes, ctx),
            other => other,
        };
        self.exports.route(&ev, |_| true);
        for e in translate::kernel(&ev) {
            self.feed(e, Source::Kernel, ctx);
        }
    }

    fn on_zapi(&mut self, ev: ZapiEvent, ctx: &mut Ctx) {
        self.zapi(ev, ctx);
    }

    fn on_result(&mut self, input: Input, ctx: &mut Ctx) {
        let Input::Core(ev, source) = input;
        self.feed(ev, source, ctx);
    }

    fn on_deadline(&mut self, ctx: &mut Ctx) {
        self.wake_at = None;
        self.feed(Event::Tick, Source::Timer, ctx);
    }

    fn deadline(&self) -> Option<Millis> {
        self.wake_at
    }

    /// The document of now. The VIPs with series are the ones listed: past
    /// the detail limit a table of 100 000 VIPs is a count by state, not a
    /// 37.7 MB document built on the owner's loop at every request.
    fn status(&self, ctx: &Ctx) -> crate::status::StatusDoc {
        let hops = |t, p| self.exports.hops(t, p);
        let detailed = |t, p| self.exports.series.has(t, &p);
        let detail = crate::status::Detail {
            nexthops: &hops,
            detailed: &detailed,
        };
        crate::status::document(
            &self.state,
            self.frr_release.map(|r| r.to_string()),
            (ctx.zero_unix_ms, ctx.now()),
            &detail,
            ctx.not_ready(),
        )
    }

    fn stop(&mut self) {
        self.record.flush();
    }
}

/// Build the join once, with the daemon's own core and graces: one kernel
/// dump, one ZAPI session until its dump is complete, bgpd's view; then, as
/// long as some VIP's views show a class its grace has not let through yet
/// (a drift is reported only once it lasted and a later bgpd view confirms
/// it) and at most `wait`, the kernel and bgpd read again at the core's own
/// deadlines. A VIP still pending then is `unknown` with what the views
/// show and when it would be reported ([`crate::status::PendingStatus`]):
/// a one-shot read never picks a state its grace has not confirmed.
pub async fn oneshot(
    s: &Settings,
    node: &NodeRole,
    wait: std::time::Duration,
) -> Result<crate::status::StatusDoc, DaemonError> {
    use crate::kernel::{ResyncReason, Watcher, WatcherConfig};
    use tokio::time::Instant;
    let start = Instant::now();
    let zero_unix_ms = crate::clock::unix_ms();
    let now = || u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
    let mut w = Watcher::new(WatcherConfig {
        tables: vec![node.table],
        ..WatcherConfig::default()
    })?;
    let config = reconcile::Config {
        mode: crate::model::Mode::Observe,
        ..core_config(s, node)
    };
    let mut state = State::new(config, 0);
    let mut wake: Option<Millis> = None;
    // The core's deadlines are all a one-shot read executes of its actions.
    let steps = |state: &mut State, wake: &mut Option<Millis>, e, at| {
        for a in reconcile::step(state, e, at) {
            if let reconcile::Action::WakeAt { at } = a {
                *wake = Some(wake.map_or(at, |w: Millis| w.min(at)));
            }
        }
    };
    for ev in &w.resync(ResyncReason::Startup).await? {
        for e in translate::kernel(ev) {
            steps(&mut state, &mut wake, e, now());
        }
    }
    let (release, events) = super::frr_tasks::zapi_snapshot(node).await?;
    let mut view = ZapiView::new(node.table);
    for ev in &events {
        for e in view.apply(ev) {
            steps(&mut state, &mut wake, e, now());
        }
    }
    drop(events);
    let deadline = start + wait;
    loop {
        for e in super::frr_tasks::poll_once(node).await {
            steps(&mut state, &mut wake, e, now());
        }
        let pending = state
            .vips
            .keys()
            .filter_map(|k| reconcile::pending(&state, *k))
            .map(|p| p.due)
            .min();
        let Some(due) = pending else { break };
        // The next moment the core looks again: its own deadline, else the
        // earliest due observation; never past the wait.
        let next = wake.take().map_or(due, |w| w.min(due)).max(now() + 1);
        let at = start + std::time::Duration::from_millis(next);
        if at > deadline {
            break;
        }
        tokio::time::sleep_until(at).await;
        for ev in &w.resync(ResyncReason::Timer).await? {
            for e in translate::kernel(ev) {
                steps(&mut state, &mut wake, e, now());
            }
        }
        steps(&mut state, &mut wake, reconcile::Event::Tick, now());
    }
    let hops = |t, p| {
        w.mirror()
            .route(t, p)
            .map(|r| next_hops(&r))
            .unwrap_or_default()
    };
    // A one-shot read lists every VIP: its memory is the caller's.
    let detail = crate::status::Detail {
        nexthops: &hops,
        detailed: &|_, _| true,
    };
    let mut doc =
        crate::status::document(&state, Some(release), (zero_unix_ms, now()), &detail, None);
    doc.stamp(crate::status::node_name(), crate::clock::unix_ms());
    for v in doc.vips.iter_mut().filter(|v| v.pending.is_some()) {
        v.state = crate::status::VipState::UNKNOWN;
    }
    Ok(doc)
}
