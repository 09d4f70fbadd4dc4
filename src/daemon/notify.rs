//! systemd's side of supervision: `READY=1` once every task runs,
//! `WATCHDOG=1` while the owner's heartbeat is fresh, `STOPPING=1` on the
//! way out. Outside systemd (no `NOTIFY_SOCKET`) every call does nothing.
//!
//! Contract: the watchdog is pinged at half the unit's `WatchdogSec=` only
//! while [`Liveness::check`] holds: a wedged owner or an ended essential
//! task stops the pings, and systemd kills and restarts the unit
//! (`Restart=on-failure` covers a watchdog timeout).

use std::time::Duration;

use sd_notify::NotifyState;
use tokio_util::sync::CancellationToken;

use crate::http::Liveness;

/// Tell systemd (if it launched us) something; a failure is logged once
/// per call site's caller and otherwise ignored: systemd's own timeout
/// is the judge.
fn send(state: NotifyState<'_>) {
    if let Err(e) = sd_notify::notify(&[state]) {
        tracing::warn!(error = %e, "systemd: notification not sent (NOTIFY_SOCKET)");
    }
}

/// The daemon is up: every task runs.
pub fn ready() {
    send(NotifyState::Ready);
}

/// The daemon is stopping.
pub fn stopping() {
    send(NotifyState::Stopping);
}

/// The unit's watchdog period, when systemd asked for pings.
pub fn watchdog_period() -> Option<Duration> {
    sd_notify::watchdog_enabled()
}

/// The shortest interval between watchdog pings, however short the unit's
/// `WatchdogSec=`.
pub const WATCHDOG_TICK_MIN: Duration = Duration::from_millis(100);

/// Ping the watchdog every `period / 2` while `live` holds, until `stop`.
pub async fn watchdog(live: Liveness, period: Duration, stop: CancellationToken) {
    let mut tick = tokio::time::interval((period / 2).max(WATCHDOG_TICK_MIN));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut withheld = false;
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = tick.tick() => {}
        }
        match live.check() {
            Ok(()) => {
                withheld = false;
                send(NotifyState::Watchdog);
            }
            Err(why) => {
                if !withheld {
                    tracing::error!(%why, "systemd: watchdog ping withheld: systemd restarts the unit at its WatchdogSec");
                }
                withheld = true;
            }
        }
    }
}
