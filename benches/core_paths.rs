//! The daemon's per-event paths, pure and in memory:
//! - `reconcile::step` for one event on states of 10, 10 000 and 100 000
//!   VIPs, all `advertised`, ready, one established peer advertising every
//!   VIP. A one-route event (a kernel route whose ECMP count changes, a
//!   zebra redistribution) must cost the same at every size: the core
//!   re-evaluates only the touched VIP. A bgpd view is a whole-view event
//!   and is linear by design; it is measured for scale.
//! - `kernel::Mirror::replace` of 100 000 routes (the full resync diff),
//!   identical and with 1 % of the routes changed.
//! - rendering `/metrics` with 1 000 VIPs (every VIP's 7 state gauges, its
//!   ECMP gauge and a drift counter, plus the fixed metrics).
//!
//! Run briefly: `cargo bench --bench core_paths -- --warm-up-time 1
//! --measurement-time 3`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench: a failure is a failed run

use std::hint::black_box;
use std::net::{IpAddr, Ipv4Addr};

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ribbridge::kernel::wire::Message;
use ribbridge::kernel::{Mirror, Nexthop, ResyncReason, Route};
use ribbridge::model::{PeerView, PrefixSet, Release, TableMode};
use ribbridge::model::{Prefix, VIP_PROTOCOL, VIP_TABLE};
use ribbridge::reconcile::{self, Class, Event, KernelEntry, KernelFacts, State};

const SIZES: [usize; 3] = [10, 10_000, 100_000];
const NOW: u64 = 10_000;

fn prefix(i: usize) -> Prefix {
    let a = Ipv4Addr::from(0x0a00_0000u32 + u32::try_from(i).unwrap());
    Prefix::host(IpAddr::V4(a))
}

fn facts(nexthops: u32) -> KernelFacts {
    KernelFacts {
        protocol: VIP_PROTOCOL,
        nexthops,
    }
}

/// A ready state of `n` VIPs, every one `advertised`.
fn state(n: usize) -> State {
    let mut s = State::new(reconcile::Config::default(), 0);
    let prefixes: PrefixSet = (0..n).map(prefix).collect();
    let routes = prefixes
        .iter()
        .map(|p| KernelEntry {
            table: VIP_TABLE,
            prefix: *p,
            facts: facts(1),
        })
        .collect();
    let events = [
        Event::ZebraUp {
            release: Release::new(10, 7),
            table_mode: TableMode::TableDirect,
        },
        Event::KernelSynced { routes },
        Event::ZebraSynced {
            table: VIP_TABLE,
            prefixes: prefixes.clone(),
        },
        Event::BgpView {
            peers: vec![PeerView {
                peer: "198.18.1.1".into(),
                established: true,
                advertised: prefixes,
                up_ms: None,
                families: ribbridge::model::Families::both(),
            }],
        },
    ];
    for (i, e) in events.into_iter().enumerate() {
        reconcile::step(&mut s, e, 1 + i as u64);
    }
    // Past every grace: drain the deadlines the set-up scheduled.
    reconcile::step(&mut s, Event::Tick, NOW - 1);
    assert!(s.ready());
    assert!(
        s.vips.values().all(|v| v.state == Class::Advertised),
        "the bench state is not all advertised"
    );
    s
}

fn step(c: &mut Criterion) {
    let mut g = c.benchmark_group("reconcile_step");
    g.sample_size(20);
    for n in SIZES {
        let mut s = state(n);
        let p = prefix(n / 2);
        let mut legs = 1;
        // The ECMP count of one VIP flips 1 <-> 2: a real change, the class
        // stays advertised, so the state does not drift between iterations.
        g.bench_with_input(BenchmarkId::new("kernel_route", n), &n, |b, _| {
            b.iter(|| {
                legs = 3 - legs;
                reconcile::step(
                    &mut s,
                    Event::KernelRoute {
                        table: VIP_TABLE,
                        prefix: p,
                        route: Some(facts(legs)),
                    },
                    NOW,
                )
            })
        });
        let zebra = Event::ZebraRoute {
            table: VIP_TABLE,
            prefix: p,
            present: true,
        };
        g.bench_with_input(BenchmarkId::new("zebra_route", n), &n, |b, _| {
            b.iter(|| reconcile::step(&mut s, zebra.clone(), NOW))
        });
        g.bench_with_input(BenchmarkId::new("tick_one_due", n), &n, |b, _| {
            b.iter(|| {
                // touch() scheduled a deadline for p at NOW + grace.
                reconcile::step(&mut s, zebra.clone(), NOW);
                reconcile::step(&mut s, Event::Tick, NOW + 600)
            })
        });
        let peers = s.peers.clone();
        g.bench_with_input(BenchmarkId::new("bgp_view_whole", n), &n, |b, _| {
            b.iter_batched(
                || peers.clone(),
                |peers| reconcile::step(&mut s, Event::BgpView { peers }, NOW),
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

fn route(i: usize, realm: Option<u32>, gw: u8) -> Route {
    let leg = Nexthop::leg(Some(IpAddr::V4(Ipv4Addr::new(198, 18, 1, gw))), 2);
    Route {
        realm,
        ..Route::vip(VIP_TABLE, prefix(i), vec![leg])
    }
}

fn mirror(n: usize, changed_every: usize) -> Mirror {
    let mut m = Mirror::new([VIP_TABLE]);
    for i in 0..n {
        let gw = if changed_every > 0 && i % changed_every == 0 {
            2
        } else {
            1
        };
        m.apply(Message::NewRoute(route(i, None, gw)));
    }
    m
}

fn resync(c: &mut Criterion) {
    const N: usize = 100_000;
    let old = mirror(N, 0);
    let same = mirror(N, 0);
    let one_pct = mirror(N, 100);
    assert_eq!(old.routes().count(), N);
    let mut g = c.benchmark_group("mirror_replace");
    g.sample_size(10);
    g.throughput(Throughput::Elements(N as u64));
    for (name, next) in [
        ("identical_100000", &same),
        ("one_percent_changed_100000", &one_pct),
    ] {
        g.bench_function(name, |b| {
            b.iter_batched(
                || (old.clone(), next.clone()),
                |(mut cur, next)| cur.replace(next, ResyncReason::Timer).len(),
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

fn metrics(c: &mut Criterion) {
    let handle = ribbridge::telemetry::install().unwrap();
    for i in 0..1_000 {
        let p = prefix(i);
        ribbridge::telemetry::vip_state(&p, VIP_TABLE, Class::Advertised);
        ribbridge::telemetry::ecmp_nexthops(&p, VIP_TABLE, 2);
        ribbridge::telemetry::drift(&p, Class::KernelOnly);
    }
    ribbridge::telemetry::ready(true);
    ribbridge::telemetry::zapi_connected(true);
    ribbridge::telemetry::build_info();
    ribbridge::telemetry::frr_info(None, "10.7.1");
    let text = handle.render();
    eprintln!(
        "/metrics with 1000 VIPs: {} bytes, {} lines",
        text.len(),
        text.lines().count()
    );
    let mut g = c.benchmark_group("metrics_render");
    g.sample_size(20);
    g.bench_function("vips_1000", |b| b.iter(|| black_box(handle.render()).len()));
    g.finish();
}

criterion_group!(benches, step, resync, metrics);
criterion_main!(benches);
