//! What the core's unit tests start from (tests only): the one table and
//! VIP of the scenarios, a node made ready on a release by the fields its
//! events set, and a VIP's route put in place without an event.

use super::event::Action;
use super::state::State;
use super::vip::Vip;
use super::vocab::{Config, HealAction, KernelFacts, Millis};
use crate::model::{PeerView, Prefix, Release, TableId, TableMode};

/// The watched table.
pub(super) const T: TableId = 198;

/// The VIP.
pub(super) fn vip() -> Prefix {
    "192.0.2.10/32".parse().expect("prefix")
}

/// kube-vip's route: its protocol, one nexthop.
pub(super) fn facts() -> KernelFacts {
    KernelFacts {
        protocol: 248,
        nexthops: 1,
    }
}

/// The one established peer, sent `sent`.
pub(super) fn peer(sent: &[Prefix]) -> PeerView {
    PeerView {
        peer: "198.18.1.1".into(),
        established: true,
        advertised: sent.iter().copied().collect(),
        up_ms: None,
        families: crate::model::Families::both(),
    }
}

/// A node ready on `release` in `table_mode`: the kernel dumped, zebra
/// synced, a bgpd view taken at 0 with the peer sent nothing; no VIP yet
/// but the configured ones.
pub(super) fn node(config: Config, release: Release, table_mode: TableMode) -> State {
    let mut s = State::new(config, 0);
    s.kernel_synced = true;
    s.zebra = Some((release, table_mode));
    s.zebra_synced = true;
    s.peers = vec![peer(&[])];
    s.bgp_view_at = Some(0);
    s
}

/// The VIP's route in the kernel (and redistributed by zebra when
/// `zebra`), the VIP first seen at `at` if it is new.
pub(super) fn with_route(s: &mut State, at: Millis, zebra: bool) -> &mut Vip {
    let v = s.vip(T, vip(), at);
    v.set_kernel(Some(facts()));
    v.zebra = zebra;
    v
}

/// The heal actions asked for, in order.
pub(super) fn heals(actions: &[Action]) -> Vec<HealAction> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Heal { action, .. } => Some(*action),
            _ => None,
        })
        .collect()
}
