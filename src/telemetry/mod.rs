//! The metrics catalogue: every metric ribbridge exports is declared here,
//! once, with its help text and unit (ARCHITECTURE.md, rule 4). Other
//! modules record through the functions below, never through a bare name.
//!
//! The recorder is metrics-exporter-prometheus, installed without its own
//! listener: `/metrics` is served by [`crate::http`] next to `/status`.
//! Histograms get explicit buckets so they render as histograms, not
//! summaries. The per-VIP and per-router series are kept here, in
//! [`VipSeries`]' store and the router map, and rendered after the
//! exporter's: the exporter cannot remove a series, and a forgotten VIP's
//! or router's must go (its slot under the detail limit is reused).
//!
//! Unknown is never a value: a gauge whose value is not known yet (a
//! VIP's ECMP legs before the kernel mirror is synced, a backend probe
//! before `rise`/`fall` results, a router's paths while its BMP session is
//! down) has no series then, and its `_known` gauge reads 0; so a `sum()`
//! over nodes is the sum of the known values, and no comparison fires on a
//! guess. The process' own series (`process_*`) come from
//! metrics-process, collected at each render.

use metrics::{
    Unit, counter, describe_counter, describe_gauge, describe_histogram, gauge, histogram,
};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::model::{Prefix, TableId};

mod routers;
mod vips;

use crate::reconcile::Class;
use routers::render_router_paths;
pub use routers::{router_forgotten, router_paths};
pub use vips::{VipSeries, vip_state, vip_unknown, vips_without_series};
use vips::{render_vips, store};

/// `ribbridge_vip_state{prefix,table,state}`: 1 for the current state.
pub const VIP_STATE: &str = "ribbridge_vip_state";
/// `ribbridge_drift_total{prefix,state}`.
pub const DRIFT_TOTAL: &str = "ribbridge_drift_total";
/// `ribbridge_heal_actions_total{action,result}`.
pub const HEAL_ACTIONS_TOTAL: &str = "ribbridge_heal_actions_total";
/// `ribbridge_heal_given_up_total{prefix}`.
pub const HEAL_GIVEN_UP_TOTAL: &str = "ribbridge_heal_given_up_total";
/// `ribbridge_drift_duration_seconds`: from drift to consistent.
pub const DRIFT_DURATION: &str = "ribbridge_drift_duration_seconds";
/// `ribbridge_ecmp_nexthops{prefix,table}`: kernel view (no series while
/// unknown).
pub const ECMP_NEXTHOPS: &str = "ribbridge_ecmp_nexthops";
/// `ribbridge_ecmp_nexthops_known{prefix,table}`: 1 when
/// [`ECMP_NEXTHOPS`] has a value, 0 before the kernel mirror is synced.
pub const ECMP_NEXTHOPS_KNOWN: &str = "ribbridge_ecmp_nexthops_known";
/// `ribbridge_kernel_resyncs_total{reason}`.
pub const KERNEL_RESYNCS_TOTAL: &str = "ribbridge_kernel_resyncs_total";
/// `ribbridge_kernel_reassertions_total`: realm-only replaces seen.
pub const KERNEL_REASSERTIONS_TOTAL: &str = "ribbridge_kernel_reassertions_total";
/// `ribbridge_zapi_connected`: 1 while subscribed to zebra.
pub const ZAPI_CONNECTED: &str = "ribbridge_zapi_connected";
/// `ribbridge_zapi_disconnects_total`: ZAPI sessions that ended or could
/// not start (each is retried with a bounded backoff).
pub const ZAPI_DISCONNECTS_TOTAL: &str = "ribbridge_zapi_disconnects_total";
/// `ribbridge_bgp_peer_up{peer}`.
pub const BGP_PEER_UP: &str = "ribbridge_bgp_peer_up";
/// `ribbridge_build_info{version,revision}`: always 1, one series.
pub const BUILD_INFO: &str = "ribbridge_build_info";
/// `ribbridge_frr_info{release}`: 1 for the FRR release zebra names now
/// (`unknown` before it answered), 0 for one it named before.
pub const FRR_INFO: &str = "ribbridge_frr_info";
/// `ribbridge_events_total{source}`: events the core consumed.
pub const EVENTS_TOTAL: &str = "ribbridge_events_total";
/// `ribbridge_frr_query_errors_total{daemon}`.
pub const FRR_QUERY_ERRORS_TOTAL: &str = "ribbridge_frr_query_errors_total";
/// `ribbridge_ready`: kernel mirror synced and ZAPI subscribed.
pub const READY: &str = "ribbridge_ready";
/// `ribbridge_drained`: 1 while bgpd's configuration holds the drain.
pub const DRAINED: &str = "ribbridge_drained";
/// `ribbridge_heal_deferred_total`: heal actions the node-wide ceiling
/// held back (each then ran in its slot).
pub const HEAL_DEFERRED_TOTAL: &str = "ribbridge_heal_deferred_total";
/// `ribbridge_heal_ceiling_binding`: 1 while the ceiling holds actions back.
pub const HEAL_CEILING_BINDING: &str = "ribbridge_heal_ceiling_binding";
/// `ribbridge_drain_lost`: 1 while the drain's intent file says drained
/// and bgpd's configuration lacks the drain (re-applying it failed).
pub const DRAIN_LOST: &str = "ribbridge_drain_lost";
/// `ribbridge_drain_reapplied_total`: drains re-applied after something
/// (a reload of FRR's configuration) removed them.
pub const DRAIN_REAPPLIED_TOTAL: &str = "ribbridge_drain_reapplied_total";
/// `ribbridge_vip_withdrawals_total{action}`: `withdraw = true` VIPs
/// ribbridge took out of BGP (`withdraw`) or put back (`restore`).
pub const VIP_WITHDRAWALS_TOTAL: &str = "ribbridge_vip_withdrawals_total";
/// `ribbridge_vips_withdrawn_by_ribbridge`: `withdraw = true` VIPs
/// ribbridge holds out of BGP now (or is taking out).
pub const VIPS_WITHDRAWN_BY_RIBBRIDGE: &str = "ribbridge_vips_withdrawn_by_ribbridge";
/// `ribbridge_intent_changes_total`: changes of bgpd's configuration seen
/// (redistribution, route-maps, prefix-lists, outbound policies).
pub const INTENT_CHANGES_TOTAL: &str = "ribbridge_intent_changes_total";
/// `ribbridge_vips_forgotten_total`: discovered VIPs forgotten after the
/// retention (absent from every view).
pub const VIPS_FORGOTTEN_TOTAL: &str = "ribbridge_vips_forgotten_total";
/// `ribbridge_vips_without_series`: VIPs past the detail limit
/// (`max_detailed_vips`, 1 024 by default): without per-VIP
/// series, counted by state in `/status`'s `omitted`, not listed.
pub const VIPS_WITHOUT_SERIES: &str = "ribbridge_vips_without_series";
/// `ribbridge_backend_up{prefix,probe}`: a VIP's backend probe's verdict
/// (1 up, 0 down; no series while unknown), by VIP and probe (`health`,
/// `ready`).
pub const BACKEND_UP: &str = "ribbridge_backend_up";
/// `ribbridge_backend_up_known{prefix,probe}`: 1 when [`BACKEND_UP`] has a
/// verdict, 0 while the probe has not reached `rise` or `fall` results.
pub const BACKEND_UP_KNOWN: &str = "ribbridge_backend_up_known";
/// `ribbridge_probe_duration_seconds`: how long a backend probe took
/// (connection, TLS, the answer's head), by probe.
pub const PROBE_DURATION: &str = "ribbridge_probe_duration_seconds";
/// `ribbridge_probe_failures_total{prefix,probe,reason}`: failed backend
/// probes, by VIP, probe and reason (`refused`, `timeout`, `status`, `tls`,
/// `other`).
pub const PROBE_FAILURES_TOTAL: &str = "ribbridge_probe_failures_total";
/// `ribbridge_probe_reports_dropped_total`: probe results dropped because
/// the daemon was behind (a probe never waits on it).
pub const PROBE_REPORTS_DROPPED_TOTAL: &str = "ribbridge_probe_reports_dropped_total";
/// `ribbridge_log_lines_dropped_total`: log lines dropped because the log's
/// reader did not keep up (`logging`: the writer never blocks).
pub const LOG_LINES_DROPPED_TOTAL: &str = "ribbridge_log_lines_dropped_total";
/// `ribbridge_http_shed_total`: HTTP connections closed unanswered because
/// the endpoint was at its cap (`--http-max-connections`): the oldest one
/// still sending its request head, or the new one when every open
/// connection is being answered.
pub const HTTP_SHED_TOTAL: &str = "ribbridge_http_shed_total";
/// `ribbridge_accept_errors_total{listener}`: failed `accept` calls of the
/// HTTP endpoint (`http`) or the BMP station (`bmp`), out of descriptors
/// (EMFILE, ENFILE) or memory; each is followed by a short pause.
pub const ACCEPT_ERRORS_TOTAL: &str = "ribbridge_accept_errors_total";

/// Series one VIP with metrics holds at least: its state set (every class
/// and `unknown`), its ECMP gauge and the ECMP gauge's `_known` (its drift
/// counters come with its drifts).
pub const SERIES_PER_VIP: usize = Class::ALL.len() + 3;

/// `ribbridge_router_paths{router,prefix}`: paths a router exporting BMP
/// holds for a VIP (no series while unknown); removed when the router is
/// forgotten.
pub const ROUTER_PATHS: &str = "ribbridge_router_paths";
/// `ribbridge_router_stale_paths{router,prefix}`: of those, the paths the
/// router keeps as stale for a peer whose session dropped (graceful
/// restart: it still forwards to them); unknown exactly when
/// [`ROUTER_PATHS`] is; published and removed with it.
pub const ROUTER_STALE_PATHS: &str = "ribbridge_router_stale_paths";
/// `ribbridge_router_paths_known{router,prefix}`: 1 when
/// [`ROUTER_PATHS`] and [`ROUTER_STALE_PATHS`] have values, 0 while the
/// router's BMP session is down or not synced.
pub const ROUTER_PATHS_KNOWN: &str = "ribbridge_router_paths_known";
/// `ribbridge_bmp_messages_total{kind}`: BMP messages the station decoded.
pub const BMP_MESSAGES_TOTAL: &str = "ribbridge_bmp_messages_total";
/// `ribbridge_bmp_session_ends_total{reason}`: BMP sessions that ended.
pub const BMP_SESSION_ENDS_TOTAL: &str = "ribbridge_bmp_session_ends_total";
/// `ribbridge_bmp_sessions`: BMP sessions open now.
pub const BMP_SESSIONS: &str = "ribbridge_bmp_sessions";
/// `ribbridge_bmp_refused_total{reason}`: what the station refused to take
/// (`not_allowed`, `sessions_per_address`, `sessions`, `routers`, `peers`,
/// `paths`).
pub const BMP_REFUSED_TOTAL: &str = "ribbridge_bmp_refused_total";
/// `ribbridge_bmp_skipped_nlri_total{afi,safi}`: MP_REACH/MP_UNREACH
/// attributes of families the station does not count, skipped by length.
pub const BMP_SKIPPED_NLRI_TOTAL: &str = "ribbridge_bmp_skipped_nlri_total";
/// `ribbridge_bmp_update_anomalies_total{reason}`: announcing UPDATEs with
/// a missing or malformed attribute (RFC 7606's treat-as-withdraw cases),
/// by reason (`bmp::Anomaly::label`); their paths still count.
pub const BMP_UPDATE_ANOMALIES_TOTAL: &str = "ribbridge_bmp_update_anomalies_total";
/// `ribbridge_bmp_sync_fallbacks_total`: router peers taken as dumped
/// without their End-of-RIB.
pub const BMP_SYNC_FALLBACKS_TOTAL: &str = "ribbridge_bmp_sync_fallbacks_total";

/// `ribbridge_task_restarts_total{task}`: supervised tasks restarted after
/// they ended or panicked (a poller, the ZAPI client); a steady rise is a
/// restart loop.
pub const TASK_RESTARTS_TOTAL: &str = "ribbridge_task_restarts_total";
/// `ribbridge_task_failures_total{task,how}`: supervised tasks that ended
/// (`how`: `error`, `ended`, `panic`), restarted or not.
pub const TASK_FAILURES_TOTAL: &str = "ribbridge_task_failures_total";

/// `ribbridge_owner_lag_seconds{timer}`: how late the owner loop served
/// its own timers (`heartbeat`, `deadline`): its backlog under load.
pub const OWNER_LAG: &str = "ribbridge_owner_lag_seconds";
/// Buckets of the owner's lag, seconds: a free loop is under a millisecond.
pub const OWNER_LAG_BUCKETS: &[f64] = &[
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// Buckets of a backend probe's duration, seconds: a local answer is a
/// millisecond, a probe's timeout is seconds.
pub const PROBE_BUCKETS: &[f64] = &[
    0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// Buckets of the drift duration, seconds: from zebra's 10 ms to minutes.
pub const DRIFT_BUCKETS: &[f64] = &[
    0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 30.0, 60.0, 300.0,
];

/// Why the metrics recorder cannot be installed.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    /// The histogram bucket list was refused (a bug in this catalogue).
    #[error("metrics: bad bucket list: {0}")]
    Buckets(#[from] metrics_exporter_prometheus::BuildError),
    /// Another recorder is installed in this process.
    #[error("metrics: a recorder is already installed in this process")]
    AlreadyInstalled,
}

/// Install the recorder and declare every metric. Returns the handle that
/// renders `/metrics`.
pub fn install() -> Result<PrometheusHandle, TelemetryError> {
    let recorder = PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Full(DRIFT_DURATION.to_string()), DRIFT_BUCKETS)?
        .set_buckets_for_metric(Matcher::Full(OWNER_LAG.to_string()), OWNER_LAG_BUCKETS)?
        .set_buckets_for_metric(Matcher::Full(PROBE_DURATION.to_string()), PROBE_BUCKETS)?
        .build_recorder();
    let handle = recorder.handle();
    metrics::set_global_recorder(recorder).map_err(|_| TelemetryError::AlreadyInstalled)?;
    describe();
    Ok(handle)
}

/// Declare help texts and units (idempotent).
pub fn describe() {
    PROCESS.describe();
    describe_histogram!(
        PROBE_DURATION,
        Unit::Seconds,
        "How long a backend probe took (connection, TLS, the answer's head)"
    );
    describe_counter!(
        PROBE_FAILURES_TOTAL,
        "Failed backend probes, by VIP, probe and reason"
    );
    describe_counter!(
        PROBE_REPORTS_DROPPED_TOTAL,
        "Backend probe results dropped because the daemon was behind"
    );
    describe_counter!(
        HEAL_ACTIONS_TOTAL,
        "Heal actions executed, by action and result"
    );
    describe_histogram!(
        OWNER_LAG,
        Unit::Seconds,
        "How late the owner loop served its own timers (heartbeat, deadline): its backlog under load"
    );
    describe_histogram!(
        DRIFT_DURATION,
        Unit::Seconds,
        "Time from a drift being declared to the VIP being consistent again"
    );
    describe_counter!(
        KERNEL_RESYNCS_TOTAL,
        "Full re-dumps of the watched kernel tables, by reason"
    );
    describe_counter!(
        KERNEL_REASSERTIONS_TOTAL,
        "Realm-only replaces (kube-vip re-assertions): seen, not changes"
    );
    describe_gauge!(
        ZAPI_CONNECTED,
        "1 while subscribed to zebra's redistribution over ZAPI"
    );
    describe_counter!(
        ZAPI_DISCONNECTS_TOTAL,
        "ZAPI sessions that ended or could not start; each is retried with a backoff capped at 1 s"
    );
    describe_gauge!(
        BGP_PEER_UP,
        "1 while the BGP session to the peer is Established"
    );
    describe_gauge!(
        BUILD_INFO,
        "Always 1; labels name the ribbridge version and its git revision"
    );
    describe_gauge!(
        FRR_INFO,
        "1 for the FRR release zebra names (unknown before it answered), 0 for one it named before"
    );
    describe_counter!(EVENTS_TOTAL, "Events consumed by the core, by source");
    describe_counter!(FRR_QUERY_ERRORS_TOTAL, "Failed vty queries, by daemon");
    describe_gauge!(
        READY,
        "1 when the kernel mirror is synced and zebra's view is complete"
    );
    describe_counter!(
        BMP_MESSAGES_TOTAL,
        "BMP messages decoded by the station, by kind (initiation, peer_up, peer_down, route, stats, termination, ignored)"
    );
    describe_counter!(
        BMP_SESSION_ENDS_TOTAL,
        "BMP sessions that ended, by reason (closed, termination, malformed, io)"
    );
    describe_gauge!(BMP_SESSIONS, "BMP sessions from routers open now");
    describe_counter!(
        BMP_REFUSED_TOTAL,
        "What the BMP station refused: connections (not_allowed, sessions_per_address, sessions) and state (routers, peers, paths), by reason"
    );
    describe_counter!(
        BMP_SKIPPED_NLRI_TOTAL,
        "MP_REACH/MP_UNREACH attributes of families the BMP station does not count (VPN, EVPN, ...), skipped by length, by AFI and SAFI (numbers; `other` beyond the assigned ones)"
    );
    describe_counter!(
        BMP_UPDATE_ANOMALIES_TOTAL,
        "Announcing UPDATEs in BMP Route Monitoring with a missing or malformed attribute (RFC 7606's treat-as-withdraw cases; the station still counts their paths), by reason"
    );
    describe_counter!(
        BMP_SYNC_FALLBACKS_TOTAL,
        "Router peers the BMP station took as dumped after --bmp-sync-secs without their End-of-RIB"
    );
    describe_gauge!(
        VIPS_WITHOUT_SERIES,
        "Discovered VIPs past the detail limit (--max-detailed-vips, default 1024): classified and healed, but without per-VIP series and only counted in /status (omitted)"
    );
    describe_gauge!(
        DRAINED,
        "1 while the node is drained (ribbridge drain): bgpd sends its VIPs to no peer on purpose"
    );
    describe_counter!(
        HEAL_DEFERRED_TOTAL,
        "Heal actions held back by the node-wide ceiling (--heal-rate, --heal-burst), each run later in its slot"
    );
    describe_gauge!(
        HEAL_CEILING_BINDING,
        "1 while the node-wide ceiling on heal actions holds actions back"
    );
    describe_gauge!(
        DRAIN_LOST,
        "1 while the drain's intent file says drained but bgpd's configuration lacks the drain and re-applying it failed"
    );
    describe_counter!(
        DRAIN_REAPPLIED_TOTAL,
        "Drains re-applied after bgpd's configuration lost them (a reload of FRR's configuration)"
    );
    describe_counter!(
        VIP_WITHDRAWALS_TOTAL,
        "withdraw = true VIPs ribbridge took out of BGP (action=withdraw) or put back (action=restore)"
    );
    describe_gauge!(
        VIPS_WITHDRAWN_BY_RIBBRIDGE,
        "withdraw = true VIPs ribbridge holds out of BGP now, or is taking out: their backend failed and their writer is silent or their address unusable"
    );
    describe_counter!(
        INTENT_CHANGES_TOTAL,
        "Changes of bgpd's configuration that change what it should advertise"
    );
    describe_counter!(
        VIPS_FORGOTTEN_TOTAL,
        "Discovered VIPs forgotten after the retention, absent from every view"
    );
    describe_counter!(
        LOG_LINES_DROPPED_TOTAL,
        "Log lines dropped, not written, because the log's reader (the container runtime's pipe, journald) stopped reading"
    );
    describe_counter!(
        HTTP_SHED_TOTAL,
        "HTTP connections closed unanswered because the endpoint was at its connection cap (the oldest still sending its request, or the new one)"
    );
    describe_counter!(
        ACCEPT_ERRORS_TOTAL,
        "Failed accepts of a listener (http, bmp): out of descriptors or memory; the listener pauses briefly after each"
    );
    describe_counter!(
        TASK_RESTARTS_TOTAL,
        "Supervised tasks restarted after they ended or panicked, by task"
    );
    describe_counter!(
        TASK_FAILURES_TOTAL,
        "Supervised tasks that ended before the daemon stopped, by task and how (error, ended, panic)"
    );
}

/// The owner served `timer` (`heartbeat`, `deadline`) `late` after it was due.
pub fn owner_lag(timer: &'static str, late: std::time::Duration) {
    histogram!(OWNER_LAG, "timer" => timer).record(late.as_secs_f64());
}

/// A supervised task ended (`how`: error, ended, panic).
pub fn task_failed(task: &'static str, how: &'static str) {
    counter!(TASK_FAILURES_TOTAL, "task" => task, "how" => how).increment(1);
}

/// A supervised task was restarted.
pub fn task_restarted(task: &'static str) {
    counter!(TASK_RESTARTS_TOTAL, "task" => task).increment(1);
}

/// The ceiling on heal actions: held-back actions since the last call,
/// and whether it binds now.
pub fn heal_ceiling(new_deferred: u64, binding: bool) {
    if new_deferred > 0 {
        counter!(HEAL_DEFERRED_TOTAL).increment(new_deferred);
    }
    gauge!(HEAL_CEILING_BINDING).set(if binding { 1.0 } else { 0.0 });
}

/// The drain's intent is lost (true) or holds (false).
pub fn drain_lost(lost: bool) {
    gauge!(DRAIN_LOST).set(if lost { 1.0 } else { 0.0 });
}

/// A drain was re-applied.
pub fn drain_reapplied() {
    counter!(DRAIN_REAPPLIED_TOTAL).increment(1);
}

/// ribbridge took a `withdraw = true` VIP out of BGP (`out`) or put it
/// back.
pub fn vip_withdrawal(out: bool) {
    let action = if out { "withdraw" } else { "restore" };
    counter!(VIP_WITHDRAWALS_TOTAL, "action" => action).increment(1);
}

/// How many VIPs ribbridge holds out of BGP (`withdraw = true`).
pub fn vips_withdrawn_by_ribbridge(n: usize) {
    gauge!(VIPS_WITHDRAWN_BY_RIBBRIDGE).set(n as f64);
}

/// bgpd's configuration changed what it should advertise.
pub fn intent_changed() {
    counter!(INTENT_CHANGES_TOTAL).increment(1);
}

/// One backend probe's result: its duration, its failure's reason, its
/// verdict (`up`: Some(true), `down`: Some(false), unknown: None).
pub fn probe(
    prefix: &Prefix,
    probe: &'static str,
    took: std::time::Duration,
    failure: Option<&'static str>,
    up: Option<bool>,
) {
    histogram!(PROBE_DURATION, "probe" => probe).record(took.as_secs_f64());
    if let Some(reason) = failure {
        counter!(PROBE_FAILURES_TOTAL, "prefix" => prefix.to_string(), "probe" => probe, "reason" => reason)
            .increment(1);
    }
    store().backends.insert((*prefix, probe), up);
}

/// Probe results dropped so far.
pub fn probe_reports_dropped(total: u64) {
    counter!(PROBE_REPORTS_DROPPED_TOTAL).absolute(total);
}

/// The log writer's drop count since the start.
pub fn log_lines_dropped(total: u64) {
    counter!(LOG_LINES_DROPPED_TOTAL).absolute(total);
}

/// The HTTP endpoint closed a connection because it was at its cap.
pub fn http_shed() {
    counter!(HTTP_SHED_TOTAL).increment(1);
}

/// `listener` (`http`, `bmp`) failed an accept.
pub fn accept_error(listener: &'static str) {
    counter!(ACCEPT_ERRORS_TOTAL, "listener" => listener).increment(1);
}

/// A discovered VIP was forgotten.
pub fn vip_forgotten() {
    counter!(VIPS_FORGOTTEN_TOTAL).increment(1);
}

/// The `state` label of a VIP whose views are incomplete.
pub const UNKNOWN_STATE: &str = "unknown";

/// The `release` label of `ribbridge_frr_info` before zebra answered.
pub const UNKNOWN_RELEASE: &str = "unknown";

/// HELP and TYPE lines of a series family.
fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

/// A VIP's ECMP legs before the kernel mirror is synced: no value (its
/// `_known` reads 0), so that no comparison (an alert on fewer than 2
/// paths) fires on a guess and no sum is poisoned.
pub fn ecmp_unknown(prefix: &Prefix, table: TableId) {
    store().vips.entry((table, *prefix)).or_default().ecmp = None;
}

/// A drift was declared.
pub fn drift(prefix: &Prefix, state: Class) {
    *store()
        .drifts
        .entry(*prefix)
        .or_default()
        .entry(state.name())
        .or_default() += 1;
}

/// A drift ended after `ms`.
pub fn drift_ended(ms: u64) {
    histogram!(DRIFT_DURATION).record(ms as f64 / 1000.0);
}

/// A heal action finished with `result` (`ok`, `error`).
pub fn heal_action(action: &str, result: &str) {
    counter!(HEAL_ACTIONS_TOTAL, "action" => action.to_string(), "result" => result.to_string())
        .increment(1);
}

/// Healing a VIP was given up.
pub fn heal_given_up(prefix: &Prefix) {
    *store().given_up.entry(*prefix).or_default() += 1;
}

/// ECMP legs of a VIP in the kernel.
pub fn ecmp_nexthops(prefix: &Prefix, table: TableId, n: u32) {
    store().vips.entry((table, *prefix)).or_default().ecmp = Some(n);
}

/// A kernel resync happened.
pub fn kernel_resync(reason: &str) {
    counter!(KERNEL_RESYNCS_TOTAL, "reason" => reason.to_string()).increment(1);
}

/// A realm-only re-assertion was seen.
pub fn kernel_reassertion() {
    counter!(KERNEL_REASSERTIONS_TOTAL).increment(1);
}

/// ZAPI session up or down.
pub fn zapi_connected(up: bool) {
    gauge!(ZAPI_CONNECTED).set(if up { 1.0 } else { 0.0 });
}

/// A ZAPI session ended or could not start.
pub fn zapi_disconnect() {
    counter!(ZAPI_DISCONNECTS_TOTAL).increment(1);
}

/// A BGP peer's session state.
pub fn bgp_peer_up(peer: &str, up: bool) {
    gauge!(BGP_PEER_UP, "peer" => peer.to_string()).set(if up { 1.0 } else { 0.0 });
}

/// This build: its version and git revision.
pub fn build_info() {
    gauge!(BUILD_INFO, "version" => env!("CARGO_PKG_VERSION"), "revision" => env!("RIBBRIDGE_REVISION")).set(1.0);
}

/// The FRR release zebra names: 1 for it; an earlier one's series stays
/// (the exporter cannot drop it) but at 0.
pub fn frr_info(previous: Option<&str>, release: &str) {
    if let Some(old) = previous.filter(|old| *old != release) {
        gauge!(FRR_INFO, "release" => old.to_string()).set(0.0);
    }
    gauge!(FRR_INFO, "release" => release.to_string()).set(1.0);
}

/// One event consumed by the core.
pub fn event(source: &'static str) {
    counter!(EVENTS_TOTAL, "source" => source).increment(1);
}

/// A vty query failed.
pub fn frr_query_error(daemon: &'static str) {
    counter!(FRR_QUERY_ERRORS_TOTAL, "daemon" => daemon).increment(1);
}

/// Readiness.
pub fn ready(ready: bool) {
    gauge!(READY).set(if ready { 1.0 } else { 0.0 });
}

/// A BMP message of `kind` was decoded.
pub fn bmp_message(kind: &'static str) {
    counter!(BMP_MESSAGES_TOTAL, "kind" => kind).increment(1);
}

/// A BMP session ended (`closed`, `termination`, `malformed`, `io`).
pub fn bmp_session_end(reason: &'static str) {
    counter!(BMP_SESSION_ENDS_TOTAL, "reason" => reason).increment(1);
}

/// The station refused `n` of something (see [`BMP_REFUSED_TOTAL`]).
pub fn bmp_refused(reason: &'static str, n: u64) {
    counter!(BMP_REFUSED_TOTAL, "reason" => reason).increment(n);
}

/// `n` attributes of family (afi, safi) were skipped. The label values are
/// bounded: numbers for the AFIs and SAFIs IANA assigns to routing
/// families a router carries, `other` for anything else a router sends.
pub fn bmp_skipped_nlri(afi: u16, safi: u8, n: u64) {
    let known_afi = matches!(afi, 1 | 2 | 25 | 16388 | 16399);
    let known_safi = matches!(safi, 1..=6 | 64..=80 | 128..=134);
    let (a, s) = if known_afi && known_safi {
        (afi.to_string(), safi.to_string())
    } else {
        ("other".to_string(), "other".to_string())
    };
    counter!(BMP_SKIPPED_NLRI_TOTAL, "afi" => a, "safi" => s).increment(n);
}

/// An announcing UPDATE had this anomaly (a label of a fixed set).
pub fn bmp_update_anomaly(reason: &'static str) {
    counter!(BMP_UPDATE_ANOMALIES_TOTAL, "reason" => reason).increment(1);
}

/// `n` router peers were taken as dumped without their End-of-RIB.
pub fn bmp_sync_fallbacks(n: u64) {
    counter!(BMP_SYNC_FALLBACKS_TOTAL).increment(n);
}

/// BMP sessions open now.
pub fn bmp_sessions(n: usize) {
    gauge!(BMP_SESSIONS).set(n as f64);
}

/// The process' own series, under the names Prometheus' client libraries
/// give them, read from /proc at each render by metrics-process (which
/// also exports `process_virtual_memory_max_bytes` and `process_threads`).
pub const PROCESS_METRICS: &[&str] = &[
    "process_resident_memory_bytes",
    "process_virtual_memory_bytes",
    "process_open_fds",
    "process_max_fds",
    "process_cpu_seconds_total",
    "process_start_time_seconds",
];

/// The collector of [`PROCESS_METRICS`].
static PROCESS: std::sync::LazyLock<metrics_process::Collector> =
    std::sync::LazyLock::new(metrics_process::Collector::default);

/// The whole `/metrics` text: the process' series collected, the
/// exporter's, then the series kept here.
pub fn render(handle: &PrometheusHandle) -> String {
    PROCESS.collect();
    let mut out = handle.render();
    render_vips(&mut out);
    render_router_paths(&mut out);
    out
}

/// A Prometheus label value: backslash, quote and newline escaped (a
/// router's sysName is the router's text, not ours).
fn label_value(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The drain as last read from bgpd's configuration.
pub fn drained(drained: bool) {
    gauge!(DRAINED).set(if drained { 1.0 } else { 0.0 });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_series_gate_admits_configured_vips_and_a_bounded_number_of_others() {
        let p = |s: &str| -> Prefix { s.parse().expect("prefix") };
        let mut g = VipSeries::new([(198, p("192.0.2.10/32"))], 2);
        assert!(g.admit(198, &p("192.0.2.20/32")));
        assert!(g.admit(198, &p("192.0.2.21/32")));
        // Full: a third discovered VIP gets no series...
        assert!(!g.admit(198, &p("192.0.2.22/32")));
        // ...but the configured one and those admitted keep theirs.
        assert!(g.admit(198, &p("192.0.2.10/32")));
        assert!(g.admit(198, &p("192.0.2.20/32")));
        assert_eq!(g.admitted(), 3);
        // The same prefix in another table is another VIP.
        assert!(!g.admit(199, &p("192.0.2.10/32")));
    }

    #[test]
    fn a_vip_refused_by_the_gate_creates_no_series() {
        let recorder = PrometheusBuilder::new().build_recorder();
        let handle = recorder.handle();
        let p: Prefix = "192.0.2.30/32".parse().expect("prefix");
        let mut g = VipSeries::new([], 0);
        let text = metrics::with_local_recorder(&recorder, || {
            describe();
            if g.admit(198, &p) {
                vip_state(&p, 198, Class::Advertised);
                ecmp_nexthops(&p, 198, 1);
            }
            vips_without_series(&g);
            render(&handle)
        });
        assert!(!text.contains("192.0.2.30"), "{text}");
        assert!(text.contains("ribbridge_vips_without_series 1"), "{text}");
    }

    /// The lines of `text` that name `prefix`.
    fn lines_of(text: &str, prefix: &str) -> Vec<String> {
        let needle = format!("prefix=\"{prefix}\"");
        text.lines()
            .filter(|l| l.contains(&needle))
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn an_admitted_vip_has_all_its_series_whatever_its_first_state() {
        // A VIP discovered after the start whose first state is the
        // initial `withdrawn` gets no state change: admitting it creates
        // its state set and its ECMP gauge's `_known`, and hands it to the
        // owner to publish its state.
        let recorder = PrometheusBuilder::new().build_recorder();
        let handle = recorder.handle();
        let p: Prefix = "198.51.100.1/32".parse().expect("prefix");
        let mut g = VipSeries::new([], 4);
        assert!(g.admit(1001, &p));
        let text = metrics::with_local_recorder(&recorder, || render(&handle));
        let lines = lines_of(&text, "198.51.100.1/32");
        assert_eq!(
            lines.len(),
            Class::ALL.len() + 2,
            "every state, unknown, the ECMP known gauge: {lines:#?}"
        );
        assert!(lines.contains(
            &"ribbridge_vip_state{prefix=\"198.51.100.1/32\",table=\"1001\",state=\"unknown\"} 1"
                .to_string()
        ));
        assert!(
            lines.contains(
                &"ribbridge_ecmp_nexthops_known{prefix=\"198.51.100.1/32\",table=\"1001\"} 0"
                    .to_string()
            )
        );
        assert_eq!(g.take_admitted(), vec![(1001, p)]);
        assert!(g.take_admitted().is_empty(), "handed over once");
        vip_state(&p, 1001, Class::Withdrawn);
        let text = metrics::with_local_recorder(&recorder, || render(&handle));
        assert!(
            text.contains(
                "ribbridge_vip_state{prefix=\"198.51.100.1/32\",table=\"1001\",state=\"withdrawn\"} 1"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_forgotten_vip_loses_its_series_and_frees_its_slot() {
        let recorder = PrometheusBuilder::new().build_recorder();
        let handle = recorder.handle();
        let a: Prefix = "198.51.100.2/32".parse().expect("prefix");
        let b: Prefix = "198.51.100.3/32".parse().expect("prefix");
        let mut g = VipSeries::new([], 1);
        assert!(g.admit(1002, &a));
        vip_state(&a, 1002, Class::Withdrawn);
        ecmp_nexthops(&a, 1002, 0);
        drift(&a, Class::KernelOnly);
        heal_given_up(&a);
        // Full: b is refused, and counted.
        assert!(!g.admit(1002, &b));
        let without = metrics::with_local_recorder(&recorder, || vips_without_series(&g));
        assert_eq!(without, 1);
        g.forget(1002, &a);
        // b's next event finds the slot free.
        assert!(g.admit(1002, &b));
        let text = metrics::with_local_recorder(&recorder, || {
            vips_without_series(&g);
            render(&handle)
        });
        assert!(lines_of(&text, "198.51.100.2/32").is_empty(), "{text}");
        assert!(!lines_of(&text, "198.51.100.3/32").is_empty(), "{text}");
        assert!(text.contains("ribbridge_vips_without_series 0"), "{text}");
        assert_eq!(g.admitted(), 1);
        // A refused VIP forgotten is no longer counted.
        let c: Prefix = "198.51.100.4/32".parse().expect("prefix");
        assert!(!g.admit(1002, &c));
        assert_eq!(g.without_series(), 1);
        g.forget(1002, &c);
        assert_eq!(g.without_series(), 0);
    }

    #[test]
    fn a_configured_vip_keeps_its_series_when_forgotten() {
        let p: Prefix = "198.51.100.5/32".parse().expect("prefix");
        let mut g = VipSeries::new([(1003, p)], 0);
        vip_unknown(&p, 1003);
        g.forget(1003, &p);
        assert!(g.has(1003, &p));
        let recorder = PrometheusBuilder::new().build_recorder();
        let text = metrics::with_local_recorder(&recorder, || render(&recorder.handle()));
        assert!(!lines_of(&text, "198.51.100.5/32").is_empty(), "{text}");
    }

    #[test]
    fn an_unknown_value_has_no_series_and_its_known_gauge_reads_0() {
        let recorder = PrometheusBuilder::new().build_recorder();
        let handle = recorder.handle();
        let p: Prefix = "198.51.100.6/32".parse().expect("prefix");
        let q: Prefix = "198.51.100.7/32".parse().expect("prefix");
        ecmp_unknown(&p, 1004);
        ecmp_nexthops(&q, 1004, 2);
        let took = std::time::Duration::from_millis(3);
        metrics::with_local_recorder(&recorder, || {
            probe(&p, "health", took, Some("refused"), None);
            probe(&q, "health", took, None, Some(true));
        });
        router_paths("rb-test-known", &p, None, None);
        router_paths("rb-test-known", &q, Some(3), Some(1));
        let text = metrics::with_local_recorder(&recorder, || render(&handle));
        let p_lines = lines_of(&text, "198.51.100.6/32");
        for l in &p_lines {
            assert!(!l.contains("NaN"), "unknown is no value: {l}");
        }
        for needle in [
            "ribbridge_ecmp_nexthops_known{prefix=\"198.51.100.6/32\",table=\"1004\"} 0",
            "ribbridge_backend_up_known{prefix=\"198.51.100.6/32\",probe=\"health\"} 0",
            "ribbridge_router_paths_known{router=\"rb-test-known\",prefix=\"198.51.100.6/32\"} 0",
            "ribbridge_ecmp_nexthops{prefix=\"198.51.100.7/32\",table=\"1004\"} 2",
            "ribbridge_ecmp_nexthops_known{prefix=\"198.51.100.7/32\",table=\"1004\"} 1",
            "ribbridge_backend_up{prefix=\"198.51.100.7/32\",probe=\"health\"} 1",
            "ribbridge_backend_up_known{prefix=\"198.51.100.7/32\",probe=\"health\"} 1",
            "ribbridge_router_paths{router=\"rb-test-known\",prefix=\"198.51.100.7/32\"} 3",
            "ribbridge_router_stale_paths{router=\"rb-test-known\",prefix=\"198.51.100.7/32\"} 1",
            "ribbridge_router_paths_known{router=\"rb-test-known\",prefix=\"198.51.100.7/32\"} 1",
        ] {
            assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
        }
        for absent in [
            "ribbridge_ecmp_nexthops{prefix=\"198.51.100.6/32\"",
            "ribbridge_backend_up{prefix=\"198.51.100.6/32\"",
            "ribbridge_router_paths{router=\"rb-test-known\",prefix=\"198.51.100.6/32\"",
            "ribbridge_router_stale_paths{router=\"rb-test-known\",prefix=\"198.51.100.6/32\"",
        ] {
            assert!(!text.contains(absent), "{absent:?} while unknown:\n{text}");
        }
        router_forgotten("rb-test-known");
    }

    #[test]
    fn the_process_series_are_exported_under_their_standard_names() {
        let recorder = PrometheusBuilder::new().build_recorder();
        let handle = recorder.handle();
        let text = metrics::with_local_recorder(&recorder, || {
            describe();
            render(&handle)
        });
        for &name in PROCESS_METRICS {
            let value = text
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{name} ")))
                .unwrap_or_else(|| panic!("no {name} in:\n{text}"));
            let v: f64 = value.parse().expect("a number");
            if name != "process_cpu_seconds_total" {
                assert!(v > 0.0, "{name} {v}");
            }
            assert!(text.contains(&format!("# TYPE {name} ")), "{name}'s TYPE");
        }
    }

    #[test]
    fn catalogue_renders_help_types_and_histogram_buckets() {
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Full(DRIFT_DURATION.to_string()), DRIFT_BUCKETS)
            .expect("buckets")
            .build_recorder();
        let handle = recorder.handle();
        metrics::with_local_recorder(&recorder, || {
            describe();
            let p: Prefix = "192.0.2.10/32".parse().expect("prefix");
            vip_state(&p, 198, Class::KernelOnly);
            drift(&p, Class::KernelOnly);
            drift_ended(1_250);
            heal_action("realm_toggle", "ok");
            ecmp_nexthops(&p, 198, 2);
            zapi_connected(true);
            build_info();
            frr_info(None, "8.4");
            frr_info(Some("8.4"), "10.7");
        });
        router_paths(
            "rb-test-\"r1\"",
            &"192.0.2.10/32".parse().expect("prefix"),
            Some(2),
            Some(1),
        );
        router_paths(
            "rb-test-r2",
            &"192.0.2.10/32".parse().expect("prefix"),
            None,
            None,
        );
        router_paths(
            "rb-test-gone",
            &"192.0.2.10/32".parse().expect("prefix"),
            Some(1),
            Some(0),
        );
        router_forgotten("rb-test-gone");
        let text = render(&handle);
        for needle in [
            "# TYPE ribbridge_router_paths gauge",
            "ribbridge_router_paths{router=\"rb-test-\\\"r1\\\"\",prefix=\"192.0.2.10/32\"} 2\n",
            "ribbridge_router_paths_known{router=\"rb-test-r2\",prefix=\"192.0.2.10/32\"} 0\n",
            "# TYPE ribbridge_router_stale_paths gauge",
            "ribbridge_router_stale_paths{router=\"rb-test-\\\"r1\\\"\",prefix=\"192.0.2.10/32\"} 1\n",
            "# HELP ribbridge_vip_state",
            "# TYPE ribbridge_drift_duration_seconds histogram",
            "ribbridge_drift_duration_seconds_bucket{le=\"2\"} 1",
            "ribbridge_vip_state{prefix=\"192.0.2.10/32\",table=\"198\",state=\"kernel_only\"} 1",
            "ribbridge_vip_state{prefix=\"192.0.2.10/32\",table=\"198\",state=\"advertised\"} 0",
            "ribbridge_heal_actions_total{action=\"realm_toggle\",result=\"ok\"} 1",
            "ribbridge_ecmp_nexthops{prefix=\"192.0.2.10/32\",table=\"198\"} 2",
            "ribbridge_zapi_connected 1",
            "ribbridge_vip_state{prefix=\"192.0.2.10/32\",table=\"198\",state=\"unknown\"} 0",
            "ribbridge_frr_info{release=\"8.4\"} 0",
            "ribbridge_frr_info{release=\"10.7\"} 1",
            concat!("revision=\"", env!("RIBBRIDGE_REVISION"), "\""),
        ] {
            assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
        }
        assert!(
            !text.contains("rb-test-gone"),
            "a forgotten router's series stays:\n{text}"
        );
    }
}
