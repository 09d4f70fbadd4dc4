//! The router's instance: its kernel read for the configured VIPs. Its
//! state is [`RouterJoin`], the router's reduced join; its receive side
//! turns the kernel watcher's events into the join's events and the routes'
//! exports (`exports`); its execute side is the one action the join has, a
//! VIP's change of state, exported and logged (`execute::state_changed`).
//!
//! Contract: nothing else holds the router's join; it reads no FRR and
//! heals nothing.

use super::error::DaemonError;
use super::execute;
use super::exports::RouteExports;
use super::owner::{Ctx, Instance};
use super::record::Recorder;
use crate::config::{RouterRole, Settings};
use crate::kernel::KernelEvent;
use crate::reconcile::{Action, Event, Millis, RouterJoin};
use crate::telemetry;

/// The router's state and exports.
#[derive(Debug)]
pub(super) struct RouterInstance {
    join: RouterJoin,
    exports: RouteExports,
    record: Recorder,
}

impl RouterInstance {
    /// A fresh router: every configured VIP unknown until its kernel is read.
    pub fn new(s: &Settings, role: &RouterRole) -> Result<RouterInstance, DaemonError> {
        let join = RouterJoin::new(role.tables.iter().copied(), s.vips.iter().copied(), 0);
        let configured = join.vips().iter().map(|(p, v)| (v.table, *p)).collect();
        Ok(RouterInstance {
            join,
            exports: RouteExports::new(configured, 0),
            record: Recorder::open(s)?,
        })
    }

    fn feed(&mut self, ev: Event, ctx: &mut Ctx) {
        telemetry::event("kernel");
        self.record.write(ctx.now(), &ev);
        let was_ready = self.join.ready();
        for a in self.join.step(ev, ctx.now()) {
            if let Action::StateChanged {
                table,
                prefix,
                from,
                to,
                drift_ms,
            } = a
            {
                let ready = self.join.ready();
                execute::state_changed(
                    &mut self.exports.series,
                    ready,
                    (table, prefix),
                    (from, to),
                    drift_ms,
                );
            }
        }
        let ready = self.join.ready();
        if ctx.publish_ready(ready, "kernel mirror not synced yet".to_string()) && !was_ready {
            for (prefix, v) in self.join.vips() {
                telemetry::vip_state(prefix, v.table, v.state);
            }
        }
    }
}

impl Instance for RouterInstance {
    fn start(&mut self, ctx: &mut Ctx) {
        ctx.publish_ready(false, "kernel mirror not synced yet".to_string());
    }

    fn on_kernel(&mut self, ev: KernelEvent, ctx: &mut Ctx) {
        if let KernelEvent::Resynced { reason, routes } = ev {
            super::exports::resynced(reason, routes.as_ref());
            if let Some(routes) = routes {
                let vips = self.join.vips();
                self.exports
                    .resync(&routes, |r| vips.contains_key(&r.prefix));
                let synced = super::translate::kernel_synced(&routes);
                self.feed(synced, ctx);
            }
            return;
        }
        // The watcher's mirror keeps only the configured VIPs' routes.
        let vips = self.join.vips();
        self.exports.route(&ev, |r| vips.contains_key(&r.prefix));
        for e in super::translate::kernel(&ev) {
            self.feed(e, ctx);
        }
    }

    fn on_deadline(&mut self, _ctx: &mut Ctx) {}

    fn deadline(&self) -> Option<Millis> {
        None
    }

    fn stop(&mut self) {
        self.record.flush();
    }

    fn status(&self, ctx: &Ctx) -> crate::status::StatusDoc {
        crate::status::router_document(
            &self.join,
            &|t, p| self.exports.hops(t, p),
            ctx.zero_unix_ms,
            ctx.not_ready(),
        )
    }
}
