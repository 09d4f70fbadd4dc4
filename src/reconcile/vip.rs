//! One VIP as the core holds it ([`Vip`]): the joined views, its classes
//! and their times in a compact hot part, and out of line what only a
//! drifting or healing VIP needs.
//!
//! Contract: the layout is this file's (a node holds 100 000 VIPs: the hot
//! part is 64 bytes); the JSON form is the plain struct it was before
//! (`VipRepr`), which the recorded cases hold.

use serde::{Deserialize, Serialize};

use super::vocab::{Class, HealState, KernelFacts, Millis};

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
