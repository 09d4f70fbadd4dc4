//! Decode cost of the BMP station: a generated stream of 10 000 Route
//! Monitoring messages (100 peers x 100 IPv4 /32 prefixes, post-policy
//! Adj-RIB-In, ORIGIN + AS_PATH + NEXT_HOP, the shape FRR sends), of which
//! 10 prefixes are configured VIPs, 90 are not.
//! - `stream_into_view`: our codec cuts the stream, `Decoder::decode` maps
//!   each frame (bgpkit-parser for the BMP layer, bmp::update for the UPDATE), `View::apply` keeps the VIPs;
//! - `decode_only`: the same without the view;
//! - `bgpkit_parse_bmp_msg`: bgpkit-parser's own `parse_bmp_msg` on the
//!   same frames (pre-cut), the raw rate of the crate.
//!
//! Group `bmp_nlri_per_update` (throughput in prefixes): one Route
//! Monitoring frame whose UPDATE packs 1, 100 or 1 000 IPv4 /32s in its
//! NLRI field, or 1 000 IPv6 /128s in MP_REACH_NLRI (how IOS XR and Junos
//! pack a table dump), through `Decoder::decode` (`ours_*`), and through a
//! copy of the decoder's former UPDATE path, bgpkit-parser's
//! `parse_bgp_message` and the mapping to unicast paths (`bgpkit_*`).
//!
//! Run briefly: `cargo bench --bench bmp_decode -- --warm-up-time 1
//! --measurement-time 3`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench: a failure is a failed run

use std::hint::black_box;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use bytes::{Bytes, BytesMut};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ribbridge::bmp::build::{self, PeerHeader, as_path, mandatory, mp_reach, nlri, origin, update};
use ribbridge::bmp::{BmpCodec, Decoder, Message, Path, View};
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
    let header = PeerHeader {
        seconds: 1_700_000_000,
        ..PeerHeader::global(peer).post_policy()
    };
    let announced = [Path {
        prefix: Prefix::host(prefix(i).into()),
        path_id: None,
    }];
    build::route_monitoring(&header, &update(&[], &mandatory(), &nlri(&announced))).to_vec()
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

/// An UPDATE announcing `n` prefixes: IPv4 /32s in the NLRI field, or
/// IPv6 /128s in MP_REACH_NLRI; wrapped in a Route Monitoring frame.
fn packed_frame(n: u32, ipv6: bool) -> Bytes {
    let (first, len) = if ipv6 {
        (IpAddr::from([0x2001, 0xdb8, 1, 0, 0, 0, 0, 0]), 128)
    } else {
        (IpAddr::from([10, 0, 0, 0]), 32)
    };
    let announced: Vec<Path> = (0..n)
        .map(|i| {
            let addr = match first {
                IpAddr::V4(a) => IpAddr::from(Ipv4Addr::from(u32::from(a) + i)),
                IpAddr::V6(a) => IpAddr::from(Ipv6Addr::from(u128::from(a) + u128::from(i))),
            };
            Path {
                prefix: Prefix::new(addr, len).unwrap(),
                path_id: None,
            }
        })
        .collect();
    let body = if ipv6 {
        let nh = Ipv6Addr::from(0x2001_0db8_0000_0000_0000_0000_0000_0001).octets();
        let attrs = [origin(), as_path(), mp_reach(2, 1, &nh, &nlri(&announced))].concat();
        update(&[], &attrs, &[])
    } else {
        update(&[], &mandatory(), &nlri(&announced))
    };
    build::route_monitoring(&PeerHeader::global([198, 18, 1, 2]).post_policy(), &body)
}

/// The decoder's former UPDATE path, kept here for comparison: the
/// per-peer header and the UPDATE by bgpkit-parser, its validation
/// warnings scanned, the unicast prefixes mapped to paths.
mod old {
    use bgpkit_parser::error::BgpValidationWarning;
    use bgpkit_parser::models::{Afi, AsnLength, BgpMessage, NetworkPrefix, Safi};
    use bgpkit_parser::parser::bgp::parse_bgp_message;
    use bgpkit_parser::parser::bmp::messages::{parse_bmp_common_header, parse_per_peer_header};
    use bytes::Bytes;
    use ribbridge::bmp::Path;
    use ribbridge::model::Prefix;

    fn unicast(prefixes: &[NetworkPrefix], out: &mut Vec<Path>) {
        for p in prefixes {
            let net = p.prefix.trunc();
            if let Ok(prefix) = Prefix::new(net.addr(), net.prefix_len()) {
                out.push(Path {
                    prefix,
                    path_id: p.path_id,
                });
            }
        }
    }

    /// (announced, withdrawn) of one Route Monitoring frame.
    pub fn decode(frame: Bytes) -> Option<(Vec<Path>, Vec<Path>)> {
        let mut data = frame;
        let header = parse_bmp_common_header(&mut data).ok()?;
        let mut body = data.split_to(header.msg_len as usize - 6);
        let _h = parse_per_peer_header(&mut body).ok()?;
        let BgpMessage::Update(u) = parse_bgp_message(&mut body, false, &AsnLength::Bits32).ok()?
        else {
            return None;
        };
        let damaged = u.attributes.validation_warnings().iter().any(|w| {
            matches!(
                w,
                BgpValidationWarning::MalformedNlri { .. }
                    | BgpValidationWarning::MalformedAttributeList { .. }
            )
        });
        if damaged {
            return None;
        }
        let _eor = u.is_end_of_rib();
        let mut announced = Vec::new();
        let mut withdrawn = Vec::new();
        unicast(&u.announced_prefixes, &mut announced);
        unicast(&u.withdrawn_prefixes, &mut withdrawn);
        let is_unicast = |afi: Afi, safi: Safi| {
            matches!(afi, Afi::Ipv4 | Afi::Ipv6) && matches!(safi, Safi::Unicast)
        };
        if let Some(n) = u.attributes.get_reachable_nlri()
            && is_unicast(n.afi, n.safi)
        {
            unicast(&n.prefixes, &mut announced);
        }
        if let Some(n) = u.attributes.get_unreachable_nlri()
            && is_unicast(n.afi, n.safi)
        {
            unicast(&n.prefixes, &mut withdrawn);
        }
        Some((announced, withdrawn))
    }
}

fn packed(c: &mut Criterion) {
    let mut g = c.benchmark_group("bmp_nlri_per_update");
    for (name, n, ipv6) in [
        ("ipv4_1", 1, false),
        ("ipv4_100", 100, false),
        ("ipv4_1000", 1000, false),
        ("ipv6_mp_1000", 1000, true),
    ] {
        let frame = packed_frame(n, ipv6);
        // Both paths read the same paths.
        let ours = match Decoder::new().decode(frame.clone()).unwrap() {
            Message::Route { announced, .. } => announced,
            other => panic!("{other:?}"),
        };
        assert_eq!(ours.len(), n as usize);
        let (theirs, _) = old::decode(frame.clone()).unwrap();
        assert_eq!(ours, theirs);
        g.throughput(Throughput::Elements(u64::from(n)));
        g.bench_function(format!("ours_{name}"), |b| {
            let mut dec = Decoder::new();
            b.iter(|| black_box(dec.decode(frame.clone()).unwrap()))
        });
        g.bench_function(format!("bgpkit_{name}"), |b| {
            b.iter(|| black_box(old::decode(frame.clone()).unwrap()))
        });
    }
    g.finish();
}

criterion_group!(benches, bmp, packed);
criterion_main!(benches);
