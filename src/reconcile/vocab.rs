//! The core's plain vocabulary: what it concludes ([`Class`]), how it is
//! tuned ([`Config`]), a heal's action and bookkeeping ([`HealAction`],
//! [`HealState`], [`HealResult`]), what the kernel and the probes say of a
//! VIP ([`KernelFacts`], [`Backend`]), and the drain's and a withdrawal's
//! records ([`DrainTrack`], [`Withdrawal`]).
//!
//! Contract: plain data, no logic beyond names and bookkeeping; it uses no
//! other file of the core, and every other file may use it. Every type that
//! is recorded or reported is serde; their JSON form is what `ribbridge run
//! --record` writes and what the cases under `tests/data/reconcile/` hold,
//! so it does not change without re-recording them. What carries behaviour
//! has a file of its own: the events and actions (`event`), a VIP (`vip`),
//! the state (`state`), a writer (`writer`), the deadlines (`wakeups`), the
//! heal ceiling (`ceiling`); the decisions are [`step`](fn@super::step)'s.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::model::{Mode, Prefix, TableId};

/// Milliseconds on the daemon's monotonic clock (the model's, named here
/// too: the core's time argument).
pub use crate::model::Millis;

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

/// A VIP's backend probe: `health` (down: the node cannot serve the VIP)
/// or `ready` (failing while health passes: the backend drains).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeKind {
    /// The liveness of the backend (the ingress router's `/healthz`).
    Health,
    /// Its readiness (`/healthz/ready`, the API server's `/readyz`).
    Ready,
}

impl ProbeKind {
    /// The snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            ProbeKind::Health => "health",
            ProbeKind::Ready => "ready",
        }
    }
}

/// A probe's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackendState {
    /// `rise` successes in a row.
    Up,
    /// `fall` failures in a row.
    Down,
    /// Neither yet (the probe just started).
    Unknown,
}

impl BackendState {
    /// The snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            BackendState::Up => "up",
            BackendState::Down => "down",
            BackendState::Unknown => "unknown",
        }
    }
}

/// What the probes say of a VIP's backend (a probe not configured is
/// `None`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Backend {
    /// The health probe's verdict.
    pub health: Option<BackendState>,
    /// The ready probe's verdict.
    pub ready: Option<BackendState>,
}

impl Backend {
    /// The health probe says down: the node cannot serve the VIP.
    pub fn down(&self) -> bool {
        self.health == Some(BackendState::Down)
    }

    /// Health passes (or is not probed) while the ready probe fails: the
    /// backend drains.
    pub fn draining(&self) -> bool {
        !self.down() && self.ready == Some(BackendState::Down)
    }

    /// The backend is up: health up, or (no health probe) ready up.
    pub fn up(&self) -> bool {
        match self.health {
            Some(h) => h == BackendState::Up,
            None => self.ready == Some(BackendState::Up),
        }
    }
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
    /// The node is drained (`ribbridge drain`): bgpd sends its VIPs to no
    /// peer on purpose. Consistent: no heal, no drift.
    Drained,
    /// bgpd's configured policy denies the prefix (the redistribution's
    /// route-map, or every established peer's outbound route-map), and
    /// bgpd sends it to no peer: what the operator configured. Consistent.
    Filtered,
    /// bgpd's configuration does not redistribute the VIP's table in its
    /// family at all (a configuration wipe, an empty rendering): the node
    /// advertises nothing. Report-only: neither consistent nor a drift
    /// ribbridge can heal; a person must restore the configuration.
    Unconfigured,
    /// Advertised, yet the node cannot serve it: the VIP's address is
    /// missing from every interface, or unusable (IPv6 `tentative` or
    /// `dadfailed`), while `require_address` holds. The router sends this
    /// node its share of the traffic and the node drops it. A drift no
    /// heal re-advertises: report-only.
    Blackhole,
    /// Advertised, and the writer (kube-vip) that re-asserts the route
    /// every tick went silent: nobody is left to withdraw it when the
    /// backend fails. A drift ribbridge reports and does not heal.
    Orphaned,
    /// The writer withdrew the VIP more than `flap_pairs` times within
    /// `flap_window_ms` (kube-vip's loop has no hysteresis: one failed
    /// check withdraws, one success re-adds): the router's ECMP set churns
    /// with a flaky backend. A drift ribbridge reports and does not heal.
    Flapping,
    /// Advertised, the backend's health passing and its readiness failing
    /// for `fall` probes: the backend drains (the router is terminating,
    /// the API server shuts down) while the router still sends traffic.
    Unready,
    /// The backend up (health passing for `rise` probes) and the route
    /// absent from the kernel for more than two of its writer's ticks: the
    /// node could serve the VIP and does not (another instance's cleanup,
    /// a blocked writer). A drift ribbridge reports and does not heal.
    CapacityLost,
}

impl Class {
    /// Every class, in the order metrics list them.
    pub const ALL: [Class; 15] = [
        Class::Advertised,
        Class::Withdrawn,
        Class::KernelOnly,
        Class::ZebraStale,
        Class::NotRedistributed,
        Class::Shadowed,
        Class::NoPeer,
        Class::Drained,
        Class::Filtered,
        Class::Unconfigured,
        Class::Blackhole,
        Class::Orphaned,
        Class::Flapping,
        Class::Unready,
        Class::CapacityLost,
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
            Class::Drained => "drained",
            Class::Filtered => "filtered",
            Class::Unconfigured => "unconfigured",
            Class::Blackhole => "blackhole",
            Class::Orphaned => "orphaned",
            Class::Flapping => "flapping",
            Class::Unready => "unready",
            Class::CapacityLost => "capacity_lost",
        }
    }

    /// Advertised, withdrawn, drained and filtered are consistent: the
    /// views agree with what is configured.
    pub fn is_consistent(self) -> bool {
        matches!(
            self,
            Class::Advertised | Class::Withdrawn | Class::Drained | Class::Filtered
        )
    }

    /// A drift: the views disagree with what is configured (every class
    /// but the consistent ones and `unconfigured`, which is the
    /// configuration's own state, reported and never healed).
    pub fn is_drift(self) -> bool {
        !self.is_consistent() && self != Class::Unconfigured
    }
}

impl std::fmt::Display for Class {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
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
    /// How long a session may take after it came up to send bgpd's table,
    /// before a VIP it misses is `not_redistributed`: measured ~4 s on 10.7
    /// between Established and the first update after a bgpd restart
    /// (netns-tests/faults.rs), and ~5 s on 8.4, 10.3 and 10.7 when
    /// ribbridge starts beside a bgpd that just came up (the
    /// `*-zebra-bgpd-restart` and `*-withdraw` cases). Only sessions that
    /// have not advertised anything yet get it.
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
    /// The node's one table (kube-vip's; zebra redistributes it). Recorded
    /// configurations spell it `tables = [N]`, read as the one table.
    #[serde(alias = "tables", deserialize_with = "one_table")]
    pub table: TableId,
    /// The node-wide ceiling on heal actions: this many a second on
    /// average...
    #[serde(default = "default_heal_rate")]
    pub heal_rate_per_s: u32,
    /// ...and at most this many at once.
    #[serde(default = "default_heal_burst")]
    pub heal_burst: u32,
    /// A discovered VIP (not configured) absent from every view this long
    /// is forgotten.
    #[serde(default = "default_forget_after")]
    pub forget_after_ms: Millis,
    /// How long a table that bgpd's configuration does not redistribute
    /// must stay so before `unconfigured` is reported: one more read of
    /// the configuration (a reload's transient is not reported).
    #[serde(default = "default_intent_confirm")]
    pub intent_confirm_ms: Millis,
    /// A VIP needs its address (on any interface, usable) to be served:
    /// advertised without it is `blackhole`, and no heal re-advertises it.
    /// kube-vip always adds the address. Off in recordings made before it
    /// existed; the daemon's setting defaults to on.
    #[serde(default)]
    pub require_address: bool,
    /// The writer is `silent` after this many of its ticks without a
    /// re-assertion.
    #[serde(default = "default_writer_silent_ticks")]
    pub writer_silent_ticks: u32,
    /// The writer's tick, when configured (None: learned from its beats).
    #[serde(default)]
    pub writer_interval_ms: Option<Millis>,
    /// A VIP whose writer withdrew it more than this many times within
    /// `flap_window_ms` is `flapping` (at most [`MAX_FLAP_PAIRS`](super::MAX_FLAP_PAIRS)).
    #[serde(default = "default_flap_pairs")]
    pub flap_pairs: u32,
    /// The window the withdrawals are counted in.
    #[serde(default = "default_flap_window")]
    pub flap_window_ms: Millis,
    /// The VIPs ribbridge takes out of BGP itself when their backend failed
    /// and their writer is silent or their address unusable (`withdraw =
    /// true`; repair mode only).
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub withdraw: BTreeSet<Prefix>,
}

fn default_flap_pairs() -> u32 {
    3
}

fn default_flap_window() -> Millis {
    300_000
}

fn default_writer_silent_ticks() -> u32 {
    3
}

/// bgpd answers zebra's change ~100 ms later (a table change reaches the
/// router in 121-125 ms, docs/FRR-BEHAVIOUR.md): its view is re-read this
/// long after a change, whatever the (shorter) zebra-side grace, so that a
/// VIP bgpd has just sent is seen `advertised` without waiting for the
/// periodic poll. 500 ms: the settle every recorded case ran with.
const BGP_SETTLE_MS: Millis = 500;

#[cfg(test)]
impl Config {
    /// The defaults in repair mode: most of the core's cases are about
    /// what it heals, and observe (the default) never acts.
    pub(crate) fn repairing() -> Config {
        Config {
            mode: Mode::Repair,
            ..Config::default()
        }
    }
}

impl Config {
    /// How long after a change of a VIP's facts the polled views are
    /// re-read: the grace, or bgpd's settle when that is longer.
    pub(super) fn settle_ms(&self) -> Millis {
        self.grace_ms.max(BGP_SETTLE_MS)
    }
}

/// A table id, or a list of exactly one (how configurations recorded
/// before the node's one table were written).
fn one_table<'de, D: serde::Deserializer<'de>>(d: D) -> Result<TableId, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrList {
        One(TableId),
        List(Vec<TableId>),
    }
    match OneOrList::deserialize(d)? {
        OneOrList::One(t) => Ok(t),
        OneOrList::List(l) => match l[..] {
            [t] => Ok(t),
            _ => Err(serde::de::Error::custom(format!(
                "a node's core watches one table, not {l:?}"
            ))),
        },
    }
}

impl Default for Config {
    fn default() -> Config {
        Config {
            // Observe: a node's verdicts are read before it is trusted
            // to act (docs/DEPLOY.md, "The default mode").
            mode: Mode::default(),
            grace_ms: DEFAULT_GRACE_MS,
            bgp_grace_ms: 2_000,
            bgp_startup_grace_ms: default_startup_grace(),
            max_attempts: 3,
            backoff_ms: 1_000,
            backoff_max_ms: 30_000,
            heal_addresses: false,
            vips: BTreeSet::new(),
            table: crate::model::VIP_TABLE,
            heal_rate_per_s: default_heal_rate(),
            heal_burst: default_heal_burst(),
            forget_after_ms: default_forget_after(),
            intent_confirm_ms: default_intent_confirm(),
            require_address: false,
            withdraw: BTreeSet::new(),
            writer_silent_ticks: default_writer_silent_ticks(),
            writer_interval_ms: None,
            flap_pairs: default_flap_pairs(),
            flap_window_ms: default_flap_window(),
        }
    }
}

/// The default grace of the classes decided by the kernel and zebra: zebra
/// answers a kernel change on ZAPI 10.5-17 ms later (measured on 8.4, 10.3
/// and 10.7, docs/FRR-BEHAVIOUR.md), so 100 ms is six times the slowest
/// normal reaction, with room for a loaded node.
const DEFAULT_GRACE_MS: Millis = 100;

fn default_startup_grace() -> Millis {
    10_000
}

/// The ceiling's defaults: 100 actions a second at most 100 at once. A
/// node's real drifts are one VIP or a few; a whole table at once is a
/// cause nobody proved (docs/PERFORMANCE.md, the 1 000-VIP mass heal).
pub const DEFAULT_HEAL_RATE_PER_S: u32 = 100;

/// See [`DEFAULT_HEAL_RATE_PER_S`].
pub const DEFAULT_HEAL_BURST: u32 = 100;

fn default_heal_rate() -> u32 {
    DEFAULT_HEAL_RATE_PER_S
}

fn default_heal_burst() -> u32 {
    DEFAULT_HEAL_BURST
}

/// Ten minutes: long enough to see a withdrawn VIP in `/status` after the
/// fact, short enough that a node's churn does not pile up.
fn default_forget_after() -> Millis {
    600_000
}

/// One read of bgpd's configuration more (it is read every second).
fn default_intent_confirm() -> Millis {
    1_000
}

/// Healing bookkeeping of one VIP.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HealState {
    /// Attempts in the current drift.
    pub attempts: u32,
    /// The last action decided (taken in repair mode, only proposed in observe).
    pub last_action: Option<HealAction>,
    /// What became of the last decision (`/status` shows it).
    pub last_result: Option<HealResult>,
    /// An action is executing.
    #[serde(skip)]
    pub(super) in_flight: bool,
    /// Earliest time of the next attempt.
    #[serde(skip)]
    pub(super) next_at: Millis,
    /// Attempts exhausted for this drift.
    #[serde(skip)]
    pub(super) gave_up: bool,
    /// When the last action finished: a retry waits for a bgpd view newer
    /// than this plus the grace, so a heal is judged by what followed it.
    #[serde(skip)]
    pub(super) done_at: Millis,
    /// The action in flight is a fast heal (a recognised trigger, acted on
    /// before any drift was reported): it is not an attempt of a drift.
    #[serde(skip)]
    pub(super) fast: bool,
    /// The ceiling's slot reserved for this VIP's next action, if it was
    /// held back: the action runs at that time without asking again.
    #[serde(skip)]
    pub(super) slot_at: Option<Millis>,
}

/// What became of a VIP's last heal decision, for `/status`. Its JSON form
/// (and [`Display`](std::fmt::Display)) is the word `/status` and the
/// recorded cases have always held: `ok`, `error: <why>`, `healed`,
/// `gave_up`, `no_safe_action`, `observe_only`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HealResult {
    /// The action ran without error (whether it healed is observed after).
    Ok,
    /// The action failed: the daemon's reason.
    Error(String),
    /// The drift an action was taken for ended.
    Healed,
    /// The attempts were exhausted (reported once; healing goes on at the
    /// capped backoff).
    GaveUp,
    /// The drift has no proven safe action: reported, never acted on.
    NoSafeAction,
    /// Observe mode: the action was decided, not taken.
    ObserveOnly,
    /// bgpd does not send the VIP, its policy could not be evaluated (a
    /// construct ribbridge does not evaluate: `/status` names it), and one
    /// heal did not change bgpd's answer: the policy may well deny it, so
    /// it is reported, not healed again.
    PolicyUnknown,
}

impl HealResult {
    /// Every result without a reason, for parsing.
    const WORDS: [HealResult; 6] = [
        HealResult::Ok,
        HealResult::Healed,
        HealResult::GaveUp,
        HealResult::NoSafeAction,
        HealResult::ObserveOnly,
        HealResult::PolicyUnknown,
    ];

    /// The snake_case name (`error` for an error, whose
    /// [`Display`](std::fmt::Display) adds its reason).
    pub fn name(&self) -> &'static str {
        match self {
            HealResult::Ok => "ok",
            HealResult::Error(_) => "error",
            HealResult::Healed => "healed",
            HealResult::GaveUp => "gave_up",
            HealResult::NoSafeAction => "no_safe_action",
            HealResult::ObserveOnly => "observe_only",
            HealResult::PolicyUnknown => "policy_unknown",
        }
    }
}

impl std::fmt::Display for HealResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HealResult::Error(why) => write!(f, "error: {why}"),
            other => f.write_str(other.name()),
        }
    }
}

impl Serialize for HealResult {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for HealResult {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<HealResult, D::Error> {
        let s = String::deserialize(d)?;
        if let Some(why) = s.strip_prefix("error: ") {
            return Ok(HealResult::Error(why.to_string()));
        }
        HealResult::WORDS
            .into_iter()
            .find(|r| r.name() == s)
            .ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "unknown heal result {s:?}: ok, error: <why>, healed, gave_up, \
                     no_safe_action or observe_only"
                ))
            })
    }
}

/// An action that heals a VIP. Kernel actions only ever touch a route that
/// the mirror found in a watched table, and only that route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HealAction {
    /// `ip route replace` of the same route with the realm toggled 1<->2:
    /// a real change the kernel announces, so zebra re-learns the route.
    RealmToggle,
    /// Delete the route, then add it back unchanged.
    DeleteAdd,
    /// On zebra's vty: `no ip import-table N`, then `ip import-table N`.
    ReimportTable,
    /// Remove the local address of the VIP, replace the route, re-add the
    /// address (off unless `heal_addresses`).
    AddressCycle,
}

impl HealAction {
    /// The snake_case name used in metrics and `/status`.
    pub fn name(self) -> &'static str {
        match self {
            HealAction::RealmToggle => "realm_toggle",
            HealAction::DeleteAdd => "delete_add",
            HealAction::ReimportTable => "reimport_table",
            HealAction::AddressCycle => "address_cycle",
        }
    }
}

/// What the drain state file says, as last read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DrainFile {
    /// No file (or `drained: false`): no drain is recorded.
    #[default]
    Absent,
    /// A drain is recorded.
    Drained,
    /// The file exists but cannot be read or parsed (the daemon logs why).
    Unreadable,
}

impl DrainFile {
    /// The snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            DrainFile::Absent => "absent",
            DrainFile::Drained => "drained",
            DrainFile::Unreadable => "unreadable",
        }
    }
}

/// Where the re-apply of a lost drain stands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reapply", rename_all = "snake_case")]
pub enum Reapply {
    /// Nothing asked.
    #[default]
    Idle,
    /// Held back by the ceiling until its slot.
    Slot {
        /// The slot's time.
        at: Millis,
    },
    /// Asked; the daemon answers with `Event::DrainReapplied`.
    InFlight,
    /// bgpd accepted the drain's entry at `at`; the next read of its
    /// configuration confirms it.
    Applied {
        /// When it was applied.
        at: Millis,
    },
    /// The re-apply failed at `at`.
    Failed {
        /// When it failed.
        at: Millis,
    },
}

/// The core's drain bookkeeping (part of [`State`](super::State)).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DrainTrack {
    /// The drain state file, as last read.
    pub file: DrainFile,
    /// When the file last started saying drained.
    pub recorded_at: Millis,
    /// bgpd's configuration was read at least once.
    pub config_read: bool,
    /// A read of bgpd's configuration since the recording found no drain.
    pub read_since: bool,
    /// The re-apply's progress.
    pub reapply: Reapply,
    /// The drain is reported lost.
    pub lost: bool,
    /// Re-applies bgpd accepted since the start.
    pub reapplied: u64,
}

/// Why ribbridge takes a VIP out of BGP, or puts it back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WithdrawWhy {
    /// Out: the backend failed and the writer went silent.
    WriterSilent,
    /// Out: the backend failed and the address is missing or unusable.
    AddressUnusable,
    /// Out: found so in bgpd's configuration (a restarted ribbridge's).
    Found,
    /// Back: the backend is up again.
    BackendUp,
    /// Back: the writer re-asserts the route.
    WriterBack,
    /// Back: the VIP is not configured `withdraw` (any more).
    NotConfigured,
}

impl WithdrawWhy {
    /// What it means, for the log.
    pub fn text(self) -> &'static str {
        match self {
            WithdrawWhy::WriterSilent => {
                "its backend's health probe fails and its writer is silent"
            }
            WithdrawWhy::AddressUnusable => {
                "its backend's health probe fails and its address is missing or unusable"
            }
            WithdrawWhy::Found => "bgpd's configuration holds ribbridge's withdrawal of it",
            WithdrawWhy::BackendUp => "its backend's health probe passes again",
            WithdrawWhy::WriterBack => "its writer re-asserts the route again",
            WithdrawWhy::NotConfigured => "it is not configured `withdraw = true`",
        }
    }
}

/// One VIP ribbridge takes out of BGP or puts back (part of [`State`](super::State)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Withdrawal {
    /// Out (true) or back.
    pub out: bool,
    /// Why.
    pub why: WithdrawWhy,
    /// When this direction was decided.
    pub since: Millis,
    /// The configuration's progress.
    pub apply: Reapply,
    /// Asked at least once in this direction, and not refused since.
    pub asked: bool,
}

impl Withdrawal {
    /// A new one in direction `out`, decided at `now`.
    pub(super) fn new(out: bool, why: WithdrawWhy, now: Millis) -> Withdrawal {
        Withdrawal {
            out,
            why,
            since: now,
            apply: Reapply::Idle,
            asked: false,
        }
    }

    /// Where it stands, for `/status`: `withdrawing`, `withdrawn` (bgpd's
    /// configuration holds it) or `restoring`.
    pub fn name(&self, in_bgpd: bool) -> &'static str {
        match (self.out, in_bgpd) {
            (true, false) => "withdrawing",
            (true, true) => "withdrawn",
            (false, _) => "restoring",
        }
    }
}
