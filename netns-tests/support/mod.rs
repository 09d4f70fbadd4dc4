//! Shared fixtures for the netns tests: the lab (built by `scripts/lab.sh`,
//! the one builder of the topology) and a route watcher that lives in a
//! namespace and waits on kernel events, never on sleeps.
//!
//! These tests need root and the FRR releases of `scripts/install-frr.sh`.
//! A missing prerequisite is a failure with a message that says what to do,
//! never a skip.

#![allow(dead_code)] // each test binary uses a different part of the support

pub mod daemon;

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::channel::mpsc::UnboundedReceiver;
use rtnetlink::packet_core::{NetlinkMessage, NetlinkPayload};
use rtnetlink::packet_route::RouteNetlinkMessage;
use rtnetlink::packet_route::route::{RouteAttribute, RouteMessage};
use rtnetlink::sys::SocketAddr;
use rtnetlink::{Handle, MulticastGroup, RouteMessageBuilder};

/// Drift triggers of docs/FRR-BEHAVIOUR.md, as shell commands run in a node.
/// kube-vip's order: the address, then the route.
pub const ADDRESS_THEN_ROUTE: &str = "ip address add 192.0.2.10/32 dev lo valid_lft forever preferred_lft 0 && \
    ip route add 192.0.2.10/32 dev lo table 198 proto 248 scope global";
/// FRRouting/frr#22654's trigger: route and address in one netlink batch.
pub const ROUTE_THEN_ADDRESS: &str = "printf 'route add 192.0.2.10/32 dev lo table 198 proto 248 scope global\n\
    address add 192.0.2.10/32 dev lo valid_lft forever preferred_lft 0\n' | ip -batch -";

/// kube-vip's re-assertion (a realm-only replace): on FRR 8.4 it drops the
/// import (zebra's table keeps the route, bgpd withdraws it).
pub const REALM_REPLACE: &str =
    "ip route replace 192.0.2.10/32 dev lo table 198 proto 248 scope global realm 2";
/// Undo any of the setups above.
pub const UNDO: &str =
    "ip route del 192.0.2.10/32 dev lo table 198; ip address del 192.0.2.10/32 dev lo; true";

/// Produce node1's drift of docs/FRR-BEHAVIOUR.md for release `frr` on
/// 192.0.2.10/32, watched by node1's ribbridge `d`; return its class and
/// the tries it took. 8.4: the VIP must be advertised by node1 (a realm
/// replace drops the import, every time). 10.x: the VIP must be absent on
/// node1; the setups are races inside zebra, so a setup zebra happened to
/// process in time is undone and tried again (at most 5 times).
pub async fn drift_node1(frr: &str, d: &mut daemon::Daemon) -> (ribbridge::reconcile::Class, u32) {
    use ribbridge::reconcile::Class;
    let (setup, class) = match frr {
        "8.4" => (REALM_REPLACE, Class::NotRedistributed),
        "10.3" => (ADDRESS_THEN_ROUTE, Class::KernelOnly),
        _ => (ROUTE_THEN_ADDRESS, Class::KernelOnly),
    };
    if frr == "8.4" {
        // Deterministic: only the drift line counts (a recovery line from
        // an earlier step may still be on its way).
        lab(&["exec", "rb-node1", "sh", "-c", setup]);
        let drift = format!("VIP drift && to={}", class.name());
        d.wait_log(&drift, Duration::from_secs(5)).await;
        return (class, 1);
    }
    let (tries, _, _) = reproduce_drift(d, frr, setup, class).await;
    (class, tries)
}

/// Run `setup` on node1 until its ribbridge `d` logs the drift `class`:
/// the FRR bugs are races inside zebra, so a setup that zebra happened to
/// process in time is undone and tried again (at most 5 times). Returns
/// the tries, when the successful setup ran, and the drift's log line.
pub async fn reproduce_drift(
    d: &mut daemon::Daemon,
    frr: &str,
    setup: &str,
    class: ribbridge::reconcile::Class,
) -> (u32, Instant, String) {
    let drift = format!("VIP drift && to={}", class.name());
    reproduce(d, &format!("FRR {frr}: {class}"), setup, &drift).await
}

/// Run `setup` on node1 until its ribbridge `d` logs `hit` (a drift, or
/// what a heal of it does) rather than the VIP advertised; undo and try
/// again, at most 5 times. Returns the tries, when the successful setup
/// ran, and the line.
pub async fn reproduce(
    d: &mut daemon::Daemon,
    what: &str,
    setup: &str,
    hit: &str,
) -> (u32, Instant, String) {
    let mut tries = 0;
    loop {
        tries += 1;
        lab(&["exec", "rb-node1", "sh", "-c", setup]);
        let t = Instant::now();
        let (got, line) = d
            .wait_either(
                hit,
                "VIP consistent && to=advertised",
                Duration::from_secs(5),
            )
            .await;
        if got {
            return (tries, t, line);
        }
        assert!(tries < 5, "{what} not reproduced in {tries} tries");
        lab(&["exec", "rb-node1", "sh", "-c", UNDO]);
        d.wait_log("VIP consistent && to=withdrawn", Duration::from_secs(5))
            .await;
    }
}

/// The flags of a BMP station listening on `listen` for the lab's
/// routers (127.0.0.0/8) and counting the paths of `vip`.
pub fn station_args<'a>(listen: &'a str, vip: &'a str) -> [&'a str; 8] {
    [
        "--vantage",
        "bmp",
        "--bmp-listen",
        listen,
        "--bmp-allow",
        "127.0.0.0/8",
        "--vip",
        vip,
    ]
}

/// A count from the environment (a bench's large figure), else `default`
/// (what CI runs).
pub fn env_count(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a count")),
        Err(_) => default,
    }
}

/// The repository root (where `scripts/` lives).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The venv's python (scripts/install-deps.sh): PyYAML for
/// scripts/oci-spec.py, the CRI client of scripts/cri.py.
pub fn venv_python() -> PathBuf {
    PathBuf::from(
        std::env::var("RIBBRIDGE_CACHE").unwrap_or_else(|_| "/var/cache/ribbridge".into()),
    )
    .join("venv/bin/python")
}

/// A directory owned by `uid:gid`: a container's hostPath /run/ribbridge,
/// made for FRR's user as the tmpfiles entry makes it on a node.
pub fn owned_dir(uid: u32, gid: u32) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    nix::unistd::chown(
        dir.path(),
        Some(nix::unistd::Uid::from_raw(uid)),
        Some(nix::unistd::Gid::from_raw(gid)),
    )
    .expect("chown state dir");
    dir
}

/// Fails the test (does not skip) when not root.
pub fn require_root() {
    assert!(
        nix::unistd::geteuid().is_root(),
        "the netns tests need root (network namespaces, FRR daemons); run scripts/test.sh as root"
    );
}

/// A ribbridge configuration file (deleted when dropped) that reads bgpd's
/// whole view every `secs` seconds instead of the default 30: for tests
/// whose steps await what a full poll sees (a dead bgpd, a neighbour added
/// by a reload), faster than the default would show it. Pass it with
/// `--config` ([`config_arg`]).
pub fn bgp_poll_config(secs: u64) -> tempfile::NamedTempFile {
    let config = tempfile::NamedTempFile::new().expect("a configuration file");
    std::fs::write(config.path(), format!("bgp_poll_secs = {secs}\n"))
        .expect("write the configuration file");
    config
}

/// The path of a configuration file, as `--config`'s argument.
pub fn config_arg(config: &tempfile::NamedTempFile) -> String {
    config
        .path()
        .to_str()
        .expect("a UTF-8 temporary path")
        .to_string()
}

/// Run `scripts/lab.sh ARGS...`, failing with its output when it fails.
/// `up` renders the nodes' frr.conf with this build's `ribbridge render`.
pub fn lab(args: &[&str]) -> String {
    let out = Command::new(repo().join("scripts/lab.sh"))
        .args(args)
        .env("RIBBRIDGE_BIN", env!("CARGO_BIN_EXE_ribbridge"))
        // `vip-add` writes the bare route unless told `--with-address`:
        // the FRR-bug suites need it (docs/LAB-WRITER.md), as the fixture's
        // daemons run with the address not required.
        .env("LAB_VIP_ADDRESS", "0")
        .output()
        .unwrap_or_else(|e| panic!("cannot run scripts/lab.sh: {e}"));
    assert!(
        out.status.success(),
        "scripts/lab.sh {} failed ({}):\n{}{}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A shell command in namespace `ns` with the host's tools (iptables,
/// sysctl), not inside an FRR root as `lab.sh exec` runs it; fails the
/// test when it fails.
pub fn host_exec(ns: &str, cmd: &str) {
    let st = std::process::Command::new("ip")
        .args(["netns", "exec", ns, "sh", "-c", cmd])
        .status()
        .expect("ip netns exec");
    assert!(st.success(), "{ns}: {cmd}: {st}");
}

/// A running lab; dropping it tears the lab down, also when the test panics.
///
/// There is one lab per machine (the rb-* namespaces): the lab holds an
/// exclusive lock on `/run/ribbridge-lab.lock` for its whole life, so test
/// processes running side by side (two checkouts, two targets) take turns
/// instead of tearing down each other's lab.
#[derive(Debug)]
pub struct Lab {
    pub frr: &'static str,
    pub nodes: usize,
    _lock: nix::fcntl::Flock<std::fs::File>,
    /// When `up` began: `lab.sh down` prints how long the lab was up.
    since: Instant,
}

/// The lab lock (`/run/ribbridge-lab.lock`), held exclusively: every lab user
/// (this one, [`GobgpLab`]) waits for the others.
pub fn lab_lock() -> nix::fcntl::Flock<std::fs::File> {
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open("/run/ribbridge-lab.lock")
        .unwrap_or_else(|e| panic!("cannot open /run/ribbridge-lab.lock: {e}"));
    nix::fcntl::Flock::lock(f, nix::fcntl::FlockArg::LockExclusive)
        .unwrap_or_else(|(_, e)| panic!("cannot lock /run/ribbridge-lab.lock: {e}"))
}

impl Lab {
    /// `lab.sh up --frr FRR --nodes N [--vip V]...`, after clearing whatever a
    /// crashed earlier run left behind.
    pub fn up(frr: &'static str, nodes: usize, vips: &[&str]) -> Lab {
        Lab::up_with(frr, nodes, vips, &[])
    }

    /// The same, with the router's bgpd exporting BMP to the station at
    /// `station` (`ADDR:PORT` as seen from rb-router): `lab.sh up --bmp`.
    pub fn up_bmp(frr: &'static str, nodes: usize, vips: &[&str], station: &str) -> Lab {
        Lab::up_with(frr, nodes, vips, &["--bmp", station])
    }

    /// `lab.sh up` with `extra` arguments after the fixture's own.
    pub fn up_with(frr: &'static str, nodes: usize, vips: &[&str], extra: &[&str]) -> Lab {
        require_root();
        let lock = lab_lock();
        lab(&["down"]);
        let n = nodes.to_string();
        let mut args = vec!["up", "--frr", frr, "--nodes", &n];
        for v in vips {
            args.extend(["--vip", v]);
        }
        args.extend(extra);
        // The guard exists before `up` runs: a failing `up` is torn down too.
        let guard = Lab {
            frr,
            nodes,
            _lock: lock,
            since: Instant::now(),
        };
        lab(&args);
        // A drain intent a killed run left beside these sockets would drain
        // this lab's nodes the moment a ribbridge starts.
        guard.clear_drain_intents();
        guard
    }

    /// Remove every node's drain intent file (`drain_state`): a drain a
    /// test or bench cell recorded must not outlive its lab.
    fn clear_drain_intents(&self) {
        for i in 1..=self.nodes {
            let _ = std::fs::remove_file(drain_state(&self.sockdir(&format!("rb-node{i}"))));
        }
    }

    pub fn sockdir(&self, ns: &str) -> PathBuf {
        PathBuf::from(lab(&["sockdir", ns]).trim())
    }
}

/// Run `scripts/lab-gobgp.sh ARGS...`, failing with its output when it
/// fails; its stdout.
pub fn lab_gobgp(args: &[&str]) -> String {
    let out = Command::new(repo().join("scripts/lab-gobgp.sh"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run scripts/lab-gobgp.sh: {e}"));
    assert!(
        out.status.success(),
        "scripts/lab-gobgp.sh {} failed ({}):\n{}{}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The GoBGP lab (`scripts/lab-gobgp.sh`: the router rb-gobgp and its peers
/// rb-gobgp-peer<i>), holding the lab lock for its whole life; dropping it
/// tears the lab down, also when the test panics.
#[derive(Debug)]
pub struct GobgpLab {
    pub peers: usize,
    _lock: nix::fcntl::Flock<std::fs::File>,
}

impl GobgpLab {
    /// `lab-gobgp.sh up --peers N EXTRA...`, after clearing whatever a
    /// crashed earlier run left behind. Fails (never skips) without gobgpd.
    pub fn up(peers: usize, extra: &[&str]) -> GobgpLab {
        require_root();
        let lock = lab_lock();
        lab_gobgp(&["down"]);
        let n = peers.to_string();
        let mut args = vec!["up", "--peers", &n];
        args.extend(extra);
        let guard = GobgpLab { peers, _lock: lock };
        lab_gobgp(&args);
        guard
    }
}

impl Drop for GobgpLab {
    fn drop(&mut self) {
        let _ = Command::new(repo().join("scripts/lab-gobgp.sh"))
            .arg("down")
            .status();
    }
}

/// The drain's intent file of the node whose FRR sockets are in `frr_dir`
/// (`--drain-state`): one per node, beside its socket directory, never the
/// host's /run/ribbridge/drain.
pub fn drain_state(frr_dir: &Path) -> PathBuf {
    let name = frr_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    frr_dir.with_file_name(format!("{name}.ribbridge-drain"))
}

impl Drop for Lab {
    fn drop(&mut self) {
        self.clear_drain_intents();
        let _ = Command::new(repo().join("scripts/lab.sh"))
            .arg("down")
            .env("LAB_UP_SECS", self.since.elapsed().as_secs().to_string())
            .status();
    }
}

/// Both lab nodes add `vip` (a `/32`); waits until the daemon `d` (on
/// node1) reports it advertised and the router holds both paths.
pub async fn advertise_on_both(d: &mut daemon::Daemon, router: &mut RouteWatch, vip: &str) {
    vip_on_both(router, vip).await;
    d.wait_log("VIP consistent && to=advertised", Duration::from_secs(15))
        .await;
}

/// kube-vip adds `vip` (a /32) on node1 and node2; wait until the router's
/// route to it has both nodes' paths.
pub async fn vip_on_both(router: &mut RouteWatch, vip: &str) {
    vip_on_both_with(router, vip, &[]).await;
}

/// The same with node1's VIP as kube-vip writes it, its address first:
/// for a daemon that runs the shipped defaults (the address required; a
/// bare route would be a blackhole). On 10.7 (address, then route) it is
/// advertised; on 8.4 the address shadows it.
pub async fn vip_with_address_on_node1(router: &mut RouteWatch, vip: &str) {
    vip_on_both_with(router, vip, &["--with-address"]).await;
}

async fn vip_on_both_with(router: &mut RouteWatch, vip: &str, node1: &[&str]) {
    let addr: IpAddr = vip
        .split('/')
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("{vip} is not ADDRESS/LEN"));
    lab(&[&["vip-add", "node1", vip][..], node1].concat());
    lab(&["vip-add", "node2", vip]);
    router
        .wait_nexthops(addr, 32, 2, Duration::from_secs(15))
        .await
        .expect("router has both paths");
}

/// The entry of `vip` in a status document; an absent VIP fails the test,
/// naming the document.
pub fn vip_of<'d>(
    doc: &'d ribbridge::status::StatusDoc,
    vip: &str,
) -> &'d ribbridge::status::VipStatus {
    doc.vips
        .iter()
        .find(|v| v.prefix.to_string() == vip)
        .unwrap_or_else(|| panic!("no {vip} in {doc:?}"))
}

/// The class of `vip` in a status document; a VIP that is absent or
/// `unknown` (the daemon not ready) fails the test, naming the document.
pub fn class_of(doc: &ribbridge::status::StatusDoc, vip: &str) -> ribbridge::reconcile::Class {
    vip_of(doc, vip)
        .state
        .class()
        .unwrap_or_else(|| panic!("{vip} is unknown (the daemon is not ready): {doc:?}"))
}

/// A process's credentials as /proc/PID/status prints them (the
/// capability sets in hex, as the kernel writes them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Creds {
    pub uid: String,
    pub gid: String,
    pub groups: String,
    pub inh: String,
    pub prm: String,
    pub eff: String,
    pub bnd: String,
    pub amb: String,
    pub no_new_privs: String,
}

impl std::fmt::Display for Creds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "uid {} gid {} groups [{}] CapInh {} CapPrm {} CapEff {} CapBnd {} CapAmb {} NoNewPrivs {}",
            self.uid,
            self.gid,
            self.groups,
            self.inh,
            self.prm,
            self.eff,
            self.bnd,
            self.amb,
            self.no_new_privs
        )
    }
}

/// The credentials of process `pid`.
pub fn creds_full(pid: &str) -> Creds {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_else(|e| panic!("/proc/{pid}/status: {e}"));
    let line = |k: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(k))
            .unwrap_or_default()
            .trim()
            .to_string()
    };
    let first = |k: &str| line(k).split_whitespace().next().unwrap_or("").to_string();
    Creds {
        uid: first("Uid:"),
        gid: first("Gid:"),
        groups: line("Groups:")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
        inh: line("CapInh:"),
        prm: line("CapPrm:"),
        eff: line("CapEff:"),
        bnd: line("CapBnd:"),
        amb: line("CapAmb:"),
        no_new_privs: line("NoNewPrivs:"),
    }
}

/// (uid, effective capabilities) of process `pid`.
pub fn creds_of(pid: &str) -> (String, String) {
    let c = creds_full(pid);
    (c.uid, c.eff)
}

/// Run `f` on a thread that has entered network namespace `ns`. Sockets
/// created there stay in that namespace for their whole life.
pub fn in_netns<T: Send + 'static>(ns: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    spawn_in_netns(ns, f).join().expect("netns thread panicked")
}

/// The same without waiting: the thread, to join when it is done.
pub fn spawn_in_netns<T: Send + 'static>(
    ns: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> std::thread::JoinHandle<T> {
    let path = Path::new("/run/netns").join(ns);
    std::thread::spawn(move || {
        let fd = std::fs::File::open(&path)
            .unwrap_or_else(|e| panic!("cannot open {}: {e}", path.display()));
        nix::sched::setns(fd, nix::sched::CloneFlags::CLONE_NEWNET)
            .unwrap_or_else(|e| panic!("setns {}: {e}", path.display()));
        f()
    })
}

type Messages = UnboundedReceiver<(NetlinkMessage<RouteNetlinkMessage>, SocketAddr)>;

/// Watches one namespace's routes: subscribed to the route groups before any
/// dump, so a change between a dump and the next event cannot be missed.
#[derive(Debug)]
pub struct RouteWatch {
    handle: Handle,
    events: Messages,
}

impl RouteWatch {
    pub fn open(ns: &str) -> RouteWatch {
        let rt = tokio::runtime::Handle::current();
        let (conn, handle, events) = in_netns(ns, move || {
            let _guard = rt.enter();
            rtnetlink::new_multicast_connection(&[
                MulticastGroup::Ipv4Route,
                MulticastGroup::Ipv6Route,
            ])
            .expect("netlink multicast socket")
        });
        tokio::spawn(conn);
        RouteWatch { handle, events }
    }

    /// Number of nexthops of the main-table route to `dst/len`, 0 if absent.
    pub async fn nexthops(&self, dst: IpAddr, len: u8) -> usize {
        let msg = match dst {
            IpAddr::V4(_) => RouteMessageBuilder::<std::net::Ipv4Addr>::new().build(),
            IpAddr::V6(_) => RouteMessageBuilder::<std::net::Ipv6Addr>::new().build(),
        };
        let mut dump = self.handle.route().get(msg).execute();
        let mut n = 0;
        while let Some(r) = dump.next().await {
            let r = r.expect("route dump");
            if r.header.destination_prefix_length == len && destination(&r) == Some(dst) {
                n = count_nexthops(&r);
            }
        }
        n
    }

    /// Wait until the route to `dst/len` has `want` nexthops; return how long
    /// that took. Each kernel route event triggers a re-check; nothing polls.
    pub async fn wait_nexthops(
        &mut self,
        dst: IpAddr,
        len: u8,
        want: usize,
        limit: Duration,
    ) -> Result<Duration, String> {
        let start = Instant::now();
        loop {
            let have = self.nexthops(dst, len).await;
            if have == want {
                return Ok(start.elapsed());
            }
            let left = limit.saturating_sub(start.elapsed());
            match tokio::time::timeout(left, self.next_route_event()).await {
                Ok(()) => continue,
                Err(_) => {
                    return Err(format!(
                        "{dst}/{len} has {have} nexthops after {limit:?}, expected {want}"
                    ));
                }
            }
        }
    }

    async fn next_route_event(&mut self) {
        while let Some((msg, _)) = self.events.next().await {
            if matches!(
                msg.payload,
                NetlinkPayload::InnerMessage(
                    RouteNetlinkMessage::NewRoute(_) | RouteNetlinkMessage::DelRoute(_)
                ) | NetlinkPayload::Overrun(_)
            ) {
                return;
            }
        }
        panic!("netlink multicast stream ended");
    }
}

fn destination(r: &RouteMessage) -> Option<IpAddr> {
    use rtnetlink::packet_route::route::RouteAddress;
    r.attributes.iter().find_map(|a| match a {
        RouteAttribute::Destination(RouteAddress::Inet(a)) => Some(IpAddr::V4(*a)),
        RouteAttribute::Destination(RouteAddress::Inet6(a)) => Some(IpAddr::V6(*a)),
        _ => None,
    })
}

fn count_nexthops(r: &RouteMessage) -> usize {
    r.attributes
        .iter()
        .find_map(|a| match a {
            RouteAttribute::MultiPath(legs) => Some(legs.len()),
            _ => None,
        })
        .unwrap_or(1)
}

/// A router's nexthop count for one destination over time: a sample after
/// every route event, taken by a task that owns the [`RouteWatch`]. Shares
/// of time and dips are read from it afterwards (availability).
#[derive(Debug)]
pub struct Timeline {
    samples: std::sync::Arc<std::sync::Mutex<Vec<(Instant, usize)>>>,
    task: tokio::task::JoinHandle<()>,
}

impl RouteWatch {
    /// Record `dst/len`'s nexthop count from now on (the first sample is
    /// taken before this returns), at every route event.
    pub async fn timeline(mut self, dst: IpAddr, len: u8) -> Timeline {
        let first = (Instant::now(), self.nexthops(dst, len).await);
        let samples = std::sync::Arc::new(std::sync::Mutex::new(vec![first]));
        let into = samples.clone();
        let task = tokio::spawn(async move {
            loop {
                self.next_route_event().await;
                let n = self.nexthops(dst, len).await;
                into.lock()
                    .expect("timeline lock")
                    .push((Instant::now(), n));
            }
        });
        Timeline { samples, task }
    }
}

impl Timeline {
    /// Every sample so far.
    pub fn samples(&self) -> Vec<(Instant, usize)> {
        self.samples.lock().expect("timeline lock").clone()
    }

    /// The count at `t` (the last sample at or before it; 0 before any).
    fn at(samples: &[(Instant, usize)], t: Instant) -> usize {
        samples
            .iter()
            .take_while(|(s, _)| *s <= t)
            .last()
            .map_or(0, |(_, n)| *n)
    }

    /// The share of `[from, to)` during which the route had at least `want`
    /// nexthops.
    pub fn share_at_least(&self, want: usize, from: Instant, to: Instant) -> f64 {
        let s = self.samples();
        let mut points: Vec<Instant> = s
            .iter()
            .map(|(t, _)| *t)
            .filter(|t| *t > from && *t < to)
            .collect();
        points.insert(0, from);
        points.push(to);
        let mut good = Duration::ZERO;
        for w in points.windows(2) {
            if Self::at(&s, w[0]) >= want {
                good += w[1] - w[0];
            }
        }
        good.as_secs_f64() / (to - from).as_secs_f64()
    }

    /// How many times within `[from, to)` the count went below `want`.
    pub fn dips(&self, want: usize, from: Instant, to: Instant) -> usize {
        let s = self.samples();
        let mut before = Self::at(&s, from);
        let mut dips = 0;
        for (_, n) in s.iter().filter(|(t, _)| *t > from && *t < to) {
            if *n < want && before >= want {
                dips += 1;
            }
            before = *n;
        }
        dips
    }
}

impl Drop for Timeline {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// FRR 10.7's `kernel_only` drift (route then address in one batch,
/// FRRouting/frr#22654) made on rb-node1 under a daemon that cannot heal
/// it: returns the daemon's "heal action failed" line. zebra's bug is a
/// race: a batch zebra happens to handle in time is undone and tried
/// again, at most 5 times.
pub async fn kernel_only_unhealed(d: &mut daemon::Daemon) -> String {
    let mut tries = 0;
    loop {
        tries += 1;
        lab(&["exec", "rb-node1", "sh", "-c", ROUTE_THEN_ADDRESS]);
        let (hit, line) = d
            .wait_either(
                "heal action failed",
                "VIP consistent && to=advertised",
                Duration::from_secs(15),
            )
            .await;
        if hit {
            return line;
        }
        assert!(tries < 5, "kernel_only not reproduced in 5 tries");
        lab(&["exec", "rb-node1", "sh", "-c", UNDO]);
        d.wait_log("VIP consistent && to=withdrawn", Duration::from_secs(5))
            .await;
    }
}

/// The sum over every label set of metric `name` in a `/metrics` text (0
/// when it has no series yet: a counter is exported from its first
/// increment).
pub fn metric_sum(text: &str, name: &str) -> f64 {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter(|l| {
            l.strip_prefix(name)
                .is_some_and(|r| r.starts_with('{') || r.starts_with(' '))
        })
        .filter_map(|l| l.rsplit(' ').next()?.trim().parse::<f64>().ok())
        .sum()
}

/// Run `ip -n NS -batch FILE` with `lines`; a failure names the lines.
pub fn ip_batch(ns: &str, lines: &str) {
    let f = tempfile::NamedTempFile::new().expect("batch file");
    std::fs::write(f.path(), lines).expect("write batch");
    let out = std::process::Command::new("ip")
        .args(["-n", ns, "-batch"])
        .arg(f.path())
        .output()
        .expect("ip -batch");
    assert!(
        out.status.success(),
        "ip -n {ns} -batch failed: {}\n{lines}",
        String::from_utf8_lossy(&out.stderr)
    );
}
