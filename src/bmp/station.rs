//! The BMP station's state machine (`--vantage bmp`): the routers' sessions
//! as the owner sees them, which router each speaks for, when a router goes
//! stale and is forgotten, and the one [`View`] of their paths. Pure: no
//! socket, no clock (the owner passes its milliseconds in), no metrics and
//! no log; what it decided comes out as [`Output`]s, which the daemon
//! counts and logs (`daemon::bmp::publish`), and its routers as `/status`
//! shows them ([`Station::status`]). The listener and the session tasks
//! that feed it are `daemon::bmp`.
//!
//! Contract:
//! - A router is the address its sessions come from, and it exists from
//!   its first BMP message: a session's first Initiation, Peer Up or Route
//!   Monitoring creates the router of its source address (or speaks for
//!   it); a connection ([`BmpInput::Up`]) alone creates nothing, so a
//!   connection that sends nothing or only closes leaves no router, no
//!   series and no `/status` entry (it counts as a session only). A session
//!   speaks only for its own address (its sysName is a printable label of
//!   at most [`MAX_SYS_NAME`] bytes).
//! - Which session speaks for a router: the one accepted last
//!   ([`SessionId`] is the listener's accept sequence number), whatever
//!   order the session tasks report in. A session accepted later than the
//!   router's replaces it when it speaks; one accepted earlier than the
//!   newest that spoke for the router is ignored. An ignored or replaced
//!   session's messages and end change nothing.
//! - A router whose session ended is stale (paths unknown) and forgotten
//!   `stale_secs` later unless it reconnects; a new router beyond
//!   [`Bounds::max_routers`] is ignored (its session kept, counted, noted
//!   once).
//! - Readiness: ready when one router is synced ([`View`]'s rule).
//! - Every input costs O(log) in the routers and paths: deadlines are kept
//!   ordered, the view's counts kept as they change.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::SocketAddr;

use serde::{Deserialize, Serialize};

mod output;

pub use output::{Note, Output};

use super::{Anomaly, Counters, Limits, Message, RouterState, View};
use crate::model::{Millis, Prefix, rfc3339};

/// A BMP session's id: the listener's accept sequence number, assigned at
/// accept and increasing for the daemon's life (a higher id was accepted
/// later). The station decides which session speaks for a router by it.
pub type SessionId = u64;

/// What a session task tells the owner.
#[derive(Debug)]
pub enum BmpInput {
    /// A connection was accepted (no router yet: that takes a BMP message).
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

/// The most bytes of a router's sysName kept (a label, never an identity).
pub const MAX_SYS_NAME: usize = 255;

/// The routers a station keeps when nothing says otherwise
/// (`--bmp-max-routers`' default).
pub const DEFAULT_MAX_ROUTERS: usize = 256;

/// The station's bounds: the routers it keeps and its view's [`Limits`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// Routers kept (synced, syncing and stale); a new one beyond is
    /// ignored.
    pub max_routers: usize,
    /// Peers per router, paths per VIP, the sync fallback's patience.
    pub view: Limits,
}

impl Default for Bounds {
    fn default() -> Bounds {
        Bounds {
            max_routers: DEFAULT_MAX_ROUTERS,
            view: Limits::default(),
        }
    }
}

/// One router exporting BMP to the station, as `/status` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouterStatus {
    /// The router: the address its BMP sessions come from (what identifies
    /// it; a session cannot speak for another address).
    pub router: String,
    /// The sysName its Initiation claimed: a label only, control
    /// characters escaped, at most 255 bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sys_name: Option<String>,
    /// The address its (last) BMP session came from.
    pub address: String,
    /// `syncing` (session up, initial dump not complete), `synced`, or
    /// `stale` (session ended; forgotten at `forget_at`).
    pub state: String,
    /// When a stale router is forgotten (RFC 3339, UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forget_at: Option<String>,
    /// One entry per configured VIP.
    pub vips: Vec<RouterVip>,
}

/// One VIP at one router.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouterVip {
    /// The VIP.
    pub prefix: Prefix,
    /// Paths the router holds (`null`: unknown, the router is not synced).
    pub paths: Option<u32>,
    /// The router's BGP peers that hold a path for it.
    pub peers: Vec<RouterPeer>,
}

/// A BGP peer of a router, as its BMP export names it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouterPeer {
    /// The peer's address.
    pub address: String,
    /// Its AS number.
    pub asn: u32,
    /// Its BGP identifier.
    pub bgp_id: String,
    /// Its session is up (Peer Up seen, no Peer Down since).
    pub up: bool,
    /// The RIB the path was reported from (`adj-rib-in-post`,
    /// `adj-rib-in-pre`, `loc-rib`).
    pub rib: String,
    /// The router keeps its paths as stale (graceful restart: the session
    /// dropped and they were not re-sent since); absent in older documents.
    #[serde(default)]
    pub stale: bool,
}

/// `s` fit for a log line, `/status` and a terminal: control characters
/// escaped, cut to at most `max` bytes (at a character boundary).
pub fn printable(s: &str, max: usize) -> String {
    let mut out = String::new();
    for c in s.chars() {
        let piece: String = if c.is_control() {
            c.escape_default().collect()
        } else {
            c.to_string()
        };
        if out.len() + piece.len() > max {
            break;
        }
        out.push_str(&piece);
    }
    out
}

/// What a session is to the station.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Role {
    /// No Initiation, Peer Up or Route Monitoring yet: it speaks for no
    /// router.
    Silent,
    /// It speaks for this router (its source address).
    Speaks(String),
    /// Replaced by a session accepted later, accepted before the newest one
    /// that spoke for its router, or beyond `max_routers`: its messages and
    /// end change nothing.
    Ignored,
}

/// One session as the owner knows it.
#[derive(Debug)]
struct Session {
    address: SocketAddr,
    role: Role,
    /// When its first message (of any kind) came: the router it speaks
    /// for is synced `--bmp-sync-secs` after it at the latest.
    first: Option<Millis>,
}

/// A router as its sessions present it, beside its paths in the view: the
/// address and sysName it speaks from, the session that speaks for it, when
/// it is forgotten once stale.
#[derive(Debug)]
struct Speaker {
    address: SocketAddr,
    /// The sysName it claimed, printable and cut.
    sys_name: Option<String>,
    /// The session that speaks for it now (`None`: stale).
    session: Option<SessionId>,
    /// The latest accepted session that spoke for it: an earlier one
    /// cannot take it over.
    newest: SessionId,
    /// When a stale router is forgotten, in the owner's milliseconds.
    forget_at: Option<Millis>,
    /// The UPDATE anomalies already noted for it (each once).
    anomalies_logged: BTreeSet<Anomaly>,
}

/// The station's state, held by the owner. Routers are identified by the
/// address their sessions come from: a session speaks only for its own
/// address, so no session can replace another router's paths.
#[derive(Debug)]
pub struct Station {
    view: View,
    vips: Vec<Prefix>,
    stale_ms: Millis,
    max_routers: usize,
    sessions: HashMap<SessionId, Session>,
    routers: BTreeMap<String, Speaker>,
    /// (forget_at, router) of every stale router.
    forgets: BTreeSet<(Millis, String)>,
    /// The view's counters as last reported to telemetry.
    counted: Counters,
    /// Refusals already noted (each once).
    logged: BTreeSet<&'static str>,
    /// The (paths, stale paths) last exported per (router, VIP), to note
    /// changes only.
    exported: HashMap<(String, Prefix), (Option<u32>, Option<u32>)>,
    /// What the daemon has not been told yet.
    out: Vec<Output>,
}

impl Station {
    /// A station counting `vips` within `bounds`, forgetting stale routers
    /// after `stale_secs`.
    pub fn new(
        vips: impl IntoIterator<Item = Prefix>,
        stale_secs: u64,
        bounds: impl Into<Bounds>,
    ) -> Station {
        let bounds = bounds.into();
        let vips: Vec<Prefix> = vips.into_iter().collect();
        Station {
            view: View::with_limits(vips.iter().copied(), bounds.view),
            vips,
            stale_ms: stale_secs.saturating_mul(1000),
            max_routers: bounds.max_routers,
            sessions: HashMap::new(),
            routers: BTreeMap::new(),
            forgets: BTreeSet::new(),
            counted: Counters::default(),
            logged: BTreeSet::new(),
            exported: HashMap::new(),
            out: Vec::new(),
        }
    }

    /// What happened since the last call, for telemetry and the log.
    pub fn take_outputs(&mut self) -> Vec<Output> {
        std::mem::take(&mut self.out)
    }

    /// Apply one input at `now` (the owner's milliseconds).
    pub fn apply(&mut self, input: BmpInput, now: Millis) {
        match input {
            BmpInput::Up { session, address } => self.up(session, address),
            BmpInput::Message { session, message } => self.message(session, &message, now),
            BmpInput::Down {
                session,
                kind,
                reason,
            } => self.down(session, kind, reason, now),
        }
        self.count();
        self.out.push(Output::Sessions(self.sessions.len()));
    }

    fn note(&mut self, note: Note) {
        self.out.push(Output::Note(note));
    }

    /// `n` refused for `reason`, noted the first time only.
    fn refused(&mut self, reason: &'static str, n: u64) {
        self.out.push(Output::Refused { reason, n });
        if self.logged.insert(reason) {
            self.note(Note::RefusedFirst(reason));
        }
    }

    /// The view's counters since the last call, to telemetry.
    fn count(&mut self) {
        let c = self.view.counters();
        let d = |a: u64, b: u64| a.saturating_sub(b);
        if c.peers_refused > self.counted.peers_refused {
            self.refused("peers", d(c.peers_refused, self.counted.peers_refused));
        }
        if c.paths_refused > self.counted.paths_refused {
            self.refused("paths", d(c.paths_refused, self.counted.paths_refused));
        }
        if c.fallbacks > self.counted.fallbacks {
            self.out
                .push(Output::Fallbacks(d(c.fallbacks, self.counted.fallbacks)));
        }
        self.counted = c;
    }

    /// A connection: a session, no router (its first BMP message makes one).
    fn up(&mut self, session: SessionId, address: SocketAddr) {
        self.note(Note::Accepted { session, address });
        self.sessions.insert(
            session,
            Session {
                address,
                role: Role::Silent,
                first: None,
            },
        );
    }

    /// The router `session` speaks for, if any: a silent session's
    /// Initiation, Peer Up or Route Monitoring claims its address's router.
    /// `now` is when `message` came (the session's first message's time is
    /// kept).
    fn speaker(&mut self, session: SessionId, message: &Message, now: Millis) -> Option<String> {
        let s = self.sessions.get_mut(&session)?;
        let first = *s.first.get_or_insert(now);
        match &s.role {
            Role::Speaks(router) => Some(router.clone()),
            Role::Ignored => None,
            Role::Silent if creates_router(message) => {
                let address = s.address;
                self.claim(session, address, first)
            }
            Role::Silent => None,
        }
    }

    /// A silent session's first router-making message: it speaks for its
    /// address's router unless the router's newest session was accepted
    /// after it, or the router is new and the station is full. `first` is
    /// when the session's first message came.
    fn claim(&mut self, session: SessionId, address: SocketAddr, first: Millis) -> Option<String> {
        let name = address.ip().to_string();
        let role = match self.routers.get(&name) {
            None if self.routers.len() >= self.max_routers => {
                self.refused("routers", 1);
                Role::Ignored
            }
            Some(r) if r.newest > session => {
                let newest = r.newest;
                self.note(Note::Outranked {
                    router: name.clone(),
                    address,
                    session,
                    newest,
                });
                Role::Ignored
            }
            _ => Role::Speaks(name.clone()),
        };
        let speaks = role != Role::Ignored;
        if let Some(s) = self.sessions.get_mut(&session) {
            s.role = role;
        }
        if !speaks {
            return None;
        }
        self.note(Note::Connected { address, session });
        self.adopt(&name, session, address, first);
        Some(name)
    }

    fn message(&mut self, session: SessionId, message: &Message, now: Millis) {
        self.out.push(Output::Message(kind(message)));
        let Some(router) = self.speaker(session, message, now) else {
            return;
        };
        match message {
            Message::Initiation {
                sys_name,
                sys_descr,
            } => {
                let name = sys_name
                    .as_deref()
                    .map(|n| printable(n.trim(), MAX_SYS_NAME))
                    .filter(|n| !n.is_empty());
                self.note(Note::Initiation {
                    router: router.clone(),
                    sys_name: name.clone(),
                    sys_descr: sys_descr.as_deref().map(|d| printable(d, 1024)),
                });
                if let Some(r) = self.routers.get_mut(&router) {
                    r.sys_name = name;
                }
            }
            Message::PeerUp {
                peer,
                asn,
                bgp_id,
                graceful_restart,
                ..
            } => self.note(Note::PeerUp {
                router: router.clone(),
                peer: *peer,
                asn: *asn,
                bgp_id: *bgp_id,
                graceful_restart: graceful_restart.clone(),
            }),
            Message::PeerDown {
                peer,
                reason,
                notification,
                ..
            } => self.note(Note::PeerDown {
                router: router.clone(),
                peer: *peer,
                reason: printable(reason, 1024),
                notification: *notification,
            }),
            Message::Stats { peer, counters } => self.note(Note::Stats {
                router: router.clone(),
                peer: *peer,
                counters: counters.clone(),
            }),
            Message::Termination { reason } => self.note(Note::Termination {
                router: router.clone(),
                reason: printable(reason, 1024),
            }),
            Message::Route {
                skipped,
                anomalies,
                peer,
                ..
            } => {
                for s in skipped {
                    self.out.push(Output::Skipped {
                        afi: s.afi,
                        safi: s.safi,
                        n: u64::from(s.count),
                    });
                }
                for a in anomalies {
                    self.out.push(Output::Anomaly(a.label()));
                    let first = self
                        .routers
                        .get_mut(&router)
                        .is_some_and(|r| r.anomalies_logged.insert(*a));
                    if first {
                        self.note(Note::AnomalyFirst {
                            router: router.clone(),
                            peer: *peer,
                            anomaly: *a,
                        });
                    }
                }
            }
            Message::Ignored { .. } => {}
        }
        let before = self.view.state(&router);
        let changed = self.view.apply_at(&router, message, now);
        for prefix in &changed {
            self.export(&router, prefix);
        }
        let after = self.view.state(&router);
        if before != after {
            self.note(Note::State {
                router: router.clone(),
                state: after,
            });
            self.export_all(&router);
        }
    }

    /// `session` (accepted after every session that spoke for `name`) now
    /// speaks for `name` (its source address): a router that reconnected
    /// (restart, or a new session before the old one's end arrived) starts
    /// from scratch, its sync fallback counted from `first` (the session's
    /// first message), whatever its earlier sessions did.
    fn adopt(&mut self, name: &str, session: SessionId, address: SocketAddr, first: Millis) {
        let mut anomalies_logged = BTreeSet::new();
        let mut replaced = false;
        if let Some(old) = self.routers.get_mut(name) {
            if let Some(s) = old.session.and_then(|o| self.sessions.get_mut(&o)) {
                // The old session's messages and end must not touch the
                // new view.
                s.role = Role::Ignored;
                replaced = true;
            }
            if let Some(t) = old.forget_at {
                self.forgets.remove(&(t, name.to_string()));
            }
            // Noted once per router, not once per session.
            anomalies_logged = std::mem::take(&mut old.anomalies_logged);
        }
        if replaced {
            self.note(Note::Replaced {
                router: name.to_string(),
                address,
            });
        }
        self.view.session_up_at(name, first);
        self.routers.insert(
            name.to_string(),
            Speaker {
                address,
                sys_name: None,
                session: Some(session),
                newest: session,
                forget_at: None,
                anomalies_logged,
            },
        );
        self.export_all(name);
    }

    fn down(&mut self, session: SessionId, kind: &'static str, reason: String, now: Millis) {
        self.out.push(Output::SessionEnd(kind));
        let Some(s) = self.sessions.remove(&session) else {
            return;
        };
        let name = match s.role {
            Role::Speaks(name) => name,
            Role::Silent => {
                self.note(Note::SilentEnded {
                    address: s.address,
                    session,
                    reason,
                });
                return;
            }
            Role::Ignored => {
                self.note(Note::IgnoredEnded {
                    address: s.address,
                    reason,
                });
                return;
            }
        };
        self.note(Note::Ended {
            router: name.clone(),
            reason,
            malformed: kind == "malformed",
        });
        let Some(r) = self.routers.get_mut(&name) else {
            return;
        };
        if r.session != Some(session) {
            return;
        }
        let at = now.saturating_add(self.stale_ms);
        r.session = None;
        r.forget_at = Some(at);
        self.forgets.insert((at, name.clone()));
        self.view.session_down(&name);
        self.export_all(&name);
    }

    /// The next time a router is due to be forgotten, synced by the
    /// fallback (`--bmp-sync-secs` after its session's first message) or a
    /// peer's stale paths (graceful restart) ended.
    pub fn next_deadline(&self) -> Option<Millis> {
        let forget = self.forgets.first().map(|(t, _)| *t);
        match (forget, self.view.next_deadline()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Make the routers still syncing `--bmp-sync-secs` after their
    /// session's first message synced (the peers that owe an End-of-RIB
    /// taken as dumped); end the stale paths whose time passed; forget the
    /// routers stale for long enough.
    pub fn expire(&mut self, now: Millis) {
        for e in self.view.expire(now) {
            let name = e.router;
            if !e.late.is_empty() {
                self.note(Note::Late {
                    router: name.clone(),
                    peers: e.late.clone(),
                });
            }
            if !e.stale_ended.is_empty() {
                self.note(Note::StaleEnded {
                    router: name.clone(),
                    peers: e.stale_ended,
                });
            }
            for prefix in &e.changed {
                self.export(&name, prefix);
            }
            if e.synced {
                if e.late.is_empty() {
                    self.note(Note::NothingOwed {
                        router: name.clone(),
                    });
                }
                let state = self.view.state(&name);
                self.note(Note::State {
                    router: name,
                    state,
                });
            }
        }
        self.count();
        while let Some((t, name)) = self.forgets.first().cloned() {
            if t > now {
                break;
            }
            self.forgets.pop_first();
            self.note(Note::Forgotten {
                router: name.clone(),
                stale_ms: self.stale_ms,
            });
            self.routers.remove(&name);
            self.view.forget(&name);
            for p in &self.vips {
                self.exported.remove(&(name.clone(), *p));
            }
            self.out.push(Output::Forgotten {
                router: name.clone(),
            });
        }
    }

    /// Export a router's paths for a VIP; note when the number (or its
    /// known-ness) changes: "how many nodes does this router spread the VIP
    /// over".
    fn export(&mut self, router: &str, prefix: &Prefix) {
        let paths = self.view.paths(router, prefix);
        let stale = self.view.stale(router, prefix);
        self.out.push(Output::Paths {
            router: router.to_string(),
            prefix: *prefix,
            paths,
            stale,
        });
        let old = self
            .exported
            .insert((router.to_string(), *prefix), (paths, stale));
        if old != Some((paths, stale)) {
            self.note(Note::Paths {
                router: router.to_string(),
                prefix: *prefix,
                paths,
                stale,
            });
        }
    }

    fn export_all(&mut self, router: &str) {
        for p in self.vips.clone() {
            self.export(router, &p);
        }
    }

    /// `None` when ready (a router is synced), else why not.
    pub fn not_ready(&self) -> Option<String> {
        let (syncing, synced, stale) = self.view.state_counts();
        if synced > 0 {
            return None;
        }
        Some(if syncing + stale == 0 {
            "no router has exported BMP to this station yet: check the routers' BMP configuration (station address and port), that --bmp-listen is reachable from them and that --bmp-allow holds their addresses".to_string()
        } else {
            format!(
                "no router is synced yet ({syncing} syncing, {stale} stale): a router's paths are known once every peer's initial dump is complete"
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
                    sys_name: r.and_then(|r| r.sys_name.clone()),
                    address: r.map_or_else(String::new, |r| r.address.ip().to_string()),
                    state: state_name(Some(state)).to_string(),
                    forget_at: r.and_then(|r| r.forget_at).map(|t| rfc3339(unix_ms(t))),
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
                                    stale: d.stale,
                                })
                                .collect(),
                        })
                        .collect(),
                }
            })
            .collect()
    }
}

/// A router's state as `/status` and the log name it.
pub fn state_name(s: Option<RouterState>) -> &'static str {
    match s {
        Some(RouterState::Syncing) => "syncing",
        Some(RouterState::Synced) => "synced",
        Some(RouterState::Stale) => "stale",
        None => "unknown",
    }
}

/// Whether a silent session's message makes it its address's router (the
/// messages that say what a router holds or begin its session).
fn creates_router(m: &Message) -> bool {
    matches!(
        m,
        Message::Initiation { .. } | Message::PeerUp { .. } | Message::Route { .. }
    )
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
    use crate::bmp::{BmpCodec, Decoder};
    use bytes::BytesMut;
    use tokio_util::codec::Decoder as _;

    /// The router as the station names it: the address of its sessions.
    const ROUTER: &str = "127.0.0.1";
    /// `--bmp-sync-secs`' default, in milliseconds.
    const SYNC_PATIENCE_MS: Millis = 60_000;

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
            let p = st.view.paths(ROUTER, &vip());
            if seen.last() != Some(&p) {
                seen.push(p);
            }
        }
        seen
    }

    #[test]
    fn captured_frr_8_4_sessions_count_paths_go_stale_and_reconnect() {
        let mut st = Station::new([vip()], 300, Bounds::default());
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
        assert_eq!(doc[0].router, ROUTER);
        assert_eq!(
            doc[0].sys_name.as_deref(),
            Some("rb-router"),
            "the sysName, a label"
        );
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
        assert_eq!(st.view.paths(ROUTER, &vip()), None, "stale is unknown");
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
            None,
            "no forget pending, every peer's End-of-RIB came"
        );
        st.expire(400_000);
        assert_eq!(st.view.paths(ROUTER, &vip()), Some(1), "not forgotten");
    }

    /// The routers' names with their state, as `/status` shows them.
    fn routers(st: &Station) -> Vec<(String, String)> {
        st.status(&|ms| ms)
            .into_iter()
            .map(|r| (r.router, r.state))
            .collect()
    }

    /// A station keeping at most `max_routers` routers.
    fn with_max_routers(max_routers: usize) -> Station {
        let limits = Bounds {
            max_routers,
            ..Bounds::default()
        };
        Station::new([vip()], 300, limits)
    }

    /// The `n`th of many source addresses in 10.`net`.0.0/16.
    fn nth_address(net: u8, n: u64) -> String {
        let last = u8::try_from(n % 250).expect("fits");
        let third = u8::try_from(n / 250).expect("fits");
        format!("10.{net}.{third}.{last}:179")
    }

    /// `session` sends `message` at `now`.
    fn say(st: &mut Station, session: SessionId, message: Message, now: Millis) {
        st.apply(BmpInput::Message { session, message }, now);
    }

    /// `session` ends (`kind`) at `now`.
    fn end(st: &mut Station, session: SessionId, kind: &'static str, now: Millis) {
        let reason = kind.to_string();
        st.apply(
            BmpInput::Down {
                session,
                kind,
                reason,
            },
            now,
        );
    }

    /// Whether the outputs name a router's series (paths or forgotten).
    fn any_series(outputs: &[Output]) -> bool {
        outputs
            .iter()
            .any(|o| matches!(o, Output::Paths { .. } | Output::Forgotten { .. }))
    }

    /// A TCP connect and close, or a connection that sends only what says
    /// nothing of a router (Statistics, Termination), is a session and no
    /// router: no series, no `/status` entry, no forget pending, and
    /// more of them than `--bmp-max-routers` keep no router out.
    #[test]
    fn a_connection_that_sends_no_router_message_creates_no_router() {
        let mut st = with_max_routers(2);
        for n in 0..300u64 {
            up_from(&mut st, n + 1, &nth_address(1, n));
            let kind = if n % 2 == 1 {
                let message = Message::Termination {
                    reason: "bye".into(),
                };
                say(&mut st, n + 1, message, 0);
                "termination"
            } else {
                "idle"
            };
            end(&mut st, n + 1, kind, 0);
        }
        let outputs = st.take_outputs();
        assert!(!any_series(&outputs), "{outputs:?}");
        assert!(
            outputs.contains(&Output::Sessions(1)),
            "counted as sessions"
        );
        assert!(routers(&st).is_empty());
        assert_eq!(st.next_deadline(), None, "no stale router to forget");
        assert!(st.not_ready().is_some_and(|w| w.contains("no router")));
        // The station is not full: two routers come in.
        for (session, from) in [(1_000, "10.2.0.1:179"), (1_001, "10.2.0.2:179")] {
            up_from(&mut st, session, from);
            say(&mut st, session, initiation("r"), 0);
        }
        assert_eq!(routers(&st).len(), 2);
        assert!(!st.logged.contains("routers"), "nothing refused");
    }

    /// A router exists from its first Initiation, Peer Up or Route
    /// Monitoring, whichever comes first; a silent connection from a stale
    /// router's address leaves it stale, its forget time unchanged.
    #[test]
    fn a_router_exists_from_its_first_initiation_peer_up_or_route_monitoring() {
        use crate::bmp::{PeerKey, Rib};
        use crate::model::Family;
        let mut st = Station::new([vip()], 300, Bounds::default());
        let peer = PeerKey {
            address: std::net::IpAddr::from([198, 18, 1, 2]),
            distinguisher: 0,
        };
        let firsts = [
            initiation("r"),
            Message::PeerUp {
                peer,
                asn: 64512,
                bgp_id: std::net::Ipv4Addr::new(198, 18, 1, 2),
                loc_rib: false,
                families: vec![Family::Ipv4],
                graceful_restart: None,
            },
            Message::Route {
                peer,
                asn: 64512,
                bgp_id: std::net::Ipv4Addr::new(198, 18, 1, 2),
                rib: Rib::PostPolicy,
                announced: vec![crate::bmp::Path {
                    prefix: vip(),
                    path_id: None,
                }],
                withdrawn: vec![],
                end_of_rib: None,
                skipped: vec![],
                anomalies: vec![],
            },
        ];
        for (n, message) in (1u64..).zip(firsts) {
            up_from(&mut st, n, &format!("10.3.0.{n}:179"));
            st.take_outputs();
            assert_eq!(routers(&st).len(), usize::try_from(n - 1).expect("fits"));
            say(&mut st, n, message, 0);
            assert!(any_series(&st.take_outputs()), "{n}: its series");
            assert_eq!(routers(&st).len(), usize::try_from(n).expect("fits"));
        }
        end(&mut st, 1, "closed", 1_000);
        let forget_at = |st: &Station| st.status(&|ms| ms)[0].forget_at.clone();
        let at = forget_at(&st);
        assert_eq!(at.as_deref(), Some("1970-01-01T00:05:01.000Z"));
        up_from(&mut st, 10, "10.3.0.1:40000");
        end(&mut st, 10, "idle", 200_000);
        assert_eq!(
            routers(&st)[0],
            ("10.3.0.1".to_string(), "stale".to_string())
        );
        assert_eq!(forget_at(&st), at, "forget time unchanged");
    }

    /// An UPDATE's anomalies come out for telemetry each time, by reason,
    /// and are logged once per router (a reconnect does not log
    /// them again; another router does); its path is counted.
    #[test]
    fn anomalies_are_counted_every_time_and_logged_once_per_router() {
        use crate::bmp::{Anomaly, Path, PeerKey, Rib};
        let mut st = Station::new([vip()], 300, Bounds::default());
        let route = Message::Route {
            peer: PeerKey {
                address: std::net::IpAddr::from([198, 18, 1, 2]),
                distinguisher: 0,
            },
            asn: 64512,
            bgp_id: std::net::Ipv4Addr::new(198, 18, 1, 2),
            rib: Rib::PostPolicy,
            announced: vec![Path {
                prefix: vip(),
                path_id: None,
            }],
            withdrawn: vec![],
            end_of_rib: None,
            skipped: vec![],
            anomalies: vec![Anomaly::MissingOrigin, Anomaly::MissingNextHop],
        };
        let anomalies = |st: &mut Station| -> Vec<&'static str> {
            st.take_outputs()
                .into_iter()
                .filter_map(|o| match o {
                    Output::Anomaly(a) => Some(a),
                    _ => None,
                })
                .collect()
        };
        let logged = |st: &Station, r: &str| st.routers.get(r).map(|r| r.anomalies_logged.len());
        for (session, from) in [(1, "127.0.0.1:40000"), (2, "127.0.0.1:40001")] {
            up_from(&mut st, session, from);
            for _ in 0..2 {
                say(&mut st, session, route.clone(), 0);
                assert_eq!(anomalies(&mut st), ["origin_missing", "next_hop_missing"]);
            }
            assert_eq!(logged(&st, ROUTER), Some(2), "session {session}");
        }
        // No Peer Up before the route: nothing to dump, the path counts.
        assert_eq!(st.view.paths(ROUTER, &vip()), Some(1));
        up_from(&mut st, 3, "192.0.2.99:40000");
        say(&mut st, 3, route, 0);
        assert_eq!(logged(&st, "192.0.2.99"), Some(2), "another router's own");
    }

    /// The session accepted last speaks for the router, whatever order the
    /// tasks report in. Session 2 (accepted after 1) syncs first;
    /// session 1's Up, messages and end arrive after: they change nothing,
    /// and after session 2's end the older one still cannot take over.
    #[test]
    fn the_session_accepted_last_wins_though_the_older_one_reports_after() {
        let mut st = Station::new([vip()], 300, Bounds::default());
        let messages = session_file("tests/data/bmp/8.4/session1.bin");
        feed(&mut st, 2, messages.clone(), 0);
        assert_eq!(st.view.paths(ROUTER, &vip()), Some(2));
        up_from(&mut st, 1, "127.0.0.1:39999");
        for message in messages.iter().take(3).cloned() {
            say(&mut st, 1, message, 10);
        }
        assert_eq!(st.routers.get(ROUTER).and_then(|r| r.session), Some(2));
        end(&mut st, 1, "closed", 20);
        assert_eq!(routers(&st), [(ROUTER.to_string(), "synced".to_string())]);
        assert_eq!(
            st.view.paths(ROUTER, &vip()),
            Some(2),
            "the newer session's"
        );
        // Session 3 (accepted later still) is silent; session 0 (accepted
        // first) speaks once session 2 has ended: the router stays stale.
        up_from(&mut st, 3, "127.0.0.1:40001");
        up_from(&mut st, 0, "127.0.0.1:39998");
        end(&mut st, 2, "closed", 30);
        say(&mut st, 0, initiation("old"), 40);
        assert_eq!(routers(&st), [(ROUTER.to_string(), "stale".to_string())]);
        // The later silent session speaks: it takes the router.
        say(&mut st, 3, initiation("rb-router"), 50);
        assert_eq!(st.routers.get(ROUTER).and_then(|r| r.session), Some(3));
        assert_eq!(routers(&st), [(ROUTER.to_string(), "syncing".to_string())]);
    }

    #[test]
    fn a_stale_router_is_forgotten_and_a_replaced_session_changes_nothing() {
        let mut st = Station::new([vip()], 10, Bounds::default());
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
        assert_eq!(st.routers.get(ROUTER).and_then(|r| r.session), Some(2));
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

    /// A BGP peer of the reconnecting router (IOS XR-like: one End-of-RIB
    /// per peer).
    fn xr_peer(n: u8) -> crate::bmp::PeerKey {
        crate::bmp::PeerKey {
            address: std::net::IpAddr::from([198, 18, n, 2]),
            distinguisher: 0,
        }
    }

    fn xr_peer_up(n: u8) -> Message {
        Message::PeerUp {
            peer: xr_peer(n),
            asn: 64512,
            bgp_id: std::net::Ipv4Addr::new(198, 18, n, 2),
            loc_rib: false,
            families: vec![crate::model::Family::Ipv4],
            graceful_restart: None,
        }
    }

    /// Peer `n`'s post-policy route to the VIP, or (`end`) its IPv4
    /// End-of-RIB.
    fn xr_route(n: u8, end: bool) -> Message {
        use crate::bmp::{EndOfRib, Path, Rib};
        use crate::model::Family;
        Message::Route {
            peer: xr_peer(n),
            asn: 64512,
            bgp_id: std::net::Ipv4Addr::new(198, 18, n, 2),
            rib: Rib::PostPolicy,
            announced: if end {
                vec![]
            } else {
                vec![Path {
                    prefix: vip(),
                    path_id: None,
                }]
            },
            withdrawn: vec![],
            end_of_rib: end.then_some(EndOfRib::Unicast(Family::Ipv4)),
            skipped: vec![],
            anomalies: vec![],
        }
    }

    /// When session 3 of [`two_sessions_then_a_third`] sends its first
    /// message.
    const THIRD_AT: Millis = 100_000;

    /// One router's two sessions in turn, from the same address (as IOS XR
    /// 7.4.1 reconnecting): each with Peer Ups and routes, peer 2 never
    /// sending its End-of-RIB in session 1 (which ends before the fallback),
    /// both paying in session 2; then session 3's `messages`, at
    /// [`THIRD_AT`] plus each one's offset.
    fn two_sessions_then_a_third(messages: Vec<(Millis, Message)>) -> Station {
        let mut st = Station::new([vip()], 300, Bounds::default());
        let from = "127.0.0.1:40000";
        up_from(&mut st, 1, from);
        for (at, m) in [
            (0, initiation("xr")),
            (10, xr_peer_up(1)),
            (20, xr_peer_up(2)),
            (30, xr_route(1, false)),
            (40, xr_route(2, false)),
            (50, xr_route(1, true)),
        ] {
            say(&mut st, 1, m, at);
        }
        assert_eq!(routers(&st), [(ROUTER.to_string(), "syncing".to_string())]);
        end(&mut st, 1, "closed", 10_000);
        up_from(&mut st, 2, from);
        for (at, m) in [
            (20_000, initiation("xr")),
            (20_010, xr_peer_up(1)),
            (20_020, xr_peer_up(2)),
            (20_030, xr_route(1, false)),
            (20_040, xr_route(2, false)),
            (20_050, xr_route(1, true)),
            (20_060, xr_route(2, true)),
        ] {
            say(&mut st, 2, m, at);
        }
        assert_eq!(st.view.paths(ROUTER, &vip()), Some(2), "session 2 synced");
        end(&mut st, 2, "closed", 40_000);
        assert_eq!(routers(&st), [(ROUTER.to_string(), "stale".to_string())]);
        up_from(&mut st, 3, from);
        for (offset, m) in messages {
            say(&mut st, 3, m, THIRD_AT + offset);
        }
        st
    }

    /// The router's state and paths after the deadlines due at `now`.
    fn at(st: &mut Station, now: Millis) -> (String, Option<u32>) {
        st.expire(now);
        let state = routers(st)
            .into_iter()
            .find(|(r, _)| r == ROUTER)
            .map(|(_, s)| s)
            .unwrap_or_default();
        (state, st.view.paths(ROUTER, &vip()))
    }

    /// A router's third session: synced `--bmp-sync-secs` after that
    /// session's first message, though a peer came up late in its dump and
    /// no peer sent End-of-RIB; its paths counted.
    #[test]
    fn a_third_session_is_synced_the_sync_secs_after_its_first_message() {
        let mut st = two_sessions_then_a_third(vec![
            (0, initiation("xr")),
            (2_000, xr_peer_up(1)),
            (2_010, xr_route(1, false)),
            // IOS XR brings its peers up one by one.
            (20_000, xr_peer_up(2)),
            (20_010, xr_route(2, false)),
        ]);
        assert_eq!(st.next_deadline(), Some(THIRD_AT + SYNC_PATIENCE_MS));
        assert_eq!(
            at(&mut st, THIRD_AT + SYNC_PATIENCE_MS - 1),
            ("syncing".to_string(), None)
        );
        assert!(st.not_ready().is_some_and(|w| w.contains("1 syncing")));
        assert_eq!(
            at(&mut st, THIRD_AT + SYNC_PATIENCE_MS),
            ("synced".to_string(), Some(2))
        );
        assert_eq!(st.not_ready(), None);
        assert_eq!(st.view.counters().fallbacks, 2, "both peers late");
        assert_eq!(st.next_deadline(), None);
    }

    /// A router's third session that brings no Peer Up (its BGP sessions
    /// down), only its Initiation: synced with 0 paths at `--bmp-sync-secs`,
    /// never syncing for ever.
    #[test]
    fn a_third_session_without_peer_up_is_synced_with_no_path() {
        let mut st = two_sessions_then_a_third(vec![(0, initiation("xr"))]);
        assert_eq!(st.next_deadline(), Some(THIRD_AT + SYNC_PATIENCE_MS));
        assert_eq!(
            at(&mut st, THIRD_AT + SYNC_PATIENCE_MS - 1),
            ("syncing".to_string(), None)
        );
        assert_eq!(
            at(&mut st, THIRD_AT + SYNC_PATIENCE_MS),
            ("synced".to_string(), Some(0))
        );
        assert_eq!(st.not_ready(), None);
        assert_eq!(st.view.counters().fallbacks, 0, "no peer owed");
        assert_eq!(st.next_deadline(), None);
    }

    /// A router's third session whose every peer sends its End-of-RIB:
    /// synced at once, no fallback pending.
    #[test]
    fn a_third_session_whose_peers_all_end_their_dump_is_synced_at_once() {
        let mut st = two_sessions_then_a_third(vec![
            (0, initiation("xr")),
            (10, xr_peer_up(1)),
            (20, xr_peer_up(2)),
            (30, xr_route(1, false)),
            (40, xr_route(2, false)),
            (50, xr_route(1, true)),
            (60, xr_route(2, true)),
        ]);
        assert_eq!(at(&mut st, THIRD_AT + 60), ("synced".to_string(), Some(2)));
        assert_eq!(st.next_deadline(), None);
        assert_eq!(st.view.counters().fallbacks, 0);
    }

    #[test]
    fn a_router_without_end_of_rib_is_counted_after_the_patience() {
        let mut st = Station::new([vip()], 300, Bounds::default());
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
        assert_eq!(st.view.paths(ROUTER, &vip()), None);
        st.expire(SYNC_PATIENCE_MS);
        assert_eq!(st.view.paths(ROUTER, &vip()), Some(2));
        assert_eq!(st.not_ready(), None);
    }

    fn initiation(name: &str) -> Message {
        Message::Initiation {
            sys_name: Some(name.to_string()),
            sys_descr: None,
        }
    }

    fn up_from(st: &mut Station, session: SessionId, from: &str) {
        st.apply(
            BmpInput::Up {
                session,
                address: addr(from),
            },
            0,
        );
    }

    #[test]
    fn a_session_speaks_only_for_its_own_address_whatever_its_sys_name() {
        let mut st = Station::new([vip()], 300, Bounds::default());
        let real = session_file("tests/data/bmp/8.4/session1.bin");
        feed(&mut st, 1, real, 0);
        assert_eq!(st.view.paths(ROUTER, &vip()), Some(2));
        // An impostor claims the real router's sysName from elsewhere.
        up_from(&mut st, 2, "192.0.2.99:50000");
        st.apply(
            BmpInput::Message {
                session: 2,
                message: initiation("rb-router"),
            },
            10,
        );
        assert_eq!(
            st.view.paths(ROUTER, &vip()),
            Some(2),
            "the real router's paths stay"
        );
        let doc = st.status(&|ms| ms);
        let names: Vec<(&str, Option<&str>)> = doc
            .iter()
            .map(|r| (r.router.as_str(), r.sys_name.as_deref()))
            .collect();
        assert_eq!(
            names,
            [
                ("127.0.0.1", Some("rb-router")),
                ("192.0.2.99", Some("rb-router"))
            ]
        );
    }

    #[test]
    fn a_sys_name_is_a_printable_label_of_at_most_255_bytes() {
        let mut st = Station::new([vip()], 300, Bounds::default());
        up_from(&mut st, 1, "127.0.0.1:40000");
        let long = format!("evil\n\x1b[2J{}", "x".repeat(65_000));
        st.apply(
            BmpInput::Message {
                session: 1,
                message: initiation(&long),
            },
            0,
        );
        let label = st.status(&|ms| ms)[0].sys_name.clone().expect("label");
        assert!(label.len() <= MAX_SYS_NAME, "{} bytes", label.len());
        assert!(label.starts_with("evil\\n\\u{1b}[2J"), "{label}");
        assert!(!label.chars().any(char::is_control), "{label:?}");
        assert_eq!(printable("a\tb\u{7f}é", 100), "a\\tb\\u{7f}é");
        assert_eq!(printable("ééé", 5), "éé", "cut at a character boundary");
    }

    #[test]
    fn routers_beyond_the_limit_are_ignored_and_counted() {
        let mut st = with_max_routers(3);
        for n in 0..5_000u64 {
            up_from(&mut st, n + 1, &nth_address(0, n));
            say(&mut st, n + 1, initiation("r"), 0);
        }
        assert_eq!(st.routers.len(), 3);
        assert_eq!(st.status(&|ms| ms).len(), 3);
        assert_eq!(st.sessions.len(), 5_000, "kept as sessions, ignored");
        assert_eq!(st.logged.len(), 1, "logged once");
    }

    #[test]
    fn peers_beyond_the_limit_are_refused_and_counted_per_router() {
        let limits = Bounds {
            view: Limits {
                peers_per_router: 100,
                ..Limits::default()
            },
            ..Bounds::default()
        };
        let mut st = Station::new([vip()], 300, limits);
        up_from(&mut st, 1, "127.0.0.1:40000");
        for n in 0..200_000u32 {
            let message = Message::PeerUp {
                peer: crate::bmp::PeerKey {
                    address: std::net::IpAddr::from(n.to_be_bytes()),
                    distinguisher: 0,
                },
                asn: 64512,
                bgp_id: std::net::Ipv4Addr::new(198, 18, 0, 1),
                loc_rib: false,
                families: vec![crate::model::Family::Ipv4],
                graceful_restart: None,
            };
            st.apply(
                BmpInput::Message {
                    session: 1,
                    message,
                },
                0,
            );
        }
        assert_eq!(st.view.counters().peers_refused, 199_900);
        assert_eq!(st.counted.peers_refused, 199_900, "reported to telemetry");
    }

    #[test]
    fn stale_paths_are_exported_with_the_paths_and_shown_in_status() {
        use crate::bmp::{GracefulRestart, Notification, PeerKey, Rib};
        use crate::model::Family;
        let mut st = Station::new([vip()], 300, Bounds::default());
        up_from(&mut st, 1, "127.0.0.1:40000");
        let node = PeerKey {
            address: std::net::IpAddr::from([198, 18, 1, 2]),
            distinguisher: 0,
        };
        let msg = |st: &mut Station, message: Message, now: Millis| {
            st.apply(
                BmpInput::Message {
                    session: 1,
                    message,
                },
                now,
            );
        };
        msg(&mut st, initiation("r"), 0);
        msg(
            &mut st,
            Message::PeerUp {
                peer: node,
                asn: 64512,
                bgp_id: std::net::Ipv4Addr::new(198, 18, 1, 2),
                loc_rib: false,
                families: vec![Family::Ipv4],
                graceful_restart: Some(GracefulRestart {
                    restart_time: 120,
                    families: vec![Family::Ipv4],
                    preserved: vec![],
                    notification: true,
                }),
            },
            0,
        );
        let route = |announced: Vec<crate::bmp::Path>, end_of_rib| Message::Route {
            peer: node,
            asn: 64512,
            bgp_id: std::net::Ipv4Addr::new(198, 18, 1, 2),
            rib: Rib::PostPolicy,
            announced,
            withdrawn: vec![],
            end_of_rib,
            skipped: vec![],
            anomalies: vec![],
        };
        let vip_path = crate::bmp::Path {
            prefix: vip(),
            path_id: None,
        };
        msg(&mut st, route(vec![vip_path], None), 0);
        msg(
            &mut st,
            route(vec![], Some(crate::bmp::EndOfRib::Unicast(Family::Ipv4))),
            0,
        );
        st.take_outputs();
        msg(
            &mut st,
            Message::PeerDown {
                peer: node,
                reason: "hold timer expired".into(),
                reason_code: 1,
                notification: Some(Notification {
                    code: 4,
                    subcode: 0,
                }),
            },
            9_000,
        );
        let paths = |st: &mut Station| -> Vec<(Option<u32>, Option<u32>)> {
            st.take_outputs()
                .into_iter()
                .filter_map(|o| match o {
                    Output::Paths { paths, stale, .. } => Some((paths, stale)),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(paths(&mut st), [(Some(1), Some(1))]);
        let doc = st.status(&|ms| ms);
        let peer = &doc[0].vips[0].peers[0];
        assert!(!peer.up && peer.stale, "{peer:?}");
        assert_eq!(st.next_deadline(), Some(129_000));
        st.expire(128_999);
        assert!(paths(&mut st).is_empty());
        st.expire(129_000);
        assert_eq!(paths(&mut st), [(Some(0), Some(0))]);
        assert!(st.status(&|ms| ms)[0].vips[0].peers.is_empty());
        // The session's end: both unknown together.
        st.apply(
            BmpInput::Down {
                session: 1,
                kind: "closed",
                reason: "closed".into(),
            },
            130_000,
        );
        assert_eq!(paths(&mut st), [(None, None)]);
    }
}
