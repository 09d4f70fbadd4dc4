//! The `/status` document: the per-VIP join table.
//!
//! Contract: [`document`] is a pure function of the core's state (plus the
//! wall-clock time of the daemon's monotonic zero, to print `since`); the
//! HTTP endpoint serves it as JSON and [`render_table`] makes the table a
//! person reads at a glance. A node-vantage document shows the join
//! (kernel, zebra, peers); a router-vantage one only what a router knows
//! (the table, the paths and their next hops); a bmp-vantage one (a BMP
//! station) has no VIP rows of its own but one entry per router exporting
//! to it ([`RouterStatus`]): per VIP, the paths the router holds and which
//! of its BGP peers hold one. The station builds those entries from its view
//! (`bmp::station`, where their shape is defined); this module only places
//! and prints them.

use serde::{Deserialize, Serialize};

pub use crate::bmp::station::{RouterPeer, RouterStatus, RouterVip};
use crate::config::{NodeRole, RouterRole, StationRole};
use crate::model::{Mode, Vantage};
use crate::model::{Prefix, TableId, rfc3339};
use crate::reconcile::{Class, Millis, State, WriterState};

/// The version of the `/status` document's shape: raised when a field is
/// removed or changes meaning (fields are only ever added within one). 1:
/// `schema`, `node` and `generated` appear; a document without `schema`
/// is of the same shape but for them (read as 0).
pub const STATUS_SCHEMA: u32 = 1;

/// The `/status` document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatusDoc {
    /// The document's shape ([`STATUS_SCHEMA`]).
    #[serde(default)]
    pub schema: u32,
    /// The node (or host) that answered: `NODE_NAME` (the downward API's
    /// `spec.nodeName` in the shipped manifests), else the host name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// When the document was made (RFC 3339, UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated: Option<String>,
    /// FRR release in use (`null` before zebra answered).
    pub frr_release: Option<String>,
    /// `observe` or `repair`.
    pub mode: String,
    /// `node` (the full join) or `router` (the kernel's paths only).
    #[serde(default)]
    pub vantage: Vantage,
    /// Kernel mirror synced and zebra's view complete.
    pub ready: bool,
    /// Why not ready (which view is missing and what to check).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_ready: Option<String>,
    /// One entry per VIP, sorted by table then prefix (empty at a BMP
    /// station: its answer is `routers`).
    pub vips: Vec<VipStatus>,
    /// BMP station only: every router that exported to it and is not
    /// forgotten yet, sorted by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub routers: Vec<RouterStatus>,
    /// Repair mode's node-wide ceiling on heal actions (node vantage).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heal_ceiling: Option<CeilingStatus>,
    /// The VIPs past the detail limit (`max_detailed_vips` discovered VIPs;
    /// configured ones are always listed): counted by state, not listed,
    /// so the document stays small whatever table 198 holds.
    #[serde(default, skip_serializing_if = "Omitted::is_empty")]
    pub omitted: Omitted,
}

/// VIPs the document counts but does not list.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Omitted {
    /// How many.
    pub count: u64,
    /// How many in each state (its name, as in `vips[].state`).
    pub by_state: std::collections::BTreeMap<String, u64>,
}

impl Omitted {
    /// None omitted.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

/// The node-wide ceiling on heal actions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CeilingStatus {
    /// Actions a second, on average.
    pub rate_per_s: u32,
    /// Actions at once, at most.
    pub burst: u32,
    /// Actions it held back since the start.
    pub deferred: u64,
    /// It holds actions back now.
    pub binding: bool,
}

/// One VIP in `/status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VipStatus {
    /// The VIP.
    pub prefix: Prefix,
    /// The watched table.
    pub table: TableId,
    /// The class, or `unknown` while a view it needs is incomplete.
    pub state: VipState,
    /// The kernel holds it (`null`: the kernel mirror is not synced).
    pub kernel: Option<bool>,
    /// zebra redistributes it (`null`: zebra's view is not complete).
    pub zebra: Option<bool>,
    /// Each BGP peer: established, and whether it is sent the VIP.
    pub peers: Vec<PeerStatus>,
    /// ECMP legs in the kernel (0 when absent; `null`: not synced).
    pub ecmp_nexthops: Option<u32>,
    /// The legs' next hops (gateway, else the device), when the daemon
    /// knows them (the router vantage's whole answer): the daemon keeps
    /// them for the VIPs with per-VIP series only (configured and the
    /// first 1 024 discovered); a VIP beyond them shows none here, its leg
    /// count is `ecmp_nexthops` and its route is in `ribbridge kernel`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nexthops: Vec<String>,
    /// What bgpd's configuration says of it, when that explains the state:
    /// the route-map entry that denies it (`filtered`), that its table is
    /// not redistributed in its family (`unconfigured`), or, for a VIP bgpd
    /// does not send (`not_redistributed`), the route-map entry and the
    /// construct ribbridge could not evaluate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    /// When the state began (RFC 3339, UTC).
    pub since: String,
    /// Healing bookkeeping.
    pub heal: HealStatus,
    /// The VIP's address on the node: `usable`, `unusable` (IPv6
    /// `tentative` or `dadfailed`) or `missing` (node vantage; `null`
    /// while the kernel mirror is not synced).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// The VIP's writer as its re-assertions show it (node vantage).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer: Option<WriterStatus>,
    /// The VIP's backend as ribbridge's probes see it (only for a VIP with
    /// a `health` or `ready` probe).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<BackendStatus>,
    /// ribbridge's own withdrawal of a `withdraw = true` VIP:
    /// `withdrawing`, `withdrawn` (bgpd's configuration holds it) or
    /// `restoring`; absent when it holds none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub withdrawal: Option<String>,
    /// The class the views show now, when it is not `state` yet: reported
    /// once it lasted its grace (a daemon), or what a one-shot read could
    /// not wait for (its `state` is then `unknown`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<PendingStatus>,
}

/// What the views show of a VIP when it is not its reported state yet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingStatus {
    /// The class the views show.
    pub state: Class,
    /// Since when (RFC 3339, UTC).
    pub since: String,
    /// When it is reported if it lasts (RFC 3339, UTC): its grace, and
    /// bgpd's own timers (young sessions, the route-map delay timer).
    pub due: String,
}

/// A VIP's backend probes' verdicts (`up`, `down`, `unknown`; absent: not
/// probed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BackendStatus {
    /// The health probe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<String>,
    /// The ready probe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<String>,
}

impl BackendStatus {
    /// One word for the table: `down` (health fails), `draining` (ready
    /// fails), `up`, or `unknown` (no verdict yet).
    pub fn word(&self) -> &'static str {
        let is = |p: &Option<String>, w: &str| p.as_deref() == Some(w);
        if is(&self.health, "down") {
            "down"
        } else if is(&self.ready, "down") {
            "draining"
        } else if is(&self.health, "up") || (self.health.is_none() && is(&self.ready, "up")) {
            "up"
        } else {
            "unknown"
        }
    }
}

/// A VIP's writer (kube-vip's loop) as the kernel shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WriterStatus {
    /// `alive`, `silent` (no re-assertion for `writer_silent_ticks` of its
    /// ticks) or `unknown` (no cadence known: never guessed).
    pub state: String,
    /// When it last wrote the route (RFC 3339, UTC), if seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<String>,
    /// Its tick, configured or learned, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cadence_ms: Option<u64>,
    /// The times it withdrew the VIP within the flap window.
    #[serde(default)]
    pub flaps: u32,
}

/// One peer of one VIP.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerStatus {
    /// The peer as bgpd names it.
    pub peer: String,
    /// Session Established.
    pub established: bool,
    /// The VIP is in its advertised-routes.
    pub sent: bool,
}

/// Healing of one VIP.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HealStatus {
    /// Attempts in the current drift.
    pub attempts: u32,
    /// Last action decided.
    pub last_action: Option<String>,
    /// Its result.
    pub last_result: Option<String>,
}

/// A VIP's state as `/status` reports it: a class, or `unknown` while the
/// daemon cannot see a view the class needs (never `withdrawn` or `no` for
/// what it cannot see).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum VipState {
    /// The core's class.
    Known(Class),
    /// A view is incomplete.
    Unknown(UnknownWord),
}

/// The word `unknown` (how [`VipState::Unknown`] is spelled in JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnknownWord {
    /// `"unknown"`.
    Unknown,
}

impl VipState {
    /// The unknown state.
    pub const UNKNOWN: VipState = VipState::Unknown(UnknownWord::Unknown);

    /// The class, when known.
    pub fn class(self) -> Option<Class> {
        match self {
            VipState::Known(c) => Some(c),
            VipState::Unknown(_) => None,
        }
    }

    /// The name printed in the table and the metric label.
    pub fn name(self) -> &'static str {
        match self {
            VipState::Known(c) => c.name(),
            VipState::Unknown(_) => "unknown",
        }
    }
}

impl PartialEq<Class> for VipState {
    fn eq(&self, c: &Class) -> bool {
        *self == VipState::Known(*c)
    }
}

impl StatusDoc {
    /// Name who answered and when (`unix_ms`, the wall clock's).
    pub fn stamp(&mut self, node: Option<String>, unix_ms: u64) {
        self.node = node;
        self.generated = Some(rfc3339(unix_ms));
    }

    /// True when any VIP is in a drift class.
    pub fn drifting(&self) -> bool {
        let drift = |c: Class| !c.is_consistent();
        self.vips
            .iter()
            .any(|v| matches!(v.state, VipState::Known(c) if drift(c)))
            || self
                .omitted
                .by_state
                .keys()
                .any(|k| Class::ALL.iter().any(|c| c.name() == k && drift(*c)))
    }
}

/// What the daemon knows of each VIP for the document: the next hops the
/// kernel holds (empty when unknown), and whether it is listed at all
/// (`detailed`: configured, or among the first `max_detailed_vips`
/// discovered; the others are counted in [`StatusDoc::omitted`]).
pub struct Detail<'a> {
    /// A VIP's next hops.
    pub nexthops: &'a dyn Fn(TableId, Prefix) -> Vec<String>,
    /// A VIP is listed.
    pub detailed: &'a dyn Fn(TableId, Prefix) -> bool,
}

impl std::fmt::Debug for Detail<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Detail { .. }")
    }
}

impl Detail<'_> {
    /// Every VIP listed, no next hops known (tests, one-shot reads).
    pub const ALL: Detail<'static> = Detail {
        nexthops: &|_, _| Vec::new(),
        detailed: &|_, _| true,
    };
}

/// Build the document. `zero_unix_ms`: wall-clock time of monotonic zero;
/// `now`: the core's clock; `detail`: next hops and which VIPs are listed;
/// `not_ready`: why the daemon is not ready, when it is not.
pub fn document(
    state: &State,
    frr_release: Option<String>,
    (zero_unix_ms, now): (u64, Millis),
    detail: &Detail<'_>,
    not_ready: Option<String>,
) -> StatusDoc {
    let ready = state.ready();
    let kernel_seen = state.kernel_synced;
    let zebra_seen = state.zebra.is_some() && state.zebra_synced;
    let state_of = |c: Class| {
        if ready {
            VipState::Known(c)
        } else {
            VipState::UNKNOWN
        }
    };
    let mut omitted = Omitted::default();
    let vips = state
        .vips
        .iter()
        .filter(|((table, prefix), v)| {
            let listed = (detail.detailed)(*table, *prefix);
            if !listed {
                omitted.count += 1;
                *omitted
                    .by_state
                    .entry(state_of(v.state).name().to_string())
                    .or_default() += 1;
            }
            listed
        })
        .map(|((table, prefix), v)| VipStatus {
            prefix: *prefix,
            table: *table,
            state: state_of(v.state),
            kernel: kernel_seen.then_some(v.in_kernel()),
            zebra: zebra_seen.then_some(v.zebra),
            // The VIP's peers: those configured for its family (a session
            // of the other family never carries it).
            peers: state
                .peers
                .iter()
                .filter(|p| p.serves(prefix))
                .map(|p| PeerStatus {
                    peer: p.peer.to_string(),
                    established: p.carries(prefix),
                    sent: p.carries(prefix) && p.advertised.contains(prefix),
                })
                .collect(),
            ecmp_nexthops: kernel_seen.then(|| v.kernel().map_or(0, |k| k.nexthops)),
            nexthops: (detail.nexthops)(*table, *prefix),
            policy: policy(state, *table, prefix, v.state),
            since: rfc3339(zero_unix_ms + v.since),
            heal: HealStatus {
                attempts: v.heal().attempts,
                last_action: v.heal().last_action.map(|a| a.name().to_string()),
                last_result: v.heal().last_result.as_ref().map(ToString::to_string),
            },
            address: kernel_seen.then(|| {
                match (
                    state.addresses.contains(prefix),
                    state.address_usable(prefix),
                ) {
                    (_, true) => "usable",
                    (true, false) => "unusable",
                    (false, false) => "missing",
                }
                .to_string()
            }),
            writer: Some({
                let w = state.writers.get(&(*table, *prefix));
                WriterStatus {
                    state: w
                        .map_or(WriterState::Unknown, |w| w.state(&state.config, now))
                        .name()
                        .to_string(),
                    last: w.map(|w| rfc3339(zero_unix_ms + w.last_ms)),
                    cadence_ms: w.and_then(|w| w.cadence(&state.config)),
                    flaps: w.map_or(0, |w| w.flaps(&state.config, now)),
                }
            }),
            backend: state
                .backends
                .get(&(*table, *prefix))
                .map(|b| BackendStatus {
                    health: b.health.map(|h| h.name().to_string()),
                    ready: b.ready.map(|r| r.name().to_string()),
                }),
            withdrawal: state.withdrawals.get(&(*table, *prefix)).map(|w| {
                let held = state
                    .intent
                    .as_ref()
                    .is_some_and(|i| i.withdrawn_by_ribbridge(*table, prefix));
                w.name(held).to_string()
            }),
            pending: crate::reconcile::pending(state, (*table, *prefix)).map(|p| PendingStatus {
                state: p.observed,
                since: rfc3339(zero_unix_ms + p.since),
                due: rfc3339(zero_unix_ms + p.due),
            }),
        })
        .collect();
    let not_ready = (!ready)
        .then(|| not_ready.unwrap_or_else(|| "the daemon's views are incomplete".to_string()));
    StatusDoc {
        frr_release,
        vips,
        heal_ceiling: Some({
            let c = &state.config;
            CeilingStatus {
                rate_per_s: c.heal_rate_per_s,
                burst: c.heal_burst,
                deferred: state.ceiling.deferred,
                binding: state.ceiling.binding(c.heal_rate_per_s, c.heal_burst, now),
            }
        }),
        omitted,
        ..frame(NodeRole::VANTAGE, state.config.mode, not_ready)
    }
}

/// The configuration's word on a `filtered` or `unconfigured` VIP.
fn policy(state: &State, table: TableId, prefix: &Prefix, class: Class) -> Option<String> {
    let intent = state.intent.as_ref()?;
    match class {
        Class::Filtered => crate::reconcile::filtered_by(intent, table, prefix, &state.peers),
        Class::NotRedistributed => {
            crate::reconcile::policy_unknown(intent, table, prefix, &state.peers)
        }
        Class::Unconfigured => Some(format!(
            "bgpd's configuration does not redistribute table {table} in {}",
            crate::model::Family::of(prefix).name()
        )),
        _ => None,
    }
}

/// A router's document: each configured VIP, `advertised` while the
/// router's kernel holds a route to it, with its legs (how many nodes the
/// router sends it to) and their next hops (`nexthops`).
pub fn router_document(
    join: &crate::reconcile::RouterJoin,
    nexthops: &dyn Fn(TableId, Prefix) -> Vec<String>,
    zero_unix_ms: u64,
    not_ready: Option<String>,
) -> StatusDoc {
    let ready = join.ready();
    let vips = join
        .vips()
        .iter()
        .map(|(prefix, v)| VipStatus {
            prefix: *prefix,
            table: v.table,
            state: if ready {
                VipState::Known(v.state)
            } else {
                VipState::UNKNOWN
            },
            kernel: ready.then_some(v.state == Class::Advertised),
            zebra: None,
            peers: Vec::new(),
            ecmp_nexthops: ready.then_some(v.legs),
            nexthops: nexthops(v.table, *prefix),
            policy: None,
            since: rfc3339(zero_unix_ms + v.since),
            heal: HealStatus::default(),
            address: None,
            writer: None,
            backend: None,
            withdrawal: None,
            pending: None,
        })
        .collect();
    // The router only reads: it never acts on anything.
    let not_ready =
        (!ready).then(|| not_ready.unwrap_or_else(|| "the kernel is not read yet".to_string()));
    StatusDoc {
        vips,
        ..frame(RouterRole::VANTAGE, Mode::Observe, not_ready)
    }
}

/// A role's document with nothing in it yet: its word, its mode, and
/// ready exactly when there is no `not_ready` reason.
fn frame(vantage: Vantage, mode: Mode, not_ready: Option<String>) -> StatusDoc {
    StatusDoc {
        schema: STATUS_SCHEMA,
        node: None,
        generated: None,
        frr_release: None,
        mode: mode.to_string(),
        vantage,
        ready: not_ready.is_none(),
        not_ready,
        vips: Vec::new(),
        routers: Vec::new(),
        heal_ceiling: None,
        omitted: Omitted::default(),
    }
}

/// A BMP station's document: `routers` as the station's view has them;
/// ready when at least one router is synced (`not_ready` says why not).
pub fn station_document(routers: Vec<RouterStatus>, not_ready: Option<String>) -> StatusDoc {
    // The station only reads: it never acts on anything.
    StatusDoc {
        routers,
        ..frame(StationRole::VANTAGE, Mode::Observe, not_ready)
    }
}

/// The node's name for `/status`: `NODE_NAME` when set (Kubernetes' downward
/// API), else the host name; None when neither can be read.
pub fn node_name() -> Option<String> {
    std::env::var("NODE_NAME")
        .ok()
        .filter(|n| !n.is_empty())
        .or_else(|| {
            nix::unistd::gethostname()
                .ok()
                .and_then(|h| h.into_string().ok())
        })
}

/// The table a person reads: one line per VIP.
pub fn render_table(doc: &StatusDoc) -> String {
    match doc.vantage {
        RouterRole::VANTAGE => return render_router(doc),
        StationRole::VANTAGE => return render_station(doc),
        NodeRole::VANTAGE => {}
    }
    let mut out = format!(
        "FRR {}  mode {}  {}\n",
        doc.frr_release.as_deref().unwrap_or("unknown"),
        doc.mode,
        readiness(doc)
    );
    let rows: Vec<[String; 11]> = doc
        .vips
        .iter()
        .map(|v| {
            let est = v.peers.iter().filter(|p| p.established).count();
            let sent = v.peers.iter().filter(|p| p.sent).count();
            [
                v.prefix.to_string(),
                v.table.to_string(),
                v.state.name().to_string(),
                yes_no(v.kernel),
                yes_no(v.zebra),
                if doc.ready {
                    format!("{sent}/{est}")
                } else {
                    UNKNOWN.to_string()
                },
                count(v.ecmp_nexthops),
                v.address.clone().unwrap_or_else(|| UNKNOWN.to_string()),
                v.writer
                    .as_ref()
                    .map_or_else(|| UNKNOWN.to_string(), |w| w.state.clone()),
                v.backend
                    .as_ref()
                    .map_or("-", BackendStatus::word)
                    .to_string(),
                // ribbridge's own withdrawal (`withdraw = true`) says so
                // where its heals do.
                match (&v.withdrawal, &v.heal.last_action, &v.heal.last_result) {
                    (Some(w), _, _) => format!("withdraw: {w}"),
                    (None, Some(a), Some(r)) => format!("{a}: {r} ({} tries)", v.heal.attempts),
                    (None, None, Some(r)) => r.clone(),
                    _ => "-".to_string(),
                },
            ]
        })
        .collect();
    let head = [
        "VIP",
        "TABLE",
        "STATE",
        "KERNEL",
        "ZEBRA",
        "SENT/PEERS",
        "ECMP",
        "ADDRESS",
        "WRITER",
        "BACKEND",
        "HEAL",
    ];
    out += &columns(&head, &rows);
    if doc.vips.is_empty() && doc.omitted.is_empty() {
        out += "(no VIP in the watched tables and none configured)\n";
    }
    if !doc.omitted.is_empty() {
        let by: Vec<String> = doc
            .omitted
            .by_state
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        out += &format!(
            "and {} more discovered VIPs past the detail limit, not listed: {} (configure the VIPs that matter with --vip, or raise --max-detailed-vips)\n",
            doc.omitted.count,
            by.join(", ")
        );
    }
    for v in &doc.vips {
        if let Some(p) = &v.policy {
            out += &format!("{} {}: {p}\n", v.prefix, v.state.name());
        }
    }
    if let Some(c) = doc.heal_ceiling.as_ref().filter(|c| c.binding) {
        out += &format!(
            "heal ceiling binding: {} actions a second, {} at once; {} held back so far\n",
            c.rate_per_s, c.burst, c.deferred
        );
    }
    out
}

/// A router knows its kernel only: the table, the paths, their next hops.
fn render_router(doc: &StatusDoc) -> String {
    let mut out = format!("router vantage  {}\n", readiness(doc));
    let rows: Vec<[String; 4]> = doc
        .vips
        .iter()
        .map(|v| {
            [
                v.prefix.to_string(),
                v.table.to_string(),
                count(v.ecmp_nexthops),
                if v.nexthops.is_empty() {
                    "-".to_string()
                } else {
                    v.nexthops.join(" ")
                },
            ]
        })
        .collect();
    out += &columns(&["VIP", "TABLE", "PATHS", "NEXT HOPS"], &rows);
    if doc.vips.is_empty() {
        out += "(no VIP configured)\n";
    }
    out
}

/// A BMP station: per VIP per router, the paths and the peers holding one.
fn render_station(doc: &StatusDoc) -> String {
    let mut out = format!("bmp vantage  {}\n", readiness(doc));
    let mut rows: Vec<[String; 5]> = doc
        .routers
        .iter()
        .flat_map(|r| {
            r.vips.iter().map(|v| {
                [
                    v.prefix.to_string(),
                    match &r.sys_name {
                        Some(n) => format!("{} ({n})", r.router),
                        None => r.router.clone(),
                    },
                    r.state.clone(),
                    count(v.paths),
                    if v.peers.is_empty() {
                        "-".to_string()
                    } else {
                        v.peers
                            .iter()
                            .map(|p| {
                                let note = match (p.up, p.stale) {
                                    (true, false) => "",
                                    (true, true) => " (stale)",
                                    (false, false) => " (down)",
                                    (false, true) => " (down, stale)",
                                };
                                format!("{} AS{}{note}", p.address, p.asn)
                            })
                            .collect::<Vec<_>>()
                            .join(", ")
                    },
                ]
            })
        })
        .collect();
    rows.sort();
    out += &columns(&["VIP", "ROUTER", "STATE", "PATHS", "HELD BY"], &rows);
    if doc.routers.is_empty() {
        out += "(no router has exported BMP to this station yet)\n";
    }
    out
}

/// Left-aligned columns, two spaces apart, no trailing blanks.
pub(crate) fn columns<const N: usize>(head: &[&str; N], rows: &[[String; N]]) -> String {
    let mut width = head.map(str::len);
    for r in rows {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.len());
        }
    }
    let line = |cells: &[&str]| {
        let mut l: String = cells
            .iter()
            .zip(width)
            .map(|(c, w)| format!("{c:<w$}  "))
            .collect();
        l.truncate(l.trim_end().len());
        l + "\n"
    };
    let mut out = line(head);
    for r in rows {
        out += &line(&r.each_ref().map(String::as_str));
    }
    out
}

/// How a view the daemon cannot see is printed.
const UNKNOWN: &str = "unknown";

fn yes_no(b: Option<bool>) -> String {
    match b {
        Some(true) => "yes",
        Some(false) => "no",
        None => UNKNOWN,
    }
    .to_string()
}

fn count(n: Option<u32>) -> String {
    n.map_or_else(|| UNKNOWN.to_string(), |n| n.to_string())
}

fn readiness(doc: &StatusDoc) -> String {
    match (&doc.not_ready, doc.ready) {
        (_, true) => "ready".to_string(),
        (Some(why), false) => format!("NOT READY: {why}"),
        (None, false) => "NOT READY".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{PeerView, PrefixSet, Release, TableMode};
    use crate::reconcile::{Config, Event, KernelFacts, step};

    /// A ready 10.7 node whose kernel holds `vip` with `nexthops` legs
    /// (kernel at 0 ms, zebra synced at 0, the route at 5).
    fn ready_with_vip(vip: Prefix, nexthops: u32) -> State {
        let mut s = State::new(Config::repairing(), 0);
        step(&mut s, Event::KernelSynced { routes: vec![] }, 0);
        step(
            &mut s,
            Event::ZebraUp {
                release: Release::new(10, 7),
                table_mode: TableMode::TableDirect,
            },
            0,
        );
        step(
            &mut s,
            Event::ZebraSynced {
                table: 198,
                prefixes: [vip].into(),
            },
            0,
        );
        step(
            &mut s,
            Event::KernelRoute {
                table: 198,
                prefix: vip,
                route: Some(KernelFacts {
                    protocol: 248,
                    nexthops,
                }),
            },
            5,
        );
        s
    }

    /// bgpd's view at `at`: one established peer, sent `advertised`.
    fn one_established_peer(s: &mut State, advertised: PrefixSet, at: Millis) {
        let peers = vec![PeerView {
            peer: "198.18.1.1".into(),
            established: true,
            advertised,
            up_ms: None,
            families: crate::model::Families::both(),
        }];
        step(s, Event::BgpView { peers }, at);
    }

    /// `doc` as JSON, asserting that the JSON reads back as `doc`.
    fn json_of(doc: &StatusDoc) -> serde_json::Value {
        let json = serde_json::to_value(doc).expect("json");
        let back: StatusDoc = serde_json::from_value(json.clone()).expect("back");
        assert_eq!(&back, doc);
        json
    }

    #[test]
    fn a_class_in_its_grace_is_pending_beside_the_reported_state() {
        let vip: Prefix = "192.0.2.10/32".parse().expect("prefix");
        let mut s = ready_with_vip(vip, 1);
        one_established_peer(&mut s, [vip].into(), 100);
        let doc = document(&s, None, (0, 100), &Detail::ALL, None);
        assert_eq!(doc.vips[0].state, Class::Advertised);
        assert_eq!(doc.vips[0].pending, None);
        // bgpd stops sending it at 1 s: the drift waits out bgpd's grace
        // (2 s) and is shown pending meanwhile, with when it is due.
        one_established_peer(&mut s, PrefixSet::default(), 1_000);
        let doc = document(&s, None, (0, 1_000), &Detail::ALL, None);
        let v = &doc.vips[0];
        assert_eq!(v.state, Class::Advertised);
        let p = v.pending.as_ref().expect("pending");
        assert_eq!(p.state, Class::NotRedistributed);
        assert_eq!(p.since, rfc3339(1_000));
        assert_eq!(p.due, rfc3339(3_000));
        json_of(&doc);
        // Reported once it lasted: nothing pending.
        for t in [2_000, 3_000, 3_100] {
            step(&mut s, Event::Tick, t);
            one_established_peer(&mut s, PrefixSet::default(), t);
        }
        let doc = document(&s, None, (0, 3_100), &Detail::ALL, None);
        assert_eq!(doc.vips[0].state, Class::NotRedistributed);
        assert_eq!(doc.vips[0].pending, None);
    }

    #[test]
    fn vips_past_the_detail_limit_are_counted_by_state_not_listed_and_their_drift_counts() {
        let vip: Prefix = "192.0.2.10/32".parse().expect("prefix");
        let mut s = ready_with_vip(vip, 1);
        one_established_peer(&mut s, [vip].into(), 100);
        let nothing = |_, _| Vec::new();
        let none_listed = Detail {
            nexthops: &nothing,
            detailed: &|_, _| false,
        };
        let doc = document(&s, None, (0, 0), &none_listed, None);
        assert!(doc.vips.is_empty(), "{doc:?}");
        assert_eq!(doc.omitted.count, 1);
        assert_eq!(doc.omitted.by_state.get("advertised"), Some(&1));
        assert!(!doc.drifting());
        let json = json_of(&doc);
        assert_eq!(json["omitted"]["by_state"]["advertised"], 1, "{json}");
        let table = render_table(&doc);
        assert!(
            table.contains(
                "and 1 more discovered VIPs past the detail limit, not listed: 1 advertised"
            ),
            "{table}"
        );
        assert!(!table.contains("(no VIP in the watched tables"), "{table}");
        // A drift among them is a drift of the document (status exits 1).
        s.vips
            .values_mut()
            .for_each(|v| v.state = Class::KernelOnly);
        assert!(document(&s, None, (0, 0), &none_listed, None).drifting());
        // Listed, nothing is omitted and the key is absent.
        let doc = document(&s, None, (0, 0), &Detail::ALL, None);
        assert!(json_of(&doc).get("omitted").is_none());
    }

    #[test]
    fn each_vip_shows_its_address_and_its_writer() {
        let vip: Prefix = "192.0.2.10/32".parse().expect("prefix");
        let mut s = ready_with_vip(vip, 1);
        one_established_peer(&mut s, [vip].into(), 100);
        let of = |s: &State, now| document(s, None, (0, now), &Detail::ALL, None);
        let doc = of(&s, 200);
        assert_eq!(doc.vips[0].address.as_deref(), Some("missing"));
        let w = doc.vips[0]
            .writer
            .clone()
            .expect("a node's VIP has a writer entry");
        assert_eq!(
            (w.state.as_str(), w.last, w.cadence_ms),
            ("unknown", None, None)
        );
        step(
            &mut s,
            Event::KernelAddress {
                prefix: vip,
                present: true,
                usable: false,
            },
            300,
        );
        for t in [1_000, 2_000, 3_000] {
            step(
                &mut s,
                Event::KernelReasserted {
                    table: 198,
                    prefix: vip,
                },
                t,
            );
        }
        let doc = of(&s, 3_500);
        assert_eq!(doc.vips[0].address.as_deref(), Some("unusable"));
        let w = doc.vips[0].writer.clone().expect("writer");
        assert_eq!(w.state, "alive");
        assert_eq!(w.cadence_ms, Some(1_000));
        assert_eq!(w.last.as_deref(), Some("1970-01-01T00:00:03.000Z"));
        assert_eq!(
            of(&s, 6_001).vips[0].writer.clone().expect("w").state,
            "silent"
        );
        let table = render_table(&doc);
        let row = table
            .lines()
            .find(|l| l.starts_with("192.0.2.10/32"))
            .expect("row");
        assert!(
            table.contains("ADDRESS") && table.contains("WRITER"),
            "{table}"
        );
        assert!(
            row.contains(" unusable ") && row.contains(" alive "),
            "{table}"
        );
    }

    #[test]
    fn document_and_table_show_each_vip() {
        let vip: Prefix = "192.0.2.10/32".parse().expect("prefix");
        let mut s = ready_with_vip(vip, 2);
        one_established_peer(&mut s, [vip].into(), 100);
        let doc = document(
            &s,
            Some("10.7".into()),
            (1_795_996_800_000, 0),
            &Detail::ALL,
            None,
        );
        assert!(doc.ready && !doc.drifting());
        let v = &doc.vips[0];
        assert_eq!(
            (v.state, v.kernel, v.zebra, v.ecmp_nexthops),
            (
                VipState::Known(Class::Advertised),
                Some(true),
                Some(true),
                Some(2)
            )
        );
        assert_eq!(v.since, "2026-11-30T00:00:00.100Z");
        let json = json_of(&doc);
        assert_eq!(json["vips"][0]["state"], "advertised");
        assert_eq!(json["vips"][0]["peers"][0]["sent"], true);
        let table = render_table(&doc);
        assert!(
            table.contains("192.0.2.10/32  198    advertised  yes     yes    1/1"),
            "{table}"
        );
        assert!(json["vips"][0].get("withdrawal").is_none(), "{json}");
        // The BACKEND column: `-` unprobed, then one word for both probes.
        let backend = |t: &str| {
            let head = t.lines().nth(1).expect("head");
            let at = head.find("BACKEND").expect("BACKEND");
            t.lines().nth(2).expect("row")[at..]
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string()
        };
        assert_eq!(backend(&table), "-", "{table}");
        let mut doc = doc;
        for (health, ready, word) in [
            (Some("up"), Some("down"), "draining"),
            (Some("down"), Some("up"), "down"),
            (Some("up"), None, "up"),
            (None, None, "unknown"),
        ] {
            doc.vips[0].backend = Some(BackendStatus {
                health: health.map(String::from),
                ready: ready.map(String::from),
            });
            assert_eq!(backend(&render_table(&doc)), word, "{health:?} {ready:?}");
        }
        doc.vips[0].backend = None;
        // ribbridge's own withdrawal, in the document and the HEAL column.
        doc.vips[0].withdrawal = Some("withdrawn".into());
        assert_eq!(json_of(&doc)["vips"][0]["withdrawal"], "withdrawn");
        let table = render_table(&doc);
        assert!(
            table
                .lines()
                .nth(2)
                .is_some_and(|l| l.ends_with("withdraw: withdrawn")),
            "{table}"
        );
    }

    #[test]
    fn a_drained_node_reports_drained_not_drifting() {
        let vip: Prefix = "192.0.2.10/32".parse().expect("prefix");
        let mut s = ready_with_vip(vip, 1);
        step(&mut s, Event::Drain { drained: true }, 10);
        one_established_peer(&mut s, PrefixSet::default(), 100);
        let doc = document(&s, None, (0, 0), &Detail::ALL, None);
        assert!(doc.ready && !doc.drifting());
        assert_eq!(doc.vips[0].state, VipState::Known(Class::Drained));
        let json = json_of(&doc);
        assert_eq!(json["vips"][0]["state"], "drained");
        assert!(render_table(&doc).contains("drained"));
    }

    #[test]
    fn the_document_names_its_schema_node_and_time_and_old_ones_still_read() {
        let mut doc = station_document(Vec::new(), None);
        doc.stamp(Some("master-0".to_string()), 1_765_000_000_123);
        let json = json_of(&doc);
        assert_eq!(json["schema"], STATUS_SCHEMA);
        assert_eq!(json["node"], "master-0");
        assert_eq!(json["generated"], "2025-12-06T05:46:40.123Z");
        // A document of a daemon before the schema: schema 0, no node.
        let mut old = json.clone();
        for k in ["schema", "node", "generated"] {
            old.as_object_mut().expect("object").remove(k);
        }
        let read: StatusDoc = serde_json::from_value(old).expect("an older document reads");
        assert_eq!((read.schema, read.node, read.generated), (0, None, None));
    }

    #[test]
    fn router_vantage_shows_paths_and_next_hops_not_the_node_columns() {
        let vip: Prefix = "192.0.2.10/32".parse().expect("prefix");
        let mut j = crate::reconcile::RouterJoin::new([254], [vip], 0);
        j.step(Event::KernelSynced { routes: vec![] }, 0);
        j.step(
            Event::KernelRoute {
                table: 254,
                prefix: vip,
                route: Some(KernelFacts {
                    protocol: 186,
                    nexthops: 2,
                }),
            },
            5,
        );
        let hops = |_, _| vec!["198.18.1.2".to_string(), "198.18.2.2".to_string()];
        let doc = router_document(&j, &hops, 0, None);
        let table = render_table(&doc);
        assert!(table.starts_with("router vantage  ready\n"), "{table}");
        assert!(
            table.contains("VIP            TABLE  PATHS  NEXT HOPS\n192.0.2.10/32  254    2      198.18.1.2 198.18.2.2"),
            "{table}"
        );
        for node_only in ["FRR", "ZEBRA", "SENT/PEERS", "advertised"] {
            assert!(!table.contains(node_only), "{node_only} in\n{table}");
        }
        let json = json_of(&doc);
        assert_eq!(json["vantage"], "router");
        assert_eq!(json["vips"][0]["nexthops"][1], "198.18.2.2");
    }

    #[test]
    fn a_blind_daemon_says_unknown_never_withdrawn_or_no() {
        let vip: Prefix = "192.0.2.10/32".parse().expect("prefix");
        let config = Config {
            vips: [vip].into(),
            ..Config::repairing()
        };
        // Kernel read, zebra never answered (FRR's directory is missing).
        let mut s = State::new(config, 0);
        step(&mut s, Event::KernelSynced { routes: vec![] }, 0);
        let why = "zebra not connected: /var/run/frr/zserv.api: No such file".to_string();
        let doc = document(&s, None, (0, 0), &Detail::ALL, Some(why.clone()));
        assert!(!doc.ready && !doc.drifting());
        assert_eq!(doc.not_ready.as_deref(), Some(why.as_str()));
        let v = &doc.vips[0];
        assert_eq!(v.state, VipState::UNKNOWN);
        assert_eq!(
            (v.kernel, v.zebra, v.ecmp_nexthops),
            (Some(false), None, Some(0))
        );
        let json = json_of(&doc);
        assert_eq!(json["vips"][0]["state"], "unknown");
        assert_eq!(json["vips"][0]["zebra"], serde_json::Value::Null);
        let table = render_table(&doc);
        assert!(
            table.starts_with("FRR unknown  mode repair  NOT READY: zebra not connected"),
            "{table}"
        );
        assert!(
            table.contains("192.0.2.10/32  198    unknown  no      unknown  unknown     0"),
            "{table}"
        );
        assert!(!table.contains("withdrawn"), "{table}");
    }

    fn router_peer(address: &str, up: bool, stale: bool) -> RouterPeer {
        RouterPeer {
            address: address.to_string(),
            asn: 64512,
            bgp_id: address.to_string(),
            up,
            rib: "adj-rib-in-post".to_string(),
            stale,
        }
    }

    /// tor-a, synced, two peers holding `vip`.
    fn synced_router(vip: Prefix) -> RouterStatus {
        RouterStatus {
            router: "tor-a".to_string(),
            sys_name: None,
            address: "10.0.0.1".to_string(),
            state: "synced".to_string(),
            forget_at: None,
            vips: vec![RouterVip {
                prefix: vip,
                paths: Some(2),
                peers: vec![
                    router_peer("198.18.1.2", true, false),
                    router_peer("198.18.2.2", true, false),
                ],
            }],
        }
    }

    #[test]
    fn station_shows_paths_per_vip_per_router_and_unknown_when_stale() {
        let vip: Prefix = "192.0.2.10/32".parse().expect("prefix");
        let peer = |address: &str, up| router_peer(address, up, false);
        let routers = vec![
            synced_router(vip),
            RouterStatus {
                router: "tor-b".to_string(),
                sys_name: None,
                address: "10.0.0.2".to_string(),
                state: "stale".to_string(),
                forget_at: Some("2026-11-30T00:05:00.000Z".to_string()),
                vips: vec![RouterVip {
                    prefix: vip,
                    paths: None,
                    peers: vec![peer("198.18.3.2", false)],
                }],
            },
        ];
        let doc = station_document(routers, None);
        assert!(doc.ready && !doc.drifting());
        let table = render_table(&doc);
        assert!(table.starts_with("bmp vantage  ready\n"), "{table}");
        assert!(
            table.contains(
                "VIP            ROUTER  STATE   PATHS    HELD BY\n\
                 192.0.2.10/32  tor-a   synced  2        198.18.1.2 AS64512, 198.18.2.2 AS64512\n\
                 192.0.2.10/32  tor-b   stale   unknown  198.18.3.2 AS64512 (down)\n"
            ),
            "{table}"
        );
        for node_only in ["FRR", "ZEBRA", "TABLE", "advertised"] {
            assert!(!table.contains(node_only), "{node_only} in\n{table}");
        }
        let json = json_of(&doc);
        assert_eq!(json["vantage"], "bmp");
        assert_eq!(json["routers"][0]["vips"][0]["paths"], 2);
        assert_eq!(
            json["routers"][1]["vips"][0]["paths"],
            serde_json::Value::Null
        );
        assert_eq!(
            json["routers"][0]["vips"][0]["peers"][1]["address"],
            "198.18.2.2"
        );
        // No router yet: not ready, and the table says why.
        let doc = station_document(Vec::new(), Some("no router has exported BMP".to_string()));
        assert!(!doc.ready);
        let table = render_table(&doc);
        assert!(
            table.starts_with("bmp vantage  NOT READY: no router has exported BMP\n"),
            "{table}"
        );
        assert!(
            table.contains("(no router has exported BMP to this station yet)"),
            "{table}"
        );
        // A node's document has no `routers` key at all.
        let node = serde_json::to_value(document(
            &State::new(Config::repairing(), 0),
            None,
            (0, 0),
            &Detail::ALL,
            None,
        ))
        .expect("json");
        assert!(node.get("routers").is_none(), "{node}");
    }

    #[test]
    fn a_stale_path_is_marked_and_older_documents_still_parse() {
        let vip: Prefix = "192.0.2.10/32".parse().expect("prefix");
        let mut router = synced_router(vip);
        router.vips[0].paths = Some(3);
        router.vips[0].peers = vec![
            router_peer("198.18.1.2", false, true),
            router_peer("198.18.2.2", true, true),
            router_peer("198.18.3.2", true, false),
        ];
        let doc = station_document(vec![router], None);
        let table = render_table(&doc);
        assert!(
            table.contains(
                "198.18.1.2 AS64512 (down, stale), 198.18.2.2 AS64512 (stale), 198.18.3.2 AS64512\n"
            ),
            "{table}"
        );
        let mut json = json_of(&doc);
        assert_eq!(json["routers"][0]["vips"][0]["peers"][0]["stale"], true);
        // A document from before graceful restart: no `stale` key.
        for p in json["routers"][0]["vips"][0]["peers"]
            .as_array_mut()
            .expect("peers")
        {
            p.as_object_mut().expect("peer").remove("stale");
        }
        let old: StatusDoc = serde_json::from_value(json).expect("parses");
        assert!(old.routers[0].vips[0].peers.iter().all(|p| !p.stale));
    }
}
