//! One RIB's paths for one VIP at one router, counted as they change:
//! per peer its add-path ids, stale or fresh, and the totals the view
//! reads (paths, stale paths, peers whose every path is stale) kept true
//! on every change, never recounted.

use std::collections::BTreeMap;

use crate::bmp::message::{PeerKey, Rib};

/// One peer's paths in one RIB for one VIP.
#[derive(Debug, Clone, Default)]
pub(super) struct Ids {
    /// Per add-path id (`None` without add-path): whether it is stale.
    pub(super) ids: BTreeMap<Option<u32>, bool>,
    /// How many are stale.
    pub(super) stale: usize,
}

impl Ids {
    /// Every path is stale: the peer counts as a stale path (Adj-RIB-In).
    pub(super) fn all_stale(&self) -> bool {
        !self.ids.is_empty() && self.stale == self.ids.len()
    }
}

/// One RIB's paths for one VIP at one router, counted as they change.
#[derive(Debug, Clone, Default)]
pub(super) struct Held {
    /// Per peer, its paths.
    pub(super) per_peer: BTreeMap<PeerKey, Ids>,
    /// Every path, over the peers.
    pub(super) total: usize,
    /// Every stale path, over the peers.
    pub(super) stale: usize,
    /// The peers whose every path is stale.
    pub(super) stale_peers: usize,
}

impl Held {
    /// Runs `f` on `peer`'s paths keeping the counts true; an entry left
    /// empty is removed. Returns what `f` returns.
    fn with_peer<T>(&mut self, peer: &PeerKey, f: impl FnOnce(&mut Ids) -> T) -> T {
        let ids = self.per_peer.entry(*peer).or_default();
        let before = (ids.ids.len(), ids.stale, ids.all_stale());
        let out = f(ids);
        let after = (ids.ids.len(), ids.stale, ids.all_stale());
        if ids.ids.is_empty() {
            self.per_peer.remove(peer);
        }
        self.total = (self.total + after.0).saturating_sub(before.0);
        self.stale = (self.stale + after.1).saturating_sub(before.1);
        self.stale_peers =
            (self.stale_peers + usize::from(after.2)).saturating_sub(usize::from(before.2));
        out
    }

    /// Adds a fresh path (a stale one becomes fresh: re-sent); true when
    /// it was not held.
    pub(super) fn insert(&mut self, peer: &PeerKey, id: Option<u32>) -> bool {
        self.with_peer(peer, |ids| match ids.ids.insert(id, false) {
            None => true,
            Some(was_stale) => {
                ids.stale -= usize::from(was_stale);
                false
            }
        })
    }

    /// Removes a path; true when it was held.
    pub(super) fn remove(&mut self, peer: &PeerKey, id: Option<u32>) -> bool {
        if !self.per_peer.contains_key(peer) {
            return false;
        }
        self.with_peer(peer, |ids| match ids.ids.remove(&id) {
            None => false,
            Some(was_stale) => {
                ids.stale -= usize::from(was_stale);
                true
            }
        })
    }

    /// Marks every path of `peer` stale; true when it holds any.
    pub(super) fn mark_stale(&mut self, peer: &PeerKey) -> bool {
        if !self.per_peer.contains_key(peer) {
            return false;
        }
        self.with_peer(peer, |ids| {
            ids.ids.values_mut().for_each(|s| *s = true);
            ids.stale = ids.ids.len();
        });
        true
    }

    /// Removes `peer`'s stale paths (`all`: every path); true when any went.
    pub(super) fn remove_peer(&mut self, peer: &PeerKey, all: bool) -> bool {
        if !self.per_peer.contains_key(peer) {
            return false;
        }
        self.with_peer(peer, |ids| {
            let before = ids.ids.len();
            if all {
                ids.ids.clear();
            } else {
                ids.ids.retain(|_, stale| !*stale);
            }
            ids.stale = ids.ids.values().filter(|s| **s).count();
            ids.ids.len() != before
        })
    }

    /// What this RIB counts for the VIP: (paths, stale paths).
    pub(super) fn counts(&self, rib: Rib) -> (usize, usize) {
        if rib == Rib::LocRib {
            (self.total, self.stale)
        } else {
            (self.per_peer.len(), self.stale_peers)
        }
    }
}
