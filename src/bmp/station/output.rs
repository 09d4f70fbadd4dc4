//! What the station decided, for the daemon: [`Output`]s it counts
//! (telemetry) and [`Note`]s it logs, in the order the station decided
//! them.

use std::net::{Ipv4Addr, SocketAddr};

use super::super::{Anomaly, GracefulRestart, Notification, PeerKey, RouterState};
use super::SessionId;
use crate::model::{Millis, Prefix};

/// What the station decided: the daemon counts each (telemetry) and logs
/// the [`Note`]s ([`super::Station::take_outputs`], after each input).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// A router's paths for a VIP (`None`: unknown), and how many of them
    /// it keeps as stale (graceful restart; unknown exactly when `paths` is).
    Paths {
        /// The router.
        router: String,
        /// The VIP.
        prefix: Prefix,
        /// Its paths there.
        paths: Option<u32>,
        /// Of those, the stale ones.
        stale: Option<u32>,
    },
    /// A stale router was forgotten: its series go.
    Forgotten {
        /// The router.
        router: String,
    },
    /// `n` of something refused (`routers`, `peers`, `paths`).
    Refused {
        /// What.
        reason: &'static str,
        /// How many.
        n: u64,
    },
    /// `n` peers taken as dumped without their End-of-RIB.
    Fallbacks(u64),
    /// A message of this kind was decoded.
    Message(&'static str),
    /// `n` attributes of a skipped family.
    Skipped {
        /// Its AFI.
        afi: u16,
        /// Its SAFI.
        safi: u8,
        /// How many.
        n: u64,
    },
    /// An announcing UPDATE with a missing or malformed attribute (RFC
    /// 7606's treat-as-withdraw cases; its paths counted): the reason's label.
    Anomaly(&'static str),
    /// A session ended, by kind.
    SessionEnd(&'static str),
    /// Sessions open now.
    Sessions(usize),
    /// Something the log says.
    Note(Note),
}

/// What the log says the station saw or decided, in the order it did; the
/// daemon words each (`daemon::bmp::publish`). Text from a router is
/// already [`super::printable`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    /// The first refusal of its kind (`routers`, `peers`, `paths`): noted
    /// once for the station's life, counted every time.
    RefusedFirst(&'static str),
    /// A connection accepted: a session, no router yet.
    Accepted {
        /// The session.
        session: SessionId,
        /// Where it connected from.
        address: SocketAddr,
    },
    /// A session accepted before the router's newest one spoke after it:
    /// ignored.
    Outranked {
        /// The router.
        router: String,
        /// Where the session connected from.
        address: SocketAddr,
        /// The session.
        session: SessionId,
        /// The router's newest session.
        newest: SessionId,
    },
    /// A session speaks for its address's router.
    Connected {
        /// Where it connected from.
        address: SocketAddr,
        /// The session.
        session: SessionId,
    },
    /// The router's Initiation.
    Initiation {
        /// The router.
        router: String,
        /// Its sysName, printable and cut to [`super::MAX_SYS_NAME`], if any.
        sys_name: Option<String>,
        /// Its sysDescr, printable and cut, if any.
        sys_descr: Option<String>,
    },
    /// A Peer Up.
    PeerUp {
        /// The router.
        router: String,
        /// The peer.
        peer: PeerKey,
        /// Its AS.
        asn: u32,
        /// Its BGP identifier.
        bgp_id: Ipv4Addr,
        /// Graceful restart as its session negotiated it.
        graceful_restart: Option<GracefulRestart>,
    },
    /// A Peer Down.
    PeerDown {
        /// The router.
        router: String,
        /// The peer.
        peer: PeerKey,
        /// The router's reason, printable and cut.
        reason: String,
        /// The NOTIFICATION, if one was sent or received.
        notification: Option<Notification>,
    },
    /// A Statistics Report.
    Stats {
        /// The router.
        router: String,
        /// The peer.
        peer: PeerKey,
        /// Each counter (type, value).
        counters: Vec<(u16, u64)>,
    },
    /// The router's Termination.
    Termination {
        /// The router.
        router: String,
        /// Its reason, printable and cut.
        reason: String,
    },
    /// An UPDATE anomaly, the first of its kind at the router.
    AnomalyFirst {
        /// The router.
        router: String,
        /// The peer whose UPDATE it was.
        peer: PeerKey,
        /// What was missing or malformed.
        anomaly: Anomaly,
    },
    /// A router's state changed (`None`: the view does not know it).
    State {
        /// The router.
        router: String,
        /// Its state now.
        state: Option<RouterState>,
    },
    /// A new session from the router's address replaces its open one.
    Replaced {
        /// The router.
        router: String,
        /// Where the new session connected from.
        address: SocketAddr,
    },
    /// A connection ended before its first BMP message (no router).
    SilentEnded {
        /// Where it connected from.
        address: SocketAddr,
        /// The session.
        session: SessionId,
        /// Why, from the session task.
        reason: String,
    },
    /// A replaced or ignored session ended.
    IgnoredEnded {
        /// Where it connected from.
        address: SocketAddr,
        /// Why, from the session task.
        reason: String,
    },
    /// The session speaking for a router ended.
    Ended {
        /// The router.
        router: String,
        /// Why, from the session task.
        reason: String,
        /// It ended on malformed input.
        malformed: bool,
    },
    /// Peers taken as dumped without their End-of-RIB (the sync fallback).
    Late {
        /// The router.
        router: String,
        /// The peers.
        peers: Vec<PeerKey>,
    },
    /// Peers whose stale paths ended (graceful restart over).
    StaleEnded {
        /// The router.
        router: String,
        /// The peers.
        peers: Vec<PeerKey>,
    },
    /// A router synced by the fallback with no peer owing an End-of-RIB.
    NothingOwed {
        /// The router.
        router: String,
    },
    /// A stale router was forgotten.
    Forgotten {
        /// The router.
        router: String,
        /// How long it was stale, at most.
        stale_ms: Millis,
    },
    /// A router's paths (or their known-ness) for a VIP changed.
    Paths {
        /// The router.
        router: String,
        /// The VIP.
        prefix: Prefix,
        /// Its paths there (`None`: unknown).
        paths: Option<u32>,
        /// Of those, the stale ones.
        stale: Option<u32>,
    },
}
