//! A `withdraw = true` VIP taken out of BGP by ribbridge itself, and put
//! back: keepalived's habit (a failed check withdraws the VIP) for the one
//! case where nobody else will, the writer gone.
//!
//! Contract:
//! - Only in repair mode, at a node, for a VIP configured `withdraw`: it is
//!   taken out when its backend's health probe failed (`fall` probes) and
//!   its writer is silent or its address missing or unusable, never while
//!   its writer is alive (the writer decides then).
//! - It is put back when the backend is up (`rise` probes) or the writer
//!   re-asserts; one found withdrawn in bgpd's configuration (a restarted
//!   ribbridge) is kept out until then, or put back at once when it is no
//!   longer configured `withdraw`.
//! - The mechanism is the drain's, for one prefix (`crate::drain::plan`):
//!   a marked entry in bgpd's configuration, read back with every read of
//!   it ([`Intent::withdrawn_by_ribbridge`]), so a reload that rewrote it
//!   is seen and the withdrawal applied again. Each ask goes through the
//!   node-wide heal ceiling; a failed or unconfirmed one is asked again
//!   after [`WITHDRAW_RETRY_MS`].
//! - Observe mode takes nothing out: the VIP is reported (`blackhole`).
//! - Pure like the rest of the core: the time is an argument.
//!
//! [`Intent::withdrawn_by_ribbridge`]: crate::model::intent::Intent::withdrawn_by_ribbridge

use std::collections::BTreeSet;

use super::event::Action;
use super::scope::Next;
use super::state::State;
use super::vocab::{Millis, Reapply, WithdrawWhy, Withdrawal};
use super::writer::WriterState;
use crate::model::{Mode, Prefix, TableId};

/// The wait before a failed or unconfirmed ask is made again: bgpd's
/// configuration is read every second, so a confirmation takes up to two.
pub const WITHDRAW_RETRY_MS: Millis = 2_000;

/// The ask the daemon answered: applied (`ok`) or not; when it was, the
/// next read of bgpd's configuration confirms it.
pub(super) fn on_withdrew(
    state: &mut State,
    key: (TableId, Prefix),
    (out, ok): (bool, bool),
    now: Millis,
    actions: &mut Vec<Action>,
) -> Option<Next> {
    if let Some(w) = state.withdrawals.get_mut(&key)
        // The direction changed meanwhile: the answer is stale.
        && w.out == out
        && w.apply == Reapply::InFlight
    {
        w.apply = if ok {
            Reapply::Applied { at: now }
        } else {
            // The episode's log line comes with the first ask bgpd accepts.
            w.asked = false;
            Reapply::Failed { at: now }
        };
    }
    if ok {
        actions.push(Action::RefreshBgp);
    }
    None
}

/// Decide, at `now`, which VIPs go out or back; push the asks. Returns the
/// next deadline: a retry, a ceiling's slot, the time a configured VIP's
/// writer goes silent while its backend is down, or the time bgpd's view
/// is due to show what its configuration now says.
pub(super) fn advance(state: &mut State, now: Millis, actions: &mut Vec<Action>) -> Option<Millis> {
    let repair = state.config.mode == Mode::Repair;
    if !repair {
        state.withdrawals.clear();
        return None;
    }
    // Without bgpd's configuration nothing can be planned or confirmed.
    let intent = state.intent.as_ref()?;
    let mut keys: BTreeSet<(TableId, Prefix)> = state.withdrawals.keys().copied().collect();
    keys.extend(
        state
            .backends
            .keys()
            .filter(|k| state.config.withdraw.contains(&k.1))
            .copied(),
    );
    for p in intent.withdraw_listed() {
        let t = state.config.table;
        if intent.withdrawn_by_ribbridge(t, p) {
            keys.insert((t, *p));
        }
    }
    let mut deadline: Option<Millis> = None;
    let mut wake = |at: Millis| deadline = Some(deadline.map_or(at, |d| d.min(at)));
    let (rate, burst) = (state.config.heal_rate_per_s, state.config.heal_burst);
    for key in keys {
        let in_bgpd = intent.withdrawn_by_ribbridge(key.0, &key.1);
        let configured = state.config.withdraw.contains(&key.1);
        let backend = state.backends.get(&key).copied().unwrap_or_default();
        let writer = state.writers.get(&key);
        let writer_state = writer.map_or(WriterState::Unknown, |w| w.state(&state.config, now));
        let address_bad = state.config.require_address && !state.address_usable(&key.1);
        let out_why = if !configured || !backend.down() || writer_state == WriterState::Alive {
            None
        } else if writer_state == WriterState::Silent {
            Some(WithdrawWhy::WriterSilent)
        } else if address_bad {
            Some(WithdrawWhy::AddressUnusable)
        } else {
            None
        };
        let back_why = if !configured {
            Some(WithdrawWhy::NotConfigured)
        } else if backend.up() {
            Some(WithdrawWhy::BackendUp)
        } else if writer_state == WriterState::Alive {
            Some(WithdrawWhy::WriterBack)
        } else {
            None
        };
        // A configured VIP whose backend is down beside a live writer: the
        // writer's silence is the moment to look again.
        if configured && backend.down() && writer_state == WriterState::Alive {
            if let Some(at) = writer.and_then(|w| w.silent_at(&state.config)) {
                wake(at);
            }
        }
        let w = match state.withdrawals.get_mut(&key) {
            None => {
                let decided = match (out_why, in_bgpd, back_why) {
                    (Some(why), _, _) => Withdrawal::new(true, why, now),
                    (None, true, Some(why)) => Withdrawal::new(false, why, now),
                    (None, true, None) => Withdrawal {
                        apply: Reapply::Applied { at: now },
                        asked: true,
                        ..Withdrawal::new(true, WithdrawWhy::Found, now)
                    },
                    (None, false, _) => continue,
                };
                state.withdrawals.entry(key).or_insert(decided)
            }
            Some(w) => {
                match (w.out, out_why, back_why) {
                    (true, _, Some(why)) => *w = Withdrawal::new(false, why, now),
                    (false, Some(why), _) => *w = Withdrawal::new(true, why, now),
                    _ => {}
                }
                w
            }
        };
        if w.out == in_bgpd {
            // bgpd's configuration says so; bgpd applies it after its
            // route-map delay timer and its coalescing, which no event
            // shows: its view is read again then, and every grace while
            // it still sends a VIP taken out. The episode ends with a view
            // taken after that, once put back.
            w.apply = Reapply::Idle;
            let due = state.intent_at + intent.route_map_delay_ms + state.config.bgp_grace_ms;
            let view_at = state.bgp_view_at;
            let every = state.config.bgp_grace_ms.max(1);
            if now < due {
                wake(due);
            } else if !w.out {
                if view_at.is_some_and(|t| t >= due) {
                    state.withdrawals.remove(&key);
                } else {
                    actions.push(Action::RefreshBgp);
                    wake(now + every);
                }
            } else if state
                .peers
                .iter()
                .any(|p| p.established && p.advertised.contains(&key.1))
            {
                if view_at.is_none_or(|t| t + every <= now) {
                    actions.push(Action::RefreshBgp);
                }
                wake(now + every);
            }
            continue;
        }
        // Some(true): ask through the ceiling; Some(false): the ceiling's
        // slot came, ask now.
        let ask = match w.apply {
            Reapply::Idle => Some(true),
            Reapply::InFlight => None,
            Reapply::Slot { at } if now >= at => Some(false),
            Reapply::Slot { at } => {
                wake(at);
                None
            }
            Reapply::Applied { at } | Reapply::Failed { at } => {
                let retry = at.saturating_add(WITHDRAW_RETRY_MS);
                if now >= retry {
                    Some(true)
                } else {
                    wake(retry);
                    None
                }
            }
        };
        let admitted = match ask {
            None => continue,
            Some(false) => Ok(()),
            Some(true) => state.ceiling.admit(rate, burst, now),
        };
        match admitted {
            Ok(()) => {
                actions.push(Action::Withdraw {
                    table: key.0,
                    prefix: key.1,
                    out: w.out,
                    why: w.why,
                    first: !w.asked,
                });
                w.apply = Reapply::InFlight;
                w.asked = true;
            }
            Err(at) => {
                w.apply = Reapply::Slot { at };
                wake(at);
            }
        }
    }
    deadline
}
