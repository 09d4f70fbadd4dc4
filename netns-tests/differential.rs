//! ribbridge's policy evaluator against bgpd itself: a differential test.
//!
//! A seeded generator (`policies`) writes route-maps, prefix-lists (with
//! `ge`/`le`), access-lists and community-lists, with `on-match next|goto`,
//! `continue N`, `call`, `match tag`, `match source-protocol`, `match
//! community`, `set tag|community|metric`, attached to the redistribution
//! of table 198 (`redistribute table-direct 198 route-map ...`; 8.4:
//! `redistribute table 198` through zebra's import) and to a neighbour's
//! outbound side (`neighbor X route-map|prefix-list ... out`, on the
//! neighbour, on its peer-group, or both), IPv4 and IPv6 (8.4: IPv4). Half
//! the policies use only what the evaluator evaluates today, half every
//! construct. Each round gives every node of a 2-node lab one policy per
//! family (node1's neighbours are members of peer-groups, node2's are
//! plain), applies them with `vtysh -f`, adds the policies' candidate
//! prefixes (at their entries' boundaries) to the nodes' table 198, then a
//! marker, and waits for the marker at the router: bgpd sends in the order
//! it learns, so every candidate has then been sent or filtered. The
//! round's routes are then withdrawn, and awaited gone, before the next.
//!
//! The truth: what the router holds from each node's session of the
//! family (`show bgp ipv4|ipv6 unicast neighbors NODE routes json`).
//! ribbridge's answer: the node bgpd's running configuration read as the
//! daemon reads it (`ribbridge::model::intent::parse`; on 8.4 with zebra's;
//! zebra's realm support from its `show version`),
//! `Intent::redistributed` and then `Intent::sent_to` for each of the
//! node's established peers of the family: sent iff both permit, not sent
//! if either denies, else it abstains (`Verdict::Unknown`). Every answer
//! must agree with bgpd or abstain: a disagreement fails the test and is
//! printed with the policy, the prefix, bgpd's answer and ribbridge's.
//!
//! Printed at the end: the cases, agreements, abstentions by reason (the
//! Unknown's text, its route-map name and sequence generalised) and by
//! construct (what stopped the evaluation), the disagreements.
//!
//! `RIBBRIDGE_DIFF_SEED` (default 1) picks the policies,
//! `RIBBRIDGE_DIFF_POLICIES` how many (CI: 200 on 10.7, in 50 rounds of
//! four; 60 on 8.4, in 30 rounds of two), `RIBBRIDGE_DIFF_CANDIDATES` the
//! candidates per policy (default 24), `RIBBRIDGE_DIFF_VERBOSE=1` prints
//! every policy and case. The bench's thousands (~0.6 s a round):
//! `RIBBRIDGE_DIFF_SEED=11 RIBBRIDGE_DIFF_POLICIES=2000 cargo test
//! --features failpoints --test netns -- --test-threads=1 --nocapture
//! differential_frr_10_7` (and `_8_4`), as root.
//!
//! What bgpd takes, found on the way (FRR 10.7): `continue` needs its
//! sequence (`continue N`, shown as `on-match goto N`); an `on-match` on a
//! deny entry fails mgmtd's validation; `match source-protocol` has no word
//! for the VIP table's routes (no `table-direct`), so it never matches
//! them.
//!
//! Every wait is on a state (the router's routes, the node's table, the
//! sessions) with a limit that fails the test; nothing asserts a duration.

mod policies;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use policies::{Dialect, Generator, Policy, Rng, Style};
use ribbridge::frr::VtyClient;
use ribbridge::model::Prefix;
use ribbridge::model::intent::{Family, Intent, Verdict};

use crate::support::{Lab, env_count, lab};

/// The limit of any one wait on bgpd (a marker's way to the router, the
/// withdrawal of a round's routes, the sessions after the restart).
const LIMIT: Duration = Duration::from_secs(30);
/// How often a waited-for state is read again.
const POLL: Duration = Duration::from_millis(20);

/// One lab node under test.
struct Node {
    index: usize,
    style: Style,
    bgpd: VtyClient,
    /// 8.4: zebra's configuration holds the import.
    zebra: Option<VtyClient>,
    /// zebra's realm support, from its `show version`, as the daemon reads
    /// it (a kernel route's realm is its tag only with it).
    realms: Option<bool>,
}

impl Node {
    fn ns(&self) -> String {
        format!("rb-node{}", self.index)
    }

    /// The router's address on this node's link (the node's peer).
    fn peer(&self, f: Family) -> String {
        match f {
            Family::Ipv4 => format!("198.18.{}.1", self.index),
            Family::Ipv6 => format!("fdbb:0:0:{}::1", self.index),
        }
    }

    /// The node's own address on the link (the router's neighbour).
    fn addr(&self, f: Family) -> String {
        match f {
            Family::Ipv4 => format!("198.18.{}.2", self.index),
            Family::Ipv6 => format!("fdbb:0:0:{}::2", self.index),
        }
    }

    /// The node's directory, the same path on the host and in its FRR
    /// root.
    fn dir(&self) -> PathBuf {
        PathBuf::from(format!("/run/ribbridge-lab/{}", self.ns()))
    }
}

/// The prefixes of a `... routes json` or `show bgp ... json` reply.
fn routes_of(json: &str, what: &str) -> BTreeSet<Prefix> {
    let v: serde_json::Value =
        serde_json::from_str(json).unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {json}"));
    v.get("routes")
        .and_then(|r| r.as_object())
        .map(|r| {
            r.keys()
                .map(|k| {
                    k.parse()
                        .unwrap_or_else(|e| panic!("{what}: route {k:?}: {e}"))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A show command's text; a failed command fails the test.
async fn show(vty: &VtyClient, cmd: &str) -> String {
    let r = vty
        .command(cmd)
        .await
        .unwrap_or_else(|e| panic!("{}: {cmd}: {e}", vty.path().display()));
    assert!(
        r.status.is_success(),
        "{}: {cmd}: {:?}: {}",
        vty.path().display(),
        r.status,
        r.text
    );
    r.text
}

/// What the router holds from `node`'s session of family `f`.
async fn received(router: &VtyClient, node: &Node, f: Family) -> BTreeSet<Prefix> {
    let cmd = format!(
        "show bgp {} unicast neighbors {} routes json",
        f.name(),
        node.addr(f)
    );
    routes_of(&show(router, &cmd).await, &cmd)
}

/// The node bgpd's own table of family `f` (what it redistributed).
async fn local_routes(node: &Node, f: Family) -> BTreeSet<Prefix> {
    let cmd = format!("show bgp {} unicast json", f.name());
    routes_of(&show(&node.bgpd, &cmd).await, &cmd)
}

/// Poll `check` until it holds; a limit passed fails the test, saying
/// `what`.
async fn await_state<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<(), String>>,
{
    let t = Instant::now();
    loop {
        match check().await {
            Ok(()) => return,
            Err(last) => assert!(
                t.elapsed() < LIMIT,
                "{what}: not within {LIMIT:?}; last: {last}"
            ),
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Apply `lines` to `node`'s daemons with `vtysh -f` (as frr-reload.py
/// applies its changes); any complaint fails the test, with the file.
fn apply(node: &Node, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    let file = node.dir().join("differential.conf");
    let text = lines.join("\n") + "\n";
    std::fs::write(&file, &text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let ns = node.ns();
    let path = file.display().to_string();
    let out = lab(&["exec", &ns, "vtysh", "-N", &ns, "-f", &path]);
    assert!(
        !out.contains('%') && !out.contains("line "),
        "{ns}: vtysh -f complained:\n{out}\nthe file:\n{text}"
    );
}

/// `ip -n NS -batch` of `op` (`add` or `del`) on every prefix, in order.
fn routes(ns: &str, op: &str, prefixes: &[Prefix]) {
    if prefixes.is_empty() {
        return;
    }
    let text: String = prefixes
        .iter()
        .map(|p| format!("route {op} {p} dev lo table 198 proto 248\n"))
        .collect();
    crate::support::ip_batch(ns, &text);
}

/// ribbridge's answer for one candidate and peer.
enum Ours {
    Sent,
    /// Not sent: the stage that denies it (and its verdict's text).
    NotSent(String),
    /// Abstained: the stage's Unknown, as tallied.
    Abstain {
        reason: String,
        constructs: Vec<String>,
    },
}

impl Ours {
    fn text(&self) -> String {
        match self {
            Ours::Sent => "sent".to_string(),
            Ours::NotSent(why) => format!("not sent ({why})"),
            Ours::Abstain { reason, .. } => format!("abstains ({reason})"),
        }
    }
}

/// An Unknown's text with its route-map name and sequence generalised: the
/// tally's key.
fn reason(stage: &str, v: &Verdict<'_>) -> String {
    let mut text = v.to_string();
    if let Verdict::Unknown { route_map, seq, .. } = v {
        if !route_map.is_empty() {
            text = text.replacen(&format!("route-map {route_map}"), "route-map M", 1);
        }
        if let Some(s) = seq {
            text = text.replacen(&format!("seq {s}"), "seq N", 1);
        }
    }
    format!("{stage}: {text}")
}

/// What stopped an Unknown, from the generator's own record of the
/// policy: the constructs of the entry it stopped at that ribbridge does
/// not evaluate today (its prefix-list matches aside), or the outbound
/// filters that are not route-maps. A case counts once for each.
fn constructs(policy: &Policy, v: &Verdict<'_>) -> Vec<String> {
    match v {
        Verdict::Unknown {
            route_map,
            seq: Some(s),
            ..
        } => match policy.entry(route_map, *s) {
            None => vec![format!("route-map {route_map} seq {s} (not generated)")],
            Some(e) => {
                let all = e.constructs();
                let stop: Vec<String> = all
                    .iter()
                    .filter(|c| {
                        !matches!(
                            **c,
                            "match prefix-list" | "match prefix-list (other family)"
                        )
                    })
                    .map(|c| (*c).to_string())
                    .collect();
                if stop.is_empty() {
                    all.iter().map(|c| (*c).to_string()).collect()
                } else {
                    stop
                }
            }
        },
        Verdict::Unknown {
            route_map,
            seq: None,
            ..
        } if !route_map.is_empty() => vec!["an undefined route-map".to_string()],
        Verdict::Unknown { .. } => policy
            .out
            .iter()
            .filter(|o| matches!(o, policies::Out::PrefixList { .. }))
            .map(|o| o.construct().to_string())
            .collect(),
        _ => Vec::new(),
    }
}

fn predict(policy: &Policy, r: Option<Verdict<'_>>, s: Verdict<'_>) -> Ours {
    match (r, s) {
        (None, _) => Ours::NotSent("no redistribution of table 198 in the family".to_string()),
        (Some(r @ Verdict::Deny { .. }), _) => Ours::NotSent(format!("redistribution: {r}")),
        (Some(_), s @ Verdict::Deny { .. }) => Ours::NotSent(format!("outbound: {s}")),
        (Some(Verdict::Permit), Verdict::Permit) => Ours::Sent,
        (Some(r @ Verdict::Unknown { .. }), _) => Ours::Abstain {
            reason: reason("redistribution", &r),
            constructs: constructs(policy, &r),
        },
        (Some(_), s) => Ours::Abstain {
            reason: reason("outbound", &s),
            constructs: constructs(policy, &s),
        },
    }
}

/// The run's figures.
#[derive(Default)]
struct Tally {
    policies: usize,
    cases: usize,
    /// Cases bgpd sent (whatever ribbridge said).
    bgpd_sent: usize,
    agree_sent: usize,
    agree_not_sent: usize,
    by_reason: BTreeMap<String, usize>,
    by_construct: BTreeMap<String, usize>,
    disagreements: Vec<String>,
}

impl Tally {
    fn abstentions(&self) -> usize {
        self.by_reason.values().sum()
    }

    fn print(&self, frr: &str, seed: u64, rounds: u32, took: Duration) {
        let mut t = String::new();
        let _ = writeln!(
            t,
            "differential: FRR {frr}, seed {seed}: {} policies in {rounds} rounds, {} cases (bgpd sent {}): {} agreements ({} sent, {} not sent), {} abstentions, {} disagreements; {:.1} s",
            self.policies,
            self.cases,
            self.bgpd_sent,
            self.agree_sent + self.agree_not_sent,
            self.agree_sent,
            self.agree_not_sent,
            self.abstentions(),
            self.disagreements.len(),
            took.as_secs_f64()
        );
        let _ = writeln!(t, "differential: abstentions by reason:");
        for (k, n) in sorted(&self.by_reason) {
            let _ = writeln!(t, "  {n:6}  {k}");
        }
        let _ = writeln!(
            t,
            "differential: abstentions by construct (what stopped the evaluation; a case counts once for each):"
        );
        for (k, n) in sorted(&self.by_construct) {
            let _ = writeln!(t, "  {n:6}  {k}");
        }
        for d in &self.disagreements {
            let _ = writeln!(t, "differential: DISAGREEMENT\n{d}");
        }
        eprint!("{t}");
    }
}

/// A tally's entries, the largest first.
fn sorted(m: &BTreeMap<String, usize>) -> Vec<(&String, &usize)> {
    let mut v: Vec<_> = m.iter().collect();
    v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    v
}

/// One node's FRR restarted with the base configuration
/// (`policies::base_config`).
fn base(node: &Node, dialect: Dialect) {
    let peers: Vec<(String, Family)> = [Family::Ipv4, Family::Ipv6]
        .into_iter()
        .map(|f| (node.peer(f), f))
        .collect();
    let text = policies::base_config(
        &node.ns(),
        &node.addr(Family::Ipv4),
        dialect,
        node.style,
        &peers,
    );
    let file = tempfile::NamedTempFile::new().expect("a configuration file");
    std::fs::write(file.path(), text).expect("write the base configuration");
    let path = file.path().display().to_string();
    lab(&["node-config", &node.ns(), &path]);
}

/// Both sessions of `node` (one per family) Established and done with
/// their initial update (the node sent its End-of-RIB), as the node's bgpd
/// sees them: a bgpd just restarted has no session but a new one. FRR 8.4
/// loses every later withdrawal to a peer whose outbound route-map is set
/// before that (its routes stay at the router, its Adj-RIB-Out holds them
/// with bgpd's table empty): the first round waits for it.
async fn sessions_up(node: &Node) {
    await_state(
        &format!(
            "{}'s sessions Established, their End-of-RIB sent",
            node.ns()
        ),
        || async {
            for f in [Family::Ipv4, Family::Ipv6] {
                let peer = node.peer(f);
                let s = node
                    .bgpd
                    .bgp_summary(f)
                    .await
                    .map_err(|e| format!("the {} summary: {e}", f.name()))?;
                if s.peers.get(&peer).is_none_or(|p| p.state != "Established") {
                    return Err(format!("{} to {peer} not Established: {s:?}", f.name()));
                }
                let json = show(&node.bgpd, &format!("show bgp neighbors {peer} json")).await;
                let v: serde_json::Value = serde_json::from_str(&json)
                    .map_err(|e| format!("show bgp neighbors {peer} json: {e}"))?;
                let mut sent = Vec::new();
                end_of_rib_sent(&v, &mut sent);
                if sent.is_empty() || sent.contains(&false) {
                    return Err(format!("{peer}: End-of-RIB sent {sent:?}"));
                }
            }
            Ok(())
        },
    )
    .await;
}

/// Every `endOfRibStatus.endOfRibSend` of a neighbour's JSON (one per
/// address family it is active in).
fn end_of_rib_sent(v: &serde_json::Value, out: &mut Vec<bool>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, v) in m {
                if k == "endOfRibStatus" {
                    if let Some(b) = v.get("endOfRibSend").and_then(serde_json::Value::as_bool) {
                        out.push(b);
                    }
                } else {
                    end_of_rib_sent(v, out);
                }
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|v| end_of_rib_sent(v, out)),
        _ => {}
    }
}

async fn differential(frr: &'static str, default_policies: usize) {
    let start = Instant::now();
    let seed = u64::try_from(env_count("RIBBRIDGE_DIFF_SEED", 1)).expect("a seed");
    let policies = env_count("RIBBRIDGE_DIFF_POLICIES", default_policies);
    let per_policy = env_count("RIBBRIDGE_DIFF_CANDIDATES", 24);
    // Every policy and every case printed (the bench's look at one seed).
    let verbose = env_count("RIBBRIDGE_DIFF_VERBOSE", 0) > 0;
    let dialect = Dialect {
        import: frr == "8.4",
    };
    let lab_guard = Lab::up(frr, 2, &["192.0.2.10/32"]);
    let sock = |ns: &str, d: &str| lab_guard.sockdir(ns).join(format!("{d}.vty"));
    let mut nodes = Vec::new();
    for (index, style) in [(1, Style::PeerGroups), (2, Style::Direct)] {
        let ns = format!("rb-node{index}");
        nodes.push(Node {
            index,
            style,
            bgpd: VtyClient::lazy(
                sock(&ns, "bgpd"),
                ribbridge::frr::vty::client::DEFAULT_TIMEOUT,
            ),
            zebra: dialect.import.then(|| {
                VtyClient::lazy(
                    sock(&ns, "zebra"),
                    ribbridge::frr::vty::client::DEFAULT_TIMEOUT,
                )
            }),
            realms: VtyClient::lazy(
                sock(&ns, "zebra"),
                ribbridge::frr::vty::client::DEFAULT_TIMEOUT,
            )
            .realms()
            .await
            .unwrap_or_else(|e| panic!("{ns}: zebra's show version: {e}")),
        });
    }
    let router = VtyClient::lazy(
        sock("rb-router", "bgpd"),
        ribbridge::frr::vty::client::DEFAULT_TIMEOUT,
    );
    for n in &nodes {
        base(n, dialect);
    }
    for n in &nodes {
        sessions_up(n).await;
    }
    let set_up = start.elapsed();

    let mut generator = Generator {
        rng: Rng::new(seed),
        candidates: per_policy,
    };
    let families = dialect.families();
    let per_round = nodes.len() * families.len();
    let rounds = u32::try_from(policies.div_ceil(per_round)).expect("a round count");
    let mut tally = Tally::default();
    // The policies in place on each node: removed at the next round.
    let mut previous: Vec<Vec<Policy>> = vec![Vec::new(); nodes.len()];
    for round in 1..=rounds {
        // 1. Each node's new policies in place of the last round's.
        let current: Vec<Vec<Policy>> = nodes
            .iter()
            .map(|n| {
                families
                    .iter()
                    .map(|f| generator.policy(round, *f, n.style))
                    .collect()
            })
            .collect();
        for (i, n) in nodes.iter().enumerate() {
            let mut lines: Vec<String> = Vec::new();
            for p in &previous[i] {
                lines.extend(p.remove(&n.peer(p.space.family)));
            }
            for p in &current[i] {
                lines.extend(p.create(&n.peer(p.space.family)));
            }
            apply(n, &lines);
        }
        // 2. What ribbridge reads: each node's running configuration.
        let mut intents: Vec<Intent> = Vec::new();
        let mut peers: Vec<BTreeMap<Family, Vec<String>>> = Vec::new();
        for n in &nodes {
            let bgpd = n
                .bgpd
                .running_config()
                .await
                .unwrap_or_else(|e| panic!("{}: bgpd's running configuration: {e}", n.ns()));
            let zebra =
                match &n.zebra {
                    Some(z) => Some(z.running_config().await.unwrap_or_else(|e| {
                        panic!("{}: zebra's running configuration: {e}", n.ns())
                    })),
                    None => None,
                };
            let mut intent = ribbridge::model::intent::parse(&bgpd, zebra.as_deref());
            intent.realms = n.realms;
            intents.push(intent);
            let mut by_family = BTreeMap::new();
            for f in families {
                let s = n
                    .bgpd
                    .bgp_summary(*f)
                    .await
                    .unwrap_or_else(|e| panic!("{}: bgp summary: {e}", n.ns()));
                let up: Vec<String> = s
                    .peers
                    .iter()
                    .filter(|(_, p)| p.state == "Established")
                    .map(|(a, _)| a.clone())
                    .collect();
                assert!(
                    up.iter().all(|a| *a == n.peer(*f)),
                    "{}: an unexpected {} peer: {up:?}",
                    n.ns(),
                    f.name()
                );
                by_family.insert(*f, up);
            }
            peers.push(by_family);
        }
        // 3. The candidates, then the marker, in each node's table 198.
        let markers: Vec<Prefix> = families
            .iter()
            .map(|f| policies::marker(*f, round))
            .collect();
        for (i, n) in nodes.iter().enumerate() {
            let mut all: Vec<Prefix> = current[i]
                .iter()
                .flat_map(|p| p.candidates.iter().copied())
                .collect();
            all.extend(&markers);
            routes(&n.ns(), "add", &all);
        }
        // 4. Each marker at the router: every candidate before it is
        // decided.
        for n in &nodes {
            for (f, m) in families.iter().zip(&markers) {
                await_state(
                    &format!(
                        "round {round}: {}'s {} marker {m} at the router",
                        n.ns(),
                        f.name()
                    ),
                    || async {
                        if received(&router, n, *f).await.contains(m) {
                            Ok(())
                        } else {
                            Err("absent".to_string())
                        }
                    },
                )
                .await;
            }
        }
        // 5. Truth against ribbridge's answer.
        for (i, n) in nodes.iter().enumerate() {
            for p in &current[i] {
                let f = p.space.family;
                let got = received(&router, n, f).await;
                let intent = &intents[i];
                tally.policies += 1;
                if verbose {
                    eprintln!(
                        "differential: round {round}, {} {}:\n    {}",
                        n.ns(),
                        f.name(),
                        p.create(&n.peer(f)).join("\n    ")
                    );
                }
                for c in &p.candidates {
                    let r = intent.redistributed(198, c);
                    for q in &peers[i][&f] {
                        tally.cases += 1;
                        let sent = got.contains(c);
                        let s = intent.sent_to(q, c);
                        let ours = predict(p, r, s);
                        tally.bgpd_sent += usize::from(sent);
                        if verbose {
                            eprintln!(
                                "    {c} to {q}: bgpd {}, ribbridge {}",
                                if sent { "sent" } else { "not sent" },
                                ours.text()
                            );
                        }
                        match (&ours, sent) {
                            (Ours::Sent, true) => tally.agree_sent += 1,
                            (Ours::NotSent(_), false) => tally.agree_not_sent += 1,
                            (Ours::Abstain { reason, constructs }, _) => {
                                *tally.by_reason.entry(reason.clone()).or_default() += 1;
                                for c in constructs {
                                    *tally.by_construct.entry(c.clone()).or_default() += 1;
                                }
                            }
                            (Ours::Sent, false) | (Ours::NotSent(_), true) => {
                                let r = r.map_or_else(|| "none".to_string(), |r| r.to_string());
                                let ours =
                                    format!("{} [redistributed: {r}; sent_to: {s}]", ours.text());
                                tally
                                    .disagreements
                                    .push(disagreement(n, p, c, q, sent, &ours));
                            }
                        }
                    }
                }
            }
        }
        // 6. The round's routes out again, everywhere: the next round's
        // policies meet no route of this one.
        for (i, n) in nodes.iter().enumerate() {
            let mut all: Vec<Prefix> = current[i]
                .iter()
                .flat_map(|p| p.candidates.iter().copied())
                .collect();
            all.extend(&markers);
            routes(&n.ns(), "del", &all);
        }
        for n in &nodes {
            for f in families {
                await_state(
                    &format!("round {round}: {}'s {} routes withdrawn", n.ns(), f.name()),
                    || async {
                        let (at_router, local) =
                            (received(&router, n, *f).await, local_routes(n, *f).await);
                        if at_router.is_empty() && local.is_empty() {
                            return Ok(());
                        }
                        let cmd = format!(
                            "show bgp {} unicast neighbors {} advertised-routes",
                            f.name(),
                            n.peer(*f)
                        );
                        Err(format!(
                            "at the router {at_router:?}, in the node's table {local:?}; the node's {cmd}:\n{}",
                            show(&n.bgpd, &cmd).await
                        ))
                    },
                )
                .await;
            }
        }
        previous = current;
    }
    tally.print(frr, seed, rounds, start.elapsed());
    eprintln!(
        "differential: FRR {frr}: the lab and the base configuration took {:.1} s, the rounds {:.1} s ({:.2} s each)",
        set_up.as_secs_f64(),
        (start.elapsed() - set_up).as_secs_f64(),
        (start.elapsed() - set_up).as_secs_f64() / f64::from(rounds.max(1))
    );
    drop(lab_guard);
    assert!(
        tally.disagreements.is_empty(),
        "FRR {frr}: {} disagreements between ribbridge's evaluator and bgpd (printed above)",
        tally.disagreements.len()
    );
    assert!(
        tally.agree_sent > 0 && tally.agree_not_sent > 0,
        "FRR {frr}: no agreement of one kind (sent {}, not sent {}): the generator tests nothing",
        tally.agree_sent,
        tally.agree_not_sent
    );
}

/// A disagreement's report: the node, the policy, the prefix, bgpd's
/// answer and ribbridge's (`ours`, with its verdicts).
fn disagreement(n: &Node, p: &Policy, c: &Prefix, q: &str, sent: bool, ours: &str) -> String {
    format!(
        "  {} ({:?}), round {}, {} {c} to {q}: bgpd {}; ribbridge {ours}\n  the policy (beside the base configuration's marker entries, route-map NAME permit 1 and prefix-list NAME seq 1):\n    {}",
        n.ns(),
        n.style,
        p.round,
        p.space.family.name(),
        if sent { "sent it" } else { "did not send it" },
        p.create(&n.peer(p.space.family)).join("\n    ")
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn differential_frr_10_7() {
    differential("10.7", 200).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn differential_frr_8_4() {
    differential("8.4", 60).await;
}
