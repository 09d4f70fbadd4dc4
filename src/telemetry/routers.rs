//! The per-router series of the BMP station (`ribbridge_router_paths`,
//! `ribbridge_router_stale_paths` and their `_known`), kept here: a
//! forgotten router's series must go.

use super::*;

/// `ribbridge_router_paths` and `ribbridge_router_stale_paths`, kept here
/// rather than in the exporter: the exporter cannot remove a series, and a
/// forgotten router's must go (a stale series would keep a decommissioned
/// router on the dashboard). One map so that both move together.
/// Key: (router, prefix); value: (paths, stale paths), `None` when unknown.
type RouterSeries = BTreeMap<(String, String), Option<(u32, u32)>>;
static ROUTER_PATHS_SERIES: Mutex<RouterSeries> = Mutex::new(BTreeMap::new());

fn router_series() -> MutexGuard<'static, RouterSeries> {
    // A panic elsewhere while holding it left a consistent map: keep using it.
    ROUTER_PATHS_SERIES
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// Paths `router` holds for `prefix`, and of those the stale ones
/// (graceful restart); `None` (its BMP session is down or not synced yet)
/// is unknown: no series, its `_known` at 0, so no comparison fires on a
/// guess and no sum is poisoned.
pub fn router_paths(router: &str, prefix: &Prefix, paths: Option<u32>, stale: Option<u32>) {
    router_series().insert(
        (router.to_string(), prefix.to_string()),
        paths.map(|p| (p, stale.unwrap_or(0))),
    );
}

/// `router` was forgotten: its series are removed.
pub fn router_forgotten(router: &str) {
    router_series().retain(|(r, _), _| r != router);
}

pub(super) fn render_router_paths(out: &mut String) {
    let series = router_series();
    if series.is_empty() {
        return;
    }
    type Pick = fn(&(u32, u32)) -> u32;
    for (name, help, pick) in [
        (
            ROUTER_PATHS,
            "Paths the router holds for the VIP, from its BMP export (one per BGP peer with a post-policy path, or its Loc-RIB); no series while its session is down or not synced (see ribbridge_router_paths_known)",
            (|v: &(u32, u32)| v.0) as Pick,
        ),
        (
            ROUTER_STALE_PATHS,
            "Of ribbridge_router_paths, the paths the router keeps as stale under graceful restart (the peer's session dropped; the router still forwards to them until the restart time or the new session's End-of-RIB); no series exactly when ribbridge_router_paths has none",
            |v: &(u32, u32)| v.1,
        ),
    ] {
        family(out, name, "gauge", help);
        for ((router, prefix), v) in series.iter() {
            if let Some(v) = v {
                let _ = writeln!(
                    out,
                    "{name}{{router=\"{}\",prefix=\"{prefix}\"}} {}",
                    label_value(router),
                    pick(v)
                );
            }
        }
    }
    family(
        out,
        ROUTER_PATHS_KNOWN,
        "gauge",
        "1 when ribbridge_router_paths has a value, 0 while the router's BMP session is down or not synced",
    );
    for ((router, prefix), v) in series.iter() {
        let _ = writeln!(
            out,
            "{ROUTER_PATHS_KNOWN}{{router=\"{}\",prefix=\"{prefix}\"}} {}",
            label_value(router),
            u8::from(v.is_some())
        );
    }
}
