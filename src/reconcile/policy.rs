//! The healing policy: from (class, FRR release, table mode) to the least
//! invasive action proven to heal it in the netns tests, or none.
//!
//! Contract: a pure table. Every row names the FRR behaviour it rests on
//! (`docs/FRR-BEHAVIOUR.md`) and the netns test that keeps it true; the
//! runs of those tests are recorded under `tests/data/reconcile/` and
//! replayed without root. A class with no proven safe action gets none:
//! ribbridge then reports and waits.

use super::vocab::{Class, HealAction};
use crate::model::{Release, TableMode};

/// FRR 10.7 fixed the SELECTED-flag bug; a realm toggle heals a lost route there.
const FIXED_SELECTED: Release = Release::new(10, 7);

/// The policy table. `has_address`: a local address equals the VIP;
/// `allow_address`: the operator allowed address-touching actions. The
/// "why" column is `docs/FRR-BEHAVIOUR.md`'s; "proven by" names the netns
/// test (and the recorded case) in which the action healed the drift.
///
/// | class | table mode / release | action | why | proven by |
/// |---|---|---|---|---|
/// | kernel_only | import-table (8.4) | delete_add | zebra's table lost the route: a delete then an add makes it learn it again | no netns test: the lab's 8.4 drifts are `not_redistributed` and `shadowed` |
/// | kernel_only | table-direct, < 10.7, address on the VIP | address_cycle if allowed, else none | 10.3: the address hides the route from zebra; only removing it, replacing the route, re-adding it heals | `bridge::drift_10_3_address_then_route_is_lost_in_zebra`, `faults::faults_killed_during_drift_frr_10_3` (cases `10.3-address-then-route-repair`, `10.3-killed-during-drift`) |
/// | kernel_only | table-direct, otherwise | realm_toggle | a real change makes zebra re-learn the route (10.7: FRRouting/frr#22654, route then address) | `bridge::drift_10_7_route_then_address_is_lost_in_zebra` (case `10.7-route-then-address-repair`); at once on the recognised trigger: `bridge::route_then_address_is_relearnt_at_once_frr_10_7` |
/// | not_redistributed | import-table | reimport_table | 8.4: a replace (even realm-only) drops the import while the table keeps the route; a realm flip never restores it, re-applying `ip import-table` does | `bridge::drift_8_4_realm_replace_drops_the_import`, `bridge::bridge_consistent_and_heartbeat_frr_8_4`, `bridge::heartbeat_1hz_for_30s_never_gives_up_frr_8_4` (at once, on zebra's withdrawal), `faults::faults_flood_of_a_million_changes_while_a_vip_drifts` (cases `8.4-realm-replace-repair`, `8.4-heartbeat`) |
/// | not_redistributed | table-direct | realm_toggle | zebra re-sends the route to every client, bgpd included | no netns test: no lab drift of 10.3 or 10.7 is `not_redistributed` |
/// | shadowed | any | none | the connected route wins by design on 8.4; the address is kube-vip's | `bridge::drift_8_4_address_shadows_the_import` (reported, no action; case `8.4-address-shadows-repair`) |
/// | zebra_stale | any | none | ribbridge never creates a kernel route | unit tests only |
/// | no_peer | any | none | a session problem, not a redistribution one | `faults::faults_zebra_and_bgpd_restart_frr_*` (cases `*-zebra-bgpd-restart`) |
pub fn heal_policy(
    class: Class,
    release: Release,
    table_mode: TableMode,
    has_address: bool,
    allow_address: bool,
) -> Option<HealAction> {
    match (class, table_mode) {
        (Class::KernelOnly, TableMode::ImportTable) => Some(HealAction::DeleteAdd),
        (Class::KernelOnly, TableMode::TableDirect) => {
            if has_address && release < FIXED_SELECTED {
                allow_address.then_some(HealAction::AddressCycle)
            } else {
                Some(HealAction::RealmToggle)
            }
        }
        (Class::NotRedistributed, TableMode::ImportTable) => Some(HealAction::ReimportTable),
        (Class::NotRedistributed, TableMode::TableDirect) => Some(HealAction::RealmToggle),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const R84: Release = Release::new(8, 4);
    const R103: Release = Release::new(10, 3);
    const R107: Release = Release::new(10, 7);

    #[test]
    fn consistent_and_unhealable_classes_get_no_action() {
        for class in [
            Class::Advertised,
            Class::Withdrawn,
            Class::Shadowed,
            Class::ZebraStale,
            Class::NoPeer,
        ] {
            for r in [R84, R103, R107] {
                for m in [TableMode::ImportTable, TableMode::TableDirect] {
                    assert_eq!(
                        heal_policy(class, r, m, true, true),
                        None,
                        "{class} {r} {m:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn address_actions_need_permission() {
        let td = TableMode::TableDirect;
        assert_eq!(heal_policy(Class::KernelOnly, R103, td, true, false), None);
        assert_eq!(
            heal_policy(Class::KernelOnly, R103, td, true, true),
            Some(HealAction::AddressCycle)
        );
        assert_eq!(
            heal_policy(Class::KernelOnly, R107, td, true, false),
            Some(HealAction::RealmToggle)
        );
    }

    #[test]
    fn import_table_heals_by_delete_add_not_realm() {
        assert_eq!(
            heal_policy(Class::KernelOnly, R84, TableMode::ImportTable, false, false),
            Some(HealAction::DeleteAdd)
        );
    }
}
