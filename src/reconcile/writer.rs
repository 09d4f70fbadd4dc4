//! A VIP's writer (kube-vip's routing-table loop) as the kernel shows it
//! ([`Writer`]): its beats, the cadence learnt from them, its silence, and
//! its withdrawals, from which flapping is counted.
//!
//! Contract: the bookkeeping of one writer from the times it is given; the
//! configuration ([`Config`]) names its tick and limits when set. No clock:
//! what is alive or silent is said at a `now` argument.

use serde::{Deserialize, Serialize};

use super::vocab::{Config, Millis};

/// The most withdrawals a writer's record keeps: `flap_pairs` is at most
/// one less.
pub const MAX_FLAP_PAIRS: u32 = WITHDRAWALS as u32 - 1;

/// The withdrawals a writer keeps, newest first.
const WITHDRAWALS: usize = 8;

/// A VIP's writer (kube-vip's routing-table loop) as the kernel shows it:
/// one realm-toggling replace per healthy tick (kube-vip >= 1.2.2; on IPv6,
/// which keeps no realm, every replace is announced all the same). Kept
/// only for VIPs re-asserted while the daemon watched, until the VIP is
/// forgotten. When the route goes, the writer withdrew it: the withdrawal
/// is kept (flapping is counted from them) and the cadence starts anew
/// with the next add (a writer that withdrew is not silent).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Writer {
    /// When the last beat came.
    pub last_ms: Millis,
    /// Beats seen since the route was added (or first re-asserted).
    pub beats: u64,
    /// The last intervals between beats, newest first (0: not yet seen).
    intervals: [Millis; WRITER_INTERVALS],
    /// The times it withdrew the route, newest first (None: not yet).
    withdrawals: [Option<Millis>; WITHDRAWALS],
    /// The cadence it had before its last withdrawal: its tick while the
    /// route is away (a new cadence is learned after the next add).
    pub(super) tick_before: Option<Millis>,
}

/// kube-vip's `backend_health_check_interval` when it is not set (and
/// OpenShift's setting): the writer's tick when none is known.
pub(super) const KUBE_VIP_TICK_MS: Millis = 5_000;

/// How many intervals the learned cadence looks at: the longest of them
/// (a slow backend check delays a tick) is the cadence.
const WRITER_INTERVALS: usize = 4;

/// What the core can say of a writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WriterState {
    /// Re-asserted within its silence limit.
    Alive,
    /// No re-assertion for `writer_silent_ticks` of its ticks.
    Silent,
    /// No cadence known: fewer than three beats seen, none configured and
    /// none learnt before a restart or a withdrawal (an older kube-vip that
    /// never re-asserts, a static route). Never guessed.
    Unknown,
}

impl WriterState {
    /// The snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            WriterState::Alive => "alive",
            WriterState::Silent => "silent",
            WriterState::Unknown => "unknown",
        }
    }
}

impl Writer {
    /// A beat at `now`. A beat after the writer went silent is its
    /// return (a restart), not a tick: the cadence starts anew, the old one
    /// kept as its tick meanwhile (a restart's gap taken as a tick made
    /// the next `capacity_lost` wait 12-15 s for a 1 s writer).
    pub(super) fn beat(&mut self, now: Millis, config: &Config) {
        if self.silent_at(config).is_some_and(|at| now >= at) {
            self.tick_before = self.cadence(config).or(self.tick_before);
            self.intervals = [0; WRITER_INTERVALS];
            self.beats = 0;
        }
        if self.beats > 0 {
            self.intervals.rotate_right(1);
            self.intervals[0] = now.saturating_sub(self.last_ms).max(1);
        }
        self.last_ms = now;
        self.beats = self.beats.saturating_add(1);
    }

    /// The route went at `now`: a withdrawal; the cadence starts anew.
    pub(super) fn withdrew(&mut self, now: Millis, config: &Config) {
        self.tick_before = self.cadence(config).or(self.tick_before);
        self.withdrawals.rotate_right(1);
        self.withdrawals[0] = Some(now);
        self.intervals = [0; WRITER_INTERVALS];
        self.beats = 0;
    }

    /// Withdrawals within the flap window before `now`.
    pub fn flaps(&self, config: &Config, now: Millis) -> u32 {
        let since = now.saturating_sub(config.flap_window_ms);
        let n = self
            .withdrawals
            .iter()
            .flatten()
            .filter(|t| **t > since)
            .count();
        u32::try_from(n).unwrap_or(u32::MAX)
    }

    /// More than `flap_pairs` withdrawals within the window.
    pub fn flapping(&self, config: &Config, now: Millis) -> bool {
        self.flaps(config, now) > config.flap_pairs.min(MAX_FLAP_PAIRS)
    }

    /// When the flapping ends without another withdrawal: the oldest one
    /// that makes it leaves the window (None: not flapping).
    pub(super) fn flap_ends_at(&self, config: &Config) -> Option<Millis> {
        let k = usize::try_from(config.flap_pairs.min(MAX_FLAP_PAIRS)).unwrap_or(0);
        self.withdrawals[k].map(|t| t + config.flap_window_ms)
    }

    /// The writer's tick: the configured one, or the longest of the last
    /// intervals once two are known.
    pub fn cadence(&self, config: &Config) -> Option<Millis> {
        config.writer_interval_ms.or_else(|| {
            let known = self.intervals.iter().filter(|i| **i > 0).count();
            (known >= 2).then(|| self.intervals.iter().copied().max().unwrap_or(0))
        })
    }

    /// When the writer turns silent (None: no cadence known). Until a new
    /// cadence is learnt, a writer that beats again after a restart or a
    /// withdrawal keeps its old tick: killed within two ticks of its
    /// return, it is silent all the same, not unknown (a restart does not
    /// change kube-vip's interval). A route back without a beat yet has no
    /// writer known to keep it: unknown.
    pub fn silent_at(&self, config: &Config) -> Option<Millis> {
        let before = (self.beats > 0).then_some(self.tick_before).flatten();
        self.cadence(config).or(before).map(|c| {
            self.last_ms + c.saturating_mul(Millis::from(config.writer_silent_ticks.max(1))) + 1
        })
    }

    /// Alive, silent or unknown at `now`.
    pub fn state(&self, config: &Config, now: Millis) -> WriterState {
        match self.silent_at(config) {
            None => WriterState::Unknown,
            Some(at) if now >= at => WriterState::Silent,
            Some(_) => WriterState::Alive,
        }
    }
}
