//! The writer and the address: is this node really serving the
//! VIP? The lab's kube-vip (`lab.sh kube-vip`: its routing-table loop, one
//! tick a second, the realm toggled on every healthy tick, nothing undone
//! on a kill) and the OpenShift router's health endpoint (`lab.sh
//! backend`) on node1; node2 holds the VIP as a bare route, the router's
//! second path. ribbridge runs on node1 in repair mode with the address
//! required (the default). Every wait is on an event: a log line of the
//! daemon or a route event at the router; `/status` is polled only for
//! what no log line says (the writer's learned cadence).
//!
//! - the writer beats: `alive`, its cadence learned (1 s);
//! - SIGKILLed: its advertised VIP is `orphaned` (status exit 1, the
//!   state's gauge), nothing healed; started again, `advertised`;
//! - killed, its backend down, started again: kube-vip's restart with an
//!   unhealthy backend deletes the address and leaves the route. On 10.7
//!   zebra drops the import: with the address not required, repair mode
//!   toggles the realm and puts the path back (a black hole at the router: 2 paths, node1
//!   answering "Network is unreachable"); now the VIP is `withdrawn`, the
//!   router keeps node2's path alone, no heal runs. On 8.4, where the
//!   address shadowed the import, the route stays unselected: `withdrawn`
//!   too;
//! - a bare route (the writer gone, the route rewritten without its
//!   address) that FRR advertises on both releases: `blackhole`, status
//!   exit 1, the router's two paths, reported and not healed;
//! - between the two, the backend up again: the writer adds the address
//!   and re-asserts the route; the VIP is served again;
//! - a flaky backend (10.7): the writer withdraws and re-adds the VIP at
//!   every change; past 3 withdrawals in 5 minutes it is `flapping`.

use std::net::IpAddr;
use std::time::{Duration, Instant};

use crate::support::daemon::Daemon;
use crate::support::{Lab, RouteWatch, class_of, lab, vip_of};
use ribbridge::reconcile::Class;
use ribbridge::status::StatusDoc;

const VIP: &str = "192.0.2.10/32";
const HEALTH: &str = "http://127.0.0.1:1936/healthz";
const LIMIT: Duration = Duration::from_secs(20);

fn vip_addr() -> IpAddr {
    "192.0.2.10".parse().expect("addr")
}

/// node1's writer for the VIP, one tick a second, checking the backend.
fn writer_start() {
    lab(&[
        "kube-vip",
        "node1",
        "start",
        VIP,
        "--health",
        HEALTH,
        "--interval",
        "1",
    ]);
}

/// The VIP's writer state in `/status`, polled until it is `want` (no log
/// line says when the cadence is learned).
async fn writer_becomes(d: &Daemon, want: &str) -> Duration {
    let t = Instant::now();
    loop {
        let (doc, _) = d.status().await;
        let w = vip_of(&doc, VIP).writer.clone();
        if w.as_ref().is_some_and(|w| w.state == want) {
            return t.elapsed();
        }
        assert!(
            t.elapsed() < LIMIT,
            "the writer is not {want} after {LIMIT:?}: {w:?}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The heal actions the daemon counted (node1's table holds the one VIP;
/// 0 before any).
async fn heals(d: &Daemon) -> u64 {
    d.metrics()
        .await
        .lines()
        .filter(|l| l.starts_with("ribbridge_heal_actions_total{"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .map(|v| v as u64)
        .sum()
}

/// ribbridge's withdrawals and put-backs of `withdraw = true` VIPs.
async fn withdrawals(d: &Daemon) -> (u64, u64) {
    let m = d.metrics().await;
    let of = |action: &str| {
        m.lines()
            .filter(|l| {
                l.starts_with("ribbridge_vip_withdrawals_total{")
                    && l.contains(&format!("action=\"{action}\""))
            })
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .map(|v| v as u64)
            .sum()
    };
    (of("withdraw"), of("restore"))
}

async fn writer_and_address(frr: &'static str) {
    let lab_guard = Lab::up(frr, 2, &[VIP]);
    let mut router = RouteWatch::open("rb-router");
    lab(&["vip-add", "node2", VIP]);
    lab(&["backend", "node1", "up"]);
    writer_start();
    let mut d = Daemon::start(
        &lab_guard,
        "rb-node1",
        &["--mode", "repair", "--require-address", "true"],
    )
    .await;
    // 8.4: the writer's address shadows the import (docs/FRR-BEHAVIOUR.md):
    // node1 never advertises what kube-vip writes. 10.7: advertised.
    let served = frr != "8.4";
    let first = if served {
        "VIP consistent && to=advertised"
    } else {
        "VIP drift && to=shadowed"
    };
    d.seen_or_wait(first, LIMIT).await;
    let learned = writer_becomes(&d, "alive").await;
    eprintln!("FRR {frr}: writer alive (cadence learned) {learned:?} after the daemon's start");
    let (doc, _) = d.status().await;
    let v = vip_of(&doc, VIP);
    assert_eq!(v.address.as_deref(), Some("usable"), "{v:?}");
    let cadence = v.writer.as_ref().and_then(|w| w.cadence_ms).unwrap_or(0);
    assert!(
        (900..=1_500).contains(&cadence),
        "a 1 s writer's cadence, learned: {cadence} ms"
    );
    if served {
        router
            .wait_nexthops(vip_addr(), 32, 2, LIMIT)
            .await
            .expect("both nodes' paths");
        // SIGKILL: the route and the address stay, nobody re-asserts.
        // (Heals before it answered 10.7's lost import, frr#22654.)
        let healed = heals(&d).await;
        let t = Instant::now();
        lab(&["kube-vip", "node1", "kill", VIP]);
        let doc = drifts_to(&mut d, frr, "writer killed", t, Class::Orphaned).await;
        let w = vip_of(&doc, VIP).writer.clone().expect("writer");
        assert_eq!(w.state, "silent", "{w:?}");
        assert!(w.last.is_some(), "the last beat's time: {w:?}");
        assert_eq!(
            heals(&d).await,
            healed,
            "an orphaned VIP is reported, not healed"
        );
        // Started again (backend healthy): its beats end the orphan.
        writer_start();
        let line = d.wait_log("VIP consistent && to=advertised", LIMIT).await;
        eprintln!("FRR {frr}: writer back: {line}");
    }
    // kube-vip restarted while its backend is unhealthy: the address goes,
    // the route stays. Neither release advertises that route (10.7's
    // zebra drops the import; on 8.4 the import, shadowed until now,
    // stays unselected): `withdrawn`, and no heal may bring it back.
    let healed = heals(&d).await;
    lab(&["kube-vip", "node1", "kill", VIP]);
    lab(&["backend", "node1", "down"]);
    let t = Instant::now();
    writer_start();
    let line = d.wait_log("VIP consistent && to=withdrawn", LIMIT).await;
    eprintln!(
        "FRR {frr}: restarted with the backend down, withdrawn after {:?}: {line}",
        t.elapsed()
    );
    let (doc, code) = d.status().await;
    let v = vip_of(&doc, VIP);
    assert_eq!(v.kernel, Some(true), "kube-vip left the route: {v:?}");
    assert_eq!(v.address.as_deref(), Some("missing"), "{v:?}");
    assert_eq!(class_of(&doc, VIP), Class::Withdrawn);
    assert_eq!(
        code, 0,
        "a VIP the node cannot serve and does not advertise is no drift"
    );
    router
        .wait_nexthops(vip_addr(), 32, 1, LIMIT)
        .await
        .expect("node2's path alone");
    assert_eq!(
        heals(&d).await,
        healed,
        "no heal re-advertises a VIP whose address is missing"
    );
    // The backend healthy again: the writer adds the address and the
    // route is served again (8.4: shadowed again).
    lab(&["backend", "node1", "up"]);
    let line = d.wait_log(first, LIMIT).await;
    eprintln!("FRR {frr}: backend up: {line}");
    // A route without its address that FRR does advertise: the writer
    // gone, its route rewritten bare (what a writer that never adds the
    // address, or a hand's `ip addr del` on a release that keeps the
    // import, leaves). The router sends node1 traffic it drops.
    // (10.7 healed the address-after-route just now, frr#22654, at once:
    // what follows is counted from here.)
    let healed_before = heals(&d).await;
    let logged_before = d.drain().len();
    lab(&["kube-vip", "node1", "kill", VIP]);
    lab(&["vip-del", "node1", VIP, "--with-address"]);
    let t = Instant::now();
    lab(&["vip-add", "node1", VIP]);
    let doc = drifts_to(&mut d, frr, "a bare route", t, Class::Blackhole).await;
    assert_eq!(vip_of(&doc, VIP).address.as_deref(), Some("missing"));
    router
        .wait_nexthops(vip_addr(), 32, 2, LIMIT)
        .await
        .expect("the black hole: node1's path at the router");
    assert_eq!(
        heals(&d).await,
        healed_before,
        "a blackhole is reported, not healed"
    );
    let started: Vec<String> = d.drain()[logged_before..]
        .iter()
        .filter(|l| l.contains("healing"))
        .cloned()
        .collect();
    assert!(started.is_empty(), "heals started: {started:#?}");
    lab(&["vip-del", "node1", VIP]);
    if served {
        flapping(&mut d, frr).await;
    }
    d.stop().await;
    drop(lab_guard);
}
/// A flaky backend: the writer (no hysteresis) withdraws the VIP at every
/// failed check and re-adds it at the next success. The route's deletions
/// by a writer seen re-asserting are withdrawals; more than 3 within the
/// window (300 s) make the VIP `flapping` (status exit 1), not healed.
async fn flapping(d: &mut Daemon, frr: &str) {
    lab(&["backend", "node1", "up"]);
    writer_start();
    d.wait_log("VIP consistent && to=advertised", LIMIT).await;
    let t = Instant::now();
    let mut cycles = 0;
    loop {
        assert!(cycles < 6, "no flapping after {cycles} withdrawals");
        cycles += 1;
        lab(&["backend", "node1", "down"]);
        let (flaps, line) = d
            .wait_either("to=flapping", "VIP consistent && to=withdrawn", LIMIT)
            .await;
        if flaps {
            eprintln!(
                "FRR {frr}: flapping after {cycles} withdrawals by the backend, {:?}: {line}",
                t.elapsed()
            );
            break;
        }
        // (A re-add may meet 10.7's route-then-address loss, frr#22654,
        // and be healed before the VIP flaps: that heal is no heal of the
        // flapping, so heals are counted from the flapping on.)
        lab(&["backend", "node1", "up"]);
        d.wait_log("VIP consistent && to=advertised", LIMIT).await;
    }
    let healed_before = heals(d).await;
    let (doc, code) = d.status().await;
    assert_eq!(class_of(&doc, VIP), Class::Flapping);
    assert_eq!(code, 1, "status exits 1 on a flapping VIP");
    let flaps = vip_of(&doc, VIP).writer.as_ref().map_or(0, |w| w.flaps);
    assert!(flaps > 3, "more than 3 withdrawals in the window: {flaps}");
    assert_eq!(
        heals(d).await,
        healed_before,
        "flapping is reported, not healed"
    );
    lab(&["kube-vip", "node1", "stop", VIP]);
    lab(&["backend", "node1", "up"]);
}

/// Wait for the VIP's drift to `class` (its log line), say how long it took
/// since `t`, and check that `/status` says it and exits 1 and that the
/// state's gauge is 1; the document, for more checks.
async fn drifts_to(d: &mut Daemon, frr: &str, what: &str, t: Instant, class: Class) -> StatusDoc {
    let line = d
        .wait_log(&format!("VIP drift && to={}", class.name()), LIMIT)
        .await;
    eprintln!(
        "FRR {frr}: {what}, {} after {:?}: {line}",
        class.name(),
        t.elapsed()
    );
    let (doc, code) = d.status().await;
    assert_eq!((class_of(&doc, VIP), code), (class, 1), "{what}");
    let m = d.metrics().await;
    let gauge = format!(
        "ribbridge_vip_state{{prefix=\"{VIP}\",table=\"198\",state=\"{}\"}} 1",
        class.name()
    );
    assert!(m.contains(&gauge), "{gauge} in:\n{m}");
    doc
}

/// ribbridge's own probes of the backend (the OpenShift router's
/// endpoints, `lab.sh backend`), beside a writer that does not check it:
/// ready failing is `unready`, health failing `blackhole`, both back
/// `advertised`; with `withdraw = true`, nothing taken out beside the live
/// writer, but the writer killed and the backend down, ribbridge takes the
/// VIP out of BGP (the router's paths watched) and puts it back when the
/// backend is up; the route gone under a healthy backend `capacity_lost`
/// after two of its writer's ticks.
async fn backend_probes(frr: &'static str) {
    let lab_guard = Lab::up(frr, 2, &[VIP]);
    let mut router = RouteWatch::open("rb-router");
    lab(&["vip-add", "node2", VIP]);
    lab(&["backend", "node1", "up"]);
    lab(&["kube-vip", "node1", "start", VIP, "--interval", "1"]);
    // The probes as DEPLOY.md gives them for the ingress VIP, with
    // `withdraw = true`.
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("ribbridge.toml");
    std::fs::write(
        &file,
        format!(
            "[[vip]]\nprefix = \"{VIP}\"\nhealth = \"http://127.0.0.1:1936/healthz\"\n\
             ready = \"http://127.0.0.1:1936/healthz/ready\"\nwithdraw = true\n"
        ),
    )
    .expect("config file");
    let file = file.display().to_string();
    let mut d = Daemon::start(
        &lab_guard,
        "rb-node1",
        &[
            "--mode",
            "repair",
            "--require-address",
            "true",
            "--config",
            &file,
        ],
    )
    .await;
    d.seen_or_wait("VIP consistent && to=advertised", LIMIT)
        .await;
    d.seen_or_wait(
        "backend probe changed && probe=\"ready\" && state=\"up\"",
        LIMIT,
    )
    .await;
    router
        .wait_nexthops(vip_addr(), 32, 2, LIMIT)
        .await
        .expect("both nodes' paths");
    let step = |what: &'static str| async move {
        lab(&["backend", "node1", what]);
        Instant::now()
    };
    // Heals before the faults are the 10.7 drift ribbridge exists for (a
    // writer's replace can lose zebra's import); none may follow them.
    let healed = heals(&d).await;
    // Draining: /healthz passes, /healthz/ready fails.
    let t = step("draining").await;
    let doc = drifts_to(&mut d, frr, "backend draining", t, Class::Unready).await;
    let b = vip_of(&doc, VIP).backend.clone().expect("probed");
    assert_eq!(
        (b.health.as_deref(), b.ready.as_deref()),
        (Some("up"), Some("down"))
    );
    // Down: nothing listens; the writer (no check of its own) keeps the
    // route: the router sends node1 traffic it cannot serve.
    let t = step("down").await;
    drifts_to(&mut d, frr, "backend down", t, Class::Blackhole).await;
    let m = d.metrics().await;
    for want in [
        format!("ribbridge_backend_up{{prefix=\"{VIP}\",probe=\"health\"}} 0"),
        format!(
            "ribbridge_probe_failures_total{{prefix=\"{VIP}\",probe=\"health\",reason=\"refused\"}}"
        ),
        "ribbridge_probe_duration_seconds_count{probe=\"health\"}".to_string(),
    ] {
        assert!(m.contains(&want), "{want} in:\n{m}");
    }
    assert_eq!(
        heals(&d).await,
        healed,
        "a blackhole is reported, not healed"
    );
    // Up again: advertised.
    let t = step("up").await;
    let line = d.wait_log("VIP consistent && to=advertised", LIMIT).await;
    eprintln!(
        "FRR {frr}: backend up, advertised after {:?}: {line}",
        t.elapsed()
    );
    // Everything above beside a live writer: ribbridge took nothing out.
    assert_eq!(withdrawals(&d).await, (0, 0), "never against a live writer");
    // The writer killed (its route and address stay), then the backend
    // down: nobody but ribbridge will withdraw the VIP (`withdraw = true`).
    lab(&["kube-vip", "node1", "kill", VIP]);
    let t = step("down").await;
    let line = d.wait_log("VIP withdrawn by ribbridge", LIMIT).await;
    eprintln!(
        "FRR {frr}: writer killed and backend down, withdrawn by ribbridge after {:?}: {line}",
        t.elapsed()
    );
    router
        .wait_nexthops(vip_addr(), 32, 1, LIMIT)
        .await
        .expect("node2's path alone after the withdrawal");
    eprintln!(
        "FRR {frr}: the router down to node2's path {:?} after the backend went down",
        t.elapsed()
    );
    d.wait_log("VIP consistent && to=withdrawn", LIMIT).await;
    let (doc, code) = d.status().await;
    let v = vip_of(&doc, VIP);
    assert_eq!(
        (class_of(&doc, VIP), code, v.withdrawal.as_deref()),
        (Class::Withdrawn, 0, Some("withdrawn")),
        "{v:?}"
    );
    let m = d.metrics().await;
    assert!(
        m.contains("ribbridge_vips_withdrawn_by_ribbridge 1"),
        "one VIP held out, exported for the alert:\n{m}"
    );
    let running = lab(&["vtysh", "rb-node1", "show running-config"]);
    assert!(
        running.contains("description ribbridge-withdraw")
            && running.contains(&format!("ribbridge-withdraw-v4 seq 5 permit {VIP}")),
        "the marked entry and the list in bgpd:\n{running}"
    );
    // The backend up again: put back, the router has both paths again.
    let t = step("up").await;
    let line = d
        .wait_log("VIP put back into BGP by ribbridge", LIMIT)
        .await;
    router
        .wait_nexthops(vip_addr(), 32, 2, LIMIT)
        .await
        .expect("both paths after the put back");
    eprintln!(
        "FRR {frr}: backend up, both paths at the router again after {:?}: {line}",
        t.elapsed()
    );
    assert_eq!(withdrawals(&d).await, (1, 1), "one episode, counted");
    assert!(
        d.metrics()
            .await
            .contains("ribbridge_vips_withdrawn_by_ribbridge 0"),
        "none held out once put back"
    );
    let running = lab(&["vtysh", "rb-node1", "show running-config"]);
    assert!(
        !running.contains("ribbridge-withdraw"),
        "nothing of the withdrawal left in bgpd:\n{running}"
    );
    lab(&["kube-vip", "node1", "start", VIP, "--interval", "1"]);
    d.wait_log("VIP consistent && to=advertised", LIMIT).await;
    // The route gone under a healthy backend (another instance's cleanup,
    // a writer gone): capacity_lost after two of its 1 s ticks.
    lab(&["kube-vip", "node1", "kill", VIP]);
    let t = Instant::now();
    lab(&["vip-del", "node1", VIP, "--with-address"]);
    drifts_to(&mut d, frr, "route deleted", t, Class::CapacityLost).await;
    router
        .wait_nexthops(vip_addr(), 32, 1, LIMIT)
        .await
        .expect("node2's path alone");
    assert_eq!(
        heals(&d).await,
        healed,
        "ribbridge never adds kube-vip's route"
    );
    d.stop().await;
    drop(lab_guard);
}

/// IPv6: a /128 keeps no realm, but the kernel announces every replace,
/// so kube-vip's heartbeat is seen and a killed writer orphans its VIP; an
/// address whose duplicate address detection fails (`dadfailed`, another
/// host on the link holds it) is unusable: the VIP is no longer served
/// (`blackhole` while BGP sends it), never `advertised`.
#[tokio::test]
async fn ipv6_writer_and_dadfailed_address_frr_10_7() {
    const V6: &str = "2001:db8::10/128";
    let lab_guard = Lab::up("10.7", 2, &[V6]);
    let mut d = Daemon::start(
        &lab_guard,
        "rb-node1",
        &["--mode", "repair", "--require-address", "true"],
    )
    .await;
    lab(&["kube-vip", "node1", "start", V6, "--interval", "1"]);
    d.seen_or_wait("VIP consistent && to=advertised", LIMIT)
        .await;
    let t = Instant::now();
    loop {
        let (doc, _) = d.status().await;
        let w = vip_of(&doc, V6).writer.clone();
        if w.as_ref().is_some_and(|w| w.state == "alive") {
            eprintln!(
                "IPv6: writer alive {:?} after advertised: {w:?}",
                t.elapsed()
            );
            break;
        }
        assert!(t.elapsed() < LIMIT, "IPv6 writer not alive: {w:?}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let t = Instant::now();
    lab(&["kube-vip", "node1", "kill", V6]);
    let line = d.wait_log("VIP drift && to=orphaned", LIMIT).await;
    eprintln!(
        "IPv6: writer killed, orphaned after {:?}: {line}",
        t.elapsed()
    );
    // The address moves to node1's uplink while the router's side of the
    // link already holds it: node1's copy fails duplicate detection.
    let healed = heals(&d).await;
    lab(&[
        "exec", "rb-node1", "ip", "-6", "addr", "del", V6, "dev", "lo",
    ]);
    lab(&[
        "exec",
        "rb-router",
        "ip",
        "-6",
        "addr",
        "add",
        V6,
        "dev",
        "rb-n1",
        "nodad",
    ]);
    // The lab turns duplicate detection off on its links (it keeps bgpd's
    // IPv6 sessions waiting): on for node1's uplink, as on a real node.
    let on = std::process::Command::new("ip")
        .args(["netns", "exec", "rb-node1", "sysctl", "-qw"])
        .arg("net.ipv6.conf.eth0.accept_dad=1")
        .status()
        .expect("ip netns exec sysctl");
    assert!(on.success(), "accept_dad on node1's eth0: {on}");
    let t = Instant::now();
    lab(&[
        "exec", "rb-node1", "ip", "-6", "addr", "add", V6, "dev", "eth0",
    ]);
    // tentative at once, dadfailed one duplicate detection later (~1 s):
    // the kernel's own word, polled (ribbridge says unusable for both).
    loop {
        let failed = lab(&[
            "exec",
            "rb-node1",
            "ip",
            "-6",
            "addr",
            "show",
            "dev",
            "eth0",
            "dadfailed",
        ]);
        if failed.contains("2001:db8::10") {
            break;
        }
        assert!(
            t.elapsed() < LIMIT,
            "node1's copy never failed duplicate detection"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let dadfailed = t.elapsed();
    let (doc, code) = d.status().await;
    let v = vip_of(&doc, V6);
    eprintln!(
        "IPv6: dadfailed {dadfailed:?} after the add; ribbridge: address {:?}, state {:?}, exit {code}",
        v.address,
        v.state.name()
    );
    assert_eq!(v.address.as_deref(), Some("unusable"), "{v:?}");
    // Re-asserted (a writer's replace): BGP may send it again, the node
    // still cannot serve it.
    lab(&["vip-reassert", "node1", V6]);
    let (_, line) = d
        .wait_either("to=blackhole", "VIP consistent && to=withdrawn", LIMIT)
        .await;
    eprintln!("IPv6: dadfailed, then re-asserted: {line}");
    let (doc, code) = d.status().await;
    let class = class_of(&doc, V6);
    assert!(
        matches!(class, Class::Blackhole | Class::Withdrawn),
        "never advertised without a usable address: {class}"
    );
    let want = i32::from(class == Class::Blackhole);
    assert_eq!(code, want, "exit 1 on a blackhole, 0 withdrawn");
    assert_eq!(heals(&d).await, healed, "nothing re-advertises it");
    lab(&[
        "exec",
        "rb-router",
        "ip",
        "-6",
        "addr",
        "del",
        V6,
        "dev",
        "rb-n1",
    ]);
    d.stop().await;
    drop(lab_guard);
}

#[tokio::test]
async fn backend_probes_frr_10_7() {
    backend_probes("10.7").await;
}

#[tokio::test]
async fn writer_and_address_frr_10_7() {
    writer_and_address("10.7").await;
}

#[tokio::test]
async fn writer_and_address_frr_8_4() {
    writer_and_address("8.4").await;
}
