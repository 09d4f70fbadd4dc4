//! Executes the core's heal actions, off the owner loop, and reports each
//! result back as [`Event::HealDone`]; and the changes of bgpd's
//! configuration the core asks ([`spawn_reconfigure`]: a lost drain's
//! re-apply, a VIP's withdrawal), reported as [`Event::DrainReapplied`] or
//! [`Event::Withdrew`].
//!
//! Contract: a kernel action acts only on the route the mirror holds when
//! the action runs (asked of the watcher, the one copy); without one,
//! nothing is written. The kernel writer
//! itself refuses tables that are not watched. Address actions touch only
//! the VIP's own address on `lo`.

use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::mpsc;

use super::seam::{Input, Source};
use crate::drain::Change;
use crate::frr::{VtyClient, VtyError};
use crate::kernel::{KernelError, KernelWriter, Route, RouteLookup};
use crate::model::{Prefix, TableId};
use crate::reconcile::{Event, HealAction};
use crate::telemetry;

/// One heal to execute.
#[derive(Debug)]
pub struct Job {
    /// The VIP's table.
    pub table: TableId,
    /// The VIP.
    pub prefix: Prefix,
    /// What to do.
    pub action: HealAction,
    /// Asks the watcher's mirror for the VIP's route (None: no watcher,
    /// so no kernel action can run).
    pub lookup: Option<RouteLookup>,
    /// The watched tables (the writer refuses any other).
    pub tables: Vec<TableId>,
    /// zebra's vty socket (for `ip import-table`).
    pub zebra_vty: PathBuf,
}

/// How long a heal action may take, all its steps included: beyond it the
/// action is reported failed (`timed out`), never left in flight. The
/// slowest action (the address cycle: two settle pauses and three kernel
/// writes, each bounded by the writer's receive timeout) takes ~0.3 s.
pub const HEAL_DEADLINE: std::time::Duration = std::time::Duration::from_secs(10);

/// Run `job` in its own task with a deadline; the result goes to
/// `results`, whatever happens to the task: done, failed, timed out or
/// panicked (a supervisor task awaits it and always reports).
pub fn spawn(job: Job, results: mpsc::Sender<Input>) {
    tokio::spawn(async move {
        let (table, prefix, action) = (job.table, job.prefix, job.action);
        let mut worker = tokio::spawn(execute(job));
        let outcome = match tokio::time::timeout(HEAL_DEADLINE, &mut worker).await {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => Err(HealError::Task(e)),
            Err(_) => {
                worker.abort();
                Err(HealError::TimedOut(HEAL_DEADLINE))
            }
        };
        let ok = outcome.is_ok();
        let result = match &outcome {
            Ok(()) => "ok",
            Err(HealError::TimedOut(_)) => "timeout",
            Err(_) => "error",
        };
        telemetry::heal_action(action.name(), result);
        let detail = match outcome {
            Ok(()) => {
                tracing::info!(%prefix, table, action = action.name(), "heal action done");
                String::new()
            }
            Err(e) => {
                tracing::warn!(%prefix, table, action = action.name(), error = %e, "heal action failed");
                e.to_string()
            }
        };
        let ev = Event::HealDone {
            table,
            prefix,
            action,
            ok,
            detail,
        };
        let _ = results.send(Input::Core(ev, Source::Heal)).await;
    });
}

/// The vty timeout of a drain's re-apply (its read of bgpd's configuration
/// and its commands each), well inside [`HEAL_DEADLINE`].
const REAPPLY_VTY_TIMEOUT: Duration = Duration::from_secs(5);

/// Apply `change` to bgpd's configuration (the core's re-apply of a lost
/// drain, or a VIP's withdrawal), in its own task with [`HEAL_DEADLINE`];
/// the answer goes to `results` whatever happens to the task. `drain_state`
/// names the drain's record in its log lines; `first`: the episode's first
/// ask of a withdrawal (logged at warn; a retry at debug).
pub fn spawn_reconfigure(
    change: Change,
    frr_dir: PathBuf,
    table: TableId,
    drain_state: PathBuf,
    (why, first): (&'static str, bool),
    results: mpsc::Sender<Input>,
) {
    tokio::spawn(async move {
        let mut worker = tokio::spawn(async move {
            crate::drain::reconfigure(&frr_dir, &[table], change, REAPPLY_VTY_TIMEOUT).await
        });
        let outcome = match tokio::time::timeout(HEAL_DEADLINE, &mut worker).await {
            Ok(Ok(r)) => r.map_err(|e| e.to_string()),
            Ok(Err(e)) => Err(format!("the task ended: {e}")),
            Err(_) => {
                worker.abort();
                Err(format!("timed out after {HEAL_DEADLINE:?}"))
            }
        };
        let ok = outcome.is_ok();
        let intent = drain_state.display();
        let event = match change {
            Change::Drain => {
                match outcome {
                    // bgpd had the entry again (the core asks once more
                    // when a read of its configuration did not confirm
                    // the last one in time): nothing to count.
                    Ok(0) => tracing::debug!(
                        %intent,
                        "drain: bgpd's configuration holds the drain; nothing to re-apply"
                    ),
                    Ok(commands) => {
                        telemetry::drain_reapplied();
                        tracing::warn!(
                            %intent,
                            commands,
                            "bgpd's configuration lost the drain that ribbridge recorded (a reload \
                             of FRR's configuration rewrote it): re-applied; ribbridge undrain ends the drain"
                        );
                    }
                    Err(why) => tracing::error!(
                        %intent,
                        %why,
                        "the drain recorded by ribbridge drain cannot be re-applied: bgpd's configuration \
                         lacks it, so this node advertises its VIPs; fix what the error names, or end the \
                         drain with ribbridge undrain (ribbridge_drain_lost); retried every second"
                    ),
                }
                Event::DrainReapplied { ok }
            }
            Change::Withdraw(prefix) | Change::Restore(prefix) => {
                let out = matches!(change, Change::Withdraw(_));
                match outcome {
                    Ok(commands) if commands > 0 => telemetry::vip_withdrawal(out),
                    Ok(_) => {}
                    Err(ref e) => tracing::error!(
                        %prefix,
                        error = %e,
                        out,
                        "the VIP's withdrawal cannot be configured in bgpd (withdraw = true); retried \
                         every two seconds; fix what the error names"
                    ),
                }
                match (out, first && ok) {
                    (true, true) => tracing::warn!(
                        %prefix,
                        why,
                        "VIP withdrawn by ribbridge (withdraw = true): nobody else will take it out of \
                         BGP; it is put back when its backend's health passes or its writer re-asserts"
                    ),
                    (false, true) => {
                        tracing::warn!(%prefix, why, "VIP put back into BGP by ribbridge")
                    }
                    _ => tracing::debug!(%prefix, why, out, ok, "VIP withdrawal asked again"),
                }
                Event::Withdrew {
                    table,
                    prefix,
                    out,
                    ok,
                }
            }
        };
        let _ = results.send(Input::Core(event, Source::Drain)).await;
    });
}

/// Why a heal action failed; the core gets the text as the result detail.
#[derive(Debug, thiserror::Error)]
enum HealError {
    /// zebra's vty refused or could not be reached.
    #[error("zebra.vty: {0}")]
    Vty(#[from] VtyError),
    /// The kernel refused a write.
    #[error(transparent)]
    Kernel(#[from] KernelError),
    /// The route went away before the action ran.
    #[error("{prefix} is not in table {table} any more: nothing to heal there")]
    Gone {
        /// The VIP.
        prefix: Prefix,
        /// Its table.
        table: TableId,
    },
    /// The task running the action died (a panic).
    #[error("heal task: {0}")]
    Task(#[from] tokio::task::JoinError),
    /// The action did not finish within its deadline.
    #[error("timed out after {0:?} (the action was abandoned; the core retries with backoff)")]
    TimedOut(std::time::Duration),
}

async fn execute(job: Job) -> Result<(), HealError> {
    // Failpoint: the action hangs (a lost acknowledgement, a stuck vty).
    if crate::fault::armed("heal-hang", &job.prefix) {
        tracing::warn!(prefix = %job.prefix, "failpoint heal-hang: the heal action never finishes");
        std::future::pending::<()>().await;
    }
    match job.action {
        HealAction::ReimportTable => {
            let n = job.table;
            let zebra = VtyClient::connect(&job.zebra_vty).await?;
            let off = format!("no ip import-table {n}");
            let on = format!("ip import-table {n}");
            Ok(zebra.configure(&[&off, &on]).await?)
        }
        kernel_action => {
            let route = match &job.lookup {
                Some(l) => l.route(job.table, job.prefix).await?,
                None => None,
            };
            let route = route.ok_or(HealError::Gone {
                prefix: job.prefix,
                table: job.table,
            })?;
            let tables = job.tables;
            Ok(
                tokio::task::spawn_blocking(move || kernel_heal(kernel_action, &route, tables))
                    .await??,
            )
        }
    }
}

/// Time between replacing the route and re-adding the address.
const ADDRESS_SETTLE: std::time::Duration = std::time::Duration::from_millis(200);

/// Time between removing the address and replacing the route: zebra must
/// have processed the address's removal (its meta-queue holds work ~10 ms)
/// before the route arrives, or the route is lost as it was at first (the
/// bench's 10.3 runs lost it again about one time in five without it).
const ADDRESS_GONE: std::time::Duration = std::time::Duration::from_millis(30);

fn kernel_heal(action: HealAction, route: &Route, tables: Vec<TableId>) -> Result<(), KernelError> {
    let mut w = KernelWriter::new(tables)?;
    match action {
        HealAction::RealmToggle => w.replace_toggling_realm(route).map(|_| ()),
        HealAction::DeleteAdd => w.delete_then_add(route),
        HealAction::AddressCycle => {
            // 10.3: the address hides the route from zebra. Remove it, make
            // zebra learn the route, put the address back.
            w.remove_address_on_lo(route.prefix)?;
            std::thread::sleep(ADDRESS_GONE);
            let r = w.replace_toggling_realm(route).map(|_| ());
            // zebra must have processed the route before the address comes
            // back (its meta-queue holds work ~10 ms): close together, the
            // address hides the route again (FRRouting/frr#22654). The core
            // verifies the result and retries if this was not enough.
            std::thread::sleep(ADDRESS_SETTLE);
            w.add_address_on_lo(route.prefix)?;
            r
        }
        HealAction::ReimportTable => Ok(()),
    }
}
