//! The BMP station's instance: its state is the pure [`Station`]; its
//! receive side is the sessions' inputs and the stale routers' deadline;
//! its execute side publishes what the station decided (`bmp::publish`:
//! counted, its notes logged) and its readiness.
//!
//! Contract: nothing else holds the station; it reads no kernel, no FRR.

use super::bmp::{BmpInput, Station};
use super::owner::{Ctx, Instance};
use crate::config::{Settings, StationRole};
use crate::reconcile::Millis;

/// The station's instance.
#[derive(Debug)]
pub(super) struct StationInstance(Station);

impl StationInstance {
    /// A station counting the configured VIPs.
    pub fn new(s: &Settings, role: &StationRole) -> StationInstance {
        StationInstance(Station::new(
            s.vips.iter().copied(),
            role.stale_secs,
            &role.limits,
        ))
    }

    /// Publish the outputs and the readiness of what just changed.
    fn publish(&mut self, ctx: &mut Ctx) {
        super::bmp::publish(self.0.take_outputs());
        let why = self.0.not_ready();
        ctx.publish_ready(why.is_none(), why.unwrap_or_default());
    }
}

impl Instance for StationInstance {
    fn start(&mut self, ctx: &mut Ctx) {
        let why = self.0.not_ready();
        ctx.publish_ready(why.is_none(), why.unwrap_or_default());
    }

    fn on_bmp(&mut self, input: BmpInput, ctx: &mut Ctx) {
        self.0.apply(input, ctx.now());
        self.publish(ctx);
    }

    /// A stale router's time is up.
    fn on_deadline(&mut self, ctx: &mut Ctx) {
        self.0.expire(ctx.now());
        self.publish(ctx);
    }

    fn deadline(&self) -> Option<Millis> {
        self.0.next_deadline()
    }

    fn status(&self, ctx: &Ctx) -> crate::status::StatusDoc {
        let zero = ctx.zero_unix_ms;
        let routers = self.0.status(&|ms| zero.saturating_add(ms));
        crate::status::station_document(routers, ctx.not_ready())
    }
}
