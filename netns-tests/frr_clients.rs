//! The FRR clients against the real zebra and bgpd of 8.4, 10.3 and 10.7:
//! - a VIP added to / removed from a node's kernel table 198 reaches the ZAPI
//!   stream within 1 s (the bound; the measured latency is printed);
//! - the vty client sees the session to the router Established and the VIP
//!   in that peer's advertised routes;
//! - zebra killed and started again: the client reconnects, and the rebuilt
//!   view holds the route added while zebra was down and not the one deleted
//!   meanwhile (dropped as stale at the end-of-dump marker).
//!
//! Every wait is on an event (ZAPI events, kernel route events); the only
//! bounds are that 1 s and generous limits for daemon start-up.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use ribbridge::frr::release::ReleaseNumbering;
use ribbridge::frr::zapi::client::{ZapiConfig, run};
use ribbridge::frr::zapi::codec::{Command, Dialect, FrameCodec, Hello, Redistribute};
use ribbridge::frr::{TableMode, VtyClient, ZapiEvent, ZapiRoute, bgp_snapshot};
use ribbridge::model::Family;
use ribbridge::model::Prefix;
use rtnetlink::RouteMessageBuilder;
use rtnetlink::packet_route::route::{RouteMessage, RouteProtocol, RouteScope};
use tokio::net::UnixStream;
use tokio::sync::mpsc;
use tokio_util::codec::Framed;

use crate::support::{Lab, RouteWatch, in_netns, lab};

const NODE: &str = "rb-node1";
const VIP: &str = "192.0.2.10/32";
const VIP_B: &str = "192.0.2.11/32";
/// The bound from a kernel change to the ZAPI event (zebra takes tens of
/// milliseconds: docs/FRR-BEHAVIOUR.md).
const BOUND: Duration = Duration::from_secs(1);
/// Daemon start-up and BGP convergence: a limit, not a measurement.
const SETTLE: Duration = Duration::from_secs(30);

/// A netlink handle living in the node's namespace.
fn kernel(ns: &str) -> rtnetlink::Handle {
    let rt = tokio::runtime::Handle::current();
    let (conn, handle, _) = in_netns(ns, move || {
        let _g = rt.enter();
        rtnetlink::new_connection().expect("netlink socket")
    });
    tokio::spawn(conn);
    handle
}

/// kube-vip's route: `PREFIX dev lo table 198 proto 248 scope global`.
fn vip_route(p: &str) -> RouteMessage {
    let (a, l) = p.split_once('/').expect("prefix");
    RouteMessageBuilder::<Ipv4Addr>::new()
        .destination_prefix(a.parse().expect("addr"), l.parse().expect("len"))
        .output_interface(1)
        .table_id(198)
        .protocol(RouteProtocol::Other(248))
        .scope(RouteScope::Universe)
        .build()
}

/// The view the events build, and the event stream.
struct Stream {
    rx: mpsc::Receiver<ZapiEvent>,
    view: BTreeMap<Prefix, ZapiRoute>,
    log: Vec<ZapiEvent>,
}

impl Stream {
    /// Starts the ZAPI client and waits for its first `Synced`.
    async fn synced(cfg: ZapiConfig) -> (Stream, tokio::task::JoinHandle<()>) {
        let (tx, rx) = mpsc::channel(256);
        let task = tokio::spawn(run(cfg, tx));
        let mut s = Stream {
            rx,
            view: BTreeMap::new(),
            log: Vec::new(),
        };
        s.until(SETTLE, "Synced", |e| matches!(e, ZapiEvent::Synced { .. }))
            .await;
        (s, task)
    }

    /// Waits for the first event matching `want`, applying every event on
    /// the way; returns it and when it arrived.
    async fn until(
        &mut self,
        limit: Duration,
        what: &str,
        want: impl Fn(&ZapiEvent) -> bool,
    ) -> (ZapiEvent, Instant) {
        match self.try_until(limit, want).await {
            Some(x) => x,
            None => panic!("no {what} within {limit:?}; events so far: {:#?}", self.log),
        }
    }

    /// Like `until`, but `None` when nothing matched within `limit`.
    async fn try_until(
        &mut self,
        limit: Duration,
        want: impl Fn(&ZapiEvent) -> bool,
    ) -> Option<(ZapiEvent, Instant)> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let ev = match tokio::time::timeout_at(deadline, self.rx.recv()).await {
                Ok(Some(ev)) => ev,
                Ok(None) => panic!("the ZAPI client stopped; events so far: {:#?}", self.log),
                Err(_) => return None,
            };
            let at = Instant::now();
            match &ev {
                ZapiEvent::RouteAdd { route } => {
                    self.view.insert(route.prefix, route.clone());
                }
                ZapiEvent::RouteDel { route, .. } => {
                    self.view.remove(&route.prefix);
                }
                _ => {}
            }
            self.log.push(ev.clone());
            if want(&ev) {
                return Some((ev, at));
            }
        }
    }
}

fn is_add(ev: &ZapiEvent, p: Prefix) -> bool {
    matches!(ev, ZapiEvent::RouteAdd { route } if route.prefix == p)
}

fn is_del(ev: &ZapiEvent, p: Prefix) -> bool {
    matches!(ev, ZapiEvent::RouteDel { route, .. } if route.prefix == p)
}

async fn frr_clients(frr: &'static str) {
    let lab_guard = Lab::up(frr, 1, &[VIP, VIP_B]);
    let dir = lab_guard.sockdir(NODE);
    let vip: Prefix = VIP.parse().expect("vip");
    let vip_b: Prefix = VIP_B.parse().expect("vip");
    let k = kernel(NODE);
    let mut router = RouteWatch::open("rb-router");

    let (tx, rx) = mpsc::channel(256);
    let mut cfg = ZapiConfig::in_dir(&dir, 198);
    cfg.backoff_max = Duration::from_millis(500);
    let task = tokio::spawn(run(cfg, tx));
    let mut s = Stream {
        rx,
        view: BTreeMap::new(),
        log: Vec::new(),
    };
    let (ev, _) = s
        .until(SETTLE, "Connected", |e| {
            matches!(e, ZapiEvent::Connected { .. })
        })
        .await;
    let ZapiEvent::Connected { release, mode, .. } = ev else {
        unreachable!()
    };
    let want_mode = if frr == "8.4" {
        TableMode::ImportTable
    } else {
        TableMode::TableDirect
    };
    assert_eq!(mode, want_mode, "mode read from bgpd's running config");
    assert!(
        release.to_string().starts_with(frr),
        "release {release} for lab {frr}"
    );
    s.until(SETTLE, "Synced", |e| matches!(e, ZapiEvent::Synced { .. }))
        .await;
    assert!(s.view.is_empty(), "table 198 starts empty: {:?}", s.view);

    // Add: kernel ACK -> ZAPI RouteAdd.
    let t0 = Instant::now();
    k.route()
        .add(vip_route(VIP))
        .execute()
        .await
        .expect("route add");
    let acked = t0.elapsed();
    let (ev, at) = s
        .until(BOUND, "RouteAdd of the VIP", |e| is_add(e, vip))
        .await;
    let add_latency = at - t0;
    let ZapiEvent::RouteAdd { route } = ev else {
        unreachable!()
    };
    assert_eq!(route.instance, 198);
    assert_eq!(route.nexthops.len(), 1);
    eprintln!(
        "FRR {frr}: kernel add -> ZAPI RouteAdd in {add_latency:?} (netlink ack after {acked:?})"
    );

    // vty: the session is up and the VIP is sent to the router. The router's
    // kernel route is the event that says BGP has carried it.
    let (addr, len) = (vip.addr(), vip.prefix_len());
    let t = router
        .wait_nexthops(addr, len, 1, SETTLE)
        .await
        .expect("router learns the VIP");
    eprintln!("FRR {frr}: the router installed the VIP {t:?} after the ZAPI event");
    let bgpd = VtyClient::connect(dir.join("bgpd.vty"))
        .await
        .expect("bgpd.vty");
    let bgp = bgp_snapshot(&bgpd).await.expect("bgp snapshot");
    let peer = &bgp[&Family::Ipv4]["198.18.1.1"];
    assert!(peer.established, "session to the router: {peer:?}");
    assert!(
        peer.advertised.as_ref().is_some_and(|a| a.contains(&vip)),
        "VIP not in the router's advertised routes: {peer:?}"
    );
    assert!(bgp[&Family::Ipv6]["fdbb:0:0:1::1"].established);
    let zebra = VtyClient::connect(dir.join("zebra.vty"))
        .await
        .expect("zebra.vty");
    let table = zebra
        .route_table(Family::Ipv4, 198)
        .await
        .expect("table view");
    assert!(table.get(&vip).is_some_and(|e| e[0].selected), "{table:?}");

    // Remove: kernel ACK -> ZAPI RouteDel.
    let t0 = Instant::now();
    k.route()
        .del(vip_route(VIP))
        .execute()
        .await
        .expect("route del");
    let (_, at) = s
        .until(BOUND, "RouteDel of the VIP", |e| is_del(e, vip))
        .await;
    let del_latency = at - t0;
    eprintln!("FRR {frr}: kernel del -> ZAPI RouteDel in {del_latency:?}");
    let t = router
        .wait_nexthops(addr, len, 0, SETTLE)
        .await
        .expect("router drops the VIP");
    eprintln!("FRR {frr}: the router withdrew the VIP {t:?} after the ZAPI event");

    // zebra crashes: the VIP it had sent must not survive the restart when
    // the kernel lost it meanwhile; the route added meanwhile must appear.
    k.route()
        .add(vip_route(VIP))
        .execute()
        .await
        .expect("route add");
    s.until(BOUND, "RouteAdd before the crash", |e| is_add(e, vip))
        .await;
    lab(&["kill", NODE, "zebra"]);
    let t_stop = Instant::now();
    s.until(SETTLE, "Disconnected", |e| {
        matches!(e, ZapiEvent::Disconnected { .. })
    })
    .await;
    eprintln!(
        "FRR {frr}: Disconnected {:?} after SIGKILL",
        t_stop.elapsed()
    );
    k.route()
        .del(vip_route(VIP))
        .execute()
        .await
        .expect("route del");
    k.route()
        .add(vip_route(VIP_B))
        .execute()
        .await
        .expect("route add");
    lab(&["start", NODE, "zebra"]);
    let t_start = Instant::now();
    s.until(SETTLE, "Connected after restart", |e| {
        matches!(e, ZapiEvent::Connected { .. })
    })
    .await;
    let (ev, _) = s
        .until(SETTLE, "Synced after restart", |e| {
            matches!(e, ZapiEvent::Synced { .. })
        })
        .await;
    eprintln!(
        "FRR {frr}: resynced {:?} after zebra start: {ev:?}",
        t_start.elapsed()
    );
    assert!(
        !s.view.contains_key(&vip),
        "stale VIP survived the restart: {:#?}",
        s.log
    );
    assert!(
        s.log.iter().any(|e| matches!(e,
            ZapiEvent::RouteDel { route, stale: true } if route.prefix == vip)),
        "the stale VIP was not dropped as stale: {:#?}",
        s.log
    );
    if !s.view.contains_key(&vip_b) {
        // zebra had not selected it when it dumped: it comes as a live ADD.
        s.until(
            SETTLE,
            "RouteAdd of the route added while zebra was down",
            |e| is_add(e, vip_b),
        )
        .await;
    }
    assert_eq!(s.view.keys().copied().collect::<Vec<_>>(), vec![vip_b]);
    // The view matches zebra's own (vty) view of table 198.
    let table = zebra
        .route_table(Family::Ipv4, 198)
        .await
        .expect("table view");
    assert_eq!(table.keys().copied().collect::<Vec<_>>(), vec![vip_b]);
    task.abort();
    drop(lab_guard);
}

#[tokio::test]
async fn frr_clients_frr_8_4() {
    frr_clients("8.4").await;
}

#[tokio::test]
async fn frr_clients_frr_10_3() {
    frr_clients("10.3").await;
}

#[tokio::test]
async fn frr_clients_frr_10_7() {
    frr_clients("10.7").await;
}

/// A bare ZAPI session subscribed to one route type (instance 0), to learn
/// when zebra has selected a route of that type.
struct RawZapi {
    framed: Framed<UnixStream, FrameCodec>,
    dialect: Dialect,
}

impl RawZapi {
    async fn subscribe(dir: &Path, afi: Family, route_type: u8) -> RawZapi {
        let zebra = VtyClient::connect(dir.join("zebra.vty"))
            .await
            .expect("zebra.vty");
        let dialect = zebra
            .show_version()
            .await
            .expect("show version")
            .dialect()
            .expect("dialect");
        let s = UnixStream::connect(dir.join("zserv.api"))
            .await
            .expect("zserv.api");
        let mut framed = Framed::new(s, FrameCodec);
        let hello = Hello {
            proto: 0,
            instance: 0,
            session_id: 1,
        };
        framed
            .send(dialect.encode_hello(hello))
            .await
            .expect("hello");
        let sub = Redistribute {
            afi,
            route_type,
            instance: 0,
        };
        framed
            .send(dialect.encode_redistribute(true, 0, sub))
            .await
            .expect("subscribe");
        RawZapi { framed, dialect }
    }

    async fn wait_route(&mut self, p: Prefix, limit: Duration) {
        let add = self.dialect.command(Command::RedistributeRouteAdd);
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let f = tokio::time::timeout_at(deadline, self.framed.next())
                .await
                .unwrap_or_else(|_| panic!("zebra did not select {p} within {limit:?}"))
                .expect("zserv.api closed")
                .expect("ZAPI frame");
            if f.command == add && self.dialect.decode_route(&f).expect("route").prefix == p {
                return;
            }
        }
    }
}

/// The order kube-vip's two writes reach the kernel in.
#[derive(Debug, Clone, Copy)]
enum Order {
    AddressThenRoute,
    RouteThenAddress,
}

/// A case of docs/FRR-BEHAVIOUR.md that zebra mishandles: the VIP is in
/// kernel table 198 but zebra never redistributes it. Absence is proven, not timed out: a
/// sentinel route added to table 198 afterwards is processed by zebra after
/// the VIP's netlink messages, so when the sentinel's RouteAdd arrives every
/// event the VIP could have caused has arrived too.
async fn mishandled_vip_never_reaches_zapi(frr: &'static str, order: Order) {
    let lab_guard = Lab::up(frr, 1, &[VIP, VIP_B]);
    let dir = lab_guard.sockdir(NODE);
    let vip: Prefix = VIP.parse().expect("vip");
    let sentinel: Prefix = VIP_B.parse().expect("sentinel");
    let k = kernel(NODE);
    let (mut s, task) = Stream::synced(ZapiConfig::in_dir(&dir, 198)).await;

    let IpAddr::V4(a) = vip.addr() else {
        unreachable!()
    };
    let t0 = Instant::now();
    let addr = k.address().add(1, IpAddr::V4(a), 32);
    match order {
        Order::AddressThenRoute => {
            // "Address already there": zebra must have *selected* the
            // connected route before the kernel route arrives (back-to-back
            // writes land in one netlink batch, which 10.3 handles well).
            let mut connected = RawZapi::subscribe(&dir, Family::Ipv4, 2).await;
            addr.execute().await.expect("address add");
            connected.wait_route(vip, SETTLE).await;
            k.route()
                .add(vip_route(VIP))
                .execute()
                .await
                .expect("route add");
        }
        Order::RouteThenAddress => {
            k.route()
                .add(vip_route(VIP))
                .execute()
                .await
                .expect("route add");
            addr.execute().await.expect("address add");
        }
    }
    // The sentinel may be lost too (10.3 loses a route written right after
    // the mishandled one): then it is withdrawn and written again, and each
    // attempt is awaited as an event with the 1 s bound.
    let mut lost_sentinels = 0;
    loop {
        k.route()
            .add(vip_route(VIP_B))
            .execute()
            .await
            .expect("sentinel add");
        if s.try_until(BOUND, |e| is_add(e, sentinel)).await.is_some() {
            break;
        }
        lost_sentinels += 1;
        assert!(
            lost_sentinels < 5,
            "FRR {frr}: zebra lost 5 sentinels in a row: {:#?}",
            s.log
        );
        k.route()
            .del(vip_route(VIP_B))
            .execute()
            .await
            .expect("sentinel del");
    }
    eprintln!("FRR {frr} {order:?}: sentinels lost before one got through: {lost_sentinels}");
    eprintln!(
        "FRR {frr} {order:?}: sentinel seen {:?} after the first write; VIP events: {:?}",
        t0.elapsed(),
        s.log
            .iter()
            .filter(|e| is_add(e, vip) || is_del(e, vip))
            .collect::<Vec<_>>()
    );
    assert!(
        !s.view.contains_key(&vip),
        "FRR {frr} {order:?}: zebra redistributes the VIP after all; docs/FRR-BEHAVIOUR.md is out of date: {:#?}",
        s.log
    );
    // zebra's own views agree: on 10.x table 198 lost the route; on 8.4 the
    // kernel entry is there but its import is not selected (shadowed).
    let zebra = VtyClient::connect(dir.join("zebra.vty"))
        .await
        .expect("zebra.vty");
    let table = zebra
        .route_table(Family::Ipv4, 198)
        .await
        .expect("table view");
    eprintln!(
        "FRR {frr} {order:?}: zebra's table 198 has the VIP: {}",
        table.contains_key(&vip)
    );
    if frr != "8.4" {
        assert!(!table.contains_key(&vip), "{table:?}");
    }
    task.abort();
    drop(lab_guard);
}

#[tokio::test]
async fn shadowed_vip_never_reaches_zapi_frr_8_4() {
    mishandled_vip_never_reaches_zapi("8.4", Order::AddressThenRoute).await;
}

#[tokio::test]
async fn address_then_route_vip_never_reaches_zapi_frr_10_3() {
    mishandled_vip_never_reaches_zapi("10.3", Order::AddressThenRoute).await;
}

#[tokio::test]
async fn route_then_address_vip_never_reaches_zapi_frr_10_7() {
    mishandled_vip_never_reaches_zapi("10.7", Order::RouteThenAddress).await;
}

/// Healing's vty commands against the real daemons: on 8.4 re-applying `ip
/// import-table` on zebra withdraws and re-imports the VIP (seen on ZAPI);
/// on 10.x bgpd takes its redistribute line again; an outbound soft refresh
/// is accepted everywhere; a command off the allowlist never leaves ribbridge.
async fn configure_heals(frr: &'static str) {
    let lab_guard = Lab::up(frr, 1, &[VIP]);
    let dir = lab_guard.sockdir(NODE);
    let vip: Prefix = VIP.parse().expect("vip");
    let k = kernel(NODE);
    let (mut s, task) = Stream::synced(ZapiConfig::in_dir(&dir, 198)).await;
    k.route()
        .add(vip_route(VIP))
        .execute()
        .await
        .expect("route add");
    s.until(BOUND, "RouteAdd", |e| is_add(e, vip)).await;

    let zebra = VtyClient::connect(dir.join("zebra.vty"))
        .await
        .expect("zebra.vty");
    let bgpd = VtyClient::connect(dir.join("bgpd.vty"))
        .await
        .expect("bgpd.vty");
    if frr == "8.4" {
        zebra
            .configure(&["no ip import-table 198"])
            .await
            .expect("no ip import-table");
        s.until(BOUND, "RouteDel after no ip import-table", |e| {
            is_del(e, vip)
        })
        .await;
        zebra
            .configure(&["ip import-table 198"])
            .await
            .expect("ip import-table");
        s.until(BOUND, "RouteAdd after ip import-table", |e| is_add(e, vip))
            .await;
    } else {
        bgpd.configure(&[
            "router bgp 64512",
            "address-family ipv4 unicast",
            // Re-applying the line as it stands answers CMD_WARNING (10.7):
            // healing takes it away and puts it back.
            "no redistribute table-direct 198 route-map KUBE-VIP-ROUTES-V4",
            "redistribute table-direct 198 route-map KUBE-VIP-ROUTES-V4",
            "exit-address-family",
            "exit",
        ])
        .await
        .expect("bgpd redistribute");
    }
    bgpd.exec("clear bgp ipv4 unicast 198.18.1.1 soft out")
        .await
        .expect("soft out");
    // The session is still in enable mode (configure ends with `end`).
    assert!(
        bgpd.running_config()
            .await
            .expect("running-config")
            .contains("router bgp 64512")
    );
    assert!(matches!(
        zebra.configure(&["ip route 0.0.0.0/0 blackhole"]).await,
        Err(ribbridge::frr::VtyError::NotAllowed(_))
    ));
    task.abort();
    drop(lab_guard);
}

#[tokio::test]
async fn configure_heals_frr_8_4() {
    configure_heals("8.4").await;
}

#[tokio::test]
async fn configure_heals_frr_10_7() {
    configure_heals("10.7").await;
}
