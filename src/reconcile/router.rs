//! The router's reduced join: at the router a VIP is served when its own
//! kernel holds a route to it (FRR installed what the nodes advertise), and
//! its ECMP legs are how many nodes serve it. Nothing is polled, nothing
//! heals, nothing is graced: the kernel's route is the whole answer, so a
//! VIP's state follows it at once.
//!
//! Contract: pure, as the node's core ([`super::step`]): it is told the
//! kernel's events ([`Event::KernelRoute`], [`Event::KernelSynced`]; every
//! other event is not its business) and answers with
//! [`Action::StateChanged`] only. It tracks the configured VIPs alone: the
//! router's main table holds every route of the network.

use std::collections::{BTreeMap, BTreeSet};

use super::event::{Action, Event};
use super::vocab::{Class, Millis};
use crate::model::{Prefix, TableId};

/// The configured VIPs as the router's kernel shows them.
#[derive(Debug, Clone)]
pub struct RouterJoin {
    tables: BTreeSet<TableId>,
    vips: BTreeMap<Prefix, RouterVip>,
    synced: bool,
}

/// One VIP at the router.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouterVip {
    /// The table its route is in (before one is seen: the lowest watched).
    pub table: TableId,
    /// `advertised` (a route is there) or `withdrawn`.
    pub state: Class,
    /// When the state began, on the owner's clock.
    pub since: Millis,
    /// The route's ECMP legs: how many nodes the router sends it to.
    pub legs: u32,
}

impl RouterJoin {
    /// The join over `tables` for the configured `vips`, at `now`.
    pub fn new(
        tables: impl IntoIterator<Item = TableId>,
        vips: impl IntoIterator<Item = Prefix>,
        now: Millis,
    ) -> RouterJoin {
        let tables: BTreeSet<TableId> = tables.into_iter().collect();
        let home = tables.iter().next().copied().unwrap_or_default();
        let vips = vips
            .into_iter()
            .map(|p| {
                let v = RouterVip {
                    table: home,
                    state: Class::Withdrawn,
                    since: now,
                    legs: 0,
                };
                (p, v)
            })
            .collect();
        RouterJoin {
            tables,
            vips,
            synced: false,
        }
    }

    /// The kernel's tables have been read once: every VIP's state is known.
    pub fn ready(&self) -> bool {
        self.synced
    }

    /// The VIPs, by prefix.
    pub fn vips(&self) -> &BTreeMap<Prefix, RouterVip> {
        &self.vips
    }

    /// Apply one event at `now`; the VIPs whose state changed.
    pub fn step(&mut self, ev: Event, now: Millis) -> Vec<Action> {
        let mut actions = Vec::new();
        match ev {
            Event::KernelRoute {
                table,
                prefix,
                route,
            } if self.synced && self.tables.contains(&table) => {
                let legs = route.map(|r| r.nexthops);
                self.set(table, prefix, legs, now, &mut actions);
            }
            Event::KernelSynced { routes } => {
                self.synced = true;
                let present: BTreeMap<Prefix, (TableId, u32)> = routes
                    .iter()
                    .filter(|r| self.tables.contains(&r.table) && self.vips.contains_key(&r.prefix))
                    .map(|r| (r.prefix, (r.table, r.facts.nexthops)))
                    .collect();
                let vips: Vec<(Prefix, TableId)> =
                    self.vips.iter().map(|(p, v)| (*p, v.table)).collect();
                for (prefix, table) in vips {
                    let (table, legs) = match present.get(&prefix) {
                        Some(&(t, n)) => (t, Some(n)),
                        None => (table, None),
                    };
                    self.set(table, prefix, legs, now, &mut actions);
                }
            }
            _ => {}
        }
        actions
    }

    /// A VIP's route is there with `legs` (Some) or not.
    fn set(
        &mut self,
        table: TableId,
        prefix: Prefix,
        legs: Option<u32>,
        now: Millis,
        actions: &mut Vec<Action>,
    ) {
        let Some(v) = self.vips.get_mut(&prefix) else {
            return;
        };
        v.legs = legs.unwrap_or(0);
        let to = if legs.is_some() {
            v.table = table;
            Class::Advertised
        } else {
            Class::Withdrawn
        };
        if v.state != to {
            actions.push(Action::StateChanged {
                table: v.table,
                prefix,
                from: v.state,
                to,
                drift_ms: None,
            });
            v.state = to;
            v.since = now;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reconcile::{KernelEntry, KernelFacts};

    fn p(s: &str) -> Prefix {
        s.parse().expect("prefix")
    }

    fn route(prefix: &str, up: bool) -> Event {
        Event::KernelRoute {
            table: 254,
            prefix: p(prefix),
            route: up.then_some(KernelFacts {
                protocol: 186,
                nexthops: 2,
            }),
        }
    }

    fn changes(a: &[Action]) -> Vec<(Prefix, Class, Class)> {
        a.iter()
            .filter_map(|a| match a {
                Action::StateChanged {
                    prefix, from, to, ..
                } => Some((*prefix, *from, *to)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_vip_follows_the_router_s_kernel_at_once_and_others_are_not_tracked() {
        let vip = p("192.0.2.10/32");
        let mut j = RouterJoin::new([254], [vip], 0);
        assert!(!j.ready());
        // Before the first dump nothing is known: a route changes nothing.
        assert!(j.step(route("192.0.2.10/32", true), 1).is_empty());
        let dump = Event::KernelSynced {
            routes: vec![
                KernelEntry {
                    table: 254,
                    prefix: vip,
                    facts: KernelFacts {
                        protocol: 186,
                        nexthops: 2,
                    },
                },
                KernelEntry {
                    table: 254,
                    prefix: p("198.18.1.0/24"),
                    facts: KernelFacts {
                        protocol: 2,
                        nexthops: 1,
                    },
                },
            ],
        };
        assert_eq!(
            changes(&j.step(dump, 10)),
            [(vip, Class::Withdrawn, Class::Advertised)]
        );
        assert!(j.ready());
        assert_eq!(j.vips().len(), 1, "only the configured VIP is tracked");
        assert_eq!(j.vips()[&vip].legs, 2);
        assert!(j.step(route("198.18.2.0/24", true), 20).is_empty());
        assert_eq!(
            changes(&j.step(route("192.0.2.10/32", false), 30)),
            [(vip, Class::Advertised, Class::Withdrawn)]
        );
        assert_eq!(j.vips()[&vip].since, 30);
        // A route of a table it does not watch is not the VIP's.
        let other = Event::KernelRoute {
            table: 198,
            prefix: vip,
            route: None,
        };
        assert!(j.step(other, 40).is_empty());
        assert!(j.step(Event::Tick, 50).is_empty());
    }
}
