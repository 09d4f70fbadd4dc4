//! Memory per route, counted by a counting global allocator (stats_alloc:
//! the crate forbids `unsafe_code` in every target, and a `GlobalAlloc`
//! needs an `unsafe impl`).
//!
//! Bytes live after the build, per route, for:
//! - `kernel::Mirror` filled with 10 000 and 100 000 kube-vip routes
//!   (one ECMP leg each, as a node's table 198 holds them);
//! - the same mirror when it keeps only the configured VIPs
//!   (`Mirror::with_prefixes`, the router vantage): 1 000 000 routes of
//!   which 2 are VIPs must cost nothing per route;
//! - `reconcile::State` after `KernelSynced` of 100 000 VIPs (the core's
//!   per-VIP state);
//! - the prefix sets of the views at 100 000 routes: the ZAPI client's
//!   view (`ZapiView`, filled route by route), and a polled view (zebra's
//!   table from the vty scan, a peer's advertised routes: a `PrefixSet`),
//!   with a `BTreeSet` of the same prefixes for comparison;
//! - zebra's table read over the vty (`show ip route table 198 json`, a
//!   100 000-route reply in 64 KiB socket reads) streamed into the key
//!   scan: the most bytes live at any read, per route (the text itself,
//!   ~500 B a route, is never held);
//! - one `ribbridge_vip_state` series (bytes per series in the Prometheus
//!   recorder, which keeps every label set it was ever given).
//!
//! Each figure is printed as `bytes/route` and checked against a budget:
//! a regression fails `cargo bench --bench mirror_memory`. The budgets are
//! the design, not the machine: allocation sizes do not depend on speed.
//! The time to build the mirror is measured by criterion.
//!
//! Run: `cargo bench --bench mirror_memory -- --warm-up-time 1
//! --measurement-time 3`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench: a failure is a failed run

use std::alloc::System;
use std::collections::BTreeSet;
use std::hint::black_box;
use std::net::{IpAddr, Ipv4Addr};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ribbridge::kernel::wire::Message;
use ribbridge::kernel::{Mirror, Nexthop, Route};
use ribbridge::model::{Prefix, VIP_PROTOCOL, VIP_TABLE};
use ribbridge::reconcile::{self, Event, KernelEntry, KernelFacts, State};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// The mirror's budget per kube-vip route (one leg): a 48-byte hash map
/// entry (key, realm, pointer to the shared shape) and its control byte,
/// at a load between 7/16 and 7/8 (64 B at 100 000 routes, 80 B at
/// 10 000; was 244 B in a B-tree with the route inline).
const MIRROR_BUDGET: usize = 96;
/// A route outside the configured VIPs, in a mirror that keeps only them.
const FILTERED_BUDGET: usize = 1;
/// The core's budget per VIP: a 64-byte hot part and its 24-byte key in
/// full B-tree nodes, 90 bytes (~250 before the heal record went out of
/// line and the resync built the map in bulk).
const CORE_BUDGET: usize = 96;
/// The same VIPs added one route at a time (after the start): the map
/// repacked as it grows (at most a fifth of it in half-full nodes) and a
/// pending deadline each (24 bytes and the list's spare room) until it is
/// due: 127 bytes (197 before the repacking).
const ADDED_BUDGET: usize = 136;
/// The ZAPI view's budget per prefix (a hash set, 18 bytes a prefix at
/// hashbrown's load).
const ZAPI_VIEW_BUDGET: usize = 32;
/// A polled view's budget per prefix (a sorted slice: 18 bytes a prefix).
const POLLED_VIEW_BUDGET: usize = 18;
/// The streamed vty table read's budget per route at its peak: the prefix
/// list it fills (18 bytes a prefix, up to twice that as the `Vec` grows),
/// not the reply's text; 46 while it filled a `BTreeSet`.
const VTY_BUDGET: usize = 32;

fn prefix(i: usize) -> Prefix {
    let a = Ipv4Addr::from(0x0a00_0000u32 + u32::try_from(i).unwrap());
    Prefix::host(IpAddr::V4(a))
}

/// A kube-vip route of table 198 with one leg.
fn route(i: usize, table: u32) -> Route {
    let leg = Nexthop::leg(Some(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2))), 2);
    Route::vip(table, prefix(i), vec![leg])
}

/// Bytes still allocated after `build`, and its result (kept alive).
fn live_bytes<T>(build: impl FnOnce() -> T) -> (usize, T) {
    let region = Region::new(GLOBAL);
    let value = build();
    (live(&region), value)
}

/// Bytes live since `region` began. stats_alloc counts a realloc's growth
/// in `bytes_allocated` (and its shrink in `bytes_deallocated`) as well as
/// in `bytes_reallocated`: adding the latter counted a grown `Vec` twice.
fn live(region: &Region<'_, System>) -> usize {
    let c = region.change();
    c.bytes_allocated.saturating_sub(c.bytes_deallocated)
}

fn fill(m: &mut Mirror, n: usize, table: u32) {
    for i in 0..n {
        m.apply(Message::NewRoute(route(i, table)));
    }
}

fn report(what: &str, n: usize, bytes: usize, budget: usize) {
    let per = bytes / n.max(1);
    println!("memory: {what}: {n} routes, {bytes} bytes, {per} bytes/route (budget {budget})");
    assert!(
        per <= budget,
        "{what}: {per} bytes/route is over the budget of {budget}: a memory regression"
    );
}

fn memory(c: &mut Criterion) {
    for n in [10_000, 100_000] {
        let (bytes, m) = live_bytes(|| {
            let mut m = Mirror::new([VIP_TABLE]);
            fill(&mut m, n, VIP_TABLE);
            m
        });
        assert_eq!(m.routes().count(), n);
        report("mirror, node vantage", n, bytes, MIRROR_BUDGET);
    }
    {
        let n = 1_000_000;
        let vips: BTreeSet<Prefix> = [prefix(7), prefix(70_000)].into();
        let (bytes, m) = live_bytes(|| {
            let mut m = Mirror::with_prefixes([254], vips.clone());
            fill(&mut m, n, 254);
            m
        });
        assert_eq!(m.routes().count(), 2);
        report(
            "mirror, router vantage (2 VIPs kept)",
            n,
            bytes,
            FILTERED_BUDGET,
        );
    }
    {
        let n = 100_000;
        let (bytes, s) = live_bytes(|| {
            // The dump is built inside the count: the step frees it, and
            // counting its free alone would take its bytes off the state's.
            let routes: Vec<KernelEntry> = (0..n)
                .map(|i| KernelEntry {
                    table: VIP_TABLE,
                    prefix: prefix(i),
                    facts: KernelFacts {
                        protocol: VIP_PROTOCOL,
                        nexthops: 1,
                    },
                })
                .collect();
            let mut s = State::new(reconcile::Config::default(), 0);
            reconcile::step(&mut s, Event::KernelSynced { routes }, 1);
            s
        });
        assert_eq!(s.vips.len(), n);
        report("core state", n, bytes, CORE_BUDGET);
        // The same VIPs added one route at a time, in key order (one `ip
        // -batch` after the start): the map is repacked as it grows.
        let (bytes, s) = live_bytes(|| {
            let mut s = State::new(reconcile::Config::default(), 0);
            for i in 0..n {
                let route = Some(KernelFacts {
                    protocol: VIP_PROTOCOL,
                    nexthops: 1,
                });
                let table = VIP_TABLE;
                let prefix = prefix(i);
                reconcile::step(
                    &mut s,
                    Event::KernelRoute {
                        table,
                        prefix,
                        route,
                    },
                    1,
                );
            }
            s
        });
        assert_eq!(s.vips.len(), n);
        report("core state, added one at a time", n, bytes, ADDED_BUDGET);
    }
    views_cost();
    vty_stream_cost();
    series_cost();

    let mut g = c.benchmark_group("mirror_fill");
    g.sample_size(10);
    let n = 100_000;
    g.throughput(Throughput::Elements(n as u64));
    g.bench_with_input(BenchmarkId::new("node_vantage", n), &n, |b, &n| {
        b.iter(|| {
            let mut m = Mirror::new([VIP_TABLE]);
            fill(&mut m, n, VIP_TABLE);
            black_box(m)
        })
    });
    g.finish();
}

/// The prefix sets of the views, 100 000 prefixes each.
fn views_cost() {
    use ribbridge::daemon::translate::ZapiView;
    use ribbridge::frr::{ZapiEvent, ZapiRoute};
    use ribbridge::model::PrefixSet;

    let n = 100_000;
    let add = |i: usize| ZapiEvent::RouteAdd {
        route: ZapiRoute::sample(31, prefix(i), Vec::new()),
    };
    let (bytes, view) = live_bytes(|| {
        let mut view = ZapiView::new(VIP_TABLE);
        for i in 0..n {
            black_box(view.apply(&add(i)));
        }
        view
    });
    black_box(view);
    report("ZAPI view (hash set)", n, bytes, ZAPI_VIEW_BUDGET);
    let (bytes, set) = live_bytes(|| (0..n).map(prefix).collect::<PrefixSet>());
    assert_eq!(set.len(), n);
    report(
        "polled view (zebra table, advertised routes)",
        n,
        bytes,
        POLLED_VIEW_BUDGET,
    );
    // Filled key by key, as the scan and the ZAPI view filled theirs.
    let (bytes, tree) = live_bytes(|| {
        let mut tree = BTreeSet::new();
        for i in 0..n {
            tree.insert(prefix(i));
        }
        tree
    });
    assert_eq!(tree.len(), n);
    println!(
        "memory: the same in a BTreeSet filled in order (before): {n} routes, {bytes} bytes, {} bytes/route",
        bytes / n
    );
}

/// The peak of a streamed zebra table read: bytes live after each socket
/// read, the most of them, per route; and the text a whole read held.
fn vty_stream_cost() {
    use bytes::BytesMut;
    use ribbridge::frr::vty::codec::VtyCodec;
    use ribbridge::frr::vty::scan::{KeyScan, KeysOf};
    use tokio_util::codec::Decoder;

    let n = 100_000;
    // An entry the size of 10.7's (tests/data/frr/frr-10.7.1).
    let entry = r#"[{"protocol":"kernel","selected":true,"destSelected":true,"distance":0,"metric":0,"installed":true,"nexthopGroupId":7,"vrfId":0,"vrfName":"default","uptime":"00:00:01","prefix":"P","prefixLen":32,"table":198,"internalStatus":16,"internalFlags":8,"internalNextHopNum":1,"internalNextHopActiveNum":1,"internalNextHopFibInstalledNum":1,"installedNexthopGroupId":7,"receivedNexthopGroupId":7,"nexthops":[{"flags":3,"fib":true,"directlyConnected":true,"interfaceIndex":1,"interfaceName":"lo","active":true,"weight":1}]}]"#;
    let mut raw = Vec::from(&b"{"[..]);
    for i in 0..n {
        if i > 0 {
            raw.extend_from_slice(b"\n,");
        }
        let p = prefix(i).to_string();
        raw.extend_from_slice(format!("\"{p}\":{}", entry.replace('P', &p)).as_bytes());
    }
    raw.extend_from_slice(b"}\0\0\0\0");
    let region = Region::new(GLOBAL);
    let mut peak = 0usize;
    let mut codec = VtyCodec::default();
    codec.stream_into(KeyScan::new(KeysOf::TopLevel));
    let mut buf = BytesMut::with_capacity(64 << 10);
    let mut reply = None;
    for chunk in raw.chunks(64 << 10) {
        buf.extend_from_slice(chunk);
        reply = codec.decode(&mut buf).unwrap();
        peak = peak.max(live(&region));
    }
    assert!(reply.unwrap().status.is_success());
    let prefixes = codec.take_scan().unwrap().finish().unwrap();
    assert_eq!(prefixes.len(), n);
    println!(
        "memory: vty table read, whole text: {n} routes, {} bytes of text, {} bytes/route",
        raw.len(),
        raw.len() / n
    );
    report("vty table read, streamed (peak)", n, peak, VTY_BUDGET);
}

/// One VIP's series in the recorder, in bytes: what a VIP with metrics
/// costs beyond its state.
fn series_cost() {
    let handle = ribbridge::telemetry::install().expect("recorder");
    let n = 10_000;
    let (bytes, ()) = live_bytes(|| {
        for i in 0..n {
            ribbridge::telemetry::vip_unknown(&prefix(i), VIP_TABLE);
            ribbridge::telemetry::ecmp_unknown(&prefix(i), VIP_TABLE);
        }
    });
    let series = ribbridge::telemetry::SERIES_PER_VIP;
    println!(
        "memory: metrics: {n} VIPs with series, {bytes} bytes, {} bytes/VIP, {series} series/VIP, {} bytes/series",
        bytes / n,
        bytes / n / series
    );
    black_box(handle);
}

criterion_group!(benches, memory);
criterion_main!(benches);
