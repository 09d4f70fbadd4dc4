//! Descriptors kept for the daemon's own sockets: ribbridge
//! under `RLIMIT_NOFILE` 1024 (systemd's default soft limit), 1 500 idle
//! connections held open against its HTTP endpoint (each one the endpoint
//! closes is opened again, as a flood does), and while they are held:
//! `/healthz` answers 200 within 1 s on every check, zebra is killed and
//! restarted and the ZAPI client reconnects, the VIP is advertised again
//! (bgpd's and zebra's vty polls work), a route added to table 198 reaches
//! `/status` (the kernel watcher), and the endpoint counted its sheds.
//! Before the connection cap the idle connections took every descriptor:
//! `/healthz` went unanswered (seven times in ten probes) and
//! the daemon could not re-open its ZAPI socket.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use ribbridge::reconcile::Class;

use crate::support::daemon::Daemon;
use crate::support::{Lab, class_of, lab, spawn_in_netns};

const VIP: &str = "192.0.2.10/32";
const NODE: &str = "rb-node1";
/// The descriptor limit the daemon runs under (systemd's default soft one).
const NOFILE: u64 = 1_024;
/// Idle connections held against the endpoint (more than the 1 024
/// descriptors the daemon runs under).
const FLOOD: usize = 1_500;
/// Closed connections the flood opens again per round, and the round's
/// period: 1 000 a second, faster than the head timeout (5 s) frees them.
const REOPEN_PER_ROUND: usize = 100;
const ROUND: Duration = Duration::from_millis(100);
/// `/healthz` checks: one every `CHECK_EVERY`, each within `CHECK_LIMIT`.
const CHECKS: usize = 50;
const CHECK_EVERY: Duration = Duration::from_millis(200);
const CHECK_LIMIT: Duration = Duration::from_secs(1);
/// The daemon's budget at the defaults: the HTTP cap and the reserve.
const BUDGET: usize =
    ribbridge::http::DEFAULT_MAX_CONNECTIONS + ribbridge::config::DESCRIPTOR_RESERVE as usize;

/// The endpoint, seen from inside the node's namespace.
fn endpoint(d: &Daemon) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], d.port))
}

/// Descriptors the process holds now.
fn descriptors(pid: nix::unistd::Pid) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

/// Whether the server has closed `s` (EOF or reset), without blocking.
fn closed(s: &mut TcpStream) -> bool {
    let mut b = [0u8; 1];
    match s.read(&mut b) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) if e.kind() == ErrorKind::WouldBlock => false,
        Err(_) => true,
    }
}

/// A connection that says nothing, or None when it cannot be opened
/// within the round (the backlog full: the daemon not accepting).
fn idle(to: SocketAddr) -> Option<TcpStream> {
    let s = TcpStream::connect_timeout(&to, ROUND).ok()?;
    s.set_nonblocking(true).ok()?;
    Some(s)
}

/// What the flood did: connections opened in all.
struct Flood {
    opened: usize,
}

/// Hold `FLOOD` idle connections to `to` until `stop`, opening again (at
/// most `REOPEN_PER_ROUND` a round) the ones the server closed. Bounded:
/// it ends by itself after `limit`. `started` is set once the first
/// `FLOOD` are opened.
fn flood(
    to: SocketAddr,
    stop: Arc<AtomicBool>,
    started: Arc<AtomicBool>,
    limit: Duration,
) -> Flood {
    let t = Instant::now();
    let mut conns: Vec<Option<TcpStream>> = (0..FLOOD).map(|_| idle(to)).collect();
    let mut opened = conns.iter().flatten().count();
    started.store(true, Ordering::Release);
    while !stop.load(Ordering::Acquire) && t.elapsed() < limit {
        let mut budget = REOPEN_PER_ROUND;
        for c in &mut conns {
            if c.as_mut().is_some_and(closed) {
                *c = None;
            }
            if c.is_none() && budget > 0 {
                budget -= 1;
                *c = idle(to);
                opened += usize::from(c.is_some());
            }
        }
        std::thread::sleep(ROUND);
    }
    Flood { opened }
}

/// One `GET /healthz` within `CHECK_LIMIT`: its status line, or why not.
fn healthz(to: SocketAddr) -> Result<String, String> {
    let deadline = Instant::now() + CHECK_LIMIT;
    let mut s =
        TcpStream::connect_timeout(&to, CHECK_LIMIT).map_err(|e| format!("connect: {e}"))?;
    s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .map_err(|e| format!("write: {e}"))?;
    let mut out = Vec::new();
    let mut buf = [0u8; 512];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(format!("no answer within {CHECK_LIMIT:?}"));
        }
        s.set_read_timeout(Some(left)).map_err(|e| e.to_string())?;
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Err(format!("no answer within {CHECK_LIMIT:?}"));
            }
            Err(e) => return Err(format!("read: {e}")),
        }
    }
    let text = String::from_utf8_lossy(&out);
    Ok(text.lines().next().unwrap_or("").to_string())
}

/// `CHECKS` `/healthz` checks, one every `CHECK_EVERY`; the failures.
fn checks(to: SocketAddr) -> Vec<String> {
    let mut bad = Vec::new();
    let start = Instant::now();
    for i in 0..CHECKS {
        let due = start + CHECK_EVERY * u32::try_from(i).expect("checks");
        std::thread::sleep(due.saturating_duration_since(Instant::now()));
        match healthz(to) {
            Ok(line) if line.starts_with("HTTP/1.1 200") => {}
            Ok(line) => bad.push(format!("check {i}: {line:?}")),
            Err(e) => bad.push(format!("check {i}: {e}")),
        }
    }
    bad
}

/// A counter's value in a `/metrics` text (0 when absent).
fn counter(metrics: &str, name: &str) -> f64 {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(name).and_then(|v| v.strip_prefix(' ')))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0.0)
}

#[tokio::test]
async fn an_idle_flood_leaves_healthz_and_the_reconnects_working_frr_10_7() {
    let t0 = Instant::now();
    // The flood's own descriptors: the test process may hold them all.
    let (_, hard) = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
        .expect("getrlimit");
    nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE, hard, hard)
        .expect("setrlimit: the test needs room for its flood");
    assert!(
        hard >= 4 * FLOOD as u64,
        "the test's hard limit {hard} is too low for its flood"
    );

    let lab_guard = Lab::up("10.7", 2, &[VIP]);
    // bgpd polled every second: its vty is re-opened every second.
    let config = crate::support::bgp_poll_config(1);
    let config_path = crate::support::config_arg(&config);
    let nofile = format!("--nofile={NOFILE}:{NOFILE}");
    let mut d = Daemon::spawn_wrapped(
        NODE,
        &lab_guard.sockdir(NODE),
        &["--config", &config_path],
        &["prlimit", &nofile, "--"],
    );
    d.wait_log("zebra: subscribed", Duration::from_secs(15))
        .await;
    lab(&["vip-add", "node1", VIP]);
    lab(&["vip-add", "node2", VIP]);
    d.wait_log("VIP consistent && to=advertised", Duration::from_secs(15))
        .await;
    let pid = d.pid();
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).expect("limits");
    assert!(
        limits
            .lines()
            .any(|l| l.starts_with("Max open files") && l.split_whitespace().nth(3) == Some("1024")),
        "the daemon does not run under RLIMIT_NOFILE {NOFILE}:\n{limits}"
    );
    let at_rest = descriptors(pid);
    let shed_before = counter(&d.metrics().await, "ribbridge_http_shed_total");

    // The flood, and a sampler of the daemon's descriptors.
    let to = endpoint(&d);
    let stop = Arc::new(AtomicBool::new(false));
    let started = Arc::new(AtomicBool::new(false));
    let flooder = {
        let (stop, started) = (stop.clone(), started.clone());
        spawn_in_netns(NODE, move || {
            flood(to, stop, started, Duration::from_secs(60))
        })
    };
    let peak = Arc::new(AtomicUsize::new(0));
    let sampler = {
        let (stop, peak) = (stop.clone(), peak.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Acquire) {
                peak.fetch_max(descriptors(pid), Ordering::AcqRel);
                std::thread::sleep(Duration::from_millis(50));
            }
        })
    };
    // The flood is in place once its first connections are open (the
    // kernel completes them whether or not the daemon can accept them).
    let t = Instant::now();
    while !started.load(Ordering::Acquire) {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "the flood did not start"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let checker = spawn_in_netns(NODE, move || checks(to));

    // zebra killed and restarted under the flood: ZAPI reconnects, the VIP
    // is advertised again.
    lab(&["kill", NODE, "zebra"]);
    d.wait_log("zebra: disconnected", Duration::from_secs(5))
        .await;
    lab(&["start", NODE, "zebra"]);
    d.wait_log("zebra: subscribed", Duration::from_secs(15))
        .await;
    d.wait_log("readiness changed && ready=true", Duration::from_secs(15))
        .await;
    let (doc, _) = d.status().await;
    assert_eq!(
        class_of(&doc, VIP),
        Class::Advertised,
        "after zebra's restart: {doc:?}"
    );
    let m = d.metrics().await;
    assert!(
        m.contains("ribbridge_zapi_connected 1"),
        "ZAPI not connected again:\n{m}"
    );
    // The kernel watcher: a route added now reaches /status.
    lab(&[
        "exec",
        NODE,
        "ip",
        "route",
        "add",
        "192.0.2.77/32",
        "dev",
        "lo",
        "table",
        "198",
        "proto",
        "248",
    ]);
    let t = Instant::now();
    loop {
        let (doc, _) = d.status().await;
        if doc
            .vips
            .iter()
            .any(|v| v.prefix.to_string() == "192.0.2.77/32" && v.kernel == Some(true))
        {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the route added under the flood is not in /status: {doc:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let bad = tokio::task::spawn_blocking(move || checker.join().expect("checker"))
        .await
        .expect("checker");
    let shed = counter(&d.metrics().await, "ribbridge_http_shed_total") - shed_before;
    let during = descriptors(pid);
    stop.store(true, Ordering::Release);
    let f = tokio::task::spawn_blocking(move || flooder.join().expect("flood"))
        .await
        .expect("flood");
    sampler.join().expect("sampler");
    let peak = peak.load(Ordering::Acquire);
    let accept_errors = counter(
        &d.metrics().await,
        "ribbridge_accept_errors_total{listener=\"http\"}",
    );
    eprintln!(
        "descriptors: under RLIMIT_NOFILE {NOFILE}, {FLOOD} idle connections held ({} opened in all): \
         the daemon's descriptors {at_rest} at rest, peak {peak}, {during} at the end of the checks; \
         {shed} connections shed; /healthz answered {}/{CHECKS} within {CHECK_LIMIT:?}; \
         {accept_errors} failed accepts; zebra restarted, ZAPI and the VIP back, a new route seen; \
         the test took {:?}",
        f.opened,
        CHECKS - bad.len(),
        t0.elapsed()
    );
    assert!(bad.is_empty(), "/healthz failed under the flood: {bad:?}");
    assert!(shed > 0.0, "the flood was held, yet nothing was shed");
    assert!(
        peak <= BUDGET,
        "the daemon held {peak} descriptors under the flood, over its budget of {BUDGET}"
    );
    d.stop().await;
    drop(lab_guard);
}
