//! The BMP station (`--vantage bmp`): routers export their BGP view to it
//! over BMP (RFC 7854); it counts, per router and configured VIP, the paths
//! the router holds.
//!
//! Contract: one listener task accepts routers' TCP sessions; one task per
//! session frames the stream ([`crate::bmp::BmpCodec`]), decodes each
//! message ([`crate::bmp::decode`]) and sends it to the owner through the
//! bounded [`super::BMP_CHANNEL`] (when full the session task waits: the
//! router's TCP window holds the rest, nothing is lost). The owner holds the
//! [`Station`] and with it the one [`crate::bmp::View`]; nothing else does.
//! Malformed input ends that session only, logged with the router's address
//! and counted; never the process.
//!
//! Names and sessions: a router is named by the sysName of its Initiation,
//! else by the address it connected from. A new session under a name drops
//! the name's old view; the end of a session that no longer owns its name
//! (a router that reconnected before its old TCP session closed) changes
//! nothing. A router whose session ended is stale (its paths unknown, NaN)
//! and forgotten `bmp_stale_secs` later unless it reconnects first.
//!
//! Readiness: ready when at least one router is synced (its initial dump is
//! complete). A station no router has reached yet, or whose routers are all
//! stale or syncing, cannot say how many paths any router holds.

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::time::Duration;

use futures::StreamExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::codec::FramedRead;
use tokio_util::sync::CancellationToken;

use crate::bmp::{BmpCodec, Decoder, Message, RouterState, View};
use crate::model::Prefix;
use crate::reconcile::Millis;
use crate::status::{RouterPeer, RouterStatus, RouterVip};
use crate::telemetry;

/// A BMP session's id, unique for the daemon's life.
pub type SessionId = u64;

/// What a session task tells the owner.
#[derive(Debug)]
pub enum BmpInput {
    /// A router connected.
    Up {
        /// The session.
        session: SessionId,
        /// Where it connected from.
        address: SocketAddr,
    },
    /// One decoded message.
    Message {
        /// The session.
        session: SessionId,
        /// The message.
        message: Message,
    },
    /// The session ended; `reason` says why, for the log.
    Down {
        /// The session.
        session: SessionId,
        /// `closed`, `termination`, `malformed` or `io` (the counter's label).
        kind: &'static str,
        /// What happened, for the log.
        reason: String,
    },
}

/// How long a router may take to send its End-of-RIBs (its initial dump)
/// before the station counts what it has: RFC 7854 does not require
/// End-of-RIB, and a router that never sends one must not stay unknown
/// forever. FRR sends them within a second of its peers' dumps.
pub const SYNC_PATIENCE_MS: Millis = 60_000;

/// The most BMP sessions served at once: a router has one (two while it
/// reconnects); more are refused, logged and counted.
pub const MAX_SESSIONS: usize = 64;

/// How long the accept loop pauses after a failed accept (out of
/// descriptors), so that it does not spin.
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

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

/// Accept routers until `stop`; one task per session.
pub async fn listen(listener: TcpListener, tx: mpsc::Sender<BmpInput>, stop: CancellationToken) {
    let mut sessions = JoinSet::new();
    let mut next: SessionId = 0;
    loop {
        tokio::select! {
            _ = stop.cancelled() => break,
            Some(_) = sessions.join_next(), if !sessions.is_empty() => {}
            r = listener.accept() => match r {
                // Routers are few (one or two per rack); a flood of
                // connections must not grow tasks and buffers without end.
                Ok((stream, address)) if sessions.len() >= MAX_SESSIONS => {
                    drop(stream);
                    telemetry::bmp_session_end("too_many_sessions");
                    tracing::warn!(%address, max = MAX_SESSIONS, "bmp: connection refused: the station already has the most sessions it serves; check what connects to --bmp-listen");
                }
                Ok((stream, address)) => {
                    next += 1;
                    sessions.spawn(session(next, stream, address, tx.clone(), stop.clone()));
                }
                Err(e) => {
                    tracing::warn!(error = %e, "bmp: accept failed; pausing");
                    tokio::select! {
                        _ = stop.cancelled() => break,
                        () = tokio::time::sleep(ACCEPT_PAUSE) => {}
                    }
                }
            }
        }
    }
    sessions.shutdown().await;
}

/// One router's session: frame, decode, forward; the end is always sent.
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
    let (kind, reason) = loop {
        let frame = tokio::select! {
            _ = stop.cancelled() => return,
            f = frames.next() => f,
        };
        let bytes = match frame {
            None => break ("closed", "the router closed the session".to_string()),
            Some(Err(crate::bmp::FrameError::Io(e))) => break ("io", e.to_string()),
            Some(Err(e)) => break ("malformed", e.to_string()),
            Some(Ok(b)) => b,
        };
        match decoder.decode(bytes) {
            Ok(message) => {
                let end = match &message {
                    Message::Termination { reason } => Some(reason.clone()),
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

/// One session as the owner knows it.
#[derive(Debug)]
struct Session {
    address: SocketAddr,
    /// The router's name once known (the first message decides it).
    router: Option<String>,
    /// A newer session took the name over: this one's messages and end
    /// change nothing.
    replaced: bool,
}

/// What the station knows of a router beyond the view.
#[derive(Debug)]
struct Router {
    address: SocketAddr,
    /// The session that owns the name now (`None`: stale).
    session: Option<SessionId>,
    /// When a stale router is forgotten, in the owner's milliseconds.
    forget_at: Option<Millis>,
    /// When a syncing router is assumed synced ([`SYNC_PATIENCE_MS`]).
    sync_by: Option<Millis>,
}

/// The station's state, held by the owner.
#[derive(Debug)]
pub struct Station {
    view: View,
    vips: Vec<Prefix>,
    stale_ms: Millis,
    sessions: HashMap<SessionId, Session>,
    routers: BTreeMap<String, Router>,
    /// The paths last exported per (router, VIP), to log changes only.
    exported: HashMap<(String, Prefix), Option<u32>>,
}

impl Station {
    /// A station counting `vips`, forgetting stale routers after `stale_secs`.
    pub fn new(vips: impl IntoIterator<Item = Prefix>, stale_secs: u64) -> Station {
        let vips: Vec<Prefix> = vips.into_iter().collect();
        Station {
            view: View::new(vips.iter().copied()),
            vips,
            stale_ms: stale_secs.saturating_mul(1000),
            sessions: HashMap::new(),
            routers: BTreeMap::new(),
            exported: HashMap::new(),
        }
    }

    /// Apply one input at `now` (the owner's milliseconds).
    pub fn apply(&mut self, input: BmpInput, now: Millis) {
        match input {
            BmpInput::Up { session, address } => {
                tracing::info!(%address, session, "bmp: a router connected");
                self.sessions.insert(
                    session,
                    Session {
                        address,
                        router: None,
                        replaced: false,
                    },
                );
            }
            BmpInput::Message { session, message } => self.message(session, &message, now),
            BmpInput::Down {
                session,
                kind,
                reason,
            } => self.down(session, kind, &reason, now),
        }
        telemetry::bmp_sessions(self.sessions.len());
    }

    fn message(&mut self, session: SessionId, message: &Message, now: Millis) {
        telemetry::bmp_message(kind(message));
        let Some(s) = self.sessions.get_mut(&session).filter(|s| !s.replaced) else {
            return;
        };
        let router = match &s.router {
            Some(r) => r.clone(),
            None => {
                // RFC 7854 4.3: Initiation comes first; a router that skips
                // it is still counted, under its address.
                let name = match message {
                    Message::Initiation {
                        sys_name: Some(n), ..
                    } if !n.trim().is_empty() => n.trim().to_string(),
                    _ => s.address.ip().to_string(),
                };
                s.router = Some(name.clone());
                let address = s.address;
                self.adopt(&name, session, address, now);
                name
            }
        };
        match message {
            Message::Initiation {
                sys_name,
                sys_descr,
            } => tracing::info!(
                %router,
                sys_name = sys_name.as_deref().unwrap_or("-"),
                sys_descr = sys_descr.as_deref().unwrap_or("-"),
                "bmp: initiation"
            ),
            Message::PeerUp {
                peer, asn, bgp_id, ..
            } => {
                tracing::info!(%router, %peer, asn, %bgp_id, "bmp: peer up");
            }
            Message::PeerDown { peer, reason } => {
                tracing::info!(%router, %peer, %reason, "bmp: peer down");
            }
            Message::Stats { peer, counters } => {
                tracing::debug!(%router, %peer, ?counters, "bmp: statistics report");
            }
            Message::Termination { reason } => {
                tracing::info!(%router, %reason, "bmp: termination");
            }
            Message::Route { .. } | Message::Ignored { .. } => {}
        }
        let before = self.state(&router);
        let changed = self.view.apply(&router, message);
        for prefix in &changed {
            self.export(&router, prefix);
        }
        let after = self.state(&router);
        if before != after {
            tracing::info!(%router, state = %state_name(after), "bmp: router state");
            self.export_all(&router);
        }
    }

    /// `session` now owns `name`: a router that reconnected (restart, or a
    /// new session before the old one's end arrived) starts from scratch.
    fn adopt(&mut self, name: &str, session: SessionId, address: SocketAddr, now: Millis) {
        if let Some(old) = self.routers.get(name).and_then(|r| r.session) {
            if let Some(s) = self.sessions.get_mut(&old) {
                // The old session's messages and end must not touch the
                // new view.
                s.replaced = true;
            }
            tracing::warn!(router = name, %address, old_session = old, "bmp: a new session replaces the router's open one");
        }
        self.view.session_up(name);
        self.routers.insert(
            name.to_string(),
            Router {
                address,
                session: Some(session),
                forget_at: None,
                sync_by: Some(now.saturating_add(SYNC_PATIENCE_MS)),
            },
        );
        self.export_all(name);
    }

    fn down(&mut self, session: SessionId, kind: &'static str, reason: &str, now: Millis) {
        telemetry::bmp_session_end(kind);
        let Some(s) = self.sessions.remove(&session) else {
            return;
        };
        if s.replaced {
            tracing::info!(address = %s.address, %reason, "bmp: a replaced session ended");
            return;
        }
        let name = s.router.unwrap_or_else(|| s.address.ip().to_string());
        if kind == "malformed" {
            tracing::error!(
                router = %name,
                address = %s.address,
                %reason,
                "bmp: malformed input; session closed (the router reconnects with its retry timer; if this repeats, capture the session with tcpdump and report the router's release)"
            );
        } else {
            tracing::warn!(router = %name, address = %s.address, %reason, "bmp: session ended");
        }
        let Some(r) = self.routers.get_mut(&name) else {
            return;
        };
        if r.session != Some(session) {
            return;
        }
        r.session = None;
        r.sync_by = None;
        r.forget_at = Some(now.saturating_add(self.stale_ms));
        self.view.session_down(&name);
        self.export_all(&name);
    }

    /// The next time a router is due to be forgotten or assumed synced.
    pub fn next_deadline(&self) -> Option<Millis> {
        self.routers
            .values()
            .flat_map(|r| [r.forget_at, r.sync_by])
            .flatten()
            .min()
    }

    /// Forget the routers stale for long enough; count what the routers
    /// still syncing after [`SYNC_PATIENCE_MS`] have.
    pub fn expire(&mut self, now: Millis) {
        let patience: Vec<String> = self
            .routers
            .iter_mut()
            .filter(|(_, r)| r.sync_by.is_some_and(|t| t <= now))
            .map(|(n, r)| {
                r.sync_by = None;
                n.clone()
            })
            .collect();
        for name in patience {
            if self.state(&name) == Some(RouterState::Syncing) {
                tracing::warn!(router = %name, patience_ms = SYNC_PATIENCE_MS, "bmp: no End-of-RIB from the router in time; counting the paths it sent (its counts may be low until its dump is complete)");
                for prefix in self.view.assume_synced(&name) {
                    self.export(&name, &prefix);
                }
                tracing::info!(router = %name, state = %state_name(self.state(&name)), "bmp: router state");
            }
        }
        let due: Vec<String> = self
            .routers
            .iter()
            .filter(|(_, r)| r.forget_at.is_some_and(|t| t <= now))
            .map(|(n, _)| n.clone())
            .collect();
        for name in due {
            tracing::info!(router = %name, stale_ms = self.stale_ms, "bmp: stale router forgotten");
            self.routers.remove(&name);
            self.view.forget(&name);
            self.exported.retain(|(r, _), _| *r != name);
            telemetry::router_forgotten(&name);
        }
    }

    fn state(&self, router: &str) -> Option<RouterState> {
        self.view
            .routers()
            .find(|(n, _)| *n == router)
            .map(|(_, s)| s)
    }

    /// Export a router's paths for a VIP; log when the number (or its
    /// known-ness) changes: "how many nodes does this router spread the VIP
    /// over".
    fn export(&mut self, router: &str, prefix: &Prefix) {
        let paths = self.view.paths(router, prefix);
        telemetry::router_paths(router, prefix, paths);
        let old = self.exported.insert((router.to_string(), *prefix), paths);
        if old != Some(paths) {
            let shown = paths.map_or_else(|| "unknown".to_string(), |n| n.to_string());
            tracing::info!(%router, %prefix, paths = %shown, "bmp: router paths");
        }
    }

    fn export_all(&mut self, router: &str) {
        for p in self.vips.clone() {
            self.export(router, &p);
        }
    }

    /// `None` when ready (a router is synced), else why not.
    pub fn not_ready(&self) -> Option<String> {
        let states: Vec<RouterState> = self.view.routers().map(|(_, s)| s).collect();
        if states.contains(&RouterState::Synced) {
            return None;
        }
        Some(if states.is_empty() {
            "no router has exported BMP to this station yet: check the routers' BMP configuration (station address and port) and that --bmp-listen is reachable from them".to_string()
        } else {
            format!(
                "no router is synced yet ({} syncing, {} stale): a router's paths are known once its initial dump is complete",
                states
                    .iter()
                    .filter(|s| **s == RouterState::Syncing)
                    .count(),
                states.iter().filter(|s| **s == RouterState::Stale).count()
            )
        })
    }

    /// The routers as `/status` shows them; `unix_ms` converts the owner's
    /// milliseconds to wall-clock time.
    pub fn status(&self, unix_ms: &dyn Fn(Millis) -> u64) -> Vec<RouterStatus> {
        self.view
            .routers()
            .map(|(name, state)| {
                let r = self.routers.get(name);
                RouterStatus {
                    router: name.to_string(),
                    address: r.map_or_else(String::new, |r| r.address.ip().to_string()),
                    state: state_name(Some(state)).to_string(),
                    forget_at: r
                        .and_then(|r| r.forget_at)
                        .map(|t| crate::status::rfc3339(unix_ms(t))),
                    vips: self
                        .vips
                        .iter()
                        .map(|p| RouterVip {
                            prefix: *p,
                            paths: self.view.paths(name, p),
                            peers: self
                                .view
                                .detail(name, p)
                                .into_iter()
                                .map(|d| RouterPeer {
                                    address: d.peer.address.to_string(),
                                    asn: d.asn,
                                    bgp_id: d.bgp_id.to_string(),
                                    up: d.up,
                                    rib: d.rib.to_string(),
                                })
                                .collect(),
                        })
                        .collect(),
                }
            })
            .collect()
    }
}

fn state_name(s: Option<RouterState>) -> &'static str {
    match s {
        Some(RouterState::Syncing) => "syncing",
        Some(RouterState::Synced) => "synced",
        Some(RouterState::Stale) => "stale",
        None => "unknown",
    }
}

/// The counter label of a message.
fn kind(m: &Message) -> &'static str {
    match m {
        Message::Initiation { .. } => "initiation",
        Message::PeerUp { .. } => "peer_up",
        Message::PeerDown { .. } => "peer_down",
        Message::Route { .. } => "route",
        Message::Stats { .. } => "stats",
        Message::Termination { .. } => "termination",
        Message::Ignored { .. } => "ignored",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::BytesMut;
    use tokio_util::codec::Decoder as _;

    fn vip() -> Prefix {
        "192.0.2.10/32".parse().expect("prefix")
    }

    /// The messages of a captured session (tests/data/bmp/), framed and
    /// decoded as a session task does.
    fn session_file(path: &str) -> Vec<Message> {
        let bytes = std::fs::read(format!("{}/{path}", env!("CARGO_MANIFEST_DIR")))
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut buf = BytesMut::from(&bytes[..]);
        let mut codec = BmpCodec::default();
        let mut decoder = Decoder::new();
        let mut out = Vec::new();
        while let Some(frame) = codec.decode(&mut buf).expect("frame") {
            out.push(decoder.decode(frame).expect("message"));
        }
        assert!(buf.is_empty(), "{path}: a partial message at the end");
        out
    }

    fn addr(s: &str) -> SocketAddr {
        s.parse().expect("addr")
    }

    /// Feed a session; return the router's paths for the VIP each time it
    /// changed (consecutive repeats folded).
    fn feed(
        st: &mut Station,
        session: SessionId,
        messages: Vec<Message>,
        now: Millis,
    ) -> Vec<Option<u32>> {
        st.apply(
            BmpInput::Up {
                session,
                address: addr("127.0.0.1:40000"),
            },
            now,
        );
        let mut seen = vec![];
        for message in messages {
            st.apply(BmpInput::Message { session, message }, now);
            let p = st.view.paths("rb-router", &vip());
            if seen.last() != Some(&p) {
                seen.push(p);
            }
        }
        seen
    }

    #[test]
    fn captured_frr_8_4_sessions_count_paths_go_stale_and_reconnect() {
        let mut st = Station::new([vip()], 300);
        assert!(st.not_ready().is_some_and(|w| w.contains("no router")));
        // A starting router: known at once (0), the nodes' sessions come
        // up (1, 2), node1 withdraws and re-adds.
        let seen = feed(
            &mut st,
            1,
            session_file("tests/data/bmp/8.4/session1.bin"),
            0,
        );
        assert_eq!(seen, [None, Some(0), Some(1), Some(2), Some(1), Some(2)]);
        assert_eq!(st.not_ready(), None, "synced: ready");
        let doc = st.status(&|ms| ms);
        assert_eq!(doc[0].router, "rb-router");
        assert_eq!(doc[0].state, "synced");
        assert_eq!(doc[0].vips[0].paths, Some(2));
        let held: Vec<&str> = doc[0].vips[0]
            .peers
            .iter()
            .map(|p| p.address.as_str())
            .collect();
        assert_eq!(held, ["198.18.1.2", "198.18.2.2"]);
        assert_eq!(doc[0].vips[0].peers[0].rib, "adj-rib-in-post");
        st.apply(
            BmpInput::Down {
                session: 1,
                kind: "closed",
                reason: "the router closed the session".into(),
            },
            1_000,
        );
        assert_eq!(st.view.paths("rb-router", &vip()), None, "stale is unknown");
        assert!(st.not_ready().is_some_and(|w| w.contains("1 stale")));
        assert_eq!(st.next_deadline(), Some(301_000));
        let doc = st.status(&|ms| ms);
        assert_eq!(
            (doc[0].state.as_str(), doc[0].vips[0].paths),
            ("stale", None)
        );
        assert_eq!(
            doc[0].forget_at.as_deref(),
            Some("1970-01-01T00:05:01.000Z")
        );
        // It reconnects and dumps (unknown until End-of-RIB), then node2's
        // bgpd dies (Peer Down).
        let seen = feed(
            &mut st,
            2,
            session_file("tests/data/bmp/8.4/session2.bin"),
            2_000,
        );
        assert_eq!(seen, [None, Some(2), Some(1)]);
        assert_eq!(
            st.next_deadline(),
            Some(2_000 + SYNC_PATIENCE_MS),
            "no forget pending"
        );
        st.expire(400_000);
        assert_eq!(st.view.paths("rb-router", &vip()), Some(1), "not forgotten");
    }

    #[test]
    fn a_stale_router_is_forgotten_and_a_replaced_session_changes_nothing() {
        let mut st = Station::new([vip()], 10);
        let messages = session_file("tests/data/bmp/8.4/session1.bin");
        feed(&mut st, 1, messages.clone(), 0);
        // A second session under the same name before the first one's end.
        feed(&mut st, 2, messages[..1].to_vec(), 100);
        st.apply(
            BmpInput::Message {
                session: 1,
                message: messages[1].clone(),
            },
            150,
        );
        st.apply(
            BmpInput::Down {
                session: 1,
                kind: "closed",
                reason: "closed".into(),
            },
            200,
        );
        assert_eq!(st.routers.get("rb-router").and_then(|r| r.session), Some(2));
        assert_eq!(
            st.status(&|ms| ms)[0].state,
            "syncing",
            "the new session's, not stale"
        );
        // The new session ends with malformed input: stale, then forgotten.
        st.apply(
            BmpInput::Down {
                session: 2,
                kind: "malformed",
                reason: "BMP version 9".into(),
            },
            1_000,
        );
        assert_eq!(st.next_deadline(), Some(11_000));
        st.expire(10_999);
        assert_eq!(st.status(&|ms| ms).len(), 1);
        st.expire(11_000);
        assert!(st.status(&|ms| ms).is_empty());
        assert!(st.not_ready().is_some_and(|w| w.contains("no router")));
        assert_eq!(st.next_deadline(), None);
    }

    #[test]
    fn a_router_without_end_of_rib_is_counted_after_the_patience() {
        let mut st = Station::new([vip()], 300);
        // The reconnect's dump, without its End-of-RIBs, before node2 dies.
        let messages: Vec<Message> = session_file("tests/data/bmp/8.4/session2.bin")
            .into_iter()
            .filter(|m| {
                !matches!(
                    m,
                    Message::Route {
                        end_of_rib: Some(_),
                        ..
                    }
                )
            })
            .take_while(|m| !matches!(m, Message::PeerDown { .. }))
            .collect();
        let seen = feed(&mut st, 1, messages, 0);
        assert_eq!(seen, [None], "no End-of-RIB: unknown");
        assert!(st.not_ready().is_some_and(|w| w.contains("1 syncing")));
        assert_eq!(st.next_deadline(), Some(SYNC_PATIENCE_MS));
        st.expire(SYNC_PATIENCE_MS - 1);
        assert_eq!(st.view.paths("rb-router", &vip()), None);
        st.expire(SYNC_PATIENCE_MS);
        assert_eq!(st.view.paths("rb-router", &vip()), Some(2));
        assert_eq!(st.not_ready(), None);
    }

    /// The listener and a session task on loopback: a captured session's
    /// first message is forwarded, then garbage ends that session (and
    /// only it) as malformed; a clean close is `closed`.
    #[tokio::test]
    async fn malformed_input_ends_the_session_not_the_station() {
        use tokio::io::AsyncWriteExt;
        let listener = bind("127.0.0.1:0".parse().expect("addr"))
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (tx, mut rx) = mpsc::channel(16);
        let stop = CancellationToken::new();
        let station = tokio::spawn(listen(listener, tx, stop.clone()));
        let capture = std::fs::read(format!(
            "{}/tests/data/bmp/8.4/session1.bin",
            env!("CARGO_MANIFEST_DIR")
        ))
        .expect("capture");
        // The Initiation: the common header's length, bytes 1..5.
        let first = u32::from_be_bytes([capture[1], capture[2], capture[3], capture[4]]) as usize;

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

    /// More than [`MAX_SESSIONS`] connections: the next one is closed at
    /// once and never reaches the owner.
    #[tokio::test]
    async fn sessions_beyond_the_limit_are_refused() {
        use tokio::io::AsyncReadExt;
        let listener = bind("127.0.0.1:0".parse().expect("addr"))
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (tx, mut rx) = mpsc::channel(2 * MAX_SESSIONS);
        let stop = CancellationToken::new();
        let station = tokio::spawn(listen(listener, tx, stop.clone()));
        let mut open = Vec::new();
        for _ in 0..MAX_SESSIONS {
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
}
