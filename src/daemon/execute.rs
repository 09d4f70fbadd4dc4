//! Executing the core's actions ([`crate::reconcile::Action`]): one function per
//! action kind, each the one place that kind's logs, metrics and spawned
//! tasks are written. The owner receives the actions from
//! `reconcile::step` and dispatches each here.
//!
//! Contract: nothing here blocks the owner's loop: a heal and a change of
//! bgpd's configuration run in tasks of their own (`heal`), which answer
//! through the results channel ([`Input`]); a bgpd poll is a coalescing
//! trigger ([`PollTrigger`]). What an action changes of the owner's own
//! records (its wake-up, the routes it keeps for `/status`, the VIPs with
//! series) is passed in.

use std::path::PathBuf;

use tokio::sync::mpsc;

use super::exports::RouteExports;
use super::heal;
use super::seam::{Input, PollTrigger};
use crate::config::NodeRole;
use crate::drain::Change;
use crate::kernel::RouteLookup;
use crate::model::{Mode, Prefix, TableId};
use crate::reconcile::{Class, HealAction, Millis, WithdrawWhy};
use crate::telemetry;

/// The handles the actions that start or wake a task need: the results
/// channel the tasks answer on, the vty poller's trigger, the watcher's
/// route lookup, and where FRR and the drain's record are.
#[derive(Debug)]
pub(super) struct Executor {
    results: mpsc::Sender<Input>,
    poll: PollTrigger,
    /// Asks the watcher's mirror for a route at heal time (none at the
    /// bmp vantage, which heals nothing).
    lookup: Option<RouteLookup>,
    frr_dir: PathBuf,
    table: TableId,
    drain_state: PathBuf,
}

impl Executor {
    /// The handles, and what the settings say of FRR and the drain.
    pub(super) fn new(
        s: &NodeRole,
        results: mpsc::Sender<Input>,
        poll: PollTrigger,
        lookup: Option<RouteLookup>,
    ) -> Executor {
        Executor {
            results,
            poll,
            lookup,
            frr_dir: s.frr_dir.clone(),
            table: s.table,
            drain_state: s.drain_state.clone(),
        }
    }

    /// [`Action::RefreshBgp`](crate::reconcile::Action::RefreshBgp): ask the vty
    /// poller for bgpd's view (at most one poll running, one queued).
    pub(super) fn refresh_bgp(&self) {
        self.poll.trigger();
    }

    /// [`Action::Heal`](crate::reconcile::Action::Heal): one heal in a task of its
    /// own, answered with `Event::HealDone`.
    pub(super) fn heal(&self, (table, prefix): (TableId, Prefix), action: HealAction) {
        tracing::warn!(%prefix, table, action = action.name(), "healing");
        heal::spawn(
            heal::Job {
                table,
                prefix,
                action,
                lookup: self.lookup.clone(),
                tables: vec![self.table],
                zebra_vty: self.frr_dir.join("zebra.vty"),
            },
            self.results.clone(),
        );
    }

    /// [`Action::ReapplyDrain`](crate::reconcile::Action::ReapplyDrain): the lost
    /// drain configured again, answered with `Event::DrainReapplied`.
    pub(super) fn reapply_drain(&self) {
        heal::spawn_reconfigure(
            Change::Drain,
            self.frr_dir.clone(),
            self.table,
            self.drain_state.clone(),
            ("", true),
            self.results.clone(),
        );
    }

    /// [`Action::Withdraw`](crate::reconcile::Action::Withdraw): one VIP taken out
    /// of BGP (`out`) or put back, answered with `Event::Withdrew`; `first`:
    /// the episode's first ask (its log line comes with it).
    pub(super) fn withdraw(
        &self,
        (table, prefix): (TableId, Prefix),
        out: bool,
        why: WithdrawWhy,
        first: bool,
    ) {
        heal::spawn_reconfigure(
            if out {
                Change::Withdraw(prefix)
            } else {
                Change::Restore(prefix)
            },
            self.frr_dir.clone(),
            table,
            self.drain_state.clone(),
            (why.text(), first),
            self.results.clone(),
        );
    }

    /// [`Action::DrainLost`](crate::reconcile::Action::DrainLost): the recorded
    /// drain is lost (or no longer): the gauge, and what to do in the log.
    pub(super) fn drain_lost(&self, lost: bool, mode: Mode) {
        telemetry::drain_lost(lost);
        if lost {
            tracing::error!(
                intent = %self.drain_state.display(),
                %mode,
                "the drain recorded by ribbridge drain is lost: bgpd's configuration lacks it \
                 and it is not re-applied (observe mode, an unreadable record, or bgpd refuses it), \
                 so this node advertises its VIPs; end the drain with ribbridge undrain, or fix \
                 what the log names (ribbridge_drain_lost)"
            );
        } else {
            tracing::info!("the drain's intent and bgpd's configuration agree again");
        }
    }
}

/// [`Action::WakeAt`](crate::reconcile::Action::WakeAt): the owner's next
/// deadline, the earliest asked for that is still ahead.
pub(super) fn wake_at(wake: &mut Option<Millis>, at: Millis, now: Millis) {
    if at > now {
        *wake = Some(wake.map_or(at, |w| w.min(at)));
    }
}

/// [`Action::StateChanged`](crate::reconcile::Action::StateChanged): a VIP's
/// reported class changed (`from`, `to`; `drift_ms`: how long a drift that
/// ended lasted). The gauge and the drift counters for a VIP with series
/// (while the views are complete: `ready`), and the log line a person acts
/// on.
pub(super) fn state_changed(
    series: &mut telemetry::VipSeries,
    ready: bool,
    (table, prefix): (TableId, Prefix),
    (from, to): (Class, Class),
    drift_ms: Option<Millis>,
) {
    let exported = series.admit(table, &prefix);
    // While a view is incomplete the gauge says `unknown`; the
    // readiness change publishes every VIP's class.
    if ready && exported {
        telemetry::vip_state(&prefix, table, to);
    }
    if to.is_drift() {
        if exported {
            telemetry::drift(&prefix, to);
        }
        match to {
            Class::Blackhole => tracing::warn!(
                %prefix, table, %from, %to,
                "VIP drift: advertised, but this node cannot serve it: its address is \
                 missing or unusable (a kube-vip restarted while its backend was down, an \
                 IPv6 dadfailed address) or its backend's health probe fails; the router \
                 sends traffic this node drops; check `ribbridge status` (ADDRESS, \
                 BACKEND) and the RibbridgeVIPBlackhole runbook"
            ),
            Class::Unready => tracing::warn!(
                %prefix, table, %from, %to,
                "VIP drift: advertised while its backend's ready probe fails (the \
                 backend drains): new connections reach a backend about to refuse them; \
                 see the RibbridgeVIPUnready runbook"
            ),
            Class::CapacityLost => tracing::warn!(
                %prefix, table, %from, %to,
                "VIP drift: its backend is up but its route is not in the kernel: this \
                 node could serve it and does not; check that kube-vip runs (see the \
                 RibbridgeVIPCapacityLost runbook)"
            ),
            Class::Orphaned => tracing::warn!(
                %prefix, table, %from, %to,
                "VIP drift: advertised, but its writer stopped re-asserting the route: \
                 nobody will withdraw it when the backend fails; check that kube-vip \
                 runs (see the RibbridgeVIPOrphaned runbook)"
            ),
            _ => tracing::warn!(%prefix, table, %from, %to, "VIP drift"),
        }
    } else if to == Class::Unconfigured {
        // The configuration's own state: no drift, but a person
        // must act; said for every VIP with series.
        if exported {
            tracing::warn!(
                %prefix, table, %from, %to,
                "VIP unconfigured: bgpd's configuration does not redistribute its table in its \
                 family; restore the redistribution where FRR's configuration comes from"
            );
        }
    } else if exported || drift_ms.is_some() {
        // Per VIP only for those with series: a first dump of
        // 100 000 VIPs would log 100 000 lines; a drift's end is
        // always logged.
        tracing::info!(%prefix, table, %from, %to, drift_ms, "VIP consistent");
    }
    if let Some(ms) = drift_ms {
        telemetry::drift_ended(ms);
    }
}

/// [`Action::GaveUp`](crate::reconcile::Action::GaveUp): healing a VIP was given
/// up after the bounded attempts (it goes on at the capped backoff).
pub(super) fn gave_up(
    series: &mut telemetry::VipSeries,
    (table, prefix): (TableId, Prefix),
    class: Class,
) {
    if series.admit(table, &prefix) {
        telemetry::heal_given_up(&prefix);
    }
    tracing::error!(%prefix, table, %class, "healing given up after the bounded attempts; the VIP needs an operator");
}

/// [`Action::Forgot`](crate::reconcile::Action::Forgot): the core forgot a
/// discovered VIP; its route kept for `/status` goes too.
pub(super) fn forgot(exports: &mut RouteExports, (table, prefix): (TableId, Prefix)) {
    telemetry::vip_forgotten();
    exports.forget((table, prefix));
    tracing::debug!(%prefix, table, "VIP forgotten: absent from every view past the retention");
}
