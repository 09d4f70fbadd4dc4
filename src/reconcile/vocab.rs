//! The core's vocabulary: what it is told ([`Event`]), what it asks for
//! ([`Action`]), what it concludes ([`Class`]), how it is tuned ([`Config`])
//! and what it remembers ([`State`], [`Vip`], [`HealState`]).
//!
//! Contract: plain data, no logic beyond bookkeeping. Every type that is
//! recorded or reported (events, actions, configuration, state) is serde;
//! their JSON form is what `ribbridge run --record` writes and what the
//! cases under `tests/data/reconcile/` hold, so it does not change without
//! re-recording them. The decisions live in [`step`](fn@super::step).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::HealAction;
use super::drain::{DrainFile, DrainTrack};
use super::withdraw::{WithdrawWhy, Withdrawal};
use crate::model::intent::Intent;
use crate::model::{Mode, PeerView, Release, TableMode, Vantage};
use crate::model::{Prefix, PrefixSet, TableId};

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

/// Everything the core learns. Each variant is one observation or result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// A watched-table route appeared, changed (`Some`) or went (`None`).
    KernelRoute {
        /// The watched table.
        table: TableId,
        /// The route's destination.
        prefix: Prefix,
        /// What the kernel holds now (None: the route went).
        route: Option<KernelFacts>,
    },
    /// A full dump of the watched tables replaced the mirror.
    KernelSynced {
        /// Every route of the watched tables.
        routes: Vec<KernelEntry>,
    },
    /// A realm-only replace (kube-vip's heartbeat): not a change.
    KernelReasserted {
        /// The watched table.
        table: TableId,
        /// The route's destination.
        prefix: Prefix,
    },
    /// A local address equal to `prefix` appeared, went, or changed its
    /// usability.
    KernelAddress {
        /// The address as a host prefix.
        prefix: Prefix,
        /// It appeared (`true`) or went.
        present: bool,
        /// Present and neither `tentative` nor `dadfailed` (recordings
        /// made before the flags were read have no field: usable).
        #[serde(default = "yes")]
        usable: bool,
    },
    /// The ZAPI session is up and subscribed.
    ZebraUp {
        /// zebra's release, from its HELLO exchange.
        release: Release,
        /// How the table reaches bgpd on this node.
        #[serde(alias = "redistribution")]
        table_mode: TableMode,
    },
    /// The ZAPI session is gone (zebra stopped or restarting).
    ZebraDown,
    /// zebra redistributes (`true`) or withdrew (`false`) a route of `table`.
    ZebraRoute {
        /// The redistributed table.
        table: TableId,
        /// The route's destination.
        prefix: Prefix,
        /// Redistributed (`true`) or withdrawn.
        present: bool,
    },
    /// After (re)subscription: exactly these routes are redistributed now.
    ZebraSynced {
        /// The redistributed table.
        table: TableId,
        /// Every prefix zebra redistributes from it.
        prefixes: PrefixSet,
    },
    /// zebra's own table view (`show ip route table N json`), a cross-check.
    ZebraTable {
        /// The table zebra was asked about.
        table: TableId,
        /// Every prefix zebra's table holds.
        prefixes: PrefixSet,
    },
    /// bgpd's per-peer view, freshly polled.
    BgpView {
        /// Every peer bgpd knows, established or not.
        peers: Vec<PeerView>,
    },
    /// A heal action finished (executed, not yet verified).
    HealDone {
        /// The VIP's table.
        table: TableId,
        /// The VIP.
        prefix: Prefix,
        /// The action that ran.
        action: HealAction,
        /// It ran without error (whether it healed is observed after).
        ok: bool,
        /// The error, when not `ok`: the daemon's message as a person
        /// reads it (free text, not a closed set; it becomes
        /// [`HealResult::Error`]).
        detail: String,
    },
    /// Time passed (the daemon's wake-up for a deadline the core asked for).
    Tick,
    /// bgpd's configuration holds the drain (`true`: the node withdrew its
    /// VIPs from every peer on purpose) or not, as last read from it.
    Drain {
        /// The drain's entry is configured.
        drained: bool,
    },
    /// bgpd's configuration, as last read, when it differs from the one
    /// before: which tables are redistributed, through which policy.
    Intent {
        /// What the configuration says should happen.
        intent: Intent,
    },
    /// The drain state file changed (its watch reads it at once, before
    /// `ribbridge drain` touches bgpd).
    DrainFile {
        /// What it says now.
        file: DrainFile,
    },
    /// The re-apply of a lost drain ([`Action::ReapplyDrain`]) ran.
    DrainReapplied {
        /// bgpd accepted the drain's entry (or already had it).
        ok: bool,
    },
    /// A VIP's withdrawal or its putting back ([`Action::Withdraw`]) ran.
    Withdrew {
        /// The VIP's table.
        table: TableId,
        /// The VIP.
        prefix: Prefix,
        /// Taken out (true) or put back.
        out: bool,
        /// bgpd accepted it (or had it already).
        ok: bool,
    },
    /// A backend probe of a VIP changed its verdict (its `fall` failures or
    /// `rise` successes in a row, counted by the daemon's prober).
    Backend {
        /// The VIP's table.
        table: TableId,
        /// The VIP.
        prefix: Prefix,
        /// Which probe.
        probe: ProbeKind,
        /// Its verdict now.
        state: BackendState,
    },
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

/// What the core asks the daemon to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "do", rename_all = "snake_case")]
pub enum Action {
    /// Execute a heal action for one VIP; answer with [`Event::HealDone`].
    Heal {
        /// The VIP's table.
        table: TableId,
        /// The VIP.
        prefix: Prefix,
        /// What to do.
        action: HealAction,
    },
    /// Poll bgpd's per-peer view; answer with [`Event::BgpView`].
    RefreshBgp,
    /// Send [`Event::Tick`] at this time (the earliest pending deadline).
    WakeAt {
        /// The deadline, on the clock of `now`.
        at: Millis,
    },
    /// A VIP's reported state changed (for logs and metrics).
    StateChanged {
        /// The VIP's table.
        table: TableId,
        /// The VIP.
        prefix: Prefix,
        /// The class reported until now.
        from: Class,
        /// The class reported from now on.
        to: Class,
        /// Set when a drift ended: how long it lasted.
        drift_ms: Option<Millis>,
    },
    /// Healing a VIP was given up after the bounded number of attempts.
    GaveUp {
        /// The VIP's table.
        table: TableId,
        /// The VIP.
        prefix: Prefix,
        /// The drift it stays in.
        class: Class,
    },
    /// A discovered VIP left every view longer than the retention ago: the
    /// core forgot it.
    Forgot {
        /// The VIP's table.
        table: TableId,
        /// The VIP.
        prefix: Prefix,
    },
    /// Configure the recorded drain that bgpd's configuration lost; answer
    /// with [`Event::DrainReapplied`].
    ReapplyDrain,
    /// Take one `withdraw = true` VIP out of BGP (`out`), or put it back,
    /// through bgpd's configuration; answer with [`Event::Withdrew`].
    Withdraw {
        /// The VIP's table.
        table: TableId,
        /// The VIP.
        prefix: Prefix,
        /// Out (true) or back.
        out: bool,
        /// Why (for the log).
        why: WithdrawWhy,
        /// No ask of this episode was accepted yet (later ones are
        /// retries: one log line an episode, with the first accepted).
        first: bool,
    },
    /// The recorded drain is lost (`true`: bgpd lacks it and it is not
    /// being re-applied: observe mode, a failed re-apply, an unreadable
    /// file) or no longer (for logs and metrics).
    DrainLost {
        /// Lost from now on.
        lost: bool,
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
    /// Watched tables (configured VIPs are reported in the first).
    pub tables: Vec<TableId>,
    /// Node or router.
    #[serde(default)]
    pub vantage: Vantage,
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
    /// `flap_window_ms` is `flapping` (at most [`MAX_FLAP_PAIRS`]).
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

/// The most withdrawals a writer's record keeps: `flap_pairs` is at most
/// one less.
pub const MAX_FLAP_PAIRS: u32 = WITHDRAWALS as u32 - 1;

/// The withdrawals a writer keeps, newest first.
const WITHDRAWALS: usize = 8;

fn default_flap_pairs() -> u32 {
    3
}

fn default_flap_window() -> Millis {
    300_000
}

fn default_writer_silent_ticks() -> u32 {
    3
}

fn yes() -> bool {
    true
}

/// bgpd answers zebra's change ~100 ms later (a table change reaches the
/// router in 121-125 ms, docs/FRR-BEHAVIOUR.md): its view is re-read this
/// long after a change, whatever the (shorter) zebra-side grace, so that a
/// VIP bgpd has just sent is seen `advertised` without waiting for the
/// periodic poll. 500 ms: the settle every recorded case ran with.
const BGP_SETTLE_MS: Millis = 500;

impl Config {
    /// How long after a change of a VIP's facts the polled views are
    /// re-read: the grace, or bgpd's settle when that is longer.
    pub(super) fn settle_ms(&self) -> Millis {
        self.grace_ms.max(BGP_SETTLE_MS)
    }
}

impl Default for Config {
    fn default() -> Config {
        Config {
            mode: Mode::Repair,
            grace_ms: DEFAULT_GRACE_MS,
            bgp_grace_ms: 2_000,
            bgp_startup_grace_ms: default_startup_grace(),
            max_attempts: 3,
            backoff_ms: 1_000,
            backoff_max_ms: 30_000,
            heal_addresses: false,
            vips: BTreeSet::new(),
            tables: vec![crate::model::VIP_TABLE],
            vantage: Vantage::Node,
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

/// A VIP's writer (kube-vip's routing-table loop) as the kernel shows it:
/// one realm-toggling replace per healthy tick (kube-vip >= 1.2.2; on IPv6,
/// which keeps no realm, every replace is announced all the same). Kept
/// only for VIPs re-asserted while the daemon watched, until the VIP is
/// forgotten. When the route goes, the writer withdrew it: the withdrawal
/// is kept (flapping is counted from them) and the cadence starts anew
/// with the next add (a writer that withdrew is not silent).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Writer {
    /// When the last beat came.
    pub last_ms: Millis,
    /// Beats seen since the route was added (or first re-asserted).
    pub beats: u64,
    /// The last intervals between beats, newest first (0: not yet seen).
    intervals: [Millis; WRITER_INTERVALS],
    /// The times it withdrew the route, newest first (None: not yet).
    withdrawals: [Option<Millis>; WITHDRAWALS],
    /// The cadence it had before its last withdrawal: its tick while the
    /// route is away (a new cadence is learned after the next add).
    tick_before: Option<Millis>,
}

/// kube-vip's `backend_health_check_interval` when it is not set (and
/// OpenShift's setting): the writer's tick when none is known.
const KUBE_VIP_TICK_MS: Millis = 5_000;

/// How many intervals the learned cadence looks at: the longest of them
/// (a slow backend check delays a tick) is the cadence.
const WRITER_INTERVALS: usize = 4;

/// What the core can say of a writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WriterState {
    /// Re-asserted within its silence limit.
    Alive,
    /// No re-assertion for `writer_silent_ticks` of its ticks.
    Silent,
    /// No cadence known: fewer than three beats seen, none configured and
    /// none learnt before a restart or a withdrawal (an older kube-vip that
    /// never re-asserts, a static route). Never guessed.
    Unknown,
}

impl WriterState {
    /// The snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            WriterState::Alive => "alive",
            WriterState::Silent => "silent",
            WriterState::Unknown => "unknown",
        }
    }
}

impl Writer {
    /// A beat at `now`. A beat after the writer went silent is its
    /// return (a restart), not a tick: the cadence starts anew, the old one
    /// kept as its tick meanwhile (a restart's gap taken as a tick made
    /// the next `capacity_lost` wait 12-15 s for a 1 s writer).
    pub(super) fn beat(&mut self, now: Millis, config: &Config) {
        if self.silent_at(config).is_some_and(|at| now >= at) {
            self.tick_before = self.cadence(config).or(self.tick_before);
            self.intervals = [0; WRITER_INTERVALS];
            self.beats = 0;
        }
        if self.beats > 0 {
            self.intervals.rotate_right(1);
            self.intervals[0] = now.saturating_sub(self.last_ms).max(1);
        }
        self.last_ms = now;
        self.beats = self.beats.saturating_add(1);
    }

    /// The route went at `now`: a withdrawal; the cadence starts anew.
    pub(super) fn withdrew(&mut self, now: Millis, config: &Config) {
        self.tick_before = self.cadence(config).or(self.tick_before);
        self.withdrawals.rotate_right(1);
        self.withdrawals[0] = Some(now);
        self.intervals = [0; WRITER_INTERVALS];
        self.beats = 0;
    }

    /// Withdrawals within the flap window before `now`.
    pub fn flaps(&self, config: &Config, now: Millis) -> u32 {
        let since = now.saturating_sub(config.flap_window_ms);
        let n = self
            .withdrawals
            .iter()
            .flatten()
            .filter(|t| **t > since)
            .count();
        u32::try_from(n).unwrap_or(u32::MAX)
    }

    /// More than `flap_pairs` withdrawals within the window.
    pub fn flapping(&self, config: &Config, now: Millis) -> bool {
        self.flaps(config, now) > config.flap_pairs.min(MAX_FLAP_PAIRS)
    }

    /// When the flapping ends without another withdrawal: the oldest one
    /// that makes it leaves the window (None: not flapping).
    pub(super) fn flap_ends_at(&self, config: &Config) -> Option<Millis> {
        let k = usize::try_from(config.flap_pairs.min(MAX_FLAP_PAIRS)).unwrap_or(0);
        self.withdrawals[k].map(|t| t + config.flap_window_ms)
    }

    /// The writer's tick: the configured one, or the longest of the last
    /// intervals once two are known.
    pub fn cadence(&self, config: &Config) -> Option<Millis> {
        config.writer_interval_ms.or_else(|| {
            let known = self.intervals.iter().filter(|i| **i > 0).count();
            (known >= 2).then(|| self.intervals.iter().copied().max().unwrap_or(0))
        })
    }

    /// When the writer turns silent (None: no cadence known). Until a new
    /// cadence is learnt, a writer that beats again after a restart or a
    /// withdrawal keeps its old tick: killed within two ticks of its
    /// return, it is silent all the same, not unknown (a restart does not
    /// change kube-vip's interval). A route back without a beat yet has no
    /// writer known to keep it: unknown.
    pub fn silent_at(&self, config: &Config) -> Option<Millis> {
        let before = (self.beats > 0).then_some(self.tick_before).flatten();
        self.cadence(config).or(before).map(|c| {
            self.last_ms + c.saturating_mul(Millis::from(config.writer_silent_ticks.max(1))) + 1
        })
    }

    /// Alive, silent or unknown at `now`.
    pub fn state(&self, config: &Config, now: Millis) -> WriterState {
        match self.silent_at(config) {
            None => WriterState::Unknown,
            Some(at) if now >= at => WriterState::Silent,
            Some(_) => WriterState::Alive,
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

/// One VIP: the joined views and its state.
///
/// Layout: most VIPs are healthy for their whole life, and a node holds
/// 100 000 of them, so every VIP carries only the hot part (the facts, the
/// classes and the times the classifier reads: 64 bytes); what only a
/// drifting or healing VIP needs (its [`HealState`], when its drift began,
/// a fast heal's check) is out of line, allocated the first time it is
/// written ([`Vip::heal`] reads a default until then). The JSON form is
/// the one of the plain struct (`VipRepr`): the layout is not part of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "VipRepr", into = "VipRepr")]
pub struct Vip {
    /// zebra redistributes it (ZAPI).
    pub zebra: bool,
    /// zebra's table view has it (vty cross-check; None: not polled).
    pub zebra_table: Option<bool>,
    /// The reported class.
    pub state: Class,
    /// The instantaneous class.
    pub observed: Class,
    /// When the reported class began.
    pub since: Millis,
    /// When `observed` began.
    pub observed_since: Millis,
    /// The kernel holds the route (`kernel_protocol` and `kernel_nexthops`
    /// are its facts): [`Vip::kernel`]. Three fields, not an
    /// `Option<KernelFacts>`, which would take 12 bytes for 6.
    in_kernel: bool,
    kernel_protocol: u8,
    kernel_nexthops: u32,
    /// Realm-only re-assertions seen ([`Vip::reassertions`]; 32 bits are
    /// 136 years of one beat a second).
    reassertions: u32,
    /// Last change of the kernel or zebra facts: a poll follows it after
    /// the grace, since bgpd reacts after zebra does.
    pub(super) touched_at: Millis,
    /// The last kernel write to the route that ribbridge did not make (a
    /// re-assertion or a change): the trigger a fast heal answers. Taken
    /// (set to none) by the fast heal it starts, so one trigger gets one.
    /// Hot: kube-vip's heartbeat sets it on every VIP.
    pub(super) trigger_at: Stamp,
    /// When the kernel route appeared (absent before): an address of the
    /// same prefix right after it is 10.7's lost-route trigger. Hot: every
    /// route added after the start sets it.
    pub(super) added_at: Stamp,
    /// What only a drifting or healing VIP needs (None: all defaults).
    pub(super) cold: Option<Box<Cold>>,
}

/// An optional time in 8 bytes (an `Option<Millis>` takes 16): `Millis::MAX`
/// is none, a time the daemon's clock (milliseconds since its start) never
/// reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stamp(Millis);

impl Stamp {
    /// No time.
    pub(super) const NONE: Stamp = Stamp(Millis::MAX);

    /// The time `at`.
    pub(super) fn at(at: Millis) -> Stamp {
        Stamp(at)
    }

    /// The time, if any.
    pub(super) fn get(self) -> Option<Millis> {
        (self.0 != Millis::MAX).then_some(self.0)
    }
}

/// The part of a [`Vip`] only a drifting or healing VIP needs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Cold {
    /// When the reported class turned into drift (for the drift duration).
    pub(super) drift_since: Option<Millis>,
    /// A recognised trigger's check: at this time, if zebra still lacks
    /// the route, heal at once.
    pub(super) fast_due: Option<Millis>,
    /// Healing bookkeeping.
    pub(super) heal: HealState,
}

/// The healing bookkeeping of a VIP that never healed.
static NO_HEAL: HealState = HealState {
    attempts: 0,
    last_action: None,
    last_result: None,
    in_flight: false,
    next_at: 0,
    gave_up: false,
    done_at: 0,
    fast: false,
    slot_at: None,
};

impl Vip {
    /// A VIP first seen at `now`: absent everywhere, `withdrawn`.
    pub(super) fn new(now: Millis) -> Vip {
        Vip {
            zebra: false,
            zebra_table: None,
            state: Class::Withdrawn,
            observed: Class::Withdrawn,
            since: now,
            observed_since: now,
            in_kernel: false,
            kernel_protocol: 0,
            kernel_nexthops: 0,
            reassertions: 0,
            touched_at: now,
            trigger_at: Stamp::NONE,
            added_at: Stamp::NONE,
            cold: None,
        }
    }

    /// Kernel view (None: absent).
    pub fn kernel(&self) -> Option<KernelFacts> {
        self.in_kernel.then_some(KernelFacts {
            protocol: self.kernel_protocol,
            nexthops: self.kernel_nexthops,
        })
    }

    /// The kernel holds the route.
    pub fn in_kernel(&self) -> bool {
        self.in_kernel
    }

    pub(super) fn set_kernel(&mut self, facts: Option<KernelFacts>) {
        self.in_kernel = facts.is_some();
        let f = facts.unwrap_or(KernelFacts {
            protocol: 0,
            nexthops: 0,
        });
        (self.kernel_protocol, self.kernel_nexthops) = (f.protocol, f.nexthops);
    }

    /// Realm-only re-assertions seen.
    pub fn reassertions(&self) -> u64 {
        u64::from(self.reassertions)
    }

    pub(super) fn reasserted(&mut self) {
        self.reassertions = self.reassertions.saturating_add(1);
    }

    /// Healing bookkeeping (all defaults for a VIP that never healed).
    pub fn heal(&self) -> &HealState {
        self.cold.as_ref().map_or(&NO_HEAL, |c| &c.heal)
    }

    /// When the reported class turned into drift (for the drift duration).
    pub fn drift_since(&self) -> Option<Millis> {
        self.cold.as_ref().and_then(|c| c.drift_since)
    }

    /// A recognised trigger's pending check, if any.
    pub(super) fn fast_due(&self) -> Option<Millis> {
        self.cold.as_ref().and_then(|c| c.fast_due)
    }

    /// The out-of-line part, allocated on first use: only for a VIP that
    /// drifts, heals or has a fast heal's check pending.
    pub(super) fn cold_mut(&mut self) -> &mut Cold {
        self.cold.get_or_insert_with(Box::default)
    }

    /// The out-of-line part if it exists: for writes that only reset what
    /// a VIP without it already has at its default.
    pub(super) fn cold_if_any(&mut self) -> Option<&mut Cold> {
        self.cold.as_deref_mut()
    }

    /// Free the out-of-line part once it holds only defaults again, or
    /// (`all`) whatever it holds: a VIP back to health, or one gone from
    /// every view, costs its hot part only (100 000 VIPs deleted at once
    /// would otherwise keep ~12 MB of drift records until forgotten).
    pub(super) fn shed_cold(&mut self, all: bool) {
        if all || self.cold.as_deref().is_some_and(|c| *c == Cold::default()) {
            self.cold = None;
        }
    }

    /// Healing bookkeeping, for writing (allocates the out-of-line part).
    pub(super) fn heal_mut(&mut self) -> &mut HealState {
        &mut self.cold_mut().heal
    }
}

/// [`Vip`]'s JSON form: the plain struct it was before its layout was
/// compacted, field for field.
#[derive(Serialize, Deserialize)]
struct VipRepr {
    kernel: Option<KernelFacts>,
    zebra: bool,
    zebra_table: Option<bool>,
    state: Class,
    since: Millis,
    observed: Class,
    observed_since: Millis,
    drift_since: Option<Millis>,
    reassertions: u64,
    heal: HealState,
}

impl From<Vip> for VipRepr {
    fn from(v: Vip) -> VipRepr {
        VipRepr {
            kernel: v.kernel(),
            zebra: v.zebra,
            zebra_table: v.zebra_table,
            state: v.state,
            since: v.since,
            observed: v.observed,
            observed_since: v.observed_since,
            drift_since: v.drift_since(),
            reassertions: v.reassertions(),
            heal: v.cold.map(|c| c.heal).unwrap_or_default(),
        }
    }
}

impl From<VipRepr> for Vip {
    fn from(r: VipRepr) -> Vip {
        let mut v = Vip::new(0);
        v.set_kernel(r.kernel);
        (v.zebra, v.zebra_table, v.state, v.since) = (r.zebra, r.zebra_table, r.state, r.since);
        (v.observed, v.observed_since) = (r.observed, r.observed_since);
        v.reassertions = u32::try_from(r.reassertions).unwrap_or(u32::MAX);
        if r.drift_since.is_some() || r.heal != HealState::default() {
            let c = v.cold_mut();
            (c.drift_since, c.heal) = (r.drift_since, r.heal);
        }
        v
    }
}

/// VIPs added one at a time before [`State::vip`] considers repacking
/// the map (a handful of half-full nodes is not worth a rebuild).
const REPACK_FROM: usize = 4_096;

/// A deadline's list shorter than this grows without folding its repeats
/// (sorting a handful is not worth it).
const FOLD_FROM: usize = 16;

/// Deadlines: VIPs to re-evaluate at a time. A whole-view event can give
/// every VIP the same deadline (100 000 at a node's start), so the VIPs of
/// one time share a list (24 bytes a VIP, where a set of (time, VIP) pairs
/// took ~60 with its half-full nodes). A VIP may be listed twice for one
/// time; [`Wakeups::take_due`] folds that, in the order a set of (time,
/// VIP) pairs would give.
#[derive(Debug, Clone, Default)]
pub(super) struct Wakeups(BTreeMap<Millis, Vec<(TableId, Prefix)>>);

impl Wakeups {
    /// Re-evaluate `key` at `at`. A VIP evaluated again before its
    /// deadline asks for the same one again (every whole-view walk does),
    /// so a full list folds its repeats before it grows: it holds each VIP
    /// at most about twice. (Unfolded, 100 000 VIPs deleted at once asked
    /// for their forgetting ~14 times each before it came: one 33 MB
    /// list, the deletion path's peak, docs/PERFORMANCE.md §2.5.)
    pub(super) fn insert(&mut self, at: Millis, key: (TableId, Prefix)) {
        let keys = self.0.entry(at).or_default();
        if keys.len() == keys.capacity() && keys.len() >= FOLD_FROM {
            keys.sort_unstable();
            keys.dedup();
        }
        keys.push(key);
    }

    /// Takes the VIPs due at `now`: by time, then by VIP, each time's
    /// duplicates folded, and a VIP due at two consecutive entries once.
    pub(super) fn take_due(&mut self, now: Millis) -> Vec<(TableId, Prefix)> {
        let later = self.0.split_off(&now.saturating_add(1));
        let due = std::mem::replace(&mut self.0, later);
        let mut keys = Vec::new();
        for (_, mut at) in due {
            at.sort_unstable();
            at.dedup();
            // One time due (the common case, and a whole view's 100 000
            // deadlines): its list is the answer, not copied.
            if keys.is_empty() {
                keys = at;
            } else {
                keys.append(&mut at);
            }
        }
        keys.dedup();
        keys
    }

    /// Forgets the deadlines up to `now` (their VIPs were just evaluated).
    pub(super) fn drop_past(&mut self, now: Millis) {
        while self.0.first_key_value().is_some_and(|(&at, _)| at <= now) {
            self.0.pop_first();
        }
    }

    /// The earliest deadline.
    pub(super) fn first(&self) -> Option<Millis> {
        self.0.first_key_value().map(|(&at, _)| at)
    }
}

/// The state the daemon's loop owns.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct State {
    /// Tunables.
    pub config: Config,
    /// VIPs by (table, prefix).
    pub vips: BTreeMap<(TableId, Prefix), Vip>,
    /// Local host addresses (for shadowing, and a VIP's own).
    pub addresses: BTreeSet<Prefix>,
    /// Those of `addresses` that cannot be used (IPv6 `tentative` or
    /// `dadfailed`).
    #[serde(default)]
    pub unusable: BTreeSet<Prefix>,
    /// The writers seen re-asserting a watched route, by VIP.
    #[serde(skip)]
    pub writers: BTreeMap<(TableId, Prefix), Writer>,
    /// The probed VIPs' backends, by VIP.
    #[serde(skip)]
    pub backends: BTreeMap<(TableId, Prefix), Backend>,
    /// The ZAPI session, when up.
    pub zebra: Option<(Release, TableMode)>,
    /// The ZAPI session has delivered its first complete view.
    pub zebra_synced: bool,
    /// The kernel mirror has completed a full dump.
    pub kernel_synced: bool,
    /// bgpd's last view and when it was taken.
    pub peers: Vec<PeerView>,
    /// When `peers` was taken (None: never).
    pub bgp_view_at: Option<Millis>,
    /// bgpd's configuration holds the drain (every VIP is `drained`).
    #[serde(default)]
    pub drained: bool,
    /// bgpd's configuration as last read (None: never read; classification
    /// is then what it was before intent was read).
    #[serde(default)]
    pub intent: Option<Intent>,
    /// When the intent last changed (a configuration change): bgpd applies
    /// a changed route-map after its delay timer, which is convergence.
    #[serde(default)]
    pub intent_at: Millis,
    /// The node-wide ceiling on heal actions.
    #[serde(default)]
    pub ceiling: Ceiling,
    /// The VIPs ribbridge takes out of BGP or puts back, by VIP.
    #[serde(skip)]
    pub withdrawals: BTreeMap<(TableId, Prefix), Withdrawal>,
    /// The drain state file and the re-apply of a lost drain.
    #[serde(default)]
    pub drain: DrainTrack,
    /// When zebra last withdrew a route of a watched table (None: not
    /// since the start): a mass deletion's withdrawals take zebra seconds,
    /// and the routes it has not reached yet are its backlog, not stale
    /// (`evaluate`'s `zebra_backlog_due`).
    #[serde(default)]
    pub zebra_withdrawn_at: Option<Millis>,
    /// zebra's progress through the kernel's changes: when it last sent a
    /// route of a watched table, and the latest kernel change it has sent
    /// (the route's last touch before zebra's event). zebra follows the
    /// kernel in order, so a route added after that change and not sent
    /// yet, while zebra still sends, is its backlog, not `kernel_only`
    /// (`evaluate`'s `zebra_behind_due`).
    #[serde(default)]
    pub zebra_sent: Option<(Millis, Millis)>,
    /// Deadlines: (time, VIP) pairs to re-evaluate at that time.
    #[serde(skip)]
    pub(super) wakeups: Wakeups,
    /// VIPs added one at a time since `vips` was last built in full nodes
    /// ([`State::vip`]).
    #[serde(skip)]
    pub(super) vips_unpacked: usize,
    /// Established sessions seen advertising something since they came up
    /// (bgpd's initial-update delay is over for them), by peer, with when
    /// they came up on our clock (negative: before this process started;
    /// None: bgpd did not say).
    #[serde(skip)]
    pub(super) sent: BTreeMap<String, Option<i64>>,
    /// When a `reimport_table` heal of each table was last asked or
    /// answered (`reimport`).
    #[serde(skip)]
    pub(super) reimported: BTreeMap<TableId, Millis>,
    /// A read of the configuration held as a re-import's own middle, with
    /// when it was read (`reimport`).
    #[serde(skip)]
    pub(super) held_intent: Option<(Intent, Millis)>,
}

impl State {
    /// A fresh state; configured VIPs start `withdrawn` until observed.
    pub fn new(config: Config, now: Millis) -> State {
        let mut s = State {
            vips: BTreeMap::new(),
            addresses: BTreeSet::new(),
            unusable: BTreeSet::new(),
            writers: BTreeMap::new(),
            withdrawals: BTreeMap::new(),
            backends: BTreeMap::new(),
            zebra: None,
            zebra_synced: false,
            kernel_synced: false,
            peers: Vec::new(),
            bgp_view_at: None,
            drained: false,
            intent: None,
            intent_at: 0,
            ceiling: Ceiling::default(),
            zebra_withdrawn_at: None,
            zebra_sent: None,
            drain: DrainTrack::default(),
            wakeups: Wakeups::default(),
            vips_unpacked: 0,
            sent: BTreeMap::new(),
            reimported: BTreeMap::new(),
            held_intent: None,
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
            // The station's readiness is its routers' (daemon::bmp); the
            // core classifies nothing there.
            Vantage::Bmp => false,
        }
    }

    /// At the router only the configured VIPs are tracked (its table holds
    /// every route of the network).
    pub(super) fn tracks(&self, table: TableId, prefix: &Prefix) -> bool {
        self.is_watched(table)
            && (self.config.vantage == Vantage::Node || self.config.vips.contains(prefix))
    }

    /// The VIP at (`table`, `prefix`), added (first seen at `now`) if new.
    /// Routes added one at a time come in key order in a burst (one `ip
    /// -batch`), and a B-tree filled in key order leaves its nodes half
    /// full: once the VIPs added that way reach a quarter of the map (and
    /// [`REPACK_FROM`]), it is rebuilt in full nodes. 100 000 routes added
    /// after the start: ~16 MB of nodes, ~9 MB packed (heaptrack).
    pub(super) fn vip(&mut self, table: TableId, prefix: Prefix, now: Millis) -> &mut Vip {
        let key = (table, prefix);
        if !self.vips.contains_key(&key) {
            self.vips_unpacked += 1;
            if self.vips_unpacked >= REPACK_FROM.max(self.vips.len() / 4) {
                super::merge::repack(&mut self.vips);
                self.vips_unpacked = 0;
            }
        }
        self.vips.entry(key).or_insert_with(|| Vip::new(now))
    }

    /// The VIP whose facts are about to change: schedules the poll that
    /// confirms what followed (bgpd answers zebra's change ~100 ms later).
    pub(super) fn touch(&mut self, table: TableId, prefix: Prefix, now: Millis) -> &mut Vip {
        let at = now + self.config.settle_ms();
        self.wakeups.insert(at, (table, prefix));
        let v = self.vip(table, prefix, now);
        v.touched_at = now;
        v
    }

    pub(super) fn is_watched(&self, table: TableId) -> bool {
        self.config.tables.contains(&table)
    }

    /// The VIP's address is on the node and usable.
    pub fn address_usable(&self, prefix: &Prefix) -> bool {
        self.addresses.contains(prefix) && !self.unusable.contains(prefix)
    }

    /// The node can serve the VIP as far as its address and its backend
    /// go: the address is usable (or not required) and the health probe
    /// (if any) is not down. Nothing re-advertises a VIP that fails this.
    pub fn servable(&self, key: &(TableId, Prefix)) -> bool {
        (!self.config.require_address || self.address_usable(&key.1))
            && !self.backends.get(key).is_some_and(Backend::down)
    }

    /// The tick of the VIP's writer: learned, configured, or kube-vip's
    /// default (5 s).
    pub fn writer_tick(&self, key: &(TableId, Prefix)) -> Millis {
        self.writers
            .get(key)
            .and_then(|w| w.cadence(&self.config).or(w.tick_before))
            .or(self.config.writer_interval_ms)
            .unwrap_or(KUBE_VIP_TICK_MS)
    }

    /// The VIP's writer withdrew it more than `flap_pairs` times within
    /// the window before `now`.
    pub fn flapping(&self, key: &(TableId, Prefix), now: Millis) -> bool {
        self.writers
            .get(key)
            .is_some_and(|w| w.flapping(&self.config, now))
    }

    /// The VIP's writer is silent at `now` (an unknown writer is not).
    pub fn writer_silent(&self, key: &(TableId, Prefix), now: Millis) -> bool {
        self.writers
            .get(key)
            .is_some_and(|w| w.state(&self.config, now) == WriterState::Silent)
    }
}

/// The node-wide ceiling on heal actions: a rate and a burst (a generic
/// cell rate algorithm on the core's clock). A held-back action gets its
/// own slot in the queue, so a mass drift is paced, in order, without
/// re-asking at every wake-up.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ceiling {
    /// The theoretical time the next action would be due at the rate.
    #[serde(skip)]
    pub(super) tat: Millis,
    /// Actions held back by the ceiling since the start.
    pub deferred: u64,
}

impl Ceiling {
    /// The time between two actions at `rate` a second (at least 1 ms).
    fn interval(rate: u32) -> Millis {
        1_000 / Millis::from(rate.clamp(1, 1_000))
    }

    /// The earliest time an action may run when the next one is due at
    /// `tat` at `rate`: `burst` actions (at least one) fit before it.
    fn earliest(tat: Millis, rate: u32, burst: u32) -> Millis {
        tat.saturating_sub(Self::interval(rate).saturating_mul(Millis::from(burst.max(1)) - 1))
    }

    /// An action now: `Ok` when the ceiling admits it, else the time of
    /// the slot reserved for it (a later call must not ask again).
    pub(super) fn admit(&mut self, rate: u32, burst: u32, now: Millis) -> Result<(), Millis> {
        let tat = self.tat.max(now);
        let at = Self::earliest(tat, rate, burst);
        self.tat = tat + Self::interval(rate);
        if at <= now {
            Ok(())
        } else {
            self.deferred += 1;
            Err(at)
        }
    }

    /// An action now only if the ceiling admits it without waiting.
    pub(super) fn try_admit(&mut self, rate: u32, burst: u32, now: Millis) -> bool {
        let tat = self.tat.max(now);
        if Self::earliest(tat, rate, burst) <= now {
            self.tat = tat + Self::interval(rate);
            true
        } else {
            false
        }
    }

    /// The ceiling holds actions back now (no action would run at once).
    pub fn binding(&self, rate: u32, burst: u32, now: Millis) -> bool {
        Self::earliest(self.tat, rate, burst) > now
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_asked_for_again_and_again_is_held_about_once() {
        let key = |i: u32| {
            let addr = std::net::Ipv4Addr::from(0x0a00_0000 + i);
            let p = Prefix::new(addr.into(), 32).expect("a host prefix");
            (198, p)
        };
        let mut w = Wakeups::default();
        // 1 000 VIPs, each asking for the same deadline 14 times, in the
        // order whole-view walks ask (every VIP, then every VIP again).
        for _ in 0..14 {
            for i in 0..1_000 {
                w.insert(5_000, key(i));
            }
        }
        let held = w.0.get(&5_000).map_or(0, Vec::len);
        assert!(
            (1_000..=2_000).contains(&held),
            "held {held} for 1 000 VIPs"
        );
        let due = w.take_due(5_000);
        assert_eq!(due, (0..1_000).map(key).collect::<Vec<_>>());
        assert_eq!(w.first(), None);
    }

    #[test]
    fn the_ceiling_admits_a_burst_then_one_an_interval_in_reserved_slots() {
        // 10 a second (100 ms apart), 3 at once.
        let mut c = Ceiling::default();
        for _ in 0..3 {
            assert_eq!(c.admit(10, 3, 1_000), Ok(()));
        }
        assert!(c.binding(10, 3, 1_000));
        assert!(!c.try_admit(10, 3, 1_000), "no slot at once");
        assert_eq!(c.admit(10, 3, 1_000), Err(1_100), "the next slot");
        assert_eq!(c.deferred, 1);
        // The slot at 1 100 is reserved: the next free one is at 1 200.
        assert!(!c.try_admit(10, 3, 1_100));
        assert!(c.try_admit(10, 3, 1_200));
        assert!(!c.binding(10, 3, 1_400));
    }

    #[test]
    fn a_burst_of_zero_is_a_burst_of_one() {
        let mut c = Ceiling::default();
        assert_eq!(c.admit(10, 0, 0), Ok(()));
        assert_eq!(c.admit(10, 0, 50), Err(100));
        assert_eq!(Ceiling::earliest(1_000, 10, 0), 1_000);
        assert_eq!(Ceiling::earliest(1_000, 10, 4), 700);
        assert_eq!(Ceiling::earliest(100, 1, 1_000), 0, "saturates at zero");
    }
}
