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
mod frr_tasks;
mod heal;
mod notify;
mod owner;
mod probes;
mod seam;
pub mod supervise;
pub mod translate;

pub use error::DaemonError;
pub use translate::core_config;

use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::config::Settings;
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

/// Run until SIGTERM or SIGINT.
pub async fn run(s: Settings) -> Result<(), DaemonError> {
    check_descriptors(&s)?;
    let handle = crate::telemetry::install()?;
    let metrics = crate::http::Metrics::new(move || crate::telemetry::render(&handle));
    crate::telemetry::build_info(None, crate::telemetry::UNKNOWN_RELEASE);
    let station = s.vantage == crate::model::Vantage::Bmp;
    // Every configured VIP has its series before the endpoint can answer
    // (the first scrape): unknown until the views are complete. A station's
    // series are per router: they appear when a router does.
    for (table, prefix) in translate::configured(&s).into_iter().filter(|_| !station) {
        crate::telemetry::vip_unknown(&prefix, table);
        crate::telemetry::ecmp_unknown(&prefix, table);
    }
    let stop = CancellationToken::new();
    let listener = crate::http::bind(s.listen)
        .await
        .map_err(DaemonError::Http)?;
    tracing::info!(listen = %s.listen, frr_dir = %s.frr_dir.display(), tables = ?s.tables, mode = ?s.mode, vantage = %s.vantage, "ribbridge starting");

    // The kernel watcher opens its socket here, before anything else: a
    // missing capability fails the start with the watcher's own message.
    // A BMP station reads no kernel; it binds its own listener instead.
    let mut watcher = if station {
        None
    } else {
        Some(Watcher::new(WatcherConfig {
            tables: s.tables.clone(),
            prefixes: translate::mirrored_prefixes(&s),
            resync_period: Duration::from_secs(s.resync_secs),
            ..WatcherConfig::default()
        })?)
    };
    let bmp_listener = match s.bmp_listen.filter(|_| station) {
        Some(addr) => {
            let l = bmp::bind(addr).await?;
            tracing::info!(bmp_listen = %addr, stale_secs = s.bmp_stale_secs, "bmp: station listening");
            Some(l)
        }
        None => None,
    };
    let lookup = watcher.as_mut().map(Watcher::lookup);
    let (kernel_tx, kernel_rx) = mpsc::channel(KERNEL_CHANNEL);
    let (frr_tx, frr_rx) = mpsc::channel(FRR_CHANNEL);
    let (result_tx, result_rx) = mpsc::channel(RESULT_CHANNEL);
    let (status_tx, status_rx) = mpsc::channel(STATUS_CHANNEL);
    let (bmp_tx, bmp_rx) = mpsc::channel(BMP_CHANNEL);
    let (ready_tx, ready_rx) = watch::channel((false, "starting".to_string()));
    let poll = seam::PollTrigger::default();

    let live = crate::http::Liveness::new(LIVENESS_BOUND);
    let mut tasks = supervise::Supervisor::new();
    if let Some(watcher) = watcher {
        let stop = stop.clone();
        tasks.essential("kernel watcher", async move {
            Ok(watcher.run(kernel_tx, stop.cancelled_owned()).await?)
        });
    }
    if let Some(l) = bmp_listener {
        let adm = bmp::Admission {
            allow: s.bmp.allow.clone(),
            per_address: s.bmp.sessions_per_address,
            max_sessions: s.bmp.max_sessions,
        };
        let (tx, stop) = (bmp_tx, stop.clone());
        tasks.essential("bmp listener", async move {
            bmp::listen(l, adm, tx, stop).await;
            Ok(())
        });
    }
    // The router vantage reads only its kernel: no ZAPI, no vty.
    if s.vantage == crate::model::Vantage::Node {
        let (r, p, st) = (result_tx.clone(), poll.clone(), stop.clone());
        frr_tasks::spawn(&mut tasks, &s, frr_tx, r, p, st);
        let (path, r, st) = (s.drain_state.clone(), result_tx.clone(), stop.clone());
        tasks.essential("drain state watch", async move {
            drain_watch::run(&path, r, st).await;
            Ok(())
        });
        if !s.probes.is_empty() {
            let list = probes::probes(s.node_table(), &s.probes)?;
            let (r, st) = (result_tx.clone(), stop.clone());
            tasks.restartable("backend probes", move || {
                let (list, r, st) = (list.clone(), r.clone(), st.clone());
                Box::pin(async move {
                    probes::run(list, r, st).await;
                    Ok(())
                })
            });
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
    let owner = owner::Owner::new(&s, result_tx, poll, ready_tx, lookup, live.clone())?;
    let inputs = owner::Inputs {
        kernel: kernel_rx,
        frr: frr_rx,
        results: result_rx,
        status: status_rx,
        bmp: bmp_rx,
    };
    let ostop = stop.clone();
    tasks.essential("owner", async move {
        owner.run(inputs, ostop).await;
        Ok(())
    });
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
    owner::oneshot(s, wait).await
}
