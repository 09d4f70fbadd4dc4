//! The kernel mirror against the real kernel. Each test builds its
//! own namespace `rbk-*` (no FRR, not the shared lab) with a veth pair, runs
//! the `Watcher` inside it, changes routes with `ip`, and then requires the
//! mirror to equal `ip -json route show table 198` and `ip -6 -json ...`
//! exactly (legs sorted: the kernel orders them differently in dumps and
//! events). Waiting is on the watcher's events, never on sleeps.

use std::process::Command;
use std::time::{Duration, Instant};

use ribbridge::kernel::show::ip_json;
use ribbridge::kernel::{
    KernelEvent, KernelView, KernelWriter, ResyncReason, Route, Watcher, WatcherConfig,
};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use crate::support::{in_netns, require_root};

const TABLE: u32 = 198;
const LIMIT: Duration = Duration::from_secs(20);

/// A namespace of our own (`rbk-TAG-PID`) with veth `va` (10.9.0.1/24, 2001:db8:9::1/64)
/// and its peer `vb` (10.9.0.254/24, 2001:db8:9::fe/64), both up. Dropping
/// it deletes the namespace (and everything in it).
struct Ns {
    name: String,
}

impl Ns {
    fn new(tag: &str) -> Ns {
        require_root();
        // The process id keeps two test runs (two worktrees) apart.
        let name = format!("rbk-{tag}-{}", std::process::id());
        let _ = Command::new("ip").args(["netns", "del", &name]).output();
        run(&["ip", "netns", "add", &name]);
        let ns = Ns { name };
        for cmd in [
            "link set lo up",
            "link add va type veth peer name vb",
            "link set va up",
            "link set vb up",
            "addr add 10.9.0.1/24 dev va",
            "addr add 10.9.0.254/24 dev vb",
            "-6 addr add 2001:db8:9::1/64 dev va nodad",
            "-6 addr add 2001:db8:9::fe/64 dev vb nodad",
        ] {
            ns.ip(cmd);
        }
        ns
    }

    /// `ip -n NS ARGS`, failing the test with ip's message when it fails.
    fn ip(&self, args: &str) -> String {
        let mut a = vec!["ip", "-n", &self.name];
        a.extend(args.split_whitespace());
        run(&a)
    }

    /// `ip [-6] -json route show table 198`, parsed.
    fn ip_routes(&self, v6: bool) -> Value {
        let fam = if v6 { "-6" } else { "-4" };
        let out = Command::new("ip")
            .args([
                "-n", &self.name, fam, "-json", "route", "show", "table", "198",
            ])
            .output()
            .expect("run ip");
        let err = String::from_utf8_lossy(&out.stderr);
        // iproute2 fails on a table that has no route in this family.
        if !out.status.success() && err.contains("FIB table does not exist") {
            return Value::Array(Vec::new());
        }
        assert!(out.status.success(), "ip route show failed: {err}");
        let out = String::from_utf8_lossy(&out.stdout).into_owned();
        serde_json::from_str(if out.trim().is_empty() { "[]" } else { &out })
            .unwrap_or_else(|e| panic!("ip -json output is not JSON ({e}): {out}"))
    }
}

impl Ns {
    fn ip_table_199_is_empty(&self) -> bool {
        let out = Command::new("ip")
            .args(["-n", &self.name, "route", "show", "table", "199"])
            .output()
            .expect("run ip");
        out.stdout.is_empty()
    }
}

impl Drop for Ns {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .output();
    }
}

fn run(args: &[&str]) -> String {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", args.join(" ")));
    assert!(
        out.status.success(),
        "{} failed ({}): {}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Routes sorted, legs sorted: the comparison is exact but order-free.
fn canonical(v: &Value) -> Vec<String> {
    let mut routes: Vec<String> = v
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|mut r| {
            if let Some(Value::Array(legs)) = r.get_mut("nexthops") {
                legs.sort_by_key(|l| l.to_string());
            }
            r.to_string()
        })
        .collect();
    routes.sort();
    routes
}

/// The watcher running in a namespace, and what it told us.
struct Mirrored {
    rx: mpsc::Receiver<KernelEvent>,
    view: KernelView,
    seen: Vec<KernelEvent>,
    _stop: oneshot::Sender<()>,
}

impl Mirrored {
    fn start(ns: &Ns, rcvbuf: usize, capacity: usize) -> Mirrored {
        Mirrored::start_with(ns, rcvbuf, capacity, Duration::from_secs(3600))
    }

    fn start_with(ns: &Ns, rcvbuf: usize, capacity: usize, period: Duration) -> Mirrored {
        let config = WatcherConfig {
            tables: vec![TABLE],
            prefixes: None,
            rcvbuf,
            resync_period: period,
        };
        Mirrored::start_config(ns, config, capacity)
    }

    fn start_config(ns: &Ns, config: WatcherConfig, capacity: usize) -> Mirrored {
        let rcvbuf = config.rcvbuf;
        let rt = tokio::runtime::Handle::current();
        let w = in_netns(&ns.name, move || {
            let _g = rt.enter();
            Watcher::new(config).expect("watcher in the namespace")
        });
        let view = w.view();
        eprintln!(
            "watcher rcvbuf asked {rcvbuf}, kernel reports {:?}",
            w.rcvbuf().map_err(|e| e.to_string())
        );
        let (tx, rx) = mpsc::channel(capacity);
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let r = w
                .run(tx, async {
                    let _ = stopped.await;
                })
                .await;
            if let Err(e) = r {
                panic!("watcher failed: {e}");
            }
        });
        Mirrored {
            rx,
            view,
            seen: Vec::new(),
            _stop: stop,
        }
    }

    /// Wait for an event matching `want` (events before it are kept in
    /// `seen`).
    async fn expect(&mut self, what: &str, want: impl Fn(&KernelEvent) -> bool) -> KernelEvent {
        let deadline = Instant::now() + LIMIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, self.rx.recv()).await {
                Ok(Some(e)) => {
                    self.seen.push(e.clone());
                    if want(&e) {
                        return e;
                    }
                }
                Ok(None) => panic!("the watcher stopped while waiting for {what}"),
                Err(_) => panic!("no {what} within {LIMIT:?}; saw {:#?}", self.seen),
            }
        }
    }

    /// Wait for the `Resynced` event of `reason`.
    async fn expect_resync(&mut self, reason: ResyncReason) {
        self.expect(
            reason.label(),
            |e| matches!(e, KernelEvent::Resynced { reason: r, .. } if *r == reason),
        )
        .await;
    }

    fn mirror_json(&self, v6: bool) -> Value {
        ip_json(&self.view.snapshot(), TABLE, v6)
    }

    /// Wait (on events) until the mirror equals `ip -json route show table
    /// 198` in both families; fail with both when it does not.
    async fn settle(&mut self, ns: &Ns, step: &str) {
        let deadline = Instant::now() + LIMIT;
        loop {
            let (mine4, ip4) = (
                canonical(&self.mirror_json(false)),
                canonical(&ns.ip_routes(false)),
            );
            let (mine6, ip6) = (
                canonical(&self.mirror_json(true)),
                canonical(&ns.ip_routes(true)),
            );
            if mine4 == ip4 && mine6 == ip6 {
                return;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, self.rx.recv()).await {
                Ok(Some(e)) => self.seen.push(e),
                _ => panic!(
                    "{step}: the mirror differs from the kernel after {LIMIT:?}\nmirror v4 {mine4:#?}\nip v4 {ip4:#?}\nmirror v6 {mine6:#?}\nip v6 {ip6:#?}"
                ),
            }
        }
    }

    fn route(&self, prefix: &str) -> Route {
        let p = prefix.parse().expect("prefix");
        self.view
            .snapshot()
            .routes
            .iter()
            .find(|r| r.prefix == p)
            .cloned()
            .unwrap_or_else(|| panic!("{prefix} is not in the mirror"))
    }

    fn take_seen(&mut self) -> Vec<KernelEvent> {
        std::mem::take(&mut self.seen)
    }
}

fn is_route_event(e: &KernelEvent, prefix: &str) -> bool {
    let p: ribbridge::model::Prefix = prefix.parse().expect("prefix");
    match e {
        KernelEvent::RouteAdded { route }
        | KernelEvent::RouteRemoved { route }
        | KernelEvent::Reasserted { route } => route.prefix == p,
        KernelEvent::RouteChanged { new, .. } => new.prefix == p,
        _ => false,
    }
}

async fn started(ns: &Ns, rcvbuf: usize) -> Mirrored {
    let mut m = Mirrored::start(ns, rcvbuf, 100_000);
    m.expect_resync(ResyncReason::Startup).await;
    m
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kernel_mirror_add_delete_replace_both_families() {
    let ns = Ns::new("adr");
    // One route present before the watcher starts: the startup dump has it.
    ns.ip("route add 192.0.2.9/32 dev va table 198 proto 248");
    let mut m = started(&ns, 4 << 20).await;
    m.settle(&ns, "startup").await;

    for (v, vip, gw1, gw2) in [
        ("-4", "192.0.2.10/32", "10.9.0.2", "10.9.0.3"),
        ("-6", "2001:db8::10/128", "2001:db8:9::2", "2001:db8:9::3"),
    ] {
        ns.ip(&format!(
            "{v} route add {vip} via {gw1} dev va table 198 proto 248"
        ));
        m.expect("RouteAdded", |e| {
            matches!(e, KernelEvent::RouteAdded { .. }) && is_route_event(e, vip)
        })
        .await;
        m.settle(&ns, &format!("{vip} add")).await;

        ns.ip(&format!(
            "{v} route replace {vip} via {gw2} dev va table 198 proto 248"
        ));
        let e = m
            .expect("RouteChanged", |e| {
                matches!(e, KernelEvent::RouteChanged { .. }) && is_route_event(e, vip)
            })
            .await;
        if let KernelEvent::RouteChanged { old, new } = e {
            assert_eq!(
                old.nexthops[0].gateway.map(|g| g.to_string()).as_deref(),
                Some(gw1)
            );
            assert_eq!(
                new.nexthops[0].gateway.map(|g| g.to_string()).as_deref(),
                Some(gw2)
            );
        }
        m.settle(&ns, &format!("{vip} replace")).await;

        ns.ip(&format!("{v} route del {vip} table 198"));
        m.expect("RouteRemoved", |e| {
            matches!(e, KernelEvent::RouteRemoved { .. }) && is_route_event(e, vip)
        })
        .await;
        m.settle(&ns, &format!("{vip} delete")).await;
    }

    // A route in an unwatched table never shows.
    ns.ip("route add 192.0.2.99/32 dev va table 199 proto 248");
    ns.ip("route add 192.0.2.11/32 dev va table 198 proto 248");
    m.expect("RouteAdded .11", |e| is_route_event(e, "192.0.2.11/32"))
        .await;
    assert!(
        !m.seen.iter().any(|e| is_route_event(e, "192.0.2.99/32")),
        "a table-199 route leaked into the mirror: {:#?}",
        m.seen
    );
    m.settle(&ns, "unwatched table").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kernel_mirror_ecmp_inline_and_nexthop_groups() {
    let ns = Ns::new("ecmp");
    let mut m = started(&ns, 4 << 20).await;

    // Inline multipath, both families, then one leg appended / removed.
    ns.ip("route add 192.0.2.20/32 table 198 proto 248 nexthop via 10.9.0.2 dev va weight 1 nexthop via 10.9.0.3 dev va weight 3");
    m.expect("v4 multipath", |e| is_route_event(e, "192.0.2.20/32"))
        .await;
    m.settle(&ns, "v4 multipath add").await;
    assert_eq!(m.route("192.0.2.20/32").ecmp_legs(), 2);

    ns.ip("-6 route add 2001:db8::20/128 table 198 proto 248 nexthop via 2001:db8:9::2 dev va nexthop via 2001:db8:9::3 dev va");
    m.expect("v6 multipath", |e| is_route_event(e, "2001:db8::20/128"))
        .await;
    m.settle(&ns, "v6 multipath add").await;
    assert_eq!(m.route("2001:db8::20/128").ecmp_legs(), 2);

    // IPv6 appends a sibling with an event that lists the new leg first.
    ns.ip("-6 route append 2001:db8::20/128 table 198 proto 248 via 2001:db8:9::4 dev va");
    m.expect(
        "v6 append",
        |e| matches!(e, KernelEvent::RouteChanged { new, .. } if new.ecmp_legs() == 3),
    )
    .await;
    m.settle(&ns, "v6 append").await;
    // ... and deletes one sibling with an event that carries only that leg.
    ns.ip("-6 route del 2001:db8::20/128 table 198 via 2001:db8:9::2 dev va");
    m.expect(
        "v6 leg delete",
        |e| matches!(e, KernelEvent::RouteChanged { new, .. } if new.ecmp_legs() == 2),
    )
    .await;
    m.settle(&ns, "v6 leg delete").await;

    // Nexthop objects and groups.
    for cmd in [
        "nexthop add id 1 via 10.9.0.2 dev va",
        "nexthop add id 2 via 10.9.0.3 dev va",
        "nexthop add id 10 group 1/2,4",
        "nexthop add id 4 via 2001:db8:9::2 dev va",
        "nexthop add id 5 via 2001:db8:9::3 dev va",
        "nexthop add id 11 group 4/5",
    ] {
        ns.ip(cmd);
    }
    ns.ip("route add 192.0.2.21/32 table 198 proto 248 nhid 10");
    ns.ip("-6 route add 2001:db8::21/128 table 198 proto 248 nhid 11");
    m.expect("v6 nhid route", |e| is_route_event(e, "2001:db8::21/128"))
        .await;
    m.settle(&ns, "routes via nexthop groups").await;
    assert_eq!(m.route("192.0.2.21/32").ecmp_legs(), 2);
    assert_eq!(m.route("2001:db8::21/128").ecmp_legs(), 2);
    let weights: Vec<u16> = m
        .route("192.0.2.21/32")
        .nexthops
        .iter()
        .map(|n| n.weight)
        .collect();
    assert_eq!(weights, [1, 4]);

    // The group changes under the route: legs follow.
    ns.ip("nexthop replace id 10 group 1,2/2,5");
    m.expect("group replace", |e| matches!(e, KernelEvent::RouteChanged { new, .. } if new.nexthops.iter().any(|n| n.weight == 5))).await;
    m.settle(&ns, "group replace").await;
    ns.ip("nexthop replace id 11 group 4");
    m.expect("v6 group shrink", |e| matches!(e, KernelEvent::RouteChanged { new, .. } if new.prefix.to_string() == "2001:db8::21/128" && new.ecmp_legs() == 1)).await;
    m.settle(&ns, "v6 group shrink").await;

    // Deleting a member nexthop removes it from the group.
    ns.ip("nexthop del id 2");
    m.expect("member deleted", |e| matches!(e, KernelEvent::RouteChanged { new, .. } if new.prefix.to_string() == "192.0.2.21/32" && new.ecmp_legs() == 1)).await;
    m.settle(&ns, "member nexthop deleted").await;
    eprintln!("events seen: {:#?}", m.take_seen().len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kernel_mirror_realm_only_replace_is_a_reassertion() {
    let ns = Ns::new("realm");
    let mut m = started(&ns, 4 << 20).await;
    ns.ip("route add 192.0.2.30/32 dev va table 198 proto 248 realm 1");
    m.expect("add", |e| is_route_event(e, "192.0.2.30/32"))
        .await;
    m.settle(&ns, "add with realm 1").await;
    let before = m.view.counters().snapshot().reassertions;

    for realm in [2, 1, 2] {
        ns.ip(&format!(
            "route replace 192.0.2.30/32 dev va table 198 proto 248 realm {realm}"
        ));
        let e = m
            .expect("Reasserted", |e| {
                matches!(e, KernelEvent::Reasserted { .. })
            })
            .await;
        if let KernelEvent::Reasserted { route } = e {
            assert_eq!(route.realm, Some(realm));
        }
        m.settle(&ns, &format!("realm {realm}")).await;
    }
    let after = m.view.counters().snapshot().reassertions;
    assert_eq!(after - before, 3, "three realm flips, three re-assertions");
    assert!(
        !m.seen
            .iter()
            .any(|e| matches!(e, KernelEvent::RouteChanged { .. })),
        "a realm-only replace was reported as a change: {:#?}",
        m.seen
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kernel_mirror_link_down_flushes_silently() {
    let ns = Ns::new("down");
    let mut m = started(&ns, 4 << 20).await;
    ns.ip("route add 192.0.2.40/32 via 10.9.0.2 dev va table 198 proto 248");
    ns.ip("route add 192.0.2.41/32 dev va table 198 proto 248");
    ns.ip("-6 route add 2001:db8::40/128 via 2001:db8:9::2 dev va table 198 proto 248");
    for cmd in [
        "nexthop add id 1 via 10.9.0.2 dev va",
        "nexthop add id 2 via 10.9.0.3 dev va",
        "nexthop add id 10 group 1/2",
        "route add 192.0.2.43/32 table 198 proto 248 nhid 10",
    ] {
        ns.ip(cmd);
    }
    ns.ip("route add 192.0.2.42/32 dev vb table 198 proto 248");
    m.expect("routes", |e| is_route_event(e, "192.0.2.42/32"))
        .await;
    m.settle(&ns, "routes via va and vb").await;

    ns.ip("link set va down");
    m.expect_resync(ResyncReason::LinkDown).await;
    m.settle(&ns, "va down").await;
    assert!(m.view.counters().resyncs(ResyncReason::LinkDown) >= 1);
    // The kernel drops nexthop objects on a down device without
    // RTM_DELNEXTHOP: only the re-dump knows they are gone.
    assert!(ns.ip("nexthop show").trim().is_empty());
    assert!(m.view.snapshot().nexthop_objects.is_empty());
    eprintln!(
        "after va down, ip v4: {}  v6: {}",
        ns.ip_routes(false),
        ns.ip_routes(true)
    );
    // Back up: the carrier returns to vb and the kernel clears `linkdown`
    // on its route without a route event.
    ns.ip("link set va up");
    m.expect_resync(ResyncReason::LinkUp).await;
    m.settle(&ns, "va up again").await;
    let flushed_without_event = m
        .seen
        .iter()
        .filter(|e| matches!(e, KernelEvent::RouteRemoved { .. }))
        .count();
    eprintln!("route removals the resync found: {flushed_without_event}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kernel_mirror_address_removal_flushes_silently() {
    let ns = Ns::new("addr");
    let mut m = started(&ns, 4 << 20).await;
    ns.ip("route add 192.0.2.50/32 via 10.9.0.2 dev va table 198 proto 248");
    ns.ip("-6 route add 2001:db8::50/128 via 2001:db8:9::2 dev va table 198 proto 248");
    m.expect("v6 route", |e| is_route_event(e, "2001:db8::50/128"))
        .await;
    m.settle(&ns, "routes via va's subnets").await;

    ns.ip("addr del 10.9.0.1/24 dev va");
    m.expect_resync(ResyncReason::AddressRemoved).await;
    m.settle(&ns, "v4 address removed").await;
    ns.ip("-6 addr del 2001:db8:9::1/64 dev va");
    m.expect_resync(ResyncReason::AddressRemoved).await;
    m.settle(&ns, "v6 address removed").await;
    assert!(m.view.counters().resyncs(ResyncReason::AddressRemoved) >= 2);
    assert!(
        m.seen
            .iter()
            .any(|e| matches!(e, KernelEvent::AddressRemoved { len: 24, .. }))
    );
    eprintln!(
        "after address removal, ip v4: {}  v6: {}",
        ns.ip_routes(false),
        ns.ip_routes(true)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kernel_mirror_overrun_flood_in_unwatched_table() {
    let ns = Ns::new("flood");
    // The smallest buffer the kernel allows (2 304 bytes: two or three
    // notifications): no reader keeps up with `ip -batch` through that.
    let mut m = started(&ns, 1).await;
    ns.ip("route add 192.0.2.60/32 dev va table 198 proto 248");
    ns.ip("-6 route add 2001:db8::60/128 dev va table 198 proto 248");
    m.settle(&ns, "before the flood").await;
    let before = m.view.counters().snapshot();

    // 100 000 changes in table 199 with watched changes in the middle.
    let mut batch = String::new();
    for i in 0..100_000u32 {
        if i == 50_000 {
            batch += "route replace 192.0.2.60/32 via 10.9.0.2 dev va table 198 proto 248\n";
            batch += "route add 192.0.2.61/32 dev va table 198 proto 248\n";
            batch += "route del 2001:db8::60/128 table 198\n";
        }
        batch += &format!(
            "route add 10.{}.{}.{}/32 dev va table 199\n",
            100 + (i >> 16),
            (i >> 8) & 255,
            i & 255
        );
    }
    let file = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(file.path(), batch).expect("write batch");
    let path = file.path().to_string_lossy().into_owned();
    let t = Instant::now();
    ns.ip(&format!("-batch {path}"));
    eprintln!(
        "flood of 100000 unwatched + 3 watched changes took {:?}",
        t.elapsed()
    );

    m.expect_resync(ResyncReason::Overrun).await;
    m.settle(&ns, "after the flood").await;
    let after = m.view.counters().snapshot();
    eprintln!("counters before {before:?}\ncounters after {after:?}");
    assert!(after.overruns > before.overruns, "no overrun counted");
    assert!(
        after.resyncs["overrun"] > before.resyncs["overrun"],
        "no overrun resync counted"
    );
    let r = m.route("192.0.2.60/32");
    assert_eq!(
        r.nexthops[0].gateway.map(|g| g.to_string()).as_deref(),
        Some("10.9.0.2")
    );
    m.route("192.0.2.61/32");
    assert!(
        !m.view
            .snapshot()
            .routes
            .iter()
            .any(|r| r.prefix.to_string() == "2001:db8::60/128")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kernel_heal_primitives_write_only_watched_tables() {
    let ns = Ns::new("heal");
    let mut m = started(&ns, 4 << 20).await;
    ns.ip("route add 192.0.2.70/32 via 10.9.0.2 dev va table 198 proto 248 realm 1");
    ns.ip("-6 route add 2001:db8::70/128 table 198 proto 248 nexthop via 2001:db8:9::2 dev va nexthop via 2001:db8:9::3 dev va");
    m.expect("v6 route", |e| is_route_event(e, "2001:db8::70/128"))
        .await;
    m.settle(&ns, "routes to heal").await;
    let v4 = m.route("192.0.2.70/32");
    let v6 = m.route("2001:db8::70/128");

    let (v4c, v6c) = (v4.clone(), v6.clone());
    let written = in_netns(&ns.name, move || {
        let mut w = KernelWriter::new([TABLE]).expect("writer");
        let written = w.replace_toggling_realm(&v4c).expect("realm toggle");
        let written6 = w.replace_toggling_realm(&v6c).expect("IPv6 re-assertion");
        assert_eq!(written6, v6c, "IPv6 has no realm to toggle");
        w.delete_then_add(&v6c).expect("delete then add");
        let mut other = v4c.clone();
        other.table = 199;
        let e = w
            .replace_toggling_realm(&other)
            .expect_err("table 199 must be refused");
        assert!(e.to_string().contains("table 199"), "{e}");
        assert!(w.delete_then_add(&other).is_err());
        w.add_address_on_lo("192.0.2.70/32".parse().expect("prefix"))
            .expect("address on lo");
        written
    });
    assert_eq!(written.realm, Some(2));
    m.expect(
        "Reasserted",
        |e| matches!(e, KernelEvent::Reasserted { route } if route.realm == Some(2)),
    )
    .await;
    m.expect("IPv6 Reasserted", |e| {
        matches!(e, KernelEvent::Reasserted { .. }) && is_route_event(e, "2001:db8::70/128")
    })
    .await;
    m.expect("v6 removed", |e| {
        matches!(e, KernelEvent::RouteRemoved { .. }) && is_route_event(e, "2001:db8::70/128")
    })
    .await;
    m.expect(
        "v6 added",
        |e| matches!(e, KernelEvent::RouteAdded { route } if *route == v6),
    )
    .await;
    m.expect("address on lo", |e| matches!(e, KernelEvent::AddressAdded { prefix, .. } if prefix.to_string() == "192.0.2.70/32")).await;
    m.settle(&ns, "after heals").await;
    assert!(ns.ip_table_199_is_empty(), "table 199 was written");
    assert!(ns.ip("addr show dev lo").contains("192.0.2.70/32"));
    assert!(
        m.view
            .snapshot()
            .addresses
            .iter()
            .any(|a| a.prefix.to_string() == "192.0.2.70/32" && a.len == 32)
    );

    in_netns(&ns.name, || {
        let mut w = KernelWriter::new([TABLE]).expect("writer");
        w.remove_address_on_lo("192.0.2.70/32".parse().expect("prefix"))
            .expect("remove address");
    });
    m.expect("address gone", |e| matches!(e, KernelEvent::AddressRemoved { prefix, .. } if prefix.to_string() == "192.0.2.70/32")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kernel_command_prints_like_ip_json() {
    let ns = Ns::new("cli");
    for cmd in [
        "route add 192.0.2.80/32 dev va table 198 proto 248 realm 1",
        "route add 192.0.2.84/32 via 10.9.0.2 dev va table 198 proto 248 src 10.9.0.1",
        "route add 192.0.2.81/32 table 198 proto 248 nexthop via 10.9.0.2 dev va weight 1 nexthop via 10.9.0.3 dev va weight 3",
        "route add blackhole 192.0.2.82/32 table 198 metric 5",
        "nexthop add id 1 via 10.9.0.2 dev va",
        "nexthop add id 2 via 10.9.0.3 dev va",
        "nexthop add id 10 group 1/2,4",
        "route add 192.0.2.83/32 table 198 proto 248 nhid 10",
        "-6 route add 2001:db8::80/128 dev va table 198 proto 248",
        "-6 route add 2001:db8::81/128 table 198 proto 248 nexthop via 2001:db8:9::2 dev va nexthop via 2001:db8:9::3 dev va",
    ] {
        ns.ip(cmd);
    }
    let bin = env!("CARGO_BIN_EXE_ribbridge");
    for (fam, v6) in [("4", false), ("6", true)] {
        let out = run(&[
            "ip", "netns", "exec", &ns.name, bin, "kernel", "--table", "198", "--json", "--family",
            fam,
        ]);
        let mine: Value = serde_json::from_str(&out).expect("ribbridge kernel --json prints JSON");
        assert_eq!(
            canonical(&mine),
            canonical(&ns.ip_routes(v6)),
            "family {fam}"
        );
    }
    let text = run(&[
        "ip", "netns", "exec", &ns.name, bin, "kernel", "--table", "198",
    ]);
    eprintln!("{text}");
    // The text is `ip route`'s: each route line as iproute2 prints it
    // (its `src`, no field of our own), legs indented below.
    let ip_text = ns_ip_text(&ns.name);
    for line in [
        "192.0.2.83 nhid 10 proto 248",
        "192.0.2.84 via 10.9.0.2 dev va proto 248 src 10.9.0.1",
    ] {
        assert!(
            text.lines().any(|l| l.trim_end() == line),
            "ribbridge: {line}\n{text}"
        );
        assert!(
            ip_text.lines().any(|l| l.trim_end() == line),
            "ip: {line}\n{ip_text}"
        );
    }
    assert!(!text.contains("ecmp"), "{text}");
}

/// `ip route show table 198` in a namespace.
fn ns_ip_text(ns: &str) -> String {
    run(&[
        "ip", "netns", "exec", ns, "ip", "route", "show", "table", "198",
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kernel_mirror_full_channel_is_answered_by_a_resync() {
    let ns = Ns::new("chan");
    // Room for two events. The startup (links, addresses) overflows it
    // unless this reader keeps up; either way a resync ends it.
    let mut m = Mirrored::start(&ns, 4 << 20, 2);
    m.expect("the startup or channel-full resync", |e| {
        matches!(
            e,
            KernelEvent::Resynced {
                reason: ResyncReason::Startup | ResyncReason::ChannelFull,
                ..
            }
        )
    })
    .await;
    let dropped_before = m.view.counters().snapshot().dropped_events;
    let mut batch = String::new();
    for i in 0..10 {
        batch += &format!(
            "route add 192.0.2.{}/32 dev va table 198 proto 248\n",
            100 + i
        );
    }
    let file = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(file.path(), batch).expect("write batch");
    ns.ip(&format!("-batch {}", file.path().to_string_lossy()));
    // Read nothing until the watcher has dropped events (it cannot fit ten
    // in two places); wait on its change notification, not on time.
    let mut view = m.view.clone();
    tokio::time::timeout(LIMIT, async {
        while view.counters().snapshot().dropped_events == dropped_before {
            assert!(view.changed().await, "the watcher stopped");
        }
    })
    .await
    .expect("the watcher never dropped an event with a full channel");
    let e = m
        .expect("a resync carrying all ten routes", |e| {
            matches!(e, KernelEvent::Resynced { reason: ResyncReason::ChannelFull, routes: Some(routes) } if routes.len() == 10)
        })
        .await;
    assert!(matches!(e, KernelEvent::Resynced { .. }));
    m.settle(&ns, "after a full channel").await;
    let c = m.view.counters().snapshot();
    eprintln!("counters: {c:?}");
    assert!(c.dropped_events > dropped_before && c.resyncs["channel_full"] >= 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kernel_mirror_periodic_resync_is_quiet_when_nothing_changed() {
    let ns = Ns::new("timer");
    ns.ip("route add 192.0.2.90/32 dev va table 198 proto 248");
    let mut m = Mirrored::start_with(&ns, 4 << 20, 1000, Duration::from_millis(200));
    m.expect_resync(ResyncReason::Startup).await;
    m.take_seen();
    // A no-op replace: the kernel sends nothing; the timer re-dumps anyway.
    ns.ip("route replace 192.0.2.90/32 dev va table 198 proto 248");
    m.expect_resync(ResyncReason::Timer).await;
    m.expect_resync(ResyncReason::Timer).await;
    let noise: Vec<_> = m
        .seen
        .iter()
        .filter(|e| !matches!(e, KernelEvent::Resynced { .. }))
        .collect();
    assert!(
        noise.is_empty(),
        "a resync with no change emitted {noise:#?}"
    );
    m.settle(&ns, "timer").await;
    assert!(m.view.counters().resyncs(ResyncReason::Timer) >= 2);
}

/// A router vantage's mirror (`prefixes` set) keeps the routes to the VIPs
/// and nothing else of the table: not at startup, not from events, not
/// after a re-dump; the VIP's own changes still arrive.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kernel_mirror_of_the_vips_keeps_nothing_else() {
    let ns = Ns::new("vips");
    let vip = "192.0.2.10/32";
    let batch = |first: u32| {
        (0..500u32)
            .map(|i| {
                format!(
                    "route add {}/32 via 10.9.0.2 table 198 proto bgp\n",
                    std::net::Ipv4Addr::from(0x6440_0000 + first + i)
                )
            })
            .collect::<String>()
    };
    let file = std::env::temp_dir().join(format!("rbk-vips-{}.batch", std::process::id()));
    std::fs::write(&file, batch(0)).expect("batch file");
    ns.ip(&format!("-batch {}", file.display()));
    ns.ip(&format!("route add {vip} via 10.9.0.2 table 198 proto bgp"));
    let config = WatcherConfig {
        tables: vec![TABLE],
        prefixes: Some([vip.parse().expect("prefix")].into()),
        rcvbuf: 4 << 20,
        resync_period: Duration::from_millis(300),
    };
    let mut m = Mirrored::start_config(&ns, config, 10_000);
    let only_the_vip = |m: &Mirrored, step: &str| {
        let routes = m.view.snapshot().routes.clone();
        assert!(
            routes.len() == 1 && routes[0].prefix.to_string() == vip,
            "{step}: the mirror holds more than the VIP: {} routes",
            routes.len()
        );
    };
    m.expect_resync(ResyncReason::Startup).await;
    only_the_vip(&m, "startup");
    // 500 more routes while watching, then a change of the VIP: only the
    // VIP's event arrives.
    std::fs::write(&file, batch(500)).expect("batch file");
    ns.ip(&format!("-batch {}", file.display()));
    ns.ip(&format!(
        "route replace {vip} table 198 proto bgp nexthop via 10.9.0.2 nexthop via 10.9.0.3"
    ));
    m.expect("the VIP's RouteChanged to 2 legs", |e| {
        matches!(e, KernelEvent::RouteChanged { new, .. }
            if new.ecmp_legs() == 2 && new.prefix.to_string() == vip)
    })
    .await;
    let leaked: Vec<_> = m
        .seen
        .iter()
        .filter(|e| match e {
            KernelEvent::RouteAdded { route }
            | KernelEvent::RouteRemoved { route }
            | KernelEvent::Reasserted { route }
            | KernelEvent::RouteChanged { new: route, .. } => route.prefix.to_string() != vip,
            KernelEvent::Resynced { routes, .. } => routes.as_ref().is_some_and(|r| r.len() != 1),
            _ => false,
        })
        .collect();
    assert!(
        leaked.is_empty(),
        "routes outside the VIPs reached the daemon: {leaked:#?}"
    );
    only_the_vip(&m, "events");
    m.expect_resync(ResyncReason::Timer).await;
    only_the_vip(&m, "timer re-dump");
    let _ = std::fs::remove_file(&file);
}
