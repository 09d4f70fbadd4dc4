//! Golden tests: frames and vty replies captured from the real zebra and
//! bgpd of FRR 8.4.4, 10.3 and 10.7.1 (tests/data/frr/README.md says how),
//! decoded by the codecs, and every captured route frame re-encoded
//! byte-for-byte.

#![allow(clippy::unwrap_used)] // a test file: a failed unwrap is a failed test

use std::net::IpAddr;

use bytes::BytesMut;
use ribbridge::frr::TableMode;
use ribbridge::frr::capture::{CapturedFrame, RELEASES, frames, vty_raw, vty_reply};
use ribbridge::frr::release::{Release, ReleaseNumbering};
use ribbridge::frr::vty::codec::{VtyCodec, VtyStatus};
use ribbridge::frr::vty::json::{
    parse_advertised, parse_route_table, parse_summary, table_mode_from_config,
};
use ribbridge::frr::vty::scan::{KeyScan, KeysOf};
use ribbridge::frr::zapi::codec::{
    Command, Dialect, Frame, FrameCodec, Gateway, Numbering, ZapiRoute,
};
use ribbridge::model::{Prefix, PrefixSet};
use tokio_util::codec::Decoder;

fn dialect(release: &str) -> (Release, Dialect) {
    let v = vty_reply(release, "show-version");
    assert_eq!(v.status, VtyStatus::Success);
    let r = Release::from_show_version(&v.text).unwrap();
    assert_eq!(r.to_string(), release);
    let d = r.dialect().unwrap();
    (r, d)
}

fn decode_all(bytes: &[u8], chunk: usize) -> Vec<Frame> {
    let mut codec = FrameCodec;
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    for c in bytes.chunks(chunk) {
        buf.extend_from_slice(c);
        while let Some(f) = codec.decode(&mut buf).unwrap() {
            out.push(f);
        }
    }
    assert!(buf.is_empty());
    out
}

fn route_at(release: &str, step: &str) -> ZapiRoute {
    let (_, d) = dialect(release);
    let raw = frames(release)
        .into_iter()
        .find(|f| f.step == step)
        .unwrap_or_else(|| panic!("{release}: no frame for step {step}"))
        .bytes;
    let f = decode_all(&raw, raw.len()).remove(0);
    d.decode_route(&f).unwrap()
}

/// The numbering table and weight width each captured release's `show
/// version` selects (docs/ZAPI.md's table): what the other golden tests
/// decode with.
#[test]
fn captured_releases_select_their_numbering_table() {
    for (rel, numbering, weight_u64) in [
        ("8.4.4", Numbering::V8_2, false),
        ("10.3", Numbering::V10_3, true),
        ("10.7.1", Numbering::V10_3, true),
    ] {
        let (_, d) = dialect(rel);
        assert_eq!(
            (d.numbering, d.weight_u64),
            (numbering, weight_u64),
            "{rel}"
        );
    }
}

#[test]
fn every_captured_frame_decodes_and_route_frames_reencode_exactly() {
    for rel in RELEASES {
        let (_, d) = dialect(rel);
        let fr = frames(rel);
        let stream: Vec<u8> = fr.iter().flat_map(|f| f.bytes.clone()).collect();
        // The same frames whatever the read boundaries.
        let whole = decode_all(&stream, stream.len());
        for chunk in [1, 3, 10, 64] {
            assert_eq!(decode_all(&stream, chunk), whole, "{rel} chunk {chunk}");
        }
        assert_eq!(whole.len(), fr.len());
        let mut routes = 0;
        for (
            CapturedFrame {
                step,
                command: cmd,
                bytes: raw,
            },
            f,
        ) in fr.iter().zip(&whole)
        {
            assert_eq!(f.command, *cmd, "{rel} {step}");
            match d.command_of(f.command) {
                Some(c @ (Command::RedistributeRouteAdd | Command::RedistributeRouteDel)) => {
                    let r = d
                        .decode_route(f)
                        .unwrap_or_else(|e| panic!("{rel} {step}: {e}"));
                    let again = d
                        .encode_route(c == Command::RedistributeRouteAdd, &r)
                        .unwrap();
                    let mut bytes = BytesMut::new();
                    tokio_util::codec::Encoder::encode(&mut FrameCodec, again, &mut bytes).unwrap();
                    assert_eq!(&bytes[..], &raw[..], "{rel} {step}: re-encoding differs");
                    routes += 1;
                }
                Some(Command::Capabilities | Command::VrfAdd) => {}
                other => panic!("{rel} {step}: unexpected command {cmd} ({other:?})"),
            }
        }
        assert!(routes >= 6, "{rel}: only {routes} route frames");
    }
}

#[test]
fn single_path_route_weight_follows_the_flag_per_release() {
    let r = route_at("8.4.4", "add_single_v4");
    assert_eq!((r.route_type, r.instance, r.distance), (15, 198, Some(15)));
    assert_eq!(r.prefix, "192.0.2.10/32".parse::<Prefix>().unwrap());
    assert_eq!(r.nexthops.len(), 1);
    assert_eq!(r.nexthops[0].gateway, Gateway::Ifindex { ifindex: 1 });
    // 8.4 builds single-path kernel nexthops with weight 0: no field at all.
    assert_eq!(r.nexthops[0].weight, None);
    for rel in ["10.3", "10.7.1"] {
        let r = route_at(rel, "add_single_v4");
        assert_eq!((r.route_type, r.instance, r.distance), (31, 198, Some(14)));
        // From 10.2 the weight is always there, and a u64 from 10.1.
        assert_eq!(r.nexthops[0].weight, Some(1), "{rel}");
    }
}

#[test]
fn ecmp_metric_and_ipv6_routes_carry_every_field() {
    for rel in RELEASES {
        let r = route_at(rel, "add_ecmp2_v4");
        let gates: Vec<Option<IpAddr>> = r.nexthops.iter().map(|n| n.gateway.addr()).collect();
        assert_eq!(
            gates,
            vec![
                Some("198.18.1.1".parse().unwrap()),
                Some("198.18.1.3".parse().unwrap())
            ],
            "{rel}"
        );
        assert!(r.nexthops.iter().all(|n| n.weight == Some(1)), "{rel}");
        let m = route_at(rel, "add_gw_v4_metric");
        assert_eq!((m.metric, m.mtu, m.tag), (Some(77), Some(0), None), "{rel}");
        let del = route_at(rel, "del_single_v4");
        assert_eq!(del.prefix, "192.0.2.10/32".parse::<Prefix>().unwrap());
    }
    for rel in ["10.3", "10.7.1"] {
        let r = route_at(rel, "add_single_v6");
        assert_eq!(r.prefix, "2001:db8::10/128".parse::<Prefix>().unwrap());
        assert_eq!(
            r.metric,
            Some(1024),
            "{rel}: the kernel's IPv6 default metric"
        );
        let e = route_at(rel, "add_ecmp2_v6");
        assert_eq!(e.nexthops.len(), 2, "{rel}");
        assert!(matches!(e.nexthops[1].gateway, Gateway::Ipv6 { .. }));
    }
}

#[test]
fn vty_replies_parse_into_typed_views() {
    for rel in RELEASES {
        let sum = vty_reply(rel, "summary-ipv4");
        assert_eq!(sum.status, VtyStatus::Success);
        let s = parse_summary(&sum.text).unwrap();
        assert!(s.peers["198.18.1.1"].is_established(), "{rel}");
        let s6 = parse_summary(&vty_reply(rel, "summary-ipv6").text).unwrap();
        assert!(s6.peers["fdbb:0:0:1::1"].is_established(), "{rel}");

        let adv = parse_advertised(&vty_reply(rel, "advertised-ipv4").text).unwrap();
        assert!(
            adv.prefixes.contains(&"192.0.2.10/32".parse().unwrap()),
            "{rel}: {adv:?}"
        );
        parse_advertised(&vty_reply(rel, "advertised-ipv6").text).unwrap();

        let t = parse_route_table(&vty_reply(rel, "route-table-198-ipv4").text).unwrap();
        let ecmp = &t[&"192.0.2.40/32".parse::<Prefix>().unwrap()][0];
        assert_eq!(ecmp.protocol, "kernel");
        assert!(ecmp.selected && ecmp.installed, "{rel}");
        assert_eq!(ecmp.nexthops.len(), 2);
        parse_route_table(&vty_reply(rel, "route-table-198-ipv6").text).unwrap();

        let run = vty_reply(rel, "bgpd-running-config");
        assert_eq!(run.status, VtyStatus::Success, "{rel}: needs enable first");
        let want = if rel == "8.4.4" {
            TableMode::ImportTable
        } else {
            TableMode::TableDirect
        };
        assert_eq!(table_mode_from_config(&run.text, 198), Some(want), "{rel}");
    }
}

/// The captured replies streamed through the codec into a key scan, in
/// chunks of several sizes (a socket read may end anywhere, the trailer
/// included), give the same prefixes as the typed parse of the whole text;
/// the decoded reply is only the head kept for error messages.
#[test]
fn captured_replies_streamed_in_chunks_give_the_typed_prefixes() {
    let cases = [
        ("route-table-198-ipv4", KeysOf::TopLevel),
        ("route-table-198-ipv6", KeysOf::TopLevel),
        ("advertised-ipv4", KeysOf::Member("advertisedRoutes")),
        ("advertised-ipv6", KeysOf::Member("advertisedRoutes")),
    ];
    for rel in RELEASES {
        for (name, keys) in cases {
            let whole = vty_reply(rel, name).text;
            let want: PrefixSet = match keys {
                KeysOf::TopLevel => parse_route_table(&whole).unwrap().into_keys().collect(),
                KeysOf::Member(_) => parse_advertised(&whole).unwrap().prefixes,
            };
            if name == "route-table-198-ipv4" || name == "advertised-ipv4" {
                assert!(!want.is_empty(), "{rel} {name}: the capture holds routes");
            }
            let raw = vty_raw(rel, name);
            for chunk in [1, 3, 7, 64, 4096] {
                let mut codec = VtyCodec::default();
                codec.stream_into(KeyScan::new(keys));
                let mut buf = BytesMut::new();
                let mut reply = None;
                for piece in raw.chunks(chunk) {
                    assert!(reply.is_none(), "{rel} {name}: bytes after the trailer");
                    buf.extend_from_slice(piece);
                    reply = codec.decode(&mut buf).unwrap();
                    assert!(buf.len() < chunk + 4, "{rel} {name}: the text was held");
                }
                let reply = reply.unwrap();
                assert_eq!(reply.status, VtyStatus::Success);
                assert!(whole.starts_with(&reply.text), "{rel} {name}: the head");
                let got = codec.take_scan().unwrap().finish().unwrap();
                assert_eq!(got, want, "{rel} {name} in chunks of {chunk}");
            }
        }
    }
}
