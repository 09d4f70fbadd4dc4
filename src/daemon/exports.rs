//! What a role that reads a kernel table exports of its VIPs' routes (the
//! node and the router): each VIP's ECMP legs (`ribbridge_ecmp_nexthops`,
//! a log line when they change) and the route kept for `/status`'s next
//! hops, both bounded by the VIPs with series.
//!
//! Contract: told every kernel event and resync the owner receives, with
//! which routes are the role's VIPs; it exports and keeps, nothing else.

use std::collections::{BTreeSet, HashMap};

use crate::kernel::{KernelEvent, Route, RouteSet};
use crate::model::{Prefix, TableId};
use crate::telemetry;

/// The routes and legs of the VIPs with series.
#[derive(Debug)]
pub(super) struct RouteExports {
    /// The routes of the VIPs with series only, for `/status`'s next hops
    /// (bounded like `legs`; the others show none). Heal actions do not
    /// read it: they ask the watcher's mirror, the one full copy.
    routes: HashMap<(TableId, Prefix), Route>,
    /// Last exported ECMP legs per VIP with series (only they log a change;
    /// the others' legs are in the mirror and `/status`, not kept twice).
    legs: HashMap<(TableId, Prefix), u32>,
    /// Which VIPs have per-VIP series (bounded; a forgotten VIP's are
    /// removed and its slot reused).
    pub series: telemetry::VipSeries,
    /// The configured VIPs: 0 legs once the kernel is read and no route.
    configured: Vec<(TableId, Prefix)>,
}

impl RouteExports {
    /// Exports for the `configured` VIPs and at most `max_detailed` others.
    pub fn new(configured: Vec<(TableId, Prefix)>, max_detailed: usize) -> RouteExports {
        RouteExports {
            routes: HashMap::new(),
            legs: HashMap::new(),
            series: telemetry::VipSeries::new(configured.clone(), max_detailed),
            configured,
        }
    }

    /// A route's change, when `is_vip` says it is one of the role's VIPs
    /// (a re-assertion counted whatever the route).
    pub fn route(&mut self, ev: &KernelEvent, is_vip: impl Fn(&Route) -> bool) {
        if matches!(ev, KernelEvent::Reasserted { .. }) {
            telemetry::kernel_reassertion();
        }
        match ev {
            KernelEvent::RouteAdded { route }
            | KernelEvent::RouteChanged { new: route, .. }
            | KernelEvent::Reasserted { route }
                if is_vip(route) =>
            {
                self.keep_hops(route);
                let n = super::translate::facts(route).nexthops;
                self.ecmp(route.table, route.prefix, n);
            }
            KernelEvent::RouteRemoved { route } if is_vip(route) => {
                self.routes.remove(&(route.table, route.prefix));
                self.ecmp(route.table, route.prefix, 0);
            }
            _ => {}
        }
    }

    /// A resync's whole route list. Gone since the last dump, or configured
    /// and never seen: 0 legs, now that the kernel has been read. Only what
    /// the resync changed moves: a VIP present before and after must not
    /// flicker to 0 legs in between. The candidates are the VIPs with
    /// series (the others export nothing), so no set of every route is
    /// built beside the event's list.
    pub fn resync(&mut self, routes: &RouteSet, is_vip: impl Fn(&Route) -> bool) {
        let mut gone: BTreeSet<(TableId, Prefix)> = self
            .routes
            .keys()
            .copied()
            .chain(self.configured.iter().copied())
            .collect();
        // One pass over the list (each item is a route built from the
        // mirror's compact form): present VIPs export their legs.
        for r in routes.iter() {
            if !is_vip(&r) {
                continue;
            }
            gone.remove(&(r.table, r.prefix));
            self.ecmp(r.table, r.prefix, super::translate::facts(&r).nexthops);
            self.keep_hops(&r);
        }
        for (t, p) in gone {
            self.routes.remove(&(t, p));
            self.ecmp(t, p, 0);
        }
    }

    /// A forgotten VIP: its series go and free their slot, its route and
    /// legs are no longer kept.
    pub fn forget(&mut self, key: (TableId, Prefix)) {
        self.series.forget(key.0, &key.1);
        self.routes.remove(&key);
        self.legs.remove(&key);
    }

    /// A VIP's legs as a person names them (none when its route is not kept).
    pub fn hops(&self, table: TableId, prefix: Prefix) -> Vec<String> {
        self.routes
            .get(&(table, prefix))
            .map(next_hops)
            .unwrap_or_default()
    }

    /// Keep a VIP's route for `/status`'s next hops if it has series.
    fn keep_hops(&mut self, route: &Route) {
        let key = (route.table, route.prefix);
        if self.series.admit(key.0, &key.1) {
            match self.routes.get_mut(&key) {
                Some(r) => r.clone_from(route),
                None => {
                    self.routes.insert(key, route.clone());
                }
            }
        }
    }

    /// Export a VIP's ECMP legs; log when the count changes (at the router
    /// this is "how many nodes serve the VIP").
    fn ecmp(&mut self, table: TableId, prefix: Prefix, n: u32) {
        if !self.series.admit(table, &prefix) {
            // Past the series limit the change is in /status, not in the
            // log: a dump of 100 000 VIPs would otherwise log 100 000 lines
            // (and this map would hold a count for each).
            return;
        }
        telemetry::ecmp_nexthops(&prefix, table, n);
        let old = self.legs.insert((table, prefix), n);
        if old.unwrap_or(0) != n {
            tracing::info!(%prefix, table, nexthops = n, "VIP ECMP legs");
        }
    }
}

/// A kernel resync, counted and logged; its whole route list, when it
/// comes with one (startup, after a full channel), is the role's to read.
/// Without one, the differences before it already told the role.
pub(super) fn resynced(reason: crate::kernel::ResyncReason, routes: Option<&RouteSet>) {
    telemetry::kernel_resync(reason.label());
    match routes {
        Some(routes) => tracing::info!(
            reason = reason.label(),
            routes = routes.len(),
            "kernel mirror resynced"
        ),
        None => tracing::info!(
            reason = reason.label(),
            "kernel mirror resynced; its differences were the change"
        ),
    }
}

/// A route's legs as a person names them: the gateway, else the device index.
pub(super) fn next_hops(r: &Route) -> Vec<String> {
    r.nexthops
        .iter()
        .map(|n| match (n.gateway, n.oif) {
            (Some(g), _) => g.to_string(),
            (None, Some(oif)) => format!("dev if{oif}"),
            (None, None) => "-".to_string(),
        })
        .collect()
}
