//! A log reader that stops reading: the daemon's stderr is a pipe
//! the test holds open and does not read, as a container runtime's shim or
//! journald does when it stalls. Under a burst of VIP changes the daemon
//! must go on: `/healthz` and `/status` answer throughout, the state follows
//! the kernel, the lines that did not fit are dropped and counted
//! (`ribbridge_log_lines_dropped_total`), and once the reader reads again the
//! stall is reported, once. Before `logging`'s non-blocking writer the owner
//! loop blocked in a log write: `/status` went unanswered and `/healthz` 503.

use std::time::{Duration, Instant};

use tokio::process::Command;

use crate::support::daemon::Daemon;
use crate::support::{Lab, env_count, lab};

/// Routes per burst: 1 500, the burst under which the owner loop blocked
/// in a log write before the non-blocking writer.
const BURST: usize = 1_500;
/// How long a probe may take before it counts as unanswered (a liveness
/// probe's timeout), and how long the state may take to follow the kernel.
const PROBE_LIMIT: Duration = Duration::from_secs(5);
const FOLLOW_LIMIT: Duration = Duration::from_secs(90);

/// `ip -batch` text adding (`add`) or deleting (`del`) the burst's routes.
fn batch(verb: &str) -> String {
    (0..BURST)
        .map(|i| {
            format!(
                "route {verb} 10.77.{}.{}/32 dev lo table 198 proto 248\n",
                i / 250,
                i % 250 + 1
            )
        })
        .collect()
}

/// One HTTP GET to the daemon inside its namespace: the status line, or why
/// there is none (no answer within [`PROBE_LIMIT`]).
async fn get(ns: &str, port: u16, path: &str) -> Result<String, String> {
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "exec", ns, "bash", "-c"])
        .arg(format!(
            "exec 3<>/dev/tcp/127.0.0.1/{port}; printf 'GET {path} HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n' >&3; cat <&3"
        ))
        .kill_on_drop(true);
    match tokio::time::timeout(PROBE_LIMIT, cmd.output()).await {
        Err(_) => Err(format!("{path}: no answer within {PROBE_LIMIT:?}")),
        Ok(Err(e)) => Err(format!("{path}: {e}")),
        Ok(Ok(out)) => {
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            Ok(text.lines().next().unwrap_or("").to_string())
        }
    }
}

/// VIPs of the burst `/status` says the kernel holds.
async fn held(d: &Daemon) -> usize {
    let (doc, _) = d.status().await;
    doc.vips
        .iter()
        .filter(|v| v.prefix.to_string().starts_with("10.77.") && v.kernel == Some(true))
        .count()
}

/// Probes `/healthz` and `/status` until told to stop; the failures.
async fn probe(
    ns: &'static str,
    port: u16,
    stop: tokio::sync::watch::Receiver<bool>,
) -> (u32, Vec<String>) {
    let mut bad = Vec::new();
    let mut n = 0;
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    while !*stop.borrow() {
        tick.tick().await;
        n += 1;
        for path in ["/healthz", "/status"] {
            match get(ns, port, path).await {
                Ok(line) if line.contains(" 200 ") => {}
                Ok(line) => bad.push(format!("{path}: {line:?}")),
                Err(e) => bad.push(e),
            }
        }
    }
    (n, bad)
}

/// The drop counter from `/metrics` (0 before it is first set).
async fn dropped(d: &Daemon) -> u64 {
    let m = d.metrics().await;
    m.lines()
        .find_map(|l| l.strip_prefix("ribbridge_log_lines_dropped_total "))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map_or(0, |v| v as u64)
}

/// Wait until `held` is `want`, polling `/status` (the state is what is
/// measured: no log line can be awaited while the log is stalled).
async fn follow(d: &Daemon, want: usize, what: &str) -> Duration {
    let t = Instant::now();
    loop {
        let n = held(d).await;
        if n == want {
            return t.elapsed();
        }
        assert!(
            t.elapsed() < FOLLOW_LIMIT,
            "{what}: /status says the kernel holds {n} of the burst's routes after {FOLLOW_LIMIT:?}, want {want}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

#[tokio::test]
async fn a_stalled_log_reader_never_stops_the_daemon_frr_10_7() {
    let _lab = Lab::up("10.7", 2, &[]);
    let rounds = env_count("RIBBRIDGE_LOG_STALL_ROUNDS", 2);
    let frr_dir = _lab.sockdir("rb-node1");
    // Every route of the burst listed in /status (the detail limit's default,
    // 1 024, would count the rest by state only), so that the test reads
    // each route's kernel view.
    let detail = (BURST + 1).to_string();
    let mut d = Daemon::spawn(
        "rb-node1",
        &frr_dir,
        &["--mode", "observe", "--max-detailed-vips", &detail],
    );
    d.wait_log("zebra: subscribed", Duration::from_secs(15))
        .await;
    d.pause_log();
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let prober = tokio::spawn(probe(d.ns, d.port, stop_rx));
    let mut took = Vec::new();
    for round in 0..rounds {
        for (verb, want) in [("add", BURST), ("del", 0)] {
            let t = Instant::now();
            lab(&[
                "exec",
                "rb-node1",
                "sh",
                "-c",
                &format!("printf '{}' | ip -batch -", batch(verb)),
            ]);
            follow(&d, want, &format!("round {round} {verb}")).await;
            took.push(t.elapsed());
        }
    }
    // The counter is exported every second: wait for it to move.
    let t = Instant::now();
    let mut drops = dropped(&d).await;
    while drops == 0 && t.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(500)).await;
        drops = dropped(&d).await;
    }
    stop_tx.send(true).expect("prober");
    let (probes, bad) = prober.await.expect("prober");
    eprintln!(
        "log stall: {rounds} rounds of {BURST} routes added and deleted, followed in {took:?}; \
         {probes} rounds of /healthz and /status probes, {} failed; {drops} log lines dropped",
        bad.len()
    );
    assert!(
        bad.is_empty(),
        "probes failed while the log was stalled: {bad:?}"
    );
    assert!(
        drops > 0,
        "the burst filled the stalled pipe, yet no line was counted as dropped"
    );
    d.resume_log();
    let report = d
        .wait_log("the log's reader stopped reading", Duration::from_secs(30))
        .await;
    eprintln!("the stall's report: {report}");
    let (_, _, log) = d.stop().await;
    let reports = log
        .iter()
        .filter(|l| l.contains("the log's reader stopped reading"))
        .count();
    assert_eq!(reports, 1, "one stall, one report: {reports}");
}
