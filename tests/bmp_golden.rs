//! Golden tests on what FRR 8.4, 10.3 and 10.7 really send a BMP station:
//! tests/data/bmp/<release>/session<N>.bin, recorded by
//! tests/data/bmp/capture.sh (README.md there; docs/BMP.md describes them).
//! Session 1: a starting bgpd (the VIP on both nodes), a withdraw and
//! re-add on node 1; session 2: the station reconnects to the running
//! router (table dump, End-of-RIB), node 2's bgpd is killed, the router's
//! bgpd stops (SIGTERM); session 3: the router's bgpd starts again.
//!
//! Each session's decoded messages, one line each, are compared with
//! `session<N>.txt` beside the capture; `RIBBRIDGE_BLESS=1 cargo test
//! --test bmp_golden` rewrites those (review the diff: it is FRR's
//! behaviour). The view's counts along each session are asserted here.

use std::path::PathBuf;

use bytes::{Bytes, BytesMut};
use ribbridge::bmp::build::{self, PeerHeader, as_path, attr, mandatory, next_hop, origin};
use ribbridge::bmp::{BmpCodec, Decoder, EndOfRib, Message, Skipped, View};
use ribbridge::model::{Family, Prefix};
use tokio_util::codec::Decoder as _;

fn capture(release: &str, session: u32) -> Vec<Message> {
    capture_with(release, session, &[])
}

/// The capture's messages, with `extra` frames decoded after each of its
/// Route Monitoring frames.
fn capture_with(release: &str, session: u32, extra: &[Bytes]) -> Vec<Message> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(format!("tests/data/bmp/{release}/session{session}.bin"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut buf = BytesMut::from(&bytes[..]);
    let mut codec = BmpCodec::default();
    let mut decoder = Decoder::new();
    let mut out = Vec::new();
    while let Some(frame) = codec.decode_eof(&mut buf).expect("a whole BMP stream") {
        let route = frame.get(5) == Some(&0);
        out.push(decoder.decode(frame).expect("every FRR message decodes"));
        if route {
            for f in extra {
                out.push(
                    decoder
                        .decode(f.clone())
                        .expect("every extra frame decodes"),
                );
            }
        }
    }
    out
}

/// One line per message, Stats folded into a count per run.
fn summary(msgs: &[Message]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for m in msgs {
        let line = match m {
            Message::Initiation { sys_name, .. } => {
                format!("init {}", sys_name.as_deref().unwrap_or("-"))
            }
            Message::PeerUp { peer, loc_rib, .. } => {
                format!(
                    "up {}{}",
                    peer.address,
                    if *loc_rib { " loc-rib" } else { "" }
                )
            }
            Message::PeerDown { peer, .. } => format!("down {}", peer.address),
            Message::Route {
                peer,
                rib,
                announced,
                withdrawn,
                end_of_rib,
                skipped,
                anomalies,
                ..
            } => {
                let mut l = format!("{rib} {}", peer.address);
                for p in announced {
                    l += &format!(" +{}", p.prefix);
                }
                for p in withdrawn {
                    l += &format!(" -{}", p.prefix);
                }
                match end_of_rib {
                    Some(EndOfRib::Unicast(Family::Ipv4)) => l += " eor-ipv4",
                    Some(EndOfRib::Unicast(Family::Ipv6)) => l += " eor-ipv6",
                    Some(EndOfRib::Other { afi, safi }) => l += &format!(" eor-{afi}/{safi}"),
                    None => {}
                }
                for s in skipped {
                    l += &format!(" skipped-{}/{}x{}", s.afi, s.safi, s.count);
                }
                for a in anomalies {
                    l += &format!(" anomaly ({a})");
                }
                l
            }
            Message::Stats { .. } => "stats".to_string(),
            Message::Termination { reason } => format!("termination {reason}"),
            Message::Ignored { kind } => format!("ignored {kind}"),
        };
        out.push(line);
    }
    out
}

fn vips() -> [Prefix; 2] {
    [
        "192.0.2.10/32".parse().expect("vip"),
        "2001:db8::10/128".parse().expect("vip"),
    ]
}

/// The view's (IPv4 VIP, IPv6 VIP) counts each time one changes, ending
/// with the session closed.
fn trace(msgs: &[Message]) -> Vec<(Option<u32>, Option<u32>)> {
    let [v4, v6] = vips();
    let mut view = View::new(vips());
    view.session_up("r");
    let mut out = vec![(None, None)];
    let step = |view: &View, out: &mut Vec<_>| {
        let now = (view.paths("r", &v4), view.paths("r", &v6));
        if out.last() != Some(&now) {
            out.push(now);
        }
    };
    for m in msgs {
        let changed = view.apply("r", m);
        let before = *out.last().expect("non-empty");
        step(&view, &mut out);
        assert_eq!(
            !changed.is_empty(),
            before != *out.last().expect("non-empty"),
            "apply reports a change exactly when a count changed ({m:?})"
        );
    }
    view.session_down("r");
    step(&view, &mut out);
    out
}

const RELEASES: [&str; 3] = ["8.4", "10.3", "10.7"];

#[test]
fn every_capture_decodes_to_its_golden_sequence() {
    let bless = std::env::var_os("RIBBRIDGE_BLESS").is_some_and(|v| v == "1");
    for r in RELEASES {
        for s in 1..=3 {
            let lines = summary(&capture(r, s)).join("\n") + "\n";
            let golden = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join(format!("tests/data/bmp/{r}/session{s}.txt"));
            if bless {
                std::fs::write(&golden, &lines).expect("write golden");
                continue;
            }
            let want = std::fs::read_to_string(&golden).unwrap_or_else(|e| {
                panic!("{}: {e} (RIBBRIDGE_BLESS=1 writes it)", golden.display())
            });
            assert_eq!(
                lines,
                want,
                "FRR {r} session {s} differs from {}",
                golden.display()
            );
        }
    }
}

#[test]
fn every_release_opens_with_initiation_naming_the_router_and_never_terminates() {
    for r in RELEASES {
        for s in 1..=3 {
            let msgs = capture(r, s);
            match msgs.first() {
                Some(Message::Initiation {
                    sys_name: Some(name),
                    sys_descr: Some(descr),
                }) => {
                    assert_eq!(name, "rb-router");
                    assert!(descr.starts_with(&format!("FRRouting {r}")), "{descr}");
                }
                other => panic!("FRR {r} session {s} opens with {other:?}"),
            }
            // bgpd stopping (SIGTERM in session 2, SIGKILL in 3) just closes.
            assert!(
                !msgs
                    .iter()
                    .any(|m| matches!(m, Message::Termination { .. })),
                "FRR {r} sent a Termination"
            );
            assert!(msgs.iter().any(|m| matches!(m, Message::Stats { .. })));
        }
    }
}

/// FRR's default is graceful restart helper only: its OPENs carry the
/// capability with no family, so no session negotiates retention and every
/// Peer Down removes the peer's paths (node 2's bgpd killed in session 2:
/// reason 4, the peer closed the session without a NOTIFICATION).
#[test]
fn frr_helper_only_sessions_negotiate_no_retention() {
    for r in RELEASES {
        for s in 1..=3 {
            for m in capture(r, s) {
                match m {
                    Message::PeerUp {
                        graceful_restart, ..
                    } => assert_eq!(graceful_restart, None, "FRR {r} session {s}"),
                    Message::PeerDown {
                        reason_code,
                        notification,
                        ..
                    } => {
                        assert!(matches!(reason_code, 2 | 4), "FRR {r} session {s}");
                        assert_eq!(notification, None, "FRR {r} session {s}");
                    }
                    _ => {}
                }
            }
        }
    }
}

/// A starting router (session 1): known at its first Peer Down (nothing
/// established), then 1, 2 paths as the nodes' sessions come up, 1 on the
/// withdraw on node 1, 2 on the re-add, unknown once the session closes.
#[test]
fn a_starting_router_counts_live_routes() {
    let (u, k) = (None, Some);
    assert_eq!(
        trace(&capture("8.4", 1)),
        vec![
            (u, u),
            (k(0), k(0)),
            (k(1), k(0)),
            (k(2), k(0)),
            (k(1), k(0)),
            (k(2), k(0)),
            (u, u)
        ]
    );
    for r in ["10.3", "10.7"] {
        let t = trace(&capture(r, 1));
        assert_eq!(t.first(), Some(&(u, u)));
        assert_eq!(t.get(1), Some(&(k(0), k(0))), "FRR {r}");
        // The IPv4 VIP's walk, whatever the IPv6 one interleaves.
        let mut v4: Vec<_> = t.iter().map(|(a, _)| *a).collect();
        v4.dedup();
        assert_eq!(v4, vec![u, k(0), k(1), k(2), k(1), k(2), u], "FRR {r}");
        assert_eq!(t[t.len() - 2], (k(2), k(2)), "FRR {r}");
        assert_eq!(t.last(), Some(&(u, u)));
    }
}

/// The station reconnecting to a running router (session 2): unknown until
/// each family's End-of-RIB, then 2; node 2's Peer Down leaves 1.
#[test]
fn a_running_router_is_known_at_end_of_rib_and_follows_peer_down() {
    let (u, k) = (None, Some);
    assert_eq!(
        trace(&capture("8.4", 2)),
        vec![(u, u), (k(2), u), (k(2), k(0)), (k(1), k(0)), (u, u)]
    );
    for r in ["10.3", "10.7"] {
        assert_eq!(
            trace(&capture(r, 2)),
            vec![
                (u, u),
                (k(2), u),
                (k(2), k(2)),
                (k(2), k(1)),
                (k(1), k(1)),
                (u, u)
            ],
            "FRR {r}"
        );
    }
}

/// The router's bgpd restarted with node 2 gone (session 3): one path.
#[test]
fn a_restarted_router_counts_the_remaining_node() {
    let (u, k) = (None, Some);
    assert_eq!(
        trace(&capture("8.4", 3)),
        vec![(u, u), (k(0), k(0)), (k(1), k(0)), (u, u)]
    );
    for r in ["10.3", "10.7"] {
        assert_eq!(
            trace(&capture(r, 3)),
            vec![(u, u), (k(0), k(0)), (k(1), k(0)), (k(1), k(1)), (u, u)],
            "FRR {r}"
        );
    }
}

// ---- Route Monitoring of other families, as IOS XR, VRP and Junos send ----

/// A post-policy Route Monitoring frame from peer 198.18.1.2 (4-byte AS)
/// carrying the UPDATE body `update` (withdrawn, attributes, NLRI).
fn route_monitoring(update: &[u8]) -> Bytes {
    build::route_monitoring(&PeerHeader::global([198, 18, 1, 2]).post_policy(), update)
}

/// A Route Monitoring message of peer type `peer_type` (0 global, 3
/// Loc-RIB) with the per-peer `flags` from IPv4 `peer`.
fn route_monitoring_from(peer_type: u8, flags: u8, peer: [u8; 4], update: &[u8]) -> Bytes {
    let header = PeerHeader {
        peer_type,
        flags,
        ..PeerHeader::global(peer)
    };
    build::route_monitoring(&header, update)
}

/// A VPNv4 announcement: 12-byte next hop (RD 0 + IPv4), label + RD + prefix.
fn vpnv4_reach() -> Vec<u8> {
    let mut v = vec![0, 1, 128, 12, 0, 0, 0, 0, 0, 0, 0, 0, 198, 18, 1, 2, 0];
    v.extend_from_slice(&[112, 0x00, 0x3e, 0x81, 0, 1, 0xfc, 0, 0, 0, 0, 7, 192, 0, 2]);
    attr(0x90, 14, &v)
}

/// Frames of families the station does not count: VPNv4, EVPN (a type 2
/// route), their End-of-RIBs, and a BGP-LS withdraw.
fn other_families() -> Vec<Bytes> {
    let mut evpn2 = vec![0, 25, 70, 4, 198, 18, 1, 2, 0, 2, 33];
    evpn2.extend_from_slice(&[0, 1, 0xfc, 0, 0, 0, 0, 7]);
    evpn2.extend_from_slice(&[0; 14]);
    evpn2.extend_from_slice(&[48, 2, 0, 0, 0, 0, 1, 0, 0x00, 0x3e, 0x81]);
    vec![
        route_monitoring(&build::update(
            &[],
            &[mandatory(), vpnv4_reach()].concat(),
            &[],
        )),
        route_monitoring(&build::update(
            &[],
            &[mandatory(), attr(0x90, 14, &evpn2)].concat(),
            &[],
        )),
        route_monitoring(&build::update(
            &[],
            &attr(0x90, 15, &[0x40, 4, 72, 0, 1, 0, 0]),
            &[],
        )),
        route_monitoring(&build::update(&[], &attr(0x90, 15, &[0, 1, 128]), &[])),
        route_monitoring(&build::update(&[], &attr(0x90, 15, &[0, 25, 70]), &[])),
    ]
}

/// VPN, EVPN and BGP-LS routes and End-of-RIBs after every route of a
/// captured session change no count: the view walks as on FRR alone.
#[test]
fn other_families_between_captured_routes_change_no_count() {
    let extra = other_families();
    for r in RELEASES {
        for s in 1..=3 {
            let plain = capture(r, s);
            let mixed = capture_with(r, s, &extra);
            assert!(mixed.len() > plain.len(), "FRR {r} session {s}");
            assert_eq!(trace(&mixed), trace(&plain), "FRR {r} session {s}");
        }
    }
    let d: Vec<String> = summary(
        &extra
            .iter()
            .map(|f| ribbridge::bmp::decode(f.clone()).expect("decodes"))
            .collect::<Vec<_>>(),
    );
    assert_eq!(
        d,
        [
            "adj-rib-in-post 198.18.1.2 skipped-1/128x1",
            "adj-rib-in-post 198.18.1.2 skipped-25/70x1",
            "adj-rib-in-post 198.18.1.2 skipped-16388/72x1",
            "adj-rib-in-post 198.18.1.2 eor-1/128 skipped-1/128x1",
            "adj-rib-in-post 198.18.1.2 eor-25/70 skipped-25/70x1",
        ]
    );
}

/// A VPNv4 route and an IPv4 VIP in one UPDATE: the VIP is counted; an
/// UPDATE without ORIGIN still announces it, with the anomaly named (a
/// station mirrors what the router holds; RFC 7606's treat-as-withdraw is
/// a BGP speaker's).
#[test]
fn a_vip_next_to_a_vpn_route_is_counted_and_a_missing_origin_keeps_it() {
    let [v4, _] = vips();
    let vip_nlri = [32, 192, 0, 2, 10];
    let mut view = View::new([v4]);
    view.session_up("r");
    let mut d = Decoder::new();
    let announce = route_monitoring(&build::update(
        &[],
        &[mandatory(), vpnv4_reach()].concat(),
        &vip_nlri,
    ));
    match d.decode(announce).expect("decodes") {
        m @ Message::Route { .. } => {
            let Message::Route {
                announced, skipped, ..
            } = &m
            else {
                unreachable!()
            };
            assert_eq!(announced.len(), 1);
            assert_eq!(
                skipped,
                &[Skipped {
                    afi: 1,
                    safi: 128,
                    count: 1
                }]
            );
            view.apply("r", &m);
        }
        other => panic!("{other:?}"),
    }
    view.apply(
        "r",
        &d.decode(route_monitoring(&build::update(&[], &[], &[])))
            .expect("EoR"),
    );
    assert_eq!(view.paths("r", &v4), Some(1));
    let no_origin = [as_path(), next_hop(), vpnv4_reach()].concat();
    let m = d
        .decode(route_monitoring(&build::update(&[], &no_origin, &vip_nlri)))
        .expect("an anomaly is not an error");
    assert_eq!(
        summary(std::slice::from_ref(&m)),
        ["adj-rib-in-post 198.18.1.2 +192.0.2.10/32 skipped-1/128x1 anomaly (ORIGIN missing)"]
    );
    view.apply("r", &m);
    assert_eq!(view.paths("r", &v4), Some(1));
}

/// 6WIND vSR's and FRR 8.0.1's encoding: post-policy Adj-RIB-In
/// from two peers and the Loc-RIB, every UPDATE with ORIGIN, AS_PATH and
/// the VIP in the NLRI field and no NEXT_HOP. Both peers hold the VIP: 2
/// paths (the station counted 0 while it treated them as withdrawn).
#[test]
fn routes_without_next_hop_count_the_peers_that_hold_them() {
    let [v4, _] = vips();
    let vip_nlri = [32, 192, 0, 2, 10];
    let no_next_hop = [origin(), as_path()].concat();
    let mut view = View::new([v4]);
    view.session_up("r");
    let mut d = Decoder::new();
    let frames = [
        route_monitoring_from(
            0,
            0x40,
            [198, 18, 1, 2],
            &build::update(&[], &no_next_hop, &vip_nlri),
        ),
        route_monitoring_from(
            0,
            0x40,
            [198, 18, 2, 2],
            &build::update(&[], &no_next_hop, &vip_nlri),
        ),
        route_monitoring_from(3, 0, [0; 4], &build::update(&[], &no_next_hop, &vip_nlri)),
    ];
    let msgs: Vec<Message> = frames
        .into_iter()
        .map(|f| d.decode(f).expect("an anomaly is not an error"))
        .collect();
    assert_eq!(
        summary(&msgs),
        [
            "adj-rib-in-post 198.18.1.2 +192.0.2.10/32 anomaly (NEXT_HOP missing)",
            "adj-rib-in-post 198.18.2.2 +192.0.2.10/32 anomaly (NEXT_HOP missing)",
            "loc-rib 0.0.0.0 +192.0.2.10/32 anomaly (NEXT_HOP missing)",
        ]
    );
    for m in &msgs {
        view.apply("r", m);
    }
    assert_eq!(view.paths("r", &v4), Some(2), "post-policy: two peers");
}
