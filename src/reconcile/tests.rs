//! Scenario tests of the pure core that read better as code: each feeds
//! events with explicit times and asserts the classes and actions.
//!
//! What the lab shows is data, not code: `tests/data/reconcile/` replays
//! recorded runs of every release (`tests/reconcile_cases.rs`). Normal
//! convergence and withdrawal (`*-withdraw`), observe mode (`*-observe`),
//! zebra away and back (`*-zebra-bgpd-restart`), `shadowed` and `no_peer`
//! (`8.4-address-shadows-*`, `*-zebra-bgpd-restart`), realm-only
//! re-assertions (`*-heartbeat`) and the JSON-lines round trip live there.
//! Here: what the lab cannot produce on demand (a grace not reached,
//! `kernel_only` on 8.4, failing heals and giving up, `zebra_stale`) and
//! the startup grace's arithmetic.

use std::collections::BTreeMap;

use super::evaluate::initial_update_due;
use super::fixture::heals;
use super::*;
use crate::model::{Mode, PeerAddr, PeerView, Prefix, PrefixSet, Release, TableId, TableMode};

const T: TableId = 198;

fn vip() -> Prefix {
    "192.0.2.10/32".parse().expect("prefix")
}

fn facts() -> Option<KernelFacts> {
    Some(KernelFacts {
        protocol: 248,
        nexthops: 1,
    })
}

fn peer(sent: bool) -> PeerView {
    PeerView {
        peer: "198.18.1.1".into(),
        established: true,
        advertised: if sent {
            [vip()].into()
        } else {
            PrefixSet::default()
        },
        up_ms: None,
        families: crate::model::Families::both(),
    }
}

/// The scenarios below were written with a 500 ms grace; their times
/// (1 000 then 1 500) keep reading as "the grace passed".
fn half_second() -> Config {
    Config {
        grace_ms: 500,
        ..Config::repairing()
    }
}

fn release(major: u16, minor: u16) -> Release {
    Release::new(major, minor)
}

/// A ready state on `rel` with no route anywhere yet.
fn ready(config: Config, rel: Release, red: TableMode) -> State {
    let mut s = State::new(config, 0);
    step(&mut s, Event::KernelSynced { routes: vec![] }, 0);
    step(
        &mut s,
        Event::ZebraUp {
            release: rel,
            table_mode: red,
        },
        0,
    );
    step(
        &mut s,
        Event::ZebraSynced {
            table: T,
            prefixes: PrefixSet::default(),
        },
        0,
    );
    bgp(&mut s, 0, false);
    assert!(s.ready());
    s
}

fn state_of(s: &State) -> Class {
    s.vips[&(T, vip())].state
}

/// The VIP's kernel route appears (`true`) or goes, at `at`.
fn kernel(s: &mut State, at: Millis, present: bool) -> Vec<Action> {
    let route = if present { facts() } else { None };
    step(
        s,
        Event::KernelRoute {
            table: T,
            prefix: vip(),
            route,
        },
        at,
    )
}

/// zebra redistributes (`true`) or withdraws the VIP, at `at`.
fn zebra(s: &mut State, at: Millis, present: bool) -> Vec<Action> {
    step(
        s,
        Event::ZebraRoute {
            table: T,
            prefix: vip(),
            present,
        },
        at,
    )
}

/// A bgpd view with the one peer, sent the VIP or not, at `at`.
fn bgp(s: &mut State, at: Millis, sent: bool) -> Vec<Action> {
    step(
        s,
        Event::BgpView {
            peers: vec![peer(sent)],
        },
        at,
    )
}

/// Kernel add, zebra 10 ms later, bgpd view 120 ms later: advertised, no drift.
fn converge(s: &mut State, at: Millis) -> Vec<Action> {
    let mut all = kernel(s, at, true);
    all.extend(zebra(s, at + 10, true));
    all.extend(bgp(s, at + 120, true));
    all
}

#[test]
fn import_lost_on_8_4_becomes_kernel_only_after_grace_and_heals_by_delete_add() {
    let mut s = ready(half_second(), release(8, 4), TableMode::ImportTable);
    converge(&mut s, 0);
    // kube-vip's realm flip: the kernel keeps the route, zebra drops the import.
    let a = zebra(&mut s, 1_000, false);
    assert_eq!(
        state_of(&s),
        Class::Advertised,
        "within grace: still advertised"
    );
    assert!(a.contains(&Action::WakeAt { at: 1_500 }), "{a:?}");
    assert!(a.contains(&Action::RefreshBgp), "{a:?}");
    bgp(&mut s, 1_100, false);
    let a = step(&mut s, Event::Tick, 1_500);
    assert!(
        a.contains(&Action::RefreshBgp),
        "due: asks for a fresh poll"
    );
    assert_eq!(
        state_of(&s),
        Class::Advertised,
        "not before a poll newer than the grace"
    );
    let a = bgp(&mut s, 1_500, false);
    assert_eq!(state_of(&s), Class::KernelOnly);
    assert_eq!(heals(&a), vec![HealAction::DeleteAdd]);
    // Executed; zebra re-imports; bgpd sends again.
    step(
        &mut s,
        Event::HealDone {
            table: T,
            prefix: vip(),
            action: HealAction::DeleteAdd,
            ok: true,
            detail: String::new(),
        },
        1_510,
    );
    zebra(&mut s, 1_520, true);
    let a = bgp(&mut s, 1_640, true);
    assert_eq!(state_of(&s), Class::Advertised);
    assert!(a.contains(&Action::StateChanged {
        table: T,
        prefix: vip(),
        from: Class::KernelOnly,
        to: Class::Advertised,
        drift_ms: Some(140),
    }));
    let h = &s.vips[&(T, vip())].heal();
    assert_eq!(h.last_result.as_ref().map(HealResult::name), Some("healed"));
    assert_eq!(h.attempts, 0);
}

#[test]
fn a_difference_shorter_than_the_grace_never_counts() {
    let mut s = ready(half_second(), release(10, 3), TableMode::TableDirect);
    converge(&mut s, 0);
    let mut all = zebra(&mut s, 1_000, false);
    all.extend(zebra(&mut s, 1_300, true));
    all.extend(step(&mut s, Event::Tick, 1_500));
    assert_eq!(state_of(&s), Class::Advertised);
    assert!(
        !all.iter()
            .any(|a| matches!(a, Action::StateChanged { .. } | Action::Heal { .. })),
        "{all:?}"
    );
}

#[test]
fn failed_heals_back_off_then_give_up_visibly() {
    let mut s = ready(half_second(), release(10, 7), TableMode::TableDirect);
    converge(&mut s, 0);
    zebra(&mut s, 1_000, false);
    let mut now = 1_500;
    let mut a = step(&mut s, Event::Tick, now);
    let mut attempts = 0;
    let mut gave_up = false;
    for _ in 0..20 {
        if heals(&a).len() == 1 {
            attempts += 1;
            a = step(
                &mut s,
                Event::HealDone {
                    table: T,
                    prefix: vip(),
                    action: HealAction::RealmToggle,
                    ok: true,
                    detail: String::new(),
                },
                now,
            );
        }
        if a.iter().any(|x| matches!(x, Action::GaveUp { .. })) {
            gave_up = true;
            break;
        }
        // Follow the core's own wake-ups; answer bgpd refreshes (still not sent).
        if a.contains(&Action::RefreshBgp) {
            a = step(
                &mut s,
                Event::BgpView {
                    peers: vec![peer(false)],
                },
                now,
            );
            continue;
        }
        let next = a
            .iter()
            .find_map(|x| match x {
                Action::WakeAt { at } => Some(*at),
                _ => None,
            })
            .expect("a wake-up while a heal is pending");
        assert!(next > now, "wake-ups move forward");
        now = next;
        a = step(&mut s, Event::Tick, now);
    }
    assert!(gave_up, "gave up");
    assert_eq!(attempts, 3);
    assert_eq!(last_result(&s), Some("gave_up"));
    // Back-off doubled: 1 s, then 2 s, between the attempts.
    assert!(now >= 1_500 + 1_000 + 2_000, "now {now}");
}

#[test]
fn stale_zebra_route_is_reported_without_action() {
    let mut s = ready(half_second(), release(10, 3), TableMode::TableDirect);
    converge(&mut s, 0);
    kernel(&mut s, 1_000, false);
    let a = step(&mut s, Event::Tick, 1_500);
    // Due: waits for a bgpd view newer than the grace before deciding.
    assert!(a.contains(&Action::RefreshBgp), "{a:?}");
    assert_eq!(state_of(&s), Class::Advertised);
    let a = bgp(&mut s, 1_520, true);
    assert_eq!(state_of(&s), Class::ZebraStale);
    assert!(heals(&a).is_empty());
    assert_eq!(last_result(&s), Some("no_safe_action"));
}

/// bgpd restarted: its sessions are Established again but have not sent
/// the table yet (~4 s on 10.7). Not a drift, no action, until the startup
/// grace has passed since the sessions came up; after it, a VIP still not
/// sent is `not_redistributed` and healed.
#[test]
fn sessions_just_up_get_the_startup_grace() {
    let mut s = ready(half_second(), release(10, 7), TableMode::TableDirect);
    converge(&mut s, 0);
    // bgpd says how long the session that sent the VIP is up: a minute.
    let old = PeerView {
        up_ms: Some(60_000),
        ..peer(true)
    };
    step(&mut s, Event::BgpView { peers: vec![old] }, 500);
    let fresh = |up_ms| PeerView {
        up_ms: Some(up_ms),
        ..peer(false)
    };
    let mut actions = Vec::new();
    // Polled every second from 1 s to 9 s: sessions up since 1 s.
    for t in (1_000..=9_000).step_by(1_000) {
        actions.extend(step(
            &mut s,
            Event::BgpView {
                peers: vec![fresh(t - 1_000)],
            },
            t,
        ));
        actions.extend(step(&mut s, Event::Tick, t + 500));
    }
    assert_eq!(state_of(&s), Class::Advertised, "{actions:?}");
    assert!(
        heals(&actions).is_empty(),
        "acted on a fresh bgpd: {actions:?}"
    );
    // Still not sent 10 s after the sessions came up: a drift.
    step(&mut s, Event::Tick, 11_000);
    let a = step(
        &mut s,
        Event::BgpView {
            peers: vec![fresh(10_100)],
        },
        11_100,
    );
    assert_eq!(state_of(&s), Class::NotRedistributed, "{a:?}");
    assert_eq!(heals(&a), vec![HealAction::RealmToggle]);

    // The end of the grace: from the oldest session's coming up, also
    // before this process started (ribbridge started beside a bgpd up 2 s:
    // the `*-withdraw` cases); none for sessions that have sent the table.
    let none = BTreeMap::new();
    let up = |ms| PeerView {
        up_ms: Some(ms),
        ..peer(false)
    };
    assert_eq!(
        initial_update_due(&[up(500)], Some(1_000), &none, 10_000, &vip()),
        Some(10_500)
    );
    assert_eq!(
        initial_update_due(&[up(2_000)], Some(11), &none, 10_000, &vip()),
        Some(8_011)
    );
    assert_eq!(
        initial_update_due(&[up(60_000)], Some(1_000), &none, 10_000, &vip()),
        Some(0),
        "up for a minute: over"
    );
    let sent: BTreeMap<PeerAddr, Option<i64>> = [("198.18.1.1".into(), Some(0))].into();
    assert_eq!(
        initial_update_due(&[up(500)], Some(1_000), &sent, 10_000, &vip()),
        None
    );
    assert_eq!(
        initial_update_due(&[peer(false)], Some(1_000), &none, 10_000, &vip()),
        None,
        "unknown uptime: no delay"
    );
    // One session per family: the IPv6 one sent its table, the IPv4 one
    // (young) has not: an IPv4 VIP still waits, an IPv6 one does not.
    let (v4, v6) = (
        PeerView {
            families: crate::model::Families::only(crate::model::intent::Family::Ipv4),
            ..up(500)
        },
        PeerView {
            peer: "fdbb:0:0:1::1".into(),
            families: crate::model::Families::only(crate::model::intent::Family::Ipv6),
            ..up(500)
        },
    );
    let v6_sent: BTreeMap<PeerAddr, Option<i64>> = [(v6.peer.clone(), Some(0))].into();
    let v6_vip: Prefix = "2001:db8::10/128".parse().expect("prefix");
    assert_eq!(
        initial_update_due(
            &[v4.clone(), v6.clone()],
            Some(1_000),
            &v6_sent,
            10_000,
            &vip()
        ),
        Some(10_500)
    );
    assert_eq!(
        initial_update_due(&[v4, v6], Some(1_000), &v6_sent, 10_000, &v6_vip),
        None
    );

    // Sessions of unknown age, or that sent the VIP before (8.4's
    // heartbeat drops an import under sessions that advertised it): the
    // plain 2 s, however young they are.
    for up in [None, Some(5_000)] {
        let mut s = ready(half_second(), release(10, 7), TableMode::TableDirect);
        converge(&mut s, 3_000);
        let old = PeerView {
            up_ms: up.map(|u| u + 1_000),
            ..peer(false)
        };
        step(
            &mut s,
            Event::BgpView {
                peers: vec![old.clone()],
            },
            4_000,
        );
        step(&mut s, Event::Tick, 6_000);
        let old = PeerView {
            up_ms: up.map(|u| u + 3_010),
            ..old
        };
        step(&mut s, Event::BgpView { peers: vec![old] }, 6_010);
        assert_eq!(state_of(&s), Class::NotRedistributed, "uptime {up:?}");
    }
}

fn drain(s: &mut State, at: Millis, drained: bool) -> Vec<Action> {
    step(s, Event::Drain { drained }, at)
}

#[test]
fn a_drained_node_is_drained_not_drifting_and_never_healed() {
    for (rel, mode) in [
        (release(8, 4), TableMode::ImportTable),
        (release(10, 3), TableMode::TableDirect),
        (release(10, 7), TableMode::TableDirect),
    ] {
        let mut s = ready(half_second(), rel, mode);
        converge(&mut s, 0);
        let mut all = drain(&mut s, 1_000, true);
        assert!(all.contains(&Action::RefreshBgp), "{all:?}");
        // bgpd withdrew the VIP: zebra still redistributes, the kernel has it.
        all.extend(bgp(&mut s, 1_100, false));
        assert_eq!(state_of(&s), Class::Drained);
        // Long after every grace, with heartbeats and zebra flapping: still drained.
        for t in (2_000..60_000).step_by(1_000) {
            all.extend(step(
                &mut s,
                Event::KernelReasserted {
                    table: T,
                    prefix: vip(),
                },
                t,
            ));
            all.extend(zebra(&mut s, t + 10, t % 2_000 == 0));
            all.extend(step(&mut s, Event::Tick, t + 600));
            all.extend(bgp(&mut s, t + 700, false));
        }
        assert_eq!(state_of(&s), Class::Drained);
        assert!(heals(&all).is_empty(), "{rel}: {all:?}");
        assert!(
            !all.iter().any(|a| matches!(
                a,
                Action::StateChanged { to, .. } if !to.is_consistent()
            ) || matches!(a, Action::GaveUp { .. })),
            "{rel}: {all:?}"
        );
        // A repeated drain is no event at all.
        assert!(drain(&mut s, 61_000, true).is_empty());
        // Undrained: back to advertised once bgpd sends it, no drift between.
        // (The writer beats on: silent, its advertised VIP would be
        // orphaned.)
        zebra(&mut s, 61_000, true);
        let mut back = drain(&mut s, 62_000, false);
        beat(&mut s, 62_050);
        back.extend(bgp(&mut s, 62_100, true));
        assert_eq!(state_of(&s), Class::Advertised);
        assert!(back.contains(&Action::StateChanged {
            table: T,
            prefix: vip(),
            from: Class::Drained,
            to: Class::Advertised,
            drift_ms: None,
        }));
    }
}

#[test]
fn a_drain_ends_a_drift_and_its_heals() {
    let mut s = ready(half_second(), release(8, 4), TableMode::ImportTable);
    converge(&mut s, 0);
    zebra(&mut s, 1_000, false);
    bgp(&mut s, 1_100, false);
    step(&mut s, Event::Tick, 1_500);
    let a = bgp(&mut s, 1_500, false);
    assert_eq!(heals(&a), vec![HealAction::DeleteAdd]);
    drain(&mut s, 1_600, true);
    bgp(&mut s, 1_700, false);
    assert_eq!(state_of(&s), Class::Drained);
    // The heal that was in flight finishes; no further heal follows.
    let mut all = step(
        &mut s,
        Event::HealDone {
            table: T,
            prefix: vip(),
            action: HealAction::DeleteAdd,
            ok: false,
            detail: "x".into(),
        },
        1_800,
    );
    for t in (2_000..40_000).step_by(500) {
        all.extend(step(&mut s, Event::Tick, t));
        all.extend(bgp(&mut s, t + 100, false));
    }
    assert!(heals(&all).is_empty(), "{all:?}");
    assert_eq!(state_of(&s), Class::Drained);
}

#[test]
fn the_drain_event_has_its_own_json_and_the_old_events_keep_theirs() {
    let e: Event = serde_json::from_str(r#"{"event":"drain","drained":true}"#).expect("json");
    assert_eq!(e, Event::Drain { drained: true });
    assert_eq!(
        serde_json::to_string(&Event::Tick).expect("json"),
        r#"{"event":"tick"}"#
    );
}

/// kube-vip's realm-only replace of the VIP route, at `at`.
fn beat(s: &mut State, at: Millis) -> Vec<Action> {
    step(
        s,
        Event::KernelReasserted {
            table: T,
            prefix: vip(),
        },
        at,
    )
}

fn heal_done(s: &mut State, at: Millis, action: HealAction, ok: bool) -> Vec<Action> {
    step(
        s,
        Event::HealDone {
            table: T,
            prefix: vip(),
            action,
            ok,
            detail: if ok { String::new() } else { "refused".into() },
        },
        at,
    )
}

fn reported(actions: &[Action]) -> bool {
    actions
        .iter()
        .any(|a| matches!(a, Action::StateChanged { .. } | Action::GaveUp { .. }))
}

#[test]
fn on_8_4_import_table_zebras_withdrawal_after_a_beat_is_reimported_at_once() {
    let mut s = ready(Config::repairing(), release(8, 4), TableMode::ImportTable);
    converge(&mut s, 0);
    let mut all = beat(&mut s, 1_000);
    assert!(
        heals(&all).is_empty(),
        "a beat alone proves nothing: {all:?}"
    );
    // zebra's ZAPI withdrawal ~10 ms after the beat: the import dropped.
    let a = zebra(&mut s, 1_010, false);
    assert_eq!(heals(&a), vec![HealAction::ReimportTable], "{a:?}");
    all.extend(a);
    all.extend(heal_done(&mut s, 1_025, HealAction::ReimportTable, true));
    all.extend(zebra(&mut s, 1_030, true));
    all.extend(bgp(&mut s, 1_100, true));
    all.extend(step(&mut s, Event::Tick, 1_200));
    assert_eq!(state_of(&s), Class::Advertised);
    assert!(!reported(&all), "no drift was reported: {all:?}");
    assert_eq!(heals(&all).len(), 1);
    let h = &s.vips[&(T, vip())].heal();
    assert_eq!(h.attempts, 0, "a fast heal is no attempt of a drift");
    // 100 beats, each answered: never a give-up.
    let mut t = 2_000;
    for _ in 0..100 {
        let mut a = beat(&mut s, t);
        a.extend(zebra(&mut s, t + 10, false));
        assert_eq!(heals(&a), vec![HealAction::ReimportTable], "at {t}: {a:?}");
        a.extend(heal_done(&mut s, t + 25, HealAction::ReimportTable, true));
        a.extend(zebra(&mut s, t + 30, true));
        a.extend(bgp(&mut s, t + 100, true));
        assert!(!reported(&a), "at {t}: {a:?}");
        t += 1_000;
    }
    assert_eq!(state_of(&s), Class::Advertised);
}

/// 8.4's configuration as the poller reads it: table 198 redistributed
/// through zebra's import, which zebra's configuration has or lacks.
fn imported(import: bool) -> Event {
    use crate::model::intent::{Family, Intent, Redistribute};
    let mut intent = Intent::default();
    intent.redistributions.push(Redistribute {
        asn: 64512,
        family: Family::Ipv4,
        table: T,
        direct: false,
        route_map: None,
    });
    intent.imports = Some(if import {
        vec![(Family::Ipv4, T)]
    } else {
        vec![]
    });
    Event::Intent { intent }
}

fn has_import(s: &State) -> bool {
    s.intent
        .as_ref()
        .and_then(|i| i.imports.as_ref())
        .is_some_and(|i| !i.is_empty())
}

/// 8.4 with the import configured, the VIP advertised, a beat at 1 000 and
/// zebra's withdrawal at 1 010: the re-import asked.
fn reimporting() -> State {
    let mut s = ready(Config::repairing(), release(8, 4), TableMode::ImportTable);
    step(&mut s, imported(true), 0);
    converge(&mut s, 0);
    beat(&mut s, 1_000);
    let a = zebra(&mut s, 1_010, false);
    assert_eq!(heals(&a), vec![HealAction::ReimportTable], "{a:?}");
    s
}

#[test]
fn a_read_in_the_middle_of_a_reimport_is_held_and_the_next_read_replaces_it() {
    let mut s = reimporting();
    // zebra's configuration read between `no ip import-table 198` and
    // `ip import-table 198`: not the intent.
    let mut all = step(&mut s, imported(false), 1_015);
    assert!(has_import(&s), "the half-done heal taken as the intent");
    all.extend(heal_done(&mut s, 1_025, HealAction::ReimportTable, true));
    all.extend(zebra(&mut s, 1_030, true));
    all.extend(bgp(&mut s, 1_100, true));
    // The poller's next whole read has the import again.
    all.extend(step(&mut s, imported(true), 2_015));
    for t in (2_100..=10_000).step_by(100) {
        all.extend(step(&mut s, Event::Tick, t));
    }
    assert!(has_import(&s));
    assert_eq!(state_of(&s), Class::Advertised);
    assert!(!reported(&all), "nothing reported: {all:?}");
    assert_eq!(heals(&all), Vec::<HealAction>::new());
}

#[test]
fn an_import_removed_during_a_reimport_is_applied_late_not_lost() {
    let mut s = reimporting();
    let a = step(&mut s, imported(false), 1_015);
    let due = 1_015 + super::reimport::HOLD_MS;
    assert!(
        a.iter()
            .any(|a| matches!(a, Action::WakeAt { at } if *at == due)),
        "a wake-up when the hold ends: {a:?}"
    );
    heal_done(&mut s, 1_025, HealAction::ReimportTable, true);
    zebra(&mut s, 1_030, true);
    bgp(&mut s, 1_100, true);
    step(&mut s, Event::Tick, due - 1);
    assert!(has_import(&s), "held until {due}");
    // No newer read: the operator did remove it.
    step(&mut s, Event::Tick, due);
    assert!(!has_import(&s), "applied at {due}");
    assert_eq!(s.intent_at, 1_015, "as read at its own time");
    // Any other read lacking the import is the intent at once.
    let mut s = ready(Config::repairing(), release(8, 4), TableMode::ImportTable);
    step(&mut s, imported(true), 0);
    converge(&mut s, 0);
    step(&mut s, imported(false), 5_000);
    assert!(!has_import(&s), "no re-import near: applied at once");
}

#[test]
fn a_look_alike_withdrawal_takes_no_action_at_once_elsewhere() {
    // Another release or table mode: a beat then zebra's withdrawal is not
    // the 8.4 import drop (10.x keeps the route across a beat; a
    // withdrawal there is judged after the grace).
    for (rel, mode) in [
        (release(10, 3), TableMode::TableDirect),
        (release(10, 7), TableMode::TableDirect),
        (release(10, 7), TableMode::ImportTable),
    ] {
        let mut s = ready(Config::repairing(), rel, mode);
        converge(&mut s, 0);
        let mut a = beat(&mut s, 1_000);
        a.extend(zebra(&mut s, 1_010, false));
        assert!(heals(&a).is_empty(), "{rel} {mode:?}: {a:?}");
    }
    // 8.4 import-table, but no kernel trigger before the withdrawal, or
    // one too long before it: the graced path.
    let mut s = ready(Config::repairing(), release(8, 4), TableMode::ImportTable);
    converge(&mut s, 0);
    assert!(heals(&zebra(&mut s, 1_000, false)).is_empty());
    let mut s = ready(Config::repairing(), release(8, 4), TableMode::ImportTable);
    converge(&mut s, 0);
    beat(&mut s, 1_000);
    assert!(heals(&zebra(&mut s, 1_000 + 251, false)).is_empty());
    // A VIP shadowed by an address: the policy has no action for it.
    let mut s = ready(Config::repairing(), release(8, 4), TableMode::ImportTable);
    converge(&mut s, 0);
    step(
        &mut s,
        Event::KernelAddress {
            prefix: vip(),
            present: true,
            usable: true,
        },
        900,
    );
    beat(&mut s, 1_000);
    assert!(heals(&zebra(&mut s, 1_010, false)).is_empty());
    // Observe mode proposes, never acts.
    let observe = Config {
        mode: crate::model::Mode::Observe,
        ..Config::repairing()
    };
    let mut s = ready(observe, release(8, 4), TableMode::ImportTable);
    converge(&mut s, 0);
    beat(&mut s, 1_000);
    assert!(heals(&zebra(&mut s, 1_010, false)).is_empty());
}

/// Follow the core's wake-ups and polls (bgpd never sends the VIP) from
/// `now` until `until`, answering every heal with `ok`; the heals' times.
fn run_failing(s: &mut State, mut a: Vec<Action>, mut now: Millis, until: Millis) -> Vec<Millis> {
    let mut at = Vec::new();
    while now < until {
        if let Some(action) = heals(&a).first().copied() {
            at.push(now);
            a = heal_done(s, now, action, true);
            continue;
        }
        if a.contains(&Action::RefreshBgp) {
            a = bgp(s, now, false);
            continue;
        }
        let Some(next) = a.iter().find_map(|x| match x {
            Action::WakeAt { at } => Some(*at),
            _ => None,
        }) else {
            break;
        };
        assert!(next > now, "wake-ups move forward");
        now = next;
        a = step(s, Event::Tick, now);
    }
    at
}

#[test]
fn a_given_up_drift_is_still_healed_at_the_capped_backoff() {
    let mut s = ready(half_second(), release(10, 7), TableMode::TableDirect);
    converge(&mut s, 0);
    zebra(&mut s, 1_000, false);
    let a = step(&mut s, Event::Tick, 1_500);
    let heals_at = run_failing(&mut s, a, 1_500, 200_000);
    let h = &s.vips[&(T, vip())].heal();
    assert!(h.gave_up, "given up, and reported once");
    assert_eq!(
        h.last_result.as_ref().map(HealResult::name),
        Some("gave_up")
    );
    assert!(heals_at.len() > 3 + 4, "healing goes on: {heals_at:?}");
    let cap = s.config.backoff_max_ms;
    for w in heals_at[3..].windows(2) {
        assert_eq!(w[1] - w[0], cap, "at the cap after giving up: {heals_at:?}");
    }
}

#[test]
fn a_recurring_trigger_re_arms_the_heal_instead_of_giving_up() {
    // The graced path on 8.4 (the withdrawal came too late for the fast
    // path): every beat drops the import again before the heal is seen to
    // work. Each beat re-arms: attempts never pile up to a give-up.
    let mut s = ready(half_second(), release(8, 4), TableMode::ImportTable);
    converge(&mut s, 0);
    step(
        &mut s,
        Event::ZebraTable {
            table: T,
            prefixes: [vip()].into(),
        },
        0,
    );
    let mut all = Vec::new();
    let mut t = 1_000;
    for _ in 0..30 {
        all.extend(beat(&mut s, t));
        all.extend(zebra(&mut s, t + 300, false));
        let a = bgp(&mut s, t + 400, false);
        let until = t + 1_000;
        let heals_at = run_failing(&mut s, a, t + 400, until);
        assert!(heals_at.len() <= 2, "{heals_at:?}");
        t = until;
    }
    assert!(
        !all.iter().any(|a| matches!(a, Action::GaveUp { .. })),
        "{all:?}"
    );
    assert!(!s.vips[&(T, vip())].heal().gave_up);
    assert!(s.vips[&(T, vip())].heal().attempts <= 2);
}

#[test]
fn a_heals_own_kernel_echo_is_not_a_new_trigger() {
    let mut s = ready(half_second(), release(10, 7), TableMode::TableDirect);
    converge(&mut s, 0);
    zebra(&mut s, 1_000, false);
    step(&mut s, Event::Tick, 1_500);
    let a = bgp(&mut s, 1_500, false);
    assert_eq!(heals(&a), vec![HealAction::RealmToggle]);
    // The toggle's own realm-only replace, before and just after its result.
    beat(&mut s, 1_505);
    heal_done(&mut s, 1_506, HealAction::RealmToggle, true);
    beat(&mut s, 1_507);
    let h = &s.vips[&(T, vip())].heal();
    assert_eq!(h.attempts, 1, "the echo did not re-arm");
    // Nor is it a writer's beat: no writer is kept for a route nobody
    // re-asserts (its deletions would count as flaps: bridge.rs's five
    // route-then-address heals in a row were `flapping` in CI).
    assert!(s.writers.is_empty(), "{:?}", s.writers);
}

fn address(s: &mut State, at: Millis, present: bool) -> Vec<Action> {
    step(
        s,
        Event::KernelAddress {
            prefix: vip(),
            present,
            usable: present,
        },
        at,
    )
}

/// Route then address 1 ms apart (one `ip -batch`), then the core's own
/// wake-ups up to `until`, with no zebra event: what it asked for.
fn route_then_address(s: &mut State, until: Millis) -> Vec<Action> {
    let mut all = kernel(s, 1_000, true);
    all.extend(address(s, 1_001, true));
    let mut now = 1_001;
    loop {
        let next = all
            .iter()
            .filter_map(|x| match x {
                Action::WakeAt { at } if *at > now => Some(*at),
                _ => None,
            })
            .min();
        match next {
            Some(at) if at <= until => {
                now = at;
                all.extend(step(s, Event::Tick, now));
            }
            _ => return all,
        }
    }
}

#[test]
fn on_10_7_a_route_lost_to_an_address_in_one_batch_is_toggled_at_once() {
    let mut s = ready(Config::repairing(), release(10, 7), TableMode::TableDirect);
    let a = route_then_address(&mut s, 1_050);
    assert_eq!(heals(&a), vec![HealAction::RealmToggle], "{a:?}");
    assert!(!reported(&a), "before any grace: {a:?}");
    // The toggle's echo, its result, zebra learns the route, bgpd sends it.
    let mut all = beat(&mut s, 1_043);
    all.extend(heal_done(&mut s, 1_044, HealAction::RealmToggle, true));
    all.extend(zebra(&mut s, 1_055, true));
    all.extend(bgp(&mut s, 1_160, true));
    all.extend(step(&mut s, Event::Tick, 1_400));
    assert_eq!(state_of(&s), Class::Advertised);
    assert!(heals(&all).is_empty(), "{all:?}");
    assert_eq!(s.vips[&(T, vip())].heal().attempts, 0);
}

#[test]
fn a_route_zebra_kept_or_another_release_gets_no_fast_toggle() {
    // zebra sent the route in time: nothing lost, nothing done.
    let mut s = ready(Config::repairing(), release(10, 7), TableMode::TableDirect);
    let mut a = kernel(&mut s, 1_000, true);
    a.extend(address(&mut s, 1_001, true));
    a.extend(zebra(&mut s, 1_012, true));
    a.extend(step(&mut s, Event::Tick, 1_041));
    assert!(heals(&a).is_empty(), "{a:?}");
    // The same events on 10.3 (its loss is address-then-route, healed only
    // with --heal-addresses after the grace) and on 8.4's import table:
    // nothing at once.
    for (rel, mode) in [
        (release(10, 3), TableMode::TableDirect),
        (release(8, 4), TableMode::ImportTable),
    ] {
        let mut s = ready(Config::repairing(), rel, mode);
        let a = route_then_address(&mut s, 1_050);
        assert!(heals(&a).is_empty(), "{rel} {mode:?}: {a:?}");
    }
    // 10.7, the other order (address first: it works there), or an address
    // long after the route: the graced path.
    let mut s = ready(Config::repairing(), release(10, 7), TableMode::TableDirect);
    let mut a = address_then_route(&mut s);
    a.extend(step(&mut s, Event::Tick, 1_045));
    assert!(heals(&a).is_empty(), "{a:?}");
    let mut s = ready(Config::repairing(), release(10, 7), TableMode::TableDirect);
    let mut a = kernel(&mut s, 1_000, true);
    a.extend(address(&mut s, 1_051, true));
    a.extend(step(&mut s, Event::Tick, 1_095));
    assert!(heals(&a).is_empty(), "{a:?}");
}

/// The VIP's address on `lo` at 999, its route at 1 000 (kube-vip's order).
fn address_then_route(s: &mut State) -> Vec<Action> {
    let mut a = address(s, 999, true);
    a.extend(kernel(s, 1_000, true));
    a
}

fn heal_addresses() -> Config {
    Config {
        heal_addresses: true,
        ..Config::repairing()
    }
}

#[test]
fn on_10_3_a_route_added_under_its_address_is_cycled_at_once_only_when_allowed() {
    let allowed = heal_addresses();
    let mut s = ready(allowed.clone(), release(10, 3), TableMode::TableDirect);
    let a = address_then_route(&mut s);
    assert!(heals(&a).is_empty(), "not before zebra had its time: {a:?}");
    let a = step(&mut s, Event::Tick, 1_040);
    assert_eq!(heals(&a), vec![HealAction::AddressCycle], "{a:?}");
    assert!(!reported(&a));
    // Without --heal-addresses: nothing at once (reported after the grace).
    let mut s = ready(Config::repairing(), release(10, 3), TableMode::TableDirect);
    let mut a = address_then_route(&mut s);
    a.extend(step(&mut s, Event::Tick, 1_040));
    assert!(heals(&a).is_empty(), "{a:?}");
    // The same order on 10.7 works (no loss), and zebra kept it on 10.3:
    // nothing.
    let mut s = ready(allowed.clone(), release(10, 7), TableMode::TableDirect);
    let mut a = address_then_route(&mut s);
    a.extend(step(&mut s, Event::Tick, 1_040));
    assert!(heals(&a).is_empty(), "{a:?}");
    let mut s = ready(allowed, release(10, 3), TableMode::TableDirect);
    let mut a = address_then_route(&mut s);
    a.extend(zebra(&mut s, 1_012, true));
    a.extend(step(&mut s, Event::Tick, 1_040));
    assert!(heals(&a).is_empty(), "{a:?}");
}

#[test]
fn a_fast_heal_that_did_not_work_falls_back_to_the_graced_path() {
    let allowed = heal_addresses();
    let mut s = ready(allowed, release(10, 3), TableMode::TableDirect);
    let mut a = address_then_route(&mut s);
    a.extend(step(&mut s, Event::Tick, 1_040));
    assert_eq!(heals(&a), vec![HealAction::AddressCycle]);
    // The address cycle takes ~230 ms; the grace passes meanwhile: no
    // drift is judged while it is at work.
    let mut during = step(&mut s, Event::Tick, 1_100);
    during.extend(bgp(&mut s, 1_120, false));
    assert!(!reported(&during), "{during:?}");
    // It ran, zebra still lacks the route: a new grace, then the drift and
    // the graced heal (an attempt).
    let mut after = heal_done(&mut s, 1_270, HealAction::AddressCycle, true);
    assert!(!reported(&after), "{after:?}");
    assert!(after.contains(&Action::WakeAt { at: 1_370 }), "{after:?}");
    after.extend(step(&mut s, Event::Tick, 1_370));
    after.extend(bgp(&mut s, 1_390, false));
    assert_eq!(state_of(&s), Class::KernelOnly);
    assert_eq!(heals(&after), vec![HealAction::AddressCycle], "{after:?}");
}

/// The poll asked for at the add finds bgpd not sending yet (it sends
/// ~100 ms after zebra): the grace's end asks for another one, also while
/// the class waits for a longer deadline (bgp's grace, or the startup grace
/// of young sessions), so the VIP is classified by the next poll, not by
/// bgpd's slow refresh.
#[test]
fn a_vip_added_before_bgpd_sent_it_is_polled_again_after_the_grace() {
    // Sessions up for 1 s at the add: the startup grace runs to 9 s.
    let young = |sent| PeerView {
        up_ms: Some(1_000),
        ..peer(sent)
    };
    for peers_age in [None, Some(young as fn(bool) -> PeerView)] {
        let mut s = ready(Config::repairing(), release(10, 7), TableMode::TableDirect);
        let view = |sent| vec![peers_age.map_or_else(|| peer(sent), |f| f(sent))];
        kernel(&mut s, 0, true);
        let a = zebra(&mut s, 10, true);
        assert!(a.contains(&Action::RefreshBgp), "{a:?}");
        // The poll taken at the add: bgpd has not sent the VIP yet.
        step(&mut s, Event::BgpView { peers: view(false) }, 20);
        let a = step(&mut s, Event::Tick, 510);
        assert!(
            a.contains(&Action::RefreshBgp),
            "the grace after the add passed: a fresh poll ({peers_age:?}): {a:?}"
        );
        // Still not sent (bgpd's own timers): read again a grace later.
        step(&mut s, Event::BgpView { peers: view(false) }, 520);
        let a = step(&mut s, Event::Tick, 1_010);
        assert!(
            a.contains(&Action::RefreshBgp),
            "another grace passed: a fresh poll ({peers_age:?}): {a:?}"
        );
        let a = step(&mut s, Event::BgpView { peers: view(true) }, 1_030);
        assert_eq!(state_of(&s), Class::Advertised, "{a:?}");
    }
}

/// `n` VIPs of table 198, 10.0.0.0 up.
fn many(n: u32) -> Vec<Prefix> {
    (0..n)
        .map(|i| Prefix::host(std::net::Ipv4Addr::from(0x0a00_0000 + i).into()))
        .collect()
}

#[test]
fn healthy_vips_carry_no_out_of_line_state() {
    // 5 000 VIPs (more than a chunk of a whole-view walk) through a
    // startup, a bgpd view, heartbeats and ticks: all
    // advertised, none drifted or healed, so none allocated its heal part.
    let ps = many(5_000);
    let mut s = State::new(Config::repairing(), 0);
    let routes = ps
        .iter()
        .map(|p| KernelEntry {
            table: T,
            prefix: *p,
            facts: facts().expect("facts"),
        })
        .collect();
    step(&mut s, Event::KernelSynced { routes }, 0);
    step(
        &mut s,
        Event::ZebraUp {
            release: release(10, 7),
            table_mode: TableMode::TableDirect,
        },
        0,
    );
    step(
        &mut s,
        Event::ZebraSynced {
            table: T,
            prefixes: ps.iter().copied().collect(),
        },
        5,
    );
    let peers = vec![PeerView {
        advertised: ps.iter().copied().collect(),
        ..peer(true)
    }];
    step(&mut s, Event::BgpView { peers }, 120);
    for p in &ps {
        step(
            &mut s,
            Event::KernelReasserted {
                table: T,
                prefix: *p,
            },
            1_000,
        );
    }
    step(&mut s, Event::Tick, 2_000);
    assert_eq!(s.vips.len(), ps.len());
    for (k, v) in &s.vips {
        assert_eq!(v.state, Class::Advertised, "{k:?}");
        assert_eq!(v.reassertions(), 1, "{k:?}");
        assert!(v.cold.is_none(), "{k:?} allocated its heal part: {v:?}");
    }
}

#[test]
fn a_drifting_vip_keeps_its_heal_record_out_of_line() {
    // 8.4 import-table: the kernel has the VIP, zebra never sends it:
    // kernel_only, and a heal is asked for.
    let mut s = ready(half_second(), release(8, 4), TableMode::ImportTable);
    kernel(&mut s, 1_000, true);
    let mut a = bgp(&mut s, 1_600, false);
    a.extend(step(&mut s, Event::Tick, 1_600));
    let v = &s.vips[&(T, vip())];
    assert_eq!(v.state, Class::KernelOnly, "{a:?}");
    assert_eq!(v.drift_since(), Some(1_600));
    assert!(v.cold.is_some());
    let last = v.heal().last_action.expect("a heal was decided");
    assert_eq!(heals(&a), [last], "{a:?}");
}

#[test]
fn a_vip_serialises_as_the_plain_struct() {
    let mut v = Vip::new(7);
    v.set_kernel(facts());
    v.reasserted();
    let plain = serde_json::json!({
        "kernel": {"protocol": 248, "nexthops": 1},
        "zebra": false,
        "zebra_table": null,
        "state": "withdrawn",
        "since": 7,
        "observed": "withdrawn",
        "observed_since": 7,
        "drift_since": null,
        "reassertions": 1,
        "heal": {"attempts": 0, "last_action": null, "last_result": null},
    });
    assert_eq!(serde_json::to_value(&v).expect("json"), plain);
    let back: Vip = serde_json::from_value(plain).expect("from json");
    assert_eq!(back.kernel(), facts());
    assert_eq!(back.reassertions(), 1);
    assert!(back.cold.is_none(), "defaults need no heal part");
    let drifted = serde_json::json!({
        "kernel": null, "zebra": true, "zebra_table": true, "state": "zebra_stale",
        "since": 1, "observed": "zebra_stale", "observed_since": 1, "drift_since": 1,
        "reassertions": 0,
        "heal": {"attempts": 2, "last_action": "realm_toggle", "last_result": "ok"},
    });
    let v: Vip = serde_json::from_value(drifted.clone()).expect("from json");
    assert_eq!(v.heal().attempts, 2);
    assert_eq!(serde_json::to_value(&v).expect("json"), drifted);
}

#[test]
fn a_resync_keeps_the_last_route_of_a_key_and_updates_known_vips() {
    let mut s = State::new(Config::repairing(), 0);
    let ps = many(3);
    kernel(&mut s, 0, true);
    let entry = |p: Prefix, nexthops| KernelEntry {
        table: T,
        prefix: p,
        facts: KernelFacts {
            protocol: 248,
            nexthops,
        },
    };
    // Unsorted, a key twice (the later wins), the known VIP absent.
    let routes = vec![
        entry(ps[2], 1),
        entry(ps[0], 1),
        entry(ps[2], 4),
        entry(ps[1], 2),
    ];
    step(&mut s, Event::KernelSynced { routes }, 10);
    let nexthops = |p: &Prefix| s.vips[&(T, *p)].kernel().map(|k| k.nexthops);
    assert_eq!(nexthops(&ps[0]), Some(1));
    assert_eq!(nexthops(&ps[1]), Some(2));
    assert_eq!(nexthops(&ps[2]), Some(4));
    assert_eq!(nexthops(&vip()), None, "gone from the dump");
    assert_eq!(s.vips.len(), 4);
    // No new key: the known VIPs are updated in place.
    let routes = vec![entry(ps[1], 3), entry(ps[0], 1)];
    step(&mut s, Event::KernelSynced { routes }, 20);
    let nexthops = |p: &Prefix| s.vips[&(T, *p)].kernel().map(|k| k.nexthops);
    assert_eq!(nexthops(&ps[0]), Some(1));
    assert_eq!(nexthops(&ps[1]), Some(3));
    assert_eq!(nexthops(&ps[2]), None);
    assert_eq!(s.vips.len(), 4);
}

#[test]
fn packed_extension_equals_inserting_one_by_one() {
    use super::merge::extend_packed;
    // Around the batch sizes, into empty and interleaved non-empty maps.
    for (existing, count) in [(0, 0), (0, 1), (0, 5_000), (3, 1_023), (100, 20_000)] {
        let old: BTreeMap<u32, u32> = (0..existing).map(|i| (i * 7, i)).collect();
        let new = (0..count).map(|i| i * 7 + 3).map(|k| (k, k + 1));
        let mut want = old.clone();
        want.extend(new.clone());
        let mut got = old;
        extend_packed(&mut got, new, count as usize);
        assert_eq!(got, want, "{existing} + {count}");
    }
}

#[test]
fn a_vip_stays_small() {
    // The hot part every VIP carries (the bench counts the map's bytes).
    assert!(
        std::mem::size_of::<Vip>() <= 64,
        "{}",
        std::mem::size_of::<Vip>()
    );
}

/// The VIP's last heal result, by name.
fn last_result(s: &State) -> Option<&'static str> {
    s.vips[&(T, vip())]
        .heal()
        .last_result
        .as_ref()
        .map(HealResult::name)
}

/// The VIP's address appears usable (`Some(true)`), unusable (`Some(false)`:
/// IPv6 `tentative` or `dadfailed`) or goes (`None`), at `at`.
fn address_flags(s: &mut State, at: Millis, usable: Option<bool>) -> Vec<Action> {
    step(
        s,
        Event::KernelAddress {
            prefix: vip(),
            present: usable.is_some(),
            usable: usable.unwrap_or(false),
        },
        at,
    )
}

/// The core with `require_address` on, as the daemon runs by default.
fn address_required() -> Config {
    Config {
        require_address: true,
        ..half_second()
    }
}

/// Ticks every 100 ms from `from` to `to`, with a bgpd view each time
/// (sent or not): the core's wake-ups and polls, all answered.
fn run_polled(s: &mut State, from: Millis, to: Millis, sent: bool) -> Vec<Action> {
    let mut all = Vec::new();
    for t in (from..=to).step_by(100) {
        all.extend(step(s, Event::Tick, t));
        all.extend(bgp(s, t + 1, sent));
    }
    all
}

#[test]
fn advertised_without_its_address_is_a_blackhole_never_healed() {
    for rel in [release(8, 4), release(10, 7)] {
        let mode = if rel < release(10, 0) {
            TableMode::ImportTable
        } else {
            TableMode::TableDirect
        };
        let mut s = ready(address_required(), rel, mode);
        address_flags(&mut s, 0, Some(true));
        converge(&mut s, 100);
        run_polled(&mut s, 200, 1_000, true);
        assert_eq!(state_of(&s), Class::Advertised, "{rel}");
        // A restarted kube-vip with its backend unhealthy: the address goes,
        // the route stays and bgpd still sends it.
        let mut all = address_flags(&mut s, 2_000, None);
        all.extend(run_polled(&mut s, 2_000, 4_000, true));
        assert_eq!(state_of(&s), Class::Blackhole, "{rel}: {all:?}");
        assert!(Class::Blackhole.is_drift());
        assert!(
            heals(&all).is_empty(),
            "{rel}: no heal for a blackhole: {all:?}"
        );
        // The address back: advertised again, the drift ended.
        let mut back = address_flags(&mut s, 5_000, Some(true));
        back.extend(run_polled(&mut s, 5_000, 6_000, true));
        assert_eq!(state_of(&s), Class::Advertised, "{rel}: {back:?}");
        assert!(back.iter().any(|a| matches!(
            a,
            Action::StateChanged {
                from: Class::Blackhole,
                to: Class::Advertised,
                drift_ms: Some(_),
                ..
            }
        )));
    }
}

#[test]
fn a_route_left_without_its_address_is_withdrawn_and_no_heal_re_advertises_it() {
    // Measured on 10.7: the address removed, the route left; zebra drops
    // the import. Before, repair mode toggled the realm and rebuilt the
    // black hole. Now: withdrawn (the node cannot serve it), no action,
    // neither graced nor fast.
    let mut s = ready(address_required(), release(10, 7), TableMode::TableDirect);
    address_flags(&mut s, 0, Some(true));
    converge(&mut s, 100);
    run_polled(&mut s, 200, 1_000, true);
    let mut all = address_flags(&mut s, 2_000, None);
    all.extend(zebra(&mut s, 2_012, false));
    all.extend(run_polled(&mut s, 2_100, 10_000, false));
    assert_eq!(state_of(&s), Class::Withdrawn, "{all:?}");
    assert!(heals(&all).is_empty(), "{all:?}");
    // The same with the address not required: kernel_only, healed.
    let mut s = ready(half_second(), release(10, 7), TableMode::TableDirect);
    address_flags(&mut s, 0, Some(true));
    converge(&mut s, 100);
    run_polled(&mut s, 200, 1_000, true);
    let mut all = address_flags(&mut s, 2_000, None);
    all.extend(zebra(&mut s, 2_012, false));
    all.extend(run_polled(&mut s, 2_100, 4_000, false));
    assert_eq!(
        heals(&all).first(),
        Some(&HealAction::RealmToggle),
        "{all:?}"
    );
}

#[test]
fn an_unusable_address_is_no_address() {
    // IPv6's dadfailed (or tentative): present, unusable.
    let mut s = ready(address_required(), release(10, 7), TableMode::TableDirect);
    address_flags(&mut s, 0, Some(false));
    converge(&mut s, 100);
    let all = run_polled(&mut s, 200, 2_000, true);
    assert_eq!(state_of(&s), Class::Blackhole, "{all:?}");
    assert!(s.addresses.contains(&vip()) && !s.address_usable(&vip()));
    // Duplicate detection done: usable.
    address_flags(&mut s, 3_000, Some(true));
    run_polled(&mut s, 3_000, 4_000, true);
    assert_eq!(state_of(&s), Class::Advertised);
    assert!(s.unusable.is_empty());
}

#[test]
fn a_writer_that_stops_beating_orphans_its_advertised_vip() {
    let mut s = ready(half_second(), release(10, 7), TableMode::TableDirect);
    converge(&mut s, 100);
    let key = (T, vip());
    // One beat a second: the cadence is learned after three beats.
    for t in [1_000, 2_000] {
        beat(&mut s, t);
        run_polled(&mut s, t, t + 900, true);
        assert_eq!(
            s.writers[&key].state(&s.config, t + 900),
            WriterState::Unknown,
            "two beats are no cadence"
        );
    }
    let mut all = Vec::new();
    for t in (3_000..=6_000).step_by(1_000) {
        all.extend(beat(&mut s, t));
        all.extend(run_polled(&mut s, t, t + 900, true));
    }
    assert_eq!(s.writers[&key].cadence(&s.config), Some(1_000));
    assert_eq!(state_of(&s), Class::Advertised, "{all:?}");
    // SIGKILL after the beat at 6 000: silent from 9 001 (three ticks).
    let all = run_polled(&mut s, 7_000, 12_000, true);
    assert_eq!(
        s.writers[&key].state(&s.config, 12_000),
        WriterState::Silent
    );
    assert_eq!(state_of(&s), Class::Orphaned, "{all:?}");
    assert!(all.iter().any(|a| matches!(a, Action::WakeAt { at: 9_001 })
        || matches!(
            a,
            Action::StateChanged {
                to: Class::Orphaned,
                ..
            }
        )));
    assert!(heals(&all).is_empty(), "orphaned is reported, not healed");
    // The writer is back (a restart): its first beat ends the orphan; the
    // gap is no tick: its cadence is learned anew, the old one its tick.
    let mut back = beat(&mut s, 13_000);
    back.extend(run_polled(&mut s, 13_000, 14_000, true));
    assert_eq!(state_of(&s), Class::Advertised, "{back:?}");
    assert_eq!(s.writers[&key].cadence(&s.config), None, "relearnt");
    assert_eq!(s.writer_tick(&key), 1_000, "the old cadence meanwhile");
    // Killed again before a new cadence is learnt: silent three of its old
    // ticks after its return (16 001), not unknown.
    let again = run_polled(&mut s, 14_100, 17_000, true);
    assert_eq!(
        s.writers[&key].state(&s.config, 17_000),
        WriterState::Silent
    );
    assert_eq!(state_of(&s), Class::Orphaned, "{again:?}");
    // A route deleted by its writer: one withdrawal, the cadence forgotten;
    // a writer that withdrew is not silent (no beat since).
    kernel(&mut s, 18_000, false);
    assert_eq!(s.writers[&key].cadence(&s.config), None);
    assert_eq!(s.writers[&key].flaps(&s.config, 18_000), 1);
    assert_eq!(
        s.writers[&key].state(&s.config, 30_000),
        WriterState::Unknown
    );
}

#[test]
fn a_writer_never_seen_beating_is_unknown_and_never_orphans() {
    // An older kube-vip, a static route: added once, never re-asserted.
    let mut s = ready(half_second(), release(10, 7), TableMode::TableDirect);
    converge(&mut s, 100);
    run_polled(&mut s, 200, 60_000, true);
    assert_eq!(state_of(&s), Class::Advertised);
    assert!(s.writers.is_empty(), "an add is no beat");
    // Configured, the cadence is not learned but given: silent 3 ticks
    // after its one beat.
    let mut s = ready(
        Config {
            writer_interval_ms: Some(5_000),
            ..half_second()
        },
        release(10, 7),
        TableMode::TableDirect,
    );
    converge(&mut s, 100);
    beat(&mut s, 1_000);
    run_polled(&mut s, 200, 16_000, true);
    assert_eq!(state_of(&s), Class::Advertised);
    run_polled(&mut s, 16_100, 17_000, true);
    assert_eq!(state_of(&s), Class::Orphaned);
}

#[test]
fn the_drain_wins_over_a_blackhole_and_an_orphan() {
    let mut s = ready(address_required(), release(10, 7), TableMode::TableDirect);
    converge(&mut s, 100);
    run_polled(&mut s, 200, 1_000, true);
    assert_eq!(state_of(&s), Class::Blackhole);
    drain(&mut s, 2_000, true);
    run_polled(&mut s, 2_000, 3_000, false);
    assert_eq!(state_of(&s), Class::Drained);
}

#[test]
fn a_writer_that_withdraws_again_and_again_flaps_until_the_window_passes() {
    // A flaky backend: kube-vip (1 s ticks, no hysteresis) withdraws on one
    // failed check and re-adds on one success, every other tick.
    let mut s = ready(half_second(), release(10, 7), TableMode::TableDirect);
    converge(&mut s, 100);
    let key = (T, vip());
    let mut all = Vec::new();
    for round in 0..4u64 {
        let t = 1_000 + round * 4_000;
        all.extend(beat(&mut s, t));
        all.extend(run_polled(&mut s, t, t + 900, true));
        // Unhealthy: the route goes (zebra follows), then comes back.
        all.extend(kernel(&mut s, t + 1_000, false));
        all.extend(zebra(&mut s, t + 1_010, false));
        all.extend(run_polled(&mut s, t + 1_100, t + 1_900, false));
        all.extend(converge(&mut s, t + 2_000));
        all.extend(run_polled(&mut s, t + 2_100, t + 3_900, true));
        if round < 3 {
            assert_ne!(state_of(&s), Class::Flapping, "round {round}: {all:?}");
        }
    }
    // The fourth withdrawal is more than 3 in the window.
    assert_eq!(s.writers[&key].flaps(&s.config, 17_000), 4);
    assert_eq!(state_of(&s), Class::Flapping, "{all:?}");
    assert!(Class::Flapping.is_drift());
    assert!(heals(&all).is_empty(), "flapping is reported, not healed");
    // Quiet from here: once the first withdrawal leaves the 300 s window,
    // the VIP is what its views say (its writer beats on).
    let mut quiet = Vec::new();
    for t in (18_000..=302_500).step_by(1_000) {
        quiet.extend(beat(&mut s, t));
        quiet.extend(step(&mut s, Event::Tick, t + 500));
        quiet.extend(bgp(&mut s, t + 501, true));
    }
    assert_eq!(state_of(&s), Class::Advertised, "{quiet:?}");
}

/// A probe's verdict for the VIP, at `at`.
fn probe(s: &mut State, at: Millis, probe: ProbeKind, state: BackendState) -> Vec<Action> {
    step(
        s,
        Event::Backend {
            table: T,
            prefix: vip(),
            probe,
            state,
        },
        at,
    )
}

#[test]
fn a_backend_down_under_an_advertised_vip_is_a_blackhole_and_never_healed_back() {
    let mut s = ready(half_second(), release(10, 7), TableMode::TableDirect);
    probe(&mut s, 0, ProbeKind::Health, BackendState::Up);
    converge(&mut s, 100);
    run_polled(&mut s, 200, 1_000, true);
    assert_eq!(state_of(&s), Class::Advertised);
    // The writer's own check passes (a looser endpoint) while ours fails.
    let mut all = probe(&mut s, 2_000, ProbeKind::Health, BackendState::Down);
    all.extend(run_polled(&mut s, 2_000, 3_000, true));
    assert_eq!(state_of(&s), Class::Blackhole, "{all:?}");
    // zebra loses the route meanwhile: kernel_only would heal it back into
    // the black hole; with the backend down it is withdrawn, no heal.
    all.extend(zebra(&mut s, 3_100, false));
    all.extend(run_polled(&mut s, 3_200, 6_000, false));
    assert_eq!(state_of(&s), Class::Withdrawn, "{all:?}");
    assert!(heals(&all).is_empty(), "{all:?}");
    // Health back: the drift heals as before.
    let mut back = probe(&mut s, 7_000, ProbeKind::Health, BackendState::Up);
    back.extend(run_polled(&mut s, 7_000, 9_000, false));
    assert_eq!(
        heals(&back).first(),
        Some(&HealAction::RealmToggle),
        "{back:?}"
    );
}

#[test]
fn ready_failing_while_health_passes_is_unready() {
    let mut s = ready(half_second(), release(10, 7), TableMode::TableDirect);
    probe(&mut s, 0, ProbeKind::Health, BackendState::Up);
    probe(&mut s, 0, ProbeKind::Ready, BackendState::Up);
    converge(&mut s, 100);
    run_polled(&mut s, 200, 1_000, true);
    let mut all = probe(&mut s, 2_000, ProbeKind::Ready, BackendState::Down);
    all.extend(run_polled(&mut s, 2_000, 3_000, true));
    assert_eq!(state_of(&s), Class::Unready, "{all:?}");
    assert!(heals(&all).is_empty());
    // Health fails too: the backend is down, a blackhole.
    probe(&mut s, 4_000, ProbeKind::Health, BackendState::Down);
    run_polled(&mut s, 4_000, 5_000, true);
    assert_eq!(state_of(&s), Class::Blackhole);
    // Both back: advertised.
    probe(&mut s, 6_000, ProbeKind::Health, BackendState::Up);
    probe(&mut s, 6_000, ProbeKind::Ready, BackendState::Up);
    run_polled(&mut s, 6_000, 7_000, true);
    assert_eq!(state_of(&s), Class::Advertised);
}

#[test]
fn a_route_missing_under_a_healthy_backend_is_capacity_lost_after_two_ticks() {
    // Another instance's vip_cleanroutingtable deleted the route; the
    // writer (1 s ticks, learned) puts it back only on its next tick.
    let mut s = ready(half_second(), release(10, 7), TableMode::TableDirect);
    probe(&mut s, 0, ProbeKind::Health, BackendState::Up);
    converge(&mut s, 100);
    for t in [1_000, 2_000, 3_000] {
        beat(&mut s, t);
        run_polled(&mut s, t, t + 900, true);
    }
    let mut all = kernel(&mut s, 4_000, false);
    all.extend(zebra(&mut s, 4_010, false));
    all.extend(run_polled(&mut s, 4_100, 5_900, false));
    assert_eq!(state_of(&s), Class::Withdrawn, "within two ticks: {all:?}");
    all.extend(run_polled(&mut s, 6_000, 8_000, false));
    assert_eq!(state_of(&s), Class::CapacityLost, "{all:?}");
    assert!(heals(&all).is_empty());
    // The writer puts it back: advertised.
    converge(&mut s, 9_000);
    run_polled(&mut s, 9_100, 10_000, true);
    assert_eq!(state_of(&s), Class::Advertised);
    // A backend down keeps an absent VIP withdrawn, however long.
    let mut s = ready(half_second(), release(10, 7), TableMode::TableDirect);
    probe(&mut s, 0, ProbeKind::Health, BackendState::Down);
    run_polled(&mut s, 0, 30_000, false);
    assert_ne!(state_of(&s), Class::CapacityLost);
}

/// bgpd's configuration as `ribbridge render` writes it for table 198,
/// with ribbridge's withdrawal of the VIP (`withdrawn`) or without.
fn intent_of(withdrawn: bool) -> crate::model::intent::Intent {
    let mut c = String::from(
        "router bgp 64512\n address-family ipv4 unicast\n  redistribute table-direct 198 \
         route-map BGP-VIP-ROUTES-V4\n exit-address-family\nexit\n!\n\
         route-map BGP-VIP-ROUTES-V4 permit 10\nexit\n!\n",
    );
    if withdrawn {
        c.push_str(
            "ip prefix-list ribbridge-withdraw-v4 seq 5 permit 192.0.2.10/32\n\
             route-map BGP-VIP-ROUTES-V4 deny 1\n description ribbridge-withdraw\n \
             match ip address prefix-list ribbridge-withdraw-v4\nexit\n!\n",
        );
    }
    crate::model::intent::parse(&c, None)
}

fn config_read(s: &mut State, at: Millis, withdrawn: bool) -> Vec<Action> {
    step(
        s,
        Event::Intent {
            intent: intent_of(withdrawn),
        },
        at,
    )
}

fn health(s: &mut State, at: Millis, up: bool) -> Vec<Action> {
    step(
        s,
        Event::Backend {
            table: T,
            prefix: vip(),
            probe: ProbeKind::Health,
            state: if up {
                BackendState::Up
            } else {
                BackendState::Down
            },
        },
        at,
    )
}

fn withdrew(s: &mut State, at: Millis, out: bool) -> Vec<Action> {
    step(
        s,
        Event::Withdrew {
            table: T,
            prefix: vip(),
            out,
            ok: true,
        },
        at,
    )
}

/// The asks of a withdrawal among `actions`: (out, why, first).
fn withdrawals(actions: &[Action]) -> Vec<(bool, WithdrawWhy, bool)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Withdraw {
                out, why, first, ..
            } => Some((*out, *why, *first)),
            _ => None,
        })
        .collect()
}

/// A `withdraw = true` VIP in repair mode on 10.7, advertised with its
/// address, its writer beating every second from 1 000 to 3 000, its
/// backend up.
fn withdrawable(mode: Mode) -> State {
    let config = Config {
        mode,
        vips: [vip()].into(),
        table: T,
        withdraw: [vip()].into(),
        writer_interval_ms: Some(1_000),
        ..address_required()
    };
    let mut s = ready(config, release(10, 7), TableMode::TableDirect);
    config_read(&mut s, 0, false);
    address(&mut s, 0, true);
    health(&mut s, 0, true);
    converge(&mut s, 10);
    for t in [1_000, 2_000, 3_000] {
        beat(&mut s, t);
    }
    assert_eq!(state_of(&s), Class::Advertised);
    s
}

/// [`withdrawable`]'s backend down at 3 500: the VIP asked out when its
/// writer goes silent (three ticks after its last beat at 3 000).
fn asked_out_at_the_writers_silence(s: &mut State) {
    health(s, 3_500, false);
    let a = step(s, Event::Tick, 6_001);
    assert_eq!(withdrawals(&a), [(true, WithdrawWhy::WriterSilent, true)]);
}

#[test]
fn a_withdraw_vip_goes_out_only_once_its_writer_is_silent_and_back_when_its_backend_is_up() {
    let mut s = withdrawable(Mode::Repair);
    // The backend fails under a live writer: the writer decides; the core
    // looks again when the writer would go silent (3 ticks after 3 000).
    let mut a = health(&mut s, 3_500, false);
    for t in [4_000, 5_000, 6_000] {
        a.extend(step(&mut s, Event::Tick, t));
    }
    assert!(
        withdrawals(&a).is_empty(),
        "never against a live writer: {a:?}"
    );
    assert!(
        a.contains(&Action::WakeAt { at: 6_001 }),
        "the writer's silence is a deadline: {a:?}"
    );
    let a = step(&mut s, Event::Tick, 6_001);
    assert_eq!(
        withdrawals(&a),
        [(true, WithdrawWhy::WriterSilent, true)],
        "{a:?}"
    );
    // Asked once while in flight, confirmed by bgpd's configuration.
    assert!(withdrawals(&step(&mut s, Event::Tick, 6_500)).is_empty());
    let a = withdrew(&mut s, 6_600, true);
    assert!(a.contains(&Action::RefreshBgp), "{a:?}");
    assert!(withdrawals(&config_read(&mut s, 7_000, true)).is_empty());
    bgp(&mut s, 7_100, false);
    assert_eq!(
        state_of(&s),
        Class::Withdrawn,
        "withdrawn on purpose: exit 0"
    );
    // A reload rewrote bgpd's configuration: applied again (a retry, not
    // a new episode: no second log line).
    let a = config_read(&mut s, 9_000, false);
    assert_eq!(
        withdrawals(&a),
        [(true, WithdrawWhy::WriterSilent, false)],
        "{a:?}"
    );
    withdrew(&mut s, 9_100, true);
    config_read(&mut s, 10_000, true);
    // The backend is up again: put back, and the episode ends once bgpd's
    // configuration lacks it. Meanwhile the VIP is `withdrawn`, not the
    // operator's `filtered`.
    let a = health(&mut s, 12_000, true);
    assert_eq!(
        withdrawals(&a),
        [(false, WithdrawWhy::BackendUp, true)],
        "{a:?}"
    );
    bgp(&mut s, 12_100, false);
    assert_eq!(state_of(&s), Class::Withdrawn);
    withdrew(&mut s, 12_200, false);
    config_read(&mut s, 13_000, false);
    // bgpd sends it again after its route-map delay (5 s) and coalescing:
    // its view is read then, and the episode ends on it.
    let due = 13_000 + 5_000 + s.config.bgp_grace_ms;
    let a = step(&mut s, Event::Tick, due);
    assert!(a.contains(&Action::RefreshBgp), "{a:?}");
    assert!(!s.withdrawals.is_empty());
    bgp(&mut s, due + 100, true);
    assert!(s.withdrawals.is_empty(), "{:?}", s.withdrawals);
}

#[test]
fn a_withdrawn_vip_is_put_back_when_its_writer_re_asserts_though_its_backend_is_still_down() {
    let mut s = withdrawable(Mode::Repair);
    asked_out_at_the_writers_silence(&mut s);
    withdrew(&mut s, 6_100, true);
    config_read(&mut s, 7_000, true);
    bgp(&mut s, 7_100, false);
    assert_eq!(state_of(&s), Class::Withdrawn);
    // kube-vip is back and beats again, its backend still failing
    // ribbridge's probe: the live writer decides, the VIP goes back.
    let a = beat(&mut s, 8_000);
    assert_eq!(
        withdrawals(&a),
        [(false, WithdrawWhy::WriterBack, true)],
        "{a:?}"
    );
    // Not taken out again while the writer beats, backend down or not.
    withdrew(&mut s, 8_100, false);
    config_read(&mut s, 9_000, false);
    let mut all = Vec::new();
    for t in (9_000..=15_000).step_by(1_000) {
        all.extend(beat(&mut s, t));
        all.extend(step(&mut s, Event::Tick, t + 500));
    }
    assert!(withdrawals(&all).is_empty(), "{all:?}");
}

#[test]
fn a_withdraw_vip_is_never_taken_out_in_observe_mode_nor_beside_a_live_writer() {
    let mut s = withdrawable(Mode::Observe);
    let mut all = health(&mut s, 3_500, false);
    for t in (4_000..=20_000).step_by(1_000) {
        all.extend(step(&mut s, Event::Tick, t));
    }
    assert!(
        withdrawals(&all).is_empty(),
        "observe reports only: {all:?}"
    );
    // Repair, the backend down, the writer beating on: never.
    let mut s = withdrawable(Mode::Repair);
    let mut all = health(&mut s, 3_500, false);
    for t in (4_000..=20_000).step_by(1_000) {
        all.extend(beat(&mut s, t));
        all.extend(step(&mut s, Event::Tick, t + 500));
    }
    assert!(withdrawals(&all).is_empty(), "{all:?}");
}

#[test]
fn the_address_gone_with_the_backend_down_withdraws_without_waiting_for_the_writer() {
    let config = Config {
        vips: [vip()].into(),
        table: T,
        withdraw: [vip()].into(),
        ..address_required()
    };
    let mut s = ready(config, release(10, 7), TableMode::TableDirect);
    config_read(&mut s, 0, false);
    address(&mut s, 0, true);
    converge(&mut s, 10);
    // No writer beats (unknown): a kube-vip restarted with its backend
    // down removed the address and left the route.
    health(&mut s, 1_000, false);
    let a = address(&mut s, 1_500, false);
    assert_eq!(
        withdrawals(&a),
        [(true, WithdrawWhy::AddressUnusable, true)],
        "{a:?}"
    );
}

#[test]
fn a_withdrawal_found_in_bgpd_is_kept_until_its_backend_answers_or_put_back_if_not_configured() {
    // A restarted ribbridge: bgpd holds its withdrawal, the probe has not
    // answered yet, the writer is silent.
    let mut s = withdrawable(Mode::Repair);
    s.backends.clear();
    let a = config_read(&mut s, 7_000, true);
    assert!(withdrawals(&a).is_empty(), "{a:?}");
    assert!(s.withdrawals[&(T, vip())].out);
    // The same with the setting gone: put back at once.
    let config = Config {
        withdraw: Default::default(),
        ..s.config.clone()
    };
    let mut s = ready(config, release(10, 7), TableMode::TableDirect);
    let a = config_read(&mut s, 0, true);
    assert_eq!(
        withdrawals(&a),
        [(false, WithdrawWhy::NotConfigured, true)],
        "{a:?}"
    );
}

#[test]
fn a_refused_withdrawal_is_asked_again_and_logged_with_the_first_accepted() {
    let mut s = withdrawable(Mode::Repair);
    asked_out_at_the_writers_silence(&mut s);
    step(
        &mut s,
        Event::Withdrew {
            table: T,
            prefix: vip(),
            out: true,
            ok: false,
        },
        6_100,
    );
    assert!(withdrawals(&step(&mut s, Event::Tick, 7_000)).is_empty());
    let a = step(&mut s, Event::Tick, 6_100 + WITHDRAW_RETRY_MS);
    assert_eq!(
        withdrawals(&a),
        [(true, WithdrawWhy::WriterSilent, true)],
        "asked again after the retry, still the episode's first accepted: {a:?}"
    );
}

/// Another route of table 198, added (`true`) or sent by zebra.
fn other(s: &mut State, at: Millis, kernel: bool) -> Vec<Action> {
    let prefix: Prefix = "10.0.0.1/32".parse().expect("prefix");
    let event = if kernel {
        Event::KernelRoute {
            table: T,
            prefix,
            route: facts(),
        }
    } else {
        Event::ZebraRoute {
            table: T,
            prefix,
            present: true,
        }
    };
    step(s, event, at)
}

/// A ready 10.7 node in table-direct mode (zebra sends table 198 itself).
fn table_direct_10_7() -> State {
    ready(half_second(), release(10, 7), TableMode::TableDirect)
}

/// The VIP, added at 1 000 and never sent by zebra, is `kernel_only` once
/// the plain grace and a poll have passed (by 1 700).
fn lost_at_the_plain_grace(mut s: State) {
    run_polled(&mut s, 1_100, 1_700, false);
    assert_eq!(state_of(&s), Class::KernelOnly);
}

#[test]
fn a_route_zebra_has_not_reached_in_a_burst_is_its_backlog_not_kernel_only() {
    // A burst: another route added just before the VIP's; zebra, still
    // working through the burst, sends it at 1 500 and the VIP's at 3 000,
    // 2 s after the kernel added it.
    let mut s = table_direct_10_7();
    other(&mut s, 990, true);
    let mut all = kernel(&mut s, 1_000, true);
    all.extend(other(&mut s, 1_500, false));
    all.extend(run_polled(&mut s, 1_100, 2_900, false));
    all.extend(zebra(&mut s, 3_000, true));
    all.extend(run_polled(&mut s, 3_100, 3_500, true));
    // (The other route, which no peer is sent, is a drift of its own.)
    let ours: Vec<&Action> = all
        .iter()
        .filter(|a| match a {
            Action::StateChanged { prefix, .. } | Action::Heal { prefix, .. } => *prefix == vip(),
            _ => false,
        })
        .collect();
    assert!(
        !ours.iter().any(|a| matches!(
            a,
            Action::StateChanged {
                to: Class::KernelOnly,
                ..
            } | Action::Heal { .. }
        )),
        "zebra's backlog taken for a drift: {ours:?}"
    );
    assert_eq!(state_of(&s), Class::Advertised);

    // zebra busy before the VIP's add and silent since (frr#22654's route
    // dropped while queued): lost, judged at the plain grace.
    let mut s = table_direct_10_7();
    other(&mut s, 900, true);
    other(&mut s, 990, false);
    kernel(&mut s, 1_000, true);
    lost_at_the_plain_grace(s);

    // zebra past the VIP (it sent a route the kernel changed after the
    // VIP's add): the VIP is lost, judged at the plain grace.
    let mut s = table_direct_10_7();
    kernel(&mut s, 1_000, true);
    other(&mut s, 1_010, true);
    other(&mut s, 1_020, false);
    lost_at_the_plain_grace(s);

    // zebra quiet for longer than its longest pause (10 s): judged then.
    let mut s = table_direct_10_7();
    other(&mut s, 990, true);
    kernel(&mut s, 1_000, true);
    other(&mut s, 1_500, false);
    run_polled(&mut s, 1_100, 11_400, false);
    assert_ne!(state_of(&s), Class::KernelOnly, "zebra sent within 10 s");
    run_polled(&mut s, 11_500, 12_000, false);
    assert_eq!(state_of(&s), Class::KernelOnly, "zebra quiet since 1 500");
}
