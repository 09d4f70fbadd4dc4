//! ribbridge's own `reimport_table` heal, seen half-done in zebra's
//! configuration. The heal is two zebra commands (`no ip import-table N`,
//! then `ip import-table N`); a read of zebra's configuration that lands
//! between them finds the table not imported. Taken as the intent, that
//! read makes every VIP of the table `unconfigured` and restarts the grace
//! until the next read: on 8.4 under a 1 Hz heartbeat, a beat then waits
//! seconds for its re-import.
//!
//! Contract:
//! - [`note`] records every ask and every answer of a re-import, by table.
//! - A read of the configuration that differs from the intent only by
//!   lacking the imports of tables re-imported within [`ECHO_MS`] is *held*
//!   ([`held`]), not applied; the next read replaces it (the vty poller
//!   reads the whole configuration again within a second of reporting a
//!   change).
//! - A held read that no newer read replaced within [`HOLD_MS`] is applied
//!   then, as read at its own time ([`advance`]): an operator's removal of
//!   the import at the moment of a heal is late, never lost.
//! - Pure like the rest of the core: the time is an argument.

use super::state::State;
use super::vocab::Millis;
use crate::model::TableId;
use crate::model::intent::Intent;

/// How long after a re-import's ask or answer a read lacking the table's
/// import may be that re-import's own middle (the read and the heal run on
/// two sessions; their events reach the core in either order).
pub const ECHO_MS: Millis = 1_000;

/// How long a held read waits for a newer one before it is applied: the
/// poller's next whole read comes within a second of a reported change.
pub const HOLD_MS: Millis = 2_500;

/// A re-import of `table` was asked or answered at `now`.
pub(super) fn note(state: &mut State, table: TableId, now: Millis) {
    state.reimported.insert(table, now);
}

/// Whether `intent`, read at `now`, is the current intent with only the
/// imports of tables ribbridge is re-importing missing: then it is held.
pub(super) fn held(state: &mut State, intent: &Intent, now: Millis) -> bool {
    let Some(current) = &state.intent else {
        return false;
    };
    let (Some(had), Some(has)) = (&current.imports, &intent.imports) else {
        return false;
    };
    let mut lost = had.iter().filter(|i| !has.contains(i)).peekable();
    let echo = lost.peek().is_some()
        && has.iter().all(|i| had.contains(i))
        && lost.all(|(_, table)| {
            state
                .reimported
                .get(table)
                .is_some_and(|&at| now.abs_diff(at) <= ECHO_MS)
        });
    if !echo {
        return false;
    }
    // Nothing but the imports may differ.
    let mut same = intent.clone();
    same.imports.clone_from(&current.imports);
    if same != *current {
        return false;
    }
    state.held_intent = Some((intent.clone(), now));
    true
}

/// The held read, once [`HOLD_MS`] passed without a newer read: taken
/// out, with the time it was read. Otherwise None, and `wake` names when
/// to look again.
pub(super) fn advance(
    state: &mut State,
    now: Millis,
    wake: &mut Option<Millis>,
) -> Option<(Intent, Millis)> {
    let (_, at) = state.held_intent.as_ref()?;
    let due = at.saturating_add(HOLD_MS);
    if now < due {
        *wake = Some(wake.map_or(due, |w| w.min(due)));
        return None;
    }
    state.held_intent.take()
}
