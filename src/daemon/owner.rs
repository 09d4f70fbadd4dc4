//! The one owner of state: receives from every channel, steps the pure core,
//! executes its actions, records, and answers status requests.
//!
//! Contract: nothing else holds `reconcile::State`. The loop never blocks on
//! I/O: heal actions and vty polls run in their own tasks and come back as
//! events; it sleeps until an input or the core's own next deadline, never
//! on a fixed poll.

use std::collections::{BTreeSet, HashMap};
use std::fs::File;
use std::io::{BufWriter, Write};

use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::DaemonError;
use super::bmp::{BmpInput, Station};
use super::frr_tasks::PollTrigger;
use super::heal;
use super::translate::{self, ZapiView};
use crate::config::Settings;
use crate::drain::Change;
use crate::frr::ZapiEvent;
use crate::kernel::{KernelEvent, Route, RouteLookup, RouteSet};
use crate::model::intent::Family;
use crate::model::{Prefix, TableId};
use crate::reconcile::{self, Action, Event, Millis, State};
use crate::telemetry;

/// The owner's heartbeat period when nothing else wakes it.
const HEARTBEAT: std::time::Duration = std::time::Duration::from_secs(1);

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

/// The owner's receivers.
#[derive(Debug)]
pub struct Inputs {
    /// From the kernel watcher.
    pub kernel: mpsc::Receiver<KernelEvent>,
    /// From the ZAPI client.
    pub frr: mpsc::Receiver<ZapiEvent>,
    /// From the heal executor and the vty poller.
    pub results: mpsc::Receiver<Input>,
    /// Status requests from HTTP: the reply carries `/status` JSON.
    pub status: mpsc::Receiver<oneshot::Sender<String>>,
    /// From the BMP station's sessions (bmp vantage only).
    pub bmp: mpsc::Receiver<BmpInput>,
}

/// The loop's state and handles.
#[derive(Debug)]
pub struct Owner {
    state: State,
    start: Instant,
    zero_unix_ms: u64,
    record: Option<BufWriter<File>>,
    frr_release: Option<crate::model::Release>,
    results: mpsc::Sender<Input>,
    poll: PollTrigger,
    ready: watch::Sender<(bool, String)>,
    wake_at: Option<Millis>,
    zapi: ZapiView,
    /// The routes of the VIPs with series only, for `/status`'s next hops
    /// (bounded like `legs`; the others show none). Heal actions do not
    /// read it: they ask the watcher's mirror, the one full copy.
    routes: HashMap<(TableId, Prefix), Route>,
    /// Asks the watcher's mirror for a route at heal time (none at the
    /// bmp vantage, which heals nothing).
    lookup: Option<RouteLookup>,
    /// Last exported ECMP legs per VIP with series (only they log a change;
    /// the others' legs are in the mirror and `/status`, not kept twice).
    legs: HashMap<(TableId, Prefix), u32>,
    /// Which VIPs have per-VIP series (bounded: the recorder never forgets
    /// a series).
    series: telemetry::VipSeries,
    settings: Settings,
    zebra_reason: String,
    /// The BMP station's view (bmp vantage only; the core is idle there).
    station: Option<Station>,
    /// The ceiling's binding was logged (once per episode).
    ceiling_logged: bool,
    /// `withdraw = true` VIPs held out of BGP, as last exported.
    withdrawn_exported: usize,
    /// Beaten on every loop turn: `/healthz` fails when it stops.
    live: crate::http::Liveness,
    /// Failpoint `owner-wedge` fired: the loop stops turning.
    wedged: bool,
}

impl Owner {
    /// A fresh owner.
    pub fn new(
        s: &Settings,
        results: mpsc::Sender<Input>,
        poll: PollTrigger,
        ready: watch::Sender<(bool, String)>,
        lookup: Option<RouteLookup>,
        live: crate::http::Liveness,
    ) -> Result<Owner, DaemonError> {
        let record = match &s.record {
            Some(p) => Some(BufWriter::new(File::create(p).map_err(|source| {
                DaemonError::Record {
                    path: p.clone(),
                    source,
                }
            })?)),
            None => None,
        };
        let zero_unix_ms = now_unix_ms();
        let owner = Owner {
            state: State::new(super::core_config(s), 0),
            start: Instant::now(),
            zero_unix_ms,
            record,
            frr_release: None,
            results,
            poll,
            ready,
            wake_at: None,
            zapi: ZapiView::new(s.node_table()),
            routes: HashMap::new(),
            lookup,
            legs: HashMap::new(),
            series: telemetry::VipSeries::new(configured(s), s.max_detailed_vips),
            settings: s.clone(),
            zebra_reason: "zebra not connected yet".to_string(),
            station: (s.vantage == crate::model::Vantage::Bmp)
                .then(|| Station::new(s.vips.iter().copied(), s.bmp_stale_secs, &s.bmp)),
            ceiling_logged: false,
            withdrawn_exported: 0,
            live,
            wedged: false,
        };
        telemetry::drained(false);
        telemetry::drain_lost(false);
        telemetry::heal_ceiling(0, false);
        telemetry::vips_withdrawn_by_ribbridge(0);
        Ok(owner)
    }

    fn now(&self) -> Millis {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Run until `stop`.
    pub async fn run(mut self, mut inputs: Inputs, stop: CancellationToken) {
        if let Some(why) = self.station.as_ref().map(Station::not_ready) {
            self.publish_ready(why.is_none(), why.unwrap_or_default());
        }
        // An idle loop still turns once a second: the heartbeat.
        let mut heartbeat = tokio::time::interval(HEARTBEAT);
        heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            if self.wedged {
                std::future::pending::<()>().await;
            }
            self.live.beat();
            let sleep_until = self
                .wake_at
                .map(|at| self.start + std::time::Duration::from_millis(at));
            let forget_at = self
                .station
                .as_ref()
                .and_then(Station::next_deadline)
                .map(|at| self.start + std::time::Duration::from_millis(at));
            // The order (docs/PERFORMANCE.md, "Fairness"): what is rare
            // and cheap first (a stop, a /status request, the core's and
            // the station's deadlines, the heartbeat), then the inputs. With
            // the inputs first, a flood of kernel or ZAPI events held
            // /status past its 5 s and the timers by seconds; the rare arms
            // cannot starve the inputs (a bounded status queue, one
            // deadline at a time, one beat a second).
            tokio::select! {
                biased;
                _ = stop.cancelled() => break,
                Some(reply) = inputs.status.recv() => self.answer_status(reply),
                () = sleep(sleep_until) => {
                    if let Some(due) = sleep_until {
                        telemetry::owner_lag("deadline", due.elapsed());
                    }
                    self.wake_at = None;
                    self.feed(Event::Tick, Source::Timer);
                }
                due = heartbeat.tick() => telemetry::owner_lag("heartbeat", due.elapsed()),
                () = sleep(forget_at) => self.on_bmp(None),
                Some(ev) = inputs.kernel.recv() => self.on_kernel(ev),
                Some(ev) = inputs.frr.recv() => self.on_zapi(ev),
                Some(Input::Core(ev, source)) = inputs.results.recv() => self.feed(ev, source),
                Some(input) = inputs.bmp.recv() => self.on_bmp(Some(input)),
            }
        }
        if let Some(r) = self.record.as_mut() {
            let _ = r.flush();
        }
    }

    /// Answer one `/status` request with the document of now.
    fn answer_status(&self, reply: oneshot::Sender<String>) {
        if self.station.is_some() {
            let _ = reply.send(self.station_status());
            return;
        }
        let hops = |t, p| self.routes.get(&(t, p)).map(next_hops).unwrap_or_default();
        // The VIPs with series are the ones listed: past the detail limit
        // a table of 100 000 VIPs is a count by state, not a 37.7 MB
        // document built on the owner's loop at every request.
        let detailed = |t, p| self.series.has(t, &p);
        let detail = crate::status::Detail {
            nexthops: &hops,
            detailed: &detailed,
        };
        let why = Some(self.ready.borrow().1.clone()).filter(|w| !w.is_empty());
        let doc = crate::status::document(
            &self.state,
            self.frr_release.map(|r| r.to_string()),
            (self.zero_unix_ms, self.now()),
            &detail,
            why,
        );
        let _ = reply
            .send(serde_json::to_string(&doc).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}")));
    }

    /// A BMP input, or (`None`) a stale router's time is up; then publish
    /// the station's readiness.
    fn on_bmp(&mut self, input: Option<BmpInput>) {
        let now = self.now();
        let Some(station) = self.station.as_mut() else {
            return;
        };
        match input {
            Some(i) => station.apply(i, now),
            None => station.expire(now),
        }
        super::bmp::publish(station.take_outputs());
        let why = station.not_ready();
        self.publish_ready(why.is_none(), why.unwrap_or_default());
    }

    fn station_status(&self) -> String {
        let zero = self.zero_unix_ms;
        let routers = self
            .station
            .as_ref()
            .map(|s| s.status(&|ms| zero.saturating_add(ms)))
            .unwrap_or_default();
        let why = Some(self.ready.borrow().1.clone()).filter(|w| !w.is_empty());
        let doc = crate::status::station_document(routers, why);
        serde_json::to_string(&doc).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// Set `/readyz`'s answer; log when it changes. True when it changed.
    fn publish_ready(&mut self, ready: bool, reason: String) -> bool {
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

    fn on_kernel(&mut self, ev: KernelEvent) {
        let ev = match ev {
            KernelEvent::Resynced { reason, routes } => return self.on_resync(reason, routes),
            other => other,
        };
        match &ev {
            KernelEvent::RouteAdded { route }
            | KernelEvent::RouteChanged { new: route, .. }
            | KernelEvent::Reasserted { route }
                if self.is_vip(route) =>
            {
                // Failpoint: the owner wedges (awaits what never comes, as
                // a deadlock would) when this VIP's route arrives.
                if crate::fault::armed("owner-wedge", &route.prefix) {
                    tracing::warn!(prefix = %route.prefix, "failpoint owner-wedge: the owner loop stops turning");
                    self.wedged = true;
                }
                self.keep_hops(route);
                let n = translate::facts(route).nexthops;
                self.ecmp(route.table, route.prefix, n);
            }
            KernelEvent::RouteRemoved { route } if self.is_vip(route) => {
                self.routes.remove(&(route.table, route.prefix));
                self.ecmp(route.table, route.prefix, 0);
            }
            _ => {}
        }
        if matches!(ev, KernelEvent::Reasserted { .. }) {
            telemetry::kernel_reassertion();
        }
        for e in translate::kernel(&ev) {
            self.feed(e, Source::Kernel);
        }
    }

    /// A resync: counted; with its whole route list (startup, after a
    /// full channel), the exports, then the core's one event. Without it,
    /// the differences before it already told the exports and the core.
    fn on_resync(&mut self, reason: crate::kernel::ResyncReason, routes: Option<RouteSet>) {
        telemetry::kernel_resync(reason.label());
        let Some(routes) = routes else {
            tracing::info!(
                reason = reason.label(),
                "kernel mirror resynced; its differences were the change"
            );
            return;
        };
        tracing::info!(
            reason = reason.label(),
            routes = routes.len(),
            "kernel mirror resynced"
        );
        // Gone since the last dump, or configured and never seen:
        // 0 legs, now that the kernel has been read. Only what the
        // resync changed moves: a VIP present before and after must
        // not flicker to 0 legs in between. The candidates are the
        // VIPs with series (the others export nothing), so no set
        // of every route is built beside the event's list.
        let mut gone: BTreeSet<(TableId, Prefix)> = self
            .routes
            .keys()
            .copied()
            .chain(configured(&self.settings))
            .collect();
        // One pass over the list (each item is a route built from the
        // mirror's compact form): present VIPs export their legs.
        for r in routes.iter() {
            if !self.is_vip(&r) {
                continue;
            }
            gone.remove(&(r.table, r.prefix));
            self.ecmp(r.table, r.prefix, translate::facts(&r).nexthops);
            self.keep_hops(&r);
        }
        for (t, p) in gone {
            self.routes.remove(&(t, p));
            self.ecmp(t, p, 0);
        }
        let synced = translate::kernel_synced(&routes);
        // The route list (40 B a route) goes before the core
        // builds its state from the entries: held across the step, it was part
        // of the startup's peak RSS.
        drop(routes);
        self.feed(synced, Source::Kernel);
    }

    /// Keep a VIP's route for `/status`'s next hops if it has series.
    fn keep_hops(&mut self, route: &Route) {
        let key = (route.table, route.prefix);
        if self.series.admit(key.0, &key.1) {
            match self.routes.get_mut(&key) {
                Some(r) => r.clone_from(route),
                None => {
                    self.routes.insert(key, route.clone());
                }
            }
        }
    }

    /// Export a VIP's ECMP legs; log when the count changes (at the router
    /// this is "how many nodes serve the VIP").
    fn ecmp(&mut self, table: TableId, prefix: Prefix, n: u32) {
        if !self.series.admit(table, &prefix) {
            // Past the series limit the change is in /status, not in the
            // log: a dump of 100 000 VIPs would otherwise log 100 000 lines
            // (and this map would hold a count for each).
            return;
        }
        telemetry::ecmp_nexthops(&prefix, table, n);
        let old = self.legs.insert((table, prefix), n);
        if old.unwrap_or(0) != n {
            tracing::info!(%prefix, table, nexthops = n, "VIP ECMP legs");
        }
    }

    /// Every route of a node's watched table is a VIP; at the router only
    /// the configured ones are.
    fn is_vip(&self, r: &Route) -> bool {
        self.settings.vantage == crate::model::Vantage::Node
            || self.settings.vips.contains(&r.prefix)
    }

    fn on_zapi(&mut self, ev: ZapiEvent) {
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
                telemetry::build_info(Some(&previous), &release.to_string());
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
                    if !self.settings.frr_dir.is_dir() {
                        tracing::error!(
                            frr_dir = %self.settings.frr_dir.display(),
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
            self.feed(e, Source::Zapi);
        }
    }

    /// Record, step, act.
    fn feed(&mut self, ev: Event, source: Source) {
        let now = self.now();
        telemetry::event(source.name());
        if let Some(r) = self.record.as_mut() {
            if let Ok(line) = serde_json::to_string(&(now, &ev)) {
                let _ = writeln!(r, "{line}").and_then(|()| r.flush());
            }
        }
        if let Event::BgpView { peers } = &ev {
            for p in peers {
                telemetry::bgp_peer_up(&p.peer, p.established);
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
            let families: Vec<String> = self
                .settings
                .tables
                .iter()
                .flat_map(|&t| {
                    [Family::Ipv4, Family::Ipv6].map(|f| match intent.redistribution(t, f) {
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
        telemetry::vips_without_series(&self.series);
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
        if self.publish_ready(ready, reason) {
            for (&(table, prefix), v) in &self.state.vips {
                if !self.series.admit(table, &prefix) {
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
        for (table, prefix) in self.series.take_admitted() {
            match self.state.vips.get(&(table, prefix)) {
                Some(v) if ready => telemetry::vip_state(&prefix, table, v.state),
                _ => telemetry::vip_unknown(&prefix, table),
            }
        }
    }

    fn act(&mut self, a: Action, now: Millis) {
        match a {
            Action::RefreshBgp => self.poll.trigger(),
            Action::WakeAt { at } => {
                if at > now {
                    self.wake_at = Some(self.wake_at.map_or(at, |w| w.min(at)));
                }
            }
            Action::StateChanged {
                table,
                prefix,
                from,
                to,
                drift_ms,
            } => {
                let exported = self.series.admit(table, &prefix);
                // While a view is incomplete the gauge says `unknown`; the
                // readiness change publishes every VIP's class.
                if self.state.ready() && exported {
                    telemetry::vip_state(&prefix, table, to);
                }
                if to.is_drift() {
                    if exported {
                        telemetry::drift(&prefix, to);
                    }
                    match to {
                        reconcile::Class::Blackhole => tracing::warn!(
                            %prefix, table, %from, %to,
                            "VIP drift: advertised, but this node cannot serve it: its address is \
                             missing or unusable (a kube-vip restarted while its backend was down, an \
                             IPv6 dadfailed address) or its backend's health probe fails; the router \
                             sends traffic this node drops; check `ribbridge status` (ADDRESS, \
                             BACKEND) and the RibbridgeVIPBlackhole runbook"
                        ),
                        reconcile::Class::Unready => tracing::warn!(
                            %prefix, table, %from, %to,
                            "VIP drift: advertised while its backend's ready probe fails (the \
                             backend drains): new connections reach a backend about to refuse them; \
                             see the RibbridgeVIPUnready runbook"
                        ),
                        reconcile::Class::CapacityLost => tracing::warn!(
                            %prefix, table, %from, %to,
                            "VIP drift: its backend is up but its route is not in the kernel: this \
                             node could serve it and does not; check that kube-vip runs (see the \
                             RibbridgeVIPCapacityLost runbook)"
                        ),
                        reconcile::Class::Orphaned => tracing::warn!(
                            %prefix, table, %from, %to,
                            "VIP drift: advertised, but its writer stopped re-asserting the route: \
                             nobody will withdraw it when the backend fails; check that kube-vip \
                             runs (see the RibbridgeVIPOrphaned runbook)"
                        ),
                        _ => tracing::warn!(%prefix, table, %from, %to, "VIP drift"),
                    }
                } else if to == reconcile::Class::Unconfigured {
                    // The configuration's own state: no drift, but a person
                    // must act; said for every VIP with series.
                    if exported {
                        tracing::warn!(
                            %prefix, table, %from, %to,
                            "VIP unconfigured: bgpd's configuration does not redistribute its table in its \
                             family; restore the redistribution where FRR's configuration comes from"
                        );
                    }
                } else if exported || drift_ms.is_some() {
                    // Per VIP only for those with series: a first dump of
                    // 100 000 VIPs would log 100 000 lines; a drift's end is
                    // always logged.
                    tracing::info!(%prefix, table, %from, %to, drift_ms, "VIP consistent");
                }
                if let Some(ms) = drift_ms {
                    telemetry::drift_ended(ms);
                }
            }
            Action::GaveUp {
                table,
                prefix,
                class,
            } => {
                if self.series.admit(table, &prefix) {
                    telemetry::heal_given_up(&prefix);
                }
                tracing::error!(%prefix, table, %class, "healing given up after the bounded attempts; the VIP needs an operator");
            }
            Action::Forgot { table, prefix } => {
                telemetry::vip_forgotten();
                self.series.forget(table, &prefix);
                self.routes.remove(&(table, prefix));
                self.legs.remove(&(table, prefix));
                tracing::debug!(%prefix, table, "VIP forgotten: absent from every view past the retention");
            }
            Action::ReapplyDrain => heal::spawn_reconfigure(
                Change::Drain,
                self.settings.frr_dir.clone(),
                self.settings.tables.clone(),
                self.settings.drain_state.clone(),
                ("", true),
                self.results.clone(),
            ),
            Action::Withdraw {
                table,
                prefix,
                out,
                why,
                first,
            } => heal::spawn_reconfigure(
                if out {
                    Change::Withdraw(prefix)
                } else {
                    Change::Restore(prefix)
                },
                self.settings.frr_dir.clone(),
                vec![table],
                self.settings.drain_state.clone(),
                (why.text(), first),
                self.results.clone(),
            ),
            Action::DrainLost { lost } => {
                telemetry::drain_lost(lost);
                if lost {
                    tracing::error!(
                        intent = %self.settings.drain_state.display(),
                        mode = %self.state.config.mode,
                        "the drain recorded by ribbridge drain is lost: bgpd's configuration lacks it \
                         and it is not re-applied (observe mode, an unreadable record, or bgpd refuses it), \
                         so this node advertises its VIPs; end the drain with ribbridge undrain, or fix \
                         what the log names (ribbridge_drain_lost)"
                    );
                } else {
                    tracing::info!("the drain's intent and bgpd's configuration agree again");
                }
            }
            Action::Heal {
                table,
                prefix,
                action,
            } => {
                tracing::warn!(%prefix, table, action = action.name(), "healing");
                heal::spawn(
                    heal::Job {
                        table,
                        prefix,
                        action,
                        lookup: self.lookup.clone(),
                        tables: self.settings.tables.clone(),
                        zebra_vty: self.settings.frr_dir.join("zebra.vty"),
                    },
                    self.results.clone(),
                );
            }
        }
    }
}

async fn sleep(until: Option<Instant>) {
    match until {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
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
    wait: std::time::Duration,
) -> Result<crate::status::StatusDoc, DaemonError> {
    use crate::kernel::{ResyncReason, Watcher, WatcherConfig};
    let start = Instant::now();
    let zero_unix_ms = now_unix_ms();
    let now = || u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
    let mut w = Watcher::new(WatcherConfig {
        tables: s.tables.clone(),
        prefixes: super::mirrored_prefixes(s),
        ..WatcherConfig::default()
    })?;
    let config = reconcile::Config {
        mode: crate::model::Mode::Observe,
        ..super::core_config(s)
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
    let (release, events) = super::frr_tasks::zapi_snapshot(s).await?;
    let mut view = ZapiView::new(s.node_table());
    for ev in &events {
        for e in view.apply(ev) {
            steps(&mut state, &mut wake, e, now());
        }
    }
    drop(events);
    let deadline = start + wait;
    loop {
        for e in super::frr_tasks::poll_once(s).await {
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
    for v in doc.vips.iter_mut().filter(|v| v.pending.is_some()) {
        v.state = crate::status::VipState::UNKNOWN;
    }
    Ok(doc)
}

/// A route's legs as a person names them: the gateway, else the device index.
fn next_hops(r: &Route) -> Vec<String> {
    r.nexthops
        .iter()
        .map(|n| match (n.gateway, n.oif) {
            (Some(g), _) => g.to_string(),
            (None, Some(oif)) => format!("dev if{oif}"),
            (None, None) => "-".to_string(),
        })
        .collect()
}

/// The configured VIPs, in the table the core reports them in.
pub(super) fn configured(s: &Settings) -> Vec<(TableId, Prefix)> {
    let table = s.node_table();
    s.vips.iter().map(|p| (table, *p)).collect()
}

fn now_unix_ms() -> u64 {
    crate::clock::unix_ms()
}
