//! `ribbridge drain` / `undrain` end to end, on each release, in one lab per
//! release: both nodes advertise; node1 drains (confirmed by a
//! router-vantage ribbridge) and the router keeps node2's path only; the
//! daemon says `drained`, heals nothing, and kube-vip's heartbeat does not
//! bring the VIP back; a restarted daemon still says `drained`; undrain
//! brings the router back to two paths. Repeats are harmless. Every wait is
//! on an event or on the command's own exit; nothing asserts a duration.

use std::net::IpAddr;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

use tokio::process::Command;

use crate::support::daemon::Daemon;
use crate::support::{Lab, RouteWatch, lab};
use ribbridge::reconcile::Class;
use ribbridge::status::StatusDoc;

const VIP: &str = "192.0.2.10/32";
/// The router-vantage ribbridge listens on the router's side of node1's link.
const ROUTER_STATUS: &str = "http://198.18.1.1:7586/status";

fn vip_addr() -> IpAddr {
    "192.0.2.10".parse().expect("addr")
}

fn state_of(doc: &StatusDoc) -> Class {
    crate::support::class_of(doc, VIP)
}

/// `ribbridge SUB --frr-dir DIR ARGS...` in node1's namespace.
pub(crate) async fn cli(sub: &str, frr_dir: &Path, args: &[&str]) -> Output {
    cli_at(sub, frr_dir, &crate::support::drain_state(frr_dir), args).await
}

/// The same with the intent file at `state`.
async fn cli_at(sub: &str, frr_dir: &Path, state: &Path, args: &[&str]) -> Output {
    let out = Command::new("ip")
        .args(["netns", "exec", "rb-node1"])
        .arg(env!("CARGO_BIN_EXE_ribbridge"))
        .arg(sub)
        .arg("--frr-dir")
        .arg(frr_dir)
        .arg("--drain-state")
        .arg(state)
        .args(args)
        .output()
        .await
        .expect("run ribbridge");
    eprintln!(
        "ribbridge {sub} {args:?}: {}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn assert_ok(out: &Output, what: &str) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{what}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn heals_or_drifts(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| l.contains("healing") || l.contains("VIP drift") || l.contains("heal action"))
        .cloned()
        .collect()
}

/// The command's log has a `waiting:` line with every needle (`a && b`):
/// what it still waited for, said while it waited.
fn said_it_waited(out: &Output, needles: &str) {
    let log = String::from_utf8_lossy(&out.stderr);
    let said = log
        .lines()
        .find(|l| l.contains("waiting: ") && needles.split(" && ").all(|n| l.contains(n)));
    match said {
        Some(l) => eprintln!("{l}"),
        None => panic!("no `waiting:` line with {needles:?} in its log:\n{log}"),
    }
}

async fn drain_cycle(frr: &'static str) {
    let lab_guard = Lab::up(frr, 2, &[VIP]);
    let node1 = lab_guard.sockdir("rb-node1");
    // No intent left from an earlier run.
    let intent = crate::support::drain_state(&node1);
    let _ = std::fs::remove_file(&intent);
    let mut router = RouteWatch::open("rb-router");
    let mut d = Daemon::start(&lab_guard, "rb-node1", &[]).await;
    // A router-vantage ribbridge node1 can reach (its status is the
    // confirmation drain waits for).
    let rdir = tempfile::tempdir().expect("tempdir").keep();
    let mut rcmd = Command::new("ip");
    rcmd.args(["netns", "exec", "rb-router"])
        .arg(env!("CARGO_BIN_EXE_ribbridge"))
        .args(["run", "--frr-dir"])
        .arg(lab_guard.sockdir("rb-router"))
        .args(["--listen", "198.18.1.1:7586", "--record"])
        .arg(rdir.join("events.jsonl"))
        .args(["--vantage", "router", "--table", "254", "--vip", VIP])
        .env("RUST_LOG", "info");
    let mut rb_router =
        Daemon::spawn_command("rb-router", rcmd, rdir.join("events.jsonl"), 7586, &[]);
    rb_router
        .wait_log("kernel mirror resynced", Duration::from_secs(15))
        .await;

    crate::support::advertise_on_both(&mut d, &mut router, VIP).await;
    rb_router
        .wait_log("VIP ECMP legs && nexthops=2", Duration::from_secs(15))
        .await;

    // Drain: exits 0 once bgpd sends the VIP to no established peer, the
    // local daemon says drained and the router view has no path via node1.
    let out = cli(
        "drain",
        &node1,
        &[
            "--endpoint",
            "127.0.0.1:7585",
            "--confirm",
            ROUTER_STATUS,
            "--timeout",
            "30s",
        ],
    )
    .await;
    assert_ok(&out, "drain");
    assert!(String::from_utf8_lossy(&out.stdout).contains("configured now"));
    // While it waited it said for what: the router's path via node1 at
    // least (a withdrawal reaches the router's kernel 121-125 ms after
    // bgpd is told, and the first check runs at once).
    said_it_waited(
        &out,
        "the router view && still has a path to 192.0.2.10/32 via",
    );
    // The intent is recorded, for a daemon to re-apply after a reload.
    let recorded = ribbridge::drain::DrainState::read(&intent).expect("intent readable");
    assert_eq!(recorded.map(|s| s.tables), Some(vec![198]));
    // The router's kernel already holds node2's path only (the router view
    // confirmed it); no wait beyond the first check is needed.
    router
        .wait_nexthops(vip_addr(), 32, 1, Duration::from_secs(1))
        .await
        .expect("router has node2's path only once drain returned");
    let (doc, code) = d.status().await;
    assert_eq!((state_of(&doc), code), (Class::Drained, 0), "{doc:?}");
    assert!(
        d.metrics().await.contains("ribbridge_drained 1"),
        "ribbridge_drained is 1 while drained"
    );

    // kube-vip's heartbeat during the drain: the VIP stays out of BGP.
    for _ in 0..5 {
        lab(&["vip-reassert", "node1", VIP]);
        // kube-vip's pace, not a synchronisation.
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // A second drain: nothing configured, and it returns only once bgpd
    // sends no VIP to any peer (so the heartbeats did not bring it back).
    let out = cli("drain", &node1, &["--confirm", ROUTER_STATUS]).await;
    assert_ok(&out, "drain twice");
    assert!(String::from_utf8_lossy(&out.stdout).contains("already so"));
    assert_eq!(router.nexthops(vip_addr(), 32).await, 1);

    // A restarted ribbridge reads the drain back from bgpd.
    // bgpd polled every second, so that the polls that would see a drift
    // can be awaited.
    let (_, _, _) = d.stop().await;
    let config = crate::support::bgp_poll_config(1);
    let mut d = Daemon::start(
        &lab_guard,
        "rb-node1",
        &["--config", &crate::support::config_arg(&config)],
    )
    .await;
    d.wait_log("VIP consistent && to=drained", Duration::from_secs(15))
        .await;
    let (doc, code) = d.status().await;
    assert_eq!((state_of(&doc), code), (Class::Drained, 0), "{doc:?}");
    let out = cli("drain", &node1, &["--endpoint", "127.0.0.1:7585"]).await;
    assert_ok(&out, "drain a third time, after the restart");
    // Three bgpd views after it, past bgpd's 2 s grace: what would have
    // seen a drift and healed it has run. Still no heal.
    let views = |m: &str| {
        m.lines()
            .find(|l| l.starts_with("ribbridge_events_total{source=\"vty\"}"))
            .and_then(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    let before = views(&d.metrics().await);
    let t = std::time::Instant::now();
    while views(&d.metrics().await) < before + 6.0 {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "bgpd was not polled three times in 20 s"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let log: Vec<String> = d.drain().to_vec();
    assert!(
        heals_or_drifts(&log).is_empty(),
        "no heal or drift while drained:\n{}",
        log.join("\n")
    );

    // Undrain: exits 0 with each VIP advertised and the router at 2 paths.
    let out = cli(
        "undrain",
        &node1,
        &[
            "--endpoint",
            "127.0.0.1:7585",
            "--confirm",
            ROUTER_STATUS,
            "--json",
        ],
    )
    .await;
    assert_ok(&out, "undrain");
    said_it_waited(
        &out,
        "the router view && has no path to 192.0.2.10/32 through this node",
    );
    // --json: one object saying what was reached and what it changed.
    let doc: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("undrain --json prints one JSON object");
    assert_eq!(
        (&doc["result"], &doc["changed"], &doc["vips"][0]),
        (
            &serde_json::json!("advertised"),
            &serde_json::json!(true),
            &serde_json::json!(VIP)
        ),
        "{doc}"
    );
    router
        .wait_nexthops(vip_addr(), 32, 2, Duration::from_secs(1))
        .await
        .expect("router back at 2 paths once undrain returned");
    let out = cli("undrain", &node1, &[]).await;
    assert_ok(&out, "undrain twice");
    assert!(String::from_utf8_lossy(&out.stdout).contains("already so"));
    // The first undrain removed the intent; the second found none.
    assert!(!intent.exists(), "{} left after undrain", intent.display());
    assert!(String::from_utf8_lossy(&out.stdout).contains("was absent"));
    let (doc, code) = d.status().await;
    assert_eq!((state_of(&doc), code), (Class::Advertised, 0), "{doc:?}");
    assert!(d.metrics().await.contains("ribbridge_drained 0"));
    // On 8.4 every heartbeat during the drain dropped zebra's import
    // (docs/FRR-BEHAVIOUR.md): once undrained, that is a drift ribbridge
    // heals, as it does outside a drain. Elsewhere undrain is quiet.
    let log: Vec<String> = d.drain().to_vec();
    if frr != "8.4" {
        assert!(
            heals_or_drifts(&log).is_empty(),
            "undrain caused drift or heal:\n{}",
            log.join("\n")
        );
    }
    drop(rb_router);
    drop(lab_guard);
}

#[tokio::test]
async fn drain_frr_8_4() {
    drain_cycle("8.4").await;
}

#[tokio::test]
async fn drain_frr_10_3() {
    drain_cycle("10.3").await;
}

#[tokio::test]
async fn drain_frr_10_7() {
    drain_cycle("10.7").await;
}

/// bgpd applies a route-map change when its route-map delay timer fires
/// (5 s, `bgp route-map delay-timer`'s default, docs/FRR-BEHAVIOUR.md):
/// nothing but its effect at the router marks that moment, so the router
/// is watched this long after a reload to see that the effect never came.
const ROUTE_MAP_DELAY_AND_MARGIN: Duration = Duration::from_secs(7);

/// frr-k8s's reload (`frr-reload.py --reload --overwrite` with the node's
/// own file, which has no drain entry) removes the drain; the daemon
/// re-applies the recorded drain before bgpd's delay timer applies the
/// removal: the router never has node1's path again.
async fn drain_through_a_reload(frr: &'static str) {
    let lab_guard = Lab::up_with(frr, 2, &[VIP], &["--profile", "frr-k8s"]);
    let node1 = lab_guard.sockdir("rb-node1");
    let intent = crate::support::drain_state(&node1);
    let _ = std::fs::remove_file(&intent);
    let mut router = RouteWatch::open("rb-router");
    let mut d = Daemon::start(&lab_guard, "rb-node1", &[]).await;
    crate::support::advertise_on_both(&mut d, &mut router, VIP).await;
    let out = cli("drain", &node1, &["--endpoint", "127.0.0.1:7585"]).await;
    assert_ok(&out, "drain");
    router
        .wait_nexthops(vip_addr(), 32, 1, Duration::from_secs(15))
        .await
        .expect("router has node2's path only once drained");
    let timeline = router.timeline(vip_addr(), 32).await;
    let start = std::time::Instant::now();
    lab(&["reload", "node1"]);
    let reloaded = std::time::Instant::now();
    // The reload removed the entry; the daemon put it back.
    let line = d
        .wait_log("lost the drain && re-applied", Duration::from_secs(10))
        .await;
    let reapplied = std::time::Instant::now();
    eprintln!(
        "drain {frr}: re-applied {:?} after the reload returned: {line}",
        reapplied - reloaded
    );
    assert!(
        d.metrics()
            .await
            .contains("ribbridge_drain_reapplied_total 1")
    );
    let until = reloaded + ROUTE_MAP_DELAY_AND_MARGIN;
    tokio::time::sleep_until(until.into()).await;
    let samples = timeline.samples();
    let most = samples.iter().map(|(_, n)| *n).max().unwrap_or(0);
    eprintln!(
        "drain {frr}: router's paths for {VIP} over {:?} from the reload: {} samples, at most {most}",
        until - start,
        samples.len()
    );
    assert_eq!(
        most, 1,
        "the router saw node1's path come back: {samples:?}"
    );
    let (doc, code) = d.status().await;
    assert_eq!((state_of(&doc), code), (Class::Drained, 0), "{doc:?}");
    assert!(d.metrics().await.contains("ribbridge_drain_lost 0"));
    let log: Vec<String> = d.drain().to_vec();
    assert!(
        heals_or_drifts(&log).is_empty(),
        "no heal or drift through the reload:\n{}",
        log.join("\n")
    );
    // Undrain ends it for good: the intent goes first, no re-apply after.
    let out = cli("undrain", &node1, &["--endpoint", "127.0.0.1:7585"]).await;
    assert_ok(&out, "undrain");
    assert!(!intent.exists(), "{} left after undrain", intent.display());
    assert!(
        d.metrics()
            .await
            .contains("ribbridge_drain_reapplied_total 1")
    );
    // Stopped, not dropped: its recording is the replayed case
    // 10.7-drain-reload (scripts/record-cases.sh).
    let _ = d.stop().await;
    drop(lab_guard);
}

#[tokio::test]
async fn drain_through_a_reload_frr_8_4() {
    drain_through_a_reload("8.4").await;
}

#[tokio::test]
async fn drain_through_a_reload_frr_10_3() {
    drain_through_a_reload("10.3").await;
}

#[tokio::test]
async fn drain_through_a_reload_frr_10_7() {
    drain_through_a_reload("10.7").await;
}

/// kube-vip's heartbeat on node1, at kube-vip's pace (1 Hz), on a thread of
/// its own until dropped: each beat is counted, so a test awaits beats
/// instead of sleeping.
struct Heartbeat {
    beats: tokio::sync::watch::Receiver<u64>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Heartbeat {
    fn start(vip: &'static str) -> Heartbeat {
        let (tx, beats) = tokio::sync::watch::channel(0u64);
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                lab(&["vip-reassert", "node1", vip]);
                tx.send_modify(|n| *n += 1);
                // kube-vip's pace, not a synchronisation.
                std::thread::sleep(Duration::from_secs(1));
            }
        });
        Heartbeat {
            beats,
            stop,
            thread: Some(thread),
        }
    }

    /// Wait for `n` more beats.
    async fn beats(&mut self, n: u64) {
        let target = *self.beats.borrow() + n;
        self.beats
            .wait_for(|&b| b >= target)
            .await
            .expect("the heartbeat thread ended (a failed lab.sh vip-reassert)");
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Drain rounds per release: 3 in the test command (a round takes 2 s on
/// 10.7, 9 s on 8.4, where the undrain waits out bgpd's route-map delay
/// and the heal of the import the drain's heartbeats dropped);
/// `RIBBRIDGE_DRAIN_ROUNDS=20` for a longer run.
fn drain_rounds() -> usize {
    std::env::var("RIBBRIDGE_DRAIN_ROUNDS")
        .ok()
        .map(|v| v.parse().expect("RIBBRIDGE_DRAIN_ROUNDS is a count"))
        .unwrap_or(3)
}

/// `ribbridge drain` then `ribbridge undrain`, round after round, beside a
/// repair-mode daemon under kube-vip's heartbeat: the daemon knows of each
/// drain before bgpd is drained (it watches the intent file, which the
/// command writes first), and takes not one heal action from then to the
/// moment it saw the undrain (the intent file removed). On 8.4 a heartbeat during the drain drops
/// zebra's import (docs/FRR-BEHAVIOUR.md), a drift the daemon must leave
/// alone until the undrain; before the daemon watched the intent file it
/// healed it in 2 of 10 rounds, ahead of its next read of bgpd's
/// configuration.
async fn drain_beside_a_heartbeat(frr: &'static str) {
    let lab_guard = Lab::up(frr, 2, &[VIP]);
    let node1 = lab_guard.sockdir("rb-node1");
    let _ = std::fs::remove_file(crate::support::drain_state(&node1));
    let mut router = RouteWatch::open("rb-router");
    let mut d = Daemon::start(&lab_guard, "rb-node1", &[]).await;
    crate::support::advertise_on_both(&mut d, &mut router, VIP).await;
    let mut heartbeat = Heartbeat::start(VIP);
    let rounds = drain_rounds();
    let endpoint = ["--endpoint", "127.0.0.1:7585", "--timeout", "30s"];
    let mut before_drain = 0;
    for round in 1..=rounds {
        // Each round starts advertised by both nodes, the last round's
        // heals (8.4's, after its undrain) done.
        router
            .wait_nexthops(vip_addr(), 32, 2, Duration::from_secs(15))
            .await
            .expect("router has both paths at the round's start");
        let (doc, _) = d.status().await;
        assert_eq!(state_of(&doc), Class::Advertised, "round {round}: {doc:?}");
        let from = d.drain().len();
        let drain = cli("drain", &node1, &endpoint).await;
        assert_ok(&drain, "drain");
        // Heartbeats while drained, each a chance for a drift.
        heartbeat.beats(2).await;
        assert_ok(&cli("undrain", &node1, &endpoint).await, "undrain");
        d.wait_log(
            "drain: the intent file changed && absent",
            Duration::from_secs(10),
        )
        .await;
        let log = d.drain()[from..].to_vec();
        let marker = |state: &'static str| {
            move |l: &String| l.contains("drain: the intent file changed") && l.contains(state)
        };
        let seen = log.iter().position(marker("drained")).unwrap_or_else(|| {
            panic!(
                "round {round}: the daemon never saw the drain:\n{}",
                log.join("\n")
            )
        });
        let undrained = log
            .iter()
            .rposition(marker("absent"))
            .expect("the line waited for");
        assert!(seen < undrained, "round {round}: {}", log.join("\n"));
        // The daemon knew of the drain before bgpd was drained: its line
        // is older than the command's "bgpd: drained configured" (one
        // clock, RFC 3339 UTC stamps of one width compare as text).
        let stderr = String::from_utf8_lossy(&drain.stderr);
        let configured = stderr
            .lines()
            .find(|l| l.contains("bgpd: drained configured"))
            .and_then(|l| l.split_whitespace().next())
            .unwrap_or_else(|| panic!("round {round}: drain logged no configuration:\n{stderr}"));
        let known = log[seen].split_whitespace().next().unwrap_or_default();
        assert!(
            known <= configured,
            "round {round}: the daemon saw the drain at {known}, after bgpd was drained at {configured}"
        );
        // The watcher logs the drain before the owner takes its event: a
        // heal the owner decided just before (8.4's heartbeat drops the
        // import) can log after the watcher's line. It must be done before
        // bgpd is drained; from the owner's `to=drained` on, none starts.
        let took = seen
            + log[seen..undrained]
                .iter()
                .position(|l| l.contains("to=drained"))
                .unwrap_or_else(|| {
                    panic!(
                        "round {round}: the owner did not drain the VIP before the undrain:\n{}",
                        log.join("\n")
                    )
                });
        for done in log[seen..took]
            .iter()
            .filter(|l| l.contains("heal action done"))
        {
            let at = done.split_whitespace().next().unwrap_or_default();
            assert!(
                at <= configured,
                "round {round}: a heal done at {at}, after bgpd was drained at {configured}:\n{}",
                log.join("\n")
            );
        }
        let heals: Vec<&String> = log[took..undrained]
            .iter()
            .filter(|l| l.contains("healing"))
            .collect();
        assert!(
            heals.is_empty(),
            "round {round}: heal actions while drained:\n{}",
            log.join("\n")
        );
        before_drain += log[..seen].iter().filter(|l| l.contains("healing")).count();
    }
    let all = d.drain().iter().filter(|l| l.contains("healing")).count();
    eprintln!(
        "drain {frr}: {rounds} rounds under a 1 Hz heartbeat: 0 heal actions while drained; \
         {all} in all ({before_drain} in the rounds before the daemon saw the drain: 8.4's \
         heartbeat heals)"
    );
    drop(heartbeat);
    drop(lab_guard);
}

#[tokio::test]
async fn drain_beside_a_heartbeat_frr_8_4() {
    drain_beside_a_heartbeat("8.4").await;
}

#[tokio::test]
async fn drain_beside_a_heartbeat_frr_10_7() {
    drain_beside_a_heartbeat("10.7").await;
}

/// `ribbridge drain` on a host as it is: no unit or pod made the intent's
/// directory. On a tmpfs (`/dev/shm` here, `/run` on a host) the command
/// makes it and records the drain, and the daemon, which watched the
/// directory's parent, knows of the drain from that moment; where the
/// directory is not made (not a tmpfs: an intent there would outlive a
/// reboot) the node is drained anyway and the command says plainly that
/// the drain is not recorded.
async fn drain_on_a_host_as_it_is(frr: &'static str) {
    let lab_guard = Lab::up(frr, 2, &[VIP]);
    let node1 = lab_guard.sockdir("rb-node1");
    let shm = tempfile::tempdir_in("/dev/shm").expect("a directory on /dev/shm");
    let dir = shm.path().join("ribbridge");
    let state = dir.join("drain");
    let rdir = tempfile::tempdir().expect("tempdir").keep();
    let record = rdir.join("events.jsonl");
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "exec", "rb-node1"])
        .arg(env!("CARGO_BIN_EXE_ribbridge"))
        .args(["run", "--frr-dir"])
        .arg(&node1)
        .args(["--listen", "127.0.0.1:7585", "--record"])
        .arg(&record)
        .arg("--drain-state")
        .arg(&state)
        // The lab's defaults (support::daemon::lab_defaults): bare routes, repair.
        .args(crate::support::daemon::lab_defaults(&[]))
        .env("RUST_LOG", "info");
    let mut d = Daemon::spawn_command("rb-node1", cmd, record, 7585, &[]);
    d.wait_log("zebra: subscribed", Duration::from_secs(15))
        .await;
    let mut router = RouteWatch::open("rb-router");
    crate::support::advertise_on_both(&mut d, &mut router, VIP).await;
    assert!(!dir.exists());

    let endpoint = ["--endpoint", "127.0.0.1:7585"];
    let out = cli_at("drain", &node1, &state, &endpoint).await;
    assert_ok(&out, "drain, the directory missing on a tmpfs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("its directory made, mode 0755"), "{stdout}");
    let mode = std::fs::metadata(&dir).expect("made").permissions();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
        0o755
    );
    assert!(
        ribbridge::drain::DrainState::read(&state)
            .expect("readable")
            .is_some()
    );
    // Well before the daemon's 10 s retry: through the parent's watch.
    d.wait_log(
        "drain: the intent file changed && drained",
        Duration::from_secs(5),
    )
    .await;
    assert_ok(
        &cli_at("undrain", &node1, &state, &endpoint).await,
        "undrain",
    );
    assert!(!state.exists());

    // Not a tmpfs: the directory is not made, the node is drained anyway.
    let disk = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let fs = nix::sys::statfs::statfs(disk.path()).expect("statfs");
    assert_ne!(
        fs.filesystem_type(),
        nix::sys::statfs::TMPFS_MAGIC,
        "the test needs {} on a disk, not a tmpfs",
        disk.path().display()
    );
    let unmade = disk.path().join("ribbridge/drain");
    let out = cli_at("drain", &node1, &unmade, &endpoint).await;
    assert_ok(&out, "drain, the directory missing on a disk");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(stdout.contains("drained (configured now)"), "{stdout}");
    assert!(stdout.contains("intent NOT recorded"), "{stdout}");
    assert!(
        stderr.contains("the node is drained, but the drain is not recorded")
            && stderr.contains("is not a tmpfs")
            && stderr.contains("undoes this drain"),
        "{stderr}"
    );
    assert!(!unmade.parent().expect("dir").exists());
    router
        .wait_nexthops(vip_addr(), 32, 1, Duration::from_secs(1))
        .await
        .expect("drained: the router has node2's path only");
    assert_ok(
        &cli_at("undrain", &node1, &unmade, &endpoint).await,
        "undrain",
    );
    router
        .wait_nexthops(vip_addr(), 32, 2, Duration::from_secs(15))
        .await
        .expect("undrained: both paths");
    drop(lab_guard);
}

#[tokio::test]
async fn drain_on_a_host_as_it_is_frr_10_7() {
    drain_on_a_host_as_it_is("10.7").await;
}
