//! GoBGP as a second router family at the BMP station: the GoBGP lab
//! (`scripts/lab-gobgp.sh`: gobgpd 3.10 in rb-gobgp, two gobgpd peers in
//! their own namespaces) exports BMP (pre-policy Adj-RIB-In, a statistics
//! report every 15 s) to a `--vantage bmp` ribbridge running in rb-gobgp.
//! The station's count for the VIP must equal the router's own view (its
//! global RIB and its Adj-RIB-In, read with the gobgp CLI's JSON) through
//! add, withdraw, a peer administratively disabled and enabled, a peer's
//! gobgpd crash and restart, and the station's own crash and restart
//! (GoBGP reconnects: the time is measured). VPNv4 and EVPN routes,
//! announced and withdrawn beside the VIP, must neither end the session
//! (`ribbridge_bmp_session_ends_total{reason="malformed"}` stays absent)
//! nor move the count. Every wait is on an event: a station log line (BMP
//! is one ordered stream per router, and each peer's UPDATEs reach it in
//! the order the peer sent them, so an IPv4 change sent after a VPNv4 or
//! EVPN one on the same peer marks that the station has read both).

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::daemon::Daemon;
use crate::support::{GobgpLab, lab_gobgp};
use ribbridge::status::StatusDoc;

const VIP: &str = "192.0.2.10/32";
const STATION: &str = "127.0.0.1:11019";
/// The router's name at the station: its BMP session's source address
/// (gobgpd connects over rb-gobgp's loopback); `rb-gobgp` is its sysName.
const ROUTER: &str = "127.0.0.1";
const NS: &str = "rb-gobgp";
const PEER1: &str = "198.19.1.2";
const PEER2: &str = "198.19.2.2";
const STEP: Duration = Duration::from_secs(15);
/// GoBGP dials a station at its start, then after 1, 2, 4, ... 32 s (32 s
/// from then on); and it notices a lost station only when a write fails:
/// at the next route change or statistics report (every 15 s here).
const RECONNECT: Duration = Duration::from_secs(60);

/// The station in rb-gobgp (its FRR directory unused: an empty one).
async fn station(frr_dir: &Path) -> (Daemon, Instant) {
    let mut d = Daemon::spawn(NS, frr_dir, &crate::support::station_args(STATION, VIP));
    d.wait_log("bmp: station listening", STEP).await;
    (d, Instant::now())
}

/// `gobgp ARGS` against the gobgpd of `ns` (`router`, `peer1`, `peer2`).
fn gobgp(ns: &str, args: &[&str]) -> String {
    let mut all = vec!["gobgp", ns];
    all.extend(args);
    lab_gobgp(&all)
}

/// A VPNv4 route added or deleted (`op`) on `ns`, its RT its RD.
fn vpnv4(ns: &str, op: &str, prefix: &str, label: &str, rd: &str) {
    gobgp(
        ns,
        &[
            "global", "rib", "-a", "vpnv4", op, prefix, "label", label, "rd", rd, "rt", rd,
        ],
    );
}

fn json(text: &str, what: &str) -> serde_json::Value {
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{what} is not JSON ({e}): {text}"))
}

/// The router's own view: the peers its global RIB holds a path of the VIP
/// from (`gobgp global rib -j`), and the peers whose Adj-RIB-In holds it
/// (`gobgp neighbor X adj-in -j`); they must agree.
fn router_view() -> usize {
    let rib = json(
        &gobgp("router", &["global", "rib", "-j", VIP]),
        "global rib",
    );
    let from_rib: BTreeSet<String> = rib
        .get(VIP)
        .and_then(|p| p.as_array())
        .map(|paths| {
            paths
                .iter()
                .filter_map(|p| p.get("neighbor-ip").and_then(|n| n.as_str()))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let from_adj_in: BTreeSet<String> = [PEER1, PEER2]
        .into_iter()
        .filter(|peer| {
            // A peer whose session is down has no Adj-RIB-In: the CLI
            // fails saying so.
            let out =
                std::process::Command::new(crate::support::repo().join("scripts/lab-gobgp.sh"))
                    .args(["gobgp", "router", "neighbor", peer, "adj-in", "-j", VIP])
                    .output()
                    .expect("run scripts/lab-gobgp.sh");
            let text = String::from_utf8_lossy(&out.stdout);
            if !out.status.success() {
                assert!(
                    text.contains("is not established"),
                    "adj-in of {peer}: {text}{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                return false;
            }
            let adj = json(&text, "adj-in");
            adj.get(VIP)
                .and_then(|p| p.as_array())
                .is_some_and(|p| !p.is_empty())
        })
        .map(str::to_string)
        .collect();
    assert_eq!(
        from_rib, from_adj_in,
        "the router's global RIB and Adj-RIB-In disagree"
    );
    from_rib.len()
}

/// The station's paths for the VIP at the GoBGP router (`None`: unknown).
fn paths_of(doc: &StatusDoc) -> Option<u32> {
    let r = doc
        .routers
        .iter()
        .find(|r| r.router == ROUTER)
        .unwrap_or_else(|| panic!("no router {ROUTER} in {doc:?}"));
    assert_eq!(r.sys_name.as_deref(), Some("rb-gobgp"), "the sysName label");
    r.vips
        .iter()
        .find(|v| v.prefix.to_string() == VIP)
        .unwrap_or_else(|| panic!("no {VIP} at {ROUTER} in {doc:?}"))
        .paths
}

fn series(metrics: &str) -> Option<String> {
    let key = format!("ribbridge_router_paths{{router=\"{ROUTER}\",prefix=\"{VIP}\"}} ");
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(&key))
        .map(str::to_string)
}

/// Sessions the station ended on malformed input: the series must stay
/// absent (or 0).
fn assert_no_malformed(metrics: &str, step: &str) {
    let key = "ribbridge_bmp_session_ends_total{reason=\"malformed\"} ";
    let n = metrics.lines().find_map(|l| l.strip_prefix(key));
    assert!(
        n.is_none() || n == Some("0"),
        "{step}: the station ended a GoBGP session as malformed ({n:?})"
    );
}

/// The `bmp: router paths` counts logged in `lines`, in order.
fn logged_paths(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| l.contains("bmp: router paths") && l.contains(&format!("router={ROUTER} ")))
        .filter_map(|l| l.split(" paths=").nth(1))
        .map(|p| p.split_whitespace().next().unwrap_or("").to_string())
        .collect()
}

/// Where the station's log stands before a step's actions.
fn mark(station: &mut Daemon) -> (usize, Instant) {
    (station.drain().len(), Instant::now())
}

/// Wait until the station has logged, since `mark`, each count of `steps`
/// in turn (the last one is the step's result; nothing else may be logged
/// on the way: a VPNv4 or EVPN route that moved the count would show);
/// then /status, /metrics and the router's own view must all say the last
/// one.
async fn agree(station: &mut Daemon, (mark, t): (usize, Instant), steps: &[u32], step: &str) {
    let want = *steps.last().expect("a count");
    station
        .wait_log(
            &format!("bmp: router paths && router={ROUTER} && paths={want}"),
            STEP * 2,
        )
        .await;
    let took = t.elapsed();
    let logged = logged_paths(&station.log[mark..]);
    let expected: Vec<String> = steps.iter().map(ToString::to_string).collect();
    assert_eq!(logged, expected, "{step}: the counts the station logged");
    check(station, want, step).await;
    eprintln!("{step}: station {want} paths after {took:?}, the router's own view {want}");
}

async fn check(station: &Daemon, want: u32, step: &str) {
    let (doc, code) = station.status().await;
    assert_eq!(paths_of(&doc), Some(want), "{step}: {doc:?}");
    assert_eq!(code, 0, "{step}: a ready station exits 0");
    let m = station.metrics().await;
    assert_eq!(
        series(&m).as_deref(),
        Some(want.to_string().as_str()),
        "{step}"
    );
    assert_no_malformed(&m, step);
    assert_eq!(
        router_view(),
        want as usize,
        "{step}: the router's own view"
    );
}

/// The station (just listening at `listening`) sees the router connect and
/// sync; returns (connected, synced) after `listening`.
async fn connect_and_sync(
    station: &mut Daemon,
    listening: Instant,
    what: &str,
) -> (Duration, Duration) {
    station
        .wait_log(
            &format!("bmp: a router connected && address={ROUTER}:"),
            RECONNECT,
        )
        .await;
    let connected = listening.elapsed();
    let (synced, line) = station
        .wait_either(
            &format!("bmp: router state && router={ROUTER} && state=synced"),
            "bmp: malformed input",
            STEP,
        )
        .await;
    // GoBGP's initial dump ends each peer's families with an End-of-RIB,
    // VPNv4's (AFI 1 SAFI 128) and EVPN's (AFI 25 SAFI 70) too: a station
    // that cannot skip them ends the session here ("Unknown AFI type: 25"
    // before bmp::update).
    assert!(
        synced,
        "{what}: the station ended GoBGP's session in its initial dump: {line}"
    );
    (connected, listening.elapsed())
}

/// An EVPN route (GoBGP's CLI syntax after `-a evpn add|del`).
fn evpn(ns: &str, op: &str, route: &[&str]) {
    let mut args = vec!["global", "rib", "-a", "evpn", op];
    args.extend(route);
    gobgp(ns, &args);
}

/// An EVPN MAC/IP Advertisement route (type 2); its first 9 words delete it.
const MACADV: [&str; 11] = [
    "macadv",
    "aa:bb:cc:dd:ee:ff",
    "10.0.0.1",
    "etag",
    "100",
    "label",
    "200",
    "rd",
    "1.1.1.1:65000",
    "rt",
    "65000:100",
];

/// An EVPN IP Prefix route (type 5).
const PREFIX: [&str; 11] = [
    "prefix",
    "10.1.0.0/24",
    "172.16.0.1",
    "etag",
    "100",
    "label",
    "300",
    "rd",
    "1.1.1.1:65000",
    "rt",
    "65000:100",
];

/// The lab's station started (after the lab: gobgpd has been dialling it
/// since its start, backing off) and synced; prints the figures.
async fn first_station(frr_dir: &Path, what: &str) -> Daemon {
    let (mut st, listening) = station(frr_dir).await;
    let (connected, synced) = connect_and_sync(&mut st, listening, what).await;
    eprintln!(
        "GoBGP {what}: station start (after the lab's up) -> router connected {connected:?}, synced {synced:?}"
    );
    st
}

/// IPv4 unicast sessions only (the station's base decodes them): add,
/// withdraw, Peer Down both ways, the station's crash and restart.
#[tokio::test]
async fn gobgp_router_at_the_bmp_station() {
    let t_lab = Instant::now();
    let lab = GobgpLab::up(2, &["--families", "ipv4-unicast", "--bmp", STATION]);
    let t0 = Instant::now();
    eprintln!("GoBGP lab up (with the lock's wait) {:?}", t_lab.elapsed());
    let frr_dir = tempfile::tempdir().expect("tempdir");

    // gobgpd has been dialling the station since it started: it connects,
    // sends Initiation and a Peer Up per established peer, then
    // (pre-policy) each peer's Adj-RIB-In and an End-of-RIB per peer and
    // configured family, all empty here.
    let mut st = first_station(frr_dir.path(), "IPv4").await;
    check(&st, 0, "synced, no VIP yet").await;

    let m = mark(&mut st);
    gobgp("peer1", &["global", "rib", "add", VIP]);
    gobgp("peer2", &["global", "rib", "add", VIP]);
    agree(&mut st, m, &[1, 2], "both peers add the VIP").await;
    let (doc, _) = st.status().await;
    let held: Vec<&str> = doc.routers[0].vips[0]
        .peers
        .iter()
        .map(|p| p.address.as_str())
        .collect();
    assert_eq!(held, [PEER1, PEER2], "{doc:?}");
    let m = mark(&mut st);
    gobgp("peer1", &["global", "rib", "del", VIP]);
    agree(&mut st, m, &[1], "peer1 withdraws").await;
    let m = mark(&mut st);
    gobgp("peer1", &["global", "rib", "add", VIP]);
    agree(&mut st, m, &[2], "peer1 re-adds").await;

    // Peer Down, administratively: the router disables peer2 (a Peer Down
    // for it), then enables it (a Peer Up, and peer2's routes again).
    let m = mark(&mut st);
    gobgp("router", &["neighbor", PEER2, "disable"]);
    agree(&mut st, m, &[1], "the router disables peer2").await;
    let m = mark(&mut st);
    gobgp("router", &["neighbor", PEER2, "enable"]);
    agree(&mut st, m, &[2], "the router enables peer2").await;

    // Peer Down by a crash: peer2's gobgpd killed; started again it has an
    // empty RIB, and announces the VIP once told to.
    let m = mark(&mut st);
    lab_gobgp(&["kill", "peer2"]);
    agree(&mut st, m, &[1], "peer2's gobgpd killed").await;
    let m = mark(&mut st);
    lab_gobgp(&["start", "peer2"]);
    st.wait_log(&format!("bmp: peer up && peer={PEER2}"), RECONNECT)
        .await;
    gobgp("peer2", &["global", "rib", "add", VIP]);
    agree(&mut st, m, &[2], "peer2 restarted and re-announces").await;

    // The station crashes and starts again at once: gobgpd notices at its
    // next write (a statistics report within 15 s: the first write after
    // the close draws an RST, the next one fails) and dials again; the new
    // session dumps both peers' Adj-RIB-In and the count is back.
    st.kill9().await;
    let (mut st, listening) = station(frr_dir.path()).await;
    let (connected, synced) = connect_and_sync(&mut st, listening, "IPv4").await;
    eprintln!("GoBGP: station restart -> router reconnected {connected:?}, synced {synced:?}");
    check(&st, 2, "after the station's restart").await;
    assert_no_fallback(&mut st);

    st.stop().await;
    drop(lab);
    eprintln!(
        "GoBGP IPv4 test wall time {:?} after lab up, {:?} with it",
        t0.elapsed(),
        t_lab.elapsed()
    );
}

/// Every End-of-RIB came: no peer was taken as dumped by the fallback.
fn assert_no_fallback(st: &mut Daemon) {
    assert!(
        !st.drain()
            .iter()
            .any(|l| l.contains("no End-of-RIB from these peers in time")),
        "GoBGP sent every End-of-RIB: {:?}",
        st.log
    );
}

/// Sessions with IPv4 unicast, VPNv4 and EVPN: their End-of-RIB in the
/// initial dump, VPNv4 and EVPN routes announced and withdrawn beside the
/// VIP, and a dump holding them (after the station's restart) end no
/// session and move no count.
#[tokio::test]
async fn gobgp_vpnv4_and_evpn_beside_the_vip() {
    let t_lab = Instant::now();
    let lab = GobgpLab::up(2, &["--bmp", STATION]);
    let t0 = Instant::now();
    eprintln!("GoBGP lab up (with the lock's wait) {:?}", t_lab.elapsed());
    let frr_dir = tempfile::tempdir().expect("tempdir");
    let mut st = first_station(frr_dir.path(), "VPNv4+EVPN").await;
    check(&st, 0, "synced: End-of-RIB for IPv4, VPNv4 and EVPN").await;

    // Each VPNv4 or EVPN change is followed by a VIP change on the same
    // peer: when the station logs the count, it has read the other.
    let m = mark(&mut st);
    vpnv4("peer1", "add", "10.0.0.0/24", "10", "100:100");
    evpn("peer2", "add", &MACADV);
    gobgp("peer1", &["global", "rib", "add", VIP]);
    gobgp("peer2", &["global", "rib", "add", VIP]);
    agree(&mut st, m, &[1, 2], "VPNv4 and EVPN, then the VIP on both").await;
    let m = mark(&mut st);
    vpnv4("peer1", "add", "10.0.1.0/24", "11", "100:100");
    evpn("peer2", "add", &PREFIX);
    gobgp("peer1", &["global", "rib", "del", VIP]);
    agree(
        &mut st,
        m,
        &[1],
        "more VPNv4 and EVPN, then peer1 withdraws",
    )
    .await;
    let m = mark(&mut st);
    vpnv4("peer1", "del", "10.0.0.0/24", "10", "100:100");
    evpn("peer2", "del", &MACADV[..9]);
    gobgp("peer1", &["global", "rib", "add", VIP]);
    agree(
        &mut st,
        m,
        &[2],
        "VPNv4 and EVPN withdrawn, then peer1 re-adds",
    )
    .await;

    // A dump with VPNv4 and EVPN routes in it: the station restarted.
    let vpn = gobgp("router", &["global", "rib", "-a", "vpnv4"]);
    let ev = gobgp("router", &["global", "rib", "-a", "evpn"]);
    assert!(
        vpn.contains("10.0.1.0/24") && ev.contains("10.1.0.0/24"),
        "the router holds the VPNv4 and EVPN routes:\n{vpn}{ev}"
    );
    st.kill9().await;
    let (mut st, listening) = station(frr_dir.path()).await;
    let (connected, synced) = connect_and_sync(&mut st, listening, "VPNv4+EVPN").await;
    eprintln!(
        "GoBGP VPNv4+EVPN: station restart -> router reconnected {connected:?}, synced {synced:?}"
    );
    check(&st, 2, "a dump with VPNv4 and EVPN routes").await;
    assert_no_fallback(&mut st);

    st.stop().await;
    drop(lab);
    eprintln!(
        "GoBGP VPNv4/EVPN test wall time {:?} after lab up, {:?} with it",
        t0.elapsed(),
        t_lab.elapsed()
    );
}
