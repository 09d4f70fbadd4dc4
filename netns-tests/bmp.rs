//! The BMP station end to end, on each release: the lab router's bgpd
//! exports BMP (`lab.sh up --bmp`) to a `--vantage bmp` ribbridge running in
//! the router's namespace. The paths it counts for the VIP must equal the
//! router's kernel ECMP width through withdraw, re-add, a bgpd crash and
//! restart, and node1's drift, where node1's own ribbridge (observe) must
//! report the drift while the station sees one path fewer: the two vantages
//! agree. One lab per release for every step; every wait is on an event (a
//! log line of a daemon, a route event at the router).

use std::net::IpAddr;
use std::time::{Duration, Instant};

use crate::support::daemon::Daemon;
use crate::support::{Lab, RouteWatch, lab};
use ribbridge::status::StatusDoc;

const VIP: &str = "192.0.2.10/32";
const STATION: &str = "127.0.0.1:11019";
/// The station's name for the lab router: the address its BMP session
/// comes from (bgpd connects to the station in its own namespace, over
/// loopback); its sysName (the hostname) is a label.
const ROUTER: &str = "127.0.0.1";
/// A forgotten router is checked at the end: a short stale time keeps the
/// test short, long enough for the restart step's reconnect (bgpd connects
/// at its start, retrying every 100 ms to 1 s).
const STALE_SECS: &str = "10";
const STEP: Duration = Duration::from_secs(15);

fn vip_addr() -> IpAddr {
    "192.0.2.10".parse().expect("addr")
}

/// The station's paths for the VIP at the lab router (`None`: unknown).
fn paths_of(doc: &StatusDoc) -> Option<u32> {
    let r = doc
        .routers
        .iter()
        .find(|r| r.router == ROUTER)
        .unwrap_or_else(|| panic!("no router {ROUTER} in {doc:?}"));
    assert_eq!(
        r.sys_name.as_deref(),
        Some("rb-router"),
        "the sysName label"
    );
    r.vips
        .iter()
        .find(|v| v.prefix.to_string() == VIP)
        .unwrap_or_else(|| panic!("no {VIP} at {ROUTER} in {doc:?}"))
        .paths
}

/// The series of the VIP at the lab router in a `/metrics` text.
fn series(metrics: &str) -> Option<String> {
    let key = format!("ribbridge_router_paths{{router=\"{ROUTER}\",prefix=\"{VIP}\"}} ");
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(&key))
        .map(str::to_string)
}

/// Wait until the router's kernel has `want` paths and the station has
/// logged `want` paths (when `moved`: the step changes the count; else the
/// count must not have moved); then its /status and /metrics must say the
/// same.
async fn agree(station: &mut Daemon, router: &mut RouteWatch, want: u32, moved: bool, step: &str) {
    let t = Instant::now();
    router
        .wait_nexthops(vip_addr(), 32, want as usize, STEP)
        .await
        .unwrap_or_else(|e| panic!("{step}: {e}"));
    let kernel = t.elapsed();
    if moved {
        station
            .wait_log(
                &format!("bmp: router paths && router={ROUTER} && paths={want}"),
                STEP,
            )
            .await;
    }
    let (doc, code) = station.status().await;
    assert_eq!(paths_of(&doc), Some(want), "{step}: {doc:?}");
    assert_eq!(code, 0, "{step}: a ready station exits 0");
    assert_eq!(
        series(&station.metrics().await).as_deref(),
        Some(want.to_string().as_str()),
        "{step}"
    );
    assert_eq!(
        router.nexthops(vip_addr(), 32).await,
        want as usize,
        "{step}: the kernel moved on"
    );
    eprintln!(
        "{step}: router kernel {want} paths after {kernel:?}, station {want} after {:?}",
        t.elapsed()
    );
}

async fn station_follows_the_router(frr: &'static str) {
    let t_lab = Instant::now();
    let lab_guard = Lab::up_bmp(frr, 2, &[VIP], STATION);
    // From here: the lab is ours (Lab::up_bmp waited for the lock).
    let t0 = Instant::now();
    eprintln!(
        "FRR {frr}: lab up (with the lock's wait) {:?}",
        t_lab.elapsed()
    );
    let mut router = RouteWatch::open("rb-router");
    let mut station = Daemon::start_with(
        &lab_guard,
        "rb-router",
        &[
            "--vantage",
            "bmp",
            "--bmp-listen",
            STATION,
            "--bmp-allow",
            "127.0.0.0/8",
            "--bmp-stale-secs",
            STALE_SECS,
            "--vip",
            VIP,
        ],
        "bmp: station listening",
    )
    .await;
    // bgpd's slow refresh every second. The steps here are shorter than
    // node1's own classification can be: on 10.7 node1's bgpd sends a new
    // VIP ~1.2-1.3 s after the add, after the core's settle polls (0.5 s,
    // 1 s), and after the router's bgpd restarts the startup grace holds
    // the class for seconds; a VIP that never left `withdrawn` logs no
    // `to=withdrawn` when deleted. With the default 30 s refresh the node
    // is right, only later than this test's steps wait.
    let config = crate::support::bgp_poll_config(1);
    let config_path = crate::support::config_arg(&config);
    let mut node = Daemon::start(
        &lab_guard,
        "rb-node1",
        &["--mode", "observe", "--config", &config_path],
    )
    .await;
    // bgpd finds the station with its retry timer; no VIP anywhere yet.
    station
        .wait_log(
            &format!("bmp: router state && router={ROUTER} && state=synced"),
            STEP,
        )
        .await;
    eprintln!(
        "FRR {frr}: router synced at the station {:?} after lab up",
        t0.elapsed()
    );

    lab(&["vip-add", "node1", VIP]);
    lab(&["vip-add", "node2", VIP]);
    agree(&mut station, &mut router, 2, true, "both nodes add the VIP").await;
    let (doc, _) = station.status().await;
    let held: Vec<&str> = doc.routers[0].vips[0]
        .peers
        .iter()
        .map(|p| p.address.as_str())
        .collect();
    assert_eq!(held, ["198.18.1.2", "198.18.2.2"], "{doc:?}");
    lab(&["vip-del", "node1", VIP]);
    agree(&mut station, &mut router, 1, true, "node1 withdraws").await;
    lab(&["vip-add", "node1", VIP]);
    agree(&mut station, &mut router, 2, true, "node1 re-adds").await;

    // The router's bgpd crashes: its paths are unknown, not zero, and the
    // station (its only router stale) is not ready.
    lab(&["kill", "rb-router", "bgpd"]);
    station
        .wait_log(
            &format!("bmp: router paths && router={ROUTER} && paths=unknown"),
            STEP,
        )
        .await;
    let (doc, code) = station.status().await;
    assert_eq!(paths_of(&doc), None, "{doc:?}");
    assert_eq!(doc.routers[0].state, "stale");
    assert!(!doc.ready && doc.not_ready.is_some(), "{doc:?}");
    assert_eq!(code, 2, "status exits 2 when the station is not ready");
    // Unknown is no value: the series goes, its `_known` reads 0.
    let m = station.metrics().await;
    assert_eq!(series(&m), None, "{m}");
    let known = format!("ribbridge_router_paths_known{{router=\"{ROUTER}\",prefix=\"{VIP}\"}} 0\n");
    assert!(m.contains(&known), "{m}");
    lab(&["start", "rb-router", "bgpd"]);
    agree(
        &mut station,
        &mut router,
        2,
        true,
        "the router's bgpd restarted",
    )
    .await;

    // node1's drift, the release's own: node1's ribbridge reports it; the
    // router has one path, and so says the station.
    if frr != "8.4" {
        lab(&["vip-del", "node1", VIP]);
        node.wait_log("VIP consistent && to=withdrawn", STEP).await;
        agree(
            &mut station,
            &mut router,
            1,
            true,
            "node1 withdraws before its drift",
        )
        .await;
    }
    let (class, tries) = crate::support::drift_node1(frr, &mut node).await;
    // 8.4 loses a path (2 -> 1); on 10.x node1 never had one: still 1.
    agree(&mut station, &mut router, 1, frr == "8.4", "node1 drifts").await;
    let (doc, code) = node.status().await;
    assert_eq!(crate::support::class_of(&doc, VIP), class);
    assert_eq!(code, 1, "node1's status exits 1 on drift");
    eprintln!("FRR {frr}: node1 {class} (try {tries}) and the station's 1 path agree");

    // The router goes away for good: stale, then forgotten, series gone.
    lab(&["kill", "rb-router", "bgpd"]);
    station
        .wait_log(
            &format!("bmp: stale router forgotten && router={ROUTER}"),
            STEP + Duration::from_secs(10),
        )
        .await;
    let m = station.metrics().await;
    assert_eq!(series(&m), None, "a forgotten router's series stays:\n{m}");
    assert!(
        !m.contains(&format!("router=\"{ROUTER}\"")),
        "a forgotten router's series stays:\n{m}"
    );
    let (doc, code) = station.status().await;
    assert!(doc.routers.is_empty() && !doc.ready && code == 2, "{doc:?}");

    node.stop().await;
    station.stop().await;
    drop(lab_guard);
    eprintln!(
        "FRR {frr}: bmp station test wall time {:?} after lab up, {:?} with it",
        t0.elapsed(),
        t_lab.elapsed()
    );
}

#[tokio::test]
async fn bmp_station_follows_the_router_frr_8_4() {
    station_follows_the_router("8.4").await;
}

#[tokio::test]
async fn bmp_station_follows_the_router_frr_10_3() {
    station_follows_the_router("10.3").await;
}

#[tokio::test]
async fn bmp_station_follows_the_router_frr_10_7() {
    station_follows_the_router("10.7").await;
}
