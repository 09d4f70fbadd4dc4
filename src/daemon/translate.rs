//! Pure translations from the I/O tasks' events to the core's [`Event`]s.
//!
//! Contract: no I/O, no clock; one input event gives zero or more core
//! events. Kept apart from the loop so the mapping is unit-tested and the
//! core never depends on wire types.

use std::collections::BTreeSet;

use crate::frr::{Release as FrrRelease, TableMode, ZapiEvent};
use crate::kernel::{KernelEvent, Route};
use crate::model::{Prefix, TableId};
use crate::reconcile::{Event, KernelEntry, KernelFacts, Redistribution, Release};

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
        KernelEvent::AddressAdded { prefix, .. } => vec![Event::KernelAddress {
            prefix: *prefix,
            present: true,
        }],
        KernelEvent::AddressRemoved { prefix, .. } => vec![Event::KernelAddress {
            prefix: *prefix,
            present: false,
        }],
        KernelEvent::LinkUp { .. } | KernelEvent::LinkDown { .. } => vec![],
        KernelEvent::Resynced { routes, .. } => vec![Event::KernelSynced {
            routes: routes
                .iter()
                .map(|r| KernelEntry {
                    table: r.table,
                    prefix: r.prefix,
                    facts: facts(r),
                })
                .collect(),
        }],
    }
}

/// The core's release from FRR's.
pub fn release(r: &FrrRelease) -> Release {
    Release {
        major: u16::try_from(r.major).unwrap_or(u16::MAX),
        minor: u16::try_from(r.minor).unwrap_or(u16::MAX),
    }
}

/// The core's table mode from FRR's.
pub fn redistribution(m: TableMode) -> Redistribution {
    match m {
        TableMode::TableDirect => Redistribution::TableDirect,
        TableMode::ImportTable => Redistribution::ImportTable,
    }
}

/// Tracks one ZAPI session's view so that its end-of-dump becomes one
/// [`Event::ZebraSynced`] with the whole set.
#[derive(Debug, Default)]
pub struct ZapiView {
    table: TableId,
    prefixes: BTreeSet<Prefix>,
}

impl ZapiView {
    /// A view of the redistribution of `table`.
    pub fn new(table: TableId) -> ZapiView {
        ZapiView {
            table,
            prefixes: BTreeSet::new(),
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
                    release: release(r),
                    redistribution: redistribution(*mode),
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
                prefixes: self.prefixes.clone(),
            }],
            ZapiEvent::Disconnected { .. } => {
                self.prefixes.clear();
                vec![Event::ZebraDown]
            }
            ZapiEvent::Undecodable { .. } => vec![],
        }
    }
}
