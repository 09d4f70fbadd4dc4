//! The fault suite: FRR's daemons killed and restarted under a
//! running ribbridge, ribbridge itself killed during a drift, FRR's socket
//! directory missing at start, a million-route flood in an unwatched table
//! while a VIP drifts. Each fault asserts what ribbridge must do and prints
//! what it measured; `docs/RELIABILITY.md` carries the figures.
//!
//! Faults are `scripts/lab.sh kill|start NAMESPACE DAEMON` (one command for
//! tests, benches and people); every wait is on a log line of the daemon.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use ribbridge::reconcile::Class;

use crate::support::daemon::Daemon;
use crate::support::{Lab, RouteWatch, lab};

const VIP: &str = "192.0.2.10/32";
const NODE: &str = "rb-node1";
fn state_of(doc: &ribbridge::status::StatusDoc) -> Class {
    crate::support::class_of(doc, VIP)
}

fn count(log: &[String], needle: &str) -> usize {
    log.iter().filter(|l| l.contains(needle)).count()
}

fn ms(d: &[Duration]) -> (u128, u128) {
    let mut v: Vec<u128> = d.iter().map(Duration::as_millis).collect();
    v.sort_unstable();
    (v[v.len() / 2], v[v.len() - 1])
}

/// A lab of `frr`, node1's ribbridge in repair mode polling bgpd every
/// second, the VIP advertised by both nodes.
async fn advertised_with_fast_polls(frr: &'static str) -> (Lab, Daemon) {
    let lab_guard = Lab::up(frr, 2, &[VIP]);
    // bgpd polled every second, so that a dead bgpd is seen at once (the
    // other faults do not depend on it).
    let config = crate::support::bgp_poll_config(1);
    let mut d = Daemon::start(
        &lab_guard,
        NODE,
        &["--config", &crate::support::config_arg(&config)],
    )
    .await;
    lab(&["vip-add", "node1", VIP]);
    lab(&["vip-add", "node2", VIP]);
    d.wait_log("VIP consistent && to=advertised", Duration::from_secs(15))
        .await;
    (lab_guard, d)
}

/// zebra SIGKILLed and restarted (4 times in CI), then bgpd once, under one
/// ribbridge in repair mode with the VIP advertised.
async fn zebra_and_bgpd_restarts(frr: &'static str) {
    let (lab_guard, mut d) = advertised_with_fast_polls(frr).await;
    let before = d.drain().len();

    // zebra's restarts: 4 in the test command (~3 s each), more with
    // RIBBRIDGE_ZEBRA_RESTARTS (the recorded cases hold 10).
    let restarts = crate::support::env_count("RIBBRIDGE_ZEBRA_RESTARTS", 4);
    let mut back = Vec::new();
    for i in 0..restarts {
        lab(&["kill", NODE, "zebra"]);
        d.wait_log("zebra: disconnected", Duration::from_secs(5))
            .await;
        d.wait_log("readiness changed && ready=false", Duration::from_secs(5))
            .await;
        let m = d.metrics().await;
        assert!(
            m.contains("ribbridge_zapi_connected 0"),
            "zebra away, round {i}: ribbridge_zapi_connected is not 0:\n{m}"
        );
        let (doc, _) = d.status().await;
        assert!(!doc.ready, "ready while zebra is away (round {i})");
        let t = Instant::now();
        lab(&["start", NODE, "zebra"]);
        d.wait_log("readiness changed && ready=true", Duration::from_secs(10))
            .await;
        let took = t.elapsed();
        let (doc, code) = d.status().await;
        assert_eq!(
            (state_of(&doc), code),
            (Class::Advertised, 0),
            "round {i}: not consistent once zebra is back"
        );
        back.push(took);
    }
    let log = d.drain()[before..].to_vec();
    assert_eq!(
        (count(&log, "VIP drift"), count(&log, "healing")),
        (0, 0),
        "FRR {frr}: drift or action while zebra was away or starting:\n{}",
        log.join("\n")
    );
    assert!(count(&log, "ribbridge_zapi_connected") == 0);
    let (median, worst) = ms(&back);
    eprintln!(
        "FRR {frr}: zebra SIGKILL+restart x{restarts}: consistent and ready after median {median} ms, worst {worst} ms from `lab.sh start`; no drift, no action"
    );
    // How fast is a figure (printed above, docs/RELIABILITY.md), not an
    // assertion: every round above waited for the state itself.

    // bgpd: no_peer while it is away, advertised after, never an action.
    let before = d.drain().len();
    let t = Instant::now();
    lab(&["kill", NODE, "bgpd"]);
    d.wait_log("VIP drift && to=no_peer", Duration::from_secs(10))
        .await;
    let seen = t.elapsed();
    let (doc, code) = d.status().await;
    assert_eq!((state_of(&doc), code), (Class::NoPeer, 1));
    let t = Instant::now();
    lab(&["start", NODE, "bgpd"]);
    d.wait_log("VIP consistent && to=advertised", Duration::from_secs(30))
        .await;
    let again = t.elapsed();
    let log = d.drain()[before..].to_vec();
    assert_eq!(
        count(&log, "healing"),
        0,
        "FRR {frr}: acted while bgpd was away:\n{}",
        log.join("\n")
    );
    eprintln!(
        "FRR {frr}: bgpd SIGKILL: no_peer after {seen:?}; restarted: advertised again after {again:?}; no action"
    );
    d.stop().await;
    drop(lab_guard);
}

#[tokio::test]
async fn faults_zebra_and_bgpd_restart_frr_8_4() {
    zebra_and_bgpd_restarts("8.4").await;
}

#[tokio::test]
async fn faults_zebra_and_bgpd_restart_frr_10_3() {
    zebra_and_bgpd_restarts("10.3").await;
}

#[tokio::test]
async fn faults_zebra_and_bgpd_restart_frr_10_7() {
    zebra_and_bgpd_restarts("10.7").await;
}

/// ribbridge SIGKILLed while a VIP drifts, started again: it finds the
/// drift from scratch and heals it once.
async fn killed_during_drift(frr: &'static str) {
    let lab_guard = Lab::up(frr, 2, &[VIP]);
    lab(&["vip-add", "node2", VIP]);
    if frr == "8.4" {
        lab(&["vip-add", "node1", VIP]);
    }
    let mut d = Daemon::start(&lab_guard, NODE, &["--mode", "observe"]).await;
    // 8.4 sometimes loses a fresh import by itself: that is the drift then.
    let lost = frr == "8.4"
        && d.wait_log("table=198 from=", Duration::from_secs(15))
            .await
            .contains("to=not_redistributed");
    // The 10.x setups are races inside zebra: tried again until they drift.
    let drift = if lost {
        Class::NotRedistributed
    } else {
        crate::support::drift_node1(frr, &mut d).await.0
    };
    let log = d.kill9().await;
    assert_eq!(count(&log, "healing"), 0, "observe mode acted");

    // 10.3's only heal cycles the address: the operator's opt-in.
    let mut flags = if frr == "10.3" {
        vec!["--heal-addresses"]
    } else {
        vec![]
    };
    flags.extend(["--mode", "repair"]);
    let t = Instant::now();
    let mut d = Daemon::start(&lab_guard, NODE, &flags).await;
    d.wait_log(
        &format!("VIP drift && to={}", drift.name()),
        Duration::from_secs(10),
    )
    .await;
    let found = t.elapsed();
    d.wait_log("VIP consistent && to=advertised", Duration::from_secs(10))
        .await;
    let healed = t.elapsed();
    let (doc, code) = d.status().await;
    assert_eq!((state_of(&doc), code), (Class::Advertised, 0));
    let (_, _, log) = d.stop().await;
    // One action heals 8.4 and 10.7 every time. 10.3's address cycle is
    // itself a race inside zebra (the route can be lost again, ~1 run in 5,
    // docs/FRR-BEHAVIOUR.md): there the core's bounded retries may
    // take more than one, never more than its limit of 3.
    let heals = count(&log, "healing");
    let limit = if frr == "10.3" { 3 } else { 1 };
    assert!(
        (1..=limit).contains(&heals),
        "FRR {frr}: {heals} heal actions, expected 1..={limit}:\n{}",
        log.join("\n")
    );
    eprintln!(
        "FRR {frr}: restarted after SIGKILL during a {} drift: found again {found:?} after start, healed with {heals} action(s) at {healed:?}",
        drift
    );
    drop(lab_guard);
}

#[tokio::test]
async fn faults_killed_during_drift_frr_8_4() {
    killed_during_drift("8.4").await;
}

#[tokio::test]
async fn faults_killed_during_drift_frr_10_3() {
    killed_during_drift("10.3").await;
}

#[tokio::test]
async fn faults_killed_during_drift_frr_10_7() {
    killed_during_drift("10.7").await;
}

/// FRR's socket directory absent when ribbridge starts: not ready, with a
/// log line naming the path; ready once the directory appears. The
/// directory is a symlink of our own switched onto the lab's.
#[tokio::test]
async fn faults_frr_dir_absent_then_created() {
    let lab_guard = Lab::up("10.7", 2, &[VIP]);
    lab(&["vip-add", "node1", VIP]);
    let link = PathBuf::from("/run/rbf-frr-dir");
    let _ = std::fs::remove_file(&link);
    let mut d = Daemon::spawn(NODE, &link, &[]);
    let line = d
        .wait_log(
            "FRR's socket directory does not exist && frr_dir=/run/rbf-frr-dir",
            Duration::from_secs(10),
        )
        .await;
    assert!(
        line.contains("No such file") && line.contains("hostPath"),
        "unclear reason: {line}"
    );
    let why = d
        .wait_log(
            "readiness changed && ready=false && zebra not connected",
            Duration::from_secs(10),
        )
        .await;
    let r = d.http("GET /readyz HTTP/1.1\\r\\n\\r\\n").await;
    assert!(
        r.starts_with("HTTP/1.1 503"),
        "/readyz while FRR is absent: {r}"
    );
    std::os::unix::fs::symlink(lab_guard.sockdir(NODE), &link).expect("symlink");
    let t = Instant::now();
    d.wait_log("readiness changed && ready=true", Duration::from_secs(10))
        .await;
    let took = t.elapsed();
    let r = d.http("GET /readyz HTTP/1.1\\r\\n\\r\\n").await;
    assert!(
        r.starts_with("HTTP/1.1 200"),
        "/readyz once FRR is there: {r}"
    );
    d.wait_log("VIP consistent && to=advertised", Duration::from_secs(10))
        .await;
    eprintln!("FRR dir absent: {why}\nready {took:?} after the directory appeared");
    d.stop().await;
    std::fs::remove_file(&link).expect("remove symlink");
    drop(lab_guard);
}

/// `ip -batch` lines: `route OP 10.x.y.z/32 TAIL` for `n` host routes.
fn flood_routes(f: &mut impl std::io::Write, op: &str, n: usize, tail: &str) {
    for i in 0..n {
        writeln!(
            f,
            "route {op} 10.{}.{}.{}/32 {tail}",
            i >> 16,
            (i >> 8) & 0xff,
            i & 0xff
        )
        .expect("write");
    }
}

/// `GET /status` from inside `ns`, every 100 ms (a pace, not a wait),
/// timing each whole answer, until finished.
struct StatusSampler {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<(Vec<Duration>, usize)>,
}

impl StatusSampler {
    fn start(ns: &'static str, port: u16) -> StatusSampler {
        use std::sync::atomic::Ordering;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            crate::support::in_netns(ns, move || {
                use std::io::{Read, Write};
                let mut took = Vec::new();
                let mut unanswered = 0;
                while !flag.load(Ordering::Relaxed) {
                    let t = Instant::now();
                    let answered = std::net::TcpStream::connect(("127.0.0.1", port))
                        .and_then(|mut c| {
                            c.write_all(b"GET /status HTTP/1.1\r\n\r\n")?;
                            let mut body = Vec::new();
                            c.read_to_end(&mut body)?;
                            Ok(body.starts_with(b"HTTP/1.1 200"))
                        })
                        .unwrap_or(false);
                    if answered {
                        took.push(t.elapsed());
                    } else {
                        unanswered += 1;
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
                (took, unanswered)
            })
        });
        StatusSampler { stop, thread }
    }

    /// The latencies of the answered requests, and how many got no 200
    /// (the endpoint's 503 after its 5 s wait for the owner).
    fn finish(self) -> (Vec<Duration>, usize) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread.join().expect("sampler")
    }
}

/// (p50, p99, max) of `d` (zero when empty).
fn quantiles(d: &[Duration]) -> (Duration, Duration, Duration) {
    let mut v = d.to_vec();
    v.sort_unstable();
    let at = |q: f64| {
        v.get(((v.len() as f64 - 1.0) * q).round() as usize)
            .copied()
            .unwrap_or_default()
    };
    (at(0.5), at(0.99), at(1.0))
}

/// The owner's timer lag from `/metrics`: per timer, the count, the mean
/// and the bucket holding the 99th percentile.
fn owner_lag(metrics: &str) -> String {
    let mut out = Vec::new();
    for timer in ["heartbeat", "deadline"] {
        let value = |suffix: &str, extra: &str| -> Vec<(String, f64)> {
            metrics
                .lines()
                .filter(|l| {
                    l.starts_with(&format!("ribbridge_owner_lag_seconds{suffix}{{"))
                        && l.contains(&format!("timer=\"{timer}\""))
                        && l.contains(extra)
                })
                .filter_map(|l| {
                    let (k, v) = l.rsplit_once(' ')?;
                    Some((k.to_string(), v.parse().ok()?))
                })
                .collect()
        };
        let count = value("_count", "").first().map_or(0.0, |x| x.1);
        let sum = value("_sum", "").first().map_or(0.0, |x| x.1);
        let p99 = value("_bucket", "le=")
            .into_iter()
            .find(|(_, n)| *n >= 0.99 * count)
            .and_then(|(k, _)| Some(k.split("le=\"").nth(1)?.split('"').next()?.to_string()))
            .unwrap_or_else(|| "?".to_string());
        let mean_ms = if count > 0.0 {
            sum / count * 1000.0
        } else {
            0.0
        };
        out.push(format!(
            "{timer}: {count} served, mean {mean_ms:.2} ms late, p99 <= {p99} s"
        ));
    }
    out.join("; ")
}

/// One million route changes in an unwatched table (500 000 adds, 500 000
/// deletes) with the VIP's drift written in the middle of the flood: the
/// drift is classified and healed, resyncs (overruns, if any) are counted,
/// memory stays bounded.
#[tokio::test]
async fn faults_flood_of_a_million_changes_while_a_vip_drifts() {
    // 8.4: a realm-changing replace drops the import every time
    // (docs/FRR-BEHAVIOUR.md; 10 of 10 beats in bridge.rs), so the drift in the
    // middle of the flood is certain. 10.7's route+address trigger was not:
    // with zebra busy on the flood it did not always lose the VIP.
    let frr = "8.4";
    let lab_guard = Lab::up(frr, 2, &[VIP]);
    let mut d = Daemon::start(&lab_guard, NODE, &[]).await;
    lab(&["vip-add", "node1", VIP]);
    lab(&["vip-add", "node2", VIP]);
    d.wait_log("VIP consistent && to=advertised", Duration::from_secs(15))
        .await;
    let rss_before = d.peak_rss_kib();
    let dir = tempfile::tempdir().expect("tempdir");
    let batch = dir.path().join("flood.batch");
    {
        use std::io::Write;
        let mut f = std::io::BufWriter::new(std::fs::File::create(&batch).expect("batch"));
        // 500 000 adds, kube-vip's heartbeat on the VIP (a realm-changing
        // replace), 500 000 deletes.
        for op in ["add", "vip", "del"] {
            if op == "vip" {
                writeln!(
                    f,
                    "route replace {VIP} dev lo table 198 proto 248 scope global realm 1"
                )
                .expect("write");
                continue;
            }
            flood_routes(&mut f, op, 500_000, "dev lo table 4242");
        }
    }
    let sampler = StatusSampler::start(NODE, d.port);
    let t = Instant::now();
    let flood = tokio::spawn(
        tokio::process::Command::new("ip")
            .args(["netns", "exec", NODE, "ip", "-batch"])
            .arg(&batch)
            .status(),
    );
    // zebra's withdrawal within 250 ms of the replace is re-imported at
    // once (no drift); later, with zebra busy on the flood, the drift is
    // classified and healed on the graced path. Either is the heal.
    let (drifted, _) = d
        .wait_either(
            "VIP drift && to=not_redistributed",
            "healing && reimport_table",
            Duration::from_secs(120),
        )
        .await;
    let classified = t.elapsed();
    if drifted {
        d.wait_log("VIP consistent && to=advertised", Duration::from_secs(120))
            .await;
    }
    let healed = t.elapsed();
    let status = flood.await.expect("join").expect("ip -batch");
    assert!(status.success(), "ip -batch failed: {status}");
    let flood_took = t.elapsed();
    let (latencies, unanswered) = sampler.finish();
    let mut router = RouteWatch::open("rb-router");
    router
        .wait_nexthops(
            "192.0.2.10".parse().expect("address"),
            32,
            2,
            Duration::from_secs(30),
        )
        .await
        .expect("both paths at the router after the flood");
    let (doc, _) = d.status().await;
    assert_eq!(crate::support::class_of(&doc, VIP), Class::Advertised);
    let m = d.metrics().await;
    let resyncs: Vec<&str> = m
        .lines()
        .filter(|l| l.starts_with("ribbridge_kernel_resyncs_total{"))
        .collect();
    let peak = d.peak_rss_kib();
    eprintln!(
        "flood of 1 000 000 changes in table 4242 ({flood_took:?}): {} at {classified:?}, healed at {healed:?}; peak RSS {} KiB before, {peak} KiB after; resyncs: {resyncs:?}",
        if drifted {
            "drift classified"
        } else {
            "re-imported at once"
        },
        rss_before
    );
    // Fairness (docs/PERFORMANCE.md): /status answered through the flood,
    // and how late the owner served its own timers.
    let (p50, p99, max) = quantiles(&latencies);
    eprintln!(
        "flood: /status latency over {} answered requests during the flood ({unanswered} unanswered): p50 {p50:?}, p99 {p99:?}, max {max:?}; owner lag: {}",
        latencies.len(),
        owner_lag(&m)
    );
    assert!(
        !latencies.is_empty(),
        "/status never answered during the flood"
    );
    assert!(
        resyncs.iter().any(|l| l.contains("reason=\"startup\"")),
        "resyncs are not counted:\n{m}"
    );
    assert!(
        peak < 64 * 1024,
        "memory is not bounded: peak RSS {peak} KiB"
    );
    d.stop().await;
    drop(lab_guard);
}

/// Fairness under a flood the owner itself must take: route changes in the
/// watched table (every one a VIP, seen by the kernel watcher and
/// redistributed by zebra), observe mode so that nothing heals. `/status`
/// is sampled all through it, and the owner's timers report their lag.
/// CI writes 5 000 adds and 5 000 deletes; the bench's figure
/// (docs/PERFORMANCE.md) sets `RIBBRIDGE_FLOOD_VIPS=100000`.
#[tokio::test]
async fn faults_flood_in_the_watched_table_status_and_timers_stay_served() {
    let t_test = Instant::now();
    let n = crate::support::env_count("RIBBRIDGE_FLOOD_VIPS", 5_000);
    let lab_guard = Lab::up("10.7", 2, &[VIP]);
    let mut d = Daemon::start(&lab_guard, NODE, &["--mode", "observe"]).await;
    lab(&["vip-add", "node1", VIP]);
    d.wait_log("VIP ECMP legs && 192.0.2.10/32", Duration::from_secs(15))
        .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let batch = dir.path().join("flood.batch");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&batch).expect("batch"));
        for op in ["add", "del"] {
            flood_routes(&mut f, op, n, "dev lo table 198 proto 248 scope global");
        }
    }
    eprintln!("flood: lab and daemon ready after {:?}", t_test.elapsed());
    let sampler = StatusSampler::start(NODE, d.port);
    let t = Instant::now();
    let status = tokio::process::Command::new("ip")
        .args(["netns", "exec", NODE, "ip", "-batch"])
        .arg(&batch)
        .status()
        .await
        .expect("ip -batch");
    assert!(status.success(), "ip -batch failed: {status}");
    let flood_took = t.elapsed();
    // The flood is over for the owner once it has taken the last delete:
    // no flooded VIP is in the kernel or zebra any more (they stay listed,
    // withdrawn, until forgotten).
    let t_settle = Instant::now();
    loop {
        // The owner may be too busy to answer within the endpoint's 5 s.
        let raw = d.http("GET /status HTTP/1.1\\r\\n\\r\\n").await;
        let doc: Option<ribbridge::status::StatusDoc> = raw
            .starts_with("HTTP/1.1 200")
            .then(|| serde_json::from_str(raw.split("\r\n\r\n").nth(1)?).ok())
            .flatten();
        let left = doc.map_or(usize::MAX, |doc| {
            doc.vips
                .iter()
                .filter(|v| v.prefix.to_string() != VIP)
                .filter(|v| v.kernel != Some(false) || v.zebra != Some(false))
                .count()
        });
        if left == 0 {
            break;
        }
        assert!(
            t_settle.elapsed() < Duration::from_secs(300),
            "the owner did not take the flood's deletes within 300 s ({left} VIPs left)"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let settled = t.elapsed();
    let (latencies, unanswered) = sampler.finish();
    let m = d.metrics().await;
    let (p50, p99, max) = quantiles(&latencies);
    eprintln!(
        "flood of {} changes in the watched table (10.7, observe): ip -batch took {flood_took:?}, the owner settled at {settled:?}; /status over {} answered requests ({unanswered} unanswered): p50 {p50:?}, p99 {p99:?}, max {max:?}; owner lag: {}; peak RSS {} KiB",
        2 * n,
        latencies.len(),
        owner_lag(&m),
        d.peak_rss_kib()
    );
    assert!(
        !latencies.is_empty(),
        "/status never answered during the flood"
    );
    assert!(
        m.contains("ribbridge_owner_lag_seconds_count{timer=\"heartbeat\"}"),
        "the owner's heartbeat lag is exported:\n{m}"
    );
    d.stop().await;
    drop(lab_guard);
}

/// The open file descriptors of `pid`.
fn open_fds(pid: nix::unistd::Pid) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

/// A restart storm: node1's whole FRR (mgmtd, zebra, bgpd, as watchfrr
/// restarts them) killed and started back to back while kube-vip's
/// heartbeat re-asserts the VIP every second; repair mode. ribbridge stays
/// up, takes no action and reports no drift, is ready and `advertised`
/// after each restart, and its memory and descriptors stay bounded.
/// CI runs 3 restarts; the bench's figure sets `RIBBRIDGE_STORM_RESTARTS=20`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_restart_storm_of_the_whole_frr_frr_10_7() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let n = crate::support::env_count("RIBBRIDGE_STORM_RESTARTS", 3);
    let (lab_guard, mut d) = advertised_with_fast_polls("10.7").await;
    let (fds_before, rss_before) = (open_fds(d.pid()), d.peak_rss_kib());
    let before = d.drain().len();
    // kube-vip's heartbeat, at its pace (not a synchronisation).
    let beating = std::sync::Arc::new(AtomicBool::new(true));
    let beat = {
        let beating = beating.clone();
        std::thread::spawn(move || {
            while beating.load(Ordering::Relaxed) {
                lab(&["vip-reassert", "node1", VIP]);
                std::thread::sleep(Duration::from_secs(1));
            }
        })
    };
    let mut back = Vec::new();
    for i in 0..n {
        for daemon in ["bgpd", "zebra", "mgmtd"] {
            lab(&["kill", NODE, daemon]);
        }
        d.wait_log("zebra: disconnected", Duration::from_secs(10))
            .await;
        let t = Instant::now();
        for daemon in ["mgmtd", "zebra", "bgpd"] {
            lab(&["start", NODE, daemon]);
        }
        // Ready and advertised again: zebra's view complete, bgpd's
        // sessions back and sending the VIP.
        loop {
            let (doc, _) = d.status().await;
            if doc.ready && state_of(&doc) == Class::Advertised {
                break;
            }
            assert!(
                t.elapsed() < Duration::from_secs(60),
                "round {i}: not ready and advertised 60 s after FRR's start; /status: {doc:?}\n{}",
                d.drain().join("\n")
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        back.push(t.elapsed());
    }
    beating.store(false, Ordering::Relaxed);
    beat.join().expect("heartbeat thread");
    let log = d.drain()[before..].to_vec();
    let (fds_after, rss_after) = (open_fds(d.pid()), d.peak_rss_kib());
    let (median, worst) = ms(&back);
    eprintln!(
        "restart storm (10.7): {n} restarts of mgmtd+zebra+bgpd under kube-vip's heartbeat: ready and advertised after median {median} ms, worst {worst} ms from the start; descriptors {fds_before} -> {fds_after}; peak RSS {rss_before} -> {rss_after} KiB"
    );
    // The one report is the truth: `no_peer` while bgpd is gone (no
    // session sends the VIP), never a class that would heal, never an
    // action.
    let drifts: Vec<&String> = log.iter().filter(|l| l.contains("VIP drift")).collect();
    assert!(
        drifts.iter().all(|l| l.contains("to=no_peer")),
        "a drift other than no_peer during the storm:\n{}",
        log.join("\n")
    );
    assert_eq!(
        count(&log, "healing"),
        0,
        "a heal action during the storm:\n{}",
        log.join("\n")
    );
    // Bounded: every connection to FRR is closed when FRR goes (a leak
    // would add a descriptor or more per restart).
    assert!(
        fds_after <= fds_before + 2,
        "descriptors grew over {n} restarts: {fds_before} -> {fds_after}"
    );
    d.stop().await;
    drop(lab_guard);
}
