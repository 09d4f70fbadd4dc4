//! Decode cost of the FRR wire layer on bytes captured from the real
//! daemons (tests/data/frr/README.md):
//! - ZAPI: every zebra -> client frame of one captured session per release
//!   (HELLO/capabilities, VRF, route add/delete, ECMP, IPv6), split into
//!   frames by `FrameCodec` and route frames decoded by the release's
//!   `Dialect`; the session is repeated 1 000 times so one iteration is a
//!   stream of ~10 000 frames.
//! - vty: `show ip route table 198 json` and `show bgp ... advertised-routes
//!   json` with 10 000 routes, built from the captured 10.7.1 replies by
//!   repeating one captured entry under 10 000 distinct prefixes (the shape
//!   is FRR's; only the prefix changes).
//!
//! Run briefly: `cargo bench --bench frr_decode -- --warm-up-time 1
//! --measurement-time 3`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench: a failure is a failed run

use std::hint::black_box;
use std::net::Ipv4Addr;

use bytes::BytesMut;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ribbridge::frr::capture::{self, RELEASES};
use ribbridge::frr::release::{Release, ReleaseNumbering};
use ribbridge::frr::vty::json::{parse_advertised, parse_route_table};
use ribbridge::frr::zapi::codec::{Command, FrameCodec};
use tokio_util::codec::Decoder;

const SESSIONS: usize = 1_000;
const ROUTES: usize = 10_000;

/// The captured session's bytes and its frame count.
fn session(release: &str) -> (Vec<u8>, usize) {
    let frames = capture::frames(release);
    let n = frames.len();
    (frames.into_iter().flat_map(|f| f.bytes).collect(), n)
}

/// The text of a captured vty reply.
fn vty_text(release: &str, name: &str) -> String {
    capture::vty_reply(release, name).text
}

fn prefix(i: usize) -> String {
    let a = Ipv4Addr::from(0x0a00_0000u32 + u32::try_from(i).unwrap());
    format!("{a}/32")
}

/// A route table reply with `n` prefixes, each the captured entry of
/// 192.0.2.10/32 with the prefix replaced.
fn route_table(n: usize) -> String {
    let text = vty_text("10.7.1", "route-table-198-ipv4");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let entry = serde_json::to_string(&v["192.0.2.10/32"]).unwrap();
    let mut out = String::from("{");
    for i in 0..n {
        if i > 0 {
            out.push_str("\n,");
        }
        let p = prefix(i);
        out.push_str(&format!("\"{p}\":{}", entry.replace("192.0.2.10/32", &p)));
    }
    out.push('}');
    out
}

/// An advertised-routes reply with `n` prefixes.
fn advertised(n: usize) -> String {
    let text = vty_text("10.7.1", "advertised-ipv4");
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let entry = serde_json::to_string(&v["advertisedRoutes"]["192.0.2.10/32"]).unwrap();
    let mut routes = String::from("{");
    for i in 0..n {
        if i > 0 {
            routes.push(',');
        }
        let p = prefix(i);
        let addr = p.trim_end_matches("/32");
        routes.push_str(&format!(
            "\"{p}\":{}",
            entry
                .replace("192.0.2.10/32", &p)
                .replace("\"192.0.2.10\"", &format!("\"{addr}\""))
        ));
    }
    routes.push('}');
    v["advertisedRoutes"] = serde_json::from_str(&routes).unwrap();
    v["totalPrefixCounter"] = n.into();
    serde_json::to_string(&v).unwrap()
}

fn zapi(c: &mut Criterion) {
    let mut g = c.benchmark_group("zapi_decode");
    g.sample_size(10);
    for rel in RELEASES {
        let d = Release::from_show_version(&vty_text(rel, "show-version"))
            .unwrap()
            .dialect()
            .unwrap();
        let (one, per) = session(rel);
        let stream = one.repeat(SESSIONS);
        g.throughput(Throughput::Elements((per * SESSIONS) as u64));
        g.bench_function(format!("frames_and_routes_{rel}"), |b| {
            b.iter(|| {
                let mut buf = BytesMut::from(&stream[..]);
                let mut legs = 0usize;
                while let Some(f) = FrameCodec.decode(&mut buf).unwrap() {
                    if matches!(
                        d.command_of(f.command),
                        Some(Command::RedistributeRouteAdd | Command::RedistributeRouteDel)
                    ) {
                        legs += d.decode_route(&f).unwrap().nexthops.len();
                    }
                }
                legs
            })
        });
    }
    g.finish();
}

fn vty(c: &mut Criterion) {
    let table = route_table(ROUTES);
    let adv = advertised(ROUTES);
    assert_eq!(parse_route_table(&table).unwrap().len(), ROUTES);
    assert_eq!(parse_advertised(&adv).unwrap().prefixes.len(), ROUTES);
    let mut g = c.benchmark_group("vty_decode");
    g.sample_size(10);
    g.throughput(Throughput::Elements(ROUTES as u64));
    g.bench_function("route_table_10000", |b| {
        b.iter(|| parse_route_table(black_box(&table)).unwrap().len())
    });
    g.bench_function("advertised_routes_10000", |b| {
        b.iter(|| parse_advertised(black_box(&adv)).unwrap().prefixes.len())
    });
    g.finish();
    eprintln!(
        "vty_decode inputs: route table {} bytes, advertised-routes {} bytes",
        table.len(),
        adv.len()
    );
}

criterion_group!(benches, zapi, vty);
criterion_main!(benches);
