//! The core with bgpd's configuration as a view: what the policy denies is
//! `filtered`, a table its family does not redistribute is `unconfigured`,
//! neither is ever healed; a permitted VIP bgpd does not send still heals;
//! a configuration change waits for bgpd's route-map delay timer; the
//! ceiling paces a mass drift; discovered VIPs are forgotten.

use super::*;
use crate::model::intent::Intent;
use crate::model::{PeerView, Prefix, PrefixSet, Release, TableId, TableMode};

const T: TableId = 198;

/// bgpd's running configuration as the lab renders it on 10.7, with a
/// prefix-list that permits 192.0.2.10/32 only.
const CONFIG: &str = "frr version 10.7.1\nrouter bgp 64512\n no bgp ebgp-requires-policy\n \
neighbor 198.18.1.1 remote-as 64513\n \
address-family ipv4 unicast\n  redistribute table-direct 198 route-map KUBE-VIP-ROUTES-V4\n  \
neighbor 198.18.1.1 activate\n exit-address-family\nexit\n!\n\
ip prefix-list KUBE-VIP-PREFIXES-V4 seq 10 permit 192.0.2.10/32\n!\n\
route-map KUBE-VIP-ROUTES-V4 permit 10\n match ip address prefix-list KUBE-VIP-PREFIXES-V4\nexit\n!\n\
route-map KUBE-VIP-ROUTES-V4 deny 20\nexit\n";

fn p(s: &str) -> Prefix {
    s.parse().expect("prefix")
}

fn intent(config: &str) -> Intent {
    crate::model::intent::parse(config, None)
}

fn peer(sent: &[Prefix]) -> PeerView {
    PeerView {
        peer: "198.18.1.1".into(),
        established: true,
        advertised: sent.iter().copied().collect(),
        up_ms: None,
        families: crate::model::Families::both(),
    }
}

/// Ready on 10.7 with `config` read, no route anywhere.
fn ready(config: Config, bgpd: &str) -> State {
    let mut s = State::new(config, 0);
    step(&mut s, Event::KernelSynced { routes: vec![] }, 0);
    let (release, table_mode) = (Release::new(10, 7), TableMode::TableDirect);
    step(
        &mut s,
        Event::ZebraUp {
            release,
            table_mode,
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
    step(
        &mut s,
        Event::Intent {
            intent: intent(bgpd),
        },
        0,
    );
    step(
        &mut s,
        Event::BgpView {
            peers: vec![peer(&[])],
        },
        0,
    );
    assert!(s.ready());
    s
}

/// The route in the kernel and in zebra at `at`.
fn add(s: &mut State, at: Millis, prefix: Prefix) -> Vec<Action> {
    let mut out = step(
        s,
        Event::KernelRoute {
            table: T,
            prefix,
            route: Some(KernelFacts {
                protocol: 248,
                nexthops: 1,
            }),
        },
        at,
    );
    out.extend(step(
        s,
        Event::ZebraRoute {
            table: T,
            prefix,
            present: true,
        },
        at + 10,
    ));
    out
}

/// bgpd's view (sending `sent`) every 100 ms from `from` to `to`, with
/// the core's wake-ups in between; every action.
fn run(s: &mut State, from: Millis, to: Millis, sent: &[Prefix]) -> Vec<Action> {
    let mut out = Vec::new();
    let mut t = from;
    while t <= to {
        out.extend(step(s, Event::Tick, t));
        out.extend(step(
            s,
            Event::BgpView {
                peers: vec![peer(sent)],
            },
            t,
        ));
        t += 100;
    }
    out
}

/// As [`run`] with bgpd sending nothing, every heal asked answered as
/// done at once (without effect on bgpd).
fn run_healed(s: &mut State, from: Millis, to: Millis) -> Vec<Action> {
    let mut out = Vec::new();
    let mut t = from;
    while t <= to {
        let mut asked = run(s, t, t, &[]);
        let done: Vec<Event> = asked
            .iter()
            .filter_map(|a| match a {
                Action::Heal {
                    table,
                    prefix,
                    action,
                } => Some(Event::HealDone {
                    table: *table,
                    prefix: *prefix,
                    action: *action,
                    ok: true,
                    detail: String::new(),
                }),
                _ => None,
            })
            .collect();
        for e in done {
            asked.extend(step(s, e, t + 1));
        }
        out.extend(asked);
        t += 100;
    }
    out
}

fn heals(actions: &[Action]) -> usize {
    actions
        .iter()
        .filter(|a| matches!(a, Action::Heal { .. }))
        .count()
}

fn drifts(actions: &[Action]) -> usize {
    actions
        .iter()
        .filter(|a| matches!(a, Action::StateChanged { to, .. } if to.is_drift()))
        .count()
}

fn state(s: &State, prefix: Prefix) -> Class {
    s.vips[&(T, prefix)].state
}

#[test]
fn a_prefix_the_policy_denies_is_filtered_and_never_healed() {
    let mut s = ready(Config::repairing(), CONFIG);
    let denied = p("192.0.2.11/32");
    let mut all = add(&mut s, 1_000, denied);
    all.extend(run(&mut s, 1_000, 60_000, &[]));
    assert_eq!(state(&s, denied), Class::Filtered);
    assert_eq!((heals(&all), drifts(&all)), (0, 0), "{all:?}");
    let why = filtered_by(s.intent.as_ref().unwrap(), T, &denied, &s.peers);
    assert_eq!(
        why.as_deref(),
        Some("denied by route-map KUBE-VIP-ROUTES-V4 seq 20")
    );
}

#[test]
fn every_established_peer_denying_outbound_is_filtered() {
    let out = format!(
        "{CONFIG}route-map OUT permit 1\n match ip address prefix-list ONLY\nexit\n\
ip prefix-list ONLY seq 1 permit 192.0.2.99/32\n"
    )
    .replace(
        "  neighbor 198.18.1.1 activate\n",
        "  neighbor 198.18.1.1 activate\n  neighbor 198.18.1.1 route-map OUT out\n",
    );
    let mut s = ready(Config::repairing(), &out);
    let vip = p("192.0.2.10/32");
    let mut all = add(&mut s, 1_000, vip);
    all.extend(run(&mut s, 1_000, 30_000, &[]));
    assert_eq!(state(&s, vip), Class::Filtered);
    assert_eq!(heals(&all), 0);
    assert_eq!(
        filtered_by(s.intent.as_ref().unwrap(), T, &vip, &s.peers).as_deref(),
        Some("to 198.18.1.1: denied by route-map OUT (no entry matches: implicit deny)")
    );
}

#[test]
fn a_drift_on_a_permitted_prefix_still_heals() {
    let mut s = ready(Config::repairing(), CONFIG);
    let vip = p("192.0.2.10/32");
    let mut all = add(&mut s, 1_000, vip);
    all.extend(run(&mut s, 1_000, 5_000, &[]));
    assert_eq!(state(&s, vip), Class::NotRedistributed);
    assert_eq!(drifts(&all), 1);
    assert!(heals(&all) >= 1, "{all:?}");
}

#[test]
fn a_policy_that_cannot_be_evaluated_gets_one_heal_then_is_reported() {
    // An entry ahead of the VIP's permit matches on what ribbridge does not
    // evaluate (RPKI validity): the policy is unknown for every VIP.
    let unknown = CONFIG.replace(
        "route-map KUBE-VIP-ROUTES-V4 permit 10\n",
        "route-map KUBE-VIP-ROUTES-V4 deny 5\n match rpki invalid\nexit\n!\n\
route-map KUBE-VIP-ROUTES-V4 permit 10\n",
    );
    let mut s = ready(Config::repairing(), &unknown);
    let vip = p("192.0.2.10/32");
    let mut all = add(&mut s, 1_000, vip);
    // bgpd never sends it, for two minutes (the capped backoff is 30 s).
    all.extend(run_healed(&mut s, 1_000, 120_000));
    assert_eq!(state(&s, vip), Class::NotRedistributed);
    assert_eq!(heals(&all), 1, "one heal episode: {all:?}");
    assert!(
        !all.iter().any(|a| matches!(a, Action::GaveUp { .. })),
        "{all:?}"
    );
    let v = &s.vips[&(T, vip)];
    assert_eq!(v.heal().last_result, Some(HealResult::PolicyUnknown));
    let why = policy_unknown(s.intent.as_ref().unwrap(), T, &vip, &s.peers);
    assert!(
        why.as_deref()
            .is_some_and(|w| w.contains("KUBE-VIP-ROUTES-V4") && w.contains("seq 5")),
        "{why:?}"
    );
    // A writer's beat does not re-arm it.
    all = step(
        &mut s,
        Event::KernelReasserted {
            table: T,
            prefix: vip,
        },
        121_000,
    );
    all.extend(run_healed(&mut s, 121_000, 180_000));
    assert_eq!(heals(&all), 0, "{all:?}");
    // A permitted VIP bgpd does not send is a drift healed as before.
    let mut s = ready(Config::repairing(), CONFIG);
    add(&mut s, 1_000, vip);
    let all = run_healed(&mut s, 1_000, 120_000);
    assert!(heals(&all) > 1, "{all:?}");
}

#[test]
fn a_table_not_redistributed_is_unconfigured_reported_and_never_healed() {
    let mut s = ready(Config::repairing(), CONFIG);
    let vip = p("192.0.2.10/32");
    add(&mut s, 1_000, vip);
    run(&mut s, 1_000, 3_000, &[vip]);
    assert_eq!(state(&s, vip), Class::Advertised);
    // The redistribution goes (a wipe): bgpd withdraws, the intent says so.
    let wiped = CONFIG.replace(
        "  redistribute table-direct 198 route-map KUBE-VIP-ROUTES-V4\n",
        "",
    );
    let mut all = step(
        &mut s,
        Event::Intent {
            intent: intent(&wiped),
        },
        10_000,
    );
    all.extend(run(&mut s, 10_000, 10_900, &[]));
    // One more read of the configuration first: not yet.
    assert_eq!(state(&s, vip), Class::Advertised);
    all.extend(run(&mut s, 11_000, 60_000, &[]));
    assert_eq!(state(&s, vip), Class::Unconfigured);
    assert_eq!((heals(&all), drifts(&all)), (0, 0), "{all:?}");
    assert!(s.vips[&(T, vip)].drift_since().is_none());
    // The IPv6 family of the same table is unconfigured too.
    let v6 = p("2001:db8::10/128");
    add(&mut s, 61_000, v6);
    let all = run(&mut s, 61_000, 65_000, &[]);
    assert_eq!(state(&s, v6), Class::Unconfigured);
    assert_eq!(heals(&all), 0);
}

#[test]
fn a_configuration_change_waits_for_the_route_map_delay_timer() {
    let vip = p("192.0.2.10/32");
    // Denied first: `filtered`.
    let denying = CONFIG.replace("permit 192.0.2.10/32", "permit 192.0.2.99/32");
    let mut s = ready(Config::repairing(), &denying);
    add(&mut s, 1_000, vip);
    run(&mut s, 1_000, 3_000, &[]);
    assert_eq!(state(&s, vip), Class::Filtered);
    // The prefix-list now permits it; bgpd sends it when its 5 s delay
    // timer fires (and a second of coalescing): no drift before.
    let mut all = step(
        &mut s,
        Event::Intent {
            intent: intent(CONFIG),
        },
        10_000,
    );
    all.extend(run(&mut s, 10_000, 15_900, &[]));
    all.extend(run(&mut s, 16_000, 20_000, &[vip]));
    assert_eq!(state(&s, vip), Class::Advertised);
    assert_eq!((heals(&all), drifts(&all)), (0, 0), "{all:?}");
    // A timer of 1 s (configured) shortens the wait: past it plus the bgp
    // grace, a VIP still not sent is a drift.
    let mut s = ready(
        Config::repairing(),
        &format!("bgp route-map delay-timer 1\n{denying}"),
    );
    add(&mut s, 1_000, vip);
    run(&mut s, 1_000, 3_000, &[]);
    let fast = format!("bgp route-map delay-timer 1\n{CONFIG}");
    step(
        &mut s,
        Event::Intent {
            intent: intent(&fast),
        },
        10_000,
    );
    let all = run(&mut s, 10_000, 14_000, &[]);
    assert_eq!(state(&s, vip), Class::NotRedistributed);
    assert_eq!(drifts(&all), 1);
}

#[test]
fn the_ceiling_paces_a_mass_drift_in_order() {
    let config = Config {
        heal_rate_per_s: 100,
        heal_burst: 50,
        ..Config::repairing()
    };
    let mut s = ready(
        config,
        "router bgp 1\n address-family ipv4 unicast\n  redistribute table-direct 198\n",
    );
    let vips: Vec<Prefix> = (0..300u32)
        .map(|i| p(&format!("10.0.{}.{}/32", i / 256, i % 256)))
        .collect();
    // In the kernel, never in zebra (10.7's lost routes): kernel_only.
    for v in &vips {
        step(
            &mut s,
            Event::KernelRoute {
                table: T,
                prefix: *v,
                route: Some(KernelFacts {
                    protocol: 248,
                    nexthops: 1,
                }),
            },
            1_000,
        );
    }
    let mut at = Vec::new();
    let mut t = 1_000;
    while t <= 10_000 {
        for a in step(&mut s, Event::Tick, t).into_iter().chain(step(
            &mut s,
            Event::BgpView {
                peers: vec![peer(&[])],
            },
            t,
        )) {
            if let Action::Heal { prefix, .. } = a {
                at.push((t, prefix));
            }
        }
        t += 10;
    }
    assert_eq!(at.len(), 300, "every VIP healed once");
    // The burst at once, then one every 10 ms: never more than the burst
    // plus the rate in any second.
    let first = at[0].0;
    assert_eq!(at.iter().filter(|(t, _)| *t == first).count(), 50);
    for w in at.windows(2).skip(50) {
        assert!(w[1].0 >= w[0].0, "in order");
    }
    let last = at[299].0;
    assert!(last >= first + 2_490, "paced: {first} .. {last}");
    assert_eq!(s.ceiling.deferred, 250);
}

#[test]
fn a_discovered_vip_absent_everywhere_is_forgotten_after_the_retention() {
    let config = Config {
        forget_after_ms: 60_000,
        vips: [p("192.0.2.10/32")].into(),
        ..Config::repairing()
    };
    let mut s = ready(config, CONFIG);
    let gone = p("192.0.2.11/32");
    add(&mut s, 1_000, gone);
    run(&mut s, 1_000, 3_000, &[]);
    step(
        &mut s,
        Event::KernelRoute {
            table: T,
            prefix: gone,
            route: None,
        },
        4_000,
    );
    step(
        &mut s,
        Event::ZebraRoute {
            table: T,
            prefix: gone,
            present: false,
        },
        4_010,
    );
    run(&mut s, 4_000, 6_000, &[]);
    assert_eq!(state(&s, gone), Class::Withdrawn);
    let mut all = Vec::new();
    let mut t = 6_000;
    while t <= 70_000 {
        all.extend(step(&mut s, Event::Tick, t));
        t += 1_000;
    }
    assert!(!s.vips.contains_key(&(T, gone)));
    assert!(
        all.iter()
            .any(|a| matches!(a, Action::Forgot { prefix, .. } if *prefix == gone))
    );
    // The configured VIP, withdrawn all along, stays.
    assert!(s.vips.contains_key(&(T, p("192.0.2.10/32"))));
}
