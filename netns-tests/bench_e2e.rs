//! The end-to-end bench on the lab (real kernel, real FRR), run by
//! `scripts/bench-e2e.sh` (a `harness = false` target, never part of
//! `cargo test` or `scripts/test.sh`). Per FRR release, one lab of two nodes:
//!
//! 1. observation latency: a route of table 198 on rb-node1 added or
//!    deleted through a resident `ip -batch -` (no process start in the
//!    timed path); the time to `ip monitor route` printing it and to
//!    ribbridge logging the VIP's new ECMP count (the `VIP ECMP legs` line,
//!    emitted as the owner applies the kernel event, just before the core
//!    steps). Both are timed when their line arrives on a pipe.
//! 2. idle cost: `ribbridge run` with 2 VIPs and a 1 Hz realm-toggling
//!    heartbeat on both, CPU time (utime+stime) and peak RSS (VmHWM) from
//!    /proc over the window.
//! 3. time to heal, the release's drift case (netns-tests/bridge.rs): from
//!    the change that causes the drift to the router's ECMP count being 2
//!    again; with ribbridge (repair), with kube-vip's 5 s re-assertion alone
//!    (`lab.sh vip-reassert` 5 s after the change, then every 5 s), and with
//!    nothing; bounded.
//! 4. memory: the peak RSS of a ribbridge on the lab as it is (the idle
//!    base), then per route count (BENCH_SCALE, default 10 000 and
//!    100 000) N routes in table 198 (`ip -batch`, table emptied before and
//!    after), then ribbridge started (observe mode): time to the first
//!    complete kernel view, to ready, peak RSS, bytes per route over the
//!    base, and the time of a timer resync (the watcher's `kernel resync
//!    done` debug line). Once per bench, a router vantage watching main
//!    with BENCH_ROUTER_ROUTES (1 000 000) routes and 2 VIPs in a
//!    namespace of its own (`router_memory`).
//! 5. reboot: from the router, a steady UDP probe stream to the VIP (16
//!    flows, 100 Hz each, spread over both nodes by an L4 ECMP hash),
//!    answered by an echo responder on each node; node1 "powers off" (all
//!    its packets dropped, bgpd SIGKILLed) (a) with no drain, (b) after
//!    `ribbridge drain` returned, (c) after a clean bgpd stop (SIGTERM) only.
//!    Probes lost, and how long the router kept node1's dead path. Each
//!    twice: the lab's default profile, and frr-k8s's profile with
//!    graceful restart (`lab.sh up --profile frr-k8s --graceful-restart`:
//!    the router keeps a dead node's path as stale for 120 s).
//!    BENCH_REBOOT_GR ("0 1") picks which. A fresh lab per cell.
//!
//! 6. availability (and, with BENCH_SOAK=1, the 10-minute soaks on 8.4):
//!    both nodes advertise, ribbridge (repair) on node1, kube-vip's
//!    realm-toggling re-assertion at a pace; the router's path count
//!    sampled at every route event (share of the time with node1's path,
//!    dips), ribbridge's drift reports, heals, give-ups, RSS and fds.
//! 7. churn: VIP routes added and deleted across both nodes at 50/s on a
//!    healthy lab: every drift report or action is false.
//! 9. writer: the time from a fault to the state reported
//!    (backend down to blackhole, ready failing to unready, the writer
//!    killed to orphaned, its route gone to capacity_lost, another
//!    instance's `--clean-table` deleting it under a dead writer to
//!    capacity_lost),
//!    BENCH_WRITER_RUNS (20) times each; the CPU of two VIPs probed every
//!    second against none, BENCH_WRITER_IDLE_S (60) each; and
//!    BENCH_WRITER_QUIET_S (600) of writers and backends healthy, where
//!    every drift report and heal is false.
//! 8. paths (the memory bound's paths, on BENCH_PATHS_FRR, default 10.7):
//!    one configured VIP, defaults, BENCH_PATHS_ROUTES (100 000) routes of
//!    table 198 present before the start (filtered, then permitted), added
//!    after it, then all deleted; repair and observe; `/status` read every
//!    second; peak and end RSS, `/status`'s size, drift reports, heals per
//!    phase of BENCH_PATHS_S (40) seconds, in each of BENCH_PATHS_MODES
//!    ("repair observe").
//!
//! Settings come from the environment (the script sets them): BENCH_FRR,
//! BENCH_RUNS, BENCH_FAIL_STOP, BENCH_BOUND_S, BENCH_OBS, BENCH_IDLE_S,
//! BENCH_SCALE (route counts of the node's memory cells), BENCH_ROUTER_ROUTES
//! (0 skips the router vantage's memory cell), BENCH_OUT, BENCH_REBOOT (0
//! skips 5), BENCH_ONLY_REBOOT (1: only 5), BENCH_ONLY_MEMORY (1: only the
//! memory cells, i.e. BENCH_CELLS=scale), BENCH_CELLS (which cells),
//! BENCH_MODES (which heal modes), BENCH_AVAIL_BEATS, BENCH_AVAIL_PERIOD_S,
//! BENCH_CHURN, BENCH_SOAK. The daemon's log of every ribbridge cell is kept
//! beside BENCH_OUT.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench: a failure ends the run
#![allow(clippy::disallowed_methods)] // std's clock: a lab bench times a real kernel and FRR

#[path = "support/mod.rs"]
mod support;

use std::net::IpAddr;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{ADDRESS_THEN_ROUTE, Lab, ROUTE_THEN_ADDRESS, RouteWatch, host_exec, lab};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

const VIP: &str = "192.0.2.10/32";
const VIP2: &str = "192.0.2.11/32";
/// The writer cell's second kube-vip instance on node1, whose
/// `--clean-table` deletes the VIP's route.
const CLEANER: &str = "192.0.2.12/32";
const ROUTE: &str = "192.0.2.10/32 dev lo table 198 proto 248 scope global";
/// Empty table 198 (which does not exist until a route is in it).
const FLUSH_198: &str = "ip route flush table 198 2>/dev/null; true";
const RESET_10X: &str =
    "ip route del 192.0.2.10/32 table 198; ip address del 192.0.2.10/32 dev lo; true";

fn env_or<T: std::str::FromStr>(k: &str, d: T) -> T {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}

fn vip_addr() -> IpAddr {
    "192.0.2.10".parse().unwrap()
}

/// Lines of a child's pipe, each with the instant it arrived. Unbounded:
/// the reader must never push back on the daemon's stderr.
type Lines = mpsc::UnboundedReceiver<(Instant, String)>;

fn read_lines(r: impl tokio::io::AsyncRead + Unpin + Send + 'static) -> Lines {
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut r = BufReader::new(r).lines();
        while let Ok(Some(l)) = r.next_line().await {
            if tx.send((Instant::now(), l)).is_err() {
                break;
            }
        }
    });
    rx
}

/// Wait for a line containing every needle; its arrival instant.
async fn wait_line(lines: &mut Lines, needles: &[&str], limit: Duration) -> Option<Instant> {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(deadline, lines.recv()).await {
            Ok(Some((t, l))) if needles.iter().all(|n| l.contains(n)) => return Some(t),
            Ok(Some(_)) => {}
            _ => return None,
        }
    }
}

fn drain(lines: &mut Lines) -> Vec<String> {
    let mut v = Vec::new();
    while let Ok((_, l)) = lines.try_recv() {
        v.push(l);
    }
    v
}

/// `ip monitor route` in a namespace: the kernel's route events as
/// iproute2 prints them, each stamped when read.
struct RouteMonitor {
    _child: Child,
    lines: Lines,
}

impl RouteMonitor {
    fn start(ns: &str) -> RouteMonitor {
        let mut child = Command::new("ip")
            .args(["-n", ns, "monitor", "route"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn ip monitor route");
        let lines = read_lines(child.stdout.take().expect("stdout"));
        RouteMonitor {
            _child: child,
            lines,
        }
    }

    /// When the kernel announced the deletion of `prefix` (a /32) from
    /// table 198.
    async fn deleted(&mut self, prefix: &str, limit: Duration) -> Instant {
        let addr = prefix.split('/').next().unwrap_or(prefix);
        let needle = format!("Deleted {addr} ");
        wait_line(&mut self.lines, &[&needle, "table 198"], limit)
            .await
            .unwrap_or_else(|| panic!("no deletion of {prefix} from table 198 within {limit:?}"))
    }
}

struct Daemon {
    child: Child,
    lines: Lines,
    started: Instant,
}

impl Daemon {
    async fn start(lab: &Lab, args: &[&str], log: &str) -> Daemon {
        Daemon::start_in("rb-node1", &lab.sockdir("rb-node1"), args, log)
    }

    /// `ribbridge run` in namespace `ns` with FRR's sockets in `frr_dir`.
    fn start_in(ns: &str, frr_dir: &std::path::Path, args: &[&str], log: &str) -> Daemon {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", ns])
            .arg(env!("CARGO_BIN_EXE_ribbridge"))
            .args(["run", "--frr-dir"])
            .arg(frr_dir)
            .args(["--listen", "127.0.0.1:7585"])
            // The lab's defaults (support::daemon::lab_defaults): bare
            // routes, the address not required (the cells measure FRR's
            // handling of what kube-vip writes), unless a cell says
            // otherwise (the writer's); repair unless a cell observes.
            .args(support::daemon::lab_defaults(args))
            .args(args)
            .env("RUST_LOG", log)
            .envs(support::daemon::SHIPPED_ENV)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let started = Instant::now();
        let mut child = cmd.spawn().expect("spawn ribbridge");
        let lines = read_lines(child.stderr.take().expect("stderr"));
        Daemon {
            child,
            lines,
            started,
        }
    }

    async fn wait(&mut self, needles: &[&str], limit: Duration) -> Instant {
        match wait_line(&mut self.lines, needles, limit).await {
            Some(t) => t,
            None => panic!(
                "ribbridge: no line with {needles:?} within {limit:?}; its log:\n{}",
                drain(&mut self.lines).join("\n")
            ),
        }
    }

    /// `ip netns exec` execs ribbridge: the child's pid is ribbridge's.
    fn pid(&self) -> u32 {
        self.child.id().expect("pid")
    }

    async fn stop(mut self) {
        let pid = nix::unistd::Pid::from_raw(i32::try_from(self.pid()).unwrap());
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let _ = tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await;
    }
}

/// (utime + stime in seconds, VmHWM in KiB, VmRSS in KiB) of a process.
fn proc_usage(pid: u32) -> (f64, u64, u64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    // Fields after the command's closing parenthesis; utime, stime are 14, 15.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap();
    let hz = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .unwrap_or(100) as f64;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    let kib = |k: &str| {
        status
            .lines()
            .find(|l| l.starts_with(k))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (ticks as f64 / hz, kib("VmHWM:"), kib("VmRSS:"))
}

/// A resident `ip -n NS -batch -`: a change costs a pipe write, no fork.
struct Batch {
    stdin: ChildStdin,
    _child: Child,
}

impl Batch {
    fn open(ns: &str) -> Batch {
        let mut child = Command::new("ip")
            .args(["-n", ns, "-force", "-batch", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("ip -batch");
        let stdin = child.stdin.take().expect("stdin");
        Batch {
            stdin,
            _child: child,
        }
    }

    /// Send one command; the instant just before it left.
    async fn send(&mut self, cmd: &str) -> Instant {
        let t = Instant::now();
        self.stdin
            .write_all(format!("{cmd}\n").as_bytes())
            .await
            .expect("ip -batch stdin");
        self.stdin.flush().await.expect("flush");
        t
    }
}

fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

fn summary(v: &[f64]) -> Value {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    if s.is_empty() {
        return json!({"n": 0});
    }
    // Nearest rank: p99 of 20 runs is the 20th, of 100 the 99th.
    let rank = |q: f64| s[((q * s.len() as f64).ceil() as usize).clamp(1, s.len()) - 1];
    json!({"n": s.len(), "median_ms": s[s.len() / 2], "p50_ms": rank(0.5), "p99_ms": rank(0.99),
           "worst_ms": s[s.len() - 1], "best_ms": s[0]})
}

/// 1. Observation latency, ip monitor against ribbridge, on the same changes.
async fn observation(lab_guard: &Lab, changes: usize) -> Value {
    let mut d = Daemon::start(lab_guard, &[], "info").await;
    d.wait(
        &["readiness changed", "ready=true"],
        Duration::from_secs(20),
    )
    .await;
    let mut mon = Command::new("ip")
        .args(["-n", "rb-node1", "monitor", "route"])
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("ip monitor");
    let mut mon_lines = read_lines(mon.stdout.take().expect("stdout"));
    let mut batch = Batch::open("rb-node1");
    // ip monitor subscribes asynchronously: a first change proves it listens.
    batch.send(&format!("route add {ROUTE}")).await;
    wait_line(
        &mut mon_lines,
        &["192.0.2.10", "table 198"],
        Duration::from_secs(5),
    )
    .await
    .expect("ip monitor sees table 198");
    d.wait(
        &["VIP ECMP legs", VIP, "nexthops=1"],
        Duration::from_secs(5),
    )
    .await;
    let (mut ipmon, mut rb) = (Vec::new(), Vec::new());
    for i in 0..changes {
        tokio::time::sleep(Duration::from_millis(300)).await; // pacing: FRR settles
        drain(&mut mon_lines);
        drain(&mut d.lines);
        let del = i % 2 == 0;
        let t0 = batch
            .send(&format!(
                "route {} {ROUTE}",
                if del { "del" } else { "add" }
            ))
            .await;
        let mut needles = vec!["192.0.2.10", "table 198"];
        if del {
            needles.push("Deleted");
        }
        let m = wait_line(&mut mon_lines, &needles, Duration::from_secs(5))
            .await
            .expect("ip monitor line");
        let legs = if del { "nexthops=0" } else { "nexthops=1" };
        let r = d
            .wait(&["VIP ECMP legs", VIP, legs], Duration::from_secs(5))
            .await;
        ipmon.push(ms(m - t0));
        rb.push(ms(r - t0));
    }
    d.stop().await;
    let med = |v: &[f64]| {
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        s[s.len() / 2]
    };
    let ratio = med(&rb) / med(&ipmon);
    json!({"changes": changes, "ip_monitor": summary(&ipmon), "ribbridge": summary(&rb),
           "ratio_of_medians": (ratio * 100.0).round() / 100.0})
}

/// 2. Idle cost: 2 VIPs, 1 Hz heartbeat on both.
async fn idle(lab_guard: &Lab, secs: u64) -> Value {
    for v in [VIP, VIP2] {
        lab(&["vip-add", "node1", v]);
        lab(&["vip-add", "node2", v]);
    }
    let mut d = Daemon::start(lab_guard, &[], "info").await;
    d.wait(
        &["readiness changed", "ready=true"],
        Duration::from_secs(20),
    )
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await; // past start-up and the first polls
    let pid = d.pid();
    let (cpu0, _, _) = proc_usage(pid);
    let t0 = Instant::now();
    let mut batch = Batch::open("rb-node1");
    let mut realm = 1;
    let mut beats = 0;
    while t0.elapsed() < Duration::from_secs(secs) {
        realm = 3 - realm;
        for p in ["192.0.2.10/32", "192.0.2.11/32"] {
            batch
                .send(&format!(
                    "route replace {p} dev lo table 198 proto 248 scope global realm {realm}"
                ))
                .await;
        }
        beats += 1;
        tokio::time::sleep(Duration::from_secs(1)).await; // the heartbeat's pace
    }
    let wall = t0.elapsed().as_secs_f64();
    let (cpu1, hwm, rss) = proc_usage(pid);
    let log = drain(&mut d.lines);
    let heals = log.iter().filter(|l| l.contains("healing")).count();
    d.stop().await;
    for v in [VIP, VIP2] {
        lab(&["vip-del", "node1", v]);
        lab(&["vip-del", "node2", v]);
    }
    let cpu = cpu1 - cpu0;
    json!({"window_s": (wall * 10.0).round() / 10.0, "beats": beats, "cpu_s": cpu,
           "cpu_percent_of_core": (cpu / wall * 100.0 * 1000.0).round() / 1000.0,
           "peak_rss_kib": hwm, "rss_kib": rss, "heals_in_window": heals})
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Ribbridge,
    Reassert,
    Nothing,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Ribbridge => "ribbridge",
            Mode::Reassert => "kube-vip 5s re-assertion",
            Mode::Nothing => "nothing",
        }
    }
}

/// The release's drift case: (name, cause as a shell command on rb-node1,
/// ribbridge flags). 8.4's cause is kube-vip's realm flip itself.
fn case_of(frr: &str) -> (&'static str, &'static str, &'static [&'static str]) {
    match frr {
        "8.4" => ("realm replace drops the import", "", &[]),
        "10.3" => (
            "address, then route",
            ADDRESS_THEN_ROUTE,
            &["--heal-addresses"],
        ),
        _ => ("route, then address (one batch)", ROUTE_THEN_ADDRESS, &[]),
    }
}

fn reassert() {
    lab(&["vip-reassert", "node1", VIP]);
}

/// Put node1 back before a run: on 8.4 advertised (a delete and add
/// re-imports), on 10.x without route or address.
async fn reset(frr: &str, router: &mut RouteWatch) {
    if frr == "8.4" {
        if router.nexthops(vip_addr(), 32).await != 2 {
            lab(&["vip-del", "node1", VIP]);
            lab(&["vip-add", "node1", VIP]);
        }
        router
            .wait_nexthops(vip_addr(), 32, 2, Duration::from_secs(15))
            .await
            .expect("8.4 reset: router back to 2 paths");
    } else {
        lab(&["exec", "rb-node1", "sh", "-c", RESET_10X]);
        router
            .wait_nexthops(vip_addr(), 32, 1, Duration::from_secs(15))
            .await
            .expect("10.x reset: router back to node2's path only");
    }
    tokio::time::sleep(Duration::from_millis(500)).await; // FRR settles
    if frr != "8.4" {
        // 10.3's address cycle puts the address back 200 ms after the route
        // replace, which the router may have seen first: remove it again.
        lab(&["exec", "rb-node1", "sh", "-c", RESET_10X]);
    }
}

/// Wait for a daemon line containing every needle, keeping every line read
/// in `kept`; the matching line's arrival instant.
async fn wait_kept(
    d: &mut Daemon,
    kept: &mut Vec<String>,
    needles: &[&str],
    limit: Duration,
) -> Option<Instant> {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(deadline, d.lines.recv()).await {
            Ok(Some((t, l))) => {
                let hit = needles.iter().all(|n| l.contains(n));
                kept.push(l);
                if hit {
                    return Some(t);
                }
            }
            _ => return None,
        }
    }
}

/// Where the daemon's log of a cell is kept: beside the JSON output.
fn log_path(frr: &str, cell: &str) -> PathBuf {
    let out = PathBuf::from(env_or("BENCH_OUT", "bench-e2e.json".to_string()));
    out.with_extension(format!("{frr}-{cell}.log"))
}

/// Cell 3, one heal cell: runs of the release's case under one mode. On 8.4 with
/// ribbridge the re-import lands on zebra's withdrawal, ~10 ms after the
/// beat, and the router usually sees no change at all: such a run counts
/// as healed at 0 ms ("unseen") when ribbridge's log shows the heal of that
/// beat; `acted` is the time from the beat to ribbridge's `healing` line.
async fn heal_cell(
    lab_guard: &Lab,
    frr: &str,
    mode: Mode,
    runs: usize,
    fail_stop: usize,
    bound: Duration,
) -> Value {
    let (_, cause, flags) = case_of(frr);
    let mut router = RouteWatch::open("rb-router");
    let mut d = None;
    let mut kept = Vec::new();
    if mode == Mode::Ribbridge {
        let mut args = flags.to_vec();
        args.extend(["--mode", "repair"]);
        let mut dm = Daemon::start(lab_guard, &args, "info").await;
        dm.wait(
            &["readiness changed", "ready=true"],
            Duration::from_secs(20),
        )
        .await;
        d = Some(dm);
    }
    let (mut healed, mut not_healed, mut no_drift) = (Vec::new(), 0usize, 0usize);
    let (mut acted, mut unseen, mut relost) = (Vec::new(), 0usize, 0usize);
    let mut consecutive_fail = 0;
    let mut done = 0;
    while done < runs {
        reset(frr, &mut router).await;
        let t0 = Instant::now();
        if frr == "8.4" {
            reassert();
            if let Some(dm) = d.as_mut() {
                let heal = wait_kept(dm, &mut kept, &["healing"], Duration::from_secs(3)).await;
                if let Some(t) = heal {
                    acted.push(ms(t - t0));
                }
                // bgpd's withdrawal, if it left, reaches the router ~120 ms
                // after the beat; a second is well past it.
                if heal.is_some()
                    && router
                        .wait_nexthops(vip_addr(), 32, 1, Duration::from_secs(1))
                        .await
                        .is_err()
                {
                    unseen += 1;
                    healed.push(0.0);
                    done += 1;
                    continue;
                }
            } else if router
                .wait_nexthops(vip_addr(), 32, 1, Duration::from_secs(3))
                .await
                .is_err()
            {
                no_drift += 1;
                done += 1;
                continue;
            }
        } else {
            lab(&["exec", "rb-node1", "sh", "-c", cause]);
        }
        let mut next_beat = t0 + Duration::from_secs(5);
        let end = t0 + bound;
        let result = loop {
            let until = if mode == Mode::Reassert {
                next_beat.min(end)
            } else {
                end
            };
            let left = until.saturating_duration_since(Instant::now());
            if router.wait_nexthops(vip_addr(), 32, 2, left).await.is_ok() {
                break Some(t0.elapsed());
            }
            if Instant::now() >= end {
                break None;
            }
            reassert();
            next_beat += Duration::from_secs(5);
        };
        done += 1;
        match result {
            Some(t) => {
                consecutive_fail = 0;
                healed.push(ms(t));
                // Held: the heal's own last step (10.3's address comes
                // back 200 ms after the route) must not lose it again.
                if mode == Mode::Ribbridge
                    && router
                        .wait_nexthops(vip_addr(), 32, 1, Duration::from_secs(1))
                        .await
                        .is_ok()
                {
                    relost += 1;
                }
            }
            None => {
                not_healed += 1;
                consecutive_fail += 1;
                if consecutive_fail >= fail_stop && healed.is_empty() {
                    break;
                }
            }
        }
    }
    let heals = match d {
        Some(mut dm) => {
            kept.extend(drain(&mut dm.lines));
            dm.stop().await;
            let path = log_path(frr, "heal");
            std::fs::write(&path, kept.join("\n")).expect("write the daemon's log");
            Some(kept.iter().filter(|l| l.contains("healing")).count())
        }
        None => None,
    };
    reset(frr, &mut router).await;
    json!({"mode": mode.name(), "runs": done, "healed": summary(&healed),
           "not_healed_within_s": if not_healed > 0 { Some(bound.as_secs()) } else { None },
           "not_healed": not_healed, "no_drift": no_drift, "heal_actions": heals,
           "router_saw_no_change": unseen, "acted": summary(&acted), "lost_again_within_1s": relost,
           "daemon_log": heals.map(|_| log_path(frr, "heal").display().to_string())})
}

/// (VmRSS KiB, open file descriptors) of a process.
fn rss_and_fds(pid: u32) -> (u64, usize) {
    let (_, _, rss) = proc_usage(pid);
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, Iterator::count);
    (rss, fds)
}

/// Availability and soak: both nodes advertise the VIP; ribbridge (repair)
/// on node1; kube-vip's realm-toggling re-assertion on node1 every
/// `period`, `beats` times. The router's path count is sampled at every
/// route event (support::Timeline): the share of the window with node1's
/// path, and the dips. Counts ribbridge's drift reports, heals and
/// give-ups; RSS and open fds at start and end; the VIP's class and the
/// router's paths once the beats stop.
async fn heartbeat_cell(
    lab_guard: &Lab,
    frr: &str,
    period: Duration,
    beats: u32,
    name: &str,
) -> Value {
    lab(&["vip-add", "node1", VIP]);
    lab(&["vip-add", "node2", VIP]);
    let mut router = RouteWatch::open("rb-router");
    let mut d = Daemon::start(lab_guard, &["--mode", "repair"], "info").await;
    d.wait(
        &["VIP consistent", VIP, "to=advertised"],
        Duration::from_secs(30),
    )
    .await;
    router
        .wait_nexthops(vip_addr(), 32, 2, Duration::from_secs(15))
        .await
        .expect("both paths before the beats");
    let timeline = router.timeline(vip_addr(), 32).await;
    let (rss0, fds0) = rss_and_fds(d.pid());
    let start = Instant::now();
    let mut batch = Batch::open("rb-node1");
    let mut realm = 1;
    for i in 0..beats {
        realm = 3 - realm;
        batch
            .send(&format!(
                "route replace {VIP} dev lo table 198 proto 248 scope global realm {realm}"
            ))
            .await;
        // The heartbeat's pace, kept against the start (no drift of the tick).
        let next = start + period * (i + 1);
        tokio::time::sleep_until(next.into()).await;
    }
    let end = Instant::now();
    let (rss1, fds1) = rss_and_fds(d.pid());
    let mut router = RouteWatch::open("rb-router");
    let back = router
        .wait_nexthops(vip_addr(), 32, 2, Duration::from_secs(15))
        .await
        .is_ok();
    let share = timeline.share_at_least(2, start, end);
    let dips = timeline.dips(2, start, end);
    drop(timeline);
    let log = drain(&mut d.lines);
    d.stop().await;
    let path = log_path(frr, name);
    std::fs::write(&path, log.join("\n")).expect("write the daemon's log");
    let count = |n: &str| log.iter().filter(|l| l.contains(n)).count();
    // The VIP's class at the end: the last state change logged, else the
    // `advertised` it had before the beats.
    let last = log
        .iter()
        .rev()
        .find(|l| l.contains("VIP consistent") || l.contains("VIP drift"))
        .and_then(|l| l.split("to=").nth(1))
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or("advertised")
        .to_string();
    lab(&["vip-del", "node1", VIP]);
    lab(&["vip-del", "node2", VIP]);
    json!({"period_s": period.as_secs_f64(), "beats": beats, "window_s": (end - start).as_secs(),
           "node1_path_share_percent": (share * 1e4).round() / 1e2, "dips": dips,
           "drift_reports": count("VIP drift"), "heals": count("healing"),
           "gave_up": count("given up"), "class_at_end": last, "both_paths_after": back,
           "rss_kib": [rss0, rss1], "open_fds": [fds0, fds1],
           "daemon_log": path.display().to_string()})
}

/// Churn: `n` VIP routes added and deleted across both nodes (node1 and
/// node2 alternate) at `per_s` changes per second, each VIP deleted
/// half a second after its add, on a healthy lab; ribbridge (repair) on
/// node1. Normal convergence only: every drift report or action is false.
async fn churn_cell(lab_guard: &Lab, frr: &str, n: usize, per_s: u32) -> Value {
    let mut d = Daemon::start(lab_guard, &["--mode", "repair"], "info").await;
    d.wait(
        &["readiness changed", "ready=true"],
        Duration::from_secs(20),
    )
    .await;
    let mut batches = [Batch::open("rb-node1"), Batch::open("rb-node2")];
    let vip = |i: usize| {
        let a = std::net::Ipv4Addr::from(0xc633_6400u32 + u32::try_from(i).unwrap());
        format!("{a}/32 dev lo table 198 proto 248 scope global")
    };
    let lag = (per_s / 2) as usize; // half a second of changes
    let adds = n / 2;
    let start = Instant::now();
    let tick = Duration::from_secs(1) / per_s;
    let mut k = 0u32;
    for i in 0..adds + lag {
        if i < adds {
            batches[i % 2].send(&format!("route add {}", vip(i))).await;
            k += 1;
            tokio::time::sleep_until((start + tick * k).into()).await;
        }
        if i >= lag {
            let j = i - lag;
            batches[j % 2].send(&format!("route del {}", vip(j))).await;
            k += 1;
            tokio::time::sleep_until((start + tick * k).into()).await;
        }
    }
    let took = start.elapsed();
    // Past every grace (bgpd's is 2 s) so a late report would be counted.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let log = drain(&mut d.lines);
    d.stop().await;
    let path = log_path(frr, "churn");
    std::fs::write(&path, log.join("\n")).expect("write the daemon's log");
    let count = |n: &str| log.iter().filter(|l| l.contains(n)).count();
    json!({"changes": k, "per_s": per_s, "took_s": (took.as_secs_f64() * 10.0).round() / 10.0,
           "drift_reports": count("VIP drift"), "actions": count("healing"),
           "daemon_log": path.display().to_string()})
}

/// `n` host routes `route add {first + i}/32 {tail}` into namespace `ns`
/// through one `ip -batch` file; returns how long `ip` took.
fn insert_routes(ns: &str, first: u32, n: usize, tail: &str) -> Duration {
    route_batch(ns, "add", first, n, tail)
}

/// The same routes deleted, one `ip -batch` file.
fn delete_routes(ns: &str, first: u32, n: usize, tail: &str) -> Duration {
    route_batch(ns, "del", first, n, tail)
}

fn route_batch(ns: &str, verb: &str, first: u32, n: usize, tail: &str) -> Duration {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("routes.batch");
    let mut text = String::with_capacity(n * 64);
    for i in 0..n {
        let a = std::net::Ipv4Addr::from(first + u32::try_from(i).unwrap());
        text.push_str(&format!("route {verb} {a}/32 {tail}\n"));
    }
    std::fs::write(&file, text).expect("batch file");
    let t = Instant::now();
    let st = std::process::Command::new("ip")
        .args(["-n", ns, "-batch"])
        .arg(&file)
        .status()
        .expect("ip -batch");
    assert!(
        st.success(),
        "ip -n {ns} -batch ({verb}) of {n} routes failed"
    );
    t.elapsed()
}

/// Peak RSS (VmHWM, KiB) of a ribbridge started on the lab as it is (its
/// 2 VIPs), once ready: the base the memory cells subtract.
async fn idle_base(lab_guard: &Lab) -> u64 {
    let mut d = Daemon::start(lab_guard, &["--mode", "observe"], "info").await;
    d.wait(
        &["readiness changed", "ready=true"],
        Duration::from_secs(30),
    )
    .await;
    let (_, hwm, _) = proc_usage(d.pid());
    d.stop().await;
    hwm
}

/// Cell 4, scale: `n` routes in table 198 (emptied first), then ribbridge
/// starts in `mode`. `base_kib`: the idle base, for the bytes per route.
/// The routes (10.0.0.0 up) are ones the lab's redistribution route-map
/// does not permit: `filtered`, so in repair mode nothing may heal them
/// (its heal actions are counted, over 20 s past ready: past the startup
/// grace of a drift).
async fn scale(lab_guard: &Lab, n: usize, base_kib: u64, mode: &str) -> Value {
    lab(&["exec", "rb-node1", "sh", "-c", FLUSH_198]);
    let dir = tempfile::tempdir().expect("tempdir");
    let insert = insert_routes(
        "rb-node1",
        0x0a00_0000,
        n,
        "dev lo table 198 proto 248 scope global",
    );
    let cfg = dir.path().join("ribbridge.toml");
    std::fs::write(&cfg, "resync_secs = 10\n").expect("config");
    let cfg_s = cfg.to_string_lossy().into_owned();
    // The mode as a flag: the fixture's `--mode repair` would override a
    // file's (lab_defaults).
    let mut d = Daemon::start(
        lab_guard,
        &["--config", &cfg_s, "--mode", mode],
        "info,ribbridge::kernel::watcher=debug",
    )
    .await;
    let long = Duration::from_secs(120);
    let kernel = d
        .wait(&["kernel resync done", "reason=\"startup\""], long)
        .await;
    // Ready (kernel and zebra's view complete) may never come: bounded.
    let ready_limit = Duration::from_secs(env_or("BENCH_SCALE_READY_S", 120));
    let ready_deadline = Instant::now() + ready_limit;
    let (mut ready, mut took_us, mut disconnects) = (None, f64::NAN, 0usize);
    let mut heals = 0usize;
    let timer_deadline = kernel + Duration::from_secs(30);
    while Instant::now() < ready_deadline.max(timer_deadline) {
        let left = ready_deadline
            .max(timer_deadline)
            .saturating_duration_since(Instant::now());
        let Ok(Some((t, l))) = tokio::time::timeout(left, d.lines.recv()).await else {
            break;
        };
        if l.contains("readiness changed") && l.contains("ready=true") && ready.is_none() {
            ready = Some(t);
        }
        if l.contains("zebra: disconnected") {
            disconnects += 1;
        }
        if l.contains(": healing") {
            heals += 1;
        }
        // The timer resync: its line carries the dump + diff time.
        if l.contains("kernel resync done") && l.contains("reason=\"timer\"") && took_us.is_nan() {
            took_us = l
                .split("took_us=")
                .nth(1)
                .and_then(|r| r.split_whitespace().next())
                .and_then(|v| v.parse().ok())
                .unwrap_or(f64::NAN);
        }
        let watched = ready
            .is_some_and(|r: Instant| mode == "observe" || r.elapsed() >= Duration::from_secs(20));
        if watched && !took_us.is_nan() {
            break;
        }
    }
    let (_, hwm, rss) = proc_usage(d.pid());
    let started = d.started;
    d.stop().await;
    lab(&["exec", "rb-node1", "sh", "-c", FLUSH_198]);
    json!({"vantage": "node", "table": 198, "routes": n, "mode": mode, "heal_actions": heals,
           "ip_batch_insert_ms": ms(insert),
           "base_kib": base_kib,
           "bytes_per_route_over_base": (hwm.saturating_sub(base_kib) * 1024) as f64 / n as f64,
           "first_kernel_view_ms": ms(kernel - started),
           "ready_ms": ready.map(|r| ms(r - started)),
           "not_ready_within_s": if ready.is_none() { Some(ready_limit.as_secs()) } else { None },
           "zebra_disconnects": disconnects,
           "full_resync_ms": if took_us.is_nan() { None } else { Some(took_us / 1000.0) },
           "peak_rss_kib": hwm, "rss_kib": rss})
}

/// node1's daemon's `GET /status` (on the bench's port), the whole HTTP
/// answer as text (the bench's client is bash's /dev/tcp: nothing of
/// ours between the daemon and the count).
async fn node1_status() -> String {
    let out = Command::new("ip")
        .args(["netns", "exec", "rb-node1", "bash", "-c"])
        .arg(
            "exec 3<>/dev/tcp/127.0.0.1/7585; \
             printf 'GET /status HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n' >&3; \
             cat <&3",
        )
        .output()
        .await
        .expect("GET /status");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What one phase of a `paths` run saw: peak and last RSS over the phase
/// (sampled every second, beside a `/status` read as an operator's `watch
/// ribbridge status` does), the largest `/status` document, and the drift
/// reports and heal actions the daemon logged.
async fn sample_phase(d: &mut Daemon, secs: u64) -> Value {
    let (mut peak, mut last, mut doc_max) = (0u64, 0u64, 0usize);
    let (mut drifts, mut heals) = (0usize, 0usize);
    // The first few drift reports and heals, as the daemon logged them.
    let mut examples: Vec<String> = Vec::new();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let end = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < end {
        tick.tick().await;
        doc_max = doc_max.max(node1_status().await.len());
        let (_, _, rss) = proc_usage(d.pid());
        (peak, last) = (peak.max(rss), rss);
        for l in drain(&mut d.lines) {
            let (drift, heal) = (l.contains("VIP drift"), l.contains(": healing"));
            drifts += usize::from(drift);
            heals += usize::from(heal);
            if (drift || heal) && examples.len() < 6 {
                examples.push(l);
            }
        }
    }
    let (_, hwm, _) = proc_usage(d.pid());
    json!({"peak_rss_kib": peak, "end_rss_kib": last, "hwm_kib": hwm,
           "status_bytes_max": doc_max, "drift_reports": drifts, "heal_actions": heals,
           "examples": examples})
}

/// 4c. The memory bound's paths: `n` routes in table 198 with one configured VIP
/// (address and route, as kube-vip adds them), every setting at its
/// default, in `mode`: the routes present before the start (filtered by
/// the lab's route-map, or permitted by a prefix-list entry for
/// 10.0.0.0/8 le 32), added after it, then all deleted (2n changes).
/// Each phase is `secs` long and `/status` is read every second.
async fn paths_cell(lab_guard: &Lab, n: usize, mode: &str, secs: u64) -> Value {
    const PERMIT: &str = "ip prefix-list KUBE-VIP-PREFIXES-V4 seq 5 permit 10.0.0.0/8 le 32";
    let vip_with_address = || {
        lab(&["exec", "rb-node1", "sh", "-c", FLUSH_198]);
        lab(&[
            "exec",
            "rb-node1",
            "sh",
            "-c",
            &format!("ip addr replace {VIP} dev lo && ip route add {ROUTE}"),
        ]);
    };
    // Every setting at its default, the address required too (the bench's
    // daemons otherwise run without it, for the lab's bare VIPs): the
    // 100 000 routes have no address, so they are unservable (withdrawn
    // or filtered), never healed. (Run with `--require-address false`, a
    // burst of them met zebra behind by more than the grace after the
    // earlier phases' work: 42 607 kernel_only reports and 142 realm
    // toggles in 20 s.)
    let args = ["--vip", VIP, "--mode", mode, "--require-address", "true"];
    let start = |what: &str| {
        eprintln!("== paths ({n} routes, {mode}): {what}");
        Daemon::start(lab_guard, &args, "info")
    };
    let ready = Duration::from_secs(180);
    let tail = "dev lo table 198 proto 248 scope global";
    let mut out = serde_json::Map::new();
    for permitted in [false, true] {
        if permitted {
            lab(&["vtysh", "rb-node1", "configure terminal", PERMIT]);
        }
        vip_with_address();
        insert_routes("rb-node1", 0x0a00_0000, n, tail);
        let mut d = start(if permitted {
            "before, permitted"
        } else {
            "before, filtered"
        })
        .await;
        d.wait(&["readiness changed", "ready=true"], ready).await;
        let key = if permitted {
            "before_permitted"
        } else {
            "before_filtered"
        };
        out.insert(key.into(), sample_phase(&mut d, secs).await);
        if !permitted {
            delete_routes("rb-node1", 0x0a00_0000, n, tail);
            out.insert("deleted".into(), sample_phase(&mut d, secs).await);
        }
        d.stop().await;
        if permitted {
            lab(&[
                "vtysh",
                "rb-node1",
                "configure terminal",
                &format!("no {PERMIT}"),
            ]);
        }
    }
    vip_with_address();
    let mut d = start("added after the start, filtered").await;
    d.wait(&["readiness changed", "ready=true"], ready).await;
    insert_routes("rb-node1", 0x0a00_0000, n, tail);
    out.insert("after_filtered".into(), sample_phase(&mut d, secs).await);
    d.stop().await;
    lab(&[
        "exec",
        "rb-node1",
        "sh",
        "-c",
        &format!("{FLUSH_198}; ip addr del {VIP} dev lo"),
    ]);
    lab(&["vip-add", "node1", VIP]);
    json!({"routes": n, "mode": mode, "phase_s": secs, "phases": out})
}

/// The withdrawal runs' window, from the backend's stop: the control run
/// (no `withdraw`) watches the router keep node1's path for as long, and
/// every run counts the probes lost over it.
const WITHDRAW_CONTROL_S: u64 = 15;

/// Cell 9, the writer, the address and the backend, on one
/// release: node1's VIP written by the lab's kube-vip (1 s ticks, no check of its
/// own) over the lab's OpenShift-router backend, node2's bare; ribbridge
/// in repair mode with the address required and its own probes (every
/// 1 s, timeout 500 ms, fall 2, rise 2: keepalived's ingress habit).
/// `runs` times each: the backend down to `blackhole`, draining to
/// `unready`, the writer SIGKILLed to `orphaned`, the writer gone and its
/// route deleted (what another instance's cleanup leaves when its owner is
/// gone) to `capacity_lost`, and the same by another instance's
/// `--clean-table` (timed from the kernel's deletion); each undone and
/// `advertised` again before the next. Then the CPU of the two VIPs probed every second against the same
/// daemon without probes over `idle_s` each, and `quiet_s` of writers and
/// backends healthy: every drift report and heal is false. Between them,
/// the withdrawal (`withdraw = true`): the writer SIGKILLed and then its
/// backend down, the router's paths and the probe traffic watched,
/// `withdraw_runs` times, then one control run without it.
async fn writer_cell(
    lab_guard: &Lab,
    frr: &str,
    (runs, withdraw_runs): (usize, usize),
    idle_s: u64,
    quiet_s: u64,
) -> Value {
    let limit = Duration::from_secs(30);
    let dir = tempfile::tempdir().expect("tempdir");
    let probes = |vips: &[&str], withdraw: bool| {
        // Each run deletes the route once (capacity_lost): a window short
        // enough that the runs' deletions do not add up to `flapping`.
        let mut t = String::from("flap_window_secs = 10\nflap_pairs = 7\n\n");
        for v in vips {
            t.push_str(&format!(
                "[[vip]]\nprefix = \"{v}\"\nhealth = \"http://127.0.0.1:1936/healthz\"\n\
                 ready = \"http://127.0.0.1:1936/healthz/ready\"\ninterval_ms = 1000\n\
                 timeout_ms = 500\nfall = 2\nrise = 2\nwithdraw = {withdraw}\n\n"
            ));
        }
        let f = dir
            .path()
            .join(format!("probes-{}-{withdraw}.toml", vips.len()));
        std::fs::write(&f, t).expect("probe config");
        f.display().to_string()
    };
    let writer = |op: &str, v: &str| {
        let mut a = vec!["kube-vip", "node1", op, v];
        if op == "start" {
            a.extend(["--interval", "1"]);
        }
        lab(&a);
    };
    lab(&["exec", "rb-node1", "sh", "-c", FLUSH_198]);
    lab(&["vip-add", "node2", VIP]);
    lab(&["backend", "node1", "up"]);
    writer("start", VIP);
    // The faults and the withdrawal (BENCH_WRITER_RUNS and
    // BENCH_WRITER_WITHDRAW_RUNS both 0: only the idle cost and the quiet
    // run, as on a release whose own bugs keep the VIP from `advertised`).
    let (latencies, withdrawal, log) = if runs + withdraw_runs == 0 {
        (serde_json::Map::new(), Value::Null, Vec::new())
    } else {
        // `withdraw = true` from the start: none of the faults below joins a
        // backend down to a silent writer, so it acts only in the withdrawal
        // runs, with the writer's cadence long learnt.
        let one = probes(&[VIP], true);
        let args = ["--require-address", "true", "--config", one.as_str()];
        let mut d = Daemon::start(lab_guard, &args, "info").await;
        d.wait(&["VIP consistent", "to=advertised"], limit).await;
        let mut took: std::collections::BTreeMap<&str, Vec<f64>> = Default::default();
        let mut step = async |d: &mut Daemon, name: &'static str, act: &dyn Fn(), want: &str| {
            let t = Instant::now();
            act();
            let at = d.wait(&[&format!("to={want}")], limit).await;
            took.entry(name)
                .or_default()
                .push(ms(at.saturating_duration_since(t)));
        };
        // Timed from the kernel's deletion, not from an action of the bench.
        let mut cleaned = Vec::new();
        for run in 0..runs {
            eprintln!("== writer ({frr}): run {run}");
            step(
                &mut d,
                "backend_down_to_blackhole",
                &|| {
                    lab(&["backend", "node1", "down"]);
                },
                "blackhole",
            )
            .await;
            lab(&["backend", "node1", "up"]);
            d.wait(&["to=advertised"], limit).await;
            step(
                &mut d,
                "ready_failing_to_unready",
                &|| {
                    lab(&["backend", "node1", "draining"]);
                },
                "unready",
            )
            .await;
            lab(&["backend", "node1", "up"]);
            d.wait(&["to=advertised"], limit).await;
            step(
                &mut d,
                "writer_killed_to_orphaned",
                &|| writer("kill", VIP),
                "orphaned",
            )
            .await;
            writer("start", VIP);
            d.wait(&["to=advertised"], limit).await;
            step(
                &mut d,
                "route_gone_to_capacity_lost",
                &|| {
                    writer("kill", VIP);
                    lab(&[
                        "exec", "rb-node1", "ip", "route", "del", VIP, "table", "198",
                    ]);
                },
                "capacity_lost",
            )
            .await;
            writer("start", VIP);
            d.wait(&["to=advertised"], limit).await;
            // kube-vip's vip_cleanroutingtable: another instance, started
            // with `--clean-table`, deletes the VIP's route 10 s later while
            // its own writer is dead (a live one re-adds it within a tick).
            // Timed from the deletion as the kernel announces it.
            writer("kill", VIP);
            let mut monitor = RouteMonitor::start("rb-node1");
            lab(&[
                "kube-vip",
                "node1",
                "start",
                CLEANER,
                "--interval",
                "1",
                "--clean-table",
            ]);
            let deleted = monitor.deleted(VIP, limit).await;
            let at = d.wait(&["to=capacity_lost"], limit).await;
            cleaned.push(ms(at.saturating_duration_since(deleted)));
            lab(&["kube-vip", "node1", "kill", CLEANER]);
            lab(&["vip-del", "node1", CLEANER]);
            writer("start", VIP);
            d.wait(&["to=advertised"], limit).await;
        }
        if !cleaned.is_empty() {
            took.insert("cleanup_by_another_instance_to_capacity_lost", cleaned);
        }
        // The writer SIGKILLed, then its backend down: with `withdraw`
        // ribbridge takes node1's path off the router and puts it back when
        // the backend returns; then a control daemon without it, which leaves
        // the path. The router's route to the VIP is watched.
        let mut router = RouteWatch::open("rb-router");
        let paths = async |router: &mut RouteWatch, n: usize, what: &str| {
            router
                .wait_nexthops(vip_addr(), 32, n, limit)
                .await
                .unwrap_or_else(|e| panic!("{what}: {e}"));
        };
        // Each run kills a writer `/status` shows `alive` (a restarted one is
        // from its first beat: its old tick is kept until it is learnt anew).
        let alive = async || {
            let t = Instant::now();
            loop {
                if node1_status()
                    .await
                    .contains("\"writer\":{\"state\":\"alive\"")
                {
                    return;
                }
                assert!(t.elapsed() < limit, "the writer not alive in /status");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        };
        // The reboot cell's probe traffic: 16 UDP flows from the router over
        // both nodes, each node's echo the service behind the VIP; node1's
        // answers only while its backend is up. Counted over the same window
        // from the backend's stop, with and without the withdrawal.
        probe_paths();
        let node1_serving = echo_responder("rb-node1");
        let _ = echo_responder("rb-node2");
        let window = Duration::from_secs(WITHDRAW_CONTROL_S);
        let backend_down = |serving: &std::sync::atomic::AtomicBool| {
            serving.store(false, std::sync::atomic::Ordering::Relaxed);
            lab(&["backend", "node1", "down"]);
        };
        let backend_up = |serving: &std::sync::atomic::AtomicBool| {
            lab(&["backend", "node1", "up"]);
            serving.store(true, std::sync::atomic::Ordering::Relaxed);
        };
        let (mut gone, mut back, mut lost) = (Vec::new(), Vec::new(), Vec::new());
        for run in 0..withdraw_runs {
            eprintln!("== writer ({frr}): withdraw run {run}");
            paths(&mut router, 2, "both paths before the withdrawal").await;
            alive().await;
            writer("kill", VIP);
            let probes = start_probes();
            let t = Instant::now();
            backend_down(&node1_serving);
            paths(&mut router, 1, "node1's path withdrawn by ribbridge").await;
            gone.push(ms(t.elapsed()));
            tokio::time::sleep_until((t + window).into()).await; // the window counted
            let (sent, answered) = probes.finish();
            lost.push((sent - answered) as f64);
            let t = Instant::now();
            backend_up(&node1_serving);
            paths(&mut router, 2, "node1's path put back").await;
            back.push(ms(t.elapsed()));
            writer("start", VIP);
            d.wait(&["to=advertised"], limit).await;
        }
        let mut log = drain(&mut d.lines);
        d.stop().await;
        let without = probes(&[VIP], false);
        let mut d = Daemon::start(
            lab_guard,
            &["--require-address", "true", "--config", without.as_str()],
            "info",
        )
        .await;
        d.wait(&["VIP consistent", "to=advertised"], limit).await;
        paths(&mut router, 2, "both paths before the control").await;
        writer("kill", VIP);
        let probes = start_probes();
        backend_down(&node1_serving);
        let kept = router
            .wait_nexthops(vip_addr(), 32, 1, window)
            .await
            .is_err();
        let (sent, answered) = probes.finish();
        let control_lost = sent - answered;
        backend_up(&node1_serving);
        writer("start", VIP);
        d.wait(&["to=advertised"], limit).await;
        log.extend(drain(&mut d.lines));
        d.stop().await;
        let withdrawal = json!({
            "runs": withdraw_runs,
            "backend_down_to_router_path_gone_ms": summary(&gone),
            "backend_up_to_router_path_back_ms": summary(&back),
            "without_withdraw_control_s": WITHDRAW_CONTROL_S,
            "without_withdraw_router_kept_node1": kept,
            "probes": {"flows": FLOWS, "every_ms": ms(PROBE_EVERY),
                       "window_s": WITHDRAW_CONTROL_S,
                       "lost_with_withdraw": summary(&lost),
                       "lost_without_withdraw": control_lost,
                       "sent_per_window": sent},
        });
        let latencies: serde_json::Map<String, Value> = took
            .iter()
            .map(|(k, v)| ((*k).to_string(), summary(v)))
            .collect();
        (latencies, withdrawal, log)
    };

    // The idle cost of probing: two probed VIPs, then the same without
    // probes, the writers beating on both.
    lab(&["vip-add", "node2", VIP2]);
    writer("start", VIP2);
    let mut idle = serde_json::Map::new();
    let two = probes(&[VIP, VIP2], false);
    for (name, args) in [
        (
            "probed",
            vec!["--require-address", "true", "--config", two.as_str()],
        ),
        (
            "not_probed",
            vec!["--require-address", "true", "--vip", VIP, "--vip", VIP2],
        ),
    ] {
        let mut d = Daemon::start(lab_guard, &args, "info").await;
        d.wait(&["readiness changed", "ready=true"], limit).await;
        tokio::time::sleep(Duration::from_secs(5)).await; // past start-up and the first polls
        let (cpu0, _, _) = proc_usage(d.pid());
        let t0 = Instant::now();
        tokio::time::sleep(Duration::from_secs(idle_s)).await; // the window measured
        let (cpu1, _, rss) = proc_usage(d.pid());
        let wall = t0.elapsed().as_secs_f64();
        drain(&mut d.lines);
        d.stop().await;
        idle.insert(
            name.into(),
            json!({"window_s": wall.round(), "cpu_s": cpu1 - cpu0,
                   "cpu_percent_of_core": ((cpu1 - cpu0) / wall * 100.0 * 1000.0).round() / 1000.0,
                   "rss_kib": rss}),
        );
    }

    // Quiet: writers and backends healthy; nothing may be reported.
    let mut d = Daemon::start(
        lab_guard,
        &["--require-address", "true", "--config", two.as_str()],
        "info",
    )
    .await;
    d.wait(&["readiness changed", "ready=true"], limit).await;
    tokio::time::sleep(Duration::from_secs(10)).await; // past start-up: the probes rise
    drain(&mut d.lines);
    tokio::time::sleep(Duration::from_secs(quiet_s)).await; // the window measured
    let quiet = drain(&mut d.lines);
    let end = node1_status().await;
    let end: Value = end
        .split_once("\r\n\r\n")
        .and_then(|(_, body)| serde_json::from_str(body).ok())
        .unwrap_or(Value::Null);
    let end_states: Vec<Value> = end["vips"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| json!({"prefix": v["prefix"], "state": v["state"]}))
        .collect();
    d.stop().await;
    let false_reports = quiet.iter().filter(|l| l.contains("VIP drift")).count();
    // Every state change of the quiet window by the state it went to: on
    // 8.4 and 10.3 a kube-vip-shaped VIP meets those releases' own bugs,
    // which this names.
    let mut changes: std::collections::BTreeMap<String, usize> = Default::default();
    for l in quiet
        .iter()
        .filter(|l| l.contains("VIP drift") || l.contains("VIP consistent"))
    {
        let to = l.split_whitespace().find_map(|w| w.strip_prefix("to="));
        *changes.entry(to.unwrap_or("?").to_string()).or_default() += 1;
    }
    let false_heals = quiet
        .iter()
        .filter(|l| l.contains(": healing") || l.contains("healing prefix"))
        .count();
    for v in [VIP, VIP2] {
        writer("stop", v);
    }
    lab(&[
        "exec",
        "rb-node1",
        "sh",
        "-c",
        &format!("{FLUSH_198}; ip addr del {VIP} dev lo; ip addr del {VIP2} dev lo; true"),
    ]);
    for v in [VIP, VIP2] {
        lab(&["vip-del", "node2", v]);
    }
    let heals = log.iter().filter(|l| l.contains("healing prefix")).count();
    json!({"runs": runs, "latency_ms": latencies, "heals_during_runs": heals, "idle": idle,
           "withdrawal": withdrawal,
           "quiet_s": quiet_s, "quiet_drift_reports": false_reports, "quiet_heals": false_heals,
           "quiet_state_changes_to": changes, "quiet_end_states": end_states})
}

/// 4b. A router vantage watching main with `n` routes and 2 VIPs, in a
/// namespace of its own (`rb-memrouter`, no FRR: the router vantage reads
/// only its kernel; a router's zebra would itself learn the million
/// routes): the VIPs via two gateways of a veth, the rest
/// `proto bgp` routes via one. The base is the same daemon with the two
/// VIPs only.
async fn router_memory(n: usize) -> Value {
    const NS: &str = "rb-memrouter";
    let sh = |cmd: &str| {
        let st = std::process::Command::new("sh")
            .args(["-c", cmd])
            .status()
            .expect("sh");
        assert!(st.success(), "{cmd}: {st}");
    };
    let _ = std::process::Command::new("ip")
        .args(["netns", "del", NS])
        .status();
    sh(&format!(
        "ip netns add {NS} && ip -n {NS} link set lo up && \
         ip -n {NS} link add rbm0 type veth peer name rbm1 && \
         ip -n {NS} link set rbm0 up && ip -n {NS} link set rbm1 up && \
         ip -n {NS} address add 198.18.0.1/24 dev rbm0 && \
         ip -n {NS} route add {VIP} proto bgp nexthop via 198.18.0.2 nexthop via 198.18.0.3 && \
         ip -n {NS} route add {VIP2} proto bgp nexthop via 198.18.0.2 nexthop via 198.18.0.3"
    ));
    let dir = tempfile::tempdir().expect("tempdir");
    let args = [
        "--vantage",
        "router",
        "--table",
        "254",
        "--vip",
        VIP,
        "--vip",
        VIP2,
    ];
    let log = "info,ribbridge::kernel::watcher=debug";
    let run = |what: &'static str| {
        let dir = dir.path().to_path_buf();
        async move {
            let mut d = Daemon::start_in(NS, &dir, &args, log);
            let view = d
                .wait(
                    &["kernel resync done", "reason=\"startup\""],
                    Duration::from_secs(120),
                )
                .await;
            let ready = d
                .wait(
                    &["readiness changed", "ready=true"],
                    Duration::from_secs(120),
                )
                .await;
            // Both VIPs counted (the ECMP line of each), then the sizes.
            let (_, hwm, rss) = proc_usage(d.pid());
            let started = d.started;
            d.stop().await;
            eprintln!("router memory ({what}): peak {hwm} KiB");
            (ms(view - started), ms(ready - started), hwm, rss)
        }
    };
    let (_, _, base_kib, _) = run("base").await;
    // 100.64.0.0/10 holds 4 M hosts: the million never meets the VIPs.
    let insert = insert_routes(NS, 0x6440_0000, n, "proto bgp via 198.18.0.2");
    let (view_ms, ready_ms, hwm, rss) = run("full").await;
    let _ = std::process::Command::new("ip")
        .args(["netns", "del", NS])
        .status();
    json!({"vantage": "router", "table": 254, "routes": n, "vips": 2,
           "ip_batch_insert_ms": ms(insert), "base_kib": base_kib,
           "bytes_per_route_over_base": (hwm.saturating_sub(base_kib) * 1024) as f64 / n as f64,
           "first_kernel_view_ms": view_ms, "ready_ms": ready_ms,
           "peak_rss_kib": hwm, "rss_kib": rss})
}

/// How node1 goes away in the reboot bench.
#[derive(Debug, Clone, Copy)]
enum Stop {
    NoDrain,
    Drain,
    Clean,
}

impl Stop {
    fn name(self) -> &'static str {
        match self {
            Stop::NoDrain => "no drain",
            Stop::Drain => "ribbridge drain",
            Stop::Clean => "clean bgpd stop only",
        }
    }
}

/// Probe flows and their rate.
const FLOWS: usize = 16;
const PROBE_EVERY: Duration = Duration::from_millis(10);
const ECHO_PORT: u16 = 7;
const PROBE_SRC: &str = "203.0.113.1";

/// A UDP echo responder on the VIP in `ns` (the VIP made local by a route
/// in table local: no address, so zebra sees nothing new). It answers
/// while the switch it returns is on (the service behind the VIP: off, the
/// node drops the VIP's traffic, as a node whose backend is down does).
fn echo_responder(ns: &'static str) -> std::sync::Arc<std::sync::atomic::AtomicBool> {
    use std::sync::atomic::Ordering;
    host_exec(
        ns,
        "ip route replace local 192.0.2.10/32 dev lo table local",
    );
    let sock = support::in_netns(ns, || {
        std::net::UdpSocket::bind(("192.0.2.10", ECHO_PORT)).expect("bind echo")
    });
    let serving = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let on = serving.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 64];
        while let Ok((n, from)) = sock.recv_from(&mut buf) {
            if on.load(Ordering::Relaxed) {
                let _ = sock.send_to(&buf[..n], from);
            }
        }
    });
    serving
}

/// The probe streams' paths: an L4 ECMP hash at the router (the flows,
/// one source port each, spread over both nodes), their source address on
/// the router's `lo`, routed back from each node.
fn probe_paths() {
    host_exec(
        "rb-router",
        "sysctl -qw net.ipv4.fib_multipath_hash_policy=1",
    );
    host_exec(
        "rb-router",
        &format!("ip link set lo up && ip address add {PROBE_SRC}/32 dev lo"),
    );
    host_exec(
        "rb-node1",
        &format!("ip route replace {PROBE_SRC}/32 via 198.18.1.1"),
    );
    host_exec(
        "rb-node2",
        &format!("ip route replace {PROBE_SRC}/32 via 198.18.2.1"),
    );
}

/// Counts of one probe stream: sent, answered.
struct Probes {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    threads: Vec<std::thread::JoinHandle<(u64, u64)>>,
}

fn start_probes() -> Probes {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let stop = Arc::new(AtomicBool::new(false));
    let mut threads = Vec::new();
    for _ in 0..FLOWS {
        let sock = support::in_netns("rb-router", || {
            // One source address routable from both nodes: a flow rehashed
            // to node2 is answered there (the interface address of node1's
            // link would not be).
            let s = std::net::UdpSocket::bind((PROBE_SRC, 0)).expect("bind probe");
            s.connect(("192.0.2.10", ECHO_PORT)).expect("connect probe");
            s.set_read_timeout(Some(PROBE_EVERY)).expect("timeout");
            s
        });
        let stop = stop.clone();
        threads.push(std::thread::spawn(move || {
            let (mut sent, mut got) = (0u64, std::collections::BTreeSet::new());
            let mut buf = [0u8; 8];
            let mut next = Instant::now();
            while !stop.load(Ordering::Relaxed) {
                if Instant::now() >= next {
                    let _ = sock.send(&sent.to_be_bytes());
                    sent += 1;
                    next += PROBE_EVERY;
                }
                if let Ok(8) = sock.recv(&mut buf) {
                    got.insert(u64::from_be_bytes(buf));
                }
            }
            // Late answers still count.
            let end = Instant::now() + Duration::from_millis(300);
            while Instant::now() < end {
                if let Ok(8) = sock.recv(&mut buf) {
                    got.insert(u64::from_be_bytes(buf));
                }
            }
            (sent, got.len() as u64)
        }));
    }
    Probes { stop, threads }
}

impl Probes {
    fn finish(self) -> (u64, u64) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let mut t = (0, 0);
        for h in self.threads {
            let (s, g) = h.join().unwrap();
            t.0 += s;
            t.1 += g;
        }
        t
    }
}

async fn reboot_cell(frr: &'static str, how: Stop, graceful_restart: bool) -> Value {
    let lab_guard = if graceful_restart {
        Lab::up_with(
            frr,
            2,
            &[VIP],
            &["--profile", "frr-k8s", "--graceful-restart"],
        )
    } else {
        Lab::up(frr, 2, &[VIP])
    };
    let mut router = RouteWatch::open("rb-router");
    probe_paths();
    lab(&["vip-add", "node1", VIP]);
    lab(&["vip-add", "node2", VIP]);
    echo_responder("rb-node1");
    echo_responder("rb-node2");
    router
        .wait_nexthops(vip_addr(), 32, 2, Duration::from_secs(30))
        .await
        .expect("both paths");
    let probes = start_probes();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut drain_ms = None;
    match how {
        Stop::NoDrain => {}
        Stop::Drain => {
            let t = Instant::now();
            let out = Command::new("ip")
                .args([
                    "netns",
                    "exec",
                    "rb-node1",
                    env!("CARGO_BIN_EXE_ribbridge"),
                    "drain",
                    "--frr-dir",
                ])
                .arg(lab_guard.sockdir("rb-node1"))
                .arg("--drain-state")
                .arg(support::drain_state(&lab_guard.sockdir("rb-node1")))
                .output()
                .await
                .expect("drain");
            assert!(
                out.status.success(),
                "drain: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            drain_ms = Some(ms(t.elapsed()));
        }
        Stop::Clean => {
            lab(&["kill", "rb-node1", "bgpd", "TERM"]);
        }
    }
    let paths_at_power_off = router.nexthops(vip_addr(), 32).await;
    let route_at_power_off = String::from_utf8_lossy(
        &std::process::Command::new("ip")
            .args([
                "netns",
                "exec",
                "rb-router",
                "ip",
                "route",
                "show",
                "192.0.2.10/32",
            ])
            .output()
            .expect("ip route")
            .stdout,
    )
    .split_whitespace()
    .collect::<Vec<_>>()
    .join(" ");
    // Power off: every packet of node1 dropped (the router sees no carrier
    // change, as behind a switch), bgpd killed.
    let t0 = Instant::now();
    host_exec(
        "rb-node1",
        "iptables -I INPUT -j DROP && iptables -I OUTPUT -j DROP",
    );
    if !matches!(how, Stop::Clean) {
        lab(&["kill", "rb-node1", "bgpd", "KILL"]);
    }
    let dead = router
        .wait_nexthops(vip_addr(), 32, 1, Duration::from_secs(200))
        .await
        .map(|_| t0.elapsed());
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (sent, answered) = probes.finish();
    drop(lab_guard);
    json!({"stop": how.name(), "graceful_restart": graceful_restart, "probes_sent": sent, "probes_lost": sent - answered.min(sent),
           "dead_path_ms": dead.as_ref().ok().map(|d| ms(*d)),
           "drain_ms": drain_ms, "router_paths_at_power_off": paths_at_power_off,
           "router_route_at_power_off": route_at_power_off})
}

/// Every cell but the soaks, in the order they run.
const ALL_CELLS: &str = "reboot observation idle availability churn heal scale paths writer";

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    support::require_root();
    let releases: Vec<String> = env_or("BENCH_FRR", "8.4 10.3 10.7".to_string())
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let runs: usize = env_or("BENCH_RUNS", 20);
    let fail_stop: usize = env_or("BENCH_FAIL_STOP", 3);
    let bound = Duration::from_secs(env_or("BENCH_BOUND_S", 12));
    let obs: usize = env_or("BENCH_OBS", 40);
    let idle_s: u64 = env_or("BENCH_IDLE_S", 60);
    let scale_ns: Vec<usize> = env_or("BENCH_SCALE", "10000 100000".to_string())
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .filter(|n| *n > 0)
        .collect();
    let router_n: usize = env_or("BENCH_ROUTER_ROUTES", 1_000_000);
    let paths_frr: String = env_or("BENCH_PATHS_FRR", "10.7".to_string());
    let paths_n: usize = env_or("BENCH_PATHS_ROUTES", 100_000);
    let paths_s: u64 = env_or("BENCH_PATHS_S", 40);
    let paths_modes: String = env_or("BENCH_PATHS_MODES", "repair observe".to_string());
    let writer_runs: usize = env_or("BENCH_WRITER_RUNS", 20);
    let writer_idle_s: u64 = env_or("BENCH_WRITER_IDLE_S", 60);
    let writer_withdraw_runs: usize = env_or("BENCH_WRITER_WITHDRAW_RUNS", 10);
    let writer_quiet_s: u64 = env_or("BENCH_WRITER_QUIET_S", 600);
    let only_memory: u8 = env_or("BENCH_ONLY_MEMORY", 0);
    let out = PathBuf::from(env_or("BENCH_OUT", "bench-e2e.json".to_string()));
    let reboot_on: u8 = env_or("BENCH_REBOOT", 1);
    let only_reboot: u8 = env_or("BENCH_ONLY_REBOOT", 0);
    // Which cells run (a subset, to measure one lever at a time); the
    // soaks only with BENCH_SOAK=1 (20 minutes per release).
    let mut cells: Vec<String> = env_or("BENCH_CELLS", ALL_CELLS.to_string())
        .split([',', ' '])
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .collect();
    if env_or("BENCH_SOAK", 0u8) == 1 {
        cells.push("soak".to_string());
    }
    if only_memory == 1 {
        cells = vec!["scale".to_string()];
    }
    let on = |c: &str| cells.iter().any(|x| x == c);
    let modes: Vec<Mode> = env_or("BENCH_MODES", "ribbridge reassert nothing".to_string())
        .split([',', ' '])
        .filter_map(|m| match m {
            "ribbridge" => Some(Mode::Ribbridge),
            "reassert" => Some(Mode::Reassert),
            "nothing" => Some(Mode::Nothing),
            _ => None,
        })
        .collect();
    let avail_period = Duration::from_secs(env_or("BENCH_AVAIL_PERIOD_S", 5));
    let avail_beats: u32 = env_or("BENCH_AVAIL_BEATS", 60);
    let churn_n: usize = env_or("BENCH_CHURN", 1_000);
    let began = Instant::now();
    let mut results = Vec::new();
    for frr in &releases {
        let frr: &'static str = Box::leak(frr.clone().into_boxed_str());
        let t = Instant::now();
        let mut reboot = Vec::new();
        if (reboot_on == 1 && on("reboot")) || only_reboot == 1 {
            let gr_modes: String = env_or("BENCH_REBOOT_GR", "0 1".to_string());
            for gr in gr_modes.split_whitespace().map(|g| g == "1") {
                for how in [Stop::NoDrain, Stop::Drain, Stop::Clean] {
                    eprintln!(
                        "== FRR {frr}: reboot with {}, graceful restart {gr}",
                        how.name()
                    );
                    let c = reboot_cell(frr, how, gr).await;
                    eprintln!("{c}");
                    reboot.push(c);
                }
            }
        }
        if only_reboot == 1 {
            results.push(json!({"frr": frr, "reboot": reboot, "took_s": t.elapsed().as_secs()}));
            continue;
        }
        eprintln!("== FRR {frr}: lab up");
        let lab_guard = Lab::up(frr, 2, &[VIP, VIP2]);
        let mut o = Value::Null;
        if on("observation") {
            eprintln!("== FRR {frr}: observation latency ({obs} changes)");
            o = observation(&lab_guard, obs).await;
            eprintln!("{o}");
        }
        lab(&["exec", "rb-node1", "sh", "-c", RESET_10X]);
        let mut i = Value::Null;
        if on("idle") {
            eprintln!("== FRR {frr}: idle cost ({idle_s} s)");
            i = idle(&lab_guard, idle_s).await;
            eprintln!("{i}");
        }
        let mut avail = Value::Null;
        if on("availability") {
            eprintln!("== FRR {frr}: availability ({avail_beats} beats every {avail_period:?})");
            avail =
                heartbeat_cell(&lab_guard, frr, avail_period, avail_beats, "availability").await;
            eprintln!("{avail}");
        }
        let mut soak = Vec::new();
        if on("soak") && frr == "8.4" {
            for (period, beats) in [(1, 600), (5, 120)] {
                eprintln!("== FRR {frr}: soak ({beats} beats every {period} s)");
                let name = format!("soak-{period}s");
                let c = heartbeat_cell(&lab_guard, frr, Duration::from_secs(period), beats, &name)
                    .await;
                eprintln!("{c}");
                soak.push(c);
            }
        }
        let mut churn = Value::Null;
        if on("churn") {
            eprintln!("== FRR {frr}: churn ({churn_n} changes at 50/s)");
            churn = churn_cell(&lab_guard, frr, churn_n, 50).await;
            eprintln!("{churn}");
        }
        let (case, _, _) = case_of(frr);
        let mut cells = Vec::new();
        if on("heal") {
            lab(&["vip-add", "node2", VIP]);
            if frr == "8.4" {
                lab(&["vip-add", "node1", VIP]);
            }
            for &mode in &modes {
                eprintln!("== FRR {frr}: heal '{case}' with {}", mode.name());
                let c = heal_cell(&lab_guard, frr, mode, runs, fail_stop, bound).await;
                eprintln!("{c}");
                cells.push(c);
            }
        }
        let s = if on("scale") {
            memory_cells(&lab_guard, frr, &scale_ns).await
        } else {
            Value::Null
        };
        let mut paths = Vec::new();
        if on("paths") && paths_frr.split_whitespace().any(|r| r == frr) {
            for mode in paths_modes.split_whitespace() {
                let c = paths_cell(&lab_guard, paths_n, mode, paths_s).await;
                eprintln!("{c}");
                paths.push(c);
            }
        }
        let mut writer = Value::Null;
        if on("writer") {
            eprintln!("== FRR {frr}: the writer, the address and the backend ({writer_runs} runs)");
            writer = writer_cell(
                &lab_guard,
                frr,
                (writer_runs, writer_withdraw_runs),
                writer_idle_s,
                writer_quiet_s,
            )
            .await;
            eprintln!("{writer}");
        }
        drop(lab_guard);
        results.push(json!({"frr": frr, "observation": o, "idle": i,
            "heal": {"case": case, "cells": cells}, "availability": avail, "churn": churn,
            "soak": soak, "scale": s, "paths": paths, "writer": writer, "reboot": reboot,
            "took_s": t.elapsed().as_secs()}));
    }
    let router = if router_n > 0 && on("scale") {
        eprintln!("== router vantage, main table: memory ({router_n} routes, 2 VIPs)");
        let r = router_memory(router_n).await;
        eprintln!("{r}");
        r
    } else {
        Value::Null
    };
    let doc = json!({
        "settings": {"runs": runs, "fail_stop": fail_stop, "bound_s": bound.as_secs(), "cells": cells,
                     "availability_period_s": avail_period.as_secs(), "availability_beats": avail_beats,
                     "churn_changes": churn_n,
                     "observation_changes": obs, "idle_s": idle_s, "scale_routes": scale_ns,
                     "router_routes": router_n},
        "router_memory": router,
        "machine": machine(),
        "took_s": began.elapsed().as_secs(),
        "releases": results,
    });
    std::fs::write(&out, serde_json::to_string_pretty(&doc).unwrap()).expect("write json");
    print_table(&doc);
    println!("JSON: {}", out.display());
}

/// 4. The node's memory cells: the idle base, then each route count.
async fn memory_cells(lab_guard: &Lab, frr: &str, counts: &[usize]) -> Value {
    if counts.is_empty() {
        return Value::Null;
    }
    let base = idle_base(lab_guard).await;
    let mut cells = Vec::new();
    let modes = std::env::var("BENCH_SCALE_MODES").unwrap_or_else(|_| "observe repair".into());
    for &n in counts {
        for mode in modes.split_whitespace() {
            eprintln!("== FRR {frr}: scale ({n} routes, {mode})");
            let s = scale(lab_guard, n, base, mode).await;
            eprintln!("{s}");
            cells.push(s);
        }
    }
    Value::Array(cells)
}

fn machine() -> Value {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let cpu = read("/proc/cpuinfo")
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    json!({"cpu": cpu,
           "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
           "kernel": read("/proc/sys/kernel/osrelease").trim(),
           "loadavg_at_end": read("/proc/loadavg").trim()})
}

fn print_table(doc: &Value) {
    let f = |v: &Value| match v.as_f64() {
        Some(x) => format!("{x:.1}"),
        None => "-".to_string(),
    };
    println!(
        "\n{:<6} {:<4} {:<22} {:>8} {:>12} {:>16} {:>10}",
        "FRR", "GR", "node1 powered off", "probes", "probes lost", "dead path (ms)", "drain ms"
    );
    for r in doc["releases"].as_array().unwrap() {
        for c in r["reboot"].as_array().into_iter().flatten() {
            println!(
                "{:<6} {:<4} {:<22} {:>8} {:>12} {:>16} {:>10}",
                r["frr"].as_str().unwrap(),
                if c["graceful_restart"] == true {
                    "yes"
                } else {
                    "no"
                },
                c["stop"].as_str().unwrap(),
                c["probes_sent"],
                c["probes_lost"],
                f(&c["dead_path_ms"]),
                f(&c["drain_ms"])
            );
        }
    }
    let releases = doc["releases"].as_array().unwrap();
    let with = |k: &'static str| releases.iter().filter(move |r| !r[k].is_null());
    println!(
        "\n{:<6} {:<22} {:>10} {:>10} {:>6}",
        "FRR", "observation (ms)", "median", "worst", "n"
    );
    for r in with("observation") {
        let o = &r["observation"];
        for k in ["ip_monitor", "ribbridge"] {
            println!(
                "{:<6} {:<22} {:>10} {:>10} {:>6}",
                r["frr"].as_str().unwrap(),
                k,
                f(&o[k]["median_ms"]),
                f(&o[k]["worst_ms"]),
                o[k]["n"]
            );
        }
        println!(
            "{:<6} {:<22} {:>10}",
            "",
            "ratio (medians)",
            f(&o["ratio_of_medians"])
        );
    }
    println!(
        "\n{:<6} {:<34} {:<26} {:>9} {:>9} {:>9} {:>5} {:>11} {:>9}",
        "FRR", "drift case", "healed by", "p50", "p99", "worst", "runs", "not healed", "unseen"
    );
    for r in releases {
        for c in r["heal"]["cells"].as_array().into_iter().flatten() {
            let nh = match c["not_healed_within_s"].as_u64() {
                Some(b) => format!("{} (>{b} s)", c["not_healed"]),
                None => "0".to_string(),
            };
            println!(
                "{:<6} {:<34} {:<26} {:>9} {:>9} {:>9} {:>5} {:>11} {:>9}",
                r["frr"].as_str().unwrap(),
                r["heal"]["case"].as_str().unwrap(),
                c["mode"].as_str().unwrap(),
                f(&c["healed"]["p50_ms"]),
                f(&c["healed"]["p99_ms"]),
                f(&c["healed"]["worst_ms"]),
                c["runs"].to_string(),
                nh,
                c["router_saw_no_change"].to_string()
            );
        }
    }
    println!(
        "\n{:<6} {:<14} {:>6} {:>8} {:>11} {:>6} {:>7} {:>6} {:>8} {:>12} {:>10}",
        "FRR",
        "heartbeat",
        "beats",
        "period",
        "node1 path %",
        "dips",
        "drifts",
        "heals",
        "gave up",
        "RSS KiB",
        "fds"
    );
    for r in releases {
        let hb = std::iter::once(("availability", &r["availability"])).chain(
            r["soak"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| ("soak", c)),
        );
        for (name, c) in hb.filter(|(_, c)| !c.is_null()) {
            println!(
                "{:<6} {:<14} {:>6} {:>8} {:>11} {:>6} {:>7} {:>6} {:>8} {:>12} {:>10}",
                r["frr"].as_str().unwrap(),
                name,
                c["beats"].to_string(),
                c["period_s"].to_string(),
                c["node1_path_share_percent"].to_string(),
                c["dips"].to_string(),
                c["drift_reports"].to_string(),
                c["heals"].to_string(),
                c["gave_up"].to_string(),
                format!("{}->{}", c["rss_kib"][0], c["rss_kib"][1]),
                format!("{}->{}", c["open_fds"][0], c["open_fds"][1])
            );
        }
    }
    println!(
        "\n{:<6} {:>8} {:>6} {:>8} {:>14} {:>8}",
        "FRR", "churn", "per s", "took s", "drift reports", "actions"
    );
    for r in with("churn") {
        let c = &r["churn"];
        println!(
            "{:<6} {:>8} {:>6} {:>8} {:>14} {:>8}",
            r["frr"].as_str().unwrap(),
            c["changes"].to_string(),
            c["per_s"].to_string(),
            c["took_s"].to_string(),
            c["drift_reports"].to_string(),
            c["actions"].to_string()
        );
    }
    println!(
        "\n{:<6} {:>10} {:>12} {:>14} {:>8}",
        "FRR", "idle CPU %", "peak RSS MiB", "heals in idle", "beats"
    );
    for r in with("idle") {
        let i = &r["idle"];
        println!(
            "{:<6} {:>10} {:>12.1} {:>14} {:>8}",
            r["frr"].as_str().unwrap(),
            f(&i["cpu_percent_of_core"]),
            i["peak_rss_kib"].as_f64().unwrap_or(0.0) / 1024.0,
            i["heals_in_window"],
            i["beats"]
        );
    }
    print_memory(doc);
}

/// The memory table: one row per vantage and route count.
fn print_memory(doc: &Value) {
    let f = |v: &Value| match v.as_f64() {
        Some(x) => format!("{x:.1}"),
        None => "-".to_string(),
    };
    println!(
        "\n{:<7} {:<7} {:>8} {:>10} {:>14} {:>10} {:>14} {:>12} {:>9} {:>10}",
        "FRR",
        "vantage",
        "routes",
        "insert ms",
        "kernel view ms",
        "ready ms",
        "full resync ms",
        "peak RSS MiB",
        "base MiB",
        "B/route"
    );
    let row = |frr: &str, s: &Value| {
        println!(
            "{:<7} {:<7} {:>8} {:>10} {:>14} {:>10} {:>14} {:>12.1} {:>9.1} {:>10}",
            frr,
            s["vantage"].as_str().unwrap_or("node"),
            s["routes"],
            f(&s["ip_batch_insert_ms"]),
            f(&s["first_kernel_view_ms"]),
            match s["ready_ms"].as_f64() {
                Some(x) => format!("{x:.1}"),
                None => format!("not ready in {} s", s["not_ready_within_s"]),
            },
            f(&s["full_resync_ms"]),
            s["peak_rss_kib"].as_f64().unwrap_or(0.0) / 1024.0,
            s["base_kib"].as_f64().unwrap_or(0.0) / 1024.0,
            f(&s["bytes_per_route_over_base"])
        );
    };
    for r in doc["releases"].as_array().unwrap() {
        for s in r["scale"].as_array().into_iter().flatten() {
            row(r["frr"].as_str().unwrap(), s);
        }
    }
    if !doc["router_memory"].is_null() {
        row("-", &doc["router_memory"]);
    }
}
