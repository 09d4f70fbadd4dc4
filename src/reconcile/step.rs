//! The dispatch: [`step`] applies one event to the [`State`] and returns
//! the [`Action`]s it calls for. Each event's handler records what the
//! event says (a route, a session, a view, a heal's result) and names the
//! VIPs it can change; `finish` re-evaluates those (`evaluate`), asks for
//! a bgpd view when one is due and names the next wake-up.
//!
//! Contract: pure. No I/O, no clock (time is the `now` argument), no
//! randomness: the same events at the same times give the same actions and
//! the same state, which is what lets a recorded run replay
//! (`tests/reconcile_cases.rs`). Cost: an event about one route
//! re-evaluates that VIP only, a tick only the VIPs whose deadline passed;
//! only whole-view events (a resync, a bgpd view, zebra's session, the
//! intent, the drain) touch every VIP. What is decided lives beside it:
//! `classify`, `evaluate` (grace and promotion), `heal`, `fast_path`,
//! `forget`, `merge` (a full view into the map), `drain`.

use std::ops::Bound;

use super::evaluate::{evaluate, note_sent};
use super::fast_path::{address_after_route, fast_reimport, route_after_address};
use super::heal::{on_heal_done, own_echo, triggered};
use super::merge::merge_vips;
use super::vocab::{
    Action, BackendState, Class, Event, KernelEntry, KernelFacts, Millis, ProbeKind, Stamp, State,
    Vip,
};
use super::{HealAction, drain, reimport, withdraw};
use crate::model::intent::Intent;
use crate::model::{Prefix, PrefixSet, TableId, Vantage};

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
    let held = drain::holds(state);
    let next = match event {
        Event::KernelRoute {
            table,
            prefix,
            route,
        } => on_kernel_route(state, (table, prefix), route, now),
        Event::KernelSynced { routes } => on_kernel_synced(state, routes, now),
        Event::KernelReasserted { table, prefix } => {
            on_kernel_reasserted(state, (table, prefix), now)
        }
        Event::KernelAddress {
            prefix,
            present,
            usable,
        } => on_kernel_address(state, prefix, (present, usable), now),
        Event::ZebraUp {
            release,
            table_mode,
        } => {
            state.zebra = Some((release, table_mode));
            state.zebra_synced = false;
            Next::all()
        }
        Event::ZebraDown => on_zebra_down(state),
        Event::ZebraRoute {
            table,
            prefix,
            present,
        } => on_zebra_route(state, (table, prefix), present, now, &mut actions),
        Event::ZebraSynced { table, prefixes } => on_zebra_synced(state, table, &prefixes, now),
        Event::ZebraTable { table, prefixes } => on_zebra_table(state, table, &prefixes),
        Event::BgpView { peers } => {
            note_sent(&mut state.sent, &peers, now);
            state.peers = peers;
            state.bgp_view_at = Some(now);
            Next::all()
        }
        Event::HealDone {
            table,
            prefix,
            action,
            ok,
            detail,
        } => {
            if action == HealAction::ReimportTable {
                reimport::note(state, table, now);
            }
            if on_heal_done(state, (table, prefix), action, ok, detail, now) {
                Next::touching(Scope::One(table, prefix))
            } else {
                None
            }
        }
        Event::Tick => Some(Next {
            scope: Scope::Due,
            touched_bgp: false,
        }),
        Event::Drain { drained } => on_drain(state, drained),
        Event::Intent { intent } => on_intent(state, intent, now),
        Event::DrainFile { file } => drain::on_file(state, file, now).then_some(Next {
            scope: Scope::Due,
            touched_bgp: false,
        }),
        Event::Backend {
            table,
            prefix,
            probe,
            state: verdict,
        } => on_backend(state, (table, prefix), probe, verdict, now),
        Event::Withdrew {
            table,
            prefix,
            out,
            ok,
        } => {
            withdraw::on_withdrew(state, (table, prefix), out, ok, now);
            // The next read of bgpd's configuration confirms it.
            ok.then(|| actions.push(Action::RefreshBgp));
            None
        }
        Event::DrainReapplied { ok } => {
            drain::on_reapplied(state, ok, now);
            // The next read of bgpd's configuration confirms it.
            ok.then(|| actions.push(Action::RefreshBgp));
            None
        }
    };
    // A held read of the configuration nothing newer replaced: applied now.
    let mut held_at = None;
    let next = match reimport::advance(state, now, &mut held_at) {
        Some((intent, at)) => apply_intent(state, intent, at).map(|all| Next {
            touched_bgp: next.is_some_and(|n| n.touched_bgp),
            ..all
        }),
        None => next,
    };
    let timer_at = drain::advance(state, now, &mut actions);
    let withdraw_at = withdraw::advance(state, now, &mut actions);
    let timer_at = earliest(earliest(timer_at, withdraw_at), held_at);
    // The drain began or ended holding: every VIP changes class.
    let next = if drain::holds(state) == held {
        next
    } else {
        Some(Next {
            scope: Scope::All,
            touched_bgp: next.is_some_and(|n| n.touched_bgp),
        })
    };
    match next {
        Some(Next { scope, touched_bgp }) => {
            finish(state, scope, touched_bgp, now, actions, timer_at)
        }
        None => {
            actions.extend(timer_at.map(|at| Action::WakeAt { at }));
            actions
        }
    }
}

/// The earlier of two optional times.
fn earliest(a: Option<Millis>, b: Option<Millis>) -> Option<Millis> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// What an event leaves to [`finish`]: which VIPs to re-evaluate, and
/// whether it may have changed what bgpd sends (a bgpd view is then due).
/// `None` from a handler: nothing changed.
struct Next {
    scope: Scope,
    touched_bgp: bool,
}

impl Next {
    fn all() -> Option<Next> {
        Some(Next {
            scope: Scope::All,
            touched_bgp: false,
        })
    }

    fn touching(scope: Scope) -> Option<Next> {
        Some(Next {
            scope,
            touched_bgp: true,
        })
    }
}

/// A route of a watched table appeared, changed or went away.
fn on_kernel_route(
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

/// The kernel's whole table, after a dump.
fn on_kernel_synced(state: &mut State, routes: Vec<KernelEntry>, now: Millis) -> Option<Next> {
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

/// kube-vip's heartbeat: the same route replaced.
fn on_kernel_reasserted(state: &mut State, key: (TableId, Prefix), now: Millis) -> Option<Next> {
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
    Some(Next {
        scope: Scope::One(key.0, key.1),
        touched_bgp: false,
    })
}

/// A backend probe's new verdict (after its fall or rise).
fn on_backend(
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
    Some(Next {
        scope: Scope::One(key.0, key.1),
        touched_bgp: false,
    })
}

/// The VIP's address came, went, or changed its usability on the node.
fn on_kernel_address(
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
    Some(Next {
        scope: Scope::Prefix(prefix),
        touched_bgp: false,
    })
}

/// zebra's session ended: its absence is its own state: views freeze,
/// nothing is decided.
fn on_zebra_down(state: &mut State) -> Option<Next> {
    state.zebra = None;
    state.zebra_synced = false;
    for v in state.vips.values_mut() {
        v.zebra = false;
    }
    Next::all()
}

/// zebra redistributed a route, or withdrew it.
fn on_zebra_route(
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
fn on_zebra_synced(
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
fn on_zebra_table(state: &mut State, table: TableId, prefixes: &PrefixSet) -> Option<Next> {
    for ((t, p), v) in state.vips.iter_mut() {
        if *t == table {
            v.zebra_table = Some(prefixes.contains(p));
        }
    }
    Next::all()
}

/// The drain read from bgpd's configuration.
fn on_drain(state: &mut State, drained: bool) -> Option<Next> {
    drain::on_config(state, drained);
    if drained == state.drained {
        return None;
    }
    state.drained = drained;
    Next::all()
}

/// bgpd's configuration read as an intent.
fn on_intent(state: &mut State, intent: Intent, now: Millis) -> Option<Next> {
    // A newer read replaces a held one.
    state.held_intent = None;
    if state.intent.as_ref() == Some(&intent) || reimport::held(state, &intent, now) {
        return None;
    }
    apply_intent(state, intent, now)
}

/// The configuration read at `now`, another than the intent, becomes it.
fn apply_intent(state: &mut State, intent: Intent, now: Millis) -> Option<Next> {
    // A change, not the first read: bgpd applies it on its own
    // timers, which the grace of what it sends must cover.
    if state.intent.is_some() {
        state.intent_at = now;
    }
    state.intent = Some(intent);
    Next::all()
}

/// Re-evaluate the VIPs of `scope`, ask for a bgpd view when one is due,
/// and name the next wake-up.
fn finish(
    state: &mut State,
    scope: Scope,
    touched_bgp: bool,
    now: Millis,
    mut actions: Vec<Action>,
    timer_at: Option<Millis>,
) -> Vec<Action> {
    let mut want_bgp = touched_bgp && state.ready() && state.config.vantage == Vantage::Node;
    let keys: Vec<(TableId, Prefix)> = match scope {
        Scope::One(t, p) => vec![(t, p)],
        Scope::Prefix(p) => state.vips.keys().filter(|k| k.1 == p).copied().collect(),
        Scope::All => {
            // Every VIP, in key order, a chunk of keys at a time: a list of
            // them all would be 24 bytes a VIP beside the map. `evaluate`
            // adds and removes no VIP, so the walk sees each VIP once.
            let mut after = Bound::Unbounded;
            loop {
                let chunk: Vec<(TableId, Prefix)> = state
                    .vips
                    .range((after, Bound::Unbounded))
                    .take(ALL_CHUNK)
                    .map(|(k, _)| *k)
                    .collect();
                let Some(&last) = chunk.last() else {
                    break;
                };
                for key in chunk {
                    want_bgp |= evaluate(state, key, now, &mut actions);
                }
                after = Bound::Excluded(last);
            }
            Vec::new()
        }
        Scope::Due => state.wakeups.take_due(now),
    };
    for key in keys {
        want_bgp |= evaluate(state, key, now, &mut actions);
    }
    // The daemon coalesces: at most one poll in flight, one queued.
    if want_bgp {
        actions.push(Action::RefreshBgp);
    }
    // Deadlines already past were just handled; the next one is the wake-up.
    state.wakeups.drop_past(now);
    let first = earliest(state.wakeups.first(), timer_at);
    if let Some(at) = first {
        actions.push(Action::WakeAt { at });
    }
    actions
}

/// VIPs evaluated per chunk of a whole-view event's walk.
const ALL_CHUNK: usize = 4_096;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Release, TableMode, intent};
    use crate::reconcile::fixture::{T, facts, node, vip, with_route};
    use crate::reconcile::{Class, Config, HealAction};

    fn ready() -> State {
        node(
            Config::default(),
            Release::new(10, 7),
            TableMode::TableDirect,
        )
    }

    fn route(table: TableId) -> Event {
        Event::KernelRoute {
            table,
            prefix: vip(),
            route: Some(facts()),
        }
    }

    #[test]
    fn a_route_of_an_unwatched_table_changes_nothing() {
        let mut s = ready();
        assert_eq!(step(&mut s, route(254), 1_000), []);
        assert!(s.vips.is_empty());
        let done = Event::HealDone {
            table: T,
            prefix: vip(),
            action: HealAction::RealmToggle,
            ok: true,
            detail: String::new(),
        };
        assert_eq!(step(&mut s, done, 1_000), [], "a result for no VIP");
    }

    #[test]
    fn a_route_event_re_evaluates_its_vip_asks_for_bgpd_and_names_the_deadline() {
        let mut s = ready();
        let a = step(&mut s, route(T), 1_000);
        // zebra has not redistributed it yet: kernel_only, within its grace.
        assert_eq!(
            a,
            [Action::RefreshBgp, Action::WakeAt { at: 1_100 }],
            "{a:?}"
        );
        let v = &s.vips[&(T, vip())];
        assert!(v.in_kernel());
        assert_eq!((v.observed, v.state), (Class::KernelOnly, Class::Withdrawn));
        // Nothing due before the deadline.
        assert_eq!(
            step(&mut s, Event::Tick, 1_050),
            [Action::WakeAt { at: 1_100 }]
        );
    }

    #[test]
    fn zebra_down_freezes_the_views_and_decides_nothing() {
        let mut s = ready();
        with_route(&mut s, 0, true).state = Class::Advertised;
        let a = step(&mut s, Event::ZebraDown, 2_000);
        assert!(a.is_empty(), "{a:?}");
        assert!(!s.ready());
        let v = &s.vips[&(T, vip())];
        assert!(!v.zebra, "its view is gone with its session");
        assert_eq!(v.state, Class::Advertised, "nothing reclassified");
    }

    #[test]
    fn an_intent_read_again_unchanged_is_no_event_and_a_change_is_timed() {
        let mut s = ready();
        let redistributed = |map: &str| {
            intent::parse(
                &format!(
                    "router bgp 64512\n address-family ipv4 unicast\n  \
redistribute table-direct 198 route-map {map}\n exit-address-family\nexit\n"
                ),
                None,
            )
        };
        step(
            &mut s,
            Event::Intent {
                intent: redistributed("A"),
            },
            100,
        );
        assert_eq!(s.intent_at, 0, "the first read is no change");
        let again = Event::Intent {
            intent: redistributed("A"),
        };
        assert_eq!(step(&mut s, again, 500), []);
        step(
            &mut s,
            Event::Intent {
                intent: redistributed("B"),
            },
            1_000,
        );
        assert_eq!(s.intent_at, 1_000);
        assert_eq!(s.intent, Some(redistributed("B")));
    }
}
