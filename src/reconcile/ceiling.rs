//! The node-wide ceiling on heal actions ([`Ceiling`]): a rate and a burst
//! on the core's clock.
//!
//! Contract: every heal action, fast or graced, and every change of bgpd's
//! configuration the core asks, passes it; an action it holds back gets a
//! slot of its own, so a mass drift is paced in order without asking again.

use serde::{Deserialize, Serialize};

use super::vocab::Millis;

/// The node-wide ceiling on heal actions: a rate and a burst (a generic
/// cell rate algorithm on the core's clock). A held-back action gets its
/// own slot in the queue, so a mass drift is paced, in order, without
/// re-asking at every wake-up.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ceiling {
    /// The theoretical time the next action would be due at the rate.
    #[serde(skip)]
    pub(super) tat: Millis,
    /// Actions held back by the ceiling since the start.
    pub deferred: u64,
}

impl Ceiling {
    /// The time between two actions at `rate` a second (at least 1 ms).
    fn interval(rate: u32) -> Millis {
        1_000 / Millis::from(rate.clamp(1, 1_000))
    }

    /// The earliest time an action may run when the next one is due at
    /// `tat` at `rate`: `burst` actions (at least one) fit before it.
    fn earliest(tat: Millis, rate: u32, burst: u32) -> Millis {
        tat.saturating_sub(Self::interval(rate).saturating_mul(Millis::from(burst.max(1)) - 1))
    }

    /// An action now: `Ok` when the ceiling admits it, else the time of
    /// the slot reserved for it (a later call must not ask again).
    pub(super) fn admit(&mut self, rate: u32, burst: u32, now: Millis) -> Result<(), Millis> {
        let tat = self.tat.max(now);
        let at = Self::earliest(tat, rate, burst);
        self.tat = tat + Self::interval(rate);
        if at <= now {
            Ok(())
        } else {
            self.deferred += 1;
            Err(at)
        }
    }

    /// An action now only if the ceiling admits it without waiting.
    pub(super) fn try_admit(&mut self, rate: u32, burst: u32, now: Millis) -> bool {
        let tat = self.tat.max(now);
        if Self::earliest(tat, rate, burst) <= now {
            self.tat = tat + Self::interval(rate);
            true
        } else {
            false
        }
    }

    /// The ceiling holds actions back now (no action would run at once).
    pub fn binding(&self, rate: u32, burst: u32, now: Millis) -> bool {
        Self::earliest(self.tat, rate, burst) > now
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ceiling_admits_a_burst_then_one_an_interval_in_reserved_slots() {
        // 10 a second (100 ms apart), 3 at once.
        let mut c = Ceiling::default();
        for _ in 0..3 {
            assert_eq!(c.admit(10, 3, 1_000), Ok(()));
        }
        assert!(c.binding(10, 3, 1_000));
        assert!(!c.try_admit(10, 3, 1_000), "no slot at once");
        assert_eq!(c.admit(10, 3, 1_000), Err(1_100), "the next slot");
        assert_eq!(c.deferred, 1);
        // The slot at 1 100 is reserved: the next free one is at 1 200.
        assert!(!c.try_admit(10, 3, 1_100));
        assert!(c.try_admit(10, 3, 1_200));
        assert!(!c.binding(10, 3, 1_400));
    }

    #[test]
    fn a_burst_of_zero_is_a_burst_of_one() {
        let mut c = Ceiling::default();
        assert_eq!(c.admit(10, 0, 0), Ok(()));
        assert_eq!(c.admit(10, 0, 50), Err(100));
        assert_eq!(Ceiling::earliest(1_000, 10, 0), 1_000);
        assert_eq!(Ceiling::earliest(1_000, 10, 4), 700);
        assert_eq!(Ceiling::earliest(100, 1, 1_000), 0, "saturates at zero");
    }
}
