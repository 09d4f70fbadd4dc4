//! The pure join: the answers of the instant queries ([`queries`]) to one
//! [`Picture`] of every VIP across the cluster. No I/O and no clock: the
//! time is Prometheus' evaluation time, read from the answers, so recorded
//! answers give the same picture as live ones.
//!
//! Rules:
//!
//! - A node is a scrape target of the nodes' job (`up`), named by its
//!   `node` label, by `instance` where the label is absent (said in
//!   [`Picture::named_by`]).
//! - A node whose target is down is `not scraped`; one whose last scrape
//!   is older than two scrape intervals is `stale`: neither is ever shown
//!   with a state, and either makes the picture unknown (exit 2), as
//!   `ribbridge status` does for a daemon that cannot see.
//! - Nodes advertising a VIP are those in `advertised`, `blackhole` or
//!   `orphaned` (BGP sends it), as the recording rule
//!   `prefix:ribbridge_vip_nodes_advertising:sum` counts them.
//! - The router's paths are each BMP station's `ribbridge_router_paths`
//!   per router (stale paths under graceful restart included), else a
//!   router-vantage ribbridge's `ribbridge_ecmp_nexthops`. A router that
//!   holds another number than the nodes advertising disagrees (exit 1);
//!   its paths unknown (NaN: not synced) or its series stale is unknown.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde::Serialize;

use super::query::Sample;
use crate::reconcile::Class;

/// What the queries are about: the scrape jobs and the scrape interval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    /// The nodes' scrape job (`ribbridge-monitor`, as the rules expect).
    pub job: String,
    /// A router-vantage ribbridge's scrape job (`ribbridge-router`).
    pub router_job: String,
    /// A BMP station's scrape job (`ribbridge-bmp`, the shipped
    /// ServiceMonitor's).
    pub bmp_job: String,
    /// How often Prometheus scrapes the nodes: a series older than two of
    /// these is stale.
    pub scrape_interval: Duration,
    /// Only these VIPs (every VIP seen when empty), as prefixes written
    /// the way the metrics label them (`192.0.2.10/32`).
    pub vips: Vec<String>,
}

/// Which query an answer belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Q {
    /// `up` of the nodes' job: scraped or not.
    Up,
    /// The time of each node's last scrape.
    UpTime,
    /// Each node's current state per VIP.
    State,
    /// Each node's backend probes per VIP.
    Backend,
    /// Each node's drain.
    Drained,
    /// VIPs each node's ribbridge holds out of BGP itself.
    HeldOut,
    /// Drifts per node and VIP in the last 5 minutes.
    Drifts,
    /// Heals given up per node and VIP in the last 15 minutes.
    GivenUp,
    /// Each BMP station's paths per router and VIP.
    RouterPaths,
    /// Of those, the stale ones.
    RouterStale,
    /// The time of each router's path count.
    RouterTime,
    /// A router-vantage ribbridge's kernel ECMP width per VIP.
    Vantage,
    /// The time of that width.
    VantageTime,
    /// `up` of the BMP stations' and the router vantages' jobs: a router's
    /// view that is not scraped is missing, not absent.
    VantageUp,
}

impl Q {
    /// Every query, in the order [`queries`] lists them.
    pub const ALL: [Q; 14] = [
        Q::Up,
        Q::UpTime,
        Q::State,
        Q::Backend,
        Q::Drained,
        Q::HeldOut,
        Q::Drifts,
        Q::GivenUp,
        Q::RouterPaths,
        Q::RouterStale,
        Q::RouterTime,
        Q::Vantage,
        Q::VantageTime,
        Q::VantageUp,
    ];

    /// A stable snake_case name: the key of a recorded answer
    /// (tests/data/cluster/).
    pub fn name(self) -> &'static str {
        match self {
            Q::Up => "up",
            Q::UpTime => "up_time",
            Q::State => "state",
            Q::Backend => "backend",
            Q::Drained => "drained",
            Q::HeldOut => "held_out",
            Q::Drifts => "drifts",
            Q::GivenUp => "given_up",
            Q::RouterPaths => "router_paths",
            Q::RouterStale => "router_stale",
            Q::RouterTime => "router_time",
            Q::Vantage => "vantage",
            Q::VantageTime => "vantage_time",
            Q::VantageUp => "vantage_up",
        }
    }
}

/// One query to send: which, the PromQL, and what it answers (for
/// `--explain`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    /// Which.
    pub q: Q,
    /// The PromQL text, as pasted into a console.
    pub promql: String,
    /// What it answers.
    pub what: &'static str,
}

/// The instant queries the picture is joined from. Raw series of the
/// metrics catalogue (`crate::telemetry`), so that it works whether or not
/// the recording rules are loaded.
pub fn queries(scope: &Scope) -> Vec<Query> {
    use crate::telemetry as t;
    // Per-VIP selectors carry the VIPs asked for, so that the queries
    // --explain prints are the ones a person wants in the console.
    let p = prefix_matcher(&scope.vips);
    // `{job="J"}`, `{job="J",prefix=...}`, the router vantage's, and the
    // BMP station's (any job: the rules take it from any).
    let node = format!("{{job=\"{}\"}}", scope.job);
    let vip = format!("{{job=\"{}\"{p}}}", scope.job);
    let rv = format!("{{job=\"{}\"{p}}}", scope.router_job);
    let bmp = if p.is_empty() {
        String::new()
    } else {
        format!("{{{}}}", &p[1..])
    };
    let q = |q, promql: String, what| Query { q, promql, what };
    vec![
        q(
            Q::Up,
            format!("up{node}"),
            "is each node's ribbridge scraped",
        ),
        q(
            Q::UpTime,
            format!("timestamp(up{node})"),
            "when each node was last scraped",
        ),
        q(
            Q::State,
            format!("{}{vip} == 1", t::VIP_STATE),
            "each node's state of each VIP",
        ),
        q(
            Q::Backend,
            format!("{}{vip}", t::BACKEND_UP),
            "each node's backend probes (1 up, 0 down, NaN unknown)",
        ),
        q(
            Q::Drained,
            format!("{}{node}", t::DRAINED),
            "is the node drained",
        ),
        q(
            Q::HeldOut,
            format!("{}{node}", t::VIPS_WITHDRAWN_BY_RIBBRIDGE),
            "VIPs ribbridge holds out of BGP on the node",
        ),
        q(
            Q::Drifts,
            format!(
                "sum by (instance, node, prefix) (increase({}{vip}[5m]))",
                t::DRIFT_TOTAL
            ),
            "drifts per node and VIP in 5 minutes",
        ),
        q(
            Q::GivenUp,
            format!(
                "sum by (instance, node, prefix) (increase({}{vip}[15m]))",
                t::HEAL_GIVEN_UP_TOTAL
            ),
            "heals given up per node and VIP in 15 minutes",
        ),
        q(
            Q::RouterPaths,
            format!("{}{bmp}", t::ROUTER_PATHS),
            "paths each router holds per VIP (BMP station)",
        ),
        q(
            Q::RouterStale,
            format!("{}{bmp}", t::ROUTER_STALE_PATHS),
            "of those, stale under graceful restart",
        ),
        q(
            Q::RouterTime,
            format!("timestamp({}{bmp})", t::ROUTER_PATHS),
            "when each router's paths were last scraped",
        ),
        q(
            Q::Vantage,
            format!("{}{rv}", t::ECMP_NEXTHOPS),
            "paths the router's kernel holds per VIP (router vantage)",
        ),
        q(
            Q::VantageTime,
            format!("timestamp({}{rv})", t::ECMP_NEXTHOPS),
            "when the router vantage was last scraped",
        ),
        q(
            Q::VantageUp,
            format!(
                "up{{job=\"{}\"}} or up{{job=\"{}\"}}",
                scope.bmp_job, scope.router_job
            ),
            "is each BMP station and router vantage scraped",
        ),
    ]
}

/// The label matcher of the VIPs asked for, with its leading comma:
/// nothing for every VIP, `,prefix="P"` for one, `,prefix=~"P1|P2"`
/// (dots escaped) for more.
fn prefix_matcher(vips: &[String]) -> String {
    match vips {
        [] => String::new(),
        [one] => format!(",prefix=\"{one}\""),
        many => {
            let alts: Vec<String> = many.iter().map(|v| v.replace('.', "\\\\.")).collect();
            format!(",prefix=~\"{}\"", alts.join("|"))
        }
    }
}

/// The answers, by query.
pub type Answers = BTreeMap<Q, Vec<Sample>>;

/// How the rows are named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NamedBy {
    /// Every target has a `node` label.
    Node,
    /// None has: the rows are `instance`s (pod or node addresses).
    Instance,
    /// Some have: those without are named by `instance`.
    Mixed,
}

/// Whether a node's ribbridge is being scraped.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "scrape")]
pub enum Scrape {
    /// Up, and scraped within two intervals.
    Fresh,
    /// The target is down: Prometheus cannot scrape it.
    Down,
    /// The last scrape is older than two intervals (seconds old).
    Stale {
        /// Age of the last scrape, seconds.
        age_secs: f64,
    },
    /// Series without a scrape target of the job (federated, or `up` not
    /// kept): nothing says they are current.
    NoTarget,
}

impl Scrape {
    /// The SCRAPED column.
    pub fn word(&self) -> String {
        match self {
            Scrape::Fresh => "yes".into(),
            Scrape::Down => "not scraped".into(),
            Scrape::Stale { age_secs } if age_secs.is_nan() => "stale".into(),
            Scrape::Stale { age_secs } => format!("stale ({age_secs:.0}s)"),
            Scrape::NoTarget => "no target".into(),
        }
    }
}

/// One node's row of a VIP.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeRow {
    /// The node's name (its `node` label, else its `instance`).
    pub node: String,
    /// The scrape target.
    pub instance: String,
    /// Scraped or not.
    #[serde(flatten)]
    pub scrape: Scrape,
    /// Its state of the VIP (a class name or `unknown`); `None` when not
    /// scraped (never shown as fine) or when it has no series of the VIP.
    pub state: Option<String>,
    /// `silent` (orphaned), `flapping`, or `None` where the metrics say
    /// nothing of it.
    pub writer: Option<String>,
    /// `up`, `down`, `draining`, `unknown`; `None`: not probed.
    pub backend: Option<String>,
    /// `unusable` when a blackhole's backend is not the cause.
    pub address: Option<String>,
    /// Heals given up, ribbridge holding VIPs out, or recent drifts.
    pub heal: Option<String>,
    /// ribbridge_drained; `None` when unknown.
    pub drained: Option<bool>,
    /// Why the row is not fine, in words.
    pub why: Option<String>,
}

/// One router's count of a VIP's paths.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RouterView {
    /// `bmp` (a BMP station) or `router_vantage`.
    pub source: &'static str,
    /// The router (BMP: its address and sysName; router vantage: its
    /// node or instance).
    pub router: String,
    /// Paths it holds; `None`: unknown (not synced, or stale).
    pub paths: Option<f64>,
    /// Of those, stale under graceful restart (BMP only).
    pub stale_paths: Option<f64>,
}

/// A problem found, and whether it is a finding (drift, disagreement) or
/// something that cannot be told.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// `drift`, `disagreement` or `unknown`.
    pub kind: &'static str,
    /// What, in words, naming the node or router.
    pub what: String,
}

/// One VIP across the cluster.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VipPicture {
    /// The prefix.
    pub prefix: String,
    /// Nodes whose BGP sends it (advertised, blackhole, orphaned).
    pub advertising: usize,
    /// What the routers hold.
    pub routers: Vec<RouterView>,
    /// One row per node.
    pub nodes: Vec<NodeRow>,
    /// What is wrong, if anything.
    pub problems: Vec<Problem>,
}

/// The verdict, as `status`'s exit codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every node's state consistent and every router agreeing (exit 0).
    Ok,
    /// A drift or a disagreement (exit 1).
    Drift,
    /// Something cannot be told: a node not scraped or stale, a router's
    /// paths unknown, no data (exit 2).
    Unknown,
}

impl Verdict {
    /// The word shown.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Drift => "drift",
            Verdict::Unknown => "unknown",
        }
    }
}

/// The whole picture.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Picture {
    /// Prometheus' evaluation time, seconds since the epoch (`None`: no
    /// sample at all).
    pub time: Option<f64>,
    /// How rows are named.
    pub named_by: NamedBy,
    /// Every VIP.
    pub vips: Vec<VipPicture>,
    /// Problems of no single VIP (no targets, no VIP).
    pub problems: Vec<Problem>,
    /// The verdict.
    pub verdict: Verdict,
}

/// The advertising classes, as the recording rule counts them.
const ADVERTISING: [&str; 3] = ["advertised", "blackhole", "orphaned"];

/// Per node (by instance): its sample (the last, should it have several).
fn by_instance(a: &Answers, q: Q) -> BTreeMap<String, &Sample> {
    a.get(&q)
        .into_iter()
        .flatten()
        .map(|s| (s.label("instance").to_string(), s))
        .collect()
}

/// Per (instance, prefix).
fn by_instance_prefix(a: &Answers, q: Q) -> BTreeMap<(String, String), Vec<&Sample>> {
    let mut m: BTreeMap<(String, String), Vec<&Sample>> = BTreeMap::new();
    for s in a.get(&q).into_iter().flatten() {
        m.entry((
            s.label("instance").to_string(),
            s.label("prefix").to_string(),
        ))
        .or_default()
        .push(s);
    }
    m
}

/// A known number (NaN is unknown).
fn known(v: f64) -> Option<f64> {
    (!v.is_nan()).then_some(v)
}

/// The BACKEND word from a node's probes of one VIP.
fn backend_word(probes: &[&Sample]) -> Option<String> {
    let of = |p: &str| {
        probes
            .iter()
            .find(|s| s.label("probe") == p)
            .map(|s| s.value)
    };
    let (health, ready) = (of("health"), of("ready"));
    if health.is_none() && ready.is_none() {
        return None;
    }
    let word = match (health, ready) {
        (Some(0.0), _) => "down",
        (Some(h), _) if h.is_nan() => "unknown",
        (_, Some(0.0)) => "draining",
        (_, Some(r)) if r.is_nan() => "unknown",
        _ => "up",
    };
    Some(word.into())
}

/// Why a node's state of a VIP is not fine, in words.
fn state_why(state: &str, backend: Option<&str>) -> Option<String> {
    let w = match state {
        "advertised" | "withdrawn" | "filtered" => return None,
        "drained" => "drained on purpose (ribbridge drain)",
        "blackhole" if backend == Some("down") => {
            "BGP sends it while the backend's health probe fails: traffic dropped"
        }
        "blackhole" => "BGP sends it while its address is missing or unusable: traffic dropped",
        "orphaned" => "BGP sends it while its writer (kube-vip) is silent",
        "flapping" => "its writer withdraws and re-adds it again and again",
        "unready" => "BGP sends it while the backend is not ready (draining)",
        "capacity_lost" => "the backend is up but the route is gone from the kernel",
        "kernel_only" => "the kernel holds it, zebra does not (healing)",
        "not_redistributed" => "zebra holds it, bgpd sends it to no peer (healing)",
        "shadowed" => "a connected route of the same prefix wins over the import",
        "zebra_stale" => "FRR still sends it while the kernel dropped it",
        "no_peer" => "no established BGP session",
        "unconfigured" => "bgpd does not redistribute the VIP table in its family",
        "unknown" => "the node's ribbridge cannot see a view (not ready)",
        other => return Some(format!("state {other}")),
    };
    Some(w.into())
}

/// A state name that `status` counts as drift (every class not consistent:
/// `unconfigured` included), or `unknown`.
fn state_kind(state: &str) -> Option<&'static str> {
    match Class::ALL.iter().find(|c| c.name() == state) {
        Some(c) if c.is_consistent() => None,
        Some(_) => Some("drift"),
        None => Some("unknown"),
    }
}

/// Join the answers into the picture. `answers` holds what each query
/// returned (a query absent from it counts as an empty answer).
pub fn join(scope: &Scope, answers: &Answers) -> Picture {
    let time = answers
        .values()
        .flatten()
        .map(|s| s.time)
        .fold(None, |m: Option<f64>, t| Some(m.map_or(t, |m| m.max(t))));
    let limit = 2.0 * scope.scrape_interval.as_secs_f64();
    let up = by_instance(answers, Q::Up);
    let up_time = by_instance(answers, Q::UpTime);
    let states = by_instance_prefix(answers, Q::State);
    let backends = by_instance_prefix(answers, Q::Backend);
    let drifts = by_instance_prefix(answers, Q::Drifts);
    let given_up = by_instance_prefix(answers, Q::GivenUp);
    let drained = by_instance(answers, Q::Drained);
    let held = by_instance(answers, Q::HeldOut);

    // The nodes: every target, and every instance with a state series.
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    for s in up
        .values()
        .copied()
        .chain(states.values().flatten().copied())
    {
        let inst = s.label("instance").to_string();
        let node = s.label("node");
        let e = names.entry(inst.clone()).or_insert_with(|| inst.clone());
        if !node.is_empty() {
            *e = node.to_string();
        }
    }
    let with_node = names.iter().filter(|(i, n)| i != n).count();
    let named_by = match with_node {
        0 if !names.is_empty() => NamedBy::Instance,
        n if n == names.len() => NamedBy::Node,
        _ => NamedBy::Mixed,
    };
    let scrape_of = |inst: &str| -> Scrape {
        match up.get(inst) {
            None => Scrape::NoTarget,
            Some(s) if s.value != 1.0 => Scrape::Down,
            Some(s) => match up_time.get(inst) {
                Some(t) if s.time - t.value <= limit => Scrape::Fresh,
                Some(t) => Scrape::Stale {
                    age_secs: s.time - t.value,
                },
                None => Scrape::Stale { age_secs: f64::NAN },
            },
        }
    };

    // The VIPs: those asked for, else every one any view names.
    let mut prefixes: BTreeSet<String> = scope.vips.iter().cloned().collect();
    if prefixes.is_empty() {
        for q in [Q::State, Q::RouterPaths, Q::Vantage] {
            for s in answers.get(&q).into_iter().flatten() {
                if !s.label("prefix").is_empty() {
                    prefixes.insert(s.label("prefix").to_string());
                }
            }
        }
    }

    let mut problems = Vec::new();
    if up.is_empty() {
        problems.push(Problem {
            kind: "unknown",
            what: format!(
                "Prometheus has no target of job \"{}\": check --job (the scrape job of every node's ribbridge) and that the ServiceMonitor is picked up",
                scope.job
            ),
        });
    }
    for s in answers.get(&Q::VantageUp).into_iter().flatten() {
        if s.value != 1.0 {
            problems.push(Problem {
                kind: "unknown",
                what: format!(
                    "{} (job \"{}\") not scraped: the router's view it exports is missing",
                    s.label("instance"),
                    s.label("job")
                ),
            });
        }
    }
    if prefixes.is_empty() {
        // No VIP row to show them in: the nodes that cannot be seen are
        // named here (they may be the ones holding every VIP).
        for (inst, node) in &names {
            let scrape = scrape_of(inst);
            if scrape != Scrape::Fresh {
                problems.push(Problem {
                    kind: "unknown",
                    what: if node == inst {
                        format!("{node}: {}", scrape.word())
                    } else {
                        format!("{node}: {} ({inst})", scrape.word())
                    },
                });
            }
        }
    }
    if prefixes.is_empty() && !up.is_empty() {
        problems.push(Problem {
            kind: "unknown",
            what: "no node reports any VIP (ribbridge_vip_state is empty): nothing to judge".into(),
        });
    }

    let vips: Vec<VipPicture> = prefixes
        .iter()
        .map(|prefix| {
            let mut vp = VipPicture {
                prefix: prefix.clone(),
                advertising: 0,
                routers: routers(answers, prefix, limit),
                nodes: Vec::new(),
                problems: Vec::new(),
            };
            for (inst, node) in &names {
                let key = (inst.clone(), prefix.clone());
                let scrape = scrape_of(inst);
                let state = states
                    .get(&key)
                    .and_then(|v| v.first())
                    .map(|s| s.label("state").to_string());
                if state.is_none() && scrape == Scrape::Fresh {
                    // Scraped, and no series of this VIP: the node does not
                    // hold it and is not configured with it.
                    continue;
                }
                let backend = backends.get(&key).and_then(|p| backend_word(p));
                let mut row = NodeRow {
                    node: node.clone(),
                    instance: inst.clone(),
                    scrape,
                    state: None,
                    writer: None,
                    backend: None,
                    address: None,
                    heal: None,
                    drained: None,
                    why: None,
                };
                if scrape != Scrape::Fresh {
                    let why = match scrape {
                        Scrape::Down => format!(
                            "Prometheus cannot scrape {inst}: ribbridge stopped, or the node is down"
                        ),
                        Scrape::Stale { age_secs } if age_secs.is_nan() => {
                            "no time of its last scrape: cannot say it is current".to_string()
                        }
                        Scrape::Stale { age_secs } => format!(
                            "last scraped {age_secs:.0} s ago, more than two scrape intervals ({limit:.0} s)"
                        ),
                        _ => format!("no scrape target of job \"{}\" for {inst}", scope.job),
                    };
                    vp.problems.push(Problem {
                        kind: "unknown",
                        what: format!("{node}: not scraped ({why})"),
                    });
                    row.why = Some(why);
                    vp.nodes.push(row);
                    continue;
                }
                let state = state.unwrap_or_default();
                if ADVERTISING.contains(&state.as_str()) {
                    vp.advertising += 1;
                }
                row.writer = match state.as_str() {
                    "orphaned" => Some("silent".into()),
                    "flapping" => Some("flapping".into()),
                    _ => None,
                };
                row.address = (state == "blackhole" && backend.as_deref() != Some("down"))
                    .then(|| "unusable".to_string());
                let gave_up = given_up
                    .get(&key)
                    .and_then(|v| v.first())
                    .is_some_and(|s| s.value > 0.0);
                let held_n = held.get(inst.as_str()).map_or(0.0, |s| s.value);
                let drift_n = drifts
                    .get(&key)
                    .and_then(|v| v.first())
                    .map_or(0.0, |s| s.value);
                row.heal = if gave_up {
                    Some("given up".into())
                } else if held_n > 0.0 && state == "withdrawn" {
                    Some(format!("held out by ribbridge ({held_n:.0} on node)"))
                } else if drift_n >= 0.5 {
                    let n = drift_n.round();
                    Some(format!("{n} drift{}/5m", if n == 1.0 { "" } else { "s" }))
                } else {
                    None
                };
                row.drained = drained.get(inst.as_str()).and_then(|s| known(s.value)).map(|v| v == 1.0);
                row.why = state_why(&state, backend.as_deref());
                if let Some(kind) = state_kind(&state) {
                    vp.problems.push(Problem {
                        kind,
                        what: format!(
                            "{node}: {state} ({})",
                            row.why.as_deref().unwrap_or("")
                        ),
                    });
                }
                row.backend = backend;
                row.state = Some(state);
                vp.nodes.push(row);
            }
            disagreements(&mut vp);
            if vp.nodes.is_empty() && vp.routers.is_empty() {
                vp.problems.push(Problem {
                    kind: "unknown",
                    what: "no node and no router has a series of this VIP".into(),
                });
            }
            vp
        })
        .collect();

    let all = problems.iter().chain(vips.iter().flat_map(|v| &v.problems));
    let verdict = all.fold(Verdict::Ok, |v, p| match (v, p.kind) {
        (Verdict::Unknown, _) | (_, "unknown") => Verdict::Unknown,
        _ => Verdict::Drift,
    });
    Picture {
        time,
        named_by,
        vips,
        problems,
        verdict,
    }
}

/// What the routers hold of `prefix`: every BMP station's routers, else
/// the router vantages.
fn routers(answers: &Answers, prefix: &str, limit: f64) -> Vec<RouterView> {
    let of = |q: Q| -> Vec<&Sample> {
        answers
            .get(&q)
            .into_iter()
            .flatten()
            .filter(|s| s.label("prefix") == prefix)
            .collect()
    };
    let fresh = |times: &[&Sample], s: &Sample, keys: &[&str]| {
        times
            .iter()
            .find(|t| keys.iter().all(|k| t.label(k) == s.label(k)))
            .is_some_and(|t| s.time - t.value <= limit)
    };
    let keys = ["instance", "router"];
    let (paths, stale, times) = (of(Q::RouterPaths), of(Q::RouterStale), of(Q::RouterTime));
    let mut out: Vec<RouterView> = paths
        .iter()
        .map(|s| RouterView {
            source: "bmp",
            router: s.label("router").to_string(),
            paths: known(s.value).filter(|_| fresh(&times, s, &keys)),
            stale_paths: stale
                .iter()
                .find(|t| keys.iter().all(|k| t.label(k) == s.label(k)))
                .and_then(|t| known(t.value)),
        })
        .collect();
    if out.is_empty() {
        let times = of(Q::VantageTime);
        out = of(Q::Vantage)
            .iter()
            .map(|s| RouterView {
                source: "router_vantage",
                router: match s.label("node") {
                    "" => s.label("instance").to_string(),
                    n => n.to_string(),
                },
                paths: known(s.value).filter(|_| fresh(&times, s, &["instance"])),
                stale_paths: None,
            })
            .collect();
    }
    out.sort_by(|a, b| a.router.cmp(&b.router));
    out
}

/// Each router against the nodes advertising.
fn disagreements(vp: &mut VipPicture) {
    let adv = vp.advertising as f64;
    for r in &vp.routers {
        let name = match r.source {
            "bmp" => format!("router {}", r.router),
            _ => format!("router {} (router vantage)", r.router),
        };
        let Some(paths) = r.paths else {
            vp.problems.push(Problem {
                kind: "unknown",
                what: format!("{name}: paths unknown (not synced, or its series stale)"),
            });
            continue;
        };
        let stale = r.stale_paths.unwrap_or(0.0);
        if stale > 0.0 {
            vp.problems.push(Problem {
                kind: "disagreement",
                what: format!(
                    "{name} keeps {stale:.0} stale path(s) under graceful restart: it still forwards to a node whose session dropped"
                ),
            });
        }
        if paths > adv {
            vp.problems.push(Problem {
                kind: "disagreement",
                what: format!(
                    "{name} holds {paths:.0} path(s), {adv:.0} node(s) advertise: it forwards to a node that does not report advertising"
                ),
            });
        } else if paths < adv {
            vp.problems.push(Problem {
                kind: "disagreement",
                what: format!(
                    "{name} holds {paths:.0} path(s), {adv:.0} node(s) advertise: it lacks paths the nodes send"
                ),
            });
        }
    }
}

#[cfg(test)]
mod tests;
