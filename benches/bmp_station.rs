//! The BMP station's cost per message as the network grows: one Route
//! Monitoring message (a VIP path announced, then withdrawn) applied to a
//! [`Station`] holding 1, 100 or 5 000 synced routers, and to a router
//! whose VIP is held by 1 or 30 000 peers. The cost must not grow with
//! either (counts are kept as paths change; no scan of the routers).
//! Heap bytes live after each set-up are counted by a counting allocator
//! (stats_alloc) and printed, per router and per path.
//!
//! Run: `cargo bench --bench bmp_station -- --warm-up-time 1 --measurement-time 3`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench: a failure is a failed run

use std::alloc::System;
use std::hint::black_box;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use ribbridge::bmp::{BmpInput, EndOfRib, Message, Path, PeerKey, Rib, Station};
use ribbridge::config::BmpLimits;
use ribbridge::model::{Family, Prefix};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn vip() -> Prefix {
    "192.0.2.10/32".parse().unwrap()
}

fn peer(n: u32) -> PeerKey {
    PeerKey {
        address: IpAddr::from(Ipv4Addr::from(0x0a00_0000 + n)),
        distinguisher: 0,
    }
}

fn route(p: PeerKey, announced: bool, end: Option<EndOfRib>) -> Message {
    let path = vec![Path {
        prefix: vip(),
        path_id: None,
    }];
    let (a, w) = if end.is_some() {
        (vec![], vec![])
    } else if announced {
        (path, vec![])
    } else {
        (vec![], path)
    };
    Message::Route {
        peer: p,
        asn: 64512,
        bgp_id: Ipv4Addr::new(198, 18, 0, 2),
        rib: Rib::PostPolicy,
        announced: a,
        withdrawn: w,
        end_of_rib: end,
        skipped: vec![],
        anomalies: vec![],
    }
}

fn send(st: &mut Station, session: u64, m: Message) {
    st.apply(
        BmpInput::Message {
            session,
            message: m,
        },
        0,
    );
}

/// A station with `routers` synced routers, each with `peers` peers
/// holding the VIP.
fn station(routers: u32, peers: u32) -> Station {
    let limits = BmpLimits {
        max_routers: 100_000,
        max_peers: 100_000,
        max_paths: 100_000,
        ..BmpLimits::default()
    };
    let mut st = Station::new([vip()], 300, &limits);
    for r in 0..routers {
        let session = u64::from(r) + 1;
        let address = SocketAddr::from((Ipv4Addr::from(0xc633_0000 + r), 40000));
        st.apply(BmpInput::Up { session, address }, 0);
        send(
            &mut st,
            session,
            Message::Initiation {
                sys_name: Some(format!("r{r}")),
                sys_descr: None,
            },
        );
        for p in 0..peers {
            send(
                &mut st,
                session,
                Message::PeerUp {
                    peer: peer(p),
                    asn: 64512,
                    bgp_id: Ipv4Addr::new(198, 18, 0, 2),
                    loc_rib: false,
                    families: vec![Family::Ipv4],
                    graceful_restart: None,
                },
            );
        }
        for p in 0..peers {
            send(&mut st, session, route(peer(p), true, None));
            send(
                &mut st,
                session,
                route(peer(p), true, Some(EndOfRib::Unicast(Family::Ipv4))),
            );
        }
    }
    assert_eq!(st.not_ready(), None);
    st
}

fn live(region: &Region<'_, System>) -> usize {
    let s = region.change();
    s.bytes_allocated
        .saturating_sub(s.bytes_deallocated)
        .saturating_add(s.bytes_reallocated.max(0).unsigned_abs())
}

/// (VmRSS, VmHWM) of this process in kB, from /proc/self/status.
fn rss_kib() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |k: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(k))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("bmp_station_message");
    for (routers, peers) in [(1, 1), (100, 1), (5_000, 1), (1, 30_000)] {
        let region = Region::new(GLOBAL);
        let mut st = station(routers, peers);
        let bytes = live(&region);
        let (rss, peak) = rss_kib();
        eprintln!(
            "station with {routers} routers x {peers} peers holding the VIP: {bytes} bytes live ({} per router, {} per path); process RSS {rss} kB, peak {peak} kB",
            bytes / routers as usize,
            bytes / (routers as usize * peers as usize)
        );
        let mut on = false;
        g.bench_with_input(
            BenchmarkId::new(format!("routers_{routers}_paths"), peers),
            &peers,
            |b, _| {
                b.iter(|| {
                    on = !on;
                    send(&mut st, 1, route(peer(0), on, None));
                    black_box(&st);
                })
            },
        );
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
