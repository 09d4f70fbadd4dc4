//! Pure translations into the core's vocabulary: the I/O tasks' events into
//! the core's [`Event`]s, and the settings into the core's configuration
//! ([`core_config`]) and the VIPs it reports (`configured`).
//!
//! Contract: no I/O, no clock; one input event gives zero or more core
//! events. Kept apart from the loop so the mapping is unit-tested and the
//! core never depends on wire types.

use std::collections::HashSet;

use crate::config::{NodeRole, Settings};
use crate::frr::ZapiEvent;
use crate::kernel::{KernelEvent, Route, RouteSet};
use crate::model::{Prefix, TableId};
use crate::reconcile::{self, Event, KernelEntry, KernelFacts};

/// The core's view of a kernel route.
pub fn facts(route: &Route) -> KernelFacts {
    KernelFacts {
        protocol: route.protocol,
        nexthops: u32::try_from(route.ecmp_legs()).unwrap_or(u32::MAX),
    }
}

/// A kernel event as core events.
pub fn kernel(ev: &KernelEvent) -> Vec<Event> {
    match ev {
        KernelEvent::RouteAdded { route } | KernelEvent::RouteChanged { new: route, .. } => {
            vec![Event::KernelRoute {
                table: route.table,
                prefix: route.prefix,
                route: Some(facts(route)),
            }]
        }
        KernelEvent::RouteRemoved { route } => vec![Event::KernelRoute {
            table: route.table,
            prefix: route.prefix,
            route: None,
        }],
        KernelEvent::Reasserted { route } => vec![Event::KernelReasserted {
            table: route.table,
            prefix: route.prefix,
        }],
        KernelEvent::AddressAdded { prefix, usable, .. } => vec![Event::KernelAddress {
            prefix: *prefix,
            present: true,
            usable: *usable,
        }],
        KernelEvent::AddressRemoved { prefix, .. } => vec![Event::KernelAddress {
            prefix: *prefix,
            present: false,
            usable: false,
        }],
        KernelEvent::LinkUp { .. } | KernelEvent::LinkDown { .. } => vec![],
        KernelEvent::Resynced { routes, .. } => routes.iter().map(kernel_synced).collect(),
    }
}

/// The routes after a kernel resync as the core's one event (the daemon
/// calls it directly, to drop the route list before the core builds its
/// state from the entries).
pub fn kernel_synced(routes: &RouteSet) -> Event {
    Event::KernelSynced {
        routes: routes
            .iter()
            .map(|r| KernelEntry {
                table: r.table,
                prefix: r.prefix,
                facts: facts(&r),
            })
            .collect(),
    }
}

/// Tracks one ZAPI session's view so that its end-of-dump becomes one
/// [`Event::ZebraSynced`] with the whole set.
#[derive(Debug, Default)]
pub struct ZapiView {
    table: TableId,
    /// What zebra redistributes now: a hash set, since ZAPI adds and
    /// deletes one route at a time (~25 bytes a prefix at its load, where a
    /// `BTreeSet` filled in order takes 40-46); sorted only into the
    /// [`Event::ZebraSynced`] of an end of dump.
    prefixes: HashSet<Prefix>,
}

impl ZapiView {
    /// A view of the redistribution of `table`.
    pub fn new(table: TableId) -> ZapiView {
        ZapiView {
            table,
            prefixes: HashSet::new(),
        }
    }

    /// A ZAPI event as core events.
    pub fn apply(&mut self, ev: &ZapiEvent) -> Vec<Event> {
        match ev {
            ZapiEvent::Connected {
                release: r, mode, ..
            } => {
                self.prefixes.clear();
                vec![Event::ZebraUp {
                    release: *r,
                    table_mode: *mode,
                }]
            }
            ZapiEvent::RouteAdd { route } => {
                self.prefixes.insert(route.prefix);
                vec![Event::ZebraRoute {
                    table: self.table,
                    prefix: route.prefix,
                    present: true,
                }]
            }
            ZapiEvent::RouteDel { route, .. } => {
                self.prefixes.remove(&route.prefix);
                vec![Event::ZebraRoute {
                    table: self.table,
                    prefix: route.prefix,
                    present: false,
                }]
            }
            ZapiEvent::Synced { .. } => vec![Event::ZebraSynced {
                table: self.table,
                prefixes: self.prefixes.iter().copied().collect(),
            }],
            ZapiEvent::Disconnected { .. } => {
                self.prefixes.clear();
                vec![Event::ZebraDown]
            }
            ZapiEvent::Undecodable { .. } => vec![],
        }
    }
}

/// The core's configuration from the settings.
pub fn core_config(s: &Settings, node: &NodeRole) -> reconcile::Config {
    reconcile::Config {
        mode: node.mode,
        grace_ms: node.grace_ms,
        bgp_grace_ms: node.bgp_grace_ms,
        max_attempts: node.max_attempts,
        heal_rate_per_s: node.heal_rate,
        heal_burst: node.heal_burst,
        forget_after_ms: node.forget_after_secs.saturating_mul(1_000),
        heal_addresses: node.heal_addresses,
        require_address: node.require_address,
        writer_silent_ticks: node.writer_silent_ticks,
        writer_interval_ms: node.writer_interval_ms,
        flap_pairs: node.flap_pairs,
        flap_window_ms: node.flap_window_secs.saturating_mul(1_000),
        vips: s.vips.clone(),
        table: node.table,
        withdraw: node
            .probes
            .iter()
            .filter(|p| p.withdraw)
            .map(|p| p.prefix)
            .collect(),
        ..reconcile::Config::default()
    }
}

/// The configured VIPs, in the table `table` they are reported in.
pub(super) fn configured(s: &Settings, table: TableId) -> Vec<(TableId, Prefix)> {
    s.vips.iter().map(|p| (table, *p)).collect()
}

#[cfg(test)]
mod tests {
    //! Every translation, with the edge cases the owner relies on: routes
    //! of other tables and non-VIP routes reach the core, which ignores
    //! them; a re-dump is the whole view; a stale delete after a reconnect
    //! leaves zebra's synced view; frames that did not decode and link
    //! events are no core events.

    use super::*;
    use crate::frr::ZapiRoute;
    use crate::kernel::{Nexthop, ResyncReason};
    use crate::model::{Release, TableMode};
    use crate::reconcile::{self, Config, State};

    const VIP: &str = "192.0.2.10/32";
    const OTHER: &str = "192.0.2.20/32";

    fn p(s: &str) -> Prefix {
        s.parse().expect("prefix")
    }

    /// A kube-vip route (protocol 248) with `legs` ECMP legs.
    fn route(table: TableId, prefix: &str, legs: u32) -> Route {
        let legs = (0..legs).map(|i| Nexthop::leg(None, i + 1)).collect();
        Route::vip(table, p(prefix), legs)
    }

    fn zroute(prefix: &str) -> ZapiRoute {
        ZapiRoute::sample(31, p(prefix), Vec::new())
    }

    fn frr_release(major: u16, minor: u16) -> Release {
        Release::new(major, minor)
    }

    fn connected() -> ZapiEvent {
        ZapiEvent::Connected {
            release: frr_release(10, 7),
            mode: TableMode::TableDirect,
            table: 198,
        }
    }

    fn synced() -> ZapiEvent {
        ZapiEvent::Synced {
            routes: 0,
            dropped_stale: 0,
        }
    }

    fn zebra_route(prefix: &str, present: bool) -> Event {
        Event::ZebraRoute {
            table: 198,
            prefix: p(prefix),
            present,
        }
    }

    fn zebra_synced(prefixes: &[&str]) -> Event {
        Event::ZebraSynced {
            table: 198,
            prefixes: prefixes.iter().map(|s| p(s)).collect(),
        }
    }

    #[test]
    fn facts_count_the_legs_that_forward() {
        let r = route(198, VIP, 2);
        assert_eq!(
            facts(&r),
            KernelFacts {
                protocol: 248,
                nexthops: 2
            }
        );
        // A blackhole names `lo` as its device but forwards nothing.
        let blackhole = Route {
            kind: crate::kernel::types::RTN_BLACKHOLE,
            ..route(198, VIP, 1)
        };
        assert_eq!(facts(&blackhole).nexthops, 0);
    }

    /// The core's event for `prefix` in table `table`: `route` its facts,
    /// `None` when the kernel holds it no more.
    fn kernel_route(table: TableId, prefix: &str, route: Option<KernelFacts>) -> Event {
        Event::KernelRoute {
            table,
            prefix: p(prefix),
            route,
        }
    }

    #[test]
    fn route_events_become_kernel_routes() {
        let add = KernelEvent::RouteAdded {
            route: route(198, VIP, 1),
        };
        // A change reports the route as it is now: here a second leg.
        let change = KernelEvent::RouteChanged {
            old: Box::new(route(198, VIP, 1)),
            new: route(198, VIP, 2),
        };
        let del = KernelEvent::RouteRemoved {
            route: route(198, VIP, 2),
        };
        let two_legs = KernelFacts {
            protocol: 248,
            nexthops: 2,
        };
        for (ev, now) in [
            (add, Some(facts(&route(198, VIP, 1)))),
            (change, Some(two_legs)),
            (del, None),
        ] {
            assert_eq!(kernel(&ev), vec![kernel_route(198, VIP, now)], "{ev:?}");
        }
    }

    #[test]
    fn a_realm_only_replace_is_a_reassertion_not_a_change() {
        let beat = KernelEvent::Reasserted {
            route: Route {
                realm: Some(2),
                ..route(198, VIP, 1)
            },
        };
        assert_eq!(
            kernel(&beat),
            vec![Event::KernelReasserted {
                table: 198,
                prefix: p(VIP),
            }]
        );
    }

    #[test]
    fn addresses_come_and_go_and_links_are_no_core_events() {
        let add = KernelEvent::AddressAdded {
            ifindex: 1,
            prefix: p(VIP),
            len: 32,
            usable: true,
        };
        let del = KernelEvent::AddressRemoved {
            ifindex: 1,
            prefix: p(VIP),
            len: 32,
        };
        assert_eq!(
            kernel(&add),
            vec![Event::KernelAddress {
                prefix: p(VIP),
                present: true,
                usable: true,
            }]
        );
        assert_eq!(
            kernel(&del),
            vec![Event::KernelAddress {
                prefix: p(VIP),
                present: false,
                usable: false,
            }]
        );
        for link in [
            KernelEvent::LinkUp {
                ifindex: 2,
                name: "eth0".into(),
            },
            KernelEvent::LinkDown {
                ifindex: 2,
                name: "eth0".into(),
            },
        ] {
            assert_eq!(kernel(&link), vec![], "{link:?}");
        }
    }

    #[test]
    fn a_resync_is_the_whole_view_even_when_empty() {
        let ev = KernelEvent::Resynced {
            reason: ResyncReason::Overrun,
            routes: Some(vec![route(198, VIP, 1), route(198, OTHER, 3)].into()),
        };
        assert_eq!(
            kernel(&ev),
            vec![Event::KernelSynced {
                routes: vec![
                    KernelEntry {
                        table: 198,
                        prefix: p(VIP),
                        facts: facts(&route(198, VIP, 1)),
                    },
                    KernelEntry {
                        table: 198,
                        prefix: p(OTHER),
                        facts: facts(&route(198, OTHER, 3)),
                    },
                ],
            }]
        );
        // An empty table after a resync clears the core's mirror: the
        // event must still come.
        let empty = KernelEvent::Resynced {
            reason: ResyncReason::Timer,
            routes: Some(RouteSet::default()),
        };
        assert_eq!(kernel(&empty), vec![Event::KernelSynced { routes: vec![] }]);
    }

    /// Routes of unwatched tables, and at the router routes that are not a
    /// configured VIP, translate as they are; the core drops them.
    #[test]
    fn other_tables_and_non_vip_routes_are_ignored_by_the_core() {
        let mut node = State::new(Config::default(), 0);
        for e in kernel(&KernelEvent::RouteAdded {
            route: route(254, VIP, 1),
        }) {
            assert_eq!(e, kernel_route(254, VIP, Some(facts(&route(254, VIP, 1)))));
            assert_eq!(reconcile::step(&mut node, e, 10), vec![]);
        }
        assert!(node.vips.is_empty(), "{:?}", node.vips);

        let mut router = reconcile::RouterJoin::new([254], [p(VIP)], 0);
        for e in kernel(&KernelEvent::Resynced {
            reason: ResyncReason::Startup,
            routes: Some(vec![route(254, VIP, 2), route(254, "10.0.0.0/8", 1)].into()),
        }) {
            router.step(e, 10);
        }
        let keys: Vec<_> = router.vips().keys().copied().collect();
        assert_eq!(keys, vec![p(VIP)], "only the configured VIP");
        assert_eq!(router.vips()[&p(VIP)].state, reconcile::Class::Advertised);
    }

    #[test]
    fn a_session_dump_becomes_one_synced_view() {
        let mut v = ZapiView::new(198);
        assert_eq!(
            v.apply(&connected()),
            vec![Event::ZebraUp {
                release: Release::new(10, 7),
                table_mode: TableMode::TableDirect,
            }]
        );
        assert_eq!(
            v.apply(&ZapiEvent::RouteAdd { route: zroute(VIP) }),
            vec![zebra_route(VIP, true)]
        );
        v.apply(&ZapiEvent::RouteAdd {
            route: zroute(OTHER),
        });
        // An add is an upsert: the same route again is still one route.
        v.apply(&ZapiEvent::RouteAdd { route: zroute(VIP) });
        assert_eq!(v.apply(&synced()), vec![zebra_synced(&[VIP, OTHER])]);
        // Live changes after the dump.
        assert_eq!(
            v.apply(&ZapiEvent::RouteDel {
                route: zroute(OTHER),
                stale: false
            }),
            vec![zebra_route(OTHER, false)]
        );
        assert_eq!(v.apply(&synced()), vec![zebra_synced(&[VIP])]);
    }

    /// zebra restarted without OTHER: the client drops it as stale once the
    /// new dump is complete. The synced view must not carry it over.
    #[test]
    fn a_stale_delete_after_a_reconnect_leaves_the_view() {
        let mut v = ZapiView::new(198);
        v.apply(&connected());
        v.apply(&ZapiEvent::RouteAdd { route: zroute(VIP) });
        v.apply(&ZapiEvent::RouteAdd {
            route: zroute(OTHER),
        });
        v.apply(&synced());
        assert_eq!(
            v.apply(&ZapiEvent::Disconnected {
                reason: "zebra closed the session".into(),
                retry_in_ms: 100,
            }),
            vec![Event::ZebraDown]
        );
        v.apply(&connected());
        v.apply(&ZapiEvent::RouteAdd { route: zroute(VIP) });
        assert_eq!(
            v.apply(&ZapiEvent::RouteDel {
                route: zroute(OTHER),
                stale: true
            }),
            vec![zebra_route(OTHER, false)]
        );
        assert_eq!(
            v.apply(&ZapiEvent::Synced {
                routes: 1,
                dropped_stale: 1
            }),
            vec![zebra_synced(&[VIP])]
        );
    }

    #[test]
    fn a_delete_of_a_route_never_seen_is_harmless() {
        let mut v = ZapiView::new(198);
        v.apply(&connected());
        assert_eq!(
            v.apply(&ZapiEvent::RouteDel {
                route: zroute(VIP),
                stale: true
            }),
            vec![zebra_route(VIP, false)]
        );
        assert_eq!(v.apply(&synced()), vec![zebra_synced(&[])]);
    }

    /// A frame that did not decode is no event and changes nothing; a
    /// session that ended forgets its routes (the next dump rebuilds them).
    #[test]
    fn undecodable_frames_and_ended_sessions() {
        let mut v = ZapiView::new(198);
        v.apply(&connected());
        v.apply(&ZapiEvent::RouteAdd { route: zroute(VIP) });
        assert_eq!(
            v.apply(&ZapiEvent::Undecodable {
                command: 31,
                reason: "body too short for the prefix".into(),
            }),
            vec![]
        );
        assert_eq!(v.apply(&synced()), vec![zebra_synced(&[VIP])]);
        v.apply(&ZapiEvent::Disconnected {
            reason: "connection refused".into(),
            retry_in_ms: 1_000,
        });
        assert_eq!(v.apply(&synced()), vec![zebra_synced(&[])]);
        // A reconnect starts from nothing too.
        v.apply(&ZapiEvent::RouteAdd {
            route: zroute(OTHER),
        });
        v.apply(&connected());
        assert_eq!(v.apply(&synced()), vec![zebra_synced(&[])]);
    }

    #[test]
    fn the_view_names_the_table_it_was_made_for() {
        let mut v = ZapiView::new(200);
        assert_eq!(
            v.apply(&ZapiEvent::RouteAdd { route: zroute(VIP) }),
            vec![Event::ZebraRoute {
                table: 200,
                prefix: p(VIP),
                present: true
            }]
        );
        assert_eq!(
            v.apply(&synced()),
            vec![Event::ZebraSynced {
                table: 200,
                prefixes: [p(VIP)].into(),
            }]
        );
    }
}
