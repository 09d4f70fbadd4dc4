//! The pure view of a BMP station: per router, per configured VIP, the
//! paths the router holds. No I/O, no clock: the station task feeds it the
//! decoded messages of each session and reads the counts back.
//!
//! Contract:
//! - Only configured VIPs are stored; any other prefix costs one set lookup
//!   and is dropped.
//! - The count for a VIP ([`View::paths`]) comes from one RIB per router,
//!   the best the router sends: the post-policy Adj-RIB-In (distinct BGP
//!   peers holding a path: what the router may use for ECMP), else the
//!   pre-policy Adj-RIB-In, else the Loc-RIB (its selected paths, counted by
//!   add-path id). Post-policy is preferred to Loc-RIB because FRR's Loc-RIB
//!   carries the best path only, not the multipath set (docs/BMP.md).
//! - Synced rule (from FRR 8.4, 10.3 and 10.7 captures, docs/BMP.md): after
//!   [`View::session_up`] the router is `Syncing` and every count unknown.
//!   The router opens with Initiation, then a Peer Up for every BGP session
//!   established at that moment, then dumps its tables family by family,
//!   each closed by End-of-RIB messages (per peer and RIB). So:
//!   1. a family (IPv4, IPv6) becomes known on its first End-of-RIB;
//!   2. when the first message after the opening Initiation and Peer Ups is
//!      not a Peer Up and no BGP session's Peer Up came before it (the
//!      router's own Loc-RIB Peer Up does not count), the router had no
//!      established session, so nothing to dump and no End-of-RIB will
//!      come (FRR sends them only for established peers): every family is
//!      known at once and routes follow live. This is a starting router.
//!   3. fallback, for routers that send no End-of-RIB (RFC 7854 does not
//!      require it) or a family no peer negotiated: the station calls
//!      [`View::assume_synced`] after its own timeout.
//!
//!   The router is `Synced` once every family of the configured VIPs is.
//! - [`View::session_down`] makes the router `Stale`: counts unknown, paths
//!   kept for `/status` detail until [`View::forget`] or the next
//!   `session_up`, which starts from nothing.
//! - A Peer Down removes every path of that peer, in every RIB; so does a
//!   Peer Up (a new BGP session sends its routes again).

use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

use super::message::{EndOfRib, Family, Message, Path, PeerKey, Rib};
use crate::model::Prefix;

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
}

#[derive(Debug, Clone, Copy)]
struct PeerInfo {
    asn: u32,
    bgp_id: Ipv4Addr,
    up: bool,
}

#[derive(Debug, Clone)]
struct Router {
    down: bool,
    /// While the session's opening burst lasts: the BGP sessions' Peer Ups seen.
    opening: Option<usize>,
    synced: BTreeSet<Family>,
    assumed: bool,
    ribs: BTreeSet<Rib>,
    peers: BTreeMap<PeerKey, PeerInfo>,
    /// Per VIP: (rib, peer, add-path id) of every path held.
    paths: BTreeMap<Prefix, BTreeSet<(Rib, PeerKey, Option<u32>)>>,
}

impl Router {
    fn new() -> Router {
        Router {
            down: false,
            opening: Some(0),
            synced: BTreeSet::new(),
            assumed: false,
            ribs: BTreeSet::new(),
            peers: BTreeMap::new(),
            paths: BTreeMap::new(),
        }
    }

    /// The RIB counted: post-policy, else pre-policy, else Loc-RIB.
    fn counted_rib(&self) -> Option<Rib> {
        [Rib::PostPolicy, Rib::PrePolicy, Rib::LocRib]
            .into_iter()
            .find(|r| self.ribs.contains(r))
    }

    fn known(&self, prefix: &Prefix) -> bool {
        !self.down && (self.assumed || self.synced.contains(&Family::of(prefix)))
    }

    fn count(&self, prefix: &Prefix) -> u32 {
        let Some(rib) = self.counted_rib() else {
            return 0;
        };
        let Some(held) = self.paths.get(prefix) else {
            return 0;
        };
        // The set is ordered by (rib, peer, path id): a peer's paths in a
        // RIB are adjacent, so distinct peers count without allocating.
        let mut n = 0usize;
        let mut last: Option<&PeerKey> = None;
        for (_, p, _) in held.iter().filter(|(r, _, _)| *r == rib) {
            if rib == Rib::LocRib || last != Some(p) {
                n += 1;
            }
            last = Some(p);
        }
        u32::try_from(n).unwrap_or(u32::MAX)
    }

    fn paths(&self, prefix: &Prefix) -> Option<u32> {
        self.known(prefix).then(|| self.count(prefix))
    }
}

/// The paths each router holds for each configured VIP.
#[derive(Debug, Clone)]
pub struct View {
    vips: BTreeSet<Prefix>,
    families: BTreeSet<Family>,
    routers: BTreeMap<String, Router>,
}

impl View {
    /// A view of these VIPs, with no router yet.
    pub fn new(vips: impl IntoIterator<Item = Prefix>) -> View {
        let vips: BTreeSet<Prefix> = vips.into_iter().collect();
        let families = vips.iter().map(Family::of).collect();
        View {
            vips,
            families,
            routers: BTreeMap::new(),
        }
    }

    /// The configured VIPs.
    pub fn vips(&self) -> impl Iterator<Item = &Prefix> {
        self.vips.iter()
    }

    /// A session from `router` started: its old view, if any, is dropped;
    /// unknown until synced.
    pub fn session_up(&mut self, router: &str) {
        self.routers.insert(router.to_string(), Router::new());
    }

    /// Apply one decoded message of `router`'s session; returns the VIPs
    /// whose count or known-ness changed. A message for a router with no
    /// session yet starts one.
    pub fn apply(&mut self, router: &str, msg: &Message) -> Vec<Prefix> {
        if !self.routers.contains_key(router) {
            self.session_up(router);
        }
        let vips = &self.vips;
        let Some(r) = self.routers.get_mut(router) else {
            return Vec::new();
        };
        let mut opened = Vec::new();
        if let Some(ups) = r.opening {
            match msg {
                Message::Initiation { .. } | Message::PeerUp { loc_rib: true, .. } => {}
                Message::PeerUp { .. } => r.opening = Some(ups + 1),
                _ => {
                    r.opening = None;
                    if ups == 0 {
                        // Rule 2 of the module doc: nothing was established,
                        // nothing will be dumped.
                        let touched: Vec<Prefix> = vips.iter().copied().collect();
                        let before: Vec<_> = touched.iter().map(|v| r.paths(v)).collect();
                        r.assumed = true;
                        opened = changed(r, touched, before);
                    }
                }
            }
        }
        let mut out = match msg {
            Message::PeerUp {
                peer, asn, bgp_id, ..
            } => {
                r.peers.insert(
                    *peer,
                    PeerInfo {
                        asn: *asn,
                        bgp_id: *bgp_id,
                        up: true,
                    },
                );
                // A new BGP session sends its routes again: whatever an
                // earlier session left (a Peer Down lost) is not held.
                drop_peer(r, peer)
            }
            Message::PeerDown { peer, .. } => {
                if let Some(p) = r.peers.get_mut(peer) {
                    p.up = false;
                }
                drop_peer(r, peer)
            }
            Message::Route {
                peer,
                asn,
                bgp_id,
                rib,
                announced,
                withdrawn,
                end_of_rib,
                ..
            } => {
                // An End-of-RIB of a family not decoded (VPN, EVPN, ...)
                // says nothing about the unicast ones; a treat-as-withdraw
                // UPDATE's prefixes are in `withdrawn` already.
                let end_of_rib = match end_of_rib {
                    Some(EndOfRib::Unicast(f)) => Some(*f),
                    Some(EndOfRib::Other { .. }) | None => None,
                };
                let new_rib = r.ribs.insert(*rib);
                r.peers.entry(*peer).or_insert(PeerInfo {
                    asn: *asn,
                    bgp_id: *bgp_id,
                    up: true,
                });
                let mut touched: BTreeSet<Prefix> = announced
                    .iter()
                    .chain(withdrawn)
                    .map(|p| p.prefix)
                    .filter(|p| vips.contains(p))
                    .collect();
                let newly_synced = end_of_rib.is_some_and(|f| !r.synced.contains(&f));
                if new_rib || newly_synced {
                    // The counted RIB or a family's known-ness may change:
                    // every VIP may.
                    touched.extend(vips.iter().copied());
                }
                let touched: Vec<Prefix> = touched.into_iter().collect();
                let before: Vec<_> = touched.iter().map(|v| r.paths(v)).collect();
                for Path { prefix, path_id } in withdrawn {
                    if let Some(held) = r.paths.get_mut(prefix) {
                        held.remove(&(*rib, *peer, *path_id));
                    }
                }
                for Path { prefix, path_id } in announced {
                    if vips.contains(prefix) {
                        r.paths
                            .entry(*prefix)
                            .or_default()
                            .insert((*rib, *peer, *path_id));
                    }
                }
                if let Some(f) = end_of_rib {
                    r.synced.insert(f);
                }
                changed(r, touched, before)
            }
            Message::Initiation { .. }
            | Message::Stats { .. }
            | Message::Termination { .. }
            | Message::Ignored { .. } => Vec::new(),
        };
        for v in opened {
            if !out.contains(&v) {
                out.push(v);
            }
        }
        out
    }

    /// The router sent no End-of-RIB within the station's patience: treat
    /// its dump as complete. Returns the VIPs that became known.
    pub fn assume_synced(&mut self, router: &str) -> Vec<Prefix> {
        let Some(r) = self.routers.get_mut(router) else {
            return Vec::new();
        };
        let touched: Vec<Prefix> = self.vips.iter().copied().collect();
        let before: Vec<_> = touched.iter().map(|v| r.paths(v)).collect();
        r.assumed = true;
        changed(r, touched, before)
    }

    /// The session ended (TCP closed, Termination, decode error): the
    /// router's view is stale (unknown) but kept for detail until `forget`.
    pub fn session_down(&mut self, router: &str) {
        if let Some(r) = self.routers.get_mut(router) {
            r.down = true;
        }
    }

    /// Drops everything about `router`.
    pub fn forget(&mut self, router: &str) {
        self.routers.remove(router);
    }

    /// Paths the router holds for a configured VIP (see the module doc for
    /// which RIB counts); `None` = unknown: no such router, session down, or
    /// the VIP's family not synced yet.
    pub fn paths(&self, router: &str, prefix: &Prefix) -> Option<u32> {
        self.routers.get(router)?.paths(prefix)
    }

    /// Per-peer detail for `/status`: which peers hold a path for the VIP,
    /// from which RIB, stale or not (kept after the session went down).
    pub fn detail(&self, router: &str, prefix: &Prefix) -> Vec<PathDetail> {
        let Some(r) = self.routers.get(router) else {
            return Vec::new();
        };
        let Some(held) = r.paths.get(prefix) else {
            return Vec::new();
        };
        let mut by_peer: BTreeMap<(Rib, PeerKey), Vec<u32>> = BTreeMap::new();
        for (rib, peer, id) in held {
            let ids = by_peer.entry((*rib, *peer)).or_default();
            if let Some(id) = id {
                ids.push(*id);
            }
        }
        by_peer
            .into_iter()
            .map(|((rib, peer), path_ids)| {
                let info = r.peers.get(&peer).copied().unwrap_or(PeerInfo {
                    asn: 0,
                    bgp_id: Ipv4Addr::UNSPECIFIED,
                    up: false,
                });
                PathDetail {
                    peer,
                    asn: info.asn,
                    bgp_id: info.bgp_id,
                    up: info.up && !r.down,
                    rib,
                    path_ids,
                }
            })
            .collect()
    }

    /// Every router the view knows, with its state.
    pub fn routers(&self) -> impl Iterator<Item = (&str, RouterState)> {
        self.routers.iter().map(|(name, r)| {
            let state = if r.down {
                RouterState::Stale
            } else if r.assumed || self.families.iter().all(|f| r.synced.contains(f)) {
                RouterState::Synced
            } else {
                RouterState::Syncing
            };
            (name.as_str(), state)
        })
    }

    /// The RIB whose paths a router's counts come from, once it sent any.
    pub fn counted_rib(&self, router: &str) -> Option<Rib> {
        self.routers.get(router)?.counted_rib()
    }
}

/// Removes every path of `peer`, in every RIB; returns the VIPs whose count changed.
fn drop_peer(r: &mut Router, peer: &PeerKey) -> Vec<Prefix> {
    let touched: Vec<Prefix> = r
        .paths
        .iter()
        .filter(|(_, held)| held.iter().any(|(_, p, _)| p == peer))
        .map(|(v, _)| *v)
        .collect();
    let before: Vec<_> = touched.iter().map(|v| r.paths(v)).collect();
    for v in &touched {
        if let Some(held) = r.paths.get_mut(v) {
            held.retain(|(_, p, _)| p != peer);
        }
    }
    changed(r, touched, before)
}

fn changed(r: &Router, touched: Vec<Prefix>, before: Vec<Option<u32>>) -> Vec<Prefix> {
    touched
        .into_iter()
        .zip(before)
        .filter(|(v, b)| r.paths(v) != *b)
        .map(|(v, _)| v)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
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
            treat_as_withdraw: None,
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
            treat_as_withdraw: None,
        }
    }
    fn eor(p: PeerKey, rib: Rib, family: Family) -> Message {
        eor_of(p, rib, EndOfRib::Unicast(family))
    }
    fn up(p: PeerKey) -> Message {
        Message::PeerUp {
            peer: p,
            asn: 64512,
            bgp_id: Ipv4Addr::new(198, 18, 0, 2),
            loc_rib: false,
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

    /// Two peers with the VIP, synced by an IPv4 End-of-RIB.
    fn synced_two_paths() -> View {
        let mut v = opened(&[1, 2]);
        announce(&mut v, peer(1), Rib::PostPolicy, vip());
        announce(&mut v, peer(2), Rib::PostPolicy, vip());
        v.apply("r1", &eor(peer(1), Rib::PostPolicy, Family::Ipv4));
        v
    }

    #[test]
    fn unknown_until_end_of_rib_then_counts_peers() {
        let mut v = opened(&[1, 2]);
        assert_eq!(state(&v, "r1"), Some(RouterState::Syncing));
        announce(&mut v, peer(1), Rib::PostPolicy, vip());
        announce(&mut v, peer(2), Rib::PostPolicy, vip());
        assert_eq!(v.paths("r1", &vip()), None);
        let changed = v.apply("r1", &eor(peer(1), Rib::PostPolicy, Family::Ipv4));
        assert_eq!(changed, vec![vip()]);
        assert_eq!(v.paths("r1", &vip()), Some(2));
        assert_eq!(v.paths("r1", &vip6()), None);
        assert_eq!(state(&v, "r1"), Some(RouterState::Syncing));
        v.apply("r1", &eor(peer(1), Rib::PostPolicy, Family::Ipv6));
        assert_eq!(v.paths("r1", &vip6()), Some(0));
        assert_eq!(state(&v, "r1"), Some(RouterState::Synced));
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
        assert_eq!(v.counted_rib("r1"), Some(Rib::LocRib));
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
        assert_eq!(v.counted_rib("r1"), Some(Rib::PostPolicy));
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
    fn assume_synced_is_the_fallback_without_end_of_rib() {
        let mut v = opened(&[1]);
        announce(&mut v, peer(1), Rib::PostPolicy, vip());
        assert_eq!(v.paths("r1", &vip()), None);
        assert_eq!(v.assume_synced("r1"), vec![vip(), vip6()]);
        assert_eq!(v.paths("r1", &vip()), Some(1));
        assert_eq!(state(&v, "r1"), Some(RouterState::Synced));
        assert!(v.assume_synced("unknown-router").is_empty());
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
        };
        assert!(v.apply("r1", &loc).is_empty());
        assert_eq!(v.paths("r1", &vip()), None);
        let down = Message::PeerDown {
            peer: peer(1),
            reason: "not established".into(),
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
}
