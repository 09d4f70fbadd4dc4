//! `ribbridge cluster` against a real Prometheus (Debian's, as alerts.rs
//! runs it) beside the lab: FRR 10.7 in the frr-k8s profile with graceful
//! restart, both nodes' ribbridge listening on their lab addresses, a BMP
//! station beside the router, Prometheus in `rb-router` scraping all three
//! every second with the shipped rules loaded and a `node` label per node
//! target (the lab node's name). The command runs in `rb-router` as an
//! SRE would run it against the cluster's Prometheus.
//!
//! One lab, in order: both nodes advertise (exit 0, the router's 2 paths
//! beside 2 nodes advertising, the count equal to the recording rule's);
//! node1's backend down (`blackhole`, exit 1, its row says the health
//! probe fails), seen by a `--watch` as lines in order, and back; node1
//! drained (its row `drained`, exit 0: the router agrees) and undrained;
//! node2's ribbridge stopped (its row `not scraped`, exit 2) and started;
//! node1 powered off under graceful restart (not scraped, the router
//! keeping its path as stale: the disagreement named). Every wait polls
//! the command itself until its answer holds (Prometheus scrapes on its
//! own clock), bounded; no assertion is on a duration.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::AsyncBufReadExt as _;
use tokio::process::Command;

use crate::alerts::{N1, N2, Prometheus, bmp_station, ribbridge, shipped_rules_with_short_for};
use crate::support::{Lab, RouteWatch, host_exec, lab};

const VIP: &str = "192.0.2.10/32";
const PROM: &str = "127.0.0.1:9090";
/// The BMP station's endpoint and the port the router exports to.
const ST: &str = "127.0.0.1:7587";
const BMP: &str = "127.0.0.1:11022";
/// How long Prometheus may take to reflect a change (scrapes, the
/// station's sync, a hold timer), at most: a hang guard, not a figure.
const LIMIT: Duration = Duration::from_secs(90);
/// Prometheus scrapes every second; the command is told two, so that a
/// scrape delayed by the loaded machine is not taken for a stale node.
const SCRAPE: &str = "2s";

/// The scrape configuration: the nodes' job with a `node` label per
/// target, as every shipped scrape configuration sets it, and the station.
fn config() -> String {
    format!(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n\
         rule_files: [rules.yaml]\n\
         scrape_configs:\n\
         - job_name: ribbridge-monitor\n  static_configs:\n\
         \x20 - {{targets: ['{N1}'], labels: {{node: node1}}}}\n\
         \x20 - {{targets: ['{N2}'], labels: {{node: node2}}}}\n\
         - job_name: ribbridge-bmp\n  static_configs: [{{targets: ['{ST}']}}]\n"
    )
}

/// `ribbridge cluster ARGS` in `rb-router`: exit code and standard output.
async fn cluster(args: &[&str]) -> (i32, String) {
    let out = Command::new("ip")
        .args(["netns", "exec", "rb-router"])
        .arg(env!("CARGO_BIN_EXE_ribbridge"))
        .args(["cluster", "--prometheus"])
        .arg(format!("http://{PROM}"))
        .args(["--scrape-interval", SCRAPE, "--vip", VIP])
        .args(args)
        .output()
        .await
        .expect("run ribbridge cluster");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("panicked"),
        "ribbridge cluster panicked: {stderr}"
    );
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// The VIP's picture (`--json`) and the exit code, polled until `ok`
/// holds; then the table, printed for the log, and its exit code (the
/// same as the JSON's).
async fn await_cluster(what: &str, ok: impl Fn(&Value, i32) -> bool) -> (Value, i32, String) {
    let start = Instant::now();
    loop {
        let (code, out) = cluster(&["--json"]).await;
        let doc: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
        if ok(&doc, code) {
            let (tcode, table) = cluster(&[]).await;
            eprintln!("{what}: after {:?}, exit {code}:\n{table}", start.elapsed());
            return (doc, tcode, table);
        }
        assert!(
            start.elapsed() < LIMIT,
            "{what}: not within {LIMIT:?}; last exit {code}:\n{out}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// With RIBBRIDGE_RECORD_CLUSTER=DIR: every query's answer, as
/// Prometheus wrote it, into DIR/NAME.json under its query's name: the
/// recorded answers the join's unit tests read (tests/data/cluster/).
fn record(prom: &Prometheus, name: &str) {
    let Some(dir) = std::env::var_os("RIBBRIDGE_RECORD_CLUSTER") else {
        return;
    };
    let scope = ribbridge::cluster::Scope {
        job: "ribbridge-monitor".into(),
        router_job: "ribbridge-router".into(),
        bmp_job: "ribbridge-bmp".into(),
        scrape_interval: Duration::from_secs(2),
        vips: vec![VIP.into()],
    };
    let mut all = serde_json::Map::new();
    for q in ribbridge::cluster::join::queries(&scope) {
        let path = format!(
            "/api/v1/query?query={}",
            ribbridge::cluster::query::encode(&q.promql)
        );
        let (_, body) = prom.get(&path).expect("prometheus answers");
        let answer: Value = serde_json::from_str(&body).expect("JSON");
        all.insert(q.q.name().to_string(), answer);
    }
    let file = std::path::Path::new(&dir).join(format!("{name}.json"));
    let text = serde_json::to_string_pretty(&Value::Object(all)).expect("JSON");
    std::fs::write(&file, text + "\n").expect("write the recording");
    eprintln!("recorded {}", file.display());
}

/// The VIP's block of a picture.
fn vip(doc: &Value) -> &Value {
    &doc["vips"][0]
}

/// A node's row.
fn row<'a>(doc: &'a Value, node: &str) -> &'a Value {
    vip(doc)["nodes"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["node"] == node))
        .unwrap_or(&Value::Null)
}

fn state(doc: &Value, node: &str) -> String {
    row(doc, node)["state"].as_str().unwrap_or("-").to_string()
}

/// Both rows in `want`, the router's paths `paths`, `advertising` nodes.
fn picture_is(doc: &Value, want: [&str; 2], paths: f64, advertising: u64) -> bool {
    state(doc, "node1") == want[0]
        && state(doc, "node2") == want[1]
        && vip(doc)["advertising"] == advertising
        && vip(doc)["routers"][0]["paths"].as_f64() == Some(paths)
}

/// The table's line of `node` (its row under the VIP).
fn line_of<'a>(table: &'a str, node: &str) -> &'a str {
    table
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{node} ")))
        .unwrap_or_else(|| panic!("no row {node} in:\n{table}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_answers_from_a_real_prometheus_frr_10_7() {
    let t0 = Instant::now();
    let lab_guard = Lab::up_with(
        "10.7",
        2,
        &[VIP],
        &["--bmp", BMP, "--profile", "frr-k8s", "--graceful-restart"],
    );
    // Lab::up waits for the machine-wide lab lock first: the time from
    // here on is the suite's own cost.
    let t_lab = Instant::now();
    let mut router = RouteWatch::open("rb-router");
    // node1's backend probed (the OpenShift router's health endpoint).
    lab(&["backend", "node1", "up"]);
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("ribbridge.toml");
    std::fs::write(
        &file,
        format!("[[vip]]\nprefix = \"{VIP}\"\nhealth = \"http://127.0.0.1:1936/healthz\"\n"),
    )
    .expect("config file");
    let file = file.display().to_string();
    let n1 = ribbridge(
        &lab_guard,
        "rb-node1",
        N1,
        &["--config", &file],
        "zebra: subscribed",
    )
    .await;
    let n2 = ribbridge(&lab_guard, "rb-node2", N2, &[], "zebra: subscribed").await;
    let station = bmp_station(&lab_guard, ST, BMP).await;
    let prom = Prometheus::start(
        "rb-router",
        PROM,
        &config(),
        &shipped_rules_with_short_for(),
    );
    crate::support::vip_on_both(&mut router, VIP).await;

    // Prometheus not answering yet, or answering before its first scrape:
    // never 0.
    let (code, _) = cluster(&[]).await;
    assert_ne!(code, 0, "a Prometheus without data is never fine");

    // 1. Both advertise; the station's router holds both paths.
    let (doc, code, table) = await_cluster("both advertise", |d, c| {
        c == 0 && picture_is(d, ["advertised", "advertised"], 2.0, 2)
    })
    .await;
    assert_eq!(code, 0, "{table}");
    assert_eq!(doc["named_by"], "node", "rows named by the node label");
    assert!(line_of(&table, "node1").contains("advertised"), "{table}");
    // The rule is evaluated on its own clock, after the scrape: awaited.
    let rule = format!("prefix:ribbridge_vip_nodes_advertising:sum{{prefix=\"{VIP}\"}}");
    let advertising = vip(&doc)["advertising"].as_f64();
    prom.wait("the recording rule counts as the command", LIMIT, |p| {
        (p.scalar(&rule) == advertising).then_some(())
    })
    .await;

    // --explain's queries are what Prometheus takes, pasted as printed.
    let out = Command::new(env!("CARGO_BIN_EXE_ribbridge"))
        .args(["cluster", "--explain", "--vip", VIP])
        .output()
        .await
        .expect("ribbridge cluster --explain");
    let text = String::from_utf8_lossy(&out.stdout);
    let promql: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert!(promql.len() >= 10, "{text}");
    for q in promql {
        let path = format!(
            "/api/v1/query?query={}",
            ribbridge::cluster::query::encode(q)
        );
        let (status, body) = prom.get(&path).expect("prometheus answers");
        assert!(
            status == 200 && body.contains("\"success\""),
            "{q}: {status} {body}"
        );
    }

    // 2. node1's backend down: blackhole, exit 1, its row says why; a
    // watch started before sees it go and come back, in that order.
    let mut watch = Command::new("ip")
        .args(["netns", "exec", "rb-router"])
        .arg(env!("CARGO_BIN_EXE_ribbridge"))
        .args(["cluster", "--prometheus"])
        .arg(format!("http://{PROM}"))
        .args(["--scrape-interval", SCRAPE, "--vip", VIP, "--watch"])
        .args(["--interval", "500ms"])
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("ribbridge cluster --watch");
    let mut lines = tokio::io::BufReader::new(watch.stdout.take().expect("stdout")).lines();
    let mut seen = Vec::new();
    let mut await_line = async |needle: &str| {
        let start = Instant::now();
        while !seen.iter().any(|l: &String| l.contains(needle)) {
            let next = tokio::time::timeout(LIMIT, lines.next_line())
                .await
                .unwrap_or_else(|_| panic!("watch: no '{needle}' within {LIMIT:?}: {seen:#?}"))
                .expect("watch output")
                .unwrap_or_else(|| panic!("watch ended before '{needle}': {seen:#?}"));
            seen.push(next);
        }
        eprintln!("watch: '{needle}' after {:?}", start.elapsed());
        seen.iter().position(|l| l.contains(needle)).unwrap_or(0)
    };
    // The first picture, whole.
    await_line("VIP 192.0.2.10/32").await;
    lab(&["backend", "node1", "down"]);
    let (doc, code, table) = await_cluster("node1's backend down", |d, c| {
        c == 1 && state(d, "node1") == "blackhole"
    })
    .await;
    assert_eq!(code, 1, "{table}");
    assert_eq!(row(&doc, "node1")["backend"], "down");
    let l1 = line_of(&table, "node1");
    assert!(
        l1.contains("blackhole") && l1.contains("health probe fails"),
        "{table}"
    );
    assert_eq!(state(&doc, "node2"), "advertised");
    lab(&["backend", "node1", "up"]);
    await_cluster("node1's backend up", |d, c| {
        c == 0 && picture_is(d, ["advertised", "advertised"], 2.0, 2)
    })
    .await;
    let down = await_line("node1: advertised -> blackhole").await;
    let up = await_line("node1: blackhole -> advertised").await;
    assert!(down < up, "the watch reads in order: {seen:#?}");
    assert!(
        seen[down].starts_with("20") && seen[down].contains('T'),
        "a change line starts with its time: {}",
        seen[down]
    );
    drop(lines);
    let _ = watch.kill().await;

    // 3. node1 drained: consistent, the router holds node2's path alone.
    let sockdir = lab_guard.sockdir("rb-node1");
    let endpoint = ["--endpoint", N1];
    let out = crate::drain::cli("drain", &sockdir, &endpoint).await;
    assert!(out.status.success(), "ribbridge drain");
    let (doc, code, table) = await_cluster("node1 drained", |d, c| {
        picture_is(d, ["drained", "advertised"], 1.0, 1) && c == 0
    })
    .await;
    assert_eq!(code, 0, "{table}");
    assert_eq!(row(&doc, "node1")["drained"], true);
    let out = crate::drain::cli("undrain", &sockdir, &endpoint).await;
    assert!(out.status.success(), "ribbridge undrain");
    await_cluster("node1 undrained", |d, c| {
        c == 0 && picture_is(d, ["advertised", "advertised"], 2.0, 2)
    })
    .await;

    // 4. node2's ribbridge stopped: its row says not scraped; never 0.
    n2.stop().await;
    let (doc, code, table) = await_cluster("node2's ribbridge stopped", |d, _| {
        row(d, "node2")["scrape"] == "down"
    })
    .await;
    assert_eq!(code, 2, "cannot tell for node2: {table}");
    assert!(line_of(&table, "node2").contains("not scraped"), "{table}");
    assert_eq!(row(&doc, "node2")["state"], Value::Null, "no state shown");
    let _n2 = ribbridge(&lab_guard, "rb-node2", N2, &[], "zebra: subscribed").await;
    await_cluster("node2's ribbridge back", |d, c| {
        c == 0 && picture_is(d, ["advertised", "advertised"], 2.0, 2)
    })
    .await;

    // 5. node1 powered off under graceful restart: the router keeps its
    // path as stale and forwards to it; the command names it.
    host_exec(
        "rb-node1",
        "iptables -I INPUT -j DROP && iptables -I OUTPUT -j DROP",
    );
    lab(&["kill", "rb-node1", "bgpd"]);
    n1.kill9().await;
    let (doc, code, table) = await_cluster("node1 powered off", |d, _| {
        row(d, "node1")["scrape"] == "down"
            && vip(d)["routers"][0]["stale_paths"].as_f64() == Some(1.0)
    })
    .await;
    assert_ne!(code, 0, "{table}");
    record(&prom, "gr-power-off");
    let problems: Vec<&str> = vip(&doc)["problems"]
        .as_array()
        .expect("problems")
        .iter()
        .filter(|p| p["kind"] == "disagreement")
        .filter_map(|p| p["what"].as_str())
        .collect();
    assert!(
        problems.iter().any(|p| p.contains("stale path")),
        "the stale path named: {problems:?}"
    );
    assert!(table.contains("stale path"), "{table}");
    assert_eq!(
        router
            .nexthops("192.0.2.10".parse().expect("addr"), 32)
            .await,
        2,
        "the router still forwards to node1: the disagreement is real"
    );
    host_exec(
        "rb-node1",
        "iptables -D INPUT -j DROP && iptables -D OUTPUT -j DROP",
    );
    prom.stop().await;
    station.stop().await;
    drop(lab_guard);
    eprintln!(
        "cluster test: {:?} in all, {:?} of it with the lab up (the rest: the lab's lock and start)",
        t0.elapsed(),
        t_lab.elapsed()
    );
}
