//! Forgetting: a discovered VIP (one the configuration does not name)
//! that is `withdrawn` and absent from every view (the kernel, zebra's
//! stream and table) with no heal in flight is removed from the state
//! [`Config::forget_after_ms`](super::Config::forget_after_ms) after it
//! was reported withdrawn, and [`Action::Forgot`] says so; until then its
//! deadline is set, so a quiet node forgets without another event, and its
//! out-of-line drift and heal records are freed (only its state waits).
//!
//! Contract: only [`forget`] removes a VIP from [`State::vips`], and only
//! from `evaluate` (a whole-view walk neither adds nor removes VIPs while
//! it goes); a configured VIP is never forgotten.

use super::event::Action;
use super::state::State;
use super::vocab::Millis;
use crate::model::{Prefix, TableId};

/// A discovered VIP (not configured) withdrawn and absent from every view
/// for the retention is forgotten; until then its deadline is set.
pub(super) fn forget(
    state: &mut State,
    key: (TableId, Prefix),
    now: Millis,
    actions: &mut Vec<Action>,
) -> bool {
    if state.config.vips.contains(&key.1) {
        return false;
    }
    let Some(v) = state.vips.get(&key) else {
        return false;
    };
    let absent = !v.in_kernel() && !v.zebra && v.zebra_table != Some(true) && !v.heal().in_flight;
    if !absent {
        return false;
    }
    let at = v.since.saturating_add(state.config.forget_after_ms);
    if now < at {
        // Gone from every view, nothing in flight: its drift and heal
        // records have been reported; only the state waits out the
        // retention (100 000 routes deleted at once keep 90 B each, not
        // ~200).
        if let Some(v) = state.vips.get_mut(&key) {
            v.shed_cold(true);
        }
        state.wakeups.insert(at, key);
        return false;
    }
    state.vips.remove(&key);
    state.writers.remove(&key);
    state.backends.remove(&key);
    actions.push(Action::Forgot {
        table: key.0,
        prefix: key.1,
    });
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reconcile::Config;
    use crate::reconcile::fixture::{T, vip};

    const KEY: fn() -> (TableId, Prefix) = || (T, vip());

    /// The VIP, discovered (`configured: false`) or configured, reported
    /// withdrawn at 1 000 and absent everywhere.
    fn withdrawn(configured: bool) -> State {
        let config = Config {
            vips: if configured {
                [vip()].into()
            } else {
                Default::default()
            },
            forget_after_ms: 10_000,
            ..Config::default()
        };
        let mut s = State::new(config, 1_000);
        s.vip(T, vip(), 1_000);
        s
    }

    #[test]
    fn a_discovered_vip_is_forgotten_after_the_retention_and_waited_for_until_then() {
        let mut s = withdrawn(false);
        s.vips.get_mut(&KEY()).unwrap().heal_mut().attempts = 3;
        let mut actions = Vec::new();
        assert!(!forget(&mut s, KEY(), 5_000, &mut actions));
        assert!(actions.is_empty(), "{actions:?}");
        assert_eq!(s.wakeups.first(), Some(11_000), "its deadline");
        // Waiting out the retention costs its hot part only.
        assert!(s.vips[&KEY()].cold.is_none(), "{:?}", s.vips[&KEY()]);
        forget(&mut s, KEY(), 11_000, &mut actions);
        assert_eq!(
            actions,
            [Action::Forgot {
                table: T,
                prefix: vip()
            }]
        );
        assert!(s.vips.is_empty());
    }

    #[test]
    fn a_configured_vip_is_never_forgotten() {
        let mut s = withdrawn(true);
        let mut actions = Vec::new();
        forget(&mut s, KEY(), 1_000_000, &mut actions);
        assert!(actions.is_empty(), "{actions:?}");
        assert!(s.vips.contains_key(&KEY()));
        assert_eq!(s.wakeups.first(), None, "nothing to wait for");
    }

    #[test]
    fn a_vip_still_in_a_view_or_being_healed_is_kept() {
        let mut actions = Vec::new();
        let mut in_table = withdrawn(false);
        in_table.vips.get_mut(&KEY()).expect("vip").zebra_table = Some(true);
        forget(&mut in_table, KEY(), 20_000, &mut actions);
        let mut healing = withdrawn(false);
        healing
            .vips
            .get_mut(&KEY())
            .expect("vip")
            .heal_mut()
            .in_flight = true;
        forget(&mut healing, KEY(), 20_000, &mut actions);
        assert!(actions.is_empty(), "{actions:?}");
        assert_eq!((in_table.vips.len(), healing.vips.len()), (1, 1));
        // Out of zebra's table again: forgotten at the next look.
        in_table.vips.get_mut(&KEY()).expect("vip").zebra_table = Some(false);
        forget(&mut in_table, KEY(), 20_000, &mut actions);
        assert!(in_table.vips.is_empty());
    }
}
