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
//! - the vocabulary: `vocab` (classes, configuration, heal actions and
//!   results, the drain's and a withdrawal's records: plain data), `event`
//!   (the events and actions), `vip` (one VIP and its compact layout),
//!   `state` (what the daemon's loop owns), `writer` (a writer's beats,
//!   cadence, silence and withdrawals), `wakeups` (the deadlines),
//!   `ceiling` (the node-wide heal ceiling), `scope` (what a handler leaves
//!   to the dispatch);
//! - `step`: the dispatch: one event routed to its handler, the timers
//!   advanced, the VIPs it can change re-evaluated, the next wake-up named;
//! - the handlers, one per event kind, in the file of their concern:
//!   `kernel_view` (the kernel's routes), `local` (the node's addresses,
//!   writers' beats and backends), `zebra_view` (zebra's session, routes
//!   and table), `intent` (bgpd's configuration read as the intent),
//!   `evaluate` (bgpd's view), `heal` (a heal's result), `drain`,
//!   `withdraw`;
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
//!   every VIP is `drained`, when a lost drain is re-applied);
//! - `withdraw`: a `withdraw = true` VIP taken out of BGP and put back;
//! - `reimport`: a read of the configuration that is a re-import's own
//!   middle, held;
//! - `router`: the router's reduced join ([`RouterJoin`]), its own type: a
//!   configured VIP is `advertised` while the router's kernel holds a route
//!   to it; no view polled, no grace, no heal. The node's core above knows
//!   no router. `replay`: a recorded run through the join it ran.
//!
//! The files import one another in no cycle (`tests/architecture.rs`): the
//! vocabulary uses no handler, a handler no dispatch.
//!
//! Everything is re-exported here: callers name `crate::reconcile::X`,
//! never a submodule.
//!
//! Cases: `tests/data/reconcile/<case>/` holds runs recorded on the lab's
//! real FRR releases (`scripts/record-cases.sh`); `tests/reconcile_cases.rs`
//! replays each through [`step`](fn@step) and compares every action and the final
//! classes with the case's expectations.

#![deny(missing_docs)]

mod ceiling;
mod classify;
mod drain;
mod evaluate;
mod event;
mod fast_path;
mod forget;
mod heal;
mod intent;
mod kernel_view;
mod local;
mod merge;
mod policy;
mod reimport;
mod replay;
mod router;
mod scope;
mod state;
mod step;
mod vip;
mod vocab;
mod wakeups;
mod withdraw;
mod writer;
mod zebra_view;

pub use ceiling::Ceiling;
pub use classify::{Local, classify, filtered_by, policy_unknown};
pub use drain::{DRAIN_SETTLE_MS, REAPPLY_RETRY_MS};
pub use evaluate::{Pending, pending};
pub use event::{Action, Event};
pub use policy::heal_policy;
pub use replay::Replay;
pub use router::{RouterJoin, RouterVip};
pub use state::State;
pub use step::step;
pub use vip::Vip;
pub use vocab::{
    Backend, BackendState, Class, Config, DEFAULT_HEAL_BURST, DEFAULT_HEAL_RATE_PER_S, DrainFile,
    DrainTrack, HealAction, HealResult, HealState, KernelEntry, KernelFacts, Millis, ProbeKind,
    Reapply, WithdrawWhy, Withdrawal,
};
pub use withdraw::WITHDRAW_RETRY_MS;
pub use writer::{MAX_FLAP_PAIRS, Writer, WriterState};

#[cfg(test)]
mod fixture;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod intent_tests;
