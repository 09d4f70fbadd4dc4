//! Supervision, proven by faults caused inside the real daemon beside FRR
//! 10.7 (docs/RELIABILITY.md, "Supervision"): the failpoints of
//! `src/fault.rs` (this binary is built with the `failpoints` feature),
//! each armed for a prefix so that the test picks the moment by adding
//! that VIP to the lab.
//!
//! One lab for every case (~5 s up); each case its own ribbridge on
//! rb-node1. Every wait is on a log line, an answer or an exit.

use std::time::Duration;

use crate::support::daemon::Daemon;
use crate::support::{Lab, lab};

const VIP: &str = "192.0.2.10/32";
/// The prefix the failpoints are armed for.
const POISON: &str = "192.0.2.66/32";
const NODE: &str = "rb-node1";

/// The sum of every series of `name` whose labels contain `labels`.
fn metric(text: &str, name: &str, labels: &str) -> f64 {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter(|l| {
            l.strip_prefix(name)
                .is_some_and(|r| (r.starts_with('{') || r.starts_with(' ')) && r.contains(labels))
        })
        .filter_map(|l| l.rsplit(' ').next()?.trim().parse::<f64>().ok())
        .sum()
}

/// The daemon's answer to `GET path`: (status code, body).
pub(crate) async fn get(d: &Daemon, path: &str) -> (u16, String) {
    let raw = d.http(&format!("GET {path} HTTP/1.1\\r\\n\\r\\n")).await;
    let code = raw
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = raw.split("\r\n\r\n").nth(1).unwrap_or("").to_string();
    (code, body)
}

/// Poll `path` until its answer has `code`; the body then.
pub(crate) async fn await_code(d: &mut Daemon, path: &str, code: u16, limit: Duration) -> String {
    let t = std::time::Instant::now();
    loop {
        let (c, body) = get(d, path).await;
        if c == code {
            return body;
        }
        assert!(
            t.elapsed() < limit,
            "{path} answered {c} {body:?}, not {code}, for {limit:?}\nribbridge's log:\n{}",
            d.drain().join("\n")
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// node1's ribbridge with `failpoint` armed for the poisoned prefix,
/// subscribed to zebra and ready.
async fn started(lab: &Lab, failpoint: &str) -> Daemon {
    let fp = format!("{failpoint}=return({POISON})");
    let mut d = Daemon::spawn_env(NODE, &lab.sockdir(NODE), &[], &[], &[("FAILPOINTS", &fp)]);
    d.wait_log("zebra: subscribed", Duration::from_secs(15))
        .await;
    await_code(&mut d, "/readyz", 200, Duration::from_secs(15)).await;
    d
}

/// The ZAPI client panics on the poisoned prefix, again after each
/// restart while zebra still holds it: restarted with a growing backoff,
/// counted, the daemon alive throughout and ready again once the prefix
/// is gone.
async fn zapi_panics_and_is_restarted(lab_guard: &Lab) {
    let mut d = started(lab_guard, "zapi-panic").await;
    lab(&["vip-add", "node1", POISON]);
    let line = d
        .wait_log(
            "a task ended: restarting it && zapi client && panicked: failpoint zapi-panic",
            Duration::from_secs(15),
        )
        .await;
    eprintln!("supervision: {line}");
    // The loop is visible: a second restart (the restarted client meets
    // the prefix in zebra's dump again).
    let t = std::time::Instant::now();
    loop {
        let m = d.metrics().await;
        let restarts = metric(&m, "ribbridge_task_restarts_total", "task=\"zapi client\"");
        if restarts >= 2.0 {
            let panics = metric(&m, "ribbridge_task_failures_total", "how=\"panic\"");
            assert!(
                panics >= 2.0,
                "each restart follows a counted panic: {panics}"
            );
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "no second restart: {restarts}\n{}",
            d.drain().join("\n")
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (code, body) = get(&d, "/healthz").await;
    assert_eq!(
        (code, body.as_str()),
        (200, "ok\n"),
        "alive while a task restarts"
    );
    lab(&["vip-del", "node1", POISON]);
    // Without the prefix the next restart holds: zebra's view complete
    // again, ready, the VIP joined.
    await_code(&mut d, "/readyz", 200, Duration::from_secs(45)).await;
    lab(&["vip-add", "node1", VIP]);
    lab(&["vip-add", "node2", VIP]);
    d.wait_log("VIP consistent && to=advertised", Duration::from_secs(15))
        .await;
    lab(&["vip-del", "node1", VIP]);
    lab(&["vip-del", "node2", VIP]);
    d.stop().await;
}

/// The owner loop wedges (its thread blocks, as a deadlock would):
/// `/healthz` fails with the reason, and SIGTERM still ends the process.
async fn owner_wedges_and_liveness_fails(lab_guard: &Lab) {
    let mut d = started(lab_guard, "owner-wedge").await;
    let (code, _) = get(&d, "/healthz").await;
    assert_eq!(code, 200, "alive before the fault");
    lab(&["vip-add", "node1", POISON]);
    d.wait_log("failpoint owner-wedge", Duration::from_secs(15))
        .await;
    let body = await_code(&mut d, "/healthz", 503, Duration::from_secs(30)).await;
    assert!(
        body.contains("not alive: the owner loop has not turned for"),
        "{body:?}"
    );
    eprintln!("supervision: wedged owner: /healthz {body:?}");
    lab(&["vip-del", "node1", POISON]);
    let (took, _, log) = d.stop().await;
    eprintln!("supervision: a wedged daemon stopped {took:?} after SIGTERM");
    assert!(
        !log.iter().any(|l| l.contains("panicked")),
        "no panic on the way out: {log:?}"
    );
}

/// The kernel watcher fails: an essential task, so the daemon goes not
/// alive and exits with code 4 naming it, for its runtime to restart.
async fn watcher_fails_and_the_daemon_exits(lab_guard: &Lab) {
    let mut d = started(lab_guard, "kernel-watcher-fail").await;
    lab(&["vip-add", "node1", POISON]);
    let ended = d
        .wait_log(
            "an essential task ended && kernel watcher && failpoint kernel-watcher-fail",
            Duration::from_secs(15),
        )
        .await;
    d.wait_log(
        "the kernel watcher task ended && runtime restarts it",
        Duration::from_secs(15),
    )
    .await;
    let status = tokio::time::timeout(Duration::from_secs(30), d.child.wait())
        .await
        .expect("the daemon exits after its watcher failed")
        .expect("wait");
    assert_eq!(status.code(), Some(4), "exit code 4: {status}");
    eprintln!("supervision: {ended}");
    lab(&["vip-del", "node1", POISON]);
}

/// A heal action hangs: reported as timed out after its deadline, never
/// left in flight (the core tries again).
async fn heal_hangs_and_times_out(lab_guard: &Lab) {
    let fp = format!("heal-hang=return({VIP})");
    let mut d = Daemon::spawn_env(
        NODE,
        &lab_guard.sockdir(NODE),
        &["--mode", "repair"],
        &[],
        &[("FAILPOINTS", &fp)],
    );
    d.wait_log("zebra: subscribed", Duration::from_secs(15))
        .await;
    // 10.7 loses a route written with its address in one batch
    // (kernel_only), a race inside zebra: tried again until it drifts.
    let (tries, _, _) = crate::support::reproduce(
        &mut d,
        "FRR 10.7: kernel_only (a heal that hangs)",
        crate::support::ROUTE_THEN_ADDRESS,
        "failpoint heal-hang",
    )
    .await;
    eprintln!("supervision: a heal started and hung after {tries} tries");
    let first = d
        .wait_log(
            "heal action failed && timed out after",
            Duration::from_secs(30),
        )
        .await;
    eprintln!("supervision: {first}");
    // Not in flight: the core decides a second attempt, which hangs and
    // times out in turn.
    d.wait_log("failpoint heal-hang", Duration::from_secs(60))
        .await;
    d.wait_log(
        "heal action failed && timed out after",
        Duration::from_secs(30),
    )
    .await;
    let m = d.metrics().await;
    let timeouts = metric(&m, "ribbridge_heal_actions_total", "result=\"timeout\"");
    assert!(timeouts >= 2.0, "two heal actions timed out: {timeouts}");
    let (code, _) = get(&d, "/healthz").await;
    assert_eq!(code, 200, "a hung heal does not wedge the owner");
    d.stop().await;
    lab(&["exec", NODE, "sh", "-c", crate::support::UNDO]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn supervision_frr_10_7() {
    crate::support::require_root();
    let lab_guard = Lab::up("10.7", 2, &[VIP]);
    zapi_panics_and_is_restarted(&lab_guard).await;
    owner_wedges_and_liveness_fails(&lab_guard).await;
    watcher_fails_and_the_daemon_exits(&lab_guard).await;
    heal_hangs_and_times_out(&lab_guard).await;
}

/// The BMP station's address in the router's namespace.
const STATION: &str = "127.0.0.1:11019";

/// The station's paths for `vip` at the lab router: `None` while unknown
/// (or while the router is not listed).
fn router_paths(doc: &ribbridge::status::StatusDoc, vip: &str) -> Option<u32> {
    doc.routers
        .iter()
        .find(|r| r.router == "127.0.0.1")?
        .vips
        .iter()
        .find(|v| v.prefix.to_string() == vip)?
        .paths
}

/// Poll the station's `/status` until `ok` holds of the VIP's paths.
async fn await_paths(d: &mut Daemon, what: &str, ok: impl Fn(Option<u32>) -> bool) {
    let t = std::time::Instant::now();
    loop {
        let (doc, _) = d.status().await;
        if ok(router_paths(&doc, VIP)) {
            return;
        }
        assert!(
            t.elapsed() < Duration::from_secs(45),
            "{what}: not within 45 s; /status: {doc:?}\nthe station's log:\n{}",
            d.drain().join("\n")
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A BMP session task panics (the router announced the poisoned prefix):
/// the listener says the session's `Down` for it, so the router's paths
/// are unknown, never counted from a dead session; once the prefix is
/// gone the router's next session syncs again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn supervision_bmp_session_panic_frr_10_7() {
    crate::support::require_root();
    // The poisoned prefix is one the nodes may advertise.
    let lab_guard = Lab::up_bmp("10.7", 2, &[VIP, POISON], STATION);
    let fp = format!("bmp-session-panic=return({POISON})");
    let mut station = Daemon::spawn_env(
        "rb-router",
        &lab_guard.sockdir("rb-router"),
        &crate::support::station_args(STATION, VIP),
        &[],
        &[("FAILPOINTS", &fp)],
    );
    station
        .wait_log("bmp: station listening", Duration::from_secs(15))
        .await;
    lab(&["vip-add", "node1", VIP]);
    lab(&["vip-add", "node2", VIP]);
    await_paths(&mut station, "both nodes' paths counted", |p| p == Some(2)).await;
    lab(&["vip-add", "node1", POISON]);
    let line = station
        .wait_log(
            "bmp: a session task panicked && failpoint bmp-session-panic",
            Duration::from_secs(30),
        )
        .await;
    eprintln!("supervision: {line}");
    // While the router still holds the prefix, every session it opens
    // panics before its End-of-RIB: the paths stay unknown.
    await_paths(&mut station, "the paths unknown after the panic", |p| {
        p.is_none()
    })
    .await;
    let m = station.metrics().await;
    let panics = metric(
        &m,
        "ribbridge_task_failures_total",
        "how=\"panic\",task=\"bmp session\"",
    ) + metric(
        &m,
        "ribbridge_task_failures_total",
        "task=\"bmp session\",how=\"panic\"",
    );
    assert!(panics >= 1.0, "the panic is counted: {panics}\n{m}");
    let (code, _) = get(&station, "/healthz").await;
    assert_eq!(code, 200, "a session's panic leaves the station alive");
    lab(&["vip-del", "node1", POISON]);
    await_paths(&mut station, "synced again once the prefix is gone", |p| {
        p == Some(2)
    })
    .await;
    station.stop().await;
}
