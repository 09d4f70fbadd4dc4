//! The status contract, against a daemon that cannot see FRR: what it
//! cannot see is `unknown` (never `withdrawn` or `no`), `ribbridge status`
//! exits 2, every configured VIP has its metric series from the first
//! scrape, and a missing FRR directory is said once with what to check,
//! then counted, not logged at every retry.
//!
//! No lab: a bare namespace of its own (so its port and table 198 are
//! private), the real kernel, no FRR at all.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use ribbridge::http::client::{self, Address};

use super::support::require_root;

const VIP: &str = "192.0.2.10/32";
const LISTEN: &str = "127.0.0.1:7585";
const LIMIT: Duration = Duration::from_secs(20);

struct Ns(String);

impl Ns {
    fn new() -> Ns {
        let name = format!("rb-blind-{}", std::process::id());
        let ip = |args: &[&str]| {
            let ok = Command::new("ip").args(args).status().expect("run ip");
            assert!(ok.success(), "ip {args:?}");
        };
        ip(&["netns", "add", &name]);
        ip(&["-n", &name, "link", "set", "lo", "up"]);
        Ns(name)
    }
}

impl Drop for Ns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

fn exec(ns: &Ns, args: &[&str]) -> Command {
    let mut c = Command::new("ip");
    c.args(["netns", "exec", &ns.0, env!("CARGO_BIN_EXE_ribbridge")])
        .args(args);
    c
}

/// GET a path from the daemon inside the namespace (the client runs in a
/// thread that entered it).
async fn get(ns: &Ns, path: &'static str) -> String {
    let name = ns.0.clone();
    super::support::in_netns(&name, move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let addr: Address = LISTEN.parse().expect("address");
        let body = rt
            .block_on(client::get_ok(&addr, path, Duration::from_secs(5)))
            .expect("the daemon answers");
        String::from_utf8_lossy(&body).into_owned()
    })
}

fn counter(metrics: &str, name: &str) -> f64 {
    metrics
        .lines()
        .find(|l| l.starts_with(name))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_contract_a_daemon_without_frr_is_unknown_and_exits_2() {
    require_root();
    let ns = Ns::new();
    let mut daemon: Child = exec(
        &ns,
        &[
            "run",
            "--frr-dir",
            "/nonexistent/ribbridge-test/frr",
            "--vip",
            VIP,
            "--listen",
            LISTEN,
            "--mode",
            "observe",
        ],
    )
    .stderr(Stdio::piped())
    .stdout(Stdio::null())
    .spawn()
    .expect("start ribbridge run");
    // Its log, line by line, on a thread: the start line means the
    // listener is bound.
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let stderr = daemon.stderr.take().expect("stderr");
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut log = Vec::new();
    tokio::time::timeout(LIMIT, async {
        while let Some(l) = rx.recv().await {
            let start = l.contains("ribbridge starting");
            log.push(l);
            if start {
                return;
            }
        }
        panic!("ribbridge exited before starting: {log:#?}");
    })
    .await
    .expect("ribbridge starts");

    // The first scrape already has the configured VIP's series.
    let first = get(&ns, "/metrics").await;
    let unknown =
        format!("ribbridge_vip_state{{prefix=\"{VIP}\",table=\"198\",state=\"unknown\"}} 1");
    assert!(first.contains(&unknown), "first scrape:\n{first}");
    // Its ECMP legs: known (a value) or not yet (no value, its `_known`
    // at 0), never a guess.
    let ecmp = format!("ribbridge_ecmp_nexthops_known{{prefix=\"{VIP}\",table=\"198\"}} ");
    assert!(first.contains(&ecmp), "first scrape:\n{first}");
    assert!(!first.contains("NaN"), "first scrape:\n{first}");

    // `status` says unknown and exits 2, never "withdrawn" with 0.
    let out = exec(&ns, &["status", "--endpoint", LISTEN])
        .output()
        .expect("ribbridge status");
    let table = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{table}\n{err}");
    assert!(
        table.contains("NOT READY") && table.contains("unknown"),
        "{table}"
    );
    assert!(!table.contains("withdrawn"), "{table}");
    assert!(err.contains("not ready"), "{err}");
    let json = get(&ns, "/status").await;
    assert!(json.contains("\"state\":\"unknown\""), "{json}");

    // Let it retry a few times (the counter says when), then stop it and
    // read what it logged: the missing directory once, no retry spam.
    tokio::time::timeout(LIMIT, async {
        loop {
            let m = get(&ns, "/metrics").await;
            if counter(&m, "ribbridge_zapi_disconnects_total") >= 4.0 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await
    .expect("the ZAPI retries are counted");
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(daemon.id()).expect("pid")),
        nix::sys::signal::Signal::SIGTERM,
    );
    let _ = daemon.wait();
    while let Some(l) = rx.recv().await {
        log.push(l);
    }
    let missing = log
        .iter()
        .filter(|l| l.contains("FRR's socket directory does not exist"))
        .count();
    let retries = log
        .iter()
        .filter(|l| l.contains("zebra: disconnected"))
        .count();
    assert_eq!((missing, retries), (1, 0), "{log:#?}");
    assert!(
        log.iter()
            .any(|l| l.contains("/nonexistent/ribbridge-test/frr") && l.contains("hostPath")),
        "{log:#?}"
    );
}
