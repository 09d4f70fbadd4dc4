//! Healing a drift: [`decide_heal`] picks the policy's action
//! ([`heal_policy`]) for a VIP in reported drift and asks for it when its
//! backoff, a bgpd view newer than its last action and the node-wide
//! [`Ceiling`](super::Ceiling) allow; after `Config::max_attempts` the
//! give-up is reported once and healing goes on at the capped backoff.
//! [`start_heal`] puts an action in flight, [`on_heal_done`] takes its
//! result (a doubling backoff, then verification after a new grace), and
//! [`triggered`] re-arms the attempts when a kernel write ribbridge did not
//! make recurs (a drift that recurs because its trigger recurs is not a
//! failed heal).
//!
//! Contract: decisions on one VIP's [`HealState`](super::HealState), its
//! deadlines and the ceiling, from the state's views and the `now`
//! argument; the last decision's outcome is a [`HealResult`] for
//! `/status`. An action is only asked for ([`Action::Heal`]); the daemon
//! runs it and answers with [`Event::HealDone`](super::Event::HealDone).

use super::classify::policy_unknown;
use super::event::Action;
use super::policy::heal_policy;
use super::reimport;
use super::scope::{Next, Scope};
use super::state::State;
use super::vip::{Stamp, Vip};
use super::vocab::{Class, HealAction, HealResult, Millis};
use crate::model::{Mode, Prefix, TableId};

/// For a VIP in drift: pick the policy action and, in repair mode and when
/// the backoff allows, ask for it. Returns true when a retry waits for a
/// fresh bgpd view.
pub(super) fn decide_heal(
    state: &mut State,
    key: (TableId, Prefix),
    now: Millis,
    actions: &mut Vec<Action>,
) -> bool {
    let Some((release, table_mode)) = state.zebra else {
        return false;
    };
    let bgp_view_at = state.bgp_view_at;
    let mode = state.config.mode;
    let grace = state.config.grace_ms;
    let max = state.config.max_attempts;
    let cap = state.config.backoff_max_ms;
    let allow_addr = state.config.heal_addresses;
    let (rate, burst) = (state.config.heal_rate_per_s, state.config.heal_burst);
    let has_addr = state.addresses.contains(&key.1);
    let Some(v) = state.vips.get_mut(&key) else {
        return false;
    };
    let class = v.state;
    // Only a VIP in drift comes here: its out-of-line part is its own.
    let h = v.heal_mut();
    if h.in_flight {
        return false;
    }
    let Some(action) = heal_policy(class, release, table_mode, has_addr, allow_addr) else {
        h.last_result = Some(HealResult::NoSafeAction);
        return false;
    };
    if mode == Mode::Observe {
        h.last_action = Some(action);
        h.last_result = Some(HealResult::ObserveOnly);
        return false;
    }
    // A VIP bgpd does not send under a policy ribbridge cannot evaluate
    // may be denied by it: one heal episode (an FRR bug is healed by it),
    // then it is reported as such, never healed again while it lasts.
    if h.attempts >= 1 {
        let unknown = class == Class::NotRedistributed
            && state
                .intent
                .as_ref()
                .and_then(|i| policy_unknown(i, key.0, &key.1, &state.peers))
                .is_some();
        if unknown {
            if let Some(v) = state.vips.get_mut(&key) {
                v.heal_mut().last_result = Some(HealResult::PolicyUnknown);
            }
            return false;
        }
    }
    let Some(v) = state.vips.get_mut(&key) else {
        return false;
    };
    let h = v.heal_mut();
    // Given up: reported once for alerting, and healing goes on at the
    // capped backoff: the VIP is never left dark while a proven heal exists.
    if h.attempts >= max && !h.gave_up {
        h.gave_up = true;
        h.last_result = Some(HealResult::GaveUp);
        h.next_at = h.next_at.max(h.done_at.saturating_add(cap));
        actions.push(Action::GaveUp {
            table: key.0,
            prefix: key.1,
            class,
        });
    }
    if now < h.next_at {
        let at = h.next_at;
        state.wakeups.insert(at, key);
        return false;
    }
    // An action is judged on a bgpd view taken after the last action (or
    // the trigger that re-armed healing) settled.
    if bgp_view_at.is_none_or(|t| t < h.done_at + grace) {
        return true;
    }
    // The node-wide ceiling: a held-back action waits for its own slot.
    let slot = match h.slot_at.take() {
        Some(at) => Err(at),
        None => state.ceiling.admit(rate, burst, now),
    };
    if let Err(at) = slot
        && now < at
    {
        h.slot_at = Some(at);
        state.wakeups.insert(at, key);
        return false;
    }
    start_heal(state, key, action, false, now, actions);
    false
}

/// Ask for a heal: in flight until its result; a `fast` one (a recognised
/// trigger, no drift reported) is not an attempt of a drift. A re-import
/// is noted for its table (`reimport`: its own half-done configuration
/// is not the intent).
pub(super) fn start_heal(
    state: &mut State,
    key: (TableId, Prefix),
    action: HealAction,
    fast: bool,
    now: Millis,
    actions: &mut Vec<Action>,
) {
    if action == HealAction::ReimportTable {
        reimport::note(state, key.0, now);
    }
    let Some(v) = state.vips.get_mut(&key) else {
        return;
    };
    let h = v.heal_mut();
    h.in_flight = true;
    h.fast = fast;
    h.last_action = Some(action);
    actions.push(Action::Heal {
        table: key.0,
        prefix: key.1,
        action,
    });
}

/// The daemon ran a heal action ([`Event::HealDone`](super::Event::HealDone)):
/// a re-import is noted for its table, the result taken
/// ([`on_heal_done`]); the VIP is re-evaluated when it is known.
pub(super) fn on_done(
    state: &mut State,
    key: (TableId, Prefix),
    action: HealAction,
    (ok, detail): (bool, String),
    now: Millis,
) -> Option<Next> {
    if action == HealAction::ReimportTable {
        reimport::note(state, key.0, now);
    }
    if on_heal_done(state, key, action, ok, detail, now) {
        Next::touching(Scope::One(key.0, key.1))
    } else {
        None
    }
}

/// A heal action's result: backoff, then verification after a new grace.
/// Returns false when the VIP is not known (nothing changed).
pub(super) fn on_heal_done(
    state: &mut State,
    key: (TableId, Prefix),
    action: HealAction,
    ok: bool,
    detail: String,
    now: Millis,
) -> bool {
    let backoff = state.config.backoff_ms;
    let cap = state.config.backoff_max_ms;
    let grace = state.config.grace_ms;
    let Some(v) = state.vips.get_mut(&key) else {
        return false;
    };
    let h = v.heal_mut();
    h.in_flight = false;
    h.done_at = now;
    h.last_action = Some(action);
    // After a give-up the status keeps saying so until the VIP is
    // consistent again, whatever the retries at the cap return.
    if !(ok && h.gave_up) {
        h.last_result = Some(if ok {
            HealResult::Ok
        } else {
            HealResult::Error(detail)
        });
    }
    if std::mem::take(&mut h.fast) && ok {
        // A fast heal is no attempt of a drift: nothing was
        // reported; what follows it is judged after a new grace,
        // and a failure falls back to the graced path.
        v.observed_since = now;
        state.wakeups.insert(now + grace, key);
        return true;
    }
    h.attempts += 1;
    let shift = h.attempts.saturating_sub(1).min(16);
    h.next_at = now
        + if h.gave_up {
            cap
        } else {
            backoff.saturating_mul(1 << shift).min(cap)
        };
    // Verification: the next observations decide, after a new grace.
    v.observed_since = now;
    true
}

/// A kernel write to a VIP's route that ribbridge did not make (its own
/// heal's echo arrives while the heal is in flight or within a grace after
/// it): remembered for the fast path, and on a VIP in reported drift it
/// re-arms healing, because a drift that recurs because its trigger recurs
/// is not a failed heal. The re-armed heal waits a grace and a bgpd view
/// newer than that, so the trigger's own effect (on 10.7 a beat heals a
/// lost route) is seen before anything is done. Returns true when it
/// re-armed.
pub(super) fn triggered(state: &mut State, key: (TableId, Prefix), now: Millis) -> bool {
    let grace = state.config.grace_ms;
    let Some(v) = state.vips.get_mut(&key) else {
        return false;
    };
    if own_echo(v, grace, now) {
        return false;
    }
    v.trigger_at = Stamp::at(now);
    if !v.state.is_drift() {
        return false;
    }
    let h = v.heal_mut();
    // A policy ribbridge cannot evaluate is what keeps it out, not the
    // trigger: a writer's beat does not re-arm its heal.
    if h.last_result == Some(HealResult::PolicyUnknown) {
        return false;
    }
    h.attempts = 0;
    h.gave_up = false;
    h.done_at = now;
    h.next_at = now.saturating_add(grace);
    true
}

/// A kernel write to the VIP's route now is a heal's own (one in flight,
/// or done less than a grace ago): neither a trigger nor a writer's beat.
pub(super) fn own_echo(v: &Vip, grace: Millis, now: Millis) -> bool {
    let h = v.heal();
    h.in_flight || (h.done_at > 0 && now < h.done_at.saturating_add(grace))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Release, TableMode};
    use crate::reconcile::fixture::{T, node, vip, with_route};
    use crate::reconcile::{Class, Config};

    const KEY: fn() -> (TableId, Prefix) = || (T, vip());

    /// A ready 10.7 node whose one VIP is reported in `class`.
    fn drifting(class: Class) -> State {
        let mut s = node(
            Config::repairing(),
            Release::new(10, 7),
            TableMode::TableDirect,
        );
        with_route(&mut s, 0, false).state = class;
        s
    }

    #[test]
    fn a_drift_without_a_proven_action_is_reported_and_left_alone() {
        let mut s = drifting(Class::ZebraStale);
        s.bgp_view_at = Some(10_000);
        let mut actions = Vec::new();
        assert!(!decide_heal(&mut s, KEY(), 10_000, &mut actions));
        assert!(actions.is_empty(), "{actions:?}");
        let h = s.vips[&KEY()].heal();
        assert_eq!(h.last_result, Some(HealResult::NoSafeAction));
        assert_eq!(h.last_action, None);
    }

    #[test]
    fn a_heal_is_asked_for_once_bgpd_s_view_is_newer_than_the_last_action() {
        let mut s = drifting(Class::KernelOnly);
        s.vips.get_mut(&KEY()).expect("vip").heal_mut().done_at = 1_000;
        s.bgp_view_at = Some(1_050);
        let mut actions = Vec::new();
        assert!(decide_heal(&mut s, KEY(), 1_100, &mut actions), "a view");
        assert!(actions.is_empty(), "{actions:?}");
        s.bgp_view_at = Some(1_100);
        assert!(!decide_heal(&mut s, KEY(), 1_100, &mut actions));
        let heal = Action::Heal {
            table: T,
            prefix: vip(),
            action: HealAction::RealmToggle,
        };
        assert_eq!(actions, std::slice::from_ref(&heal));
        assert!(s.vips[&KEY()].heal().in_flight);
        // In flight: nothing more is asked for.
        assert!(!decide_heal(&mut s, KEY(), 1_200, &mut actions));
        assert_eq!(actions, [heal]);
    }

    #[test]
    fn failed_heals_back_off_doubling_then_give_up_once_and_say_so() {
        let mut s = drifting(Class::KernelOnly);
        let fail = |s: &mut State, at| {
            on_heal_done(
                s,
                KEY(),
                HealAction::RealmToggle,
                false,
                "refused".into(),
                at,
            )
        };
        assert!(fail(&mut s, 2_000));
        let h = s.vips[&KEY()].heal();
        assert_eq!((h.attempts, h.next_at), (1, 3_000));
        assert_eq!(h.last_result, Some(HealResult::Error("refused".into())));
        assert!(fail(&mut s, 4_000));
        assert_eq!(s.vips[&KEY()].heal().next_at, 6_000);
        assert!(fail(&mut s, 8_000));
        assert_eq!(s.vips[&KEY()].heal().next_at, 12_000);
        let mut actions = Vec::new();
        assert!(!decide_heal(&mut s, KEY(), 9_000, &mut actions));
        assert_eq!(
            actions,
            [Action::GaveUp {
                table: T,
                prefix: vip(),
                class: Class::KernelOnly,
            }]
        );
        let h = s.vips[&KEY()].heal();
        assert_eq!(h.last_result, Some(HealResult::GaveUp));
        assert_eq!(h.next_at, 8_000 + s.config.backoff_max_ms, "the cap");
        // A success at the cap does not hide the give-up.
        let ok = on_heal_done(
            &mut s,
            KEY(),
            HealAction::RealmToggle,
            true,
            String::new(),
            40_000,
        );
        assert!(ok);
        assert_eq!(s.vips[&KEY()].heal().last_result, Some(HealResult::GaveUp));
        // An unknown VIP's result changes nothing.
        let gone: Prefix = "192.0.2.99/32".parse().expect("prefix");
        let known = on_heal_done(
            &mut s,
            (T, gone),
            HealAction::RealmToggle,
            true,
            String::new(),
            1,
        );
        assert!(!known);
    }

    #[test]
    fn a_new_trigger_re_arms_a_drift_but_a_heal_s_own_echo_does_not() {
        let mut s = drifting(Class::KernelOnly);
        let h = s.vips.get_mut(&KEY()).expect("vip").heal_mut();
        (h.attempts, h.gave_up, h.done_at) = (3, true, 1_000);
        // Within a grace of the heal: its echo.
        assert!(!triggered(&mut s, KEY(), 1_050));
        assert_eq!(s.vips[&KEY()].trigger_at.get(), None);
        assert!(triggered(&mut s, KEY(), 2_000));
        let h = s.vips[&KEY()].heal();
        assert_eq!((h.attempts, h.gave_up, h.next_at), (0, false, 2_100));
        assert_eq!(s.vips[&KEY()].trigger_at.get(), Some(2_000));
        // On a consistent VIP a trigger is only remembered.
        s.vips.get_mut(&KEY()).expect("vip").state = Class::Advertised;
        assert!(!triggered(&mut s, KEY(), 5_000));
        assert_eq!(s.vips[&KEY()].trigger_at.get(), Some(5_000));
    }

    #[test]
    fn heal_results_are_today_s_strings() {
        let all = [
            (HealResult::Ok, "ok"),
            (HealResult::Error("refused".into()), "error: refused"),
            (HealResult::Error(String::new()), "error: "),
            (HealResult::Healed, "healed"),
            (HealResult::GaveUp, "gave_up"),
            (HealResult::NoSafeAction, "no_safe_action"),
            (HealResult::ObserveOnly, "observe_only"),
        ];
        for (result, text) in all {
            assert_eq!(result.to_string(), text);
            assert!(text.starts_with(result.name()), "{text}");
            let json = serde_json::to_value(&result).expect("json");
            assert_eq!(json, serde_json::Value::from(text));
            let back: HealResult = serde_json::from_value(json).expect("back");
            assert_eq!(back, result);
        }
        assert!(serde_json::from_str::<HealResult>("\"healing\"").is_err());
        assert!(serde_json::from_str::<HealResult>("\"error\"").is_err());
    }
}
