//! Promotion: [`evaluate`] re-classifies one VIP and turns a class that
//! persisted for its grace ([`grace_of`]), confirmed by a bgpd view taken
//! after the grace, into the VIP's reported state; until then the VIP keeps
//! the state it had, so normal convergence (zebra ~10 ms, bgpd ~100 ms) is
//! never a drift. bgpd's own timers lengthen the wait of
//! `not_redistributed`: sessions that have not sent bgpd's table yet
//! ([`initial_update_due`], kept by [`note_sent`]) and a configuration
//! change (its route-map delay timer).
//!
//! Contract: it reads the views in [`State`] and writes only the VIP it is
//! given, its deadlines and the actions; a drift goes on to
//! `heal::decide_heal`, a withdrawn VIP to `forget`, and a fast path's due
//! check (`fast_path::fast_relearn`) runs first. Its answer is whether a
//! fresh bgpd view is needed; it never reads a clock.

use std::collections::BTreeMap;

use super::classify::{Local, classify};
use super::drain;
use super::event::Action;
use super::fast_path::fast_relearn;
use super::forget::forget;
use super::heal::decide_heal;
use super::scope::Next;
use super::state::State;
use super::vocab::{Backend, Class, Config, HealResult, Millis};
use crate::model::{PeerAddr, PeerView, Prefix, TableId};

/// bgpd's per-peer view, freshly polled: the sessions that sent something
/// noted ([`note_sent`]), the view kept with its time; every VIP is
/// re-evaluated (a bgpd view is what confirms a class).
pub(super) fn on_bgp_view(state: &mut State, peers: Vec<PeerView>, now: Millis) -> Option<Next> {
    note_sent(&mut state.sent, &peers, now);
    state.peers = peers;
    state.bgp_view_at = Some(now);
    Next::all()
}

/// Re-classify one VIP, promote a persisted difference, decide its heal,
/// schedule its deadline. Returns true when it needs a fresh bgpd view.
pub(super) fn evaluate(
    state: &mut State,
    key: (TableId, Prefix),
    now: Millis,
    actions: &mut Vec<Action>,
) -> bool {
    if !state.ready() {
        return false;
    }
    fast_relearn(state, key, now, actions);
    let backend = state.backends.get(&key).copied().unwrap_or_default();
    let capacity_lost = capacity_lost(state, key, backend, now);
    let Some(v) = state.vips.get(&key) else {
        return false;
    };
    let observed = if drain::holds(state) {
        // A drained node withdrew every VIP on purpose, whatever the views
        // (or is about to: its drain is recorded, bgpd is being told).
        Class::Drained
    } else {
        let local = Local {
            has_address: state.addresses.contains(&key.1),
            servable: state.servable(&key),
            writer_silent: state.writer_silent(&key, now),
            flapping: state.flapping(&key, now),
            draining: backend.draining(),
            capacity_lost,
        };
        classify(v, key.0, &key.1, local, &state.peers, state.intent.as_ref())
    };
    let grace = grace_of(&state.config, observed, v.zebra);
    let bgp_view_at = state.bgp_view_at;
    // After a change, the polled views must be re-read once the grace has
    // passed, whatever the class: bgpd's reaction lags zebra's.
    let settle = v.touched_at + state.config.settle_ms();
    let confirm = now >= settle && bgp_view_at.is_none_or(|t| t < settle);
    let Some(v) = state.vips.get_mut(&key) else {
        return false;
    };
    if observed != v.observed {
        v.observed = observed;
        v.observed_since = now;
    }
    if observed == v.state {
        if !observed.is_drift() {
            if let Some(c) = v.cold_if_any() {
                c.heal.gave_up = false;
                c.heal.slot_at = None;
            }
            v.shed_cold(false);
            if observed == Class::Withdrawn {
                return forget(state, key, now, actions) || confirm;
            }
            return confirm;
        }
        return decide_heal(state, key, now, actions) || confirm;
    }
    // A fast heal is at work on the very difference observed: its result
    // starts a new grace (HealDone), the drift is judged after that.
    if v.heal().in_flight && v.heal().fast {
        return false;
    }
    let (since, added) = (v.observed_since, v.added_at.get());
    let due = due_of(state, &key.1, observed, grace, since, added);
    let Some(v) = state.vips.get_mut(&key) else {
        return false;
    };
    // Every class reads the polled views (bgpd's peers, zebra's table): it
    // must rest on a poll taken after the observation began (consistent
    // classes, reported at once) or after the grace expired (drift).
    let view_after = |t: Millis| bgp_view_at.is_some_and(|at| at >= t);
    let confirmed = if observed.is_consistent() {
        view_after(v.observed_since)
    } else {
        now >= due && view_after(due)
    };
    if !confirmed {
        if observed.is_consistent() || now >= due {
            return true;
        }
        // bgpd acts on its own timers (young sessions' initial update, its
        // coalescing), which no event shows: while the class waits on a
        // later deadline (bgp's grace, the startup grace), its view is read
        // again every grace, or the poll taken at the change (before bgpd
        // reacted) would stand until that deadline or the slow refresh.
        let every = state.config.grace_ms.max(1);
        let checkpoint = v.observed_since + now.saturating_sub(v.observed_since) / every * every;
        let stale = checkpoint > v.observed_since && bgp_view_at.is_none_or(|t| t < checkpoint);
        state.wakeups.insert(due.min(checkpoint + every), key);
        return confirm || stale;
    }
    let from = v.state;
    let drift_ms = match (from.is_drift(), observed.is_drift()) {
        (true, false) => v
            .cold_if_any()
            .and_then(|c| c.drift_since.take())
            .map(|s| now.saturating_sub(s)),
        _ => None,
    };
    if observed.is_drift() && v.drift_since().is_none() {
        v.cold_mut().drift_since = Some(now);
    }
    if !observed.is_drift()
        && let Some(c) = v.cold_if_any()
    {
        let h = &mut c.heal;
        h.attempts = 0;
        h.gave_up = false;
        h.slot_at = None;
        if h.last_action.is_some() && from.is_drift() {
            h.last_result = Some(HealResult::Healed);
        }
    }
    v.state = observed;
    v.since = now;
    actions.push(Action::StateChanged {
        table: key.0,
        prefix: key.1,
        from,
        to: observed,
        drift_ms,
    });
    if observed.is_drift() {
        return decide_heal(state, key, now, actions);
    }
    if observed == Class::Withdrawn {
        return forget(state, key, now, actions);
    }
    false
}

/// When an observation of `observed` begun at `since` may be promoted
/// (the VIP's route added to the kernel at `added`), its grace and bgpd's
/// and zebra's own timers counted: the moment a daemon that kept seeing it
/// would report it.
fn due_of(
    state: &State,
    prefix: &Prefix,
    observed: Class,
    grace: Millis,
    since: Millis,
    added: Option<Millis>,
) -> Millis {
    let mut due = since + grace;
    // Sessions that have not sent bgpd's table yet (bgpd restarted, or
    // this process started beside a bgpd that just did) miss every VIP:
    // not a drift before the startup grace since they came up. Sessions
    // that did send it (a kube-vip heartbeat on 8.4 drops an import under
    // sessions that advertised it) get the plain grace.
    if observed == Class::NotRedistributed {
        // After a configuration change bgpd re-applies its route-maps when
        // its delay timer fires, then coalesces: convergence, not drift.
        if let Some(i) = state.intent.as_ref().filter(|_| state.intent_at > 0) {
            due = due.max(state.intent_at + i.route_map_delay_ms + state.config.bgp_grace_ms);
        }
        if let Some(until) = initial_update_due(
            &state.peers,
            state.bgp_view_at,
            &state.sent,
            state.config.bgp_startup_grace_ms,
            prefix,
        ) {
            due = due.max(until);
        }
    }
    if observed == Class::ZebraStale {
        due = due.max(zebra_backlog_due(
            &state.config,
            state.zebra_withdrawn_at,
            since,
        ));
    }
    if observed == Class::KernelOnly {
        due = due.max(zebra_behind_due(
            &state.config,
            state.zebra_sent,
            added,
            since,
        ));
    }
    due
}

/// A VIP whose views show another class than the one reported, and when
/// that class is due to be reported (if it lasts and a bgpd view taken
/// then confirms it): what a one-shot reader cannot wait for, and what
/// `/status` shows beside the reported state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pending {
    /// The class the views show now.
    pub observed: Class,
    /// Since when.
    pub since: Millis,
    /// When it is reported, if it lasts.
    pub due: Millis,
}

/// The VIP's [`Pending`] observation, if the views show another class than
/// the reported one. Pure: the same rule `evaluate` promotes by.
pub fn pending(state: &State, key: (TableId, Prefix)) -> Option<Pending> {
    let v = state.vips.get(&key)?;
    if v.observed == v.state || !state.ready() {
        return None;
    }
    let grace = grace_of(&state.config, v.observed, v.zebra);
    let due = if v.observed.is_consistent() {
        v.observed_since
    } else {
        due_of(
            state,
            &key.1,
            v.observed,
            grace,
            v.observed_since,
            v.added_at.get(),
        )
    };
    Some(Pending {
        observed: v.observed,
        since: v.observed_since,
        due,
    })
}

/// The backend is up and the VIP has been absent from every view for more
/// than two of its writer's ticks (a wake-up is set for that moment while
/// it is not yet so).
fn capacity_lost(state: &mut State, key: (TableId, Prefix), backend: Backend, now: Millis) -> bool {
    // Only a probed VIP can lose capacity: most VIPs stop here.
    if !backend.up() {
        return false;
    }
    let Some(v) = state.vips.get(&key) else {
        return false;
    };
    if v.in_kernel() || v.zebra || v.zebra_table == Some(true) {
        return false;
    }
    match v.observed {
        Class::CapacityLost => true,
        Class::Withdrawn => {
            let at = v.observed_since + 2 * state.writer_tick(&key) + 1;
            if now < at {
                state.wakeups.insert(at, key);
            }
            now >= at
        }
        _ => false,
    }
}

/// The grace of a class: what waits on bgpd (a session, or sending a route
/// zebra does redistribute) waits for bgpd's coalescing.
fn grace_of(config: &Config, class: Class, redistributed: bool) -> Millis {
    match class {
        Class::Unconfigured => config.intent_confirm_ms.max(config.grace_ms),
        Class::NoPeer => config.bgp_grace_ms.max(config.grace_ms),
        Class::NotRedistributed if redistributed => config.bgp_grace_ms.max(config.grace_ms),
        _ => config.grace_ms,
    }
}

/// The longest a run of zebra's withdrawals defers a `zebra_stale`
/// judgement: a zebra that withdraws without end (a table in churn) must
/// not hide a route it keeps.
pub(super) const ZEBRA_BACKLOG_MAX_MS: Millis = 30_000;

/// When a `zebra_stale` observed since `since` may be judged, given the
/// last withdrawal zebra made (`withdrawn_at`). One route deleted is
/// withdrawn by zebra in ~10 ms and by bgpd ~100 ms later; 100 000 deleted
/// at once take zebra seconds, and bgpd follows it. While zebra is still
/// withdrawing (its last withdrawal less than bgpd's grace ago), the
/// routes it or bgpd has not reached yet are a backlog, not stale: the
/// judgement waits for the backlog to end, at most
/// [`ZEBRA_BACKLOG_MAX_MS`] past `since`. 0 when zebra withdrew nothing.
pub(super) fn zebra_backlog_due(
    config: &Config,
    withdrawn_at: Option<Millis>,
    since: Millis,
) -> Millis {
    let Some(at) = withdrawn_at else {
        return 0;
    };
    backlog_end(at, config.bgp_grace_ms.max(config.grace_ms), since)
}

/// The end of a backlog of zebra's whose last step was at `last`: `pause`
/// after it, at most [`ZEBRA_BACKLOG_MAX_MS`] past `since` (when the VIP's
/// observation began).
fn backlog_end(last: Millis, pause: Millis, since: Millis) -> Millis {
    last.saturating_add(pause)
        .min(since.saturating_add(ZEBRA_BACKLOG_MAX_MS))
}

/// How long zebra may pause in a backlog of adds before the routes it has
/// not reached are judged: a zebra busy with 100 000 withdrawals and adds
/// paused for more than bgpd's 2 s grace mid-burst (4 350 false
/// `kernel_only` in one run with the 2 s window).
pub(super) const ZEBRA_PAUSE_MS: Millis = 10_000;

/// When a `kernel_only` observed since `since` may be judged, given
/// zebra's progress (`sent`: when it last sent a route, and the latest
/// kernel change it has sent) and when the kernel added this route. One
/// route reaches zebra in ~10 ms; 100 000 added at once take it seconds,
/// in the kernel's order. While zebra, since this route's add, still sends
/// older changes (its last send after the add and less than
/// [`ZEBRA_PAUSE_MS`] ago, and no change as recent as the add reached),
/// the route is its backlog: the judgement waits for zebra to reach it or
/// fall quiet, at most [`ZEBRA_BACKLOG_MAX_MS`] past `since`. A route
/// zebra lost (it sent later changes since, or nothing at all since the
/// add: FRRouting/frr#22654's queued route) is judged at the plain grace.
/// 0 when there is nothing to wait for.
pub(super) fn zebra_behind_due(
    config: &Config,
    sent: Option<(Millis, Millis)>,
    added_at: Option<Millis>,
    since: Millis,
) -> Millis {
    let (Some((sent_at, reached)), Some(added)) = (sent, added_at) else {
        return 0;
    };
    if reached >= added || sent_at <= added {
        return 0;
    }
    backlog_end(sent_at, ZEBRA_PAUSE_MS.max(config.grace_ms), since)
}

/// When the startup grace of the established sessions carrying `prefix`'s
/// family ends, if none of them has sent bgpd's table yet: the oldest session's coming up plus
/// `grace`. None (no delay) when one of them has sent it, when bgpd did not
/// say how long a session is up, or when there is no view or no session.
pub(super) fn initial_update_due(
    peers: &[PeerView],
    view_at: Option<Millis>,
    sent: &BTreeMap<PeerAddr, Option<i64>>,
    grace: Millis,
    prefix: &Prefix,
) -> Option<Millis> {
    let at = view_at?;
    let mut oldest: Option<Millis> = None;
    // Only the sessions of the VIP's family: an IPv6 session that sent its
    // table says nothing of the IPv4 one that has not yet.
    for p in peers.iter().filter(|p| p.carries(prefix)) {
        if sent.contains_key(&p.peer) {
            return None;
        }
        let up = p.up_ms?;
        oldest = Some(oldest.map_or(up, |o| o.max(up)));
    }
    // A session up before our clock's zero may still be young: the end of
    // its grace is computed without going below zero.
    oldest.map(|up| at.saturating_add(grace).saturating_sub(up))
}

/// Keep [`State`]'s record of the sessions that have sent bgpd's table
/// up to date with a fresh view taken at `at`: a session that went down,
/// or came up again since (its coming up moved later by more than bgpd's
/// one-second uptime resolution), has not sent it any more; an established
/// session that advertises something has.
pub(super) fn note_sent(
    sent: &mut BTreeMap<PeerAddr, Option<i64>>,
    peers: &[PeerView],
    at: Millis,
) {
    let ms = |t: Millis| i64::try_from(t).unwrap_or(i64::MAX);
    let came_up = |p: &PeerView| p.up_ms.map(|up| ms(at).saturating_sub(ms(up)));
    sent.retain(|name, before| {
        peers.iter().any(|p| {
            p.established
                && p.peer == *name
                && !matches!((*before, came_up(p)), (Some(b), Some(n)) if n > b + UPTIME_RESOLUTION)
        })
    });
    for p in peers.iter().filter(|p| p.established) {
        match sent.get_mut(&p.peer) {
            Some(known @ None) => *known = came_up(p),
            Some(Some(_)) => {}
            None if !p.advertised.is_empty() => {
                sent.insert(p.peer.clone(), came_up(p));
            }
            None => {}
        }
    }
}

/// bgpd reports a session's uptime in whole seconds; with the poll's own
/// latency, an estimate of when it came up moves by up to this much.
const UPTIME_RESOLUTION: i64 = 1_500;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Mode, Release, TableMode};
    use crate::reconcile::HealAction;
    use crate::reconcile::fixture::{T, node, peer, vip, with_route};

    const KEY: fn() -> (TableId, Prefix) = || (T, vip());

    fn observing() -> State {
        let config = Config {
            mode: Mode::Observe,
            ..Config::default()
        };
        node(config, Release::new(10, 7), TableMode::TableDirect)
    }

    fn changes(actions: &[Action]) -> Vec<(Class, Class, Option<Millis>)> {
        actions
            .iter()
            .filter_map(|a| match a {
                Action::StateChanged {
                    from, to, drift_ms, ..
                } => Some((*from, *to, *drift_ms)),
                _ => None,
            })
            .collect()
    }

    /// The VIP advertised, then its kernel route deleted at 1 000 while
    /// zebra still redistributes it: `zebra_stale` observed.
    fn kernel_route_deleted(s: &mut State) {
        let v = with_route(s, 0, true);
        (v.state, v.observed) = (Class::Advertised, Class::Advertised);
        v.set_kernel(None);
        s.peers = vec![peer(&[])];
    }

    #[test]
    fn zebra_stale_waits_while_zebra_is_still_withdrawing_a_mass_deletion() {
        let mut s = observing();
        kernel_route_deleted(&mut s);
        // zebra withdrew another route of the deletion at 1 000.
        s.zebra_withdrawn_at = Some(1_000);
        s.bgp_view_at = Some(1_000);
        let mut actions = Vec::new();
        assert!(!evaluate(&mut s, KEY(), 1_000, &mut actions));
        // Not at the plain grace (1 100), a fresh view of bgpd or not:
        // zebra's backlog runs to bgpd's grace (2 s) past its last
        // withdrawal.
        s.bgp_view_at = Some(1_100);
        evaluate(&mut s, KEY(), 1_100, &mut actions);
        assert!(changes(&actions).is_empty(), "{actions:?}");
        // zebra reached it: withdrawn, never a drift.
        s.vips.get_mut(&KEY()).unwrap().zebra = false;
        s.zebra_withdrawn_at = Some(1_500);
        s.bgp_view_at = Some(1_600);
        evaluate(&mut s, KEY(), 1_600, &mut actions);
        assert_eq!(
            changes(&actions),
            [(Class::Advertised, Class::Withdrawn, None)]
        );
    }

    #[test]
    fn zebra_stale_is_reported_once_zebra_is_quiet_and_at_most_30_s_into_a_backlog() {
        // Quiet: a route zebra keeps is reported 2 s after its last
        // withdrawal elsewhere.
        let mut s = observing();
        kernel_route_deleted(&mut s);
        s.zebra_withdrawn_at = Some(900);
        let mut actions = Vec::new();
        evaluate(&mut s, KEY(), 1_000, &mut actions);
        s.bgp_view_at = Some(2_900);
        evaluate(&mut s, KEY(), 2_900, &mut actions);
        assert_eq!(
            changes(&actions),
            [(Class::Advertised, Class::ZebraStale, None)]
        );
        // Withdrawals without end defer it 30 s, no more.
        let mut s = observing();
        kernel_route_deleted(&mut s);
        let mut actions = Vec::new();
        evaluate(&mut s, KEY(), 1_000, &mut actions);
        s.zebra_withdrawn_at = Some(30_900);
        s.bgp_view_at = Some(30_999);
        evaluate(&mut s, KEY(), 30_999, &mut actions);
        assert!(changes(&actions).is_empty(), "{actions:?}");
        s.bgp_view_at = Some(31_000);
        evaluate(&mut s, KEY(), 31_000, &mut actions);
        assert_eq!(
            changes(&actions),
            [(Class::Advertised, Class::ZebraStale, None)]
        );
    }

    #[test]
    fn a_vip_back_to_health_frees_its_out_of_line_part_once_it_holds_only_defaults() {
        let mut s = observing();
        let v = with_route(&mut s, 0, true);
        (v.state, v.observed) = (Class::Advertised, Class::Advertised);
        // A fast heal's check that found nothing to do leaves defaults.
        v.cold_mut().fast_due = None;
        assert!(v.cold.is_some());
        s.peers = vec![peer(&[vip()])];
        s.bgp_view_at = Some(1_000);
        let mut actions = Vec::new();
        evaluate(&mut s, KEY(), 1_000, &mut actions);
        assert!(s.vips[&KEY()].cold.is_none(), "{:?}", s.vips[&KEY()]);
        // A heal record is kept: /status shows the last heal.
        s.vips.get_mut(&KEY()).unwrap().heal_mut().last_action = Some(HealAction::RealmToggle);
        evaluate(&mut s, KEY(), 1_100, &mut actions);
        assert!(s.vips[&KEY()].cold.is_some());
    }

    #[test]
    fn a_difference_is_reported_after_its_grace_and_a_bgpd_view_taken_after_it() {
        let mut s = observing();
        let v = with_route(&mut s, 0, false);
        (v.state, v.observed) = (Class::Advertised, Class::Advertised);
        s.bgp_view_at = Some(1_000);
        let mut actions = Vec::new();
        // Observed at 1 000: the grace (100 ms) runs, nothing is reported.
        assert!(!evaluate(&mut s, KEY(), 1_000, &mut actions));
        assert_eq!(s.vips[&KEY()].observed, Class::KernelOnly);
        assert_eq!(s.vips[&KEY()].state, Class::Advertised);
        assert_eq!(s.wakeups.first(), Some(1_100));
        // Due, but bgpd's last view is older than the grace: ask for one.
        assert!(evaluate(&mut s, KEY(), 1_100, &mut actions));
        assert_eq!(s.vips[&KEY()].state, Class::Advertised);
        assert!(actions.is_empty(), "{actions:?}");
        s.bgp_view_at = Some(1_100);
        assert!(!evaluate(&mut s, KEY(), 1_100, &mut actions));
        assert_eq!(
            changes(&actions),
            [(Class::Advertised, Class::KernelOnly, None)]
        );
        assert_eq!(s.vips[&KEY()].drift_since(), Some(1_100));
        // Observe mode: the action is proposed, never asked for.
        let h = s.vips[&KEY()].heal();
        assert_eq!(h.last_action, Some(HealAction::RealmToggle));
        assert_eq!(h.last_result, Some(HealResult::ObserveOnly));
    }

    #[test]
    fn the_end_of_a_drift_is_reported_at_once_with_its_length_and_the_heal_healed() {
        let mut s = observing();
        let v = with_route(&mut s, 0, true);
        (v.state, v.observed) = (Class::KernelOnly, Class::KernelOnly);
        let c = v.cold_mut();
        c.drift_since = Some(1_000);
        (c.heal.attempts, c.heal.last_action) = (2, Some(HealAction::RealmToggle));
        s.peers = vec![peer(&[vip()])];
        s.bgp_view_at = Some(2_000);
        let mut actions = Vec::new();
        assert!(!evaluate(&mut s, KEY(), 2_000, &mut actions));
        assert_eq!(
            changes(&actions),
            [(Class::KernelOnly, Class::Advertised, Some(1_000))]
        );
        let h = s.vips[&KEY()].heal();
        assert_eq!(
            (h.attempts, h.last_result.clone()),
            (0, Some(HealResult::Healed))
        );
        assert_eq!(s.vips[&KEY()].drift_since(), None);
    }

    #[test]
    fn what_waits_on_bgpd_gets_bgpd_s_grace() {
        let c = Config {
            grace_ms: 100,
            bgp_grace_ms: 2_000,
            intent_confirm_ms: 1_000,
            ..Config::default()
        };
        assert_eq!(grace_of(&c, Class::KernelOnly, false), 100);
        assert_eq!(grace_of(&c, Class::NoPeer, true), 2_000);
        assert_eq!(grace_of(&c, Class::NotRedistributed, true), 2_000);
        // zebra does not redistribute it: zebra's grace, not bgpd's.
        assert_eq!(grace_of(&c, Class::NotRedistributed, false), 100);
        assert_eq!(grace_of(&c, Class::Unconfigured, false), 1_000);
        let slow = Config {
            grace_ms: 5_000,
            ..c
        };
        assert_eq!(grace_of(&slow, Class::NoPeer, true), 5_000, "never shorter");
    }

    #[test]
    fn a_session_that_sent_is_remembered_until_it_comes_up_again() {
        let mut sent = BTreeMap::new();
        let mut p = peer(&[vip()]);
        p.up_ms = Some(5_000);
        note_sent(&mut sent, &[p.clone()], 10_000);
        assert_eq!(sent.get(&p.peer), Some(&Some(5_000)));
        // The same session a second later, within bgpd's uptime resolution.
        p.up_ms = Some(6_000);
        note_sent(&mut sent, &[p.clone()], 11_000);
        assert_eq!(sent.get(&p.peer), Some(&Some(5_000)));
        // It came up again (at 19 000) and sends nothing yet.
        p.up_ms = Some(1_000);
        p.advertised = Default::default();
        note_sent(&mut sent, &[p.clone()], 20_000);
        assert!(sent.is_empty(), "{sent:?}");
        // A session that never sent anything is not recorded.
        note_sent(&mut sent, &[p], 21_000);
        assert!(sent.is_empty(), "{sent:?}");
    }
}
