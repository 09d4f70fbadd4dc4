//! zebra's view as the core records it: its ZAPI session ([`on_up`],
//! [`on_down`]), the routes it redistributes ([`on_route`], and its whole
//! dump, [`on_synced`]) and its own table read over its vty, the
//! cross-check ([`on_table`]).
//!
//! Contract: zebra's absence is its own state (its views freeze, nothing
//! is decided until its next complete view); zebra's progress through the
//! kernel's changes is kept for `evaluate`'s backlog rules; a withdrawal
//! is 8.4's import-drop trigger (`fast_path::fast_reimport`).

use super::event::Action;
use super::fast_path::fast_reimport;
use super::merge::merge_vips;
use super::scope::{Next, Scope};
use super::state::State;
use super::vip::Vip;
use super::vocab::Millis;
use crate::model::{Prefix, PrefixSet, Release, TableId, TableMode};

/// zebra's session is up and subscribed: its first complete view is due.
pub(super) fn on_up(state: &mut State, release: Release, table_mode: TableMode) -> Option<Next> {
    state.zebra = Some((release, table_mode));
    state.zebra_synced = false;
    Next::all()
}

/// zebra's session ended: its absence is its own state: views freeze,
/// nothing is decided.
pub(super) fn on_down(state: &mut State) -> Option<Next> {
    state.zebra = None;
    state.zebra_synced = false;
    for v in state.vips.values_mut() {
        v.zebra = false;
    }
    Next::all()
}

/// zebra redistributed a route, or withdrew it.
pub(super) fn on_route(
    state: &mut State,
    key: (TableId, Prefix),
    present: bool,
    now: Millis,
    actions: &mut Vec<Action>,
) -> Option<Next> {
    if !state.is_watched(key.0) {
        return None;
    }
    if present {
        // The kernel change zebra answers: the route's last touch (its
        // add, or a writer's replace).
        let change = state.vips.get(&key).map_or(now, |v| v.touched_at);
        let reached = state.zebra_sent.map_or(change, |(_, r)| r.max(change));
        state.zebra_sent = Some((now, reached));
    }
    state.touch(key.0, key.1, now).zebra = present;
    if !present {
        state.zebra_withdrawn_at = Some(now);
        fast_reimport(state, key, now, actions);
    }
    Next::touching(Scope::One(key.0, key.1))
}

/// The end of zebra's dump: what it redistributes of `table`, whole.
pub(super) fn on_synced(
    state: &mut State,
    table: TableId,
    prefixes: &PrefixSet,
    now: Millis,
) -> Option<Next> {
    state.zebra_synced = state.zebra.is_some();
    if state.is_watched(table) {
        // Known VIPs of the table are redistributed or not; zebra's
        // other prefixes are new VIPs.
        merge_vips(
            &mut state.vips,
            prefixes.iter().map(|p| ((table, *p), ())),
            |k, v| v.zebra &= k.0 != table,
            |v, ()| v.zebra = true,
            |()| {
                let mut v = Vip::new(now);
                v.zebra = true;
                v
            },
        );
    } else {
        for ((t, p), v) in state.vips.iter_mut() {
            if *t == table {
                v.zebra = prefixes.contains(p);
            }
        }
    }
    Next::touching(Scope::All)
}

/// zebra's own table view (its vty): the cross-check.
pub(super) fn on_table(state: &mut State, table: TableId, prefixes: &PrefixSet) -> Option<Next> {
    for ((t, p), v) in state.vips.iter_mut() {
        if *t == table {
            v.zebra_table = Some(prefixes.contains(p));
        }
    }
    Next::all()
}
