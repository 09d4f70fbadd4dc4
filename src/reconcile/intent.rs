//! bgpd's configuration read as the core's intent: a read that differs
//! from the last becomes the intent ([`on_intent`]), a change timed for
//! bgpd's own timers; a read that is a re-import's own middle is held
//! (`reimport`) and, when nothing newer replaced it, applied at its own
//! time ([`apply_held`]).
//!
//! Contract: the first read is no change (nothing to time); a read equal
//! to the intent is no event; every VIP is re-evaluated when the intent
//! changes.

use super::reimport;
use super::scope::Next;
use super::state::State;
use super::vocab::Millis;
use crate::model::intent::Intent;

/// bgpd's configuration read as an intent.
pub(super) fn on_intent(state: &mut State, intent: Intent, now: Millis) -> Option<Next> {
    // A newer read replaces a held one.
    state.held_intent = None;
    if state.intent.as_ref() == Some(&intent) || reimport::held(state, &intent, now) {
        return None;
    }
    apply_intent(state, intent, now)
}

/// The configuration read at `now`, another than the intent, becomes it.
fn apply_intent(state: &mut State, intent: Intent, now: Millis) -> Option<Next> {
    // A change, not the first read: bgpd applies it on its own
    // timers, which the grace of what it sends must cover.
    if state.intent.is_some() {
        state.intent_at = now;
    }
    state.intent = Some(intent);
    Next::all()
}

/// A held read of the configuration that nothing newer replaced: applied
/// now, as read at its own time, its re-evaluation joined to the event's
/// (`next`). Returns when to look at a held read again.
pub(super) fn apply_held(
    state: &mut State,
    now: Millis,
    next: &mut Option<Next>,
) -> Option<Millis> {
    let mut held_at = None;
    if let Some((intent, at)) = reimport::advance(state, now, &mut held_at) {
        let touched_bgp = next.is_some_and(|n| n.touched_bgp);
        *next = apply_intent(state, intent, at).map(|all| Next { touched_bgp, ..all });
    }
    held_at
}
