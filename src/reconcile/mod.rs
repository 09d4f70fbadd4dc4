//! The pure core: joins the kernel, zebra and bgpd views per VIP, classifies
//! every difference, and decides what to do about it.
//!
//! Contract (ARCHITECTURE.md, rule 1): no I/O, no tokio, no clock. Time is
//! the `now` argument (milliseconds on the daemon's monotonic clock). The
//! only input is [`Event`], serde-serialisable, so a run recorded as JSON
//! lines replays through [`step`](fn@step) to the same classes and actions. The only
//! output is [`Action`]s; the daemon executes them and feeds results back as
//! events.
//!
//! Classification is instantaneous ([`classify`](fn@classify)); a *drift* is a non-
//! consistent class that has persisted for the grace period, and, when it
//! depends on bgpd's polled view, was confirmed by a view taken after the
//! grace expired. Until then the VIP keeps its previous reported state, so
//! normal convergence (zebra ~10 ms, bgpd ~100 ms) never counts as drift.
//!
//! Intent: bgpd's configuration, read as [`crate::model::intent::Intent`],
//! says what should happen. A VIP its policy denies is `filtered`
//! (consistent); a table its family does not redistribute at all is
//! `unconfigured` (reported after one more read, never healed). A route the
//! policy permits but bgpd does not send is a drift as before, after the
//! grace, and after a configuration change not before bgpd's route-map
//! delay timer has run (convergence, not drift). An intent that cannot be
//! evaluated (`unknown`) leaves the classification as it was without one.
//!
//! Ceiling: every heal action, fast or graced, passes a node-wide rate and
//! burst ([`Ceiling`]); an action held back gets a slot in order.
//!
//! Fast paths (repair mode only): a recognised trigger whose outcome zebra
//! has already shown (8.4's import dropped after a replace, seen as zebra's
//! ZAPI withdrawal; 10.7's and 10.3's route lost to an address, seen as
//! zebra still lacking the route past its normal reaction) is healed at
//! once, reported as no drift and counted as no attempt. The same events on
//! another release or table mode take the graced path. Healing never stops
//! while a proven action exists: a new trigger re-arms the attempts, and
//! after the bounded attempts the give-up is reported once while healing
//! goes on at the capped backoff.
//!
//! Layout, one concern a file, each with its contract and its unit tests:
//! - `vocab`: the vocabulary (events, actions, classes, configuration,
//!   state, the heal ceiling, a heal's result);
//! - `step`: the dispatch: one event applied to the state, the VIPs it can
//!   change re-evaluated, the next wake-up named;
//! - `classify`: the instantaneous class of a VIP from the joined views and
//!   the intent ([`classify`](fn@classify), [`filtered_by`]);
//! - `evaluate`: grace and confirmation: when an observed class becomes
//!   the reported one, bgpd's startup and route-map delays;
//! - `heal`: the heal decision for a drift (backoff, give-up, the ceiling's
//!   slot), a heal's result, re-arming on a new trigger;
//! - `fast_path`: FRR's bugs healed at once on their recognised triggers;
//! - `forget`: a discovered VIP gone from every view, after the retention;
//! - `merge`: a full view merged into the VIP map, its nodes kept full;
//! - `policy`: the table from (class, release, table mode) to a proven
//!   heal action;
//! - `drain`: the drain's record joined with bgpd's configuration (when
//!   every VIP is `drained`, when a lost drain is re-applied).
//!
//! Everything is re-exported here: callers name `crate::reconcile::X`,
//! never a submodule.
//!
//! Cases: `tests/data/reconcile/<case>/` holds runs recorded on the lab's
//! real FRR releases (`scripts/record-cases.sh`); `tests/reconcile_cases.rs`
//! replays each through [`step`](fn@step) and compares every action and the final
//! classes with the case's expectations.

#![deny(missing_docs)]

mod classify;
mod drain;
mod evaluate;
mod fast_path;
mod forget;
mod heal;
mod merge;
mod policy;
mod reimport;
mod step;
mod vocab;
mod withdraw;

pub use classify::{Local, classify, filtered_by, policy_unknown};
pub use drain::{DRAIN_SETTLE_MS, DrainFile, DrainTrack, REAPPLY_RETRY_MS, Reapply};
pub use evaluate::{Pending, pending};
pub use policy::{HealAction, heal_policy};
pub use step::step;
pub use vocab::{
    Action, Backend, BackendState, Ceiling, Class, Config, DEFAULT_HEAL_BURST,
    DEFAULT_HEAL_RATE_PER_S, Event, HealResult, HealState, KernelEntry, KernelFacts,
    MAX_FLAP_PAIRS, Millis, ProbeKind, State, Vip, Writer, WriterState,
};
pub use withdraw::{WITHDRAW_RETRY_MS, WithdrawWhy, Withdrawal};

#[cfg(test)]
mod fixture;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod intent_tests;
