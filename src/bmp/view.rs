//! The pure view of a BMP station: per router, per configured VIP, the
//! paths the router holds. No I/O and no clock of its own: the station
//! task feeds it the decoded messages of each session with the time it
//! read them, and reads the counts back.
//!
//! Contract:
//! - Only configured VIPs are stored; any other prefix costs one set lookup
//!   and is dropped. Every message costs O(log) in the number of routers,
//!   peers and paths held: counts are kept per (VIP, RIB) as they change,
//!   never recounted.
//! - **Which RIB counts**, per router and family: the post-policy
//!   Adj-RIB-In if the router exports it for that family (distinct BGP
//!   peers holding a path: what the router may use for ECMP), else the
//!   pre-policy Adj-RIB-In, else the Loc-RIB (its selected paths, counted by
//!   add-path id). Post-policy is preferred to Loc-RIB because FRR's Loc-RIB
//!   carries the best path only, not the multipath set (docs/BMP.md).
//!   Adj-RIB-Out (RFC 8671) never reaches the view (the decoder recognises
//!   and drops it). `/metrics` and `/status` both read [`View::paths`].
//! - **Known means known** (docs/BMP.md, "When counts are known"): after
//!   [`View::session_up_at`] the router is `Syncing` and every count unknown.
//!   1. *Opening*: Initiation, then a Peer Up for every BGP session
//!      established at that moment. When the first other message comes and
//!      no BGP session's Peer Up came before it (the router's own Loc-RIB
//!      Peer Up does not count), the router had nothing to dump (FRR, GoBGP
//!      starting with BMP before BGP): it is `Synced` at once and routes
//!      follow live.
//!   2. *Initial dump*: otherwise every peer that is up during the dump
//!      (its Peer Up in the opening or later, or its routes) owes an
//!      End-of-RIB (RFC 4724 marker, any RIB) for each family of the
//!      configured VIPs. A family's counts are known once no peer that is
//!      up owes it; the router is `Synced` once no peer owes anything, and
//!      peers that come up after that are live (counted at once). This is
//!      how routers that dump peer by peer and interleave (IOS XR, VRP,
//!      Junos: one End-of-RIB per peer) are read: the first End-of-RIB is
//!      not the router's.
//!   3. *Fallback*: `patience` after the session's first message (the
//!      time given to [`View::session_up_at`]) a router still `Syncing` is
//!      `Synced`, every peer that still owes an End-of-RIB taken as dumped
//!      ([`View::expire`], counted in [`Counters::fallbacks`]): RFC 7854
//!      does not require End-of-RIB, a peer that never negotiated a family
//!      never sends one for it, and a session may bring no peer that owes
//!      at all (no Peer Up, then silence). One deadline per session, set
//!      when it starts: neither a peer coming up late in the dump nor an
//!      earlier session of the router moves it.
//! - [`View::session_down`] makes the router `Stale`: counts unknown, paths
//!   kept for `/status` detail until [`View::forget`] or the next
//!   `session_up`, which starts from nothing.
//! - **Graceful restart** (RFC 4724, RFC 8538; docs/BMP.md): a Peer Down
//!   removes every path of that peer, in every RIB, unless its session
//!   negotiated graceful restart (its Peer Up's
//!   [`super::message::GracefulRestart`]) and the router retains its
//!   routes ([`retained`]: no NOTIFICATION, or one with the N bit that is
//!   no Hard Reset, or the router's own Hold Timer Expired). Then its
//!   paths of the families the peer listed stay, **stale**: still counted
//!   in [`View::paths`] (the router forwards to them) and also in
//!   [`View::stale`]; the others go. Stale paths end at the earliest of:
//!   the peer's restart time after the Peer Down ([`View::expire`]); a new
//!   Peer Up of the peer, at once for a family its new session does not
//!   list with the F bit, else each path as it is re-sent (fresh again)
//!   and the rest at the peer's End-of-RIB of the family in that RIB, or
//!   [`STALE_PATH_MS`] after the Peer Up; the router's session ending
//!   (unknown, kept for detail like every path). Any other Peer Up drops
//!   what an earlier session left (a Peer Down lost).
//! - Bounds ([`Limits`]): peers per router and paths per VIP per router;
//!   what is refused is dropped and counted ([`Counters`]), never stored.

mod held;
mod router;

use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

use super::message::{GracefulRestart, Message, Notification, PeerKey, Rib};
use crate::model::{Family, Millis, Prefix};
use router::{Router, apply, changed, due_peers, snapshot};

/// How long after its session's first message a router is `Synced` though
/// peers still owe their End-of-RIB (`--bmp-sync-secs`' default).
pub const DEFAULT_PATIENCE_MS: Millis = 60_000;

/// How long stale paths wait for the End-of-RIB of the re-established
/// session: FRR's `bgp graceful-restart stalepath-time` default (360 s).
/// Not the station's patience: the router, not the station, keeps them.
pub const STALE_PATH_MS: Millis = 360_000;

/// Whether the router keeps a peer's paths as stale when its session,
/// which negotiated `gr`, goes down with RFC 7854 `reason_code` (and the
/// NOTIFICATION of reasons 1 and 3): no NOTIFICATION (2, 4) keeps them; a
/// NOTIFICATION (1, 3) keeps them when both OPENs set the N bit (RFC 8538)
/// and it is no Cease/Hard Reset (6/9), or, sent by the router (1), when it
/// is Hold Timer Expired (4: the router detected the loss itself); a
/// de-configured peer (5) and anything else do not.
pub fn retained(gr: &GracefulRestart, reason_code: u8, notification: Option<Notification>) -> bool {
    let hard_reset = notification.is_some_and(|n| n.code == 6 && n.subcode == 9);
    let hold_timer = notification.is_some_and(|n| n.code == 4);
    match reason_code {
        2 | 4 => true,
        1 if hold_timer => true,
        1 | 3 => gr.notification && !hard_reset,
        _ => false,
    }
}

/// Where a router's session stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RouterState {
    /// Session up, initial dump not complete: counts unknown.
    Syncing,
    /// Initial dump complete for every VIP family: counts known.
    Synced,
    /// Session gone: counts unknown, last paths kept for detail.
    Stale,
}

/// The view's bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// BGP peers (and the Loc-RIB) one router may report.
    pub peers_per_router: usize,
    /// Paths one router may hold for one VIP, over its RIBs.
    pub paths_per_vip: usize,
    /// How long after its session's first message a router may be
    /// `Syncing` (its peers owing End-of-RIBs).
    pub patience_ms: Millis,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            peers_per_router: 4_096,
            paths_per_vip: 4_096,
            patience_ms: DEFAULT_PATIENCE_MS,
        }
    }
}

/// What the view refused or assumed since it was made (monotonic).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// Peers not stored: the router had [`Limits::peers_per_router`].
    pub peers_refused: u64,
    /// Paths not stored: the VIP had [`Limits::paths_per_vip`] at the router.
    pub paths_refused: u64,
    /// Peers taken as dumped without their End-of-RIB.
    pub fallbacks: u64,
}

/// One peer's paths for a VIP, for `/status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathDetail {
    /// The BGP peer (the zero address for Loc-RIB).
    pub peer: PeerKey,
    /// Its AS.
    pub asn: u32,
    /// Its BGP identifier.
    pub bgp_id: Ipv4Addr,
    /// Its session is up at the router (no Peer Down since its Peer Up or routes).
    pub up: bool,
    /// The RIB the paths are in.
    pub rib: Rib,
    /// The add-path ids of its paths (empty without add-path).
    pub path_ids: Vec<u32>,
    /// Every one of these paths is stale: kept by the router under
    /// graceful restart, not (yet) re-sent since the session dropped.
    pub stale: bool,
}

/// What [`View::expire`] did at one router.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expired {
    /// The router.
    pub router: String,
    /// The VIPs whose count, stale count or known-ness changed.
    pub changed: Vec<Prefix>,
    /// The peers taken as dumped without their End-of-RIB.
    pub late: Vec<PeerKey>,
    /// The router went `Synced` by the fallback (with or without `late`
    /// peers: a session with no peer that owes is synced too).
    pub synced: bool,
    /// The peers whose stale paths ended: their restart time (or the
    /// stale-path time, [`STALE_PATH_MS`]) passed.
    pub stale_ended: Vec<PeerKey>,
}

/// What the view counts and within which bounds: the configured VIPs,
/// their families and the limits, which every router's update reads.
#[derive(Debug, Clone)]
struct Scope {
    vips: BTreeSet<Prefix>,
    families: BTreeSet<Family>,
    limits: Limits,
}

/// The paths each router holds for each configured VIP.
#[derive(Debug, Clone)]
pub struct View {
    scope: Scope,
    routers: BTreeMap<String, Router>,
    /// (earliest deadline, router) of every router syncing or with stale
    /// paths.
    deadlines: BTreeSet<(Millis, String)>,
    /// Routers per state, kept as they change.
    states: BTreeMap<RouterStateKey, usize>,
    counters: Counters,
}

/// [`RouterState`] as a map key.
type RouterStateKey = u8;

fn key(s: RouterState) -> RouterStateKey {
    match s {
        RouterState::Syncing => 0,
        RouterState::Synced => 1,
        RouterState::Stale => 2,
    }
}

impl View {
    /// A view of these VIPs, with no router yet and the default [`Limits`].
    pub fn new(vips: impl IntoIterator<Item = Prefix>) -> View {
        View::with_limits(vips, Limits::default())
    }

    /// A view of these VIPs with these bounds.
    pub fn with_limits(vips: impl IntoIterator<Item = Prefix>, limits: Limits) -> View {
        let vips: BTreeSet<Prefix> = vips.into_iter().collect();
        let families = vips.iter().map(Family::of).collect();
        View {
            scope: Scope {
                vips,
                families,
                limits,
            },
            routers: BTreeMap::new(),
            deadlines: BTreeSet::new(),
            states: BTreeMap::new(),
            counters: Counters::default(),
        }
    }

    /// The configured VIPs.
    pub fn vips(&self) -> impl Iterator<Item = &Prefix> {
        self.scope.vips.iter()
    }

    /// What was refused or assumed so far.
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// Runs `f` on `router` keeping the state counts and the deadline
    /// index true.
    fn with_router<T>(
        &mut self,
        router: &str,
        f: impl FnOnce(&mut Router, &Scope) -> T,
    ) -> Option<T> {
        let r = self.routers.get_mut(router)?;
        let before = (r.state(), r.next_deadline());
        let out = f(r, &self.scope);
        let after = (r.state(), r.next_deadline());
        if before.0 != after.0 {
            self.count_state(before.0, -1);
            self.count_state(after.0, 1);
        }
        if before.1 != after.1 {
            if let Some(t) = before.1 {
                self.deadlines.remove(&(t, router.to_string()));
            }
            if let Some(t) = after.1 {
                self.deadlines.insert((t, router.to_string()));
            }
        }
        Some(out)
    }

    fn count_state(&mut self, s: RouterState, d: isize) {
        let n = self.states.entry(key(s)).or_default();
        *n = n.saturating_add_signed(d);
    }

    /// Routers per state: (syncing, synced, stale).
    pub fn state_counts(&self) -> (usize, usize, usize) {
        let n = |s| self.states.get(&key(s)).copied().unwrap_or(0);
        (
            n(RouterState::Syncing),
            n(RouterState::Synced),
            n(RouterState::Stale),
        )
    }

    /// [`View::session_up_at`] at time 0: for replays that never call
    /// [`View::expire`].
    pub fn session_up(&mut self, router: &str) {
        self.session_up_at(router, 0);
    }

    /// A session from `router` started, its first message read at `now`:
    /// its old view, if any, is dropped (with whatever an earlier session
    /// owed or was due); unknown until synced, at the latest `patience`
    /// after `now`.
    pub fn session_up_at(&mut self, router: &str, now: Millis) {
        self.forget(router);
        let r = Router::new(now, self.scope.limits.patience_ms);
        if let Some(t) = r.next_deadline() {
            self.deadlines.insert((t, router.to_string()));
        }
        self.routers.insert(router.to_string(), r);
        self.count_state(RouterState::Syncing, 1);
    }

    /// [`View::apply_at`] at time 0: for replays that never call
    /// [`View::expire`].
    pub fn apply(&mut self, router: &str, msg: &Message) -> Vec<Prefix> {
        self.apply_at(router, msg, 0)
    }

    /// Apply one decoded message of `router`'s session, read at `now`;
    /// returns the VIPs whose count, stale count or known-ness changed. A message for a
    /// router with no session yet starts one at `now`.
    pub fn apply_at(&mut self, router: &str, msg: &Message, now: Millis) -> Vec<Prefix> {
        if !self.routers.contains_key(router) {
            self.session_up_at(router, now);
        }
        let mut counters = self.counters;
        let out = self
            .with_router(router, |r, scope| apply(r, scope, msg, now, &mut counters))
            .unwrap_or_default();
        self.counters.peers_refused = counters.peers_refused;
        self.counters.paths_refused = counters.paths_refused;
        out
    }

    /// The earliest time a syncing router is due to be synced by the
    /// fallback or stale paths are due to end.
    pub fn next_deadline(&self) -> Option<Millis> {
        self.deadlines.first().map(|(t, _)| *t)
    }

    /// Makes every router still syncing past its session's patience
    /// synced (the peers that still owe an End-of-RIB taken as dumped) and
    /// ends the stale paths whose time passed; returns what changed, per
    /// router.
    pub fn expire(&mut self, now: Millis) -> Vec<Expired> {
        let due: Vec<String> = self
            .deadlines
            .iter()
            .take_while(|(t, _)| *t <= now)
            .map(|(_, r)| r.clone())
            .collect();
        let mut out = Vec::new();
        for name in due {
            let res = self.with_router(&name, |r, scope| {
                let before = snapshot(r, &scope.vips);
                // The session's patience is over: whatever its opening or
                // dump still owes (or an opening no other message followed,
                // with or without Peer Ups) is taken as complete.
                let synced = r.state() == RouterState::Syncing && r.sync_by <= now;
                let late = if synced {
                    let late = r.owing_peers();
                    r.go_live();
                    late
                } else {
                    Vec::new()
                };
                let stale_ended = due_peers(&r.stale_deadlines, now);
                for p in &stale_ended {
                    r.expire_stale(p);
                }
                (changed(r, before), late, synced, stale_ended)
            });
            if let Some((changed, late, synced, stale_ended)) = res {
                self.counters.fallbacks += late.len() as u64;
                out.push(Expired {
                    router: name,
                    changed,
                    late,
                    synced,
                    stale_ended,
                });
            }
        }
        out
    }

    /// The session ended (TCP closed, Termination, decode error): the
    /// router's view is stale (unknown) but kept for detail until `forget`.
    pub fn session_down(&mut self, router: &str) {
        self.with_router(router, |r, _| {
            r.down = true;
            for p in r.owing_peers() {
                r.paid(&p, None);
            }
            // Stale paths are kept for detail like the rest; nothing ends
            // on a router whose session is gone.
            r.stale_deadlines.clear();
            for p in r.peers.values_mut() {
                p.stale_until = None;
            }
        });
    }

    /// Drops everything about `router`.
    pub fn forget(&mut self, router: &str) {
        if let Some(r) = self.routers.remove(router) {
            self.count_state(r.state(), -1);
            if let Some(t) = r.next_deadline() {
                self.deadlines.remove(&(t, router.to_string()));
            }
        }
    }

    /// Paths the router holds for a configured VIP (see the module doc for
    /// which RIB counts); `None` = unknown: no such router, session down, or
    /// the VIP's family not dumped yet.
    pub fn paths(&self, router: &str, prefix: &Prefix) -> Option<u32> {
        self.routers.get(router)?.paths(prefix)
    }

    /// Of [`View::paths`], those the router keeps as stale under graceful
    /// restart (docs/BMP.md, "Graceful restart"); unknown exactly when the
    /// paths are.
    pub fn stale(&self, router: &str, prefix: &Prefix) -> Option<u32> {
        self.routers.get(router)?.stale(prefix)
    }

    /// A router's state, if the view knows it.
    pub fn state(&self, router: &str) -> Option<RouterState> {
        self.routers.get(router).map(Router::state)
    }

    /// Per-peer detail for `/status`: which peers hold a path for the VIP,
    /// from which RIB, stale or not (kept after the session went down).
    pub fn detail(&self, router: &str, prefix: &Prefix) -> Vec<PathDetail> {
        let Some(r) = self.routers.get(router) else {
            return Vec::new();
        };
        let Some(ribs) = r.paths.get(prefix) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (rib, held) in ribs {
            for (peer, ids) in &held.per_peer {
                let info = r.peers.get(peer);
                out.push(PathDetail {
                    peer: *peer,
                    asn: info.map_or(0, |i| i.asn),
                    bgp_id: info.map_or(Ipv4Addr::UNSPECIFIED, |i| i.bgp_id),
                    up: info.is_some_and(|i| i.up) && !r.down,
                    rib: *rib,
                    path_ids: ids.ids.keys().flatten().copied().collect(),
                    stale: ids.all_stale(),
                });
            }
        }
        out
    }

    /// Every router the view knows, with its state.
    pub fn routers(&self) -> impl Iterator<Item = (&str, RouterState)> {
        self.routers
            .iter()
            .map(|(name, r)| (name.as_str(), r.state()))
    }

    /// The RIB whose paths a router's counts for `family` come from, once
    /// it sent any.
    pub fn counted_rib(&self, router: &str, family: Family) -> Option<Rib> {
        self.routers.get(router)?.counted_rib(family)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bmp::{EndOfRib, Path};
    use std::net::IpAddr;

    fn vip() -> Prefix {
        "192.0.2.10/32".parse().expect("vip")
    }
    fn vip6() -> Prefix {
        "2001:db8::10/128".parse().expect("vip6")
    }
    fn peer(last: u8) -> PeerKey {
        PeerKey {
            address: IpAddr::from([198, 18, last, 2]),
            distinguisher: 0,
        }
    }
    fn loc_rib() -> PeerKey {
        PeerKey {
            address: IpAddr::from([0, 0, 0, 0]),
            distinguisher: 0,
        }
    }
    fn path(prefix: Prefix, path_id: Option<u32>) -> Path {
        Path { prefix, path_id }
    }
    fn route(p: PeerKey, rib: Rib, announced: Vec<Path>, withdrawn: Vec<Path>) -> Message {
        Message::Route {
            peer: p,
            asn: 64512,
            bgp_id: Ipv4Addr::new(198, 18, 0, 2),
            rib,
            announced,
            withdrawn,
            end_of_rib: None,
            skipped: vec![],
            anomalies: vec![],
        }
    }
    fn eor_of(p: PeerKey, rib: Rib, end: EndOfRib) -> Message {
        Message::Route {
            peer: p,
            asn: 64512,
            bgp_id: Ipv4Addr::new(198, 18, 0, 2),
            rib,
            announced: vec![],
            withdrawn: vec![],
            end_of_rib: Some(end),
            skipped: vec![],
            anomalies: vec![],
        }
    }
    fn eor(p: PeerKey, rib: Rib, family: Family) -> Message {
        eor_of(p, rib, EndOfRib::Unicast(family))
    }
    fn up(p: PeerKey) -> Message {
        up_gr(p, None)
    }
    fn up_gr(p: PeerKey, g: Option<GracefulRestart>) -> Message {
        Message::PeerUp {
            peer: p,
            asn: 64512,
            bgp_id: Ipv4Addr::new(198, 18, 0, 2),
            loc_rib: false,
            families: vec![Family::Ipv4, Family::Ipv6],
            graceful_restart: g,
        }
    }
    /// A session opening on a router with `peers` established.
    fn opened(peers: &[u8]) -> View {
        let mut v = View::new([vip(), vip6()]);
        v.session_up("r1");
        v.apply(
            "r1",
            &Message::Initiation {
                sys_name: Some("r1".into()),
                sys_descr: None,
            },
        );
        for p in peers {
            assert!(v.apply("r1", &up(peer(*p))).is_empty());
        }
        v
    }
    fn announce(v: &mut View, p: PeerKey, rib: Rib, prefix: Prefix) -> Vec<Prefix> {
        v.apply("r1", &route(p, rib, vec![path(prefix, None)], vec![]))
    }
    fn state(v: &View, router: &str) -> Option<RouterState> {
        v.routers().find(|(n, _)| *n == router).map(|(_, s)| s)
    }

    /// Two peers with the VIP, each dumped (End-of-RIB for both families).
    fn synced_two_paths() -> View {
        let mut v = opened(&[1, 2]);
        announce(&mut v, peer(1), Rib::PostPolicy, vip());
        announce(&mut v, peer(2), Rib::PostPolicy, vip());
        for p in [1, 2] {
            for f in [Family::Ipv4, Family::Ipv6] {
                v.apply("r1", &eor(peer(p), Rib::PostPolicy, f));
            }
        }
        assert_eq!(state(&v, "r1"), Some(RouterState::Synced));
        v
    }

    #[test]
    fn unknown_until_every_peer_ends_its_dump_then_counts_peers() {
        let mut v = opened(&[1, 2]);
        assert_eq!(state(&v, "r1"), Some(RouterState::Syncing));
        announce(&mut v, peer(1), Rib::PostPolicy, vip());
        assert_eq!(v.paths("r1", &vip()), None);
        // Peer 1's End-of-RIB is not the router's: peer 2 has not dumped
        // (IOS XR, VRP and Junos interleave peers, one End-of-RIB each).
        assert!(
            v.apply("r1", &eor(peer(1), Rib::PostPolicy, Family::Ipv4))
                .is_empty()
        );
        assert_eq!(v.paths("r1", &vip()), None);
        announce(&mut v, peer(2), Rib::PostPolicy, vip());
        let changed = v.apply("r1", &eor(peer(2), Rib::PostPolicy, Family::Ipv4));
        assert_eq!(changed, vec![vip()]);
        assert_eq!(v.paths("r1", &vip()), Some(2));
        assert_eq!(v.paths("r1", &vip6()), None);
        assert_eq!(state(&v, "r1"), Some(RouterState::Syncing));
        v.apply("r1", &eor(peer(1), Rib::PostPolicy, Family::Ipv6));
        assert_eq!(v.paths("r1", &vip6()), None, "peer 2 owes IPv6");
        v.apply("r1", &eor(peer(2), Rib::PrePolicy, Family::Ipv6));
        assert_eq!(v.paths("r1", &vip6()), Some(0), "an End-of-RIB of any RIB");
        assert_eq!(state(&v, "r1"), Some(RouterState::Synced));
    }

    #[test]
    fn a_peer_that_goes_down_owes_nothing_and_a_late_one_is_live() {
        let mut v = opened(&[1, 2]);
        v.apply("r1", &eor(peer(1), Rib::PostPolicy, Family::Ipv4));
        v.apply("r1", &eor(peer(1), Rib::PostPolicy, Family::Ipv6));
        assert_eq!(v.paths("r1", &vip()), None);
        let down = Message::PeerDown {
            peer: peer(2),
            reason: "test".into(),
            reason_code: 4,
            notification: None,
        };
        assert_eq!(v.apply("r1", &down), vec![vip(), vip6()]);
        assert_eq!(state(&v, "r1"), Some(RouterState::Synced));
        // After the dump, a new session's routes count at once.
        v.apply("r1", &up(peer(3)));
        assert_eq!(
            announce(&mut v, peer(3), Rib::PostPolicy, vip()),
            vec![vip()]
        );
        assert_eq!(v.paths("r1", &vip()), Some(1));
    }

    #[test]
    fn peers_and_paths_beyond_the_limits_are_refused_and_counted() {
        let limits = Limits {
            peers_per_router: 2,
            paths_per_vip: 3,
            patience_ms: DEFAULT_PATIENCE_MS,
        };
        let mut v = View::with_limits([vip()], limits);
        v.apply(
            "r1",
            &Message::Termination {
                reason: String::new(),
            },
        );
        for p in 1..=3 {
            v.apply("r1", &up(peer(p)));
        }
        assert_eq!(v.counters().peers_refused, 1);
        for id in 1..=4 {
            v.apply(
                "r1",
                &route(
                    peer(1),
                    Rib::PostPolicy,
                    vec![path(vip(), Some(id))],
                    vec![],
                ),
            );
        }
        assert_eq!(v.counters().paths_refused, 1);
        assert_eq!(v.detail("r1", &vip())[0].path_ids, [1, 2, 3]);
        // A path already held is not a new one.
        v.apply(
            "r1",
            &route(peer(1), Rib::PostPolicy, vec![path(vip(), Some(1))], vec![]),
        );
        assert_eq!(v.counters().paths_refused, 1);
    }

    #[test]
    fn an_end_of_rib_of_the_other_family_does_not_sync() {
        let mut v = opened(&[1]);
        v.apply("r1", &eor(peer(1), Rib::PostPolicy, Family::Ipv6));
        assert_eq!(v.paths("r1", &vip()), None);
        assert_eq!(v.paths("r1", &vip6()), Some(0));
        assert_eq!(state(&v, "r1"), Some(RouterState::Syncing));
    }

    #[test]
    fn an_end_of_rib_of_a_skipped_family_syncs_nothing() {
        let mut v = opened(&[1]);
        announce(&mut v, peer(1), Rib::PostPolicy, vip());
        // VPNv4 (1/128) and EVPN (25/70) End-of-RIBs, as XR and Junos send.
        for (afi, safi) in [(1, 128), (25, 70)] {
            let changed = v.apply(
                "r1",
                &eor_of(peer(1), Rib::PostPolicy, EndOfRib::Other { afi, safi }),
            );
            assert!(changed.is_empty());
        }
        assert_eq!(v.paths("r1", &vip()), None);
        assert_eq!(v.paths("r1", &vip6()), None);
        assert_eq!(state(&v, "r1"), Some(RouterState::Syncing));
        v.apply("r1", &eor(peer(1), Rib::PostPolicy, Family::Ipv4));
        assert_eq!(v.paths("r1", &vip()), Some(1));
    }

    #[test]
    fn withdraw_and_readd_follow() {
        let mut v = synced_two_paths();
        let w = v.apply(
            "r1",
            &route(peer(1), Rib::PostPolicy, vec![], vec![path(vip(), None)]),
        );
        assert_eq!(w, vec![vip()]);
        assert_eq!(v.paths("r1", &vip()), Some(1));
        assert_eq!(
            announce(&mut v, peer(1), Rib::PostPolicy, vip()),
            vec![vip()]
        );
        assert_eq!(v.paths("r1", &vip()), Some(2));
        // A re-announcement (attribute change) changes nothing.
        assert!(announce(&mut v, peer(1), Rib::PostPolicy, vip()).is_empty());
    }

    #[test]
    fn peer_down_removes_its_paths() {
        let mut v = synced_two_paths();
        let changed = v.apply(
            "r1",
            &Message::PeerDown {
                peer: peer(2),
                reason: "test".into(),
                reason_code: 4,
                notification: None,
            },
        );
        assert_eq!(changed, vec![vip()]);
        assert_eq!(v.paths("r1", &vip()), Some(1));
        let detail = v.detail("r1", &vip());
        assert_eq!(detail.len(), 1);
        assert_eq!(detail[0].peer, peer(1));
    }

    #[test]
    fn a_new_peer_up_forgets_what_the_old_session_held() {
        let mut v = synced_two_paths();
        assert_eq!(v.apply("r1", &up(peer(2))), vec![vip()]);
        assert_eq!(v.paths("r1", &vip()), Some(1));
        assert_eq!(
            announce(&mut v, peer(2), Rib::PostPolicy, vip()),
            vec![vip()]
        );
        assert_eq!(v.paths("r1", &vip()), Some(2));
    }

    #[test]
    fn session_down_is_unknown_but_keeps_detail_until_forget() {
        let mut v = synced_two_paths();
        v.session_down("r1");
        assert_eq!(v.paths("r1", &vip()), None);
        assert_eq!(state(&v, "r1"), Some(RouterState::Stale));
        let detail = v.detail("r1", &vip());
        assert_eq!(detail.len(), 2);
        assert!(detail.iter().all(|d| !d.up), "stale paths are not up");
        v.forget("r1");
        assert_eq!(state(&v, "r1"), None);
        assert!(v.detail("r1", &vip()).is_empty());
    }

    #[test]
    fn session_up_drops_the_old_view() {
        let mut v = synced_two_paths();
        v.session_down("r1");
        v.session_up("r1");
        assert_eq!(state(&v, "r1"), Some(RouterState::Syncing));
        assert!(v.detail("r1", &vip()).is_empty());
        v.apply("r1", &eor(peer(1), Rib::PostPolicy, Family::Ipv4));
        assert_eq!(v.paths("r1", &vip()), Some(0));
    }

    #[test]
    fn add_path_ids_count_once_per_peer_in_adj_rib_in() {
        let mut v = View::new([vip()]);
        v.apply(
            "r1",
            &route(
                peer(1),
                Rib::PostPolicy,
                vec![path(vip(), Some(1)), path(vip(), Some(2))],
                vec![],
            ),
        );
        v.apply(
            "r1",
            &route(peer(2), Rib::PostPolicy, vec![path(vip(), Some(1))], vec![]),
        );
        v.apply("r1", &eor(peer(1), Rib::PostPolicy, Family::Ipv4));
        assert_eq!(v.paths("r1", &vip()), Some(2), "two peers, three paths");
        let d = v.detail("r1", &vip());
        assert_eq!(d[0].path_ids, vec![1, 2]);
        // Withdrawing one path id of peer 1 leaves the peer counted.
        v.apply(
            "r1",
            &route(peer(1), Rib::PostPolicy, vec![], vec![path(vip(), Some(1))]),
        );
        assert_eq!(v.paths("r1", &vip()), Some(2));
        v.apply(
            "r1",
            &route(peer(1), Rib::PostPolicy, vec![], vec![path(vip(), Some(2))]),
        );
        assert_eq!(v.paths("r1", &vip()), Some(1));
    }

    #[test]
    fn loc_rib_counts_paths_when_it_is_the_only_rib() {
        let mut v = View::new([vip()]);
        v.apply(
            "r1",
            &route(
                loc_rib(),
                Rib::LocRib,
                vec![path(vip(), Some(1)), path(vip(), Some(2))],
                vec![],
            ),
        );
        v.apply("r1", &eor(loc_rib(), Rib::LocRib, Family::Ipv4));
        assert_eq!(v.counted_rib("r1", Family::Ipv4), Some(Rib::LocRib));
        assert_eq!(v.paths("r1", &vip()), Some(2));
    }

    #[test]
    fn post_policy_wins_over_loc_rib_and_pre_policy() {
        let mut v = synced_two_paths();
        // FRR's Loc-RIB holds the best path only; FRR's pre-policy without
        // soft-reconfiguration sends withdrawals only.
        announce(&mut v, loc_rib(), Rib::LocRib, vip());
        v.apply(
            "r1",
            &route(peer(1), Rib::PrePolicy, vec![], vec![path(vip(), None)]),
        );
        assert_eq!(v.counted_rib("r1", Family::Ipv4), Some(Rib::PostPolicy));
        assert_eq!(v.paths("r1", &vip()), Some(2));
    }

    #[test]
    fn pre_policy_counts_when_only_it_is_sent() {
        let mut v = View::new([vip()]);
        announce(&mut v, peer(1), Rib::PrePolicy, vip());
        v.apply("r1", &eor(peer(1), Rib::PrePolicy, Family::Ipv4));
        assert_eq!(v.paths("r1", &vip()), Some(1));
    }

    #[test]
    fn only_vips_are_stored() {
        let mut v = synced_two_paths();
        let other: Prefix = "10.0.0.0/8".parse().expect("prefix");
        let changed = announce(&mut v, peer(3), Rib::PostPolicy, other);
        assert!(changed.is_empty());
        assert!(v.detail("r1", &other).is_empty());
        assert_eq!(v.paths("r1", &other), Some(0), "known router, no path");
        assert!(
            v.routers
                .get("r1")
                .is_some_and(|r| !r.paths.contains_key(&other))
        );
    }

    #[test]
    fn a_peer_without_end_of_rib_is_taken_as_dumped_after_the_patience() {
        let mut v = opened(&[1]);
        announce(&mut v, peer(1), Rib::PostPolicy, vip());
        assert_eq!(v.paths("r1", &vip()), None);
        assert_eq!(v.next_deadline(), Some(DEFAULT_PATIENCE_MS));
        assert!(v.expire(DEFAULT_PATIENCE_MS - 1).is_empty());
        assert_eq!(
            v.expire(DEFAULT_PATIENCE_MS),
            vec![Expired {
                router: "r1".to_string(),
                changed: vec![vip(), vip6()],
                late: vec![peer(1)],
                synced: true,
                stale_ended: vec![],
            }]
        );
        assert_eq!(v.paths("r1", &vip()), Some(1));
        assert_eq!(state(&v, "r1"), Some(RouterState::Synced));
        assert_eq!(v.counters().fallbacks, 1);
        assert_eq!(v.next_deadline(), None);
    }

    #[test]
    fn a_router_with_no_session_established_is_known_at_once() {
        // FRR on a starting bgpd: Initiation, its Loc-RIB's Peer Up, then a
        // Peer Down for every configured peer, then Peer Ups and live routes.
        let mut v = opened(&[]);
        let loc = Message::PeerUp {
            peer: loc_rib(),
            asn: 64513,
            bgp_id: Ipv4Addr::new(198, 18, 0, 1),
            loc_rib: true,
            families: vec![Family::Ipv4, Family::Ipv6],
            graceful_restart: None,
        };
        assert!(v.apply("r1", &loc).is_empty());
        assert_eq!(v.paths("r1", &vip()), None);
        let down = Message::PeerDown {
            peer: peer(1),
            reason: "not established".into(),
            reason_code: 4,
            notification: None,
        };
        assert_eq!(v.apply("r1", &down), vec![vip(), vip6()]);
        assert_eq!(v.paths("r1", &vip()), Some(0));
        v.apply("r1", &up(peer(1)));
        assert_eq!(
            announce(&mut v, peer(1), Rib::PostPolicy, vip()),
            vec![vip()]
        );
        assert_eq!(v.paths("r1", &vip()), Some(1));
    }

    #[test]
    fn routers_are_separate() {
        let mut v = synced_two_paths();
        v.session_up("r2");
        assert_eq!(v.paths("r2", &vip()), None);
        assert_eq!(v.paths("r1", &vip()), Some(2));
        assert_eq!(v.paths("r3", &vip()), None);
    }

    #[test]
    fn an_unmonitored_loc_rib_owes_nothing_a_monitored_one_its_end_of_rib() {
        // FRR 10.x sends the Loc-RIB's Peer Up even when only post-policy
        // is monitored, and never an End-of-RIB for it then.
        let loc = Message::PeerUp {
            peer: loc_rib(),
            asn: 64513,
            bgp_id: Ipv4Addr::new(198, 18, 0, 1),
            loc_rib: true,
            families: vec![Family::Ipv4],
            graceful_restart: None,
        };
        let mut v = opened(&[]);
        v.apply("r1", &loc);
        v.apply("r1", &up(peer(1)));
        announce(&mut v, peer(1), Rib::PostPolicy, vip());
        v.apply("r1", &eor(peer(1), Rib::PostPolicy, Family::Ipv4));
        v.apply("r1", &eor(peer(1), Rib::PostPolicy, Family::Ipv6));
        assert_eq!(state(&v, "r1"), Some(RouterState::Synced));
        // Monitored: it owes once its routes come.
        let mut v = opened(&[]);
        v.apply("r1", &loc);
        v.apply("r1", &up(peer(1)));
        announce(&mut v, loc_rib(), Rib::LocRib, vip());
        for f in [Family::Ipv4, Family::Ipv6] {
            v.apply("r1", &eor(peer(1), Rib::PostPolicy, f));
        }
        assert_eq!(state(&v, "r1"), Some(RouterState::Syncing));
        for f in [Family::Ipv4, Family::Ipv6] {
            v.apply("r1", &eor(loc_rib(), Rib::LocRib, f));
        }
        assert_eq!(state(&v, "r1"), Some(RouterState::Synced));
    }

    #[test]
    fn the_fallback_ends_an_opening_no_other_message_followed() {
        // Peer Ups, then silence (GoBGP with no route and statistics
        // minutes apart): the fallback must not wait for a message.
        let mut v = opened(&[1, 2]);
        assert_eq!(state(&v, "r1"), Some(RouterState::Syncing));
        let done = v.expire(DEFAULT_PATIENCE_MS);
        assert_eq!(done.len(), 1);
        assert_eq!(done[0].late, vec![peer(1), peer(2)]);
        assert_eq!(state(&v, "r1"), Some(RouterState::Synced));
        assert_eq!(v.paths("r1", &vip()), Some(0));
    }

    #[test]
    fn a_session_with_no_peer_that_owes_is_synced_at_the_patience_from_its_start() {
        // Its first message at 5 s, then only what owes nothing: the
        // Loc-RIB's Peer Up, a Peer Up of a family no VIP has; then silence.
        let mut v = View::new([vip()]);
        let start = 5_000;
        v.apply_at(
            "r1",
            &Message::Initiation {
                sys_name: None,
                sys_descr: None,
            },
            start,
        );
        let loc = Message::PeerUp {
            peer: loc_rib(),
            asn: 64513,
            bgp_id: Ipv4Addr::new(198, 18, 0, 1),
            loc_rib: true,
            families: vec![Family::Ipv4],
            graceful_restart: None,
        };
        v.apply_at("r1", &loc, start + 10);
        let v6_only = Message::PeerUp {
            peer: peer(1),
            asn: 64512,
            bgp_id: Ipv4Addr::new(198, 18, 1, 2),
            loc_rib: false,
            families: vec![Family::Ipv6],
            graceful_restart: None,
        };
        v.apply_at("r1", &v6_only, start + 20);
        assert_eq!(v.next_deadline(), Some(start + DEFAULT_PATIENCE_MS));
        assert!(v.expire(start + DEFAULT_PATIENCE_MS - 1).is_empty());
        assert_eq!(state(&v, "r1"), Some(RouterState::Syncing));
        let done = v.expire(start + DEFAULT_PATIENCE_MS);
        assert_eq!(done.len(), 1);
        assert!(done[0].synced && done[0].late.is_empty(), "{done:?}");
        assert_eq!(state(&v, "r1"), Some(RouterState::Synced));
        assert_eq!(v.paths("r1", &vip()), Some(0));
        assert_eq!(v.next_deadline(), None);
    }

    // ---- Graceful restart (RFC 4724, RFC 8538) ----

    fn gr(families: &[Family], preserved: &[Family], notification: bool) -> GracefulRestart {
        GracefulRestart {
            restart_time: 120,
            families: families.to_vec(),
            preserved: preserved.to_vec(),
            notification,
        }
    }
    fn down(p: PeerKey, reason_code: u8, notification: Option<(u8, u8)>) -> Message {
        Message::PeerDown {
            peer: p,
            reason: "test".into(),
            reason_code,
            notification: notification.map(|(code, subcode)| Notification { code, subcode }),
        }
    }
    const RESTART_MS: Millis = 120_000;

    #[test]
    fn the_retention_rule() {
        let with_n = gr(&[Family::Ipv4], &[], true);
        let without_n = gr(&[Family::Ipv4], &[], false);
        let n = |code, subcode| Some(Notification { code, subcode });
        let cases = [
            // (reason, notification, kept with N, kept without N)
            (2, None, true, true),
            (4, None, true, true),
            (1, n(4, 0), true, true),
            (1, n(6, 2), true, false),
            (1, n(6, 9), false, false),
            (1, None, true, false),
            (3, n(6, 4), true, false),
            (3, n(4, 0), true, false),
            (3, n(6, 9), false, false),
            (5, None, false, false),
            (6, None, false, false),
            (0, None, false, false),
        ];
        for (reason, notification, kept_n, kept) in cases {
            assert_eq!(
                retained(&with_n, reason, notification),
                kept_n,
                "N bit, reason {reason}, {notification:?}"
            );
            assert_eq!(
                retained(&without_n, reason, notification),
                kept,
                "no N bit, reason {reason}, {notification:?}"
            );
        }
    }

    /// A synced router with peer 1 (graceful restart `g`) holding the VIP
    /// (post-policy, add-path id `id`) and peer 2 holding it too.
    fn synced_with_gr(g: Option<GracefulRestart>) -> View {
        let mut v = View::new([vip(), vip2()]);
        v.session_up("r1");
        v.apply("r1", &up_gr(peer(1), g));
        v.apply("r1", &up(peer(2)));
        for p in [1, 2] {
            for f in [Family::Ipv4, Family::Ipv6] {
                v.apply("r1", &eor(peer(p), Rib::PostPolicy, f));
            }
        }
        announce(&mut v, peer(1), Rib::PostPolicy, vip());
        announce(&mut v, peer(1), Rib::PostPolicy, vip2());
        announce(&mut v, peer(2), Rib::PostPolicy, vip());
        assert_eq!(state(&v, "r1"), Some(RouterState::Synced));
        assert_eq!(
            (v.paths("r1", &vip()), v.stale("r1", &vip())),
            (Some(2), Some(0))
        );
        v
    }
    fn vip2() -> Prefix {
        "192.0.2.11/32".parse().expect("vip2")
    }
    fn counts(v: &View, p: &Prefix) -> (Option<u32>, Option<u32>) {
        (v.paths("r1", p), v.stale("r1", p))
    }

    #[test]
    fn a_powered_off_node_stays_as_stale_for_its_restart_time() {
        let mut v = synced_with_gr(Some(gr(&[Family::Ipv4], &[], true)));
        let at = 5_000;
        // The router's hold timer expired: it sent Hold Timer Expired.
        let changed = v.apply_at("r1", &down(peer(1), 1, Some((4, 0))), at);
        assert_eq!(changed, vec![vip(), vip2()], "the stale counts changed");
        assert_eq!(counts(&v, &vip()), (Some(2), Some(1)), "still forwarded to");
        assert_eq!(counts(&v, &vip2()), (Some(1), Some(1)));
        let d = v.detail("r1", &vip());
        assert!(!d[0].up && d[0].stale, "{d:?}");
        assert!(d[1].up && !d[1].stale, "{d:?}");
        assert_eq!(v.next_deadline(), Some(at + RESTART_MS));
        assert!(v.expire(at + RESTART_MS - 1).is_empty());
        assert_eq!(counts(&v, &vip()), (Some(2), Some(1)));
        let done = v.expire(at + RESTART_MS);
        assert_eq!(done.len(), 1);
        assert_eq!(done[0].stale_ended, vec![peer(1)]);
        assert!(done[0].late.is_empty());
        assert_eq!(done[0].changed, vec![vip(), vip2()]);
        assert_eq!(counts(&v, &vip()), (Some(1), Some(0)));
        assert_eq!(counts(&v, &vip2()), (Some(0), Some(0)));
        assert_eq!(v.next_deadline(), None);
        assert_eq!(v.counters().fallbacks, 0);
    }

    #[test]
    fn a_reconnecting_node_replaces_its_stale_paths_up_to_its_end_of_rib() {
        let mut v = synced_with_gr(Some(gr(&[Family::Ipv4], &[], true)));
        // bgpd stopped cleanly: the TCP session closed, no NOTIFICATION.
        v.apply_at("r1", &down(peer(1), 4, None), 1_000);
        assert_eq!(counts(&v, &vip()), (Some(2), Some(1)));
        // It comes back preserving its forwarding state (F bit).
        let back = Some(gr(&[Family::Ipv4], &[Family::Ipv4], true));
        v.apply_at("r1", &up_gr(peer(1), back), 30_000);
        assert_eq!(
            counts(&v, &vip()),
            (Some(2), Some(1)),
            "stale until re-sent"
        );
        assert_eq!(v.next_deadline(), Some(30_000 + STALE_PATH_MS));
        // It re-sends the VIP only: fresh again; the other VIP stays stale.
        assert_eq!(
            v.apply_at(
                "r1",
                &route(peer(1), Rib::PostPolicy, vec![path(vip(), None)], vec![]),
                30_100
            ),
            vec![vip()]
        );
        assert_eq!(counts(&v, &vip()), (Some(2), Some(0)));
        assert_eq!(counts(&v, &vip2()), (Some(1), Some(1)));
        assert!(v.detail("r1", &vip()).iter().all(|d| d.up && !d.stale));
        // Its End-of-RIB: what it did not re-send is gone.
        let changed = v.apply_at("r1", &eor(peer(1), Rib::PostPolicy, Family::Ipv4), 30_200);
        assert_eq!(changed, vec![vip2()]);
        assert_eq!(counts(&v, &vip()), (Some(2), Some(0)));
        assert_eq!(counts(&v, &vip2()), (Some(0), Some(0)));
        // The stale-path deadline finds nothing left.
        v.expire(30_000 + STALE_PATH_MS);
        assert_eq!(counts(&v, &vip()), (Some(2), Some(0)));
        assert_eq!(v.next_deadline(), None);
    }

    #[test]
    fn a_stale_add_path_id_not_resent_goes_at_the_end_of_rib() {
        let mut v = synced_with_gr(Some(gr(&[Family::Ipv4], &[], true)));
        v.apply(
            "r1",
            &route(peer(1), Rib::PostPolicy, vec![path(vip(), Some(7))], vec![]),
        );
        v.apply_at("r1", &down(peer(1), 2, None), 1_000);
        v.apply_at(
            "r1",
            &up_gr(peer(1), Some(gr(&[Family::Ipv4], &[Family::Ipv4], true))),
            2_000,
        );
        // One of its two paths re-sent: the peer is no longer stale.
        v.apply_at(
            "r1",
            &route(peer(1), Rib::PostPolicy, vec![path(vip(), None)], vec![]),
            2_100,
        );
        assert_eq!(counts(&v, &vip()), (Some(2), Some(0)));
        assert!(!v.detail("r1", &vip())[0].stale);
        v.apply_at("r1", &eor(peer(1), Rib::PostPolicy, Family::Ipv4), 2_200);
        assert_eq!(
            v.detail("r1", &vip())[0].path_ids,
            Vec::<u32>::new(),
            "id 7 gone"
        );
        assert_eq!(counts(&v, &vip()), (Some(2), Some(0)));
    }

    #[test]
    fn a_reconnect_without_forwarding_state_drops_the_stale_paths_at_once() {
        let mut v = synced_with_gr(Some(gr(&[Family::Ipv4], &[], true)));
        v.apply_at("r1", &down(peer(1), 1, Some((4, 0))), 1_000);
        assert_eq!(counts(&v, &vip()), (Some(2), Some(1)));
        // F bit 0 (FRR's default): the router deletes them (RFC 4724 4.2).
        v.apply_at(
            "r1",
            &up_gr(peer(1), Some(gr(&[Family::Ipv4], &[], true))),
            2_000,
        );
        assert_eq!(counts(&v, &vip()), (Some(1), Some(0)));
        assert_eq!(v.next_deadline(), None);
        announce(&mut v, peer(1), Rib::PostPolicy, vip());
        assert_eq!(counts(&v, &vip()), (Some(2), Some(0)));
    }

    #[test]
    fn without_retention_a_peer_down_removes_its_paths() {
        // No graceful restart, a Hard Reset, a de-configured peer, an
        // administrative Cease without the N bit.
        let cases = [
            (None, down(peer(1), 1, Some((4, 0)))),
            (
                Some(gr(&[Family::Ipv4], &[], true)),
                down(peer(1), 3, Some((6, 9))),
            ),
            (Some(gr(&[Family::Ipv4], &[], true)), down(peer(1), 5, None)),
            (
                Some(gr(&[Family::Ipv4], &[], false)),
                down(peer(1), 3, Some((6, 4))),
            ),
            // Graceful restart for IPv6 only: the IPv4 VIP goes.
            (Some(gr(&[Family::Ipv6], &[], true)), down(peer(1), 4, None)),
        ];
        for (g, msg) in cases {
            let mut v = synced_with_gr(g.clone());
            v.apply_at("r1", &msg, 1_000);
            assert_eq!(counts(&v, &vip()), (Some(1), Some(0)), "{g:?} {msg:?}");
            assert_eq!(counts(&v, &vip2()), (Some(0), Some(0)), "{g:?} {msg:?}");
            assert_eq!(v.next_deadline(), None);
        }
    }

    #[test]
    fn stale_paths_are_unknown_with_the_paths_once_the_session_ends() {
        let mut v = synced_with_gr(Some(gr(&[Family::Ipv4], &[], true)));
        v.apply_at("r1", &down(peer(1), 4, None), 1_000);
        // A repeated Peer Down neither drops them nor moves their end.
        v.apply_at("r1", &down(peer(1), 4, None), 50_000);
        assert_eq!(counts(&v, &vip()), (Some(2), Some(1)));
        assert_eq!(v.next_deadline(), Some(1_000 + RESTART_MS));
        v.session_down("r1");
        assert_eq!(counts(&v, &vip()), (None, None));
        assert_eq!(v.next_deadline(), None);
        assert!(
            v.detail("r1", &vip()).iter().any(|d| d.stale),
            "kept for detail"
        );
    }
}
