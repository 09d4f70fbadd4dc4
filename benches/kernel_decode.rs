//! Decode rate of the kernel wire layer against netlink-packet-route's own
//! parser, on the same bytes: a strict dump of 1 000 routes captured from
//! kernel 6.18 (tests/data/kernel/README.md), repeated to 100 000 messages.
//! Run briefly: `cargo bench --bench kernel_decode -- --warm-up-time 1
//! --measurement-time 3`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ribbridge::kernel::wire::{Message, decode, frames};
use rtnetlink::packet_core::Parseable;
use rtnetlink::packet_route::route::RouteMessage;

const CAPTURE: &[u8] = include_bytes!("../tests/data/kernel/route-dump-1000.bin");
const COPIES: usize = 100;

fn stream() -> (Vec<u8>, u64) {
    let per_copy = frames(CAPTURE).count();
    assert_eq!(
        per_copy, 1000,
        "the capture should hold 1000 route messages"
    );
    (CAPTURE.repeat(COPIES), (per_copy * COPIES) as u64)
}

fn bench(c: &mut Criterion) {
    let (bytes, n) = stream();
    let mut g = c.benchmark_group("kernel_decode");
    g.throughput(Throughput::Elements(n));
    g.sample_size(10);
    g.bench_function("ribbridge_wire_into_model", |b| {
        b.iter(|| {
            let mut routes = 0u64;
            for f in frames(&bytes) {
                let f = f.expect("frame");
                if let Ok(Message::NewRoute(r)) = decode(&f) {
                    routes += r.nexthops.len() as u64;
                }
            }
            routes
        })
    });
    g.bench_function("netlink_packet_route_parse", |b| {
        b.iter(|| {
            let mut attrs = 0u64;
            for f in frames(&bytes) {
                let f = f.expect("frame");
                if let Ok(m) = RouteMessage::parse(f.payload) {
                    attrs += m.attributes.len() as u64;
                }
            }
            attrs
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
