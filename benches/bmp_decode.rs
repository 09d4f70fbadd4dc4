//! Decode cost of the BMP station: a generated stream of 10 000 Route
//! Monitoring messages (100 peers x 100 IPv4 /32 prefixes, post-policy
//! Adj-RIB-In, ORIGIN + AS_PATH + NEXT_HOP, the shape FRR sends), of which
//! 10 prefixes are configured VIPs, 90 are not.
//! - `stream_into_view`: our codec cuts the stream, `Decoder::decode` maps
//!   each frame (bgpkit-parser underneath), `View::apply` keeps the VIPs;
//! - `decode_only`: the same without the view;
//! - `bgpkit_parse_bmp_msg`: bgpkit-parser's own `parse_bmp_msg` on the
//!   same frames (pre-cut), the raw rate of the crate.
//!
//! Run briefly: `cargo bench --bench bmp_decode -- --warm-up-time 1
//! --measurement-time 3`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench: a failure is a failed run

use std::hint::black_box;
use std::net::Ipv4Addr;

use bytes::{BufMut, Bytes, BytesMut};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ribbridge::bmp::{BmpCodec, Decoder, View};
use ribbridge::model::Prefix;
use tokio_util::codec::Decoder as _;

const PEERS: u32 = 100;
const PREFIXES: u32 = 100;
const VIPS: u32 = 10;

fn prefix(i: u32) -> Ipv4Addr {
    Ipv4Addr::from(0xC000_0200 + i) // 192.0.2.0 + i
}

/// One Route Monitoring message: peer `p` announces prefix `i`.
fn route_monitoring(p: u32, i: u32) -> Vec<u8> {
    let peer = Ipv4Addr::from(0xC612_0002 + (p << 8)); // 198.18.p.2
    let mut attrs = BytesMut::new();
    attrs.put_slice(&[0x40, 1, 1, 0]); // ORIGIN IGP
    attrs.put_slice(&[0x40, 2, 6, 2, 1]); // AS_PATH: one AS_SEQUENCE of 1
    attrs.put_u32(64512);
    attrs.put_slice(&[0x40, 3, 4]); // NEXT_HOP
    attrs.put_slice(&peer.octets());
    let mut update = BytesMut::new();
    update.put_slice(&[0xff; 16]);
    let len = 19 + 2 + 2 + attrs.len() + 5;
    update.put_u16(u16::try_from(len).unwrap());
    update.put_u8(2);
    update.put_u16(0);
    update.put_u16(u16::try_from(attrs.len()).unwrap());
    update.put_slice(&attrs);
    update.put_u8(32);
    update.put_slice(&prefix(i).octets());
    let mut m = BytesMut::new();
    m.put_u8(3);
    m.put_u32(u32::try_from(6 + 42 + update.len()).unwrap());
    m.put_u8(0); // Route Monitoring
    m.put_u8(0); // global instance peer
    m.put_u8(0x40); // post-policy, IPv4, 4-byte AS
    m.put_u64(0);
    m.put_slice(&[0; 12]);
    m.put_slice(&peer.octets());
    m.put_u32(64512);
    m.put_slice(&peer.octets());
    m.put_u32(1_700_000_000);
    m.put_u32(0);
    m.put_slice(&update);
    m.to_vec()
}

fn stream() -> (Vec<u8>, Vec<Bytes>) {
    let mut all = Vec::new();
    let mut frames = Vec::new();
    for p in 1..=PEERS {
        for i in 0..PREFIXES {
            let m = route_monitoring(p, i);
            all.extend_from_slice(&m);
            frames.push(Bytes::from(m));
        }
    }
    (all, frames)
}

fn vips() -> Vec<Prefix> {
    (0..VIPS)
        .map(|i| Prefix::host(prefix(i * (PREFIXES / VIPS)).into()))
        .collect()
}

fn bmp(c: &mut Criterion) {
    let (all, frames) = stream();
    let n = frames.len();
    // The stream decodes, and the view ends with every VIP on every peer.
    {
        let mut view = View::new(vips());
        let mut dec = Decoder::new();
        for f in &frames {
            view.apply("r", &dec.decode(f.clone()).unwrap());
        }
        view.expire(u64::MAX);
        assert_eq!(view.paths("r", &vips()[0]), Some(PEERS));
    }
    let mut g = c.benchmark_group("bmp_decode");
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function("stream_into_view_10000", |b| {
        b.iter(|| {
            let mut view = View::new(vips());
            view.session_up("r");
            let mut dec = Decoder::new();
            let mut codec = BmpCodec::default();
            let mut buf = BytesMut::from(&all[..]);
            while let Some(f) = codec.decode(&mut buf).unwrap() {
                black_box(view.apply("r", &dec.decode(f).unwrap()));
            }
            view
        })
    });
    g.bench_function("decode_only_10000", |b| {
        b.iter(|| {
            let mut dec = Decoder::new();
            for f in &frames {
                black_box(dec.decode(f.clone()).unwrap());
            }
        })
    });
    g.bench_function("bgpkit_parse_bmp_msg_10000", |b| {
        b.iter(|| {
            for f in &frames {
                let mut data = f.clone();
                black_box(bgpkit_parser::parse_bmp_msg(&mut data).unwrap());
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bmp);
criterion_main!(benches);
