//! One router as the view holds it: its BGP peers and what each owes
//! (the initial dump's End-of-RIBs), its phase (opening, dumping, live),
//! the RIBs it exports per family, its stale paths under graceful restart
//! and their deadlines, and its paths per VIP and RIB ([`Held`]); and one
//! decoded message applied to it ([`apply`]).

use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

use super::held::Held;
use super::{Counters, RouterState, STALE_PATH_MS, Scope, retained};
use crate::bmp::message::{EndOfRib, GracefulRestart, Message, Path, PeerKey, Rib};
use crate::model::{Family, Millis, Prefix};

/// One BGP peer of a router (or its Loc-RIB), as its messages say.
#[derive(Debug, Clone)]
pub(super) struct PeerInfo {
    pub(super) asn: u32,
    pub(super) bgp_id: Ipv4Addr,
    pub(super) up: bool,
    /// The families it owes an End-of-RIB for (only while up).
    pub(super) owes: BTreeSet<Family>,
    /// Whether it has been told what it owes: at its BGP Peer Up, else
    /// (the Loc-RIB, a peer known only by its routes) at its first route
    /// during the dump.
    pub(super) claimed: bool,
    /// The families whose End-of-RIB it sent (this session).
    pub(super) dumped: BTreeSet<Family>,
    /// Graceful restart as its last session negotiated it (its Peer Up).
    pub(super) gr: Option<GracefulRestart>,
    /// The families whose paths the router keeps as stale for it.
    pub(super) stale: BTreeSet<Family>,
    /// When those stale paths end, while any family is stale.
    pub(super) stale_until: Option<Millis>,
}

/// Where a router's session is in its initial dump.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    /// Initiation and the opening Peer Ups: BGP sessions' Peer Ups seen.
    Opening(usize),
    /// The initial dump: some peer owes an End-of-RIB.
    Dumping,
    /// Dumped: new peers are live.
    Live,
}

/// One router: its peers, its sync and stale state, its paths.
#[derive(Debug, Clone)]
pub(super) struct Router {
    pub(super) down: bool,
    pub(super) phase: Phase,
    /// The RIBs the router exports, per family.
    pub(super) ribs: BTreeSet<(Family, Rib)>,
    pub(super) peers: BTreeMap<PeerKey, PeerInfo>,
    /// Per family: the peers that are up and owe its End-of-RIB.
    pub(super) owing: BTreeMap<Family, usize>,
    /// When the router is `Synced` whatever its peers still owe: its
    /// session's first message plus the patience (a deadline only while
    /// it is `Syncing`).
    pub(super) sync_by: Millis,
    /// (end, peer) of every peer with stale paths.
    pub(super) stale_deadlines: BTreeSet<(Millis, PeerKey)>,
    /// Per VIP, per RIB.
    pub(super) paths: BTreeMap<Prefix, BTreeMap<Rib, Held>>,
}

impl Router {
    /// A router whose session started at `since` (its first message).
    pub(super) fn new(since: Millis, patience: Millis) -> Router {
        Router {
            down: false,
            phase: Phase::Opening(0),
            ribs: BTreeSet::new(),
            peers: BTreeMap::new(),
            owing: BTreeMap::new(),
            sync_by: since.saturating_add(patience),
            stale_deadlines: BTreeSet::new(),
            paths: BTreeMap::new(),
        }
    }

    /// The earliest deadline: the sync fallback while `Syncing`, or stale
    /// paths ending.
    pub(super) fn next_deadline(&self) -> Option<Millis> {
        let a = (self.state() == RouterState::Syncing).then_some(self.sync_by);
        let b = self.stale_deadlines.first().map(|(t, _)| *t);
        match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    pub(super) fn state(&self) -> RouterState {
        if self.down {
            RouterState::Stale
        } else if self.phase == Phase::Live {
            RouterState::Synced
        } else {
            RouterState::Syncing
        }
    }

    /// The RIB counted for a family: post-policy, else pre-policy, else Loc-RIB.
    pub(super) fn counted_rib(&self, family: Family) -> Option<Rib> {
        [Rib::PostPolicy, Rib::PrePolicy, Rib::LocRib]
            .into_iter()
            .find(|r| self.ribs.contains(&(family, *r)))
    }

    pub(super) fn known(&self, prefix: &Prefix) -> bool {
        let family = Family::of(prefix);
        !self.down
            && match self.phase {
                Phase::Opening(_) => false,
                Phase::Live => true,
                Phase::Dumping => self.owing.get(&family).copied().unwrap_or(0) == 0,
            }
    }

    /// (paths, stale paths) of the counted RIB.
    pub(super) fn count(&self, prefix: &Prefix) -> (u32, u32) {
        let Some(rib) = self.counted_rib(Family::of(prefix)) else {
            return (0, 0);
        };
        let Some(held) = self.paths.get(prefix).and_then(|r| r.get(&rib)) else {
            return (0, 0);
        };
        let (n, stale) = held.counts(rib);
        let n32 = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        (n32(n), n32(stale))
    }

    pub(super) fn paths(&self, prefix: &Prefix) -> Option<u32> {
        self.known(prefix).then(|| self.count(prefix).0)
    }

    pub(super) fn stale(&self, prefix: &Prefix) -> Option<u32> {
        self.known(prefix).then(|| self.count(prefix).1)
    }

    /// `peer` owes an End-of-RIB for each of `families` (until it sends
    /// them, goes down, or the router's `sync_by`).
    pub(super) fn owe(&mut self, peer: PeerKey, families: &BTreeSet<Family>) {
        let Some(p) = self.peers.get_mut(&peer) else {
            return;
        };
        if !p.up {
            return;
        }
        for f in families.difference(&p.dumped) {
            if p.owes.insert(*f) {
                *self.owing.entry(*f).or_default() += 1;
            }
        }
    }

    /// `peer` no longer owes `family` (`None`: anything).
    pub(super) fn paid(&mut self, peer: &PeerKey, family: Option<Family>) {
        let Some(p) = self.peers.get_mut(peer) else {
            return;
        };
        if let Some(f) = family {
            p.dumped.insert(f);
        }
        let paid: Vec<Family> = match family {
            Some(f) => p.owes.take(&f).into_iter().collect(),
            None => std::mem::take(&mut p.owes).into_iter().collect(),
        };
        for f in paid {
            if let Some(n) = self.owing.get_mut(&f) {
                *n = n.saturating_sub(1);
            }
        }
    }

    /// The peers that owe an End-of-RIB.
    pub(super) fn owing_peers(&self) -> Vec<PeerKey> {
        self.peers
            .iter()
            .filter(|(_, p)| !p.owes.is_empty())
            .map(|(k, _)| *k)
            .collect()
    }

    /// The dump is over when nobody owes anything.
    pub(super) fn settle(&mut self) {
        if self.phase == Phase::Dumping && self.owing.values().all(|n| *n == 0) {
            self.phase = Phase::Live;
        }
    }

    /// Every peer's debt forgiven: the router is live.
    pub(super) fn go_live(&mut self) {
        for k in self.owing_peers() {
            self.paid(&k, None);
        }
        self.phase = Phase::Live;
    }

    /// Removes every path of `peer`, in every RIB, and its stale state.
    pub(super) fn drop_peer(&mut self, peer: &PeerKey) {
        self.retain(peer, &BTreeSet::new(), None);
    }

    /// Keeps `peer`'s paths of `families` as stale until `until`, and
    /// removes its others, in every RIB.
    pub(super) fn retain(
        &mut self,
        peer: &PeerKey,
        families: &BTreeSet<Family>,
        until: Option<Millis>,
    ) {
        for (vip, ribs) in &mut self.paths {
            let keep = families.contains(&Family::of(vip));
            for held in ribs.values_mut() {
                if keep {
                    held.mark_stale(peer);
                } else {
                    held.remove_peer(peer, true);
                }
            }
        }
        let Some(p) = self.peers.get_mut(peer) else {
            return;
        };
        p.stale = families.clone();
        let until = until.filter(|_| !families.is_empty());
        if let Some(t) = std::mem::replace(&mut p.stale_until, until) {
            self.stale_deadlines.remove(&(t, *peer));
        }
        if let Some(t) = until {
            self.stale_deadlines.insert((t, *peer));
        }
    }

    /// Removes `peer`'s stale paths of `family` in `rib` (its End-of-RIB
    /// there: what was not re-sent is gone).
    pub(super) fn end_stale(&mut self, peer: &PeerKey, family: Family, rib: Rib) {
        for (vip, ribs) in &mut self.paths {
            if Family::of(vip) == family
                && let Some(held) = ribs.get_mut(&rib)
            {
                held.remove_peer(peer, false);
            }
        }
    }

    /// Removes every stale path of `peer` (its time passed); its fresh
    /// paths stay.
    pub(super) fn expire_stale(&mut self, peer: &PeerKey) {
        for ribs in self.paths.values_mut() {
            for held in ribs.values_mut() {
                held.remove_peer(peer, false);
            }
        }
        if let Some(p) = self.peers.get_mut(peer) {
            p.stale.clear();
            if let Some(t) = p.stale_until.take() {
                self.stale_deadlines.remove(&(t, *peer));
            }
        }
    }
}

/// The peers whose deadline in `deadlines` is at or before `now`.
pub(super) fn due_peers(deadlines: &BTreeSet<(Millis, PeerKey)>, now: Millis) -> Vec<PeerKey> {
    deadlines
        .iter()
        .take_while(|(t, _)| *t <= now)
        .map(|(_, p)| *p)
        .collect()
}

/// Per VIP: (paths, stale paths), `None` when unknown.
pub(super) type Snapshot = Vec<(Prefix, Option<(u32, u32)>)>;

/// Every VIP's counts at `r` now, to compare with after a change.
pub(super) fn snapshot(r: &Router, vips: &BTreeSet<Prefix>) -> Snapshot {
    vips.iter()
        .map(|v| (*v, r.known(v).then(|| r.count(v))))
        .collect()
}

/// The VIPs whose counts at `r` differ from `before`.
pub(super) fn changed(r: &Router, before: Snapshot) -> Vec<Prefix> {
    before
        .into_iter()
        .filter(|(v, b)| r.known(v).then(|| r.count(v)) != *b)
        .map(|(v, _)| v)
        .collect()
}

/// A peer's entry, made if the router has room: `None` when refused.
pub(super) fn peer_entry<'a>(
    r: &'a mut Router,
    scope: &Scope,
    peer: PeerKey,
    asn: u32,
    bgp_id: Ipv4Addr,
    counters: &mut Counters,
) -> Option<&'a mut PeerInfo> {
    if !r.peers.contains_key(&peer) && r.peers.len() >= scope.limits.peers_per_router {
        counters.peers_refused += 1;
        return None;
    }
    Some(r.peers.entry(peer).or_insert(PeerInfo {
        asn,
        bgp_id,
        up: true,
        owes: BTreeSet::new(),
        claimed: false,
        dumped: BTreeSet::new(),
        gr: None,
        stale: BTreeSet::new(),
        stale_until: None,
    }))
}

/// Applies one decoded message to `r`; returns the VIPs whose count, stale
/// count or known-ness changed.
pub(super) fn apply(
    r: &mut Router,
    scope: &Scope,
    msg: &Message,
    now: Millis,
    counters: &mut Counters,
) -> Vec<Prefix> {
    // Every VIP's count before, when the message may change known-ness
    // (few VIPs); the paths' own VIPs otherwise.
    let before = snapshot(r, &scope.vips);
    if let Phase::Opening(ups) = r.phase {
        match msg {
            Message::Initiation { .. } | Message::PeerUp { loc_rib: true, .. } => {}
            Message::PeerUp { .. } => r.phase = Phase::Opening(ups + 1),
            _ if ups == 0 => r.go_live(),
            _ => r.phase = Phase::Dumping,
        }
    }
    let dumping = r.phase != Phase::Live;
    match msg {
        Message::PeerUp {
            peer,
            asn,
            bgp_id,
            families,
            loc_rib,
            graceful_restart,
        } => {
            if let Some(p) = peer_entry(r, scope, *peer, *asn, *bgp_id, counters) {
                p.asn = *asn;
                p.bgp_id = *bgp_id;
                p.up = true;
                p.dumped.clear();
                // The Loc-RIB's Peer Up comes whether or not the Loc-RIB
                // is monitored (FRR 10.x): it owes once it sends routes.
                p.claimed = !*loc_rib;
                // Stale paths of a family the new session preserves (F
                // bit) wait for its End-of-RIB; the rest go at once (RFC
                // 4724 section 4.2, FRR's bgp_establish).
                let keep: BTreeSet<Family> = graceful_restart
                    .as_ref()
                    .map(|gr| {
                        gr.preserved
                            .iter()
                            .copied()
                            .filter(|f| p.stale.contains(f))
                            .collect()
                    })
                    .unwrap_or_default();
                p.gr = graceful_restart.clone();
                // A new BGP session sends its routes again: whatever an
                // earlier session left (a Peer Down lost) is not held.
                r.retain(peer, &keep, Some(now.saturating_add(STALE_PATH_MS)));
                r.paid(peer, None);
                if dumping && !*loc_rib {
                    // Only what the session carries: a BGP session per
                    // family (FRR's IPv4 and IPv6 neighbours) owes one.
                    let owed: BTreeSet<Family> = families
                        .iter()
                        .copied()
                        .filter(|f| scope.families.contains(f))
                        .collect();
                    r.owe(*peer, &owed);
                }
            }
        }
        Message::PeerDown {
            peer,
            reason_code,
            notification,
            ..
        } => {
            r.paid(peer, None);
            let (was_up, gr) = match r.peers.get_mut(peer) {
                Some(p) => (std::mem::replace(&mut p.up, false), p.gr.clone()),
                None => (false, None),
            };
            match gr.filter(|gr| retained(gr, *reason_code, *notification)) {
                // Graceful restart: the router keeps forwarding to the
                // peer's paths of the families it listed, as stale.
                Some(gr) if was_up => {
                    let keep: BTreeSet<Family> = gr
                        .families
                        .iter()
                        .copied()
                        .filter(|f| scope.families.contains(f))
                        .collect();
                    let until = now.saturating_add(Millis::from(gr.restart_time) * 1000);
                    r.retain(peer, &keep, Some(until));
                }
                // A repeated Peer Down: what is retained stays, its end unmoved.
                Some(_) => {}
                None => r.drop_peer(peer),
            }
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
            // An End-of-RIB of a family not decoded (VPN, EVPN, ...) says
            // nothing about the unicast ones; an UPDATE's anomalies change
            // nothing here (its paths are the router's).
            let end_of_rib = match end_of_rib {
                Some(EndOfRib::Unicast(f)) => Some(*f),
                Some(EndOfRib::Other { .. }) | None => None,
            };
            let Some(p) = peer_entry(r, scope, *peer, *asn, *bgp_id, counters) else {
                return changed(r, before);
            };
            let claim = !p.claimed;
            p.claimed = true;
            if claim && dumping {
                // A peer the router reports only by its routes (and the
                // Loc-RIB once it sends any) dumps too.
                r.owe(*peer, &scope.families);
            }
            for fam in announced
                .iter()
                .chain(withdrawn)
                .map(|p| Family::of(&p.prefix))
                .chain(end_of_rib)
            {
                r.ribs.insert((fam, *rib));
            }
            for Path { prefix, path_id } in withdrawn {
                if let Some(held) = r.paths.get_mut(prefix).and_then(|m| m.get_mut(rib)) {
                    held.remove(peer, *path_id);
                }
            }
            for Path { prefix, path_id } in announced {
                if !scope.vips.contains(prefix) {
                    continue;
                }
                let ribs = r.paths.entry(*prefix).or_default();
                let all: usize = ribs.values().map(|h| h.total).sum();
                let held = ribs.entry(*rib).or_default();
                let fresh = !held
                    .per_peer
                    .get(peer)
                    .is_some_and(|ids| ids.ids.contains_key(path_id));
                if fresh && all >= scope.limits.paths_per_vip {
                    counters.paths_refused += 1;
                    continue;
                }
                // A stale path re-sent is fresh again.
                held.insert(peer, *path_id);
            }
            if let Some(f) = end_of_rib {
                r.paid(peer, Some(f));
                // The re-established session's End-of-RIB: what it did not
                // re-send is gone (RFC 4724 section 4.2).
                // Per RIB: another RIB's stale paths wait for its own
                // End-of-RIB, or the stale-path time.
                if let Some(p) = r.peers.get_mut(peer)
                    && p.up
                    && (p.stale.remove(&f) || p.stale_until.is_some())
                {
                    r.end_stale(peer, f, *rib);
                }
            }
        }
        Message::Initiation { .. }
        | Message::Stats { .. }
        | Message::Termination { .. }
        | Message::Ignored { .. } => {}
    }
    r.settle();
    changed(r, before)
}
