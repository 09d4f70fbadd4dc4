//! The pure core: joins the kernel, zebra and bgpd views per VIP, classifies
//! every difference, and decides what to do about it.
//!
//! Contract (ARCHITECTURE.md, rule 1): no I/O, no tokio, no clock. Time is
//! the `now` argument (milliseconds on the daemon's monotonic clock). The
//! only input is [`Event`], serde-serialisable, so a run recorded as JSON
//! lines replays through [`step`] to the same classes and actions. The only
//! output is [`Action`]s; the daemon executes them and feeds results back as
//! events.
//!
//! Classification is instantaneous ([`classify`]); a *drift* is a non-
//! consistent class that has persisted for the grace period, and, when it
//! depends on bgpd's polled view, was confirmed by a view taken after the
//! grace expired. Until then the VIP keeps its previous reported state, so
//! normal convergence (zebra ~10 ms, bgpd ~100 ms) never counts as drift.

mod policy;

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::model::{Prefix, TableId};

pub use policy::{HealAction, heal_policy};

/// Milliseconds on the daemon's monotonic clock.
pub type Millis = u64;

/// How zebra feeds the kernel table to bgpd.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Redistribution {
    /// `redistribute table-direct N` (FRR 10.0+).
    TableDirect,
    /// `ip import-table N` + `redistribute table N`.
    ImportTable,
}

/// An FRR release as `major.minor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Release {
    /// Major version (8, 10, ...).
    pub major: u16,
    /// Minor version.
    pub minor: u16,
}

impl std::fmt::Display for Release {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// What the kernel holds for a VIP in a watched table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelFacts {
    /// Route protocol (kube-vip: 248).
    pub protocol: u8,
    /// ECMP legs, nexthop groups resolved.
    pub nexthops: u32,
}

/// One route of a full kernel dump.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelEntry {
    /// Watched table.
    pub table: TableId,
    /// Destination.
    pub prefix: Prefix,
    /// What the kernel holds.
    pub facts: KernelFacts,
}

/// One BGP peer as bgpd reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeerView {
    /// Peer address or name as bgpd prints it.
    pub peer: String,
    /// Session state is Established.
    pub established: bool,
    /// Prefixes in this peer's advertised-routes.
    pub advertised: BTreeSet<Prefix>,
    /// How long the session has been established, when bgpd says
    /// (`peerUptimeMsec`): a session that just came up has not sent its
    /// table yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub up_ms: Option<Millis>,
}

/// Everything the core learns. Each variant is one observation or result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// A watched-table route appeared, changed (`Some`) or went (`None`).
    KernelRoute {
        table: TableId,
        prefix: Prefix,
        route: Option<KernelFacts>,
    },
    /// A full dump of the watched tables replaced the mirror.
    KernelSynced { routes: Vec<KernelEntry> },
    /// A realm-only replace (kube-vip's heartbeat): not a change.
    KernelReasserted { table: TableId, prefix: Prefix },
    /// A local address equal to `prefix` appeared or went.
    KernelAddress { prefix: Prefix, present: bool },
    /// The ZAPI session is up and subscribed.
    ZebraUp {
        release: Release,
        redistribution: Redistribution,
    },
    /// The ZAPI session is gone (zebra stopped or restarting).
    ZebraDown,
    /// zebra redistributes (`true`) or withdrew (`false`) a route of `table`.
    ZebraRoute {
        table: TableId,
        prefix: Prefix,
        present: bool,
    },
    /// After (re)subscription: exactly these routes are redistributed now.
    ZebraSynced {
        table: TableId,
        prefixes: BTreeSet<Prefix>,
    },
    /// zebra's own table view (`show ip route table N json`), a cross-check.
    ZebraTable {
        table: TableId,
        prefixes: BTreeSet<Prefix>,
    },
    /// bgpd's per-peer view, freshly polled.
    BgpView { peers: Vec<PeerView> },
    /// A heal action finished (executed, not yet verified).
    HealDone {
        table: TableId,
        prefix: Prefix,
        action: HealAction,
        ok: bool,
        detail: String,
    },
    /// Time passed (the daemon's wake-up for a deadline the core asked for).
    Tick,
}

/// What the core asks the daemon to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "do", rename_all = "snake_case")]
pub enum Action {
    /// Execute a heal action for one VIP; answer with [`Event::HealDone`].
    Heal {
        table: TableId,
        prefix: Prefix,
        action: HealAction,
    },
    /// Poll bgpd's per-peer view; answer with [`Event::BgpView`].
    RefreshBgp,
    /// Send [`Event::Tick`] at this time (the earliest pending deadline).
    WakeAt { at: Millis },
    /// A VIP's reported state changed (for logs and metrics).
    StateChanged {
        table: TableId,
        prefix: Prefix,
        from: Class,
        to: Class,
        /// Set when a drift ended: how long it lasted.
        drift_ms: Option<Millis>,
    },
    /// Healing a VIP was given up after the bounded number of attempts.
    GaveUp {
        table: TableId,
        prefix: Prefix,
        class: Class,
    },
}

/// The class of a VIP. The names are the ones `/status` and metrics use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// Kernel, zebra and at least one established peer agree.
    Advertised,
    /// Absent everywhere: consistent.
    Withdrawn,
    /// The kernel has it, zebra does not.
    KernelOnly,
    /// zebra (or bgpd) still has or sends a route the kernel no longer has.
    ZebraStale,
    /// zebra has it, bgpd sends it to no established peer.
    NotRedistributed,
    /// A connected/local route of the same prefix keeps the imported one
    /// from being selected.
    Shadowed,
    /// No established BGP session.
    NoPeer,
}

impl Class {
    /// Every class, in the order metrics list them.
    pub const ALL: [Class; 7] = [
        Class::Advertised,
        Class::Withdrawn,
        Class::KernelOnly,
        Class::ZebraStale,
        Class::NotRedistributed,
        Class::Shadowed,
        Class::NoPeer,
    ];

    /// The snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            Class::Advertised => "advertised",
            Class::Withdrawn => "withdrawn",
            Class::KernelOnly => "kernel_only",
            Class::ZebraStale => "zebra_stale",
            Class::NotRedistributed => "not_redistributed",
            Class::Shadowed => "shadowed",
            Class::NoPeer => "no_peer",
        }
    }

    /// Advertised and withdrawn are consistent; every other class is drift.
    pub fn is_consistent(self) -> bool {
        matches!(self, Class::Advertised | Class::Withdrawn)
    }
}

impl std::fmt::Display for Class {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// `observe` decides and reports; `repair` also acts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Never act.
    Observe,
    /// Heal with the proven action.
    Repair,
}

/// Where ribbridge runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Vantage {
    /// Beside the FRR that advertises the VIPs: the full join.
    #[default]
    Node,
    /// On the router (or a worker) that receives them: only the kernel's
    /// ECMP legs for the configured VIPs; `advertised` while it has a route.
    Router,
}

/// Tunables of the core.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// observe or repair.
    pub mode: Mode,
    /// How long a difference must persist to be a drift.
    pub grace_ms: Millis,
    /// The same for classes read from bgpd (`not_redistributed`, `no_peer`):
    /// bgpd batches new advertisements for up to its 1 s coalesce time.
    pub bgp_grace_ms: Millis,
    /// After bgpd (re)starts, how long its sessions may take to send the
    /// table before a VIP they miss is `not_redistributed`: measured ~4 s
    /// on 10.7 between Established and the first update after a bgpd
    /// restart (netns-tests/faults.rs).
    #[serde(default = "default_startup_grace")]
    pub bgp_startup_grace_ms: Millis,
    /// Heal attempts per drift before giving up.
    pub max_attempts: u32,
    /// First retry delay; doubles per attempt up to `backoff_max_ms`.
    pub backoff_ms: Millis,
    /// Retry delay cap.
    pub backoff_max_ms: Millis,
    /// Allow actions that remove and re-add a local address (FRR 10.3's case).
    pub heal_addresses: bool,
    /// Prefixes that are VIPs even while no table holds them.
    pub vips: BTreeSet<Prefix>,
    /// Watched tables (configured VIPs are reported in the first).
    pub tables: Vec<TableId>,
    /// Node or router.
    #[serde(default)]
    pub vantage: Vantage,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            mode: Mode::Repair,
            grace_ms: 500,
            bgp_grace_ms: 2_000,
            bgp_startup_grace_ms: default_startup_grace(),
            max_attempts: 3,
            backoff_ms: 1_000,
            backoff_max_ms: 30_000,
            heal_addresses: false,
            vips: BTreeSet::new(),
            tables: vec![crate::model::VIP_TABLE],
            vantage: Vantage::Node,
        }
    }
}

fn default_startup_grace() -> Millis {
    10_000
}

/// Healing bookkeeping of one VIP.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HealState {
    /// Attempts in the current drift.
    pub attempts: u32,
    /// The last action decided (taken in repair mode, only proposed in observe).
    pub last_action: Option<HealAction>,
    /// `ok`, `error: ...`, `healed`, `gave_up`, `no_safe_action`, `observe_only`.
    pub last_result: Option<String>,
    /// An action is executing.
    #[serde(skip)]
    in_flight: bool,
    /// Earliest time of the next attempt.
    #[serde(skip)]
    next_at: Millis,
    /// Attempts exhausted for this drift.
    #[serde(skip)]
    gave_up: bool,
    /// When the last action finished: a retry waits for a bgpd view newer
    /// than this plus the grace, so a heal is judged by what followed it.
    #[serde(skip)]
    done_at: Millis,
}

/// One VIP: the joined views and its state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Vip {
    /// Kernel view (None: absent).
    pub kernel: Option<KernelFacts>,
    /// zebra redistributes it (ZAPI).
    pub zebra: bool,
    /// zebra's table view has it (vty cross-check; None: not polled).
    pub zebra_table: Option<bool>,
    /// The reported class.
    pub state: Class,
    /// When the reported class began.
    pub since: Millis,
    /// The instantaneous class, and since when.
    pub observed: Class,
    /// When `observed` began.
    pub observed_since: Millis,
    /// When the reported class turned into drift (for the drift duration).
    pub drift_since: Option<Millis>,
    /// Last change of the kernel or zebra facts: a poll follows it after
    /// the grace, since bgpd reacts after zebra does.
    #[serde(skip)]
    touched_at: Millis,
    /// Realm-only re-assertions seen.
    pub reassertions: u64,
    /// Healing bookkeeping.
    pub heal: HealState,
}

/// The state the daemon's loop owns.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct State {
    /// Tunables.
    pub config: Config,
    /// VIPs by (table, prefix).
    pub vips: BTreeMap<(TableId, Prefix), Vip>,
    /// Local host addresses (for shadowing).
    pub addresses: BTreeSet<Prefix>,
    /// The ZAPI session, when up.
    pub zebra: Option<(Release, Redistribution)>,
    /// The ZAPI session has delivered its first complete view.
    pub zebra_synced: bool,
    /// The kernel mirror has completed a full dump.
    pub kernel_synced: bool,
    /// bgpd's last view and when it was taken.
    pub peers: Vec<PeerView>,
    /// When `peers` was taken (None: never).
    pub bgp_view_at: Option<Millis>,
    /// Deadlines: (time, VIP) pairs to re-evaluate at that time.
    #[serde(skip)]
    wakeups: BTreeSet<(Millis, (TableId, Prefix))>,
}

impl State {
    /// A fresh state; configured VIPs start `withdrawn` until observed.
    pub fn new(config: Config, now: Millis) -> State {
        let mut s = State {
            vips: BTreeMap::new(),
            addresses: BTreeSet::new(),
            zebra: None,
            zebra_synced: false,
            kernel_synced: false,
            peers: Vec::new(),
            bgp_view_at: None,
            wakeups: BTreeSet::new(),
            config,
        };
        let table = s
            .config
            .tables
            .first()
            .copied()
            .unwrap_or(crate::model::VIP_TABLE);
        for p in s.config.vips.clone() {
            s.vip(table, p, now);
        }
        s
    }

    /// Ready: the kernel mirror is synced and the ZAPI session has delivered
    /// a complete view. Nothing is classified anew before.
    pub fn ready(&self) -> bool {
        match self.config.vantage {
            Vantage::Node => self.kernel_synced && self.zebra.is_some() && self.zebra_synced,
            Vantage::Router => self.kernel_synced,
        }
    }

    /// At the router only the configured VIPs are tracked (its table holds
    /// every route of the network).
    fn tracks(&self, table: TableId, prefix: &Prefix) -> bool {
        self.is_watched(table)
            && (self.config.vantage == Vantage::Node || self.config.vips.contains(prefix))
    }

    fn vip(&mut self, table: TableId, prefix: Prefix, now: Millis) -> &mut Vip {
        self.vips.entry((table, prefix)).or_insert_with(|| Vip {
            kernel: None,
            zebra: false,
            zebra_table: None,
            state: Class::Withdrawn,
            since: now,
            observed: Class::Withdrawn,
            observed_since: now,
            drift_since: None,
            touched_at: now,
            reassertions: 0,
            heal: HealState::default(),
        })
    }

    /// The VIP whose facts are about to change: schedules the poll that
    /// confirms what followed (bgpd answers zebra's change ~100 ms later).
    fn touch(&mut self, table: TableId, prefix: Prefix, now: Millis) -> &mut Vip {
        let at = now + self.config.grace_ms;
        self.wakeups.insert((at, (table, prefix)));
        let v = self.vip(table, prefix, now);
        v.touched_at = now;
        v
    }

    fn is_watched(&self, table: TableId) -> bool {
        self.config.tables.contains(&table)
    }
}

/// The instantaneous class of one VIP from the joined views.
///
/// "zebra has it" is either view: the ZAPI stream (what zebra redistributes)
/// or zebra's own table (vty). They differ exactly in the FRR bugs: before
/// 10.7 a route that existed before a subscription is in zebra's table but
/// never redistributed; on 8.4 a replace drops the import while the table
/// keeps the route; a local address makes the import lose to the connected
/// route.
pub fn classify(
    vip: &Vip,
    prefix: &Prefix,
    addresses: &BTreeSet<Prefix>,
    peers: &[PeerView],
) -> Class {
    let established: Vec<&PeerView> = peers.iter().filter(|p| p.established).collect();
    let sent = established.iter().any(|p| p.advertised.contains(prefix));
    let zebra_has = vip.zebra || vip.zebra_table == Some(true);
    match (vip.kernel.is_some(), zebra_has) {
        (false, false) if !sent => Class::Withdrawn,
        (false, _) => Class::ZebraStale,
        (true, false) => Class::KernelOnly,
        (true, true) if established.is_empty() => Class::NoPeer,
        (true, true) if sent => Class::Advertised,
        // In zebra's table, not redistributed, and a local address of the
        // same prefix: the connected route wins the selection.
        (true, true) if !vip.zebra && addresses.contains(prefix) => Class::Shadowed,
        (true, true) => Class::NotRedistributed,
    }
}

/// Which VIPs an event can change.
enum Scope {
    One(TableId, Prefix),
    Prefix(Prefix),
    All,
    Due,
}

/// Apply one event at time `now`; return what to do.
///
/// Cost: an event about one route re-evaluates that VIP only; a tick only
/// the VIPs whose deadline passed. Only whole-view events (a resync, a bgpd
/// view, zebra's session) touch every VIP.
pub fn step(state: &mut State, event: Event, now: Millis) -> Vec<Action> {
    let mut actions = Vec::new();
    let mut touched_bgp = false;
    let scope = match event {
        Event::KernelRoute {
            table,
            prefix,
            route,
        } => {
            if !state.tracks(table, &prefix) {
                return actions;
            }
            state.touch(table, prefix, now).kernel = route;
            touched_bgp = true;
            Scope::One(table, prefix)
        }
        Event::KernelSynced { routes } => {
            let fresh: BTreeMap<(TableId, Prefix), KernelFacts> = routes
                .into_iter()
                .filter(|r| state.tracks(r.table, &r.prefix))
                .map(|r| ((r.table, r.prefix), r.facts))
                .collect();
            for (key, vip) in state.vips.iter_mut() {
                vip.kernel = fresh.get(key).cloned();
            }
            for ((table, prefix), facts) in fresh {
                state.vip(table, prefix, now).kernel = Some(facts);
            }
            state.kernel_synced = true;
            touched_bgp = true;
            Scope::All
        }
        Event::KernelReasserted { table, prefix } => {
            if let Some(v) = state.vips.get_mut(&(table, prefix)) {
                v.reassertions += 1;
            }
            return actions;
        }
        Event::KernelAddress { prefix, present } => {
            if present {
                state.addresses.insert(prefix);
            } else {
                state.addresses.remove(&prefix);
            }
            Scope::Prefix(prefix)
        }
        Event::ZebraUp {
            release,
            redistribution,
        } => {
            state.zebra = Some((release, redistribution));
            state.zebra_synced = false;
            Scope::All
        }
        Event::ZebraDown => {
            // Its absence is its own state: views freeze, nothing is decided.
            state.zebra = None;
            state.zebra_synced = false;
            for v in state.vips.values_mut() {
                v.zebra = false;
            }
            Scope::All
        }
        Event::ZebraRoute {
            table,
            prefix,
            present,
        } => {
            if !state.is_watched(table) {
                return actions;
            }
            state.touch(table, prefix, now).zebra = present;
            touched_bgp = true;
            Scope::One(table, prefix)
        }
        Event::ZebraSynced { table, prefixes } => {
            state.zebra_synced = state.zebra.is_some();
            for ((t, p), v) in state.vips.iter_mut() {
                if *t == table {
                    v.zebra = prefixes.contains(p);
                }
            }
            if state.is_watched(table) {
                for p in prefixes {
                    state.vip(table, p, now).zebra = true;
                }
            }
            touched_bgp = true;
            Scope::All
        }
        Event::ZebraTable { table, prefixes } => {
            for ((t, p), v) in state.vips.iter_mut() {
                if *t == table {
                    v.zebra_table = Some(prefixes.contains(p));
                }
            }
            Scope::All
        }
        Event::BgpView { peers } => {
            state.peers = peers;
            state.bgp_view_at = Some(now);
            Scope::All
        }
        Event::HealDone {
            table,
            prefix,
            action,
            ok,
            detail,
        } => {
            let backoff = state.config.backoff_ms;
            let cap = state.config.backoff_max_ms;
            let Some(v) = state.vips.get_mut(&(table, prefix)) else {
                return actions;
            };
            let h = &mut v.heal;
            h.in_flight = false;
            h.done_at = now;
            h.attempts += 1;
            h.last_action = Some(action);
            h.last_result = Some(if ok {
                "ok".to_string()
            } else {
                format!("error: {detail}")
            });
            let shift = h.attempts.saturating_sub(1).min(16);
            h.next_at = now + backoff.saturating_mul(1 << shift).min(cap);
            // Verification: the next observations decide, after a new grace.
            v.observed_since = now;
            touched_bgp = true;
            Scope::One(table, prefix)
        }
        Event::Tick => Scope::Due,
    };
    let keys: Vec<(TableId, Prefix)> = match scope {
        Scope::One(t, p) => vec![(t, p)],
        Scope::Prefix(p) => state.vips.keys().filter(|k| k.1 == p).copied().collect(),
        Scope::All => state.vips.keys().copied().collect(),
        Scope::Due => {
            let due: Vec<(Millis, (TableId, Prefix))> =
                state.wakeups.range(..=(now, MAX_KEY)).copied().collect();
            for w in &due {
                state.wakeups.remove(w);
            }
            let mut keys: Vec<_> = due.into_iter().map(|(_, k)| k).collect();
            keys.dedup();
            keys
        }
    };
    let mut want_bgp = touched_bgp && state.ready() && state.config.vantage == Vantage::Node;
    for key in keys {
        want_bgp |= evaluate(state, key, now, &mut actions);
    }
    // The daemon coalesces: at most one poll in flight, one queued.
    if want_bgp {
        actions.push(Action::RefreshBgp);
    }
    // Deadlines already past were just handled; the next one is the wake-up.
    while let Some(&first) = state.wakeups.first() {
        if first.0 > now {
            actions.push(Action::WakeAt { at: first.0 });
            break;
        }
        state.wakeups.remove(&first);
    }
    actions
}

/// The largest key, to bound a range of wake-ups by time alone.
const MAX_KEY: (TableId, Prefix) = (TableId::MAX, Prefix::MAX);

/// Re-classify one VIP, promote a persisted difference, decide its heal,
/// schedule its deadline. Returns true when it needs a fresh bgpd view.
fn evaluate(
    state: &mut State,
    key: (TableId, Prefix),
    now: Millis,
    actions: &mut Vec<Action>,
) -> bool {
    if !state.ready() {
        return false;
    }
    let Some(v) = state.vips.get(&key) else {
        return false;
    };
    let router = state.config.vantage == Vantage::Router;
    let observed = if router {
        if v.kernel.is_some() {
            Class::Advertised
        } else {
            Class::Withdrawn
        }
    } else {
        classify(v, &key.1, &state.addresses, &state.peers)
    };
    let grace = grace_of(&state.config, observed, v.zebra);
    // The router polls nothing: its kernel view is the whole truth.
    let bgp_view_at = if router {
        Some(Millis::MAX)
    } else {
        state.bgp_view_at
    };
    // After a change, the polled views must be re-read once the grace has
    // passed, whatever the class: bgpd's reaction lags zebra's.
    let settle = v.touched_at + state.config.grace_ms;
    let confirm = now >= settle && bgp_view_at.is_none_or(|t| t < settle);
    let Some(v) = state.vips.get_mut(&key) else {
        return false;
    };
    if observed != v.observed {
        v.observed = observed;
        v.observed_since = now;
    }
    if observed == v.state {
        if observed.is_consistent() {
            v.heal.gave_up = false;
            return confirm;
        }
        return decide_heal(state, key, now, actions) || confirm;
    }
    let mut due = v.observed_since + grace;
    // Sessions that came up after the VIP took its current state (bgpd
    // restarted) have not sent the table yet: a VIP they miss is not a
    // drift before the startup grace. Sessions older than the state (a
    // kube-vip heartbeat on 8.4) get the plain grace.
    if observed == Class::NotRedistributed {
        if let Some(since) = sessions_since(&state.peers, state.bgp_view_at) {
            if since >= v.since {
                due = due.max(since + state.config.bgp_startup_grace_ms);
            }
        }
    }
    // Every class reads the polled views (bgpd's peers, zebra's table): it
    // must rest on a poll taken after the observation began (consistent
    // classes, reported at once) or after the grace expired (drift).
    let view_after = |t: Millis| bgp_view_at.is_some_and(|at| at >= t);
    let confirmed = if observed.is_consistent() {
        view_after(v.observed_since)
    } else {
        now >= due && view_after(due)
    };
    if !confirmed {
        if observed.is_consistent() || now >= due {
            return true;
        }
        state.wakeups.insert((due, key));
        return false;
    }
    let from = v.state;
    let drift_ms = match (from.is_consistent(), observed.is_consistent()) {
        (false, true) => v.drift_since.take().map(|s| now.saturating_sub(s)),
        _ => None,
    };
    if !observed.is_consistent() && v.drift_since.is_none() {
        v.drift_since = Some(now);
    }
    if observed.is_consistent() {
        v.heal.attempts = 0;
        v.heal.gave_up = false;
        if v.heal.last_action.is_some() && !from.is_consistent() {
            v.heal.last_result = Some("healed".to_string());
        }
    }
    v.state = observed;
    v.since = now;
    actions.push(Action::StateChanged {
        table: key.0,
        prefix: key.1,
        from,
        to: observed,
        drift_ms,
    });
    if !observed.is_consistent() {
        return decide_heal(state, key, now, actions);
    }
    false
}

/// When the oldest established session came up, if bgpd said so for every
/// established session (an unknown uptime counts as old: no delay; so does
/// a session that came up before this process started).
fn sessions_since(peers: &[PeerView], view_at: Option<Millis>) -> Option<Millis> {
    let at = view_at?;
    let mut oldest: Option<Millis> = None;
    for p in peers.iter().filter(|p| p.established) {
        let up = p.up_ms?;
        oldest = Some(oldest.map_or(up, |o| o.max(up)));
    }
    // A session older than our clock's zero predates this process: old.
    oldest.and_then(|up| at.checked_sub(up))
}

/// The grace of a class: what waits on bgpd (a session, or sending a route
/// zebra does redistribute) waits for bgpd's coalescing.
fn grace_of(config: &Config, class: Class, redistributed: bool) -> Millis {
    match class {
        Class::NoPeer => config.bgp_grace_ms.max(config.grace_ms),
        Class::NotRedistributed if redistributed => config.bgp_grace_ms.max(config.grace_ms),
        _ => config.grace_ms,
    }
}

/// For a VIP in drift: pick the policy action and, in repair mode and when
/// the backoff allows, ask for it. Returns true when a retry waits for a
/// fresh bgpd view.
fn decide_heal(
    state: &mut State,
    key: (TableId, Prefix),
    now: Millis,
    actions: &mut Vec<Action>,
) -> bool {
    let Some((release, redistribution)) = state.zebra else {
        return false;
    };
    let bgp_view_at = state.bgp_view_at;
    let mode = state.config.mode;
    let grace = state.config.grace_ms;
    let max = state.config.max_attempts;
    let allow_addr = state.config.heal_addresses;
    let has_addr = state.addresses.contains(&key.1);
    let Some(v) = state.vips.get_mut(&key) else {
        return false;
    };
    if v.heal.in_flight || v.heal.gave_up {
        return false;
    }
    let Some(action) = heal_policy(v.state, release, redistribution, has_addr, allow_addr) else {
        if v.heal.last_result.as_deref() != Some("no_safe_action") {
            v.heal.last_result = Some("no_safe_action".to_string());
        }
        return false;
    };
    if mode == Mode::Observe {
        v.heal.last_action = Some(action);
        v.heal.last_result = Some("observe_only".to_string());
        return false;
    }
    if v.heal.attempts >= max {
        v.heal.gave_up = true;
        v.heal.last_result = Some("gave_up".to_string());
        actions.push(Action::GaveUp {
            table: key.0,
            prefix: key.1,
            class: v.state,
        });
        return false;
    }
    if now < v.heal.next_at {
        let at = v.heal.next_at;
        state.wakeups.insert((at, key));
        return false;
    }
    // A retry is judged on a bgpd view taken after the last action settled.
    if v.heal.attempts > 0 && bgp_view_at.is_none_or(|t| t < v.heal.done_at + grace) {
        return true;
    }
    v.heal.in_flight = true;
    v.heal.last_action = Some(action);
    actions.push(Action::Heal {
        table: key.0,
        prefix: key.1,
        action,
    });
    false
}

#[cfg(test)]
mod tests;
