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

use bytes::BytesMut;
use ribbridge::bmp::{BmpCodec, Decoder, EndOfRib, Family, Message, View};
use ribbridge::model::Prefix;
use tokio_util::codec::Decoder as _;

fn capture(release: &str, session: u32) -> Vec<Message> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(format!("tests/data/bmp/{release}/session{session}.bin"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut buf = BytesMut::from(&bytes[..]);
    let mut codec = BmpCodec::default();
    let mut decoder = Decoder::new();
    let mut out = Vec::new();
    while let Some(frame) = codec.decode_eof(&mut buf).expect("a whole BMP stream") {
        out.push(decoder.decode(frame).expect("every FRR message decodes"));
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
                treat_as_withdraw,
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
                if let Some(r) = treat_as_withdraw {
                    l += &format!(" treat-as-withdraw ({r})");
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
