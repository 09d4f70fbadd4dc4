//! The dispatch: [`step`] applies one event to the [`State`] and returns
//! the [`Action`]s it calls for. It only routes: each event kind has one
//! handler, in the file of its concern, that records what the event says
//! (a route, a session, a view, a heal's result) and names the VIPs it can
//! change ([`Next`]): the kernel's routes (`kernel_view`), the node's own
//! facts (`local`: its addresses, writers' beats, backends), zebra's view
//! (`zebra_view`), bgpd's (`evaluate`), a heal's result (`heal`), the
//! intent (`intent`), the drain (`drain`), a withdrawal (`withdraw`).
//! Then every event advances the timers the core keeps (a held read of the
//! configuration, the drain's re-apply, the withdrawals), and [`finish`]
//! re-evaluates the named VIPs (`evaluate`), asks for a bgpd view when one
//! is due and names the next wake-up.
//!
//! Contract: pure. No I/O, no clock (time is the `now` argument), no
//! randomness: the same events at the same times give the same actions and
//! the same state, which is what lets a recorded run replay
//! (`tests/reconcile_cases.rs`). Cost: an event about one route
//! re-evaluates that VIP only, a tick only the VIPs whose deadline passed;
//! only whole-view events (a resync, a bgpd view, zebra's session, the
//! intent, the drain) touch every VIP.

use std::ops::Bound;

use super::evaluate::{self, evaluate};
use super::event::{Action, Event};
use super::scope::{Next, Scope};
use super::state::State;
use super::vocab::Millis;
use super::{drain, heal, intent, kernel_view, local, withdraw, zebra_view};
use crate::model::{Prefix, TableId};

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
        } => kernel_view::on_route(state, (table, prefix), route, now),
        Event::KernelSynced { routes } => kernel_view::on_synced(state, routes, now),
        Event::KernelReasserted { table, prefix } => {
            local::on_reasserted(state, (table, prefix), now)
        }
        Event::KernelAddress {
            prefix,
            present,
            usable,
        } => local::on_address(state, prefix, (present, usable), now),
        Event::Backend {
            table,
            prefix,
            probe,
            state: verdict,
        } => local::on_backend(state, (table, prefix), probe, verdict, now),
        Event::ZebraUp {
            release,
            table_mode,
        } => zebra_view::on_up(state, release, table_mode),
        Event::ZebraDown => zebra_view::on_down(state),
        Event::ZebraRoute {
            table,
            prefix,
            present,
        } => zebra_view::on_route(state, (table, prefix), present, now, &mut actions),
        Event::ZebraSynced { table, prefixes } => {
            zebra_view::on_synced(state, table, &prefixes, now)
        }
        Event::ZebraTable { table, prefixes } => zebra_view::on_table(state, table, &prefixes),
        Event::BgpView { peers } => evaluate::on_bgp_view(state, peers, now),
        Event::HealDone {
            table,
            prefix,
            action,
            ok,
            detail,
        } => heal::on_done(state, (table, prefix), action, (ok, detail), now),
        Event::Tick => Next::only(Scope::Due),
        Event::Intent { intent } => intent::on_intent(state, intent, now),
        Event::Drain { drained } => drain::on_drain(state, drained),
        Event::DrainFile { file } => drain::on_file(state, file, now),
        Event::DrainReapplied { ok } => drain::on_reapplied(state, ok, now, &mut actions),
        Event::Withdrew {
            table,
            prefix,
            out,
            ok,
        } => withdraw::on_withdrew(state, (table, prefix), (out, ok), now, &mut actions),
    };
    settle(state, held, next, now, actions)
}

/// After any event: the timers the core keeps advance (a held read of the
/// configuration applied, the drain's re-apply, the withdrawals), a drain
/// that began or ended holding re-evaluates every VIP, and what the event
/// left ([`Next`]) is finished. `held`: the drain held before the event.
fn settle(
    state: &mut State,
    held: bool,
    mut next: Option<Next>,
    now: Millis,
    mut actions: Vec<Action>,
) -> Vec<Action> {
    let held_at = intent::apply_held(state, now, &mut next);
    let timer_at = drain::advance(state, now, &mut actions);
    let withdraw_at = withdraw::advance(state, now, &mut actions);
    let timer_at = earliest(earliest(timer_at, withdraw_at), held_at);
    // The drain began or ended holding: every VIP changes class.
    if drain::holds(state) != held {
        next = Some(Next {
            scope: Scope::All,
            touched_bgp: next.is_some_and(|n| n.touched_bgp),
        });
    }
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
    let mut want_bgp = touched_bgp && state.ready();
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
