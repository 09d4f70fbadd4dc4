//! Executes the core's heal actions, off the owner loop, and reports each
//! result back as [`Event::HealDone`].
//!
//! Contract: a kernel action acts only on the route the mirror found (the
//! owner passes it in); without one, nothing is written. The kernel writer
//! itself refuses tables that are not watched. Address actions touch only
//! the VIP's own address on `lo`.

use std::path::PathBuf;

use tokio::sync::mpsc;

use super::owner::Input;
use crate::frr::VtyClient;
use crate::kernel::{KernelWriter, Route};
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
    /// The mirror's route for the VIP (None: the kernel has none).
    pub route: Option<Route>,
    /// The watched tables (the writer refuses any other).
    pub tables: Vec<TableId>,
    /// zebra's vty socket (for `ip import-table`).
    pub zebra_vty: PathBuf,
}

/// Run `job` in its own task; the result goes to `results`.
pub fn spawn(job: Job, results: mpsc::Sender<Input>) {
    tokio::spawn(async move {
        let (table, prefix, action) = (job.table, job.prefix, job.action);
        let outcome = execute(job).await;
        let ok = outcome.is_ok();
        telemetry::heal_action(action.name(), if ok { "ok" } else { "error" });
        let detail = match outcome {
            Ok(()) => String::new(),
            Err(e) => {
                tracing::warn!(%prefix, table, action = action.name(), error = %e, "heal action failed");
                e
            }
        };
        let ev = Event::HealDone {
            table,
            prefix,
            action,
            ok,
            detail,
        };
        let _ = results.send(Input::Core(ev, "heal")).await;
    });
}

async fn execute(job: Job) -> Result<(), String> {
    match job.action {
        HealAction::ReimportTable => {
            let n = job.table;
            let zebra = VtyClient::connect(&job.zebra_vty)
                .await
                .map_err(|e| e.to_string())?;
            let off = format!("no ip import-table {n}");
            let on = format!("ip import-table {n}");
            zebra
                .configure(&[&off, &on])
                .await
                .map_err(|e| e.to_string())
        }
        kernel_action => {
            let route = job.route.ok_or_else(|| {
                format!(
                    "{} is not in table {} any more: nothing to heal there",
                    job.prefix, job.table
                )
            })?;
            let tables = job.tables;
            tokio::task::spawn_blocking(move || kernel_heal(kernel_action, &route, tables))
                .await
                .map_err(|e| format!("heal task: {e}"))?
        }
    }
}

/// Time between replacing the route and re-adding the address.
const ADDRESS_SETTLE: std::time::Duration = std::time::Duration::from_millis(200);

fn kernel_heal(action: HealAction, route: &Route, tables: Vec<TableId>) -> Result<(), String> {
    let mut w = KernelWriter::new(tables).map_err(|e| e.to_string())?;
    match action {
        HealAction::RealmToggle => w.replace_toggling_realm(route).map(|_| ()),
        HealAction::DeleteAdd => w.delete_then_add(route),
        HealAction::AddressCycle => {
            // 10.3: the address hides the route from zebra. Remove it, make
            // zebra learn the route, put the address back.
            w.remove_address_on_lo(route.prefix)
                .map_err(|e| e.to_string())?;
            let r = w.replace_toggling_realm(route).map(|_| ());
            // zebra must have processed the route before the address comes
            // back (its meta-queue holds work ~10 ms): close together, the
            // address hides the route again (FRRouting/frr#22654). The core
            // verifies the result and retries if this was not enough.
            std::thread::sleep(ADDRESS_SETTLE);
            w.add_address_on_lo(route.prefix)
                .map_err(|e| e.to_string())?;
            r
        }
        HealAction::ReimportTable => Ok(()),
    }
    .map_err(|e| e.to_string())
}
