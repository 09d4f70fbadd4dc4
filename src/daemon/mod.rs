//! The daemon (`ribbridge run`): wires the I/O tasks to the one owner of
//! state and serves HTTP.
//!
//! Contract: the owner loop ([`owner`]) is the only code that holds the
//! core's state; the kernel watcher, the ZAPI client, the vty poller and the
//! heal executor talk to it only through the bounded channels listed in
//! ARCHITECTURE.md. Every task runs under [`supervise::Supervisor`]: an
//! essential one that ends stops the daemon ([`DaemonError::TaskEnded`]: exit code 4), a
//! restartable one is started again with a backoff; the owner's heartbeat
//! is `/healthz` and systemd's watchdog ([`LIVENESS_BOUND`]). SIGTERM and
//! SIGINT stop everything within a second.
//! The bmp vantage ([`bmp`]) runs no kernel watcher and no FRR task: its
//! input is the routers' BMP sessions.

pub mod bmp;
mod drain_watch;
mod error;
mod execute;
mod exports;
mod frr_tasks;
mod heal;
mod node;
mod notify;
mod owner;
mod probes;
mod record;
mod router;
mod seam;
mod station;
pub mod supervise;
pub mod translate;

pub use error::DaemonError;
pub use translate::core_config;

use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::config::{Role, Settings};
use crate::kernel::{Watcher, WatcherConfig};

/// How long the owner loop may go without a turn before `/healthz` fails
/// (it turns at least once a second when idle; the probes' period is 10 s).
pub const LIVENESS_BOUND: Duration = Duration::from_secs(10);

/// How long the tasks get to stop once the daemon stops (within the second
/// SIGTERM and SIGINT promise); the ones still busy are aborted.
pub const SHUTDOWN_LIMIT: Duration = Duration::from_millis(900);

/// Capacities of the channels into the owner (ARCHITECTURE.md lists them).
pub const KERNEL_CHANNEL: usize = 4096;
/// ZAPI adapter to owner.
pub const FRR_CHANNEL: usize = 1024;
/// Heal results and vty views to owner.
pub const RESULT_CHANNEL: usize = 64;
/// HTTP status requests to owner.
pub const STATUS_CHANNEL: usize = 16;
/// BMP session tasks to owner (decoded messages).
pub const BMP_CHANNEL: usize = 1024;

/// Refuse to start when the connection caps and the daemon's own reserve
/// do not fit under the soft `RLIMIT_NOFILE` limit, read once here: the
/// caps exist so that whoever connects cannot take the descriptors the
/// watcher, ZAPI and vty reconnects need.
fn check_descriptors(s: &Settings) -> Result<(), DaemonError> {
    use nix::sys::resource::{Resource, getrlimit};
    let budget = s.descriptors_needed();
    match getrlimit(Resource::RLIMIT_NOFILE) {
        Ok((soft, hard)) => {
            budget.check(soft, hard)?;
            tracing::info!(
                soft,
                hard,
                http_max_connections = budget.http,
                bmp_max_sessions = budget.bmp,
                reserve = budget.reserve,
                "descriptors: the connection caps fit under the limit"
            );
        }
        // Not seen on Linux; the caps still hold, only the check is lost.
        Err(e) => {
            tracing::warn!(error = %e, "descriptors: cannot read RLIMIT_NOFILE; the connection caps are not checked against it")
        }
    }
    Ok(())
}

/// Run until SIGTERM or SIGINT: what every role shares is started here,
/// then the role's own tasks and its instance of the owner loop (the one
/// place the role is matched).
pub async fn run(s: Settings) -> Result<(), DaemonError> {
    check_descriptors(&s)?;
    let handle = crate::telemetry::install()?;
    let metrics = crate::http::Metrics::new(move || crate::telemetry::render(&handle));
    crate::telemetry::build_info();
    crate::telemetry::frr_info(None, crate::telemetry::UNKNOWN_RELEASE);
    let stop = CancellationToken::new();
    let listener = crate::http::bind(s.listen)
        .await
        .map_err(DaemonError::Http)?;
    tracing::info!(listen = %s.listen, tables = ?s.role.tables(), vantage = %s.vantage(), "ribbridge starting");
    let (kernel_tx, kernel_rx) = mpsc::channel(KERNEL_CHANNEL);
    let (frr_tx, frr_rx) = mpsc::channel(FRR_CHANNEL);
    let (result_tx, result_rx) = mpsc::channel(RESULT_CHANNEL);
    let (status_tx, status_rx) = mpsc::channel(STATUS_CHANNEL);
    let (bmp_tx, bmp_rx) = mpsc::channel(BMP_CHANNEL);
    let (ready_tx, ready_rx) = watch::channel((false, "starting".to_string()));
    let inputs = owner::Inputs {
        kernel: kernel_rx,
        frr: frr_rx,
        results: result_rx,
        status: status_rx,
        bmp: bmp_rx,
    };
    let live = crate::http::Liveness::new(LIVENESS_BOUND);
    let mut tasks = supervise::Supervisor::new();
    let start = Start {
        inputs,
        ready: ready_tx,
        live: live.clone(),
        stop: stop.clone(),
    };
    match &s.role {
        Role::Node(node) => {
            // The kernel watcher opens its socket first: a missing
            // capability fails the start with the watcher's own message.
            let mut watcher = watcher(&s, vec![node.table], None)?;
            let lookup = Some(watcher.lookup());
            spawn_watcher(&mut tasks, watcher, kernel_tx, &stop);
            let poll = seam::PollTrigger::default();
            let (r, p, st) = (result_tx.clone(), poll.clone(), stop.clone());
            frr_tasks::spawn(&mut tasks, node, frr_tx, r, p, st);
            let (path, r, st) = (node.drain_state.clone(), result_tx.clone(), stop.clone());
            tasks.essential("drain state watch", async move {
                drain_watch::run(&path, r, st).await;
                Ok(())
            });
            if !node.probes.is_empty() {
                let list = probes::probes(node.table, &node.probes)?;
                let (r, st) = (result_tx.clone(), stop.clone());
                tasks.restartable("backend probes", move || {
                    let (list, r, st) = (list.clone(), r.clone(), st.clone());
                    Box::pin(async move {
                        probes::run(list, r, st).await;
                        Ok(())
                    })
                });
            }
            let instance = node::NodeInstance::new(&s, node, result_tx, poll, lookup)?;
            start.owner(&mut tasks, instance);
        }
        Role::Router(router) => {
            // Main may hold a million routes the join never reads: the
            // mirror keeps only the configured VIPs'.
            let watcher = watcher(&s, router.tables.clone(), Some(s.vips.clone()))?;
            spawn_watcher(&mut tasks, watcher, kernel_tx, &stop);
            start.owner(&mut tasks, router::RouterInstance::new(&s, router)?);
        }
        Role::Station(station) => {
            // A station reads no kernel and no FRR: its input is the
            // routers' BMP sessions.
            let l = bmp::bind(station.listen).await?;
            tracing::info!(bmp_listen = %station.listen, stale_secs = station.stale_secs, "bmp: station listening");
            let adm = bmp::Admission {
                allow: station.limits.allow.clone(),
                per_address: station.limits.sessions_per_address,
                max_sessions: station.limits.max_sessions,
            };
            let (tx, st) = (bmp_tx, stop.clone());
            tasks.essential("bmp listener", async move {
                bmp::listen(l, adm, tx, st).await;
                Ok(())
            });
            start.owner(&mut tasks, station::StationInstance::new(&s, station));
        }
    }
    {
        let stop = stop.clone();
        let http = crate::http::Endpoint {
            status: status_tx,
            ready: ready_rx,
            live: live.clone(),
        };
        let cap = s.http_max_connections;
        tasks.essential("http", async move {
            crate::http::serve(listener, http, metrics, cap, stop).await;
            Ok(())
        });
    }
    if let Some(period) = notify::watchdog_period() {
        tracing::info!(
            ?period,
            "systemd: watchdog enabled; pinged while the owner loop turns"
        );
        let (l, st) = (live.clone(), stop.clone());
        tasks.essential("systemd watchdog", async move {
            notify::watchdog(l, period, st).await;
            Ok(())
        });
    }
    {
        let stop = stop.clone();
        tasks.essential("log watch", async move {
            crate::logging::watch(stop).await;
            Ok(())
        });
    }
    notify::ready();
    let ended = tokio::select! {
        r = shutdown_signal() => {
            r?;
            tracing::info!("stopping");
            None
        }
        ended = tasks.watch() => Some(ended),
    };
    if let Some(e) = &ended {
        // Not alive and not ready from now on, for whoever probes during
        // the stop.
        live.fail(e.to_string());
    }
    notify::stopping();
    stop.cancel();
    // Everything honours the token; a task still busy after a second is cut.
    if !tasks.shutdown(SHUTDOWN_LIMIT).await {
        tracing::warn!(
            "tasks did not stop within {:.1} s; aborting them",
            SHUTDOWN_LIMIT.as_secs_f64()
        );
    }
    match ended {
        Some(e) => Err(DaemonError::TaskEnded(e)),
        None => Ok(()),
    }
}

/// What every role's owner loop is started with.
struct Start {
    inputs: owner::Inputs,
    ready: watch::Sender<(bool, String)>,
    live: crate::http::Liveness,
    stop: CancellationToken,
}

impl Start {
    /// The owner loop around `instance`, an essential task.
    fn owner<I: owner::Instance + Send + 'static>(
        self,
        tasks: &mut supervise::Supervisor,
        instance: I,
    ) {
        let owner = owner::Owner::new(instance, self.ready, self.live);
        let (inputs, stop) = (self.inputs, self.stop);
        tasks.essential("owner", async move {
            owner.run(inputs, stop).await;
            Ok(())
        });
    }
}

/// The kernel watcher over `tables` (keeping only `prefixes`' routes when
/// given), its socket opened now; the configured VIPs' series, unknown.
fn watcher(
    s: &Settings,
    tables: Vec<crate::model::TableId>,
    prefixes: Option<std::collections::BTreeSet<crate::model::Prefix>>,
) -> Result<Watcher, DaemonError> {
    // Every configured VIP has its series before the endpoint can answer
    // (the first scrape): unknown until the views are complete, in the
    // table it is reported in (the lowest watched). A station's series are
    // per router: they appear when a router does.
    let home = tables.iter().min().copied().unwrap_or_default();
    for prefix in &s.vips {
        crate::telemetry::vip_unknown(prefix, home);
        crate::telemetry::ecmp_unknown(prefix, home);
    }
    Ok(Watcher::new(WatcherConfig {
        tables,
        prefixes,
        resync_period: Duration::from_secs(s.resync_secs),
        ..WatcherConfig::default()
    })?)
}

/// The kernel watcher, an essential task.
fn spawn_watcher(
    tasks: &mut supervise::Supervisor,
    watcher: Watcher,
    tx: mpsc::Sender<crate::kernel::KernelEvent>,
    stop: &CancellationToken,
) {
    let stop = stop.clone();
    tasks.essential("kernel watcher", async move {
        Ok(watcher.run(tx, stop.cancelled_owned()).await?)
    });
}

async fn shutdown_signal() -> Result<(), DaemonError> {
    use tokio::signal::unix::{SignalKind, signal};
    let handler = |kind, signal_name| {
        signal(kind).map_err(|source| DaemonError::Signal {
            signal: signal_name,
            source,
        })
    };
    let mut term = handler(SignalKind::terminate(), "SIGTERM")?;
    let mut int = handler(SignalKind::interrupt(), "SIGINT")?;
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
    Ok(())
}

/// Build the join once, without a daemon (`ribbridge status --oneshot`).
/// Waits at most `wait` for what the views show to last its grace.
pub async fn oneshot(
    s: &Settings,
    wait: std::time::Duration,
) -> Result<crate::status::StatusDoc, DaemonError> {
    match &s.role {
        Role::Node(node) => node::oneshot(s, node, wait).await,
        Role::Router(_) | Role::Station(_) => Err(DaemonError::OneshotNotNode {
            vantage: s.vantage(),
        }),
    }
}
