//! Malformed ZAPI from a fake zebra over a unix socket: the edge cases a
//! real zebra cannot be made to produce. A wrong marker, a wrong version, a
//! length below the header and a frame cut short by the peer each end the
//! session with a logged reason and a reconnect; an unknown command is
//! skipped by its length; a route with 300 nexthops is decoded whole; a
//! route whose body is truncated is reported as undecodable. Nothing
//! panics and the view after the last good dump is exactly that dump.
//!
//! zebra replaced by another release between sessions: the client reads the
//! release again each time and speaks that release's numbering, for the
//! captured releases and for every numbering table of the codec.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{BufMut, BytesMut};
use ribbridge::frr::release::{Release, ReleaseNumbering};
use ribbridge::frr::vty::fake::{FakeVty, success};
use ribbridge::frr::zapi::client::{self, ZapiConfig, ZapiEvent};
use ribbridge::frr::zapi::codec::{
    Command, Dialect, Frame, FrameCodec, Gateway, Nexthop, Numbering, ROUTE_SYSTEM, ZapiRoute,
};
use ribbridge::frr::{TableMode, VtyReply, capture};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::mpsc;
use tokio_util::codec::{Decoder, Encoder};

/// One release's vty answers: captured from the real daemons, or made up
/// for a numbering the lab does not run.
#[derive(Clone)]
struct Captured {
    show_version: VtyReply,
    running_config: VtyReply,
}

/// The answers captured from `release`'s daemons.
fn captured(release: &str) -> Captured {
    Captured {
        show_version: capture::vty_reply(release, "show-version"),
        running_config: capture::vty_reply(release, "bgpd-running-config"),
    }
}

fn frr_10_7() -> Captured {
    captured("10.7.1")
}

/// The first release of numbering `n`, redistributing table 198 the way
/// that release can (table-direct from 10.0, else import-table).
fn made_up(n: Numbering) -> Captured {
    let (major, minor) = n.first_release();
    let mode = if major >= 10 { "table-direct" } else { "table" };
    Captured {
        show_version: success(format!("FRRouting {major}.{minor} (fake) on Linux(6.1).\n")),
        running_config: success(format!(
            "router bgp 65000\n address-family ipv4 unicast\n  redistribute {mode} 198\n"
        )),
    }
}

impl Captured {
    /// The release its `show version` names.
    fn release(&self) -> Release {
        Release::from_show_version(&self.show_version.text).expect("release")
    }
}

/// A fake zebra and bgpd in a temporary directory, answering as `which`
/// holds, and a client task subscribed through them.
struct Fake {
    /// The sockets' directory: keep it bound, it is deleted when dropped.
    _dir: tempfile::TempDir,
    /// The release the vty sockets answer as.
    which: Arc<Mutex<Captured>>,
    /// zserv.api: each accept is one client session.
    zserv: UnixListener,
    /// What the client reports.
    rx: mpsc::Receiver<ZapiEvent>,
    /// The client.
    task: tokio::task::JoinHandle<()>,
}

/// Starts the fakes answering as `rel` and a client with table 198, `mode`
/// (`None`: read from bgpd) and an event channel of `channel` slots; it
/// reconnects within 10-50 ms.
fn start(rel: Captured, mode: Option<TableMode>, channel: usize) -> Fake {
    let dir = tempfile::tempdir().expect("tempdir");
    let which = Arc::new(Mutex::new(rel));
    // zebra.vty / bgpd.vty: `enable` succeeds, `show version` and `show
    // running-config` answer as the release `which` currently holds.
    for sock in ["zebra.vty", "bgpd.vty"] {
        let which = which.clone();
        FakeVty::serve(&dir.path().join(sock), move |cmd| {
            let rel = which.lock().expect("lock");
            match cmd {
                "show version" => rel.show_version.clone(),
                "show running-config" => rel.running_config.clone(),
                _ => success(""),
            }
        })
        .expect("bind vty");
    }
    let zserv = UnixListener::bind(dir.path().join("zserv.api")).expect("bind zserv");
    let mut cfg = ZapiConfig::in_dir(Path::new(dir.path()), 198);
    cfg.mode = mode;
    cfg.backoff_min = Duration::from_millis(10);
    cfg.backoff_max = Duration::from_millis(50);
    let (tx, rx) = mpsc::channel(channel);
    let task = tokio::spawn(client::run(cfg, tx));
    Fake {
        _dir: dir,
        which,
        zserv,
        rx,
        task,
    }
}

/// [`start`] as FRR 10.7 in table-direct mode, and that release's dialect.
fn start_10_7(channel: usize) -> (Fake, Dialect) {
    let rel = frr_10_7();
    let d = rel.release().dialect().expect("dialect");
    (start(rel, Some(TableMode::TableDirect), channel), d)
}

fn route(d: Dialect, prefix: &str, nexthops: u32) -> ZapiRoute {
    route_of(
        d.route_table_direct().expect("10.7 has table-direct"),
        prefix,
        nexthops,
    )
}

/// A VIP route of `route_type` over `nexthops` gateways 198.18.0.i on
/// interface 2.
fn route_of(route_type: u8, prefix: &str, nexthops: u32) -> ZapiRoute {
    let nexthop = |i| {
        Nexthop::to(Gateway::Ipv4 {
            gate: std::net::Ipv4Addr::from(0xc612_0000 + i),
            ifindex: 2,
            with_ifindex: true,
        })
    };
    let nexthops = (0..nexthops).map(nexthop).collect();
    ZapiRoute::sample(route_type, prefix.parse().expect("prefix"), nexthops)
}

fn bytes(f: Frame) -> Vec<u8> {
    let mut b = BytesMut::new();
    FrameCodec.encode(f, &mut b).expect("encode");
    b.to_vec()
}

/// A raw header: length, marker, version, vrf, command.
fn header(len: u16, marker: u8, version: u8, command: u16) -> Vec<u8> {
    let mut b = BytesMut::new();
    b.put_u16(len);
    b.put_u8(marker);
    b.put_u8(version);
    b.put_u32(0);
    b.put_u16(command);
    b.to_vec()
}

/// The client's end-of-dump marker: a ROUTER_ID_UPDATE (IPv4 0.0.0.0/0).
fn marker(d: Dialect) -> Vec<u8> {
    let mut body = BytesMut::new();
    body.put_u8(2);
    body.put_u32(0);
    body.put_u8(0);
    bytes(Frame {
        vrf_id: 0,
        command: d.command(Command::RouterIdUpdate),
        body: body.freeze(),
    })
}

fn add(d: Dialect, r: &ZapiRoute) -> Vec<u8> {
    bytes(d.encode_route(true, r).expect("encode route"))
}

/// Accept the next session, send `out`, then either hold it open until the
/// client hangs up (`hold`) or close it.
async fn session(l: &UnixListener, out: Vec<u8>, hold: bool) -> UnixStream {
    session_with(l, out, hold).await.0
}

/// [`session`], also returning what the client said first.
async fn session_with(l: &UnixListener, out: Vec<u8>, hold: bool) -> (UnixStream, Vec<Frame>) {
    let (mut s, _) = tokio::time::timeout(Duration::from_secs(5), l.accept())
        .await
        .expect("the client reconnects")
        .expect("accept");
    // The client's HELLO, two REDISTRIBUTE_ADDs and its ROUTER_ID_ADD
    // first: zebra answers only after them.
    let mut got = BytesMut::new();
    let mut frames = Vec::new();
    while frames.len() < 4 {
        let n = s.read_buf(&mut got).await.expect("read the subscription");
        assert!(n > 0, "the client hung up before subscribing");
        while let Some(f) = FrameCodec.decode(&mut got).expect("the client's frames") {
            frames.push(f);
        }
    }
    s.write_all(&out).await.expect("write");
    if hold {
        // Drain what the client says until it hangs up (it must, after a
        // bad frame): reading to EOF is the wait.
        let mut sink = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut sink)).await;
    }
    (s, frames)
}

/// One session as `rel` (which the vty fakes must already serve): zebra
/// dumps one VIP route of the type `mode` subscribes to, then hangs up.
/// Asserts that the client reported that release and mode, decoded the
/// route in that release's numbering and synced on it; returns what the
/// client said first.
async fn dump_one_route_as(
    zserv: &UnixListener,
    rx: &mut mpsc::Receiver<ZapiEvent>,
    rel: &Captured,
    mode: TableMode,
) -> Vec<Frame> {
    let release = rel.release();
    let d = release.dialect().expect("dialect");
    let rtype = client::route_type(d, mode).expect("route type");
    let mut out = add(d, &route_of(rtype, "192.0.2.10/32", 1));
    out.extend(marker(d));
    // zebra goes away after the dump (the release is replaced).
    let (s, said) = session_with(zserv, out, false).await;
    drop(s);
    let (reason, seen) = until_disconnected(rx).await;
    assert!(
        matches!(&seen[0], ZapiEvent::Connected { release: r, mode: m, .. } if *r == release && *m == mode),
        "FRR {release}: {seen:?}"
    );
    assert!(
        seen.iter()
            .any(|e| matches!(e, ZapiEvent::RouteAdd { route } if route.route_type == rtype)),
        "FRR {release}: the VIP decoded with its numbering: {seen:?}"
    );
    assert!(
        matches!(seen.last(), Some(ZapiEvent::Synced { routes: 1, .. })),
        "FRR {release}: {seen:?}"
    );
    assert!(reason.contains("closed"), "{reason}");
    said
}

async fn next(rx: &mut mpsc::Receiver<ZapiEvent>) -> ZapiEvent {
    tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("an event within 5 s")
        .expect("the client task is alive")
}

async fn until_disconnected(rx: &mut mpsc::Receiver<ZapiEvent>) -> (String, Vec<ZapiEvent>) {
    let mut seen = Vec::new();
    loop {
        match next(rx).await {
            ZapiEvent::Disconnected { reason, .. } => return (reason, seen),
            e => seen.push(e),
        }
    }
}

#[tokio::test]
async fn malformed_frames_end_the_session_and_the_client_reconnects() {
    let (mut fake, d) = start_10_7(1024);
    let vip = route(d, "192.0.2.10/32", 1);
    let cmd_add = d.command(Command::RedistributeRouteAdd);

    // 1. A good dump, then a frame with a wrong marker.
    let mut out = add(d, &vip);
    out.extend(marker(d));
    out.extend(header(12, 0xfd, 6, cmd_add));
    out.extend([0, 0]);
    session(&fake.zserv, out, true).await;
    let (reason, seen) = until_disconnected(&mut fake.rx).await;
    assert!(reason.contains("marker"), "{reason}");
    assert!(matches!(seen[0], ZapiEvent::Connected { .. }), "{seen:?}");
    assert!(
        seen.iter()
            .any(|e| matches!(e, ZapiEvent::Synced { routes: 1, .. })),
        "{seen:?}"
    );

    // 2. A wrong version; 3. a length below the header.
    for (bad, want) in [
        (header(10, 0xfe, 5, cmd_add), "version"),
        (header(5, 0xfe, 6, cmd_add), "below the 10-byte header"),
    ] {
        let mut out = marker(d);
        out.extend(bad);
        session(&fake.zserv, out, true).await;
        let (reason, _) = until_disconnected(&mut fake.rx).await;
        assert!(reason.contains(want), "{want}: {reason}");
    }

    // 4. An unknown command (skipped by its length), a route with 300
    // nexthops (decoded whole), a truncated route body (undecodable), the
    // marker; then a header announcing 65535 bytes of which 100 arrive
    // before zebra hangs up.
    let mut out = header(30, 0xfe, 6, 0x7777);
    out.extend([0xab; 20]);
    let wide = route(d, "192.0.2.11/32", 300);
    let wide_frame = add(d, &wide);
    assert!(wide_frame.len() > 300 * 10, "300 nexthops on the wire");
    out.extend(wide_frame);
    out.extend(header(13, 0xfe, 6, cmd_add));
    out.extend([1, 2, 3]);
    out.extend(add(d, &vip));
    out.extend(marker(d));
    out.extend(header(u16::MAX, 0xfe, 6, cmd_add));
    out.extend([0u8; 100]);
    drop(session(&fake.zserv, out, false).await);
    let (reason, seen) = until_disconnected(&mut fake.rx).await;
    assert!(
        reason.contains("closed the connection in the middle of a frame (110 bytes of 65535"),
        "{reason}"
    );
    let wide_seen = seen.iter().find_map(|e| match e {
        ZapiEvent::RouteAdd { route } if route.prefix == wide.prefix => Some(route.nexthops.len()),
        _ => None,
    });
    assert_eq!(wide_seen, Some(300), "{seen:?}");
    assert!(
        seen.iter()
            .any(|e| matches!(e, ZapiEvent::Undecodable { command, .. } if *command == cmd_add)),
        "the truncated route is reported: {seen:?}"
    );
    assert!(
        seen.iter()
            .any(|e| matches!(e, ZapiEvent::Synced { routes: 2, .. })),
        "the VIP and the wide route, nothing else: {seen:?}"
    );

    // 5. A good dump of the VIP alone: the wide route is dropped as stale,
    // the view is exactly zebra's.
    let mut out = add(d, &vip);
    out.extend(marker(d));
    let s = session(&fake.zserv, out, false).await;
    let mut seen = Vec::new();
    loop {
        let e = next(&mut fake.rx).await;
        let done = matches!(e, ZapiEvent::Synced { .. });
        seen.push(e);
        if done {
            break;
        }
    }
    assert!(
        seen.iter().any(|e| matches!(e, ZapiEvent::RouteDel { route, stale: true } if route.prefix == wide.prefix)),
        "{seen:?}"
    );
    assert!(
        matches!(
            seen.last(),
            Some(ZapiEvent::Synced {
                routes: 1,
                dropped_stale: 1
            })
        ),
        "{seen:?}"
    );
    assert!(!fake.task.is_finished(), "the client task is still running");
    drop(s);
    fake.task.abort();
}

/// zebra replaced by another release between two sessions (10.7 -> 8.4 ->
/// 10.7, the lab's table modes): each session reads the release and the
/// table mode again, subscribes with that release's numbering, and decodes
/// that release's frames; the view stays exactly zebra's.
#[tokio::test]
async fn a_release_switch_between_sessions_switches_numbering() {
    let mut fake = start(frr_10_7(), None, 1024);
    for (rel, mode) in [
        (frr_10_7(), TableMode::TableDirect),
        (captured("8.4.4"), TableMode::ImportTable),
        (frr_10_7(), TableMode::TableDirect),
    ] {
        *fake.which.lock().expect("lock") = rel.clone();
        dump_one_route_as(&fake.zserv, &mut fake.rx, &rel, mode).await;
    }
    fake.task.abort();
}

/// Every numbering table of the codec (`Numbering::ALL`), each as its
/// first release with the table mode that release has, one after the other
/// on one client: the release zebra reports maps to that numbering, the
/// client subscribes in it (HELLO's number and body length, the route type
/// of REDISTRIBUTE_ADD, ROUTER_ID_ADD as the marker request) and decodes a
/// route sent in it.
#[tokio::test]
async fn every_numbering_subscribes_and_decodes_in_its_own_numbers() {
    let mut fake = start(made_up(Numbering::ALL[0]), None, 1024);
    for n in Numbering::ALL {
        let rel = made_up(n);
        *fake.which.lock().expect("lock") = rel.clone();
        let d = rel.release().dialect().expect("dialect");
        assert_eq!(
            d.numbering,
            n,
            "FRR {} maps to its own numbering",
            rel.release()
        );
        let mode = if d.route_table_direct().is_some() {
            TableMode::TableDirect
        } else {
            TableMode::ImportTable
        };
        let rtype = client::route_type(d, mode).expect("route type");
        let said = dump_one_route_as(&fake.zserv, &mut fake.rx, &rel, mode).await;

        let hello = &said[0];
        assert_eq!(hello.command, d.command(Command::Hello), "{n:?}");
        let notify = usize::from(d.hello_has_notify());
        assert_eq!(hello.body.len(), 8 + notify, "{n:?}: HELLO's body");
        assert_eq!(d.decode_hello(hello).expect("hello").proto, ROUTE_SYSTEM);
        for f in &said[1..3] {
            assert_eq!(f.command, d.command(Command::RedistributeAdd), "{n:?}");
            let r = d.decode_redistribute(f).expect("redistribute");
            assert_eq!((r.route_type, r.instance), (rtype, 198), "{n:?}");
        }
        assert_eq!(said[3].command, d.command(Command::RouterIdAdd), "{n:?}");
    }
    fake.task.abort();
}

/// A dump larger than the event channel (5 000 routes, 16 slots, the
/// reader slower than zebra): the client waits for room instead of ending
/// the session, so the dump completes in one session. (Ending it
/// made a 100 000-route table re-dump and overflow forever: the bench's
/// scale run never became ready.)
#[tokio::test]
async fn a_dump_larger_than_the_channel_completes_in_one_session() {
    let (mut fake, d) = start_10_7(16);
    let n: u32 = 5_000;
    let mut out = Vec::new();
    for i in 0..n {
        let p = format!("10.{}.{}.{}/32", i >> 16, (i >> 8) & 0xff, i & 0xff);
        out.extend(add(d, &route(d, &p, 1)));
    }
    out.extend(marker(d));
    // zebra writes the dump while the channel is full most of the time.
    let zserv = fake.zserv;
    let zebra = tokio::spawn(async move { session(&zserv, out, true).await });
    let mut adds = 0u32;
    loop {
        if adds % 1000 == 0 {
            tokio::task::yield_now().await;
        }
        match next(&mut fake.rx).await {
            ZapiEvent::RouteAdd { .. } => adds += 1,
            ZapiEvent::Synced { routes, .. } => {
                assert_eq!(routes, n as usize);
                break;
            }
            ZapiEvent::Disconnected { reason, .. } => panic!("session ended: {reason}"),
            _ => {}
        }
    }
    assert_eq!(adds, n);
    fake.task.abort();
    let _ = zebra.await;
}
