//! The kernel's routes as the core records them: a route of a watched
//! table that appeared, changed or went ([`on_route`]), and a whole dump
//! ([`on_synced`]).
//!
//! Contract: the VIP's kernel facts and their times are recorded; a route
//! that came is a trigger (`heal::triggered`) and, right after its address,
//! 10.7's lost-route trigger (`fast_path::route_after_address`); a route
//! that went is its writer's withdrawal (counted for flapping).

use super::fast_path::route_after_address;
use super::heal::triggered;
use super::merge::merge_vips;
use super::scope::{Next, Scope};
use super::state::State;
use super::vip::{Stamp, Vip};
use super::vocab::{KernelEntry, KernelFacts, Millis};
use crate::model::{Prefix, TableId};

/// A route of a watched table appeared, changed or went away.
pub(super) fn on_route(
    state: &mut State,
    key: (TableId, Prefix),
    route: Option<KernelFacts>,
    now: Millis,
) -> Option<Next> {
    let (table, prefix) = key;
    if !state.tracks(table, &prefix) {
        return None;
    }
    let present = route.is_some();
    let v = state.touch(table, prefix, now);
    let added = !v.in_kernel() && present;
    match (v.in_kernel(), present) {
        (false, true) => v.added_at = Stamp::at(now),
        (_, false) => {
            v.added_at = Stamp::NONE;
            if let Some(c) = v.cold_if_any() {
                c.fast_due = None;
            }
        }
        (true, true) => {}
    }
    v.set_kernel(route);
    if present {
        triggered(state, key, now);
    } else if let Some(w) = state.writers.get_mut(&key) {
        // The writer withdrew (or someone deleted the route): counted for
        // flapping; re-evaluated when this withdrawal ends a flapping.
        w.withdrew(now, &state.config);
        if let Some(at) = w.flap_ends_at(&state.config) {
            state.wakeups.insert(at + 1, key);
        }
    }
    if added {
        route_after_address(state, key, now);
    }
    Next::touching(Scope::One(table, prefix))
}

/// The kernel's whole table, after a dump.
pub(super) fn on_synced(state: &mut State, routes: Vec<KernelEntry>, now: Millis) -> Option<Next> {
    let mut fresh: Vec<KernelEntry> = routes
        .into_iter()
        .filter(|r| state.tracks(r.table, &r.prefix))
        .collect();
    // By key, the last of a key's routes winning (a stable sort).
    // The mirror's dump comes in key order: no sort, and none of
    // the sort's scratch (a copy of half the dump) either.
    if !fresh.is_sorted_by_key(|r| (r.table, r.prefix)) {
        fresh.sort_by_key(|r| (r.table, r.prefix));
    }
    fresh.dedup_by(|later, kept| {
        let same = (later.table, later.prefix) == (kept.table, kept.prefix);
        if same {
            std::mem::swap(&mut kept.facts, &mut later.facts);
        }
        same
    });
    // Known VIPs take the dump's facts or none; the others are new.
    merge_vips(
        &mut state.vips,
        fresh.iter().map(|r| ((r.table, r.prefix), r.facts.clone())),
        |_, v| v.set_kernel(None),
        |v, facts| v.set_kernel(Some(facts)),
        |facts| {
            let mut v = Vip::new(now);
            v.set_kernel(Some(facts));
            v
        },
    );
    state.kernel_synced = true;
    let vips = &state.vips;
    state.writers.retain(|k, _| vips.contains_key(k));
    Next::touching(Scope::All)
}
