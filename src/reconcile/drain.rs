//! The drain as the core knows it: bgpd's configuration (the drain's entry
//! is there or not, [`Event::Drain`](super::Event::Drain)) joined with
//! ribbridge's own record of it, the drain state file (`ribbridge drain`
//! writes it before it touches bgpd; the daemon watches it and reports each
//! change at once, [`Event::DrainFile`](super::Event::DrainFile)).
//!
//! Contract:
//! - Every VIP is `drained`, and nothing heals, from the moment the file
//!   says drained ([`holds`]), before bgpd's configuration is even read
//!   again: a drain and a heal never race.
//! - A recorded drain that bgpd's configuration lacks is *lost* once it is
//!   settled: a read of the configuration after the recording found no
//!   drain (a reload rewrote it), or [`DRAIN_SETTLE_MS`] passed since the
//!   recording (the drain that recorded it never configured bgpd). In
//!   repair mode the core then asks for [`Action::ReapplyDrain`], through
//!   the node-wide ceiling like every heal, and retries a failure after
//!   [`REAPPLY_RETRY_MS`]; the drain holds meanwhile. In observe mode, or
//!   while the re-apply fails, or when the file cannot be read, the drain
//!   is reported lost ([`Action::DrainLost`]) and the VIPs are classified
//!   from the views: they are advertised, and `/status` says so.
//! - Pure like the rest of the core: the time is an argument.

use super::event::Action;
use super::scope::{Next, Scope};
use super::state::State;
use super::vocab::{DrainFile, Millis, Reapply};
use crate::model::Mode;

/// How long `ribbridge drain` has, after recording the drain, to configure
/// bgpd before the core takes the drain for lost and configures it itself
/// (the command configures bgpd right after writing the file, within its
/// vty timeout of at most 10 s; the daemon reads the configuration every
/// second).
pub const DRAIN_SETTLE_MS: Millis = 15_000;

/// The wait before a failed or unconfirmed re-apply is asked again.
pub const REAPPLY_RETRY_MS: Millis = 1_000;

/// Every VIP is `drained`: bgpd's configuration holds the drain, or the
/// file records one that is not lost.
pub(super) fn holds(state: &State) -> bool {
    state.drained || (state.drain.file == DrainFile::Drained && !state.drain.lost)
}

/// The drain read from bgpd's configuration.
pub(super) fn on_drain(state: &mut State, drained: bool) -> Option<Next> {
    on_config(state, drained);
    if drained == state.drained {
        return None;
    }
    state.drained = drained;
    Next::all()
}

/// The drain state file changed: the VIPs whose deadline passed are
/// looked at (the drain's own change is the dispatch's).
pub(super) fn on_file(state: &mut State, file: DrainFile, now: Millis) -> Option<Next> {
    let d = &mut state.drain;
    if d.file == file {
        return None;
    }
    if file == DrainFile::Drained {
        d.recorded_at = now;
        d.read_since = false;
    }
    d.file = file;
    d.reapply = Reapply::Idle;
    Next::only(Scope::Due)
}

/// bgpd's configuration was read: it holds the drain (`drained`) or not.
fn on_config(state: &mut State, drained: bool) {
    let d = &mut state.drain;
    d.config_read = true;
    if drained {
        d.reapply = Reapply::Idle;
    } else if d.file == DrainFile::Drained {
        d.read_since = true;
    }
}

/// The re-apply the core asked for ran: bgpd accepted it (`ok`) or not;
/// when it did, the next read of bgpd's configuration confirms it.
pub(super) fn on_reapplied(
    state: &mut State,
    ok: bool,
    now: Millis,
    actions: &mut Vec<Action>,
) -> Option<Next> {
    let d = &mut state.drain;
    // The file changed meanwhile (an undrain): the answer is stale.
    if d.reapply == Reapply::InFlight {
        if ok {
            d.reapplied += 1;
            d.reapply = Reapply::Applied { at: now };
        } else {
            d.reapply = Reapply::Failed { at: now };
        }
    }
    if ok {
        actions.push(Action::RefreshBgp);
    }
    None
}

/// Decide the re-apply and the lost report at `now`; push the actions.
/// Returns the drain's next deadline, if one is pending.
pub(super) fn advance(state: &mut State, now: Millis, actions: &mut Vec<Action>) -> Option<Millis> {
    let repair = state.config.mode == Mode::Repair;
    let (rate, burst) = (state.config.heal_rate_per_s, state.config.heal_burst);
    let configured = state.drained;
    let d = &mut state.drain;
    let recorded = d.file == DrainFile::Drained && !configured;
    let settle_at = d.recorded_at.saturating_add(DRAIN_SETTLE_MS);
    let settled = recorded && (d.read_since || now >= settle_at);
    let mut deadline = (recorded && !settled).then_some(settle_at);
    if !recorded {
        d.reapply = Reapply::Idle;
    } else if settled && repair {
        let ask = match d.reapply {
            Reapply::Idle => true,
            Reapply::Slot { at } if now >= at => {
                d.reapply = Reapply::InFlight;
                actions.push(Action::ReapplyDrain);
                false
            }
            Reapply::Failed { at } | Reapply::Applied { at }
                if now >= at.saturating_add(REAPPLY_RETRY_MS) =>
            {
                true
            }
            Reapply::Slot { at } => {
                deadline = Some(at);
                false
            }
            Reapply::Failed { at } | Reapply::Applied { at } => {
                deadline = Some(at.saturating_add(REAPPLY_RETRY_MS));
                false
            }
            Reapply::InFlight => false,
        };
        if ask {
            match state.ceiling.admit(rate, burst, now) {
                Ok(()) => {
                    d.reapply = Reapply::InFlight;
                    actions.push(Action::ReapplyDrain);
                }
                Err(at) => {
                    d.reapply = Reapply::Slot { at };
                    deadline = Some(at);
                }
            }
        }
    }
    let lost = d.config_read
        && !configured
        && match d.file {
            DrainFile::Absent => false,
            DrainFile::Unreadable => true,
            // A drain reported lost stays so while its retry is pending:
            // only an accepted re-apply ends the report.
            DrainFile::Drained => {
                settled
                    && (!repair
                        || matches!(d.reapply, Reapply::Failed { .. })
                        || (d.lost
                            && matches!(d.reapply, Reapply::InFlight | Reapply::Slot { .. })))
            }
        };
    if lost != d.lost {
        d.lost = lost;
        actions.push(Action::DrainLost { lost });
    }
    deadline
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reconcile::{Config, Event, step};

    const VIP: &str = "192.0.2.10/32";

    fn state(mode: Mode) -> State {
        let config = Config {
            mode,
            vips: [VIP.parse().expect("prefix")].into(),
            ..Config::default()
        };
        State::new(config, 0)
    }

    /// The daemon reports the intent file's state at `now`.
    fn file(s: &mut State, file: DrainFile, now: Millis) -> Vec<Action> {
        step(s, Event::DrainFile { file }, now)
    }

    fn reapplies(actions: &[Action]) -> usize {
        actions
            .iter()
            .filter(|a| matches!(a, Action::ReapplyDrain))
            .count()
    }

    fn lost(actions: &[Action]) -> Option<bool> {
        actions.iter().find_map(|a| match a {
            Action::DrainLost { lost } => Some(*lost),
            _ => None,
        })
    }

    #[test]
    fn a_recorded_drain_holds_at_once_and_is_not_reapplied_while_the_drain_configures_bgpd() {
        let mut s = state(Mode::Repair);
        step(&mut s, Event::Drain { drained: false }, 0);
        let a = file(&mut s, DrainFile::Drained, 100);
        assert!(holds(&s));
        assert_eq!(reapplies(&a), 0, "{a:?}");
        assert!(
            a.contains(&Action::WakeAt {
                at: 100 + DRAIN_SETTLE_MS
            }),
            "{a:?}"
        );
        // `ribbridge drain` configured bgpd: read back, nothing to do.
        let a = step(&mut s, Event::Drain { drained: true }, 700);
        assert_eq!((reapplies(&a), lost(&a)), (0, None), "{a:?}");
        let a = step(&mut s, Event::Tick, 100 + DRAIN_SETTLE_MS);
        assert_eq!(reapplies(&a), 0, "{a:?}");
        assert!(holds(&s));
    }

    #[test]
    fn a_reload_that_removes_the_drain_is_reapplied_at_once_then_confirmed() {
        let mut s = state(Mode::Repair);
        step(&mut s, Event::Drain { drained: true }, 0);
        file(&mut s, DrainFile::Drained, 10);
        let a = step(&mut s, Event::Drain { drained: false }, 5_000);
        assert_eq!(reapplies(&a), 1, "{a:?}");
        assert!(holds(&s), "the drain holds while it is re-applied");
        let a = step(&mut s, Event::DrainReapplied { ok: true }, 5_020);
        assert_eq!((reapplies(&a), lost(&a)), (0, None), "{a:?}");
        assert!(a.contains(&Action::RefreshBgp), "{a:?}");
        step(&mut s, Event::Drain { drained: true }, 5_100);
        assert_eq!((s.drain.reapplied, s.drain.reapply), (1, Reapply::Idle));
    }

    #[test]
    fn a_failed_reapply_is_reported_lost_and_retried() {
        let mut s = state(Mode::Repair);
        step(&mut s, Event::Drain { drained: true }, 0);
        file(&mut s, DrainFile::Drained, 10);
        step(&mut s, Event::Drain { drained: false }, 100);
        let a = step(&mut s, Event::DrainReapplied { ok: false }, 120);
        assert_eq!(lost(&a), Some(true), "{a:?}");
        assert!(!holds(&s), "a lost drain is not reported drained");
        assert!(a.contains(&Action::WakeAt {
            at: 120 + REAPPLY_RETRY_MS
        }));
        let a = step(&mut s, Event::Tick, 120 + REAPPLY_RETRY_MS);
        assert_eq!(reapplies(&a), 1, "{a:?}");
        let a = step(&mut s, Event::DrainReapplied { ok: true }, 1_200);
        assert_eq!(lost(&a), Some(false), "{a:?}");
    }

    #[test]
    fn observe_mode_reports_a_lost_drain_and_writes_nothing() {
        let mut s = state(Mode::Observe);
        step(&mut s, Event::Drain { drained: true }, 0);
        file(&mut s, DrainFile::Drained, 10);
        let a = step(&mut s, Event::Drain { drained: false }, 100);
        assert_eq!((reapplies(&a), lost(&a)), (0, Some(true)), "{a:?}");
        assert!(!holds(&s));
    }

    #[test]
    fn a_drain_that_never_configured_bgpd_is_completed_after_the_settle_time() {
        let mut s = state(Mode::Repair);
        step(&mut s, Event::Drain { drained: false }, 0);
        file(&mut s, DrainFile::Drained, 10);
        let a = step(&mut s, Event::Tick, 10 + DRAIN_SETTLE_MS - 1);
        assert_eq!(reapplies(&a), 0, "{a:?}");
        let a = step(&mut s, Event::Tick, 10 + DRAIN_SETTLE_MS);
        assert_eq!(reapplies(&a), 1, "{a:?}");
    }

    #[test]
    fn an_unreadable_file_is_lost_and_an_undrain_ends_everything() {
        let mut s = state(Mode::Repair);
        step(&mut s, Event::Drain { drained: false }, 0);
        let a = file(&mut s, DrainFile::Unreadable, 10);
        assert_eq!((reapplies(&a), lost(&a)), (0, Some(true)), "{a:?}");
        let a = file(&mut s, DrainFile::Absent, 20);
        assert_eq!(lost(&a), Some(false), "{a:?}");
        assert!(!holds(&s));
    }

    #[test]
    fn the_ceiling_paces_a_reapply_like_a_heal() {
        let mut s = state(Mode::Repair);
        s.config.heal_rate_per_s = 1;
        s.config.heal_burst = 1;
        // The ceiling's one slot is taken now.
        assert!(s.ceiling.admit(1, 1, 0).is_ok());
        step(&mut s, Event::Drain { drained: true }, 0);
        file(&mut s, DrainFile::Drained, 0);
        let a = step(&mut s, Event::Drain { drained: false }, 10);
        assert_eq!(reapplies(&a), 0, "{a:?}");
        assert_eq!(s.drain.reapply, Reapply::Slot { at: 1_000 });
        let a = step(&mut s, Event::Tick, 1_000);
        assert_eq!(reapplies(&a), 1, "{a:?}");
    }
}
