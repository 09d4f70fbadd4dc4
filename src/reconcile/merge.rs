//! Merging a full view into the VIP map: a kernel dump
//! ([`Event::KernelSynced`](super::Event::KernelSynced)) or zebra's
//! redistribution at the end of its dump
//! ([`Event::ZebraSynced`](super::Event::ZebraSynced)) holds every key of
//! its table at once. [`merge_vips`] walks the map and the view together in
//! key order, and [`extend_packed`] adds new keys so that the map's nodes
//! stay full.
//!
//! Contract: memory and order, no decision: what a VIP absent from, or
//! present in, the view becomes is the caller's closures'. Known VIPs are
//! updated in place, new ones added; none is removed. The cost is one pass
//! (two when there are new keys), never the map held twice (100 000 VIPs
//! at a node's start: docs/PERFORMANCE.md).

use std::collections::BTreeMap;

use super::vip::Vip;
use crate::model::{Prefix, TableId};

/// Merges a full view into the VIPs: `fresh` in ascending key order without
/// duplicates; a VIP it lacks gets `absent`, one it holds `present` with its
/// value, and a key no VIP has becomes the VIP `new` makes. Known VIPs are
/// updated in place (a timer resync of an unchanged table allocates
/// nothing); only when there are new keys is the map rebuilt, in one
/// ascending pass ([`extend_packed`]): a startup's 100 000 new VIPs land
/// in full nodes, and the old nodes are freed as the pass goes, so the map
/// is not held twice.
pub(super) fn merge_vips<T>(
    vips: &mut BTreeMap<(TableId, Prefix), Vip>,
    fresh: impl Iterator<Item = ((TableId, Prefix), T)> + Clone,
    mut absent: impl FnMut(&(TableId, Prefix), &mut Vip),
    mut present: impl FnMut(&mut Vip, T),
    mut new: impl FnMut(T) -> Vip,
) {
    let mut new_keys = 0usize;
    let mut f = fresh.clone().peekable();
    for (k, v) in vips.iter_mut() {
        while f.next_if(|(fk, _)| fk < k).is_some() {
            new_keys += 1;
        }
        match f.next_if(|(fk, _)| fk == k) {
            Some((_, t)) => present(v, t),
            None => absent(k, v),
        }
    }
    new_keys += f.count();
    if new_keys == 0 {
        return;
    }
    let old = std::mem::take(vips);
    let count = old.len() + new_keys;
    let mut old = old.into_iter().peekable();
    let mut fresh = fresh.peekable();
    let merged = std::iter::from_fn(|| {
        let order = match (old.peek(), fresh.peek()) {
            (None, None) => return None,
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (Some((k, _)), Some((f, _))) => k.cmp(f),
        };
        match order {
            std::cmp::Ordering::Less => old.next(),
            // Updated by the pass above.
            std::cmp::Ordering::Equal => {
                fresh.next();
                old.next()
            }
            std::cmp::Ordering::Greater => fresh.next().map(|(k, t)| (k, new(t))),
        }
    });
    extend_packed(vips, merged, count);
}

/// Adds `count` entries, in ascending key order and none of them in `map`,
/// keeping the map's nodes full. Inserting keys in ascending order splits
/// each full node in two and leaves every node half full: twice the bytes
/// (a startup dump of 100 000 VIPs is exactly that). `BTreeMap::append` of
/// two non-empty maps builds a new tree of full nodes from their merged
/// sequences instead, freeing the old nodes as it goes; it runs once per
/// batch of an eighth of the entries, so the batch (itself half full) stays
/// small beside the map, for a handful of linear rebuilds.
pub(super) fn extend_packed<K: Ord, V>(
    map: &mut BTreeMap<K, V>,
    new: impl Iterator<Item = (K, V)>,
    count: usize,
) {
    let batch_len = (count / PACK_BATCHES).max(PACK_MIN);
    let mut batch = BTreeMap::new();
    for (k, v) in new {
        batch.insert(k, v);
        if batch.len() >= batch_len {
            map.append(&mut batch);
        }
    }
    map.append(&mut batch);
}

/// Rebuilds `map` in full nodes ([`extend_packed`] from its own entries):
/// its old nodes are freed as the rebuild takes their entries, so the map
/// is never held twice.
pub(super) fn repack<K: Ord, V>(map: &mut BTreeMap<K, V>) {
    let old = std::mem::take(map);
    let count = old.len();
    extend_packed(map, old.into_iter(), count);
}

/// Batches per [`extend_packed`]: more rebuilds for a smaller batch.
const PACK_BATCHES: usize = 8;

/// Below this many entries a batch is not worth a rebuild of the map.
const PACK_MIN: usize = 1_024;

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::net::{IpAddr, Ipv4Addr};

    use super::*;
    use crate::reconcile::fixture::T;

    fn key(i: u32) -> (TableId, Prefix) {
        (T, Prefix::host(IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + i))))
    }

    /// VIPs at the keys `at`, first seen at 0, none redistributed.
    fn vips(at: impl IntoIterator<Item = u32>) -> BTreeMap<(TableId, Prefix), Vip> {
        at.into_iter().map(|i| (key(i), Vip::new(0))).collect()
    }

    /// Merges `fresh` as zebra's redistribution: absent VIPs are not
    /// redistributed, present and new ones are; counts the new ones.
    fn redistributed(map: &mut BTreeMap<(TableId, Prefix), Vip>, fresh: &[u32]) -> usize {
        let made = Cell::new(0);
        merge_vips(
            map,
            fresh.iter().map(|i| (key(*i), true)),
            |_, v| v.zebra = false,
            |v, z| v.zebra = z,
            |z| {
                made.set(made.get() + 1);
                let mut v = Vip::new(5);
                v.zebra = z;
                v
            },
        );
        made.get()
    }

    #[test]
    fn known_vips_are_updated_in_place_and_new_ones_added_in_order() {
        let mut map = vips([1, 3]);
        map.get_mut(&key(1)).expect("vip").zebra = true;
        assert_eq!(redistributed(&mut map, &[2, 3]), 1);
        let keys: Vec<_> = map.keys().copied().collect();
        assert_eq!(keys, [key(1), key(2), key(3)]);
        assert!(!map[&key(1)].zebra, "absent from the view");
        assert!(map[&key(2)].zebra && map[&key(3)].zebra);
        assert_eq!(
            (map[&key(2)].since, map[&key(3)].since),
            (5, 0),
            "new, known"
        );
    }

    #[test]
    fn a_repacked_map_keeps_every_vip_and_its_order() {
        let mut map = vips(0..5_000);
        map.get_mut(&key(7)).expect("vip").zebra = true;
        repack(&mut map);
        assert_eq!(map.len(), 5_000);
        assert!(map.keys().copied().eq((0..5_000).map(key)));
        assert!(map[&key(7)].zebra && !map[&key(8)].zebra);
    }

    #[test]
    fn a_view_of_known_keys_only_makes_no_vip() {
        let mut map = vips(0..100);
        let fresh: Vec<u32> = (0..100).step_by(2).collect();
        assert_eq!(redistributed(&mut map, &fresh), 0);
        assert_eq!(map.len(), 100);
        assert_eq!(map.values().filter(|v| v.zebra).count(), 50);
        assert!(map[&key(0)].zebra && !map[&key(1)].zebra);
    }

    #[test]
    fn a_dump_of_new_keys_around_known_ones_keeps_every_vip_once() {
        let mut map = vips((0..1_000).map(|i| i * 10));
        let fresh: Vec<u32> = (0..5_000).map(|i| i * 3).collect();
        let known = fresh
            .iter()
            .filter(|i| **i % 10 == 0 && **i < 10_000)
            .count();
        assert_eq!(redistributed(&mut map, &fresh), 5_000 - known);
        assert_eq!(map.len(), 1_000 + 5_000 - known);
        assert!(map.keys().is_sorted());
        assert_eq!(map.values().filter(|v| v.zebra).count(), 5_000);
        assert!(!map[&key(10)].zebra, "known, absent from the view");
    }
}
