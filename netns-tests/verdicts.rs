//! ribbridge's verdicts against the real bgpd, on the lab's sessions (one
//! per family: `neighbor 198.18.1.1` activated in IPv4 unicast only,
//! `neighbor fdbb:0:0:1::1` in IPv6 unicast only).
//!
//! - An outbound route-map on node1's IPv4 neighbour that denies one IPv4
//!   VIP (a prefix-list deny entry, then `permit 0.0.0.0/0 le 32`): bgpd
//!   sends it to nobody, and ribbridge in repair mode calls it `filtered`
//!   (the IPv6 session, which does not carry IPv4, is no peer of it):
//!   sent to 0 of 1 peer, a permitted VIP beside it to 1 of 1, no drift,
//!   no heal action, through bgpd's route-map delay timer and beyond.
//! - One join: `ribbridge status --oneshot` and a running daemon (observe
//!   mode, the same settings) read the same lab states and every field of
//!   every VIP agrees but the history only a reader over time has (`since`,
//!   when the state began; the writer's last beat): advertised,
//!   filtered, withdrawn, blackhole and kernel_only on 10.7, and
//!   not_redistributed on 8.4 (its import dropped by a realm replace).
//!
//! Every wait is on a state with a limit that fails the test; the one
//! window (no drift during bgpd's route-map delay and the core's grace
//! after it) is an observation, not a threshold. Costs ~45 s on 10.7 and
//! ~25 s on 8.4.

use std::time::{Duration, Instant};

use crate::support::daemon::Daemon;
use crate::support::{Lab, class_of, lab, metric_sum, vip_of};
use ribbridge::reconcile::Class;
use ribbridge::status::{StatusDoc, VipStatus};

/// A VIP every policy permits.
const PERMITTED: &str = "192.0.2.12/32";
/// A VIP node1's IPv4 neighbour's outbound route-map denies.
const DENIED: &str = "192.0.2.11/32";
/// A VIP written without its address: `blackhole` where the address is
/// required.
const NO_ADDRESS: &str = "192.0.2.13/32";
/// The VIP of the drift setups (support's triggers use it).
const RACED: &str = "192.0.2.10/32";
/// bgpd's route-map delay timer (its default) and the core's 2 s bgp grace
/// after it: a drift of a configuration change shows within this.
const SETTLE: Duration = Duration::from_secs(5 + 2 + 1);
const LIMIT: Duration = Duration::from_secs(30);

/// node1's IPv4 neighbour's outbound policy: deny `DENIED`, permit the rest.
const OUT_DENY: [&str; 8] = [
    "configure terminal",
    "ip prefix-list RB-TEST-OUT seq 5 deny 192.0.2.11/32",
    "ip prefix-list RB-TEST-OUT seq 10 permit 0.0.0.0/0 le 32",
    "route-map RB-TEST-OUT permit 10",
    "match ip address prefix-list RB-TEST-OUT",
    "router bgp 64512",
    "address-family ipv4 unicast",
    "neighbor 198.18.1.1 route-map RB-TEST-OUT out",
];

fn vtysh(ns: &str, cmds: &[&str]) -> String {
    let mut args = vec!["vtysh", ns];
    args.extend(cmds);
    lab(&args)
}

/// (sent, established) over a VIP's peers: the table's `SENT/PEERS`.
fn sent_of(v: &VipStatus) -> (usize, usize) {
    (
        v.peers.iter().filter(|p| p.sent).count(),
        v.peers.iter().filter(|p| p.established).count(),
    )
}

/// Poll the daemon's `/status` until every `(vip, class)` holds; the last
/// document. Fails with it after `LIMIT`.
async fn until_states(d: &Daemon, want: &[(&str, Class)]) -> StatusDoc {
    let t0 = Instant::now();
    loop {
        let (doc, _) = d.status().await;
        let holds = doc.ready
            && want.iter().all(|(vip, c)| {
                doc.vips
                    .iter()
                    .any(|v| v.prefix.to_string() == *vip && v.state == *c)
            });
        if holds {
            return doc;
        }
        assert!(
            t0.elapsed() < LIMIT,
            "{want:?} not reached in {LIMIT:?}: {doc:#?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `ribbridge status --oneshot --json` in `ns` with the daemon's settings
/// (`flags`); (document, exit code).
async fn oneshot(the_lab: &Lab, ns: &str, flags: &[&str]) -> (StatusDoc, i32) {
    let out = tokio::process::Command::new("ip")
        .args(["netns", "exec", ns])
        .arg(env!("CARGO_BIN_EXE_ribbridge"))
        .args(["status", "--oneshot", "--json", "--frr-dir"])
        .arg(the_lab.sockdir(ns))
        .args(flags)
        .output()
        .await
        .expect("ribbridge status --oneshot");
    let doc = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "status --oneshot --json is not a document ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (doc, out.status.code().unwrap_or(-1))
}

/// Every field of every VIP of the two documents agrees but what only a
/// reader over time sees (when the state began, each reader's own; the
/// writer's last beat, which the daemon saw and a one-shot read cannot),
/// and so do the readiness, the release, the mode and the exit codes.
fn same_join(daemon: &(StatusDoc, i32), once: &(StatusDoc, i32)) {
    let (d, dc) = daemon;
    let (o, oc) = once;
    assert_eq!(
        (d.ready, &d.frr_release, &d.mode, d.vantage),
        (o.ready, &o.frr_release, &o.mode, o.vantage)
    );
    let strip = |doc: &StatusDoc| -> Vec<VipStatus> {
        doc.vips
            .iter()
            .cloned()
            .map(|mut v| {
                v.since = String::new();
                if let Some(w) = v.writer.as_mut() {
                    w.last = None;
                }
                v
            })
            .collect()
    };
    assert_eq!(
        strip(d),
        strip(o),
        "the daemon's and the one-shot's joins differ:\ndaemon {d:#?}\none-shot {o:#?}"
    );
    assert_eq!(dc, oc, "exit codes");
    println!(
        "one join: {} VIPs agree ({}), exit {dc}",
        d.vips.len(),
        d.vips
            .iter()
            .map(|v| format!("{} {}", v.prefix, v.state.name()))
            .collect::<Vec<_>>()
            .join(", ")
    );
}

/// FRRouting/frr#22654 on node1's `RACED`: its route and address in one
/// netlink batch until zebra loses the route (`kernel_only`); a batch zebra
/// happened to handle in time is undone and tried again, at most 5 times.
/// Only the lines of `RACED` count (the others' are in the log too).
async fn kernel_only(d: &mut Daemon) {
    use crate::support::{ROUTE_THEN_ADDRESS, UNDO};
    let of = |what: &str| format!("{what} && prefix={RACED} ");
    for tries in 1..=5 {
        d.drain();
        lab(&["exec", "rb-node1", "sh", "-c", ROUTE_THEN_ADDRESS]);
        let (lost, _) = d
            .wait_either(
                &of("VIP drift && to=kernel_only"),
                &of("to=advertised"),
                Duration::from_secs(5),
            )
            .await;
        if lost {
            println!("kernel_only reproduced in {tries} tries");
            return;
        }
        lab(&["exec", "rb-node1", "sh", "-c", UNDO]);
        d.wait_log(&of("to=withdrawn"), Duration::from_secs(5))
            .await;
    }
    panic!("zebra did not lose {RACED} in 5 tries");
}

#[tokio::test(flavor = "multi_thread")]
async fn per_family_peers_and_one_join_frr_10_7() {
    let the_lab = Lab::up("10.7", 1, &[RACED, DENIED, PERMITTED, NO_ADDRESS]);
    vtysh("rb-node1", &OUT_DENY);
    let changed = Instant::now();
    for v in [DENIED, PERMITTED] {
        lab(&["vip-add", "rb-node1", v, "--route-only"]);
    }

    // Repair mode: the denied VIP is filtered and never healed.
    let vips = ["--vip", DENIED, "--vip", PERMITTED];
    let mut args = vec!["--mode", "repair"];
    args.extend(vips);
    let mut d = Daemon::start(&the_lab, "rb-node1", &args).await;
    let doc = until_states(
        &d,
        &[(DENIED, Class::Filtered), (PERMITTED, Class::Advertised)],
    )
    .await;
    let denied = vip_of(&doc, DENIED);
    assert_eq!(sent_of(denied), (0, 1), "{denied:?}");
    assert_eq!(
        denied
            .peers
            .iter()
            .map(|p| p.peer.as_str())
            .collect::<Vec<_>>(),
        ["198.18.1.1"],
        "only the IPv4 session is an IPv4 VIP's peer"
    );
    assert!(
        denied
            .policy
            .as_deref()
            .is_some_and(|p| p.contains("RB-TEST-OUT")),
        "{denied:?}"
    );
    assert_eq!(sent_of(vip_of(&doc, PERMITTED)), (1, 1));
    // Through bgpd's route-map delay timer and the core's grace after it.
    let window = SETTLE.saturating_sub(changed.elapsed()) + Duration::from_secs(2);
    let drift = d.try_wait_log("VIP drift", window).await;
    assert!(drift.is_none(), "a drift: {drift:?}");
    let (doc, code) = d.status().await;
    assert_eq!(class_of(&doc, DENIED), Class::Filtered);
    assert_eq!(code, 0, "filtered and advertised are no drift");
    let m = d.metrics().await;
    for name in [
        "ribbridge_drift_total",
        "ribbridge_heal_actions_total",
        "ribbridge_heal_given_up_total",
    ] {
        assert_eq!(metric_sum(&m, name), 0.0, "{name}:\n{m}");
    }
    println!(
        "per-family peers: {DENIED} filtered, sent 0/1; {PERMITTED} advertised, sent 1/1; \
         0 drift, 0 heal actions over {window:?}"
    );
    d.stop().await;

    // One join: the daemon in observe mode, the address required.
    let flags = [
        "--require-address",
        "true",
        "--vip",
        RACED,
        "--vip",
        DENIED,
        "--vip",
        PERMITTED,
        "--vip",
        NO_ADDRESS,
    ];
    for v in [DENIED, PERMITTED] {
        let addr = v.trim_end_matches("/32");
        lab(&[
            "exec",
            "rb-node1",
            "ip",
            "address",
            "add",
            &format!("{addr}/32"),
            "dev",
            "lo",
        ]);
    }
    lab(&["vip-add", "rb-node1", NO_ADDRESS, "--route-only"]);
    let mut args = vec!["--mode", "observe"];
    args.extend(flags);
    let mut d = Daemon::start(&the_lab, "rb-node1", &args).await;
    let settled = [
        (RACED, Class::Withdrawn),
        (DENIED, Class::Filtered),
        (PERMITTED, Class::Advertised),
        (NO_ADDRESS, Class::Blackhole),
    ];
    until_states(&d, &settled).await;
    same_join(
        &d.status().await,
        &oneshot(&the_lab, "rb-node1", &flags).await,
    );

    // zebra's lost route (FRRouting/frr#22654: route and address in one
    // netlink batch): kernel_only, which observe mode leaves.
    kernel_only(&mut d).await;
    let mut settled = settled;
    settled[0] = (RACED, Class::KernelOnly);
    until_states(&d, &settled).await;
    same_join(
        &d.status().await,
        &oneshot(&the_lab, "rb-node1", &flags).await,
    );
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn one_join_through_a_dropped_import_frr_8_4() {
    let the_lab = Lab::up("8.4", 1, &[RACED]);
    let flags = ["--require-address", "false", "--vip", RACED];
    let mut args = vec!["--mode", "observe"];
    args.extend(flags);
    let mut d = Daemon::start(&the_lab, "rb-node1", &args).await;
    lab(&["vip-add", "rb-node1", RACED, "--route-only"]);
    until_states(&d, &[(RACED, Class::Advertised)]).await;
    same_join(
        &d.status().await,
        &oneshot(&the_lab, "rb-node1", &flags).await,
    );
    // A realm replace drops 8.4's import: zebra's table keeps the route,
    // bgpd withdraws it.
    crate::support::drift_node1("8.4", &mut d).await;
    until_states(&d, &[(RACED, Class::NotRedistributed)]).await;
    same_join(
        &d.status().await,
        &oneshot(&the_lab, "rb-node1", &flags).await,
    );
    d.stop().await;
}
