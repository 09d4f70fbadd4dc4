//! The core's deadlines ([`Wakeups`]): the VIPs to re-evaluate at a time.
//!
//! Contract: a VIP may be asked for at one time again and again (every
//! whole-view walk asks); it is held about once and taken once, in the
//! order a set of (time, VIP) pairs would give.

use std::collections::BTreeMap;

use super::vocab::Millis;
use crate::model::{Prefix, TableId};

/// A deadline's list shorter than this grows without folding its repeats
/// (sorting a handful is not worth it).
const FOLD_FROM: usize = 16;

/// Deadlines: VIPs to re-evaluate at a time. A whole-view event can give
/// every VIP the same deadline (100 000 at a node's start), so the VIPs of
/// one time share a list (24 bytes a VIP, where a set of (time, VIP) pairs
/// took ~60 with its half-full nodes). A VIP may be listed twice for one
/// time; [`Wakeups::take_due`] folds that, in the order a set of (time,
/// VIP) pairs would give.
#[derive(Debug, Clone, Default)]
pub(super) struct Wakeups(BTreeMap<Millis, Vec<(TableId, Prefix)>>);

impl Wakeups {
    /// Re-evaluate `key` at `at`. A VIP evaluated again before its
    /// deadline asks for the same one again (every whole-view walk does),
    /// so a full list folds its repeats before it grows: it holds each VIP
    /// at most about twice. (Unfolded, 100 000 VIPs deleted at once asked
    /// for their forgetting ~14 times each before it came: one 33 MB
    /// list, the deletion path's peak, docs/PERFORMANCE.md §2.5.)
    pub(super) fn insert(&mut self, at: Millis, key: (TableId, Prefix)) {
        let keys = self.0.entry(at).or_default();
        if keys.len() == keys.capacity() && keys.len() >= FOLD_FROM {
            keys.sort_unstable();
            keys.dedup();
        }
        keys.push(key);
    }

    /// Takes the VIPs due at `now`: by time, then by VIP, each time's
    /// duplicates folded, and a VIP due at two consecutive entries once.
    pub(super) fn take_due(&mut self, now: Millis) -> Vec<(TableId, Prefix)> {
        let later = self.0.split_off(&now.saturating_add(1));
        let due = std::mem::replace(&mut self.0, later);
        let mut keys = Vec::new();
        for (_, mut at) in due {
            at.sort_unstable();
            at.dedup();
            // One time due (the common case, and a whole view's 100 000
            // deadlines): its list is the answer, not copied.
            if keys.is_empty() {
                keys = at;
            } else {
                keys.append(&mut at);
            }
        }
        keys.dedup();
        keys
    }

    /// Forgets the deadlines up to `now` (their VIPs were just evaluated).
    pub(super) fn drop_past(&mut self, now: Millis) {
        while self.0.first_key_value().is_some_and(|(&at, _)| at <= now) {
            self.0.pop_first();
        }
    }

    /// The earliest deadline.
    pub(super) fn first(&self) -> Option<Millis> {
        self.0.first_key_value().map(|(&at, _)| at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_asked_for_again_and_again_is_held_about_once() {
        let key = |i: u32| {
            let addr = std::net::Ipv4Addr::from(0x0a00_0000 + i);
            let p = Prefix::new(addr.into(), 32).expect("a host prefix");
            (198, p)
        };
        let mut w = Wakeups::default();
        // 1 000 VIPs, each asking for the same deadline 14 times, in the
        // order whole-view walks ask (every VIP, then every VIP again).
        for _ in 0..14 {
            for i in 0..1_000 {
                w.insert(5_000, key(i));
            }
        }
        let held = w.0.get(&5_000).map_or(0, Vec::len);
        assert!(
            (1_000..=2_000).contains(&held),
            "held {held} for 1 000 VIPs"
        );
        let due = w.take_due(5_000);
        assert_eq!(due, (0..1_000).map(key).collect::<Vec<_>>());
        assert_eq!(w.first(), None);
    }
}
