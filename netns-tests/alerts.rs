//! The shipped Prometheus rules and dashboard against a real Prometheus
//! (Debian's `prometheus` binary) in the lab: FRR 10.7, two nodes, each
//! node's ribbridge listening on the node's lab address (not loopback), a
//! router-vantage ribbridge on the router, and Prometheus in `rb-router`
//! scraping all three every second with its own data directory and bounded
//! retention. It loads a copy of `deploy/prometheus/ribbridge-rules.yaml`
//! whose `for:` durations are divided by 30 (a 30 s scrape becomes 1 s),
//! made here by code from the shipped file, so what is tested is what
//! ships.
//!
//! One lab, in order: the "nodes advertising" recording rule equals the
//! router's kernel ECMP width through withdraw and re-add; a 10.7 drift in
//! observe mode makes RibbridgeVIPNotSentToRouter reach `firing`, and after
//! a repair-mode heal it resolves; every dashboard expression of the nodes,
//! the router vantage and node2's backend probe (its health endpoint
//! refused, then up) returns data (those of a BMP station in the
//! graceful-restart lab below);
//! stopping a node's ribbridge fires RibbridgeDown for it and no VIP alert.
//! Every wait on Prometheus is a bounded poll of its API (an external
//! state); the lab's own changes are waited on as kernel events and log
//! lines.

use std::net::IpAddr;
use std::process::Stdio;
use std::time::{Duration, Instant};

use ribbridge::http::client::{self, Address};
use serde_json::Value;
use tokio::process::{Child, Command};

use crate::support::daemon::Daemon;
use crate::support::{Lab, ROUTE_THEN_ADDRESS, RouteWatch, UNDO, host_exec, in_netns, lab, repo};

const VIP: &str = "192.0.2.10/32";
/// node2's backend: the lab's OpenShift router health endpoint (`lab.sh backend`).
const HEALTH: &str = "http://127.0.0.1:1936/healthz";
const NODE_JOB: &str = "ribbridge-monitor";
const ROUTER_JOB: &str = "ribbridge-router";
/// The ServiceMonitor scrapes every 30 s; this Prometheus every second:
/// the rules' `for:` durations shrink by the same factor.
const SCALE: u64 = 30;
/// Undo the drift's setup on node1.
/// How long Prometheus may take to reflect a change (a scrape, a rule
/// evaluation, a scaled `for:`), at most.
const PROM_LIMIT: Duration = Duration::from_secs(30);

fn vip_addr() -> IpAddr {
    "192.0.2.10".parse().expect("addr")
}

/// A Go duration of the rules file (`1m`, `2m`, `1h`, `90s`) in seconds.
fn duration_secs(d: &str) -> u64 {
    let mut total = 0;
    let mut num = String::new();
    for c in d.chars() {
        if c.is_ascii_digit() {
            num.push(c);
            continue;
        }
        let n: u64 = num.parse().unwrap_or_else(|_| panic!("bad duration {d:?}"));
        num.clear();
        total += n * match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            _ => panic!("bad duration unit in {d:?}"),
        };
    }
    assert!(num.is_empty(), "bad duration {d:?}");
    total
}

/// The shipped rules with every `for:` divided by [`SCALE`] (at least
/// 1 s); nothing else changes. Returns the text and how many were changed.
fn rules_with_short_for(shipped: &str) -> (String, usize) {
    let mut changed = 0;
    let mut out = String::new();
    for line in shipped.lines() {
        let body = line.trim_start();
        match body.strip_prefix("for: ") {
            Some(d) => {
                let indent = &line[..line.len() - body.len()];
                let secs = (duration_secs(d.trim()) / SCALE).max(1);
                out.push_str(&format!("{indent}for: {secs}s\n"));
                changed += 1;
            }
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    (out, changed)
}

#[test]
fn short_for_copy_changes_only_the_for_lines() {
    let shipped = std::fs::read_to_string(repo().join("deploy/prometheus/ribbridge-rules.yaml"))
        .expect("rules file");
    let (short, n) = rules_with_short_for(&shipped);
    let alerts = shipped.matches("- alert: ").count();
    assert!(
        (10..=alerts).contains(&n),
        "{n} for: lines of {alerts} alerts"
    );
    let differ: Vec<_> = shipped
        .lines()
        .zip(short.lines())
        .filter(|(a, b)| a != b)
        .collect();
    assert_eq!(differ.len(), n);
    assert!(
        differ
            .iter()
            .all(|(a, _)| a.trim_start().starts_with("for: "))
    );
    assert!(short.contains("for: 4s"), "2m -> 4s");
    assert_eq!(duration_secs("1h"), 3600);
}

/// Percent-encode a query parameter.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Prometheus in a namespace, with its own data directory.
pub(crate) struct Prometheus {
    ns: &'static str,
    listen: &'static str,
    child: Child,
    dir: tempfile::TempDir,
}

impl Prometheus {
    pub(crate) fn start(
        ns: &'static str,
        listen: &'static str,
        config: &str,
        rules: &str,
    ) -> Prometheus {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("prometheus.yml"), config).expect("config");
        std::fs::write(dir.path().join("rules.yaml"), rules).expect("rules");
        let log = std::fs::File::create(dir.path().join("prometheus.log")).expect("log");
        let child = Command::new("ip")
            .args(["netns", "exec", ns, "prometheus"])
            .arg(format!(
                "--config.file={}",
                dir.path().join("prometheus.yml").display()
            ))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .args([
                "--storage.tsdb.retention.time=1h",
                "--storage.tsdb.retention.size=256MB",
                &format!("--web.listen-address={listen}"),
                "--log.level=warn",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot start prometheus ({e}): scripts/install-deps.sh installs it")
            });
        Prometheus {
            ns,
            listen,
            child,
            dir,
        }
    }

    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("prometheus.log")).unwrap_or_default()
    }

    /// GET `path` from Prometheus inside its namespace: (status, body).
    pub(crate) fn get(&self, path: &str) -> Option<(u16, String)> {
        let addr: Address = self.listen.parse().expect("address");
        let path = path.to_string();
        in_netns(self.ns, move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(client::get(&addr, &path, Duration::from_secs(5)))
                .ok()
                .map(|r| {
                    (
                        r.status.as_u16(),
                        String::from_utf8_lossy(&r.body).into_owned(),
                    )
                })
        })
    }

    fn api(&self, path: &str) -> Value {
        let (status, body) = self
            .get(path)
            .unwrap_or_else(|| panic!("prometheus does not answer {path}; log:\n{}", self.log()));
        let v: Value = serde_json::from_str(&body)
            .unwrap_or_else(|e| panic!("{path}: not JSON ({e}): {body}"));
        assert_eq!(
            (status, v["status"].as_str()),
            (200, Some("success")),
            "{path}: {body}"
        );
        v["data"].clone()
    }

    /// An instant query's result vector.
    fn query(&self, q: &str) -> Vec<Value> {
        let data = self.api(&format!("/api/v1/query?query={}", encode(q)));
        data["result"].as_array().cloned().unwrap_or_default()
    }

    /// The value of a query that returns one sample (None: no sample).
    pub(crate) fn scalar(&self, q: &str) -> Option<f64> {
        let r = self.query(q);
        assert!(r.len() <= 1, "{q}: more than one sample: {r:?}");
        r.first()
            .and_then(|s| s["value"][1].as_str())
            .and_then(|v| v.parse().ok())
    }

    /// The alerts Prometheus holds (pending and firing).
    fn alerts(&self) -> Vec<Value> {
        self.api("/api/v1/alerts")["alerts"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// The state of the alert named `name` whose labels include `labels`
    /// (None: not pending, not firing).
    fn alert_state(&self, name: &str, labels: &[(&str, &str)]) -> Option<String> {
        self.alerts()
            .into_iter()
            .find(|a| {
                a["labels"]["alertname"] == name
                    && labels.iter().all(|(k, v)| a["labels"][*k] == *v)
            })
            .and_then(|a| a["state"].as_str().map(str::to_string))
    }

    /// Poll until `ok` holds (an external state: Prometheus scrapes and
    /// evaluates on its own clock); bounded by `limit`.
    pub(crate) async fn wait<T>(
        &self,
        what: &str,
        limit: Duration,
        mut ok: impl FnMut(&Self) -> Option<T>,
    ) -> (T, Duration) {
        let start = Instant::now();
        loop {
            if let Some(v) = ok(self) {
                return (v, start.elapsed());
            }
            assert!(
                start.elapsed() < limit,
                "prometheus: {what}: not within {limit:?}; alerts: {:#?}\nlog:\n{}",
                self.alerts(),
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    pub(crate) async fn stop(mut self) {
        if let Some(pid) = self.child.id() {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(i32::try_from(pid).expect("pid")),
                nix::sys::signal::Signal::SIGTERM,
            );
        }
        let _ = tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await;
    }
}

/// `ribbridge run` in `ns` with its endpoint on `listen` (the lab address).
pub(crate) async fn ribbridge(
    lab_guard: &Lab,
    ns: &'static str,
    listen: &str,
    args: &[&str],
    ready: &str,
) -> Daemon {
    let dir = tempfile::tempdir().expect("tempdir").keep();
    let record = dir.join("events.jsonl");
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "exec", ns])
        .arg(env!("CARGO_BIN_EXE_ribbridge"))
        .args(["run", "--frr-dir"])
        .arg(lab_guard.sockdir(ns))
        .args(["--listen", listen, "--record"])
        .arg(&record)
        // The lab's defaults (support::daemon::lab_defaults): bare routes, repair.
        .args(crate::support::daemon::lab_defaults(args))
        .args(args)
        .env("RUST_LOG", "info");
    let port = listen
        .rsplit_once(':')
        .expect("port")
        .1
        .parse()
        .expect("port");
    let mut d = Daemon::spawn_command(ns, cmd, record, port, args);
    d.wait_log(ready, Duration::from_secs(15)).await;
    d
}

/// A BMP station in `rb-router` listening for the router on `bmp`, its
/// endpoint on `listen`.
pub(crate) async fn bmp_station(lab_guard: &Lab, listen: &str, bmp: &str) -> Daemon {
    ribbridge(
        lab_guard,
        "rb-router",
        listen,
        &crate::support::station_args(bmp, VIP),
        "bmp: station listening",
    )
    .await
}

/// The nodes' ribbridge endpoints (their lab addresses) and the router
/// vantage's.
pub(crate) const N1: &str = "198.18.1.2:7585";
pub(crate) const N2: &str = "198.18.2.2:7585";
const RV: &str = "198.18.1.1:7586";

/// The router-vantage ribbridge on `rb-router` (its kernel's main table).
async fn router_vantage(lab_guard: &Lab) -> Daemon {
    ribbridge(
        lab_guard,
        "rb-router",
        RV,
        &["--vantage", "router", "--table", "254", "--vip", VIP],
        "kernel mirror resynced",
    )
    .await
}

/// The shipped rules file with its `for:` durations scaled down.
pub(crate) fn shipped_rules_with_short_for() -> String {
    let shipped = std::fs::read_to_string(repo().join("deploy/prometheus/ribbridge-rules.yaml"))
        .expect("rules file");
    rules_with_short_for(&shipped).0
}

/// Prometheus' configuration: the nodes' job, each node's target with the
/// `node` label the shipped monitors add (`rb-node1`, ...), the router
/// vantage's, and a BMP station's (job `ribbridge-bmp`) when there is one.
fn config(nodes: &[&str], router: &str, station: Option<&str>) -> String {
    let node_targets: String = nodes
        .iter()
        .enumerate()
        .map(|(i, a)| {
            format!(
                "  - {{targets: ['{a}'], labels: {{node: rb-node{}}}}}\n",
                i + 1
            )
        })
        .collect();
    format!(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n\
         rule_files: [rules.yaml]\n\
         scrape_configs:\n\
         - job_name: {NODE_JOB}\n  static_configs:\n{}\
         - job_name: {ROUTER_JOB}\n  static_configs: [{{targets: ['{}']}}]\n{}",
        node_targets,
        router,
        station.map_or(String::new(), |s| format!(
            "- job_name: ribbridge-bmp\n  static_configs: [{{targets: ['{s}']}}]\n"
        ))
    )
}

/// What a dashboard expression needs beyond nodes and a router vantage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Needs {
    /// Nodes and a router vantage: the first lab has them.
    Nodes,
    /// A BMP station's series: the graceful-restart lab has one.
    Station,
    /// A backend probe's series: node2 probes its backend in the first lab.
    Probes,
}

fn needs(expr: &str) -> Needs {
    if [
        "ribbridge-bmp",
        "ribbridge_router_paths{",
        "ribbridge_router_stale_paths{",
    ]
    .iter()
    .any(|s| expr.contains(s))
    {
        Needs::Station
    } else if ["ribbridge_backend_up{", "ribbridge_probe_"]
        .iter()
        .any(|s| expr.contains(s))
    {
        Needs::Probes
    } else {
        Needs::Nodes
    }
}

/// The dashboard's expressions that need `what`, its template variables
/// (`$node`, `$vip`) at Grafana's "All" (`.*`).
fn dashboard_exprs_needing(what: Needs) -> Vec<String> {
    dashboard_exprs()
        .into_iter()
        .map(|e| e.replace("$node", ".*").replace("$vip", ".*"))
        .filter(|e| needs(e) == what)
        .collect()
}

/// The dashboard's expressions.
fn dashboard_exprs() -> Vec<String> {
    let text = std::fs::read_to_string(repo().join("deploy/grafana/ribbridge-dashboard.json"))
        .expect("dashboard");
    let d: Value = serde_json::from_str(&text).expect("dashboard JSON");
    fn walk(v: &Value, out: &mut Vec<String>) {
        for p in v["panels"].as_array().into_iter().flatten() {
            for t in p["targets"].as_array().into_iter().flatten() {
                if let Some(e) = t["expr"].as_str() {
                    out.push(e.to_string());
                }
            }
            walk(p, out);
        }
    }
    let mut out = Vec::new();
    walk(&d, &mut out);
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alerts_rules_and_dashboard_on_a_real_prometheus_frr_10_7() {
    let t0 = Instant::now();
    let rules = shipped_rules_with_short_for();

    let lab_guard = Lab::up("10.7", 2, &[VIP]);
    let t_lab = t0.elapsed();
    let mut router = RouteWatch::open("rb-router");
    let mut n1 = ribbridge(
        &lab_guard,
        "rb-node1",
        N1,
        &["--mode", "observe"],
        "zebra: subscribed",
    )
    .await;
    // node2 probes its backend (the OpenShift router's health endpoint,
    // not started yet: the probe fails first), so that the dashboard's
    // probe panels read real series.
    let n2 = ribbridge(
        &lab_guard,
        "rb-node2",
        N2,
        &["--health", &format!("{VIP}={HEALTH}")],
        "zebra: subscribed",
    )
    .await;
    let rv = router_vantage(&lab_guard).await;
    let prom = Prometheus::start(
        "rb-router",
        "127.0.0.1:9090",
        &config(&[N1, N2], RV, None),
        &rules,
    );
    let (_, t) = prom
        .wait("ready", PROM_LIMIT, |p| {
            p.get("/-/ready").filter(|(s, _)| *s == 200).map(|_| ())
        })
        .await;
    eprintln!("prometheus ready in {t:?}");
    // Every target up, scraped at its lab address.
    prom.wait("3 targets up", PROM_LIMIT, |p| {
        (p.scalar("count(up == 1)") == Some(3.0)).then_some(())
    })
    .await;
    let targets = prom.api("/api/v1/targets");
    let urls: Vec<&str> = targets["activeTargets"]
        .as_array()
        .expect("targets")
        .iter()
        .filter_map(|t| t["scrapeUrl"].as_str())
        .collect();
    for n in [N1, N2] {
        assert!(
            urls.contains(&format!("http://{n}/metrics").as_str()),
            "{urls:?}"
        );
    }

    // node2's probe fails (connection refused) until its backend starts,
    // then says up: both are series the dashboard reads.
    let failures = format!("ribbridge_probe_failures_total{{instance=\"{N2}\"}}");
    prom.wait("node2's probe failures", PROM_LIMIT, |p| {
        (!p.query(&failures).is_empty()).then_some(())
    })
    .await;
    lab(&["backend", "node2", "up"]);
    let up = format!("ribbridge_backend_up{{instance=\"{N2}\",probe=\"health\"}}");
    let (_, t) = prom
        .wait("node2's backend up", PROM_LIMIT, |p| {
            (p.scalar(&up) == Some(1.0)).then_some(())
        })
        .await;
    eprintln!("node2's backend probe: failures counted, then up in Prometheus (polled {t:?})");

    // 1. Nodes advertising == the router's kernel ECMP width, through
    // withdraw and re-add.
    let advertising = "prefix:ribbridge_vip_nodes_advertising:sum{prefix=\"192.0.2.10/32\"}";
    let router_paths = "prefix:ribbridge_router_paths:min{prefix=\"192.0.2.10/32\"}";
    let mut agree = async |want: usize, step: &str| {
        let t = router
            .wait_nexthops(vip_addr(), 32, want, Duration::from_secs(15))
            .await
            .unwrap_or_else(|e| panic!("{step}: {e}"));
        let (_, tp) = prom
            .wait(
                &format!("{step}: nodes advertising = {want}"),
                PROM_LIMIT,
                |p| {
                    let a = p.scalar(advertising)?;
                    let r = p.scalar(router_paths)?;
                    (a == want as f64 && r == want as f64).then_some(())
                },
            )
            .await;
        // The router's kernel still says `want` once Prometheus agrees.
        assert_eq!(router.nexthops(vip_addr(), 32).await, want, "{step}");
        eprintln!(
            "{step}: router ECMP {want} after {t:?}; nodes advertising = router paths = {want} in Prometheus {tp:?} later"
        );
    };
    lab(&["vip-add", "node1", VIP]);
    lab(&["vip-add", "node2", VIP]);
    agree(2, "both nodes add the VIP").await;
    lab(&["vip-del", "node1", VIP]);
    agree(1, "node1 withdraws").await;
    lab(&["vip-add", "node1", VIP]);
    agree(2, "node1 re-adds").await;

    // 2. A 10.7 drift (route, then address, in one batch) in observe mode:
    // RibbridgeVIPNotSentToRouter fires for node1. (Only the lines logged
    // from here on count.)
    n1.drain();
    lab(&["vip-del", "node1", VIP]);
    n1.wait_log("VIP consistent && to=withdrawn", Duration::from_secs(5))
        .await;
    let mut tries = 0;
    let t_drift = loop {
        tries += 1;
        lab(&["exec", "rb-node1", "sh", "-c", ROUTE_THEN_ADDRESS]);
        let t = Instant::now();
        let (hit, _) = n1
            .wait_either(
                "VIP drift && to=kernel_only",
                "VIP consistent && to=advertised",
                Duration::from_secs(5),
            )
            .await;
        if hit {
            break t;
        }
        assert!(tries < 5, "FRR 10.7 kernel_only not reproduced in 5 tries");
        n1.drain();
        lab(&["exec", "rb-node1", "sh", "-c", UNDO]);
        n1.wait_log("VIP consistent && to=withdrawn", Duration::from_secs(5))
            .await;
    };
    let drift_labels = [("instance", N1), ("prefix", VIP), ("state", "kernel_only")];
    let (_, t) = prom
        .wait("RibbridgeVIPNotSentToRouter firing", PROM_LIMIT, |p| {
            (p.alert_state("RibbridgeVIPNotSentToRouter", &drift_labels)
                .as_deref()
                == Some("firing"))
            .then_some(())
        })
        .await;
    eprintln!(
        "10.7 drift reproduced at try {tries}; RibbridgeVIPNotSentToRouter firing {:?} after the drift's setup (polled for {t:?})",
        t_drift.elapsed()
    );
    assert_eq!(
        router.nexthops(vip_addr(), 32).await,
        1,
        "the drift is real"
    );

    // Repair mode heals it; the alert resolves.
    n1.stop().await;
    let t_repair = Instant::now();
    let _n1 = ribbridge(
        &lab_guard,
        "rb-node1",
        N1,
        &["--mode", "repair"],
        "zebra: subscribed",
    )
    .await;
    router
        .wait_nexthops(vip_addr(), 32, 2, Duration::from_secs(10))
        .await
        .expect("repair mode heals the drift");
    let (_, t) = prom
        .wait("RibbridgeVIPNotSentToRouter resolved", PROM_LIMIT, |p| {
            let healed = p.scalar(&format!(
                "ribbridge_vip_state{{instance=\"{N1}\",state=\"advertised\"}}"
            )) == Some(1.0);
            (healed
                && p.alert_state("RibbridgeVIPNotSentToRouter", &drift_labels)
                    .is_none())
            .then_some(())
        })
        .await;
    eprintln!(
        "repair: router back to 2 paths and the alert resolved {:?} after the repair daemon's start (polled {t:?})",
        t_repair.elapsed()
    );
    assert!(
        prom.scalar(&format!(
            "sum(ribbridge_heal_actions_total{{instance=\"{N1}\",result=\"ok\"}})"
        ))
        .unwrap_or(0.0)
            >= 1.0,
        "the heal is counted"
    );

    // 3. Every dashboard expression returns data (the rates need two
    // samples of the series the heal created: bounded wait per expression).
    let t_dash = Instant::now();
    let mut exprs = dashboard_exprs_needing(Needs::Nodes);
    let probes = dashboard_exprs_needing(Needs::Probes);
    assert!(
        !probes.is_empty(),
        "no dashboard panel reads a backend probe"
    );
    exprs.extend(probes);
    for e in &exprs {
        prom.wait(&format!("dashboard expression {e}"), PROM_LIMIT, |p| {
            (!p.query(e).is_empty()).then_some(())
        })
        .await;
    }
    eprintln!(
        "dashboard: {} expressions all non-empty ({:?}), {} of them a backend probe's; {} read a BMP station's series (the graceful-restart lab's)",
        exprs.len(),
        t_dash.elapsed(),
        dashboard_exprs_needing(Needs::Probes).len(),
        dashboard_exprs_needing(Needs::Station).len()
    );

    // 4. node2's ribbridge stops: RibbridgeDown fires for it, no VIP alert
    // does (node1 still advertises the VIP).
    let t_stop = Instant::now();
    n2.stop().await;
    let (_, t) = prom
        .wait("RibbridgeDown firing for node2", PROM_LIMIT, |p| {
            (p.alert_state("RibbridgeDown", &[("instance", N2)])
                .as_deref()
                == Some("firing"))
            .then_some(())
        })
        .await;
    eprintln!(
        "node2's ribbridge stopped: RibbridgeDown firing {:?} later (polled {t:?})",
        t_stop.elapsed()
    );
    let vip_alerts: Vec<Value> = prom
        .alerts()
        .into_iter()
        .filter(|a| {
            let n = a["labels"]["alertname"].as_str().unwrap_or("");
            n.starts_with("RibbridgeVIP") && a["state"] == "firing"
        })
        .collect();
    assert!(vip_alerts.is_empty(), "VIP alerts firing: {vip_alerts:#?}");

    prom.stop().await;
    rv.stop().await;
    drop(lab_guard);
    eprintln!(
        "alerts test: {:?} in all ({t_lab:?} of it the lab's start)",
        t0.elapsed()
    );
}

/// Graceful restart as frr-k8s renders it with `enableGracefulRestart`
/// (`lab.sh up --profile frr-k8s --graceful-restart`), the router exporting
/// BMP to a station: node1 "powers off" (every packet of its namespace
/// dropped, bgpd and its ribbridge killed). The router's hold timer ends
/// the session, and the router keeps node1's path as stale and forwards to
/// it: the station counts it stale, RibbridgeRouterKeepsStalePaths and
/// RibbridgeRouterPathsBeyondAdvertising fire while the router's kernel
/// still holds both paths. node1 powers on (packets pass, bgpd and
/// ribbridge start): its session comes back, the stale path is replaced,
/// both alerts resolve.
async fn powered_off_under_graceful_restart(frr: &'static str) {
    let t0 = Instant::now();
    let rules = shipped_rules_with_short_for();
    const BMP: &str = "127.0.0.1:11021";
    let lab_guard = Lab::up_with(
        frr,
        2,
        &[VIP],
        &["--bmp", BMP, "--profile", "frr-k8s", "--graceful-restart"],
    );
    let mut router = RouteWatch::open("rb-router");
    const ST: &str = "127.0.0.1:7587";
    let n1 = ribbridge(&lab_guard, "rb-node1", N1, &[], "zebra: subscribed").await;
    let _n2 = ribbridge(&lab_guard, "rb-node2", N2, &[], "zebra: subscribed").await;
    let rv = router_vantage(&lab_guard).await;
    let station = bmp_station(&lab_guard, ST, BMP).await;
    let prom = Prometheus::start(
        "rb-router",
        "127.0.0.1:9090",
        &config(&[N1, N2], RV, Some(ST)),
        &rules,
    );
    crate::support::vip_on_both(&mut router, VIP).await;
    // The dashboard's station panels return data with a station scraped.
    let station_exprs = dashboard_exprs_needing(Needs::Station);
    assert!(
        !station_exprs.is_empty(),
        "no dashboard panel reads the station"
    );
    for e in &station_exprs {
        prom.wait(&format!("dashboard expression {e}"), PROM_LIMIT, |p| {
            (!p.query(e).is_empty()).then_some(())
        })
        .await;
    }
    let paths = |p: &Prometheus, name: &str| p.scalar(&format!("max({name}{{prefix=\"{VIP}\"}})"));
    prom.wait(
        "2 nodes advertising, 2 router paths, none stale",
        PROM_LIMIT,
        |p| {
            (p.scalar(&format!(
                "prefix:ribbridge_vip_nodes_advertising:sum{{prefix=\"{VIP}\"}}"
            )) == Some(2.0)
                && paths(p, "ribbridge_router_paths") == Some(2.0)
                && paths(p, "ribbridge_router_stale_paths") == Some(0.0))
            .then_some(())
        },
    )
    .await;

    // Power off: no carrier change at the router (as behind a switch).
    let t_off = Instant::now();
    host_exec(
        "rb-node1",
        "iptables -I INPUT -j DROP && iptables -I OUTPUT -j DROP",
    );
    lab(&["kill", "rb-node1", "bgpd"]);
    n1.kill9().await;
    let (_, _) = prom
        .wait(
            "the station counts node1's path stale",
            Duration::from_secs(60),
            |p| (paths(p, "ribbridge_router_stale_paths") == Some(1.0)).then_some(()),
        )
        .await;
    let t_stale = t_off.elapsed();
    for alert in [
        "RibbridgeRouterKeepsStalePaths",
        "RibbridgeRouterPathsBeyondAdvertising",
    ] {
        prom.wait(&format!("{alert} firing"), PROM_LIMIT, |p| {
            (p.alert_state(alert, &[("prefix", VIP)]).as_deref() == Some("firing")).then_some(())
        })
        .await;
    }
    let t_firing = t_off.elapsed();
    // The router still forwards to the dead node: the path is real.
    assert_eq!(
        router.nexthops(vip_addr(), 32).await,
        2,
        "the router dropped node1's path: graceful restart did not keep it"
    );
    eprintln!(
        "graceful restart ({frr}): node1 powered off; the station counted its path stale {t_stale:?} later (the hold timer), both alerts firing at {t_firing:?}, the router's kernel still holding 2 paths"
    );

    // Power on: the session returns and refreshes the path; both resolve.
    let t_on = Instant::now();
    host_exec(
        "rb-node1",
        "iptables -D INPUT -j DROP && iptables -D OUTPUT -j DROP",
    );
    lab(&["start", "rb-node1", "bgpd"]);
    let _n1 = ribbridge(&lab_guard, "rb-node1", N1, &[], "zebra: subscribed").await;
    // Fresh again: the station counts 2 paths, none stale (the router
    // may drop the stale one at the new session's start and take the
    // fresh one after node1's deferred best-path selection).
    prom.wait("both alerts resolved, no stale path", PROM_LIMIT, |p| {
        (paths(p, "ribbridge_router_stale_paths") == Some(0.0)
            && paths(p, "ribbridge_router_paths") == Some(2.0)
            && p.alert_state("RibbridgeRouterKeepsStalePaths", &[("prefix", VIP)])
                .is_none()
            && p.alert_state("RibbridgeRouterPathsBeyondAdvertising", &[("prefix", VIP)])
                .is_none())
        .then_some(())
    })
    .await;
    router
        .wait_nexthops(vip_addr(), 32, 2, Duration::from_secs(10))
        .await
        .expect("node1's fresh path in the router's kernel");
    eprintln!(
        "graceful restart ({frr}): node1 powered on; its path fresh and both alerts resolved {:?} later; test {:?} in all",
        t_on.elapsed(),
        t0.elapsed()
    );
    prom.stop().await;
    station.stop().await;
    rv.stop().await;
    drop(lab_guard);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alerts_a_node_powered_off_under_graceful_restart_frr_8_4() {
    powered_off_under_graceful_restart("8.4").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alerts_a_node_powered_off_under_graceful_restart_frr_10_3() {
    powered_off_under_graceful_restart("10.3").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alerts_a_node_powered_off_under_graceful_restart_frr_10_7() {
    powered_off_under_graceful_restart("10.7").await;
}
