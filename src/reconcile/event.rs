//! What the core is told ([`Event`]) and what it asks for ([`Action`]).
//!
//! Contract: plain serde data, the core's only input and only output: a run
//! recorded as JSON lines (`ribbridge run --record`) replays through
//! [`step`](fn@super::step) to the same actions. The cases under
//! `tests/data/reconcile/` hold this form, so it does not change without
//! re-recording them.

use serde::{Deserialize, Serialize};

use super::vocab::{
    BackendState, Class, DrainFile, HealAction, KernelEntry, KernelFacts, Millis, ProbeKind,
    WithdrawWhy,
};
use crate::model::intent::Intent;
use crate::model::{PeerView, Prefix, PrefixSet, Release, TableId, TableMode};

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
        /// [`HealResult::Error`](super::HealResult::Error)).
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

fn yes() -> bool {
    true
}
