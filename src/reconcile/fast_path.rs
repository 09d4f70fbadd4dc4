//! The fast paths, for FRR's bugs whose outcome zebra has already shown
//! (repair mode only, on a ready node not drained: [`fast_paths_on`]):
//! - 8.4 and the releases before 10.0 in import-table mode drop the import
//!   at a replace of the route: zebra's ZAPI withdrawal within
//!   [`TRIGGER_WINDOW_MS`] of a kernel trigger is re-imported at once
//!   ([`fast_reimport`]);
//! - 10.7 loses a route an address of its prefix follows within
//!   [`ADDRESS_RACE_MS`] (FRRouting/frr#22654: [`address_after_route`]), and
//!   10.3 a route added while such an address exists
//!   ([`route_after_address`]): each schedules a check [`ZEBRA_SETTLE_MS`]
//!   later, and [`fast_relearn`] heals when zebra still lacks the route.
//!
//! Contract: a fast heal is taken at once or not at all: it passes the
//! node-wide ceiling only if it admits it without waiting, it is reported
//! as no drift and counts as no attempt, one trigger gets one, and a
//! failed one (or any other release, table mode or timing) leaves the VIP
//! to the graced path (`evaluate`, `heal`).

use super::ceiling::Ceiling;
use super::drain;
use super::event::Action;
use super::heal::start_heal;
use super::policy::heal_policy;
use super::state::State;
use super::vip::Stamp;
use super::vocab::{Class, Config, Millis};
use crate::model::{Mode, Prefix, Release, TableId, TableMode};

/// Fast paths act only in repair mode, not drained, with the
/// views complete; the release and table mode come with zebra's session.
fn fast_paths_on(state: &State) -> Option<(Release, TableMode)> {
    if state.config.mode != Mode::Repair || drain::holds(state) || !state.ready() {
        return None;
    }
    state.zebra
}

/// Releases from this one have `redistribute table-direct`; before it,
/// `ip import-table` drops the import at any replace of the route (8.4,
/// every time: docs/FRR-BEHAVIOUR.md, "8.4: a replace drops the import").
const TABLE_DIRECT_SINCE: Release = Release::new(10, 0);

/// How long after a kernel trigger zebra's withdrawal of the VIP is that
/// trigger's doing: zebra answers a kernel change in 10.5-17 ms
/// (docs/FRR-BEHAVIOUR.md, "Normal convergence"); the rest is room for a
/// loaded node. A withdrawal later than this takes the graced path.
const TRIGGER_WINDOW_MS: Millis = 250;

/// The fast path of FRR before 10.0 in import-table mode: zebra's ZAPI
/// withdrawal of a VIP the kernel still holds, within
/// [`TRIGGER_WINDOW_MS`] of a kernel trigger on it, is the dropped import,
/// certain. Re-importing at once (the withdrawal comes ~10 ms after the
/// trigger, and a re-import 10-20 ms after it leaves the router seeing no
/// change; 5 ms is too early, zebra drops the import after it) heals it
/// before bgpd sends the withdrawal. Nothing is reported: no drift was.
/// One trigger gets one fast heal; a failed one falls back to the graced
/// path. Any other release or table mode, a withdrawal with no recent
/// trigger, or a VIP shadowed by an address takes the graced path.
pub(super) fn fast_reimport(
    state: &mut State,
    key: (TableId, Prefix),
    now: Millis,
    actions: &mut Vec<Action>,
) {
    let Some((release, table_mode)) = fast_paths_on(state) else {
        return;
    };
    if table_mode != TableMode::ImportTable
        || release >= TABLE_DIRECT_SINCE
        || !state.servable(&key)
    {
        return;
    }
    let has_addr = state.addresses.contains(&key.1);
    let allow_addr = state.config.heal_addresses;
    let Some(v) = state.vips.get_mut(&key) else {
        return;
    };
    if !v.in_kernel() || v.heal().in_flight || has_addr {
        return;
    }
    let Some(at) = v.trigger_at.get() else {
        return;
    };
    if now.saturating_sub(at) > TRIGGER_WINDOW_MS {
        return;
    }
    let Some(action) = heal_policy(
        Class::NotRedistributed,
        release,
        table_mode,
        has_addr,
        allow_addr,
    ) else {
        return;
    };
    // Held back by the ceiling: the graced path takes it, in its turn.
    if !admit_fast(&mut state.ceiling, &state.config, now) {
        return;
    }
    v.trigger_at = Stamp::NONE;
    start_heal(state, key, action, true, now, actions);
}

/// The release measured with FRRouting/frr#22654 (route, then an address
/// of the same prefix, loses the route in zebra): 10.7.
const ROUTE_THEN_ADDRESS_LOST: Release = Release::new(10, 7);

/// An address of a VIP's prefix this soon after its route appeared is
/// FRRouting/frr#22654's trigger when the route is still queued in zebra
/// (zebra takes ~10 ms); the check at [`ZEBRA_SETTLE_MS`] is the proof.
const ADDRESS_RACE_MS: Millis = 50;

/// How long after the trigger zebra must have sent the route on ZAPI if
/// it kept it: its normal reaction is 10.5-17 ms (docs/FRR-BEHAVIOUR.md).
const ZEBRA_SETTLE_MS: Millis = 40;

/// Releases from [`TABLE_DIRECT_SINCE`] up to this one lose a route added
/// while an address of its prefix exists (10.3 measured, every time the
/// race goes that way: docs/FRR-BEHAVIOUR.md, "10.3: address, then route").
const ADDRESS_THEN_ROUTE_KEPT: Release = ROUTE_THEN_ADDRESS_LOST;

/// 10.3 with `table-direct`: the VIP's route appeared while an address of
/// its prefix was there (kube-vip's order). Schedules the check of
/// [`fast_relearn`]; the policy acts only with `--heal-addresses`.
pub(super) fn route_after_address(state: &mut State, key: (TableId, Prefix), now: Millis) {
    let Some((release, table_mode)) = fast_paths_on(state) else {
        return;
    };
    if table_mode != TableMode::TableDirect
        || release < TABLE_DIRECT_SINCE
        || release >= ADDRESS_THEN_ROUTE_KEPT
        || !state.addresses.contains(&key.1)
    {
        return;
    }
    if let Some(v) = state.vips.get_mut(&key) {
        let due = now + ZEBRA_SETTLE_MS;
        v.cold_mut().fast_due = Some(due);
        state.wakeups.insert(due, key);
    }
}

/// 10.7 with `table-direct`: an address of the VIP's prefix right after
/// its route appeared (one netlink batch) makes zebra drop the queued
/// route (FRRouting/frr#22654). Schedules the check of [`fast_relearn`].
pub(super) fn address_after_route(state: &mut State, prefix: Prefix, now: Millis) {
    let Some((release, table_mode)) = fast_paths_on(state) else {
        return;
    };
    if table_mode != TableMode::TableDirect || release < ROUTE_THEN_ADDRESS_LOST {
        return;
    }
    let keys: Vec<_> = state
        .vips
        .keys()
        .filter(|k| k.1 == prefix)
        .copied()
        .collect();
    for key in keys {
        let Some(v) = state.vips.get_mut(&key) else {
            continue;
        };
        let fresh = v
            .added_at
            .get()
            .is_some_and(|at| now.saturating_sub(at) <= ADDRESS_RACE_MS);
        if fresh && v.in_kernel() && !v.zebra {
            let due = now + ZEBRA_SETTLE_MS;
            v.cold_mut().fast_due = Some(due);
            state.wakeups.insert(due, key);
        }
    }
}

/// The check of [`address_after_route`]'s and [`route_after_address`]'s
/// triggers: zebra, past its normal
/// reaction, still lacks the route on ZAPI and in its table: the route is
/// lost, certain; the policy's action runs at once, before any grace or
/// poll. Nothing is reported (no drift was); a failure falls back to the
/// graced path.
pub(super) fn fast_relearn(
    state: &mut State,
    key: (TableId, Prefix),
    now: Millis,
    actions: &mut Vec<Action>,
) {
    let Some((release, table_mode)) = fast_paths_on(state) else {
        return;
    };
    let has_addr = state.addresses.contains(&key.1);
    let allow_addr = state.config.heal_addresses;
    // Never re-advertise what the node cannot serve.
    let servable = state.servable(&key);
    let Some(v) = state.vips.get_mut(&key) else {
        return;
    };
    match v.fast_due() {
        Some(due) if now >= due => v.cold_mut().fast_due = None,
        _ => return,
    }
    if !servable || !v.in_kernel() || v.zebra || v.zebra_table == Some(true) || v.heal().in_flight {
        return;
    }
    let Some(action) = heal_policy(Class::KernelOnly, release, table_mode, has_addr, allow_addr)
    else {
        return;
    };
    if !admit_fast(&mut state.ceiling, &state.config, now) {
        return;
    }
    start_heal(state, key, action, true, now, actions);
}

/// A fast heal passes the ceiling only if it admits it at once.
fn admit_fast(ceiling: &mut Ceiling, config: &Config, now: Millis) -> bool {
    ceiling.try_admit(config.heal_rate_per_s, config.heal_burst, now)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reconcile::HealAction;
    use crate::reconcile::fixture::{T, heals, node, vip, with_route};

    const KEY: fn() -> (TableId, Prefix) = || (T, vip());

    fn on(major: u16, minor: u16, table_mode: TableMode, config: Config) -> State {
        node(config, Release::new(major, minor), table_mode)
    }

    #[test]
    fn fast_paths_act_only_in_repair_mode_on_a_ready_node_not_drained() {
        let repair = on(10, 7, TableMode::TableDirect, Config::repairing());
        let zebra = Some((Release::new(10, 7), TableMode::TableDirect));
        assert_eq!(fast_paths_on(&repair), zebra);
        let observe = Config {
            mode: Mode::Observe,
            ..Config::repairing()
        };
        assert_eq!(
            fast_paths_on(&on(10, 7, TableMode::TableDirect, observe)),
            None
        );
        let mut drained = repair.clone();
        drained.drained = true;
        assert_eq!(fast_paths_on(&drained), None);
        let mut unsynced = repair.clone();
        unsynced.zebra_synced = false;
        assert_eq!(fast_paths_on(&unsynced), None);
    }

    #[test]
    fn a_withdrawal_right_after_a_trigger_on_8_4_is_reimported_at_once_and_once() {
        let mut s = on(8, 4, TableMode::ImportTable, Config::repairing());
        with_route(&mut s, 0, true).trigger_at = Stamp::at(1_000);
        let mut actions = Vec::new();
        fast_reimport(&mut s, KEY(), 1_010, &mut actions);
        assert_eq!(heals(&actions), [HealAction::ReimportTable]);
        let v = &s.vips[&KEY()];
        assert!(v.heal().in_flight && v.heal().fast, "a fast heal in flight");
        assert_eq!(v.trigger_at.get(), None, "the trigger is spent");
        fast_reimport(&mut s, KEY(), 1_020, &mut actions);
        assert_eq!(actions.len(), 1, "{actions:?}");
    }

    #[test]
    fn a_late_withdrawal_another_table_mode_or_an_address_takes_the_graced_path() {
        let mut actions = Vec::new();
        let mut late = on(8, 4, TableMode::ImportTable, Config::repairing());
        with_route(&mut late, 0, true).trigger_at = Stamp::at(1_000);
        fast_reimport(
            &mut late,
            KEY(),
            1_000 + TRIGGER_WINDOW_MS + 1,
            &mut actions,
        );
        let mut direct = on(10, 3, TableMode::TableDirect, Config::repairing());
        with_route(&mut direct, 0, true).trigger_at = Stamp::at(1_000);
        fast_reimport(&mut direct, KEY(), 1_010, &mut actions);
        let mut shadowed = on(8, 4, TableMode::ImportTable, Config::repairing());
        with_route(&mut shadowed, 0, true).trigger_at = Stamp::at(1_000);
        shadowed.addresses.insert(vip());
        fast_reimport(&mut shadowed, KEY(), 1_010, &mut actions);
        assert!(actions.is_empty(), "{actions:?}");
        assert_eq!(late.vips[&KEY()].trigger_at.get(), Some(1_000), "kept");
    }

    #[test]
    fn an_address_right_after_its_route_on_10_7_is_checked_and_the_lost_route_healed() {
        let mut s = on(10, 7, TableMode::TableDirect, Config::repairing());
        with_route(&mut s, 1_000, false).added_at = Stamp::at(1_000);
        s.addresses.insert(vip());
        address_after_route(&mut s, vip(), 1_010);
        let due = 1_010 + ZEBRA_SETTLE_MS;
        assert_eq!(s.vips[&KEY()].fast_due(), Some(due));
        assert_eq!(s.wakeups.first(), Some(due));
        let mut actions = Vec::new();
        fast_relearn(&mut s, KEY(), due - 1, &mut actions);
        assert!(actions.is_empty(), "not before the check: {actions:?}");
        fast_relearn(&mut s, KEY(), due, &mut actions);
        assert_eq!(heals(&actions), [HealAction::RealmToggle]);
        assert_eq!(s.vips[&KEY()].fast_due(), None);
    }

    #[test]
    fn the_check_leaves_a_route_zebra_kept_and_10_3_checks_a_route_after_an_address() {
        let mut s = on(10, 7, TableMode::TableDirect, Config::repairing());
        with_route(&mut s, 1_000, false).added_at = Stamp::at(1_000);
        address_after_route(&mut s, vip(), 1_010);
        s.vips.get_mut(&KEY()).expect("vip").zebra = true;
        let mut actions = Vec::new();
        fast_relearn(&mut s, KEY(), 1_050, &mut actions);
        assert!(actions.is_empty(), "{actions:?}");
        assert_eq!(s.vips[&KEY()].fast_due(), None, "checked");
        // 10.3: the route came while the address was there.
        let mut old = on(10, 3, TableMode::TableDirect, Config::repairing());
        old.addresses.insert(vip());
        with_route(&mut old, 2_000, false);
        route_after_address(&mut old, KEY(), 2_000);
        assert_eq!(old.vips[&KEY()].fast_due(), Some(2_000 + ZEBRA_SETTLE_MS));
        // 10.7 keeps such a route: no check.
        route_after_address(&mut s, KEY(), 2_000);
        assert_eq!(s.vips[&KEY()].fast_due(), None);
    }

    #[test]
    fn a_fast_heal_the_ceiling_cannot_admit_at_once_is_not_taken() {
        let config = Config {
            heal_rate_per_s: 1,
            heal_burst: 1,
            ..Config::repairing()
        };
        let mut s = on(8, 4, TableMode::ImportTable, config);
        with_route(&mut s, 0, true).trigger_at = Stamp::at(1_000);
        assert!(s.ceiling.try_admit(1, 1, 1_000), "the one slot");
        let mut actions = Vec::new();
        fast_reimport(&mut s, KEY(), 1_010, &mut actions);
        assert!(actions.is_empty(), "{actions:?}");
        assert_eq!(s.ceiling.deferred, 0, "no slot reserved for it");
        assert_eq!(
            s.vips[&KEY()].trigger_at.get(),
            Some(1_000),
            "for the graced path"
        );
    }
}
