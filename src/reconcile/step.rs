//! The core's decisions: [`step`] applies one event to the [`State`] and
//! returns the [`Action`]s it calls for.
//!
//! Contract: pure. No I/O, no clock (time is the `now` argument), no
//! randomness: the same events at the same times give the same actions and
//! the same state, which is what lets a recorded run replay
//! (`tests/reconcile_cases.rs`). Classification is instantaneous
//! ([`classify`]); `evaluate` turns a class that persisted for its grace,
//! confirmed by a bgpd view taken after the grace, into the reported state;
//! `decide_heal` picks the policy's action with a doubling backoff, reports
//! a give-up after `Config::max_attempts` and goes on at the capped backoff;
//! `triggered` re-arms it on a new trigger; `fast_reimport` and
//! `fast_relearn` heal the recognised triggers at once.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

use super::vocab::{
    Action, Class, Config, Event, KernelEntry, KernelFacts, Millis, Stamp, State, Vip,
};
use super::{HealAction, drain, heal_policy};
use crate::model::intent::{Intent, Verdict};
use crate::model::{Mode, PeerView, Prefix, PrefixSet, Release, TableId, TableMode, Vantage};

/// The instantaneous class of one VIP from the joined views.
///
/// "zebra has it" is either view: the ZAPI stream (what zebra redistributes)
/// or zebra's own table (vty). They differ exactly in the FRR bugs: before
/// 10.7 a route that existed before a subscription is in zebra's table but
/// never redistributed; on 8.4 a replace drops the import while the table
/// keeps the route; a local address makes the import lose to the connected
/// route.
pub fn classify(
    vip: &Vip,
    table: TableId,
    prefix: &Prefix,
    addresses: &BTreeSet<Prefix>,
    peers: &[PeerView],
    intent: Option<&Intent>,
) -> Class {
    // Iterated, not collected: a whole-view event classifies every VIP.
    let established = || peers.iter().filter(|p| p.established);
    let sent = established().any(|p| p.advertised.contains(prefix));
    let zebra_has = vip.zebra || vip.zebra_table == Some(true);
    // What the configuration says (None: not read). Evaluated only where a
    // VIP is not sent: a healthy table costs no policy evaluation.
    let redistributed = || intent.map(|i| i.redistributed(table, prefix));
    match (vip.in_kernel(), zebra_has) {
        (false, false) if !sent => Class::Withdrawn,
        (false, _) => Class::ZebraStale,
        (true, _) if !sent && matches!(redistributed(), Some(None)) => Class::Unconfigured,
        (true, false) => Class::KernelOnly,
        (true, true) if established().next().is_none() => Class::NoPeer,
        (true, true) if sent => Class::Advertised,
        (true, true) if denied(intent, redistributed(), prefix, peers) => Class::Filtered,
        // In zebra's table, not redistributed, and a local address of the
        // same prefix: the connected route wins the selection.
        (true, true) if !vip.zebra && addresses.contains(prefix) => Class::Shadowed,
        (true, true) => Class::NotRedistributed,
    }
}

/// The policy denies the prefix: the redistribution's route-map does, or
/// every established peer's outbound route-map does. An unknown verdict
/// is no denial.
fn denied(
    intent: Option<&Intent>,
    redistributed: Option<Option<Verdict<'_>>>,
    prefix: &Prefix,
    peers: &[PeerView],
) -> bool {
    let Some(intent) = intent else {
        return false;
    };
    match redistributed {
        Some(Some(Verdict::Deny { .. })) => true,
        Some(Some(Verdict::Permit)) => peers
            .iter()
            .filter(|p| p.established)
            .all(|p| matches!(intent.sent_to(&p.peer, prefix), Verdict::Deny { .. })),
        _ => false,
    }
}

/// Why a VIP of `table` is `filtered`: the first denial its policy gives
/// (for `/status`), or None when the policy does not deny it.
pub fn filtered_by(
    intent: &Intent,
    table: TableId,
    prefix: &Prefix,
    peers: &[PeerView],
) -> Option<String> {
    match intent.redistributed(table, prefix)? {
        v @ Verdict::Deny { .. } => Some(v.to_string()),
        Verdict::Permit => {
            let mut established = peers.iter().filter(|p| p.established).peekable();
            established.peek()?;
            let mut first = None;
            for p in established {
                match intent.sent_to(&p.peer, prefix) {
                    v @ Verdict::Deny { .. } => {
                        first.get_or_insert_with(|| format!("to {}: {v}", p.peer));
                    }
                    _ => return None,
                }
            }
            first
        }
        Verdict::Unknown { .. } => None,
    }
}

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
        Event::KernelAddress { prefix, present } => on_kernel_address(state, prefix, present, now),
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
        } => on_heal_done(state, (table, prefix), action, ok, &detail, now),
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
        Event::DrainReapplied { ok } => {
            drain::on_reapplied(state, ok, now);
            // The next read of bgpd's configuration confirms it.
            ok.then(|| actions.push(Action::RefreshBgp));
            None
        }
    };
    let drain_at = drain::advance(state, now, &mut actions);
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
            finish(state, scope, touched_bgp, now, actions, drain_at)
        }
        None => {
            actions.extend(drain_at.map(|at| Action::WakeAt { at }));
            actions
        }
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
    }
    if added {
        route_after_address(state, key, now);
    }
    Next::touching(Scope::One(table, prefix))
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
    Next::touching(Scope::All)
}

/// kube-vip's heartbeat: the same route replaced.
fn on_kernel_reasserted(state: &mut State, key: (TableId, Prefix), now: Millis) -> Option<Next> {
    let v = state.vips.get_mut(&key)?;
    v.reasserted();
    // A beat on a VIP in drift re-arms its heal (the drift may be
    // this beat's doing); on a consistent VIP it is only remembered.
    if !triggered(state, key, now) {
        return None;
    }
    Some(Next {
        scope: Scope::One(key.0, key.1),
        touched_bgp: false,
    })
}

/// The VIP's address came or went on the node.
fn on_kernel_address(
    state: &mut State,
    prefix: Prefix,
    present: bool,
    now: Millis,
) -> Option<Next> {
    if present {
        state.addresses.insert(prefix);
        address_after_route(state, prefix, now);
    } else {
        state.addresses.remove(&prefix);
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
    state.touch(key.0, key.1, now).zebra = present;
    if !present {
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

/// A heal action's result: backoff, then verification after a new grace.
fn on_heal_done(
    state: &mut State,
    key: (TableId, Prefix),
    action: HealAction,
    ok: bool,
    detail: &str,
    now: Millis,
) -> Option<Next> {
    let backoff = state.config.backoff_ms;
    let cap = state.config.backoff_max_ms;
    let grace = state.config.grace_ms;
    let v = state.vips.get_mut(&key)?;
    let h = v.heal_mut();
    h.in_flight = false;
    h.done_at = now;
    h.last_action = Some(action);
    // After a give-up the status keeps saying so until the VIP is
    // consistent again, whatever the retries at the cap return.
    if !(ok && h.gave_up) {
        h.last_result = Some(if ok {
            "ok".to_string()
        } else {
            format!("error: {detail}")
        });
    }
    if std::mem::take(&mut h.fast) && ok {
        // A fast heal is no attempt of a drift: nothing was
        // reported; what follows it is judged after a new grace,
        // and a failure falls back to the graced path.
        v.observed_since = now;
        state.wakeups.insert(now + grace, key);
        return Next::touching(Scope::One(key.0, key.1));
    }
    h.attempts += 1;
    let shift = h.attempts.saturating_sub(1).min(16);
    h.next_at = now
        + if h.gave_up {
            cap
        } else {
            backoff.saturating_mul(1 << shift).min(cap)
        };
    // Verification: the next observations decide, after a new grace.
    v.observed_since = now;
    Next::touching(Scope::One(key.0, key.1))
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
    if state.intent.as_ref() == Some(&intent) {
        return None;
    }
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
    drain_at: Option<Millis>,
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
    let first = match (state.wakeups.first(), drain_at) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    if let Some(at) = first {
        actions.push(Action::WakeAt { at });
    }
    actions
}

/// VIPs evaluated per chunk of a whole-view event's walk.
const ALL_CHUNK: usize = 4_096;

/// Releases from this one have `redistribute table-direct`; before it,
/// `ip import-table` drops the import at any replace of the route (8.4,
/// every time: docs/FRR-BEHAVIOUR.md, "8.4: a replace drops the import").
const TABLE_DIRECT_SINCE: Release = Release::new(10, 0);

/// How long after a kernel trigger zebra's withdrawal of the VIP is that
/// trigger's doing: zebra answers a kernel change in 10.5-17 ms
/// (docs/FRR-BEHAVIOUR.md, "Normal convergence"); the rest is room for a
/// loaded node. A withdrawal later than this takes the graced path.
const TRIGGER_WINDOW_MS: Millis = 250;

/// A kernel write to a VIP's route that ribbridge did not make (its own
/// heal's echo arrives while the heal is in flight or within a grace after
/// it): remembered for the fast path, and on a VIP in reported drift it
/// re-arms healing, because a drift that recurs because its trigger recurs
/// is not a failed heal. The re-armed heal waits a grace and a bgpd view
/// newer than that, so the trigger's own effect (on 10.7 a beat heals a
/// lost route) is seen before anything is done. Returns true when it
/// re-armed.
fn triggered(state: &mut State, key: (TableId, Prefix), now: Millis) -> bool {
    let grace = state.config.grace_ms;
    let Some(v) = state.vips.get_mut(&key) else {
        return false;
    };
    let h = v.heal();
    if h.in_flight || (h.done_at > 0 && now < h.done_at.saturating_add(grace)) {
        return false;
    }
    v.trigger_at = Stamp::at(now);
    if !v.state.is_drift() {
        return false;
    }
    let h = v.heal_mut();
    h.attempts = 0;
    h.gave_up = false;
    h.done_at = now;
    h.next_at = now.saturating_add(grace);
    true
}

/// The fast path of FRR before 10.0 in import-table mode: zebra's ZAPI
/// withdrawal of a VIP the kernel still holds, within
/// [`TRIGGER_WINDOW_MS`] of a kernel trigger on it, is the dropped import,
/// certain. Re-importing at once (the withdrawal comes ~10 ms after the
/// trigger, and a re-import 10-20 ms after it leaves the router seeing no
/// change; 5 ms is too early, zebra drops the import after it) heals it
/// before bgpd sends the withdrawal. Nothing is reported: no drift was.
/// One trigger gets one fast heal; a failed one falls back to the graced
/// path. Any other release or table mode, a withdrawal with no recent
/// trigger, or a VIP shadowed by an address takes the graced path.
fn fast_reimport(
    state: &mut State,
    key: (TableId, Prefix),
    now: Millis,
    actions: &mut Vec<Action>,
) {
    let Some((release, table_mode)) = fast_paths_on(state) else {
        return;
    };
    if table_mode != TableMode::ImportTable || release >= TABLE_DIRECT_SINCE {
        return;
    }
    let has_addr = state.addresses.contains(&key.1);
    let allow_addr = state.config.heal_addresses;
    let Some(v) = state.vips.get_mut(&key) else {
        return;
    };
    if !v.in_kernel() || v.heal().in_flight || has_addr {
        return;
    }
    let Some(at) = v.trigger_at.get() else {
        return;
    };
    if now.saturating_sub(at) > TRIGGER_WINDOW_MS {
        return;
    }
    let Some(action) = heal_policy(
        Class::NotRedistributed,
        release,
        table_mode,
        has_addr,
        allow_addr,
    ) else {
        return;
    };
    // Held back by the ceiling: the graced path takes it, in its turn.
    if !admit_fast(&mut state.ceiling, &state.config, now) {
        return;
    }
    v.trigger_at = Stamp::NONE;
    start_heal(v, key, action, true, actions);
}

/// The release measured with FRRouting/frr#22654 (route, then an address
/// of the same prefix, loses the route in zebra): 10.7.
const ROUTE_THEN_ADDRESS_LOST: Release = Release::new(10, 7);

/// An address of a VIP's prefix this soon after its route appeared is
/// FRRouting/frr#22654's trigger when the route is still queued in zebra
/// (zebra takes ~10 ms); the check at [`ZEBRA_SETTLE_MS`] is the proof.
const ADDRESS_RACE_MS: Millis = 50;

/// How long after the trigger zebra must have sent the route on ZAPI if
/// it kept it: its normal reaction is 10.5-17 ms (docs/FRR-BEHAVIOUR.md).
const ZEBRA_SETTLE_MS: Millis = 40;

/// Fast paths act only in repair mode, on a node, not drained, with the
/// views complete; the release and table mode come with zebra's session.
fn fast_paths_on(state: &State) -> Option<(Release, TableMode)> {
    if state.config.mode != Mode::Repair
        || state.config.vantage != Vantage::Node
        || drain::holds(state)
        || !state.ready()
    {
        return None;
    }
    state.zebra
}

/// Releases from [`TABLE_DIRECT_SINCE`] up to this one lose a route added
/// while an address of its prefix exists (10.3 measured, every time the
/// race goes that way: docs/FRR-BEHAVIOUR.md, "10.3: address, then route").
const ADDRESS_THEN_ROUTE_KEPT: Release = ROUTE_THEN_ADDRESS_LOST;

/// 10.3 with `table-direct`: the VIP's route appeared while an address of
/// its prefix was there (kube-vip's order). Schedules the check of
/// [`fast_relearn`]; the policy acts only with `--heal-addresses`.
fn route_after_address(state: &mut State, key: (TableId, Prefix), now: Millis) {
    let Some((release, table_mode)) = fast_paths_on(state) else {
        return;
    };
    if table_mode != TableMode::TableDirect
        || release < TABLE_DIRECT_SINCE
        || release >= ADDRESS_THEN_ROUTE_KEPT
        || !state.addresses.contains(&key.1)
    {
        return;
    }
    if let Some(v) = state.vips.get_mut(&key) {
        let due = now + ZEBRA_SETTLE_MS;
        v.cold_mut().fast_due = Some(due);
        state.wakeups.insert(due, key);
    }
}

/// 10.7 with `table-direct`: an address of the VIP's prefix right after
/// its route appeared (one netlink batch) makes zebra drop the queued
/// route (FRRouting/frr#22654). Schedules the check of [`fast_relearn`].
fn address_after_route(state: &mut State, prefix: Prefix, now: Millis) {
    let Some((release, table_mode)) = fast_paths_on(state) else {
        return;
    };
    if table_mode != TableMode::TableDirect || release < ROUTE_THEN_ADDRESS_LOST {
        return;
    }
    let keys: Vec<_> = state
        .vips
        .keys()
        .filter(|k| k.1 == prefix)
        .copied()
        .collect();
    for key in keys {
        let Some(v) = state.vips.get_mut(&key) else {
            continue;
        };
        let fresh = v
            .added_at
            .get()
            .is_some_and(|at| now.saturating_sub(at) <= ADDRESS_RACE_MS);
        if fresh && v.in_kernel() && !v.zebra {
            let due = now + ZEBRA_SETTLE_MS;
            v.cold_mut().fast_due = Some(due);
            state.wakeups.insert(due, key);
        }
    }
}

/// The check of [`address_after_route`]'s and [`route_after_address`]'s
/// triggers: zebra, past its normal
/// reaction, still lacks the route on ZAPI and in its table: the route is
/// lost, certain; the policy's action runs at once, before any grace or
/// poll. Nothing is reported (no drift was); a failure falls back to the
/// graced path.
fn fast_relearn(state: &mut State, key: (TableId, Prefix), now: Millis, actions: &mut Vec<Action>) {
    let Some((release, table_mode)) = fast_paths_on(state) else {
        return;
    };
    let has_addr = state.addresses.contains(&key.1);
    let allow_addr = state.config.heal_addresses;
    let Some(v) = state.vips.get_mut(&key) else {
        return;
    };
    match v.fast_due() {
        Some(due) if now >= due => v.cold_mut().fast_due = None,
        _ => return,
    }
    if !v.in_kernel() || v.zebra || v.zebra_table == Some(true) || v.heal().in_flight {
        return;
    }
    let Some(action) = heal_policy(Class::KernelOnly, release, table_mode, has_addr, allow_addr)
    else {
        return;
    };
    if !admit_fast(&mut state.ceiling, &state.config, now) {
        return;
    }
    start_heal(v, key, action, true, actions);
}

/// A fast heal passes the ceiling only if it admits it at once.
fn admit_fast(ceiling: &mut super::vocab::Ceiling, config: &Config, now: Millis) -> bool {
    ceiling.try_admit(config.heal_rate_per_s, config.heal_burst, now)
}

/// Ask for a heal: in flight until its result; a `fast` one (a recognised
/// trigger, no drift reported) is not an attempt of a drift.
fn start_heal(
    v: &mut Vip,
    key: (TableId, Prefix),
    action: HealAction,
    fast: bool,
    actions: &mut Vec<Action>,
) {
    let h = v.heal_mut();
    h.in_flight = true;
    h.fast = fast;
    h.last_action = Some(action);
    actions.push(Action::Heal {
        table: key.0,
        prefix: key.1,
        action,
    });
}

/// Merges a full view into the VIPs: `fresh` in ascending key order without
/// duplicates; a VIP it lacks gets `absent`, one it holds `present` with its
/// value, and a key no VIP has becomes the VIP `new` makes. Known VIPs are
/// updated in place (a timer resync of an unchanged table allocates
/// nothing); only when there are new keys is the map rebuilt, in one
/// ascending pass ([`extend_packed`]): a startup's 100 000 new VIPs land
/// in full nodes, and the old nodes are freed as the pass goes, so the map
/// is not held twice.
fn merge_vips<T>(
    vips: &mut BTreeMap<(TableId, Prefix), Vip>,
    fresh: impl Iterator<Item = ((TableId, Prefix), T)> + Clone,
    mut absent: impl FnMut(&(TableId, Prefix), &mut Vip),
    mut present: impl FnMut(&mut Vip, T),
    mut new: impl FnMut(T) -> Vip,
) {
    let mut new_keys = 0usize;
    let mut f = fresh.clone().peekable();
    for (k, v) in vips.iter_mut() {
        while f.next_if(|(fk, _)| fk < k).is_some() {
            new_keys += 1;
        }
        match f.next_if(|(fk, _)| fk == k) {
            Some((_, t)) => present(v, t),
            None => absent(k, v),
        }
    }
    new_keys += f.count();
    if new_keys == 0 {
        return;
    }
    let old = std::mem::take(vips);
    let count = old.len() + new_keys;
    let mut old = old.into_iter().peekable();
    let mut fresh = fresh.peekable();
    let merged = std::iter::from_fn(|| {
        let order = match (old.peek(), fresh.peek()) {
            (None, None) => return None,
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (Some((k, _)), Some((f, _))) => k.cmp(f),
        };
        match order {
            std::cmp::Ordering::Less => old.next(),
            // Updated by the pass above.
            std::cmp::Ordering::Equal => {
                fresh.next();
                old.next()
            }
            std::cmp::Ordering::Greater => fresh.next().map(|(k, t)| (k, new(t))),
        }
    });
    extend_packed(vips, merged, count);
}

/// Adds `count` entries, in ascending key order and none of them in `map`,
/// keeping the map's nodes full. Inserting keys in ascending order splits
/// each full node in two and leaves every node half full: twice the bytes
/// (a startup dump of 100 000 VIPs is exactly that). `BTreeMap::append` of
/// two non-empty maps builds a new tree of full nodes from their merged
/// sequences instead, freeing the old nodes as it goes; it runs once per
/// batch of an eighth of the entries, so the batch (itself half full) stays
/// small beside the map, for a handful of linear rebuilds.
pub(super) fn extend_packed<K: Ord, V>(
    map: &mut BTreeMap<K, V>,
    new: impl Iterator<Item = (K, V)>,
    count: usize,
) {
    let batch_len = (count / PACK_BATCHES).max(PACK_MIN);
    let mut batch = BTreeMap::new();
    for (k, v) in new {
        batch.insert(k, v);
        if batch.len() >= batch_len {
            map.append(&mut batch);
        }
    }
    map.append(&mut batch);
}

/// Batches per [`extend_packed`]: more rebuilds for a smaller batch.
const PACK_BATCHES: usize = 8;

/// Below this many entries a batch is not worth a rebuild of the map.
const PACK_MIN: usize = 1_024;

/// Re-classify one VIP, promote a persisted difference, decide its heal,
/// schedule its deadline. Returns true when it needs a fresh bgpd view.
fn evaluate(
    state: &mut State,
    key: (TableId, Prefix),
    now: Millis,
    actions: &mut Vec<Action>,
) -> bool {
    if !state.ready() {
        return false;
    }
    fast_relearn(state, key, now, actions);
    let Some(v) = state.vips.get(&key) else {
        return false;
    };
    let router = state.config.vantage == Vantage::Router;
    let observed = if router {
        if v.in_kernel() {
            Class::Advertised
        } else {
            Class::Withdrawn
        }
    } else if drain::holds(state) {
        // A drained node withdrew every VIP on purpose, whatever the views
        // (or is about to: its drain is recorded, bgpd is being told).
        Class::Drained
    } else {
        classify(
            v,
            key.0,
            &key.1,
            &state.addresses,
            &state.peers,
            state.intent.as_ref(),
        )
    };
    let grace = grace_of(&state.config, observed, v.zebra);
    // The router polls nothing: its kernel view is the whole truth.
    let bgp_view_at = if router {
        Some(Millis::MAX)
    } else {
        state.bgp_view_at
    };
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
    let mut due = v.observed_since + grace;
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
        ) {
            due = due.max(until);
        }
    }
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
            h.last_result = Some("healed".to_string());
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

/// A discovered VIP (not configured) withdrawn and absent from every view
/// for the retention is forgotten; until then its deadline is set.
fn forget(
    state: &mut State,
    key: (TableId, Prefix),
    now: Millis,
    actions: &mut Vec<Action>,
) -> bool {
    if state.config.vips.contains(&key.1) {
        return false;
    }
    let Some(v) = state.vips.get(&key) else {
        return false;
    };
    let absent = !v.in_kernel() && !v.zebra && v.zebra_table != Some(true) && !v.heal().in_flight;
    if !absent {
        return false;
    }
    let at = v.since.saturating_add(state.config.forget_after_ms);
    if now < at {
        state.wakeups.insert(at, key);
        return false;
    }
    state.vips.remove(&key);
    actions.push(Action::Forgot {
        table: key.0,
        prefix: key.1,
    });
    false
}

/// When the startup grace of the established sessions ends, if none of
/// them has sent bgpd's table yet: the oldest session's coming up plus
/// `grace`. None (no delay) when one of them has sent it, when bgpd did not
/// say how long a session is up, or when there is no view or no session.
pub(super) fn initial_update_due(
    peers: &[PeerView],
    view_at: Option<Millis>,
    sent: &BTreeMap<String, Option<i64>>,
    grace: Millis,
) -> Option<Millis> {
    let at = view_at?;
    let mut oldest: Option<Millis> = None;
    for p in peers.iter().filter(|p| p.established) {
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
fn note_sent(sent: &mut BTreeMap<String, Option<i64>>, peers: &[PeerView], at: Millis) {
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

/// For a VIP in drift: pick the policy action and, in repair mode and when
/// the backoff allows, ask for it. Returns true when a retry waits for a
/// fresh bgpd view.
fn decide_heal(
    state: &mut State,
    key: (TableId, Prefix),
    now: Millis,
    actions: &mut Vec<Action>,
) -> bool {
    let Some((release, table_mode)) = state.zebra else {
        return false;
    };
    let bgp_view_at = state.bgp_view_at;
    let mode = state.config.mode;
    let grace = state.config.grace_ms;
    let max = state.config.max_attempts;
    let cap = state.config.backoff_max_ms;
    let allow_addr = state.config.heal_addresses;
    let (rate, burst) = (state.config.heal_rate_per_s, state.config.heal_burst);
    let has_addr = state.addresses.contains(&key.1);
    let Some(v) = state.vips.get_mut(&key) else {
        return false;
    };
    let class = v.state;
    // Only a VIP in drift comes here: its out-of-line part is its own.
    let h = v.heal_mut();
    if h.in_flight {
        return false;
    }
    let Some(action) = heal_policy(class, release, table_mode, has_addr, allow_addr) else {
        if h.last_result.as_deref() != Some("no_safe_action") {
            h.last_result = Some("no_safe_action".to_string());
        }
        return false;
    };
    if mode == Mode::Observe {
        h.last_action = Some(action);
        h.last_result = Some("observe_only".to_string());
        return false;
    }
    // Given up: reported once for alerting, and healing goes on at the
    // capped backoff: the VIP is never left dark while a proven heal exists.
    if h.attempts >= max && !h.gave_up {
        h.gave_up = true;
        h.last_result = Some("gave_up".to_string());
        h.next_at = h.next_at.max(h.done_at.saturating_add(cap));
        actions.push(Action::GaveUp {
            table: key.0,
            prefix: key.1,
            class,
        });
    }
    if now < h.next_at {
        let at = h.next_at;
        state.wakeups.insert(at, key);
        return false;
    }
    // An action is judged on a bgpd view taken after the last action (or
    // the trigger that re-armed healing) settled.
    if bgp_view_at.is_none_or(|t| t < h.done_at + grace) {
        return true;
    }
    // The node-wide ceiling: a held-back action waits for its own slot.
    let slot = match h.slot_at.take() {
        Some(at) => Err(at),
        None => state.ceiling.admit(rate, burst, now),
    };
    if let Err(at) = slot
        && now < at
    {
        h.slot_at = Some(at);
        state.wakeups.insert(at, key);
        return false;
    }
    start_heal(v, key, action, false, actions);
    false
}
