//! The BMP station's sockets (`--vantage bmp`): routers export their BGP
//! view to it over BMP (RFC 7854); the state is [`crate::bmp::station`].
//!
//! Contract: one listener task accepts routers' TCP sessions, only from
//! `--bmp-allow`, at most `--bmp-sessions-per-address` per address and
//! `--bmp-max-sessions` ([`DEFAULT_MAX_SESSIONS`]) in all (the rest
//! closed at accept, counted, logged once per address and reason; a failed
//! accept pauses, counted and logged once per episode:
//! [`crate::http::AcceptFailures`]), with TCP keepalive, and numbers each session in
//! accept order (its [`SessionId`]: the station's rule for which session
//! speaks for a router); one task per session frames the stream
//! ([`crate::bmp::BmpCodec`]), decodes each message
//! ([`crate::bmp::Decoder`]) and sends it to the owner through the bounded
//! [`super::BMP_CHANNEL`] (when full the session task waits: the router's
//! TCP window holds the rest, nothing is lost). A session that sends
//! nothing within [`HELLO_TIMEOUT`] or leaves a message half-sent for
//! [`PARTIAL_TIMEOUT`] is closed. The owner holds the [`Station`] and
//! publishes its [`Output`]s with [`publish`]: counted, and its notes
//! logged. Malformed input ends that session only, logged and counted;
//! never the process.

use std::collections::{BTreeSet, HashMap};
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use futures::StreamExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::codec::FramedRead;
use tokio_util::sync::CancellationToken;

use crate::bmp::station::{printable, state_name};
use crate::bmp::{BmpCodec, Bounds, Decoder, Limits, Message, Note, PeerKey};
pub use crate::bmp::{BmpInput, Output, SessionId, Station};
use crate::model::Prefix;
use crate::telemetry;

/// The settings' BMP bounds as the station keeps them.
impl From<&crate::config::BmpLimits> for Bounds {
    fn from(l: &crate::config::BmpLimits) -> Bounds {
        Bounds {
            max_routers: l.max_routers,
            view: Limits {
                peers_per_router: l.max_peers,
                paths_per_vip: l.max_paths,
                patience_ms: l.sync_secs.saturating_mul(1000),
            },
        }
    }
}

/// Tell telemetry what the station did, and log what it noted.
pub fn publish(outputs: Vec<Output>) {
    for o in outputs {
        match o {
            Output::Paths {
                router,
                prefix,
                paths,
                stale,
            } => telemetry::router_paths(&router, &prefix, paths, stale),
            Output::Forgotten { router } => telemetry::router_forgotten(&router),
            Output::Refused { reason, n } => telemetry::bmp_refused(reason, n),
            Output::Fallbacks(n) => telemetry::bmp_sync_fallbacks(n),
            Output::Message(kind) => telemetry::bmp_message(kind),
            Output::Skipped { afi, safi, n } => telemetry::bmp_skipped_nlri(afi, safi, n),
            Output::Anomaly(reason) => telemetry::bmp_update_anomaly(reason),
            Output::SessionEnd(kind) => telemetry::bmp_session_end(kind),
            Output::Sessions(n) => telemetry::bmp_sessions(n),
            Output::Note(note) => log(note),
        }
    }
}

/// The station's note as a log line.
fn log(note: Note) {
    let peers = |ps: &[PeerKey]| ps.iter().map(ToString::to_string).collect::<Vec<_>>();
    let shown = |n: Option<u32>| n.map_or_else(|| "unknown".to_string(), |n| n.to_string());
    match note {
        Note::RefusedFirst(reason) => {
            let text = match reason {
                "peers" => {
                    "a router reported more BGP peers than --bmp-max-peers: the rest are not counted"
                }
                "paths" => {
                    "a router held more paths for a VIP than --bmp-max-paths: the rest are not counted"
                }
                _ => {
                    "a new router is not kept: the station has --bmp-max-routers; its session stays open and is ignored"
                }
            };
            tracing::warn!(
                reason,
                "bmp: {text} (logged once; counted in ribbridge_bmp_refused_total)"
            );
        }
        Note::Accepted { session, address } => {
            tracing::debug!(%address, session, "bmp: a connection accepted");
        }
        Note::Outranked {
            router,
            address,
            session,
            newest,
        } => {
            tracing::info!(%router, %address, session, newest, "bmp: a session accepted before the router's newest one spoke after it: ignored (the session accepted last speaks for the router)");
        }
        Note::Connected { address, session } => {
            tracing::info!(%address, session, "bmp: a router connected");
        }
        Note::Initiation {
            router,
            sys_name,
            sys_descr,
        } => tracing::info!(
            %router,
            sys_name = sys_name.as_deref().unwrap_or("-"),
            sys_descr = %sys_descr.as_deref().unwrap_or("-"),
            "bmp: initiation"
        ),
        Note::PeerUp {
            router,
            peer,
            asn,
            bgp_id,
            graceful_restart,
        } => {
            let gr = graceful_restart.as_ref().map_or_else(
                || "-".to_string(),
                |g| format!("{}s {:?}", g.restart_time, g.families),
            );
            tracing::info!(%router, %peer, asn, %bgp_id, graceful_restart = %gr, "bmp: peer up");
        }
        Note::PeerDown {
            router,
            peer,
            reason,
            notification,
        } => {
            let notification = notification
                .map_or_else(|| "-".to_string(), |n| format!("{}/{}", n.code, n.subcode));
            tracing::info!(%router, %peer, %reason, %notification, "bmp: peer down");
        }
        Note::Stats {
            router,
            peer,
            counters,
        } => tracing::debug!(%router, %peer, ?counters, "bmp: statistics report"),
        Note::Termination { router, reason } => {
            tracing::info!(%router, %reason, "bmp: termination");
        }
        Note::AnomalyFirst {
            router,
            peer,
            anomaly,
        } => {
            tracing::warn!(%router, %peer, reason = anomaly.as_str(), "bmp: an UPDATE announces paths with a missing or malformed attribute; its paths are counted as the router holds them (RFC 7606's treat-as-withdraw is for a BGP speaker; logged once per router and reason, counted in ribbridge_bmp_update_anomalies_total)");
        }
        Note::State { router, state } => {
            tracing::info!(%router, state = %state_name(state), "bmp: router state");
        }
        Note::Replaced { router, address } => {
            tracing::warn!(router = router.as_str(), %address, "bmp: a new session from the router's address replaces its open one");
        }
        Note::SilentEnded {
            address,
            session,
            reason,
        } => {
            tracing::debug!(%address, session, %reason, "bmp: a connection ended before its first BMP message (no router)");
        }
        Note::IgnoredEnded { address, reason } => {
            tracing::info!(%address, %reason, "bmp: a replaced or ignored session ended");
        }
        Note::Ended {
            router,
            reason,
            malformed: true,
        } => tracing::error!(
            %router,
            %reason,
            "bmp: malformed input; session closed (the router reconnects with its retry timer; if this repeats, capture the session with tcpdump and report the router's release)"
        ),
        Note::Ended { router, reason, .. } => {
            tracing::warn!(%router, %reason, "bmp: session ended");
        }
        Note::Late {
            router,
            peers: late,
        } => {
            tracing::warn!(%router, peers = ?peers(&late), "bmp: no End-of-RIB from these peers in time (--bmp-sync-secs); counting the paths they sent (counts may be low until their dumps are complete)");
        }
        Note::StaleEnded {
            router,
            peers: ended,
        } => {
            tracing::info!(%router, peers = ?peers(&ended), "bmp: graceful restart over for these peers: the router's stale paths of theirs are gone");
        }
        Note::NothingOwed { router } => {
            tracing::info!(%router, "bmp: no peer owed an End-of-RIB within --bmp-sync-secs of the session's first message; counting what the router sent");
        }
        Note::Forgotten { router, stale_ms } => {
            tracing::info!(%router, stale_ms, "bmp: stale router forgotten");
        }
        Note::Paths {
            router,
            prefix,
            paths,
            stale,
        } => {
            tracing::info!(%router, %prefix, paths = %shown(paths), stale = %shown(stale), "bmp: router paths");
        }
    }
}

/// The most BMP sessions served at once when nothing says otherwise
/// (`--bmp-max-sessions`; the value is the setting's).
pub const DEFAULT_MAX_SESSIONS: usize = crate::config::DEFAULT_BMP_MAX_SESSIONS;

/// How long a new connection may take to send its first message (FRR sends
/// Initiation at once): a socket that says nothing is closed.
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

/// How long one message may take to arrive whole once it has started.
pub const PARTIAL_TIMEOUT: Duration = Duration::from_secs(30);

/// TCP keepalive on every session: a router gone without a FIN is noticed
/// within about IDLE + COUNT x INTERVAL (60 s); a silent BMP session is
/// normal (no route changes, no statistics configured).
const KEEPALIVE_IDLE_SECS: u32 = 30;
const KEEPALIVE_INTERVAL_SECS: u32 = 10;
const KEEPALIVE_COUNT: u32 = 3;

/// Why the station cannot listen.
#[derive(Debug, thiserror::Error)]
#[error(
    "--bmp-listen {addr}: cannot listen for BMP sessions: {source} (is another station on this port? choose another address with --bmp-listen)"
)]
pub struct ListenError {
    /// The address.
    pub addr: SocketAddr,
    /// Why.
    pub source: std::io::Error,
}

/// Bind the station's listener (at start, so that a taken port fails the
/// start instead of a task).
pub async fn bind(addr: SocketAddr) -> Result<TcpListener, ListenError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| ListenError { addr, source })
}

/// Which connections the listener takes.
#[derive(Debug, Clone)]
pub struct Admission {
    /// Source networks allowed.
    pub allow: Vec<Prefix>,
    /// Sessions at once per source address.
    pub per_address: usize,
    /// Sessions at once in all.
    pub max_sessions: usize,
}

/// Why a connection is refused at accept, if it is.
fn refusal(
    adm: &Admission,
    open: &HashMap<IpAddr, usize>,
    total: usize,
    from: IpAddr,
) -> Option<&'static str> {
    if !adm.allow.iter().any(|p| p.contains(from)) {
        Some("not_allowed")
    } else if open.get(&from).copied().unwrap_or(0) >= adm.per_address {
        Some("sessions_per_address")
    } else if total >= adm.max_sessions {
        Some("sessions")
    } else {
        None
    }
}

/// Accept routers until `stop`; one task per session. Refusals are
/// counted; each reason is logged once per source address.
pub async fn listen(
    listener: TcpListener,
    adm: Admission,
    tx: mpsc::Sender<BmpInput>,
    stop: CancellationToken,
) {
    let mut sessions = JoinSet::new();
    let mut open: HashMap<IpAddr, usize> = HashMap::new();
    let mut logged: BTreeSet<(IpAddr, &'static str)> = BTreeSet::new();
    let mut next: SessionId = 0;
    // Each session task's id: its session and address.
    let mut running: HashMap<tokio::task::Id, (SessionId, IpAddr)> = HashMap::new();
    let mut failures = crate::http::AcceptFailures::new("bmp");
    loop {
        tokio::select! {
            _ = stop.cancelled() => break,
            Some(done) = sessions.join_next_with_id(), if !sessions.is_empty() => {
                let id = match &done {
                    Ok((id, ())) => *id,
                    Err(e) => e.id(),
                };
                let Some((session, ip)) = running.remove(&id) else {
                    continue;
                };
                if let Err(e) = done
                    && e.is_panic()
                {
                    // The task could not say goodbye: say it for it, or
                    // its router would stay synced on a dead session.
                    tracing::error!(session, %ip, error = %e, "bmp: a session task panicked; its router's paths are unknown until it reconnects");
                    crate::telemetry::task_failed("bmp session", "panic");
                    let down = BmpInput::Down {
                        session,
                        kind: "panic",
                        reason: format!("the session's task panicked: {e}"),
                    };
                    if tx.send(down).await.is_err() {
                        break;
                    }
                }
                if let Some(n) = open.get_mut(&ip) {
                    *n = n.saturating_sub(1);
                    if *n == 0 {
                        open.remove(&ip);
                    }
                }
            }
            r = listener.accept() => match r {
                Ok((stream, address)) => {
                    failures.accepted();
                    let ip = address.ip();
                    if let Some(reason) = refusal(&adm, &open, sessions.len(), ip) {
                        drop(stream);
                        telemetry::bmp_refused(reason, 1);
                        // Bounded: a reason per address that reached the
                        // port, and never more than the station's routers' worth.
                        if logged.len() < 4_096 && logged.insert((ip, reason)) {
                            tracing::warn!(%address, reason, "bmp: connection refused (logged once per address and reason; counted in ribbridge_bmp_refused_total): check --bmp-allow, --bmp-sessions-per-address and what connects to --bmp-listen");
                        }
                        continue;
                    }
                    keepalive(&stream, address);
                    *open.entry(ip).or_default() += 1;
                    // The accept sequence number: the station lets the
                    // session accepted last speak for a router, whatever
                    // order the session tasks report in.
                    next += 1;
                    let (tx, stop) = (tx.clone(), stop.clone());
                    let id = sessions
                        .spawn(async move { session(next, stream, address, tx, stop).await })
                        .id();
                    running.insert(id, (next, ip));
                }
                Err(e) => {
                    failures.failed(&e);
                    tokio::select! {
                        _ = stop.cancelled() => break,
                        () = tokio::time::sleep(crate::http::ACCEPT_PAUSE) => {}
                    }
                }
            }
        }
    }
    sessions.shutdown().await;
}

/// TCP keepalive on a session (failures are logged: the session still
/// works, a dead router is then noticed only by its next write).
fn keepalive(stream: &TcpStream, address: SocketAddr) {
    use nix::sys::socket::{setsockopt, sockopt};
    let r = setsockopt(stream, sockopt::KeepAlive, &true)
        .and_then(|()| setsockopt(stream, sockopt::TcpKeepIdle, &KEEPALIVE_IDLE_SECS))
        .and_then(|()| setsockopt(stream, sockopt::TcpKeepInterval, &KEEPALIVE_INTERVAL_SECS))
        .and_then(|()| setsockopt(stream, sockopt::TcpKeepCount, &KEEPALIVE_COUNT));
    if let Err(e) = r {
        tracing::warn!(%address, error = %e, "bmp: cannot set TCP keepalive on the session");
    }
}

/// Failpoint `bmp-session-panic`: the session task panics when the router
/// announces the armed prefix.
fn failpoint_session(message: &Message) {
    if let Message::Route { announced, .. } = message {
        for p in announced {
            if crate::fault::armed("bmp-session-panic", &p.prefix) {
                panic!(
                    "failpoint bmp-session-panic: the router announced {}",
                    p.prefix
                );
            }
        }
    }
}

/// One router's session: frame, decode, forward; the end is always sent
/// (by the listener when the session's task panicked).
async fn session(
    session: SessionId,
    stream: TcpStream,
    address: SocketAddr,
    tx: mpsc::Sender<BmpInput>,
    stop: CancellationToken,
) {
    if tx.send(BmpInput::Up { session, address }).await.is_err() {
        return;
    }
    let mut frames = FramedRead::new(stream, BmpCodec::default());
    // Per session: it learns which peers use add-path from their Peer Up.
    let mut decoder = Decoder::new();
    let mut first = true;
    let (kind, reason) = loop {
        // Silence is fine between messages, not before the first one nor
        // inside one.
        let limit = if first {
            Some(HELLO_TIMEOUT)
        } else if !frames.read_buffer().is_empty() {
            Some(PARTIAL_TIMEOUT)
        } else {
            None
        };
        let next = async {
            match limit {
                Some(l) => tokio::time::timeout(l, frames.next()).await.map_err(|_| l),
                None => Ok(frames.next().await),
            }
        };
        let frame = tokio::select! {
            _ = stop.cancelled() => return,
            f = next => f,
        };
        let bytes = match frame {
            Err(l) if first => {
                break ("idle", format!("no BMP message within {l:?} of connecting"));
            }
            Err(l) => {
                break (
                    "idle",
                    format!("a BMP message did not arrive whole within {l:?}"),
                );
            }
            Ok(None) => break ("closed", "the router closed the session".to_string()),
            Ok(Some(Err(crate::bmp::FrameError::Io(e)))) => break ("io", e.to_string()),
            Ok(Some(Err(e))) => break ("malformed", e.to_string()),
            Ok(Some(Ok(b))) => b,
        };
        first = false;
        match decoder.decode(bytes) {
            Ok(message) => {
                failpoint_session(&message);
                let end = match &message {
                    Message::Termination { reason } => Some(printable(reason, 1024)),
                    _ => None,
                };
                if tx
                    .send(BmpInput::Message { session, message })
                    .await
                    .is_err()
                {
                    return;
                }
                if let Some(r) = end {
                    break ("termination", format!("the router ended the session: {r}"));
                }
            }
            Err(e) => break ("malformed", e.to_string()),
        }
    };
    // The owner is gone only when the daemon stops.
    let _ = tx
        .send(BmpInput::Down {
            session,
            kind,
            reason,
        })
        .await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// The listener on a loopback port, admitting 127.0.0.0/8 with
    /// `per_address` sessions each and `max_sessions` in all: its address,
    /// the owner's end of the channel (`capacity`), the stop token and the
    /// task.
    async fn listening(
        capacity: usize,
        per_address: usize,
        max_sessions: usize,
    ) -> (
        SocketAddr,
        mpsc::Receiver<BmpInput>,
        CancellationToken,
        tokio::task::JoinHandle<()>,
    ) {
        let listener = bind("127.0.0.1:0".parse().expect("addr"))
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (tx, rx) = mpsc::channel(capacity);
        let stop = CancellationToken::new();
        let adm = Admission {
            allow: vec!["127.0.0.0/8".parse().expect("cidr")],
            per_address,
            max_sessions,
        };
        let station = tokio::spawn(listen(listener, adm, tx, stop.clone()));
        (addr, rx, stop, station)
    }

    /// FRR 8.4's captured session, and the length of its first message
    /// (the Initiation: the common header's length, bytes 1..5).
    fn capture_and_initiation_len() -> (Vec<u8>, usize) {
        let capture = std::fs::read(format!(
            "{}/tests/data/bmp/8.4/session1.bin",
            env!("CARGO_MANIFEST_DIR")
        ))
        .expect("capture");
        let first = u32::from_be_bytes([capture[1], capture[2], capture[3], capture[4]]) as usize;
        (capture, first)
    }

    /// The listener and a session task on loopback: a captured session's
    /// first message is forwarded, then garbage ends that session (and
    /// only it) as malformed; a clean close is `closed`.
    #[tokio::test]
    async fn malformed_input_ends_the_session_not_the_station() {
        use tokio::io::AsyncWriteExt;
        let (addr, mut rx, stop, station) = listening(16, 2, DEFAULT_MAX_SESSIONS).await;
        let (capture, first) = capture_and_initiation_len();

        let mut bad = TcpStream::connect(addr).await.expect("connect");
        bad.write_all(&capture[..first]).await.expect("write");
        // Version 9: not BMP v3.
        bad.write_all(&[9, 0, 0, 0, 6, 4]).await.expect("write");
        let mut good = TcpStream::connect(addr).await.expect("connect");
        good.write_all(&capture[..first]).await.expect("write");
        good.shutdown().await.expect("close");

        let mut ends = BTreeMap::new();
        let mut initiations = 0;
        while ends.len() < 2 {
            match tokio::time::timeout(Duration::from_secs(5), rx.recv()).await {
                Ok(Some(BmpInput::Message {
                    message: Message::Initiation { sys_name, .. },
                    ..
                })) => {
                    assert_eq!(sys_name.as_deref(), Some("rb-router"));
                    initiations += 1;
                }
                Ok(Some(BmpInput::Down {
                    session,
                    kind,
                    reason,
                })) => {
                    ends.insert(session, (kind, reason));
                }
                Ok(Some(_)) => {}
                Ok(None) => panic!("the station's channel closed"),
                Err(_) => panic!("no session end within 5 s; ends so far {ends:?}"),
            }
        }
        assert_eq!(initiations, 2);
        let kinds: Vec<&str> = ends.values().map(|(k, _)| *k).collect();
        assert!(
            kinds.contains(&"malformed") && kinds.contains(&"closed"),
            "{ends:?}"
        );
        let (_, why) = ends
            .values()
            .find(|(k, _)| *k == "malformed")
            .expect("malformed");
        assert!(why.contains('9'), "the reason names the bad version: {why}");
        // The station still accepts routers.
        let _again = TcpStream::connect(addr)
            .await
            .expect("the station still listens");
        match tokio::time::timeout(Duration::from_secs(5), rx.recv()).await {
            Ok(Some(BmpInput::Up { .. })) => {}
            other => panic!("expected a new session, got {other:?}"),
        }
        stop.cancel();
        station.await.expect("the listener stops");
    }

    /// More than `--bmp-max-sessions` connections (here 5): the next one
    /// is closed at once and never reaches the owner.
    #[tokio::test]
    async fn sessions_beyond_the_limit_are_refused() {
        use tokio::io::AsyncReadExt;
        const CAP: usize = 5;
        let (addr, mut rx, stop, station) = listening(2 * CAP, CAP, CAP).await;
        let mut open = Vec::new();
        for _ in 0..CAP {
            open.push(TcpStream::connect(addr).await.expect("connect"));
            match tokio::time::timeout(Duration::from_secs(5), rx.recv()).await {
                Ok(Some(BmpInput::Up { .. })) => {}
                other => panic!("expected a session, got {other:?}"),
            }
        }
        let mut extra = TcpStream::connect(addr).await.expect("connect");
        let mut buf = [0u8; 1];
        let n = tokio::time::timeout(Duration::from_secs(5), extra.read(&mut buf))
            .await
            .expect("the extra connection is closed within 5 s")
            .unwrap_or(0);
        assert_eq!(n, 0, "the station closes the connection over the limit");
        assert!(rx.try_recv().is_err(), "nothing reached the owner for it");
        stop.cancel();
        station.await.expect("the listener stops");
        drop(open);
    }

    /// Idle sockets from one address cannot lock routers out: past
    /// `--bmp-sessions-per-address` they are closed at accept, and an
    /// address outside `--bmp-allow` gets nothing at all.
    #[tokio::test]
    async fn the_allowlist_and_the_per_address_cap_hold_at_accept() {
        use tokio::io::AsyncReadExt;
        async fn run(allow: &str, tries: usize) -> (usize, usize) {
            let listener = bind("127.0.0.1:0".parse().expect("addr"))
                .await
                .expect("bind");
            let addr = listener.local_addr().expect("addr");
            let (tx, mut rx) = mpsc::channel(4 * tries);
            let stop = CancellationToken::new();
            let adm = Admission {
                allow: vec![allow.parse().expect("cidr")],
                per_address: 2,
                max_sessions: DEFAULT_MAX_SESSIONS,
            };
            let station = tokio::spawn(listen(listener, adm, tx, stop.clone()));
            let mut open = Vec::new();
            let mut closed = 0;
            for _ in 0..tries {
                let mut s = TcpStream::connect(addr).await.expect("connect");
                let mut b = [0u8; 1];
                // A refused socket is closed at once; an admitted one is
                // announced to the owner (and stays open, silent).
                tokio::select! {
                    r = s.read(&mut b) => {
                        assert_eq!(r.expect("read"), 0, "closed, not written to");
                        closed += 1;
                    }
                    m = rx.recv() => {
                        assert!(matches!(m, Some(BmpInput::Up { .. })), "{m:?}");
                        open.push(s);
                    }
                }
            }
            stop.cancel();
            station.await.expect("listener");
            (open.len(), closed)
        }
        assert_eq!(run("127.0.0.0/8", 50).await, (2, 48));
        assert_eq!(run("192.0.2.0/24", 50).await, (0, 50));
    }

    /// Slowloris: a connection that sends nothing, and one that sends a
    /// header announcing 1 MiB and then 10 bytes, are both closed as
    /// `idle` (the first at [`HELLO_TIMEOUT`], the second at
    /// [`PARTIAL_TIMEOUT`]); the clock is tokio's paused one, so the test
    /// waits for the ends, not for the time.
    #[tokio::test(start_paused = true)]
    async fn silent_and_half_sent_connections_are_closed() {
        use tokio::io::AsyncWriteExt;
        let (addr, mut rx, stop, station) = listening(16, 2, DEFAULT_MAX_SESSIONS).await;
        let (capture, first) = capture_and_initiation_len();
        let _silent = TcpStream::connect(addr).await.expect("connect");
        let mut half = TcpStream::connect(addr).await.expect("connect");
        half.write_all(&capture[..first]).await.expect("write");
        let mut big = vec![3];
        big.extend_from_slice(&(1u32 << 20).to_be_bytes());
        big.extend_from_slice(&[0; 10]);
        half.write_all(&big).await.expect("write");
        let mut ends = Vec::new();
        while ends.len() < 2 {
            match rx.recv().await {
                Some(BmpInput::Down { kind, reason, .. }) => ends.push((kind, reason)),
                Some(_) => {}
                None => panic!("the station's channel closed"),
            }
        }
        ends.sort();
        assert_eq!(
            ends,
            [
                (
                    "idle",
                    format!("a BMP message did not arrive whole within {PARTIAL_TIMEOUT:?}")
                ),
                (
                    "idle",
                    format!("no BMP message within {HELLO_TIMEOUT:?} of connecting")
                ),
            ]
        );
        stop.cancel();
        station.await.expect("the listener stops");
    }

    /// Rounds of [`a_short_connection_racing_a_router_never_replaces_its_session`].
    const RACE_ROUNDS: usize = 50;

    /// A short connection never replaces the router's real session,
    /// through the listener, on loopback: a connection from the
    /// router's address that opens and closes at once (silent in even
    /// rounds, with an Initiation in odd ones), then the router's real
    /// session sending FRR 8.4's capture. Whichever task reports first,
    /// the station ends every round with the real session speaking for the
    /// router: synced, 2 paths (the short one replacing it would leave the
    /// router stale or syncing). No sleep: each round awaits the short
    /// connection's end and every message of the real one.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn a_short_connection_racing_a_router_never_replaces_its_session() {
        use tokio::io::AsyncWriteExt;
        let (addr, mut rx, stop, listener) = listening(1_024, 8, DEFAULT_MAX_SESSIONS).await;
        let (capture, first) = capture_and_initiation_len();
        let mut frames = bytes::BytesMut::from(&capture[..]);
        let mut codec = BmpCodec::default();
        let mut count = 0;
        while tokio_util::codec::Decoder::decode(&mut codec, &mut frames)
            .expect("frame")
            .is_some()
        {
            count += 1;
        }
        let vip: Prefix = "192.0.2.10/32".parse().expect("prefix");
        // Rounds in which the short connection's first report came after
        // the real session's first: the order the old station got wrong.
        let mut late = 0;
        for round in 0..RACE_ROUNDS {
            let mut st = Station::new([vip], 300, &crate::config::BmpLimits::default());
            let mut short = TcpStream::connect(addr).await.expect("connect");
            if round % 2 == 1 {
                short.write_all(&capture[..first]).await.expect("write");
            }
            let short_from = short.local_addr().expect("addr");
            drop(short);
            let mut real = TcpStream::connect(addr).await.expect("connect");
            let real_from = real.local_addr().expect("addr");
            real.write_all(&capture).await.expect("write");
            let (mut short_id, mut real_id) = (None, None);
            let (mut short_ended, mut real_messages) = (false, 0);
            let mut order = Vec::new();
            while !(short_ended && real_messages == count) {
                let input = rx.recv().await.expect("the listener's channel");
                match &input {
                    BmpInput::Up { session, address } if *address == short_from => {
                        short_id = Some(*session);
                    }
                    BmpInput::Up { session, address } if *address == real_from => {
                        real_id = Some(*session);
                    }
                    BmpInput::Message { session, .. } if Some(*session) == real_id => {
                        real_messages += 1;
                    }
                    BmpInput::Message {
                        session,
                        message: Message::Initiation { .. },
                    } if Some(*session) == short_id && round % 2 == 1 => {}
                    BmpInput::Down { session, kind, .. } if Some(*session) == short_id => {
                        assert!(*kind == "closed" || *kind == "io", "{kind}");
                        short_ended = true;
                    }
                    other => panic!("round {round}: unexpected {other:?}"),
                }
                let session = match &input {
                    BmpInput::Up { session, .. }
                    | BmpInput::Message { session, .. }
                    | BmpInput::Down { session, .. } => *session,
                };
                if !order.contains(&session) {
                    order.push(session);
                }
                st.apply(input, 0);
            }
            let (short_id, real_id) = (short_id.expect("short"), real_id.expect("real"));
            assert!(short_id < real_id, "round {round}: accepted in order");
            if order.first() == Some(&real_id) {
                late += 1;
            }
            let doc = st.status(&|ms| ms);
            let seen: Vec<(&str, &str, Option<u32>)> = doc
                .iter()
                .map(|r| (r.router.as_str(), r.state.as_str(), r.vips[0].paths))
                .collect();
            assert_eq!(
                seen,
                [("127.0.0.1", "synced", Some(2))],
                "round {round}: the real session speaks for the router"
            );
            drop(real);
            match rx.recv().await.expect("the listener's channel") {
                BmpInput::Down { session, .. } if session == real_id => {}
                other => panic!("round {round}: unexpected {other:?}"),
            }
        }
        eprintln!(
            "the short connection reported after the real one in {late} of {RACE_ROUNDS} rounds"
        );
        stop.cancel();
        listener.await.expect("the listener stops");
    }
}
