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
//! - Synced rule: after [`View::session_up`] the router is `Syncing` and
//!   every count unknown; a family (IPv4, IPv6) becomes known on the first
//!   End-of-RIB of that family, which FRR sends, per monitored RIB and peer,
//!   once its initial dump of the family is complete. A router that never
//!   sends End-of-RIB (RFC 7854 does not require it) is declared synced by
//!   the station calling [`View::assume_synced`] after its own timeout. The
//!   router is `Synced` once every family of the configured VIPs is.
//! - [`View::session_down`] makes the router `Stale`: counts unknown, paths
//!   kept for `/status` detail until [`View::forget`] or the next
//!   `session_up`, which starts from nothing.
//! - A Peer Down removes every path of that peer, in every RIB.

use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

use super::message::{Family, Message, Path, PeerKey, Rib};
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
        let n = if rib == Rib::LocRib {
            held.iter().filter(|(r, _, _)| *r == rib).count()
        } else {
            held.iter()
                .filter(|(r, _, _)| *r == rib)
                .map(|(_, p, _)| p)
                .collect::<BTreeSet<_>>()
                .len()
        };
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
        match msg {
            Message::PeerUp { peer, asn, bgp_id } => {
                r.peers.insert(
                    *peer,
                    PeerInfo {
                        asn: *asn,
                        bgp_id: *bgp_id,
                        up: true,
                    },
                );
                Vec::new()
            }
            Message::PeerDown { peer, .. } => {
                if let Some(p) = r.peers.get_mut(peer) {
                    p.up = false;
                }
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
            Message::Route {
                peer,
                asn,
                bgp_id,
                rib,
                announced,
                withdrawn,
                end_of_rib,
            } => {
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
                    r.synced.insert(*f);
                }
                changed(r, touched, before)
            }
            Message::Initiation { .. }
            | Message::Stats { .. }
            | Message::Termination { .. }
            | Message::Ignored { .. } => Vec::new(),
        }
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

fn changed(r: &Router, touched: Vec<Prefix>, before: Vec<Option<u32>>) -> Vec<Prefix> {
    touched
        .into_iter()
        .zip(before)
        .filter(|(v, b)| r.paths(v) != *b)
        .map(|(v, _)| v)
        .collect()
}
