//! FRR replaced under a running ribbridge, as a cluster upgrade or the
//! bootstrap-to-frr-k8s handover does it: `scripts/lab.sh switch` stops
//! node1's daemons (SIGTERM), renders its frr.conf for another release or
//! profile and starts that release's daemons, the socket directory kept at
//! the same path (a hostPath outlives the pod). The lab runs graceful
//! restart (frr-k8s's `enableGracefulRestart`), as production may.
//!
//! Each switch must end with ribbridge subscribed to the new zebra in the
//! new release's numbering and table mode, `ribbridge_frr_info` on the
//! new release (the old series at 0), and the VIP `advertised`; over the
//! whole test ribbridge takes no heal action and reports no drift: while
//! FRR is away the VIP is `unknown`. A switch after `ribbridge drain`
//! must keep node1's path off the router throughout: ribbridge re-applies
//! its recorded drain to the new FRR. Waits are on ribbridge's log or
//! status, the router's route events, or bounded polls of bgpd; the time
//! from each switch to `advertised` is printed (docs/FRR-BEHAVIOUR.md
//! carries it).

use std::time::{Duration, Instant};

use ribbridge::reconcile::Class;

use crate::support::daemon::Daemon;
use crate::support::{Lab, RouteWatch, lab};

const VIP: &str = "192.0.2.10/32";
const NODE: &str = "rb-node1";

/// One step: (`lab.sh switch` arguments after the node, the release zebra
/// must then report, its table mode as logged).
type Step = (&'static [&'static str], &'static str, &'static str);

/// `lab.sh switch rb-node1 ARGS...`.
fn switch(args: &[&str]) {
    let mut cmd = vec!["switch", NODE];
    cmd.extend_from_slice(args);
    lab(&cmd);
}

/// Up a graceful-restart lab of `frr` in `profile`, node1's ribbridge in
/// repair mode with the VIP advertised by both nodes, then run `steps`;
/// then, if `drained` is given, drain node1 and switch again: the router
/// must never see node1's path during that switch.
async fn switches(frr: &'static str, profile: &str, steps: &[Step], drained: Option<Step>) {
    let lab_guard = Lab::up_with(
        frr,
        2,
        &[VIP],
        &["--profile", profile, "--graceful-restart"],
    );
    let mut d = Daemon::start(&lab_guard, NODE, &[]).await;
    lab(&["vip-add", "node1", VIP]);
    lab(&["vip-add", "node2", VIP]);
    d.wait_log("VIP consistent && to=advertised", Duration::from_secs(30))
        .await;
    let mut router = RouteWatch::open("rb-router");
    let vip: std::net::IpAddr = "192.0.2.10".parse().expect("addr");
    router
        .wait_nexthops(vip, 32, 2, Duration::from_secs(30))
        .await
        .expect("both nodes' paths at the router");
    // What the router forwards meanwhile (measured, not asserted: graceful
    // restart keeps node1's path while its FRR is replaced).
    let timeline = router.timeline(vip, 32).await;
    let before = d.drain().len();
    let mut release = frr;
    for (args, to, mode) in steps {
        let t = Instant::now();
        switch(args);
        // FRR away: not ready, so every VIP reads `unknown`, never a drift.
        d.seen_or_wait("readiness changed && ready=false", Duration::from_secs(30))
            .await;
        let subscribed = d
            .seen_or_wait(
                &format!("zebra: subscribed && release={to}"),
                Duration::from_secs(30),
            )
            .await;
        let back = t.elapsed();
        assert!(
            subscribed.contains(&format!("mode={mode}")),
            "{release} -> {to}: subscribed in the wrong table mode (want {mode}): {subscribed}"
        );
        // Advertised again, by ribbridge's own join of kernel, zebra and
        // bgpd (the new bgpd's sessions up and sending the VIP).
        let (doc, took) = loop {
            let (doc, _) = d.status().await;
            let sent = doc.vips.iter().any(|v| v.peers.iter().any(|p| p.sent));
            if doc.ready && sent && crate::support::class_of(&doc, VIP) == Class::Advertised {
                break (doc, t.elapsed());
            }
            assert!(
                t.elapsed() < Duration::from_secs(120),
                "{release} -> {to} ({args:?}): not ready and advertised 120 s after the switch; /status: {doc:?}\n{}",
                d.drain().join("\n")
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        assert!(
            doc.frr_release
                .as_deref()
                .is_some_and(|r| r.starts_with(to)),
            "{release} -> {to}: /status names another release: {doc:?}"
        );
        let m = d.metrics().await;
        // The label is zebra's full version (10.7.1).
        let info = |r: &str, v: u8| {
            m.lines().any(|l| {
                l.starts_with("ribbridge_frr_info")
                    && l.contains(&format!("release=\"{r}"))
                    && l.ends_with(&format!(" {v}"))
            })
        };
        assert!(
            info(to, 1),
            "{release} -> {to}: ribbridge_frr_info is not 1 for {to}:\n{m}"
        );
        if release != *to {
            assert!(
                info(release, 0),
                "{release} -> {to}: the old release's ribbridge_frr_info is not 0:\n{m}"
            );
        }
        let now = Instant::now();
        // 8.4's import-table copies table 198 into the main table; a
        // release without it must not inherit the copy.
        let main = lab(&[
            "exec",
            NODE,
            "ip",
            "route",
            "show",
            "table",
            "main",
            "192.0.2.10/32",
        ]);
        eprintln!(
            "upgrade: node1's main table for the VIP under {to}: {:?}",
            main.trim()
        );
        eprintln!(
            "upgrade: node1 FRR {release} -> {to} ({}): subscribed to the new zebra after {} ms, ready and advertised after {} ms, from the start of `lab.sh switch`; the router held both paths {:.1} % of that time ({} dips)",
            args.join(" "),
            back.as_millis(),
            took.as_millis(),
            100.0 * timeline.share_at_least(2, t, now),
            timeline.dips(2, t, now)
        );
        release = to;
    }
    if let Some((args, to, _)) = drained {
        drained_switch(&lab_guard, &mut d, &timeline, args, to).await;
    }
    let log = d.drain()[before..].to_vec();
    let of = |needle: &str| {
        log.iter()
            .filter(|l| l.contains(needle))
            .cloned()
            .collect::<Vec<_>>()
    };
    assert!(
        of("VIP drift").is_empty() && of("healing").is_empty(),
        "a drift or a heal while FRR was replaced (FRR away must read `unknown`):\n{}",
        log.join("\n")
    );
    let m = d.metrics().await;
    for counter in ["ribbridge_drift_total", "ribbridge_heal_actions_total"] {
        assert!(
            !m.lines()
                .any(|l| l.starts_with(counter) && !l.ends_with(" 0")),
            "{counter} moved while FRR was replaced:\n{m}"
        );
    }
    d.stop().await;
    drop(lab_guard);
}

/// `ribbridge drain` on node1, then `lab.sh switch` with `args`: ribbridge
/// re-applies its recorded drain to the new FRR's configuration before the
/// new bgpd sends the VIP, mostly (graceful restart defers it; the time the
/// router saw node1's path is printed); the VIP then leaves node1's BGP
/// table and the router for good; `ribbridge undrain` brings it back.
async fn drained_switch(
    lab_guard: &Lab,
    d: &mut Daemon,
    timeline: &crate::support::Timeline,
    args: &[&str],
    to: &str,
) {
    let vip: std::net::IpAddr = "192.0.2.10".parse().expect("addr");
    let mut router = RouteWatch::open("rb-router");
    let sockdir = lab_guard.sockdir(NODE);
    let drain = async |router: &mut RouteWatch, sub: &str, paths: usize| {
        let out = crate::drain::cli(sub, &sockdir, &[]).await;
        assert!(out.status.success(), "ribbridge {sub} failed");
        router
            .wait_nexthops(vip, 32, paths, Duration::from_secs(30))
            .await
            .unwrap_or_else(|e| panic!("after ribbridge {sub}: {e}"));
    };
    drain(&mut router, "drain", 1).await;
    let t = Instant::now();
    switch(args);
    // The new FRR up, its configuration read and the drain re-applied:
    // ribbridge says `drained` again, on the new release.
    loop {
        let (doc, _) = d.status().await;
        if doc.ready
            && doc
                .frr_release
                .as_deref()
                .is_some_and(|r| r.starts_with(to))
            && crate::support::class_of(&doc, VIP) == Class::Drained
        {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "drained switch to {to}: not ready and drained 60 s after the switch; /status: {doc:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    d.seen_or_wait(
        "the drain that ribbridge recorded && re-applied",
        Duration::from_secs(10),
    )
    .await;
    // With the drain's entry back in the redistribution's route-map, the
    // VIP cannot enter bgpd's table any more; await it out of the table
    // (a bounded poll of bgpd), after which nothing can send it. An UPDATE
    // sent before that reached the router within bgpd's update coalescing
    // (1 s by default): allow three times that for it to show (absence
    // has no event to await).
    loop {
        let json = lab(&["vtysh", NODE, "show bgp ipv4 unicast 192.0.2.10/32 json"]);
        if json.trim() == "{}" {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "drained switch to {to}: the VIP still in node1's BGP table 60 s after the switch: {json}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    router
        .wait_nexthops(vip, 32, 2, Duration::from_secs(3))
        .await
        .expect_err("node1's path came back while drained");
    // How long the router saw node1's path is measured, not asserted: the
    // new bgpd may send the VIP from the configuration it started with
    // before ribbridge can read that configuration and re-apply the drain
    // (an inherent race with FRR's start; docs/DEPLOY.md gives the figure).
    let now = Instant::now();
    let seen = timeline.share_at_least(2, t, now) * (now - t).as_secs_f64();
    if seen > 0.0 {
        let lines = d
            .drain()
            .iter()
            .filter(|l| l.contains("drain") || l.contains("zebra: subscribed"));
        eprintln!("upgrade: the daemon's drain lines:");
        for l in lines {
            eprintln!("  {l}");
        }
    }
    drain(&mut router, "undrain", 2).await;
    eprintln!(
        "upgrade: node1 drained, then switched to {to}: the router saw its path for {seen:.2} s of the {:?} watched, none after the re-apply, and has it again after undrain",
        now - t
    );
}

/// The bootstrap static pod's FRR 8.4 (import-table, the lab's default
/// profile) upgraded in place to 10.7 (table-direct), then handed over to
/// frr-k8s's configuration (bgpd and zebra restarted with its shape).
#[tokio::test]
async fn upgrades_frr_8_4_to_10_7_then_frr_k8s_handover() {
    switches(
        "8.4",
        "default",
        &[
            (&["--frr", "10.7"], "10.7", "TableDirect"),
            (&["--profile", "frr-k8s"], "10.7", "TableDirect"),
        ],
        None,
    )
    .await;
}

/// frr-k8s's FRR 10.3 upgraded to 10.7, then rolled back to 10.3, then
/// upgraded to 10.7 again with node1 drained first.
#[tokio::test]
async fn upgrades_frr_10_3_to_10_7_and_back() {
    switches(
        "10.3",
        "frr-k8s",
        &[
            (&["--frr", "10.7"], "10.7", "TableDirect"),
            (&["--frr", "10.3"], "10.3", "TableDirect"),
        ],
        Some((&["--frr", "10.7"], "10.7", "TableDirect")),
    )
    .await;
}
