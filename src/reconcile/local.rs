//! The node's own facts as the core records them: the VIP's address on the
//! node and its usability ([`on_address`]), its writer's beats
//! ([`on_reasserted`]) and its backend's probes ([`on_backend`]). They
//! decide whether the node can serve a VIP it advertises (`blackhole`,
//! `orphaned`, `unready`, `capacity_lost`, and what `withdraw` takes out).
//!
//! Contract: what each event says is recorded and its VIPs re-evaluated; an
//! address that came right after its route is 10.7's lost-route trigger
//! (`fast_path::address_after_route`); a beat is the writer's only when it
//! is not a heal's own echo, and on a VIP in drift it re-arms the heal.

use super::fast_path::address_after_route;
use super::heal::{own_echo, triggered};
use super::scope::{Next, Scope};
use super::state::State;
use super::vocab::{BackendState, Class, Millis, ProbeKind};
use crate::model::{Prefix, TableId};

/// The VIP's address came, went, or changed its usability on the node.
pub(super) fn on_address(
    state: &mut State,
    prefix: Prefix,
    (present, usable): (bool, bool),
    now: Millis,
) -> Option<Next> {
    if present {
        if usable {
            state.unusable.remove(&prefix);
        } else {
            state.unusable.insert(prefix);
        }
        if state.addresses.insert(prefix) {
            address_after_route(state, prefix, now);
        }
    } else {
        state.addresses.remove(&prefix);
        state.unusable.remove(&prefix);
    }
    Next::only(Scope::Prefix(prefix))
}

/// kube-vip's heartbeat: the same route replaced.
pub(super) fn on_reasserted(
    state: &mut State,
    key: (TableId, Prefix),
    now: Millis,
) -> Option<Next> {
    let v = state.vips.get_mut(&key)?;
    v.reasserted();
    let orphaned = v.state == Class::Orphaned || v.observed == Class::Orphaned;
    // A heal's realm toggle echoes as a re-assertion: not the writer's.
    let echo = own_echo(v, state.config.grace_ms, now);
    let resumed = (!echo && writer_beat(state, key, now)) || orphaned;
    // A beat on a VIP in drift re-arms its heal (the drift may be
    // this beat's doing); on a consistent VIP it is only remembered,
    // unless its writer was silent until now.
    if !triggered(state, key, now) && !resumed {
        return None;
    }
    Next::only(Scope::One(key.0, key.1))
}

/// A realm-only re-assertion: a beat of the writer's heartbeat (a route's
/// add is not one: a table of static routes, or 100 000 routes added by
/// one batch, has no writer to keep); the VIP is re-evaluated when the
/// writer would turn silent. True when the writer was silent until this
/// beat.
fn writer_beat(state: &mut State, key: (TableId, Prefix), now: Millis) -> bool {
    let was_silent = state.writer_silent(&key, now);
    let w = state.writers.entry(key).or_default();
    w.beat(now, &state.config);
    if let Some(at) = w.silent_at(&state.config) {
        state.wakeups.insert(at, key);
    }
    was_silent
}

/// A backend probe's new verdict (after its fall or rise).
pub(super) fn on_backend(
    state: &mut State,
    key: (TableId, Prefix),
    probe: ProbeKind,
    verdict: BackendState,
    now: Millis,
) -> Option<Next> {
    state.vip(key.0, key.1, now);
    let b = state.backends.entry(key).or_default();
    match probe {
        ProbeKind::Health => b.health = Some(verdict),
        ProbeKind::Ready => b.ready = Some(verdict),
    }
    Next::only(Scope::One(key.0, key.1))
}
