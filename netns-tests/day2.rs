//! OpenShift's day-2 configuration end to end: the lab's frr-k8s profile
//! (`lab.sh up --profile frr-k8s`, scripts/lab-node-frrk8s.conf.j2), where
//! frr-k8s's per-peer `<peer>-out` route-maps advertise nothing and the
//! VIPs get out through the raw configuration: `redistribute table-direct
//! 198 route-map KUBE-VIP-ROUTES-V4|V6` (permit 10 on the VIPs'
//! prefix-list, deny 20) and `route-map <peer>-out permit 100` on the same
//! prefix-list, one session per family.
//!
//! Per release (10.3, 10.7), ribbridge in repair mode on node1, both nodes
//! holding the listed VIPs (IPv4 and IPv6) and node1 one unlisted route per
//! family: the listed VIPs are `advertised` (the router at two paths), the
//! unlisted ones `filtered` by KUBE-VIP-ROUTES-V4|V6 seq 20 (the router
//! never holds them), through the window in which a drift could be
//! declared; `/metrics` shows each state and no drift and no heal action.
//!
//! Every wait is on a state (`/status`, the router's routes) with a limit
//! that fails the test; nothing asserts a duration.

use std::net::IpAddr;
use std::time::{Duration, Instant};

use crate::intent::{
    SETTLE, await_status, class, drifts_and_heals, find, hold_status, router_paths, series,
};
use crate::support::daemon::Daemon;
use crate::support::{Lab, RouteWatch, lab, metric_sum};
use ribbridge::reconcile::Class;
use ribbridge::status::StatusDoc;

/// The VIPs the raw configuration's prefix-lists list (`lab.sh up --vip`).
const LISTED: [&str; 2] = ["192.0.2.10/32", "2001:db8::10/128"];
/// Routes of table 198 the prefix-lists do not list, one per family.
const UNLISTED: [&str; 2] = ["192.0.2.77/32", "2001:db8::77/128"];

fn addr_len(prefix: &str) -> (IpAddr, u8) {
    let (a, l) = prefix.split_once('/').expect("ADDRESS/LEN");
    (a.parse().expect("an address"), l.parse().expect("a length"))
}

/// The redistribution route-map of a prefix's family.
fn vip_map(prefix: &str) -> &'static str {
    if prefix.contains(':') {
        "KUBE-VIP-ROUTES-V6"
    } else {
        "KUBE-VIP-ROUTES-V4"
    }
}

/// The listed VIPs advertised, the unlisted ones filtered.
fn day2_states(doc: &StatusDoc) -> bool {
    LISTED
        .iter()
        .all(|v| class(doc, v) == Some(Class::Advertised))
        && UNLISTED
            .iter()
            .all(|v| class(doc, v) == Some(Class::Filtered))
}

async fn day2(frr: &'static str) {
    let start = Instant::now();
    let lab_guard = Lab::up_with(frr, 2, &LISTED, &["--profile", "frr-k8s"]);
    let mut router = RouteWatch::open("rb-router");
    let mut d = Daemon::start(&lab_guard, "rb-node1", &["--mode", "repair"]).await;

    let added = Instant::now();
    for v in LISTED {
        lab(&["vip-add", "node1", v]);
        lab(&["vip-add", "node2", v]);
    }
    for v in UNLISTED {
        lab(&["vip-add", "node1", v]);
    }
    for v in LISTED {
        let (a, l) = addr_len(v);
        router
            .wait_nexthops(a, l, 2, Duration::from_secs(20))
            .await
            .unwrap_or_else(|e| {
                panic!("FRR {frr}: the router holds both nodes' paths to {v} (permit 100 of each <peer>-out): {e}")
            });
    }
    let at_router = added.elapsed();
    let (doc, _) = await_status(
        &mut d,
        "the listed VIPs advertised, the unlisted filtered",
        Duration::from_secs(20),
        day2_states,
    )
    .await;
    for v in UNLISTED {
        let policy = find(&doc, v)
            .and_then(|s| s.policy.clone())
            .unwrap_or_else(|| panic!("FRR {frr}: filtered {v} names no policy: {doc:?}"));
        assert!(
            policy.contains(&format!("route-map {}", vip_map(v))) && policy.contains("seq 20"),
            "FRR {frr}: the policy of {v}: {policy:?}"
        );
    }
    // The window in which a drift of any of them could still be declared
    // (bgpd's route-map delay and the core's graces): the states hold.
    let reached = Instant::now();
    let polls = hold_status(&mut d, "the day-2 states", reached, SETTLE, day2_states).await;
    for v in UNLISTED {
        let addr = v.split('/').next().expect("an address");
        assert_eq!(
            router_paths(addr),
            0,
            "FRR {frr}: the router holds the unlisted {v}"
        );
    }
    let (_, code) = d.status().await;
    assert_eq!(
        code, 0,
        "FRR {frr}: advertised and filtered are consistent: status exits 0"
    );
    let m = d.metrics().await;
    for (vips, state) in [(LISTED, "advertised"), (UNLISTED, "filtered")] {
        for v in vips {
            let gauge =
                format!("ribbridge_vip_state{{prefix=\"{v}\",table=\"198\",state=\"{state}\"}} 1");
            assert!(m.contains(&gauge), "FRR {frr}: {gauge} not in:\n{m}");
        }
    }
    let (heals, drift) = (
        metric_sum(&m, "ribbridge_heal_actions_total"),
        metric_sum(&m, "ribbridge_drift_total"),
    );
    let log = d.drain().to_vec();
    assert_eq!(
        (heals, drift),
        (0.0, 0.0),
        "FRR {frr}: heal actions or drift in the day-2 shape: {:?} {:?}\n{}\nribbridge's log:\n{}",
        series(&m, "ribbridge_heal_actions_total"),
        series(&m, "ribbridge_drift_total"),
        drifts_and_heals(&log).join("\n"),
        log.join("\n")
    );
    eprintln!(
        "day2: FRR {frr}: the router at 2 paths for {LISTED:?} {:.1} s after the routes were added, /status with them advertised and {UNLISTED:?} filtered at {:.1} s; held {:.1} s ({polls} polls); heal actions 0, drift 0",
        at_router.as_secs_f64(),
        (reached - added).as_secs_f64(),
        SETTLE.as_secs_f64()
    );
    d.stop().await;
    drop(lab_guard);
    eprintln!(
        "day2: FRR {frr}: the test took {:.1} s",
        start.elapsed().as_secs_f64()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn day2_frr_10_3() {
    day2("10.3").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn day2_frr_10_7() {
    day2("10.7").await;
}
