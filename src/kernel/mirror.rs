//! The mirror: what the kernel holds in the watched tables, plus the links,
//! addresses and nexthop objects needed to interpret it. Pure: no I/O, no
//! clock; the watcher feeds it decoded messages and dumps.
//!
//! Contract:
//! - `apply` takes one decoded multicast message and returns the real
//!   differences as events, plus a resync request when the message means the
//!   kernel may have changed routes without telling (a link went down, an
//!   address was removed).
//! - `replace` swaps in a mirror built from a fresh dump and returns only the
//!   differences, then a `Resynced` event, carrying the whole route set
//!   when the consumer may have missed events (startup, a full channel).
//! - A replace that changes only the realm is a re-assertion: counted,
//!   reported as `Reasserted`, never as `RouteChanged`. So is an event that
//!   repeats the route unchanged (IPv6 has no realms and announces every
//!   replace, even an identical one).
//! - ECMP legs are kept sorted, because the kernel reports them in
//!   different orders in dumps and in events (IPv6 puts an appended leg
//!   first in the event, last in the dump).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use super::types::{
    Address, KernelEvent, Link, Nexthop, NexthopObject, ResyncReason, Route, RouteKey, RouteSet,
    RouteSetBuilder, Shape,
};
use super::wire::Message;
use crate::model::{Prefix, TableId};

/// The outcome of applying one message.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The differences, in order.
    pub events: Vec<KernelEvent>,
    /// Set when the message means routes may have changed silently.
    pub resync: Option<ResyncReason>,
}

/// The stored form of a route: the realm is per route (kube-vip toggles
/// it), the rest is the shared shape.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stored {
    realm: Option<u32>,
    shape: Arc<Shape>,
}

/// The route `k` as the API carries it.
fn route_of(k: &RouteKey, s: &Stored) -> Route {
    s.shape.route(k, s.realm)
}

/// The kernel view of the watched tables.
///
/// Routes are kept in a hash map (an ordered dump left a B-tree's nodes
/// half full: 244 B a route with the route inline) of 48-byte entries
/// pointing at interned shapes; what is handed out (`routes`, events) is
/// materialized as [`Route`], in key order.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Mirror {
    tables: BTreeSet<TableId>,
    /// When set, the only destinations kept (the router vantage's
    /// configured VIPs): a route to anything else costs nothing here.
    prefixes: Option<BTreeSet<Prefix>>,
    routes: HashMap<RouteKey, Stored>,
    /// The distinct shapes in use; each holds one reference besides its
    /// routes', dropped with the last route that uses it.
    shapes: HashSet<Arc<Shape>>,
    nexthops: BTreeMap<u32, NexthopObject>,
    links: BTreeMap<u32, Link>,
    addrs: BTreeSet<Address>,
    reassertions: u64,
}

impl Clone for Mirror {
    /// A deep copy: the shapes are interned anew, so that the copy's
    /// reference counts are its own.
    fn clone(&self) -> Mirror {
        let mut m = Mirror {
            nexthops: self.nexthops.clone(),
            links: self.links.clone(),
            addrs: self.addrs.clone(),
            reassertions: self.reassertions,
            ..self.empty_like()
        };
        for (k, s) in &self.routes {
            let shape = m.intern((*s.shape).clone());
            m.routes.insert(
                *k,
                Stored {
                    realm: s.realm,
                    shape,
                },
            );
        }
        m
    }
}

impl Mirror {
    /// An empty mirror of `tables`.
    pub fn new(tables: impl IntoIterator<Item = TableId>) -> Mirror {
        Mirror {
            tables: tables.into_iter().collect(),
            ..Mirror::default()
        }
    }

    /// An empty mirror of `tables` that keeps only the routes to
    /// `prefixes` (the configured VIPs of a router vantage watching a full
    /// table): the join needs nothing else, so nothing else is held.
    pub fn with_prefixes(
        tables: impl IntoIterator<Item = TableId>,
        prefixes: BTreeSet<Prefix>,
    ) -> Mirror {
        Mirror {
            prefixes: Some(prefixes),
            ..Mirror::new(tables)
        }
    }

    /// An empty mirror with the same tables and filter (what a re-dump
    /// fills), sized for as many routes as this one holds: a re-dump of
    /// the same table then never grows its map (a growth holds the old
    /// and the new map at once).
    pub fn empty_like(&self) -> Mirror {
        Mirror {
            tables: self.tables.clone(),
            prefixes: self.prefixes.clone(),
            routes: HashMap::with_capacity(self.routes.len()),
            ..Mirror::default()
        }
    }

    /// Does this mirror keep a route of `table` to `prefix`?
    pub fn keeps(&self, table: TableId, prefix: &Prefix) -> bool {
        self.tables.contains(&table) && self.prefixes.as_ref().is_none_or(|p| p.contains(prefix))
    }

    /// The watched tables.
    pub fn tables(&self) -> &BTreeSet<TableId> {
        &self.tables
    }

    /// Is `table` watched?
    pub fn watches(&self, table: TableId) -> bool {
        self.tables.contains(&table)
    }

    /// How many routes are held.
    pub fn len(&self) -> usize {
        self.routes.len()
    }

    /// No route held.
    pub fn is_empty(&self) -> bool {
        self.routes.is_empty()
    }

    /// The keys in order (table, prefix, metric).
    fn sorted_keys(&self) -> Vec<&RouteKey> {
        let mut keys: Vec<&RouteKey> = self.routes.keys().collect();
        keys.sort_unstable();
        keys
    }

    /// Every route, ordered by (table, prefix, metric), each built from
    /// the stored form as it is handed out.
    pub fn routes(&self) -> impl Iterator<Item = Route> + '_ {
        self.sorted_keys()
            .into_iter()
            .filter_map(|k| self.routes.get(k).map(|s| route_of(k, s)))
    }

    /// Every route, in key order, as a compact [`RouteSet`] (what a
    /// resync carries).
    pub fn route_set(&self) -> RouteSet {
        let mut b = RouteSetBuilder::with_capacity(self.routes.len());
        for k in self.sorted_keys() {
            if let Some(s) = self.routes.get(k) {
                b.push(*k, s.realm, &s.shape);
            }
        }
        b.build()
    }

    /// The route of `table` to `prefix` with the lowest metric (the one
    /// the kernel forwards with), if any.
    pub fn route(&self, table: TableId, prefix: Prefix) -> Option<Route> {
        // IPv4's default metric is 0, IPv6's 1024: one lookup each finds
        // kube-vip's routes; another metric costs a scan.
        let at = |metric| RouteKey {
            table,
            prefix,
            metric,
        };
        [0, 1024]
            .into_iter()
            .find_map(|m| self.routes.get_key_value(&at(m)))
            .or_else(|| {
                self.routes
                    .iter()
                    .filter(|(k, _)| k.table == table && k.prefix == prefix)
                    .min_by_key(|(k, _)| k.metric)
            })
            .map(|(k, s)| route_of(k, s))
    }

    /// The routes of one table.
    pub fn table(&self, table: TableId) -> Vec<Route> {
        self.routes().filter(|r| r.table == table).collect()
    }

    /// The known links, by index.
    pub fn links(&self) -> &BTreeMap<u32, Link> {
        &self.links
    }

    /// The known addresses.
    pub fn addresses(&self) -> &BTreeSet<Address> {
        &self.addrs
    }

    /// The known nexthop objects.
    pub fn nexthop_objects(&self) -> &BTreeMap<u32, NexthopObject> {
        &self.nexthops
    }

    /// Realm-only replaces seen so far (including during resyncs).
    pub fn reassertions(&self) -> u64 {
        self.reassertions
    }

    fn intern(&mut self, shape: Shape) -> Arc<Shape> {
        if let Some(s) = self.shapes.get(&shape) {
            return Arc::clone(s);
        }
        let s = Arc::new(shape);
        self.shapes.insert(Arc::clone(&s));
        s
    }

    /// A route let go of `shape`: the set's is the last other reference
    /// when no route uses it any more.
    fn release(&mut self, shape: Arc<Shape>) {
        if Arc::strong_count(&shape) == 2 {
            self.shapes.remove(&*shape);
        }
    }

    /// Store `r` (legs sorted) in place of any route of the same key.
    fn store(&mut self, r: Route) {
        let key = r.key();
        let realm = r.realm;
        let shape = self.intern(Shape::of(r));
        if let Some(old) = self.routes.insert(key, Stored { realm, shape }) {
            self.release(old.shape);
        }
    }

    fn unstore(&mut self, key: &RouteKey) -> Option<Route> {
        let s = self.routes.remove(key)?;
        let r = route_of(key, &s);
        self.release(s.shape);
        Some(r)
    }

    /// Apply one decoded message.
    pub fn apply(&mut self, msg: Message) -> Applied {
        let mut out = Applied::default();
        match msg {
            Message::NewRoute(r) => {
                if self.keeps(r.table, &r.prefix) {
                    self.upsert(r, &mut out.events);
                }
            }
            Message::DelRoute(r) => {
                if self.keeps(r.table, &r.prefix) {
                    self.remove(r, &mut out.events);
                }
            }
            Message::NewLink(l) => {
                let was_up = self.links.get(&l.ifindex).map(|o| o.up);
                if l.up && was_up != Some(true) {
                    out.events.push(KernelEvent::LinkUp {
                        ifindex: l.ifindex,
                        name: l.name.clone(),
                    });
                } else if !l.up && was_up == Some(true) {
                    out.events.push(KernelEvent::LinkDown {
                        ifindex: l.ifindex,
                        name: l.name.clone(),
                    });
                }
                // Any news of a known link, even one that looks unchanged:
                // the kernel flips the link's state bit first and flushes
                // or flags (`linkdown`) its routes later, without route
                // events, then sends this message; a dump in between saw
                // the new link state with the old routes. Dump again.
                if was_up.is_some() {
                    out.resync = Some(if l.up {
                        ResyncReason::LinkUp
                    } else {
                        ResyncReason::LinkDown
                    });
                }
                self.links.insert(l.ifindex, l);
            }
            Message::DelLink(l) => {
                if let Some(old) = self.links.remove(&l.ifindex) {
                    if old.up {
                        out.events.push(KernelEvent::LinkDown {
                            ifindex: l.ifindex,
                            name: old.name,
                        });
                    }
                    out.resync = Some(ResyncReason::LinkDown);
                }
            }
            Message::NewAddr(a) => {
                // A flag change (duplicate address detection done or
                // failed) is the same address with another usability.
                self.addrs.remove(&a.with_usable(!a.usable));
                if self.addrs.insert(a) {
                    out.events.push(KernelEvent::AddressAdded {
                        ifindex: a.ifindex,
                        prefix: a.prefix,
                        len: a.len,
                        usable: a.usable,
                    });
                }
            }
            Message::DelAddr(a) => {
                let known = self.addrs.remove(&a) | self.addrs.remove(&a.with_usable(!a.usable));
                if known {
                    out.events.push(KernelEvent::AddressRemoved {
                        ifindex: a.ifindex,
                        prefix: a.prefix,
                        len: a.len,
                    });
                }
                // Even an address we did not know may have taken routes
                // with it.
                out.resync = Some(ResyncReason::AddressRemoved);
            }
            Message::NewNexthop(n) => {
                let id = n.id;
                self.nexthops.insert(id, n);
                self.reresolve(id, &mut out.events);
            }
            Message::DelNexthop(n) => self.delete_nexthop(n.id, &mut out.events),
            Message::Done | Message::Error(_) | Message::Ignored => {}
        }
        out
    }

    /// How many events [`Mirror::replace`] by `next` makes, at most.
    fn differences(&self, next: &Mirror, first: bool) -> usize {
        let removed = self
            .routes
            .keys()
            .filter(|k| !next.routes.contains_key(*k))
            .count();
        let added_or_changed = if first {
            0
        } else {
            next.routes
                .iter()
                .filter(|(k, new)| self.routes.get(*k) != Some(*new))
                .count()
        };
        let links = self.links.len() + next.links.len();
        let addrs = self.addrs.symmetric_difference(&next.addrs).count();
        // And `Resynced`.
        removed + added_or_changed + links + addrs + 1
    }

    /// Replace this mirror by `next` (built from a dump, same tables) and
    /// return the differences, then `Resynced { reason, routes }`. The
    /// startup dump into an empty mirror emits no `RouteAdded`: `Resynced`
    /// carries every route, and a copy per route per event was most of the
    /// startup's peak memory at 100 000 routes.
    pub fn replace(&mut self, mut next: Mirror, reason: ResyncReason) -> Vec<KernelEvent> {
        let first = reason == ResyncReason::Startup && self.routes.is_empty();
        // Sized once: a list grown by doubling held up to twice the events
        // and, while it grew, both copies (100 000 routes missed in an
        // overrun: the resync's peak).
        let mut ev = Vec::with_capacity(self.differences(&next, first));
        for k in self.sorted_keys() {
            if !next.routes.contains_key(k) {
                if let Some(old) = self.routes.get(k) {
                    ev.push(KernelEvent::RouteRemoved {
                        route: route_of(k, old),
                    });
                }
            }
        }
        let mut reasserted = 0;
        if !first {
            for k in next.sorted_keys() {
                let Some(new) = next.routes.get(k) else {
                    continue;
                };
                match self.routes.get(k) {
                    None => ev.push(KernelEvent::RouteAdded {
                        route: route_of(k, new),
                    }),
                    Some(old) if old == new => {}
                    Some(old) if old.shape == new.shape => {
                        reasserted += 1;
                        ev.push(KernelEvent::Reasserted {
                            route: route_of(k, new),
                        });
                    }
                    Some(old) => ev.push(KernelEvent::RouteChanged {
                        old: Box::new(route_of(k, old)),
                        new: route_of(k, new),
                    }),
                }
            }
        }
        for (i, l) in &next.links {
            let was = self.links.get(i).map(|o| o.up);
            if l.up && was != Some(true) {
                ev.push(KernelEvent::LinkUp {
                    ifindex: *i,
                    name: l.name.clone(),
                });
            } else if !l.up && was == Some(true) {
                ev.push(KernelEvent::LinkDown {
                    ifindex: *i,
                    name: l.name.clone(),
                });
            }
        }
        for (i, l) in &self.links {
            if l.up && !next.links.contains_key(i) {
                ev.push(KernelEvent::LinkDown {
                    ifindex: *i,
                    name: l.name.clone(),
                });
            }
        }
        for a in self.addrs.difference(&next.addrs) {
            ev.push(KernelEvent::AddressRemoved {
                ifindex: a.ifindex,
                prefix: a.prefix,
                len: a.len,
            });
        }
        for a in next.addrs.difference(&self.addrs) {
            ev.push(KernelEvent::AddressAdded {
                ifindex: a.ifindex,
                prefix: a.prefix,
                len: a.len,
                usable: a.usable,
            });
        }
        next.reassertions = self.reassertions + reasserted;
        next.tables = std::mem::take(&mut self.tables);
        next.prefixes = self.prefixes.take();
        // The old mirror goes before the route list is built: the peak of
        // a resync is one mirror and the list, not two mirrors and it.
        *self = next;
        ev.push(KernelEvent::Resynced {
            reason,
            routes: reason.carries_routes().then(|| self.route_set()),
        });
        ev
    }

    fn upsert(&mut self, mut r: Route, ev: &mut Vec<KernelEvent>) {
        let key = r.key();
        // With net.ipv4.nexthop_compat_mode=1 (the default) the kernel
        // expands the object into the message; without it, resolve here.
        if r.nexthops.is_empty() && r.nhid.is_some() {
            r.nexthops = self.legs_of(r.nhid);
        }
        r.nexthops.sort();
        match self.routes.get(&key).map(|s| route_of(&key, s)) {
            None => ev.push(KernelEvent::RouteAdded { route: r.clone() }),
            // IPv4 sends nothing for an identical replace, IPv6 sends the
            // route again (and ignores realms): for both, a replace that
            // changes nothing but the realm is a re-assertion.
            Some(old) if old.same_ignoring_realm(&r) => {
                self.reassertions += 1;
                ev.push(KernelEvent::Reasserted { route: r.clone() });
            }
            Some(old) => ev.push(KernelEvent::RouteChanged {
                old: Box::new(old),
                new: r.clone(),
            }),
        }
        self.store(r);
    }

    fn remove(&mut self, mut r: Route, ev: &mut Vec<KernelEvent>) {
        let key = r.key();
        let Some(old) = self.routes.get(&key).map(|s| route_of(&key, s)) else {
            return;
        };
        r.nexthops.sort();
        // IPv6 deletes one leg of a multipath route with a DELROUTE that
        // carries only that leg: the rest of the route stays.
        let partial = r.prefix.addr().is_ipv6()
            && !r.nexthops.is_empty()
            && r.nexthops.len() < old.nexthops.len()
            && r.nexthops.iter().all(|l| old.nexthops.contains(l));
        if partial {
            let mut new = old.clone();
            new.nexthops.retain(|l| !r.nexthops.contains(l));
            ev.push(KernelEvent::RouteChanged {
                old: Box::new(old),
                new: new.clone(),
            });
            self.store(new);
        } else if let Some(old) = self.unstore(&key) {
            ev.push(KernelEvent::RouteRemoved { route: old });
        }
    }

    /// The legs of nexthop object `id`: itself, or its group's members.
    fn legs_of(&self, id: Option<u32>) -> Vec<Nexthop> {
        let Some(nh) = id.and_then(|i| self.nexthops.get(&i)) else {
            return Vec::new();
        };
        let leg = |n: &NexthopObject, weight: u16| {
            (!n.blackhole).then_some(Nexthop {
                gateway: n.gateway,
                oif: n.oif,
                weight,
                flags: (n.flags & 0xff) as u8,
            })
        };
        if nh.group.is_empty() {
            return leg(nh, 1).into_iter().collect();
        }
        let mut legs: Vec<Nexthop> = nh
            .group
            .iter()
            .filter_map(|m| self.nexthops.get(&m.id).and_then(|n| leg(n, m.weight)))
            .collect();
        legs.sort();
        legs
    }

    fn uses(&self, route_nhid: u32, id: u32) -> bool {
        route_nhid == id
            || self
                .nexthops
                .get(&route_nhid)
                .is_some_and(|g| g.group.iter().any(|m| m.id == id))
    }

    /// The keys of the routes whose nexthop object is one `pick` accepts,
    /// in key order.
    fn keys_by_nhid(&self, pick: impl Fn(u32) -> bool) -> Vec<RouteKey> {
        let mut keys: Vec<RouteKey> = self
            .routes
            .iter()
            .filter(|(_, s)| s.shape.nhid.is_some_and(&pick))
            .map(|(k, _)| *k)
            .collect();
        keys.sort_unstable();
        keys
    }

    /// A nexthop object changed: the routes that use it (directly or
    /// through a group) get their legs from the object again, whether the
    /// kernel also sends route events for them or not.
    fn reresolve(&mut self, id: u32, ev: &mut Vec<KernelEvent>) {
        for k in self.keys_by_nhid(|n| self.uses(n, id)) {
            if let Some(old) = self.routes.get(&k).map(|s| route_of(&k, s)) {
                let mut new = old.clone();
                new.nexthops = self.legs_of(new.nhid);
                if new != old {
                    ev.push(KernelEvent::RouteChanged {
                        old: Box::new(old),
                        new: new.clone(),
                    });
                    self.store(new);
                }
            }
        }
    }

    /// The kernel deletes routes that use a deleted nexthop object directly
    /// and drops it from the groups that contain it (a group left empty goes
    /// too, with its routes).
    fn delete_nexthop(&mut self, id: u32, ev: &mut Vec<KernelEvent>) {
        if self.nexthops.remove(&id).is_none() {
            return;
        }
        let mut emptied = Vec::new();
        let mut shrunk = Vec::new();
        for (gid, g) in self.nexthops.iter_mut() {
            let before = g.group.len();
            g.group.retain(|m| m.id != id);
            if g.group.len() != before {
                if g.group.is_empty() {
                    emptied.push(*gid);
                } else {
                    shrunk.push(*gid);
                }
            }
        }
        for k in self.keys_by_nhid(|n| n == id) {
            if let Some(r) = self.unstore(&k) {
                ev.push(KernelEvent::RouteRemoved { route: r });
            }
        }
        for g in shrunk {
            self.reresolve(g, ev);
        }
        for g in emptied {
            self.delete_nexthop(g, ev);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(p: &str, realm: Option<u32>, legs: &[(&str, u32)]) -> Route {
        let legs = legs
            .iter()
            .map(|(g, o)| Nexthop::leg(Some(g.parse().unwrap()), *o))
            .collect();
        Route {
            realm,
            ..Route::vip(198, p.parse().unwrap(), legs)
        }
    }

    #[test]
    fn routes_of_one_shape_share_it_until_the_last_goes() {
        let mut m = Mirror::new([198]);
        for p in ["192.0.2.10/32", "192.0.2.11/32"] {
            m.apply(Message::NewRoute(route(p, None, &[("10.0.0.2", 2)])));
        }
        m.apply(Message::NewRoute(route(
            "192.0.2.12/32",
            None,
            &[("10.0.0.3", 2)],
        )));
        assert_eq!(m.shapes.len(), 2);
        // A realm is the route's own: the shape stays shared.
        m.apply(Message::NewRoute(route(
            "192.0.2.10/32",
            Some(7),
            &[("10.0.0.2", 2)],
        )));
        assert_eq!(m.shapes.len(), 2);
        m.apply(Message::DelRoute(route("192.0.2.12/32", None, &[])));
        assert_eq!(m.shapes.len(), 1);
        m.apply(Message::DelRoute(route("192.0.2.10/32", None, &[])));
        assert_eq!(m.shapes.len(), 1);
        m.apply(Message::DelRoute(route("192.0.2.11/32", None, &[])));
        assert!(m.shapes.is_empty() && m.is_empty());
        // A deep copy counts its own references.
        m.apply(Message::NewRoute(route(
            "192.0.2.11/32",
            None,
            &[("10.0.0.2", 2)],
        )));
        let mut c = m.clone();
        assert_eq!(c, m);
        c.apply(Message::DelRoute(route("192.0.2.11/32", None, &[])));
        assert!(c.shapes.is_empty());
        assert_eq!(m.shapes.len(), 1);
    }

    #[test]
    fn a_resync_lists_each_shape_once_and_serializes_as_routes() {
        let mut m = Mirror::new([198]);
        let mut routes = Vec::new();
        for (p, gw, realm) in [
            ("192.0.2.12/32", "10.0.0.3", None),
            ("192.0.2.10/32", "10.0.0.2", Some(3)),
            ("192.0.2.11/32", "10.0.0.2", None),
        ] {
            let r = route(p, realm, &[(gw, 2)]);
            m.apply(Message::NewRoute(r.clone()));
            routes.push(r);
        }
        routes.sort_by_key(Route::key);
        let set = m.route_set();
        assert_eq!(set.len(), 3);
        assert_eq!(set.shapes.len(), 2, "two shapes for three routes");
        assert_eq!(set.iter().collect::<Vec<_>>(), routes);
        let json = serde_json::to_value(&set).unwrap();
        assert_eq!(json, serde_json::to_value(&routes).unwrap());
        let back: RouteSet = serde_json::from_value(json).unwrap();
        assert_eq!(back, set);
        assert_eq!(RouteSet::from(routes), set);
    }

    #[test]
    fn a_route_is_found_by_table_and_prefix_at_its_lowest_metric() {
        let mut m = Mirror::new([198]);
        let vip: Prefix = "192.0.2.10/32".parse().unwrap();
        assert_eq!(m.route(198, vip), None);
        for metric in [20, 10] {
            m.apply(Message::NewRoute(Route {
                metric,
                ..route("192.0.2.10/32", Some(metric), &[("10.0.0.2", 2)])
            }));
        }
        assert_eq!(m.route(198, vip).map(|r| r.metric), Some(10));
        m.apply(Message::NewRoute(route(
            "192.0.2.10/32",
            Some(1),
            &[("10.0.0.2", 2)],
        )));
        let r = m.route(198, vip).unwrap();
        assert_eq!((r.metric, r.realm), (0, Some(1)));
        assert_eq!(m.route(199, vip), None);
    }

    #[test]
    fn realm_only_replace_is_a_reassertion() {
        let mut m = Mirror::new([198]);
        let a = m.apply(Message::NewRoute(route(
            "192.0.2.10/32",
            Some(1),
            &[("10.0.0.2", 2)],
        )));
        assert!(matches!(&a.events[..], [KernelEvent::RouteAdded { .. }]));
        let b = m.apply(Message::NewRoute(route(
            "192.0.2.10/32",
            Some(2),
            &[("10.0.0.2", 2)],
        )));
        assert!(
            matches!(&b.events[..], [KernelEvent::Reasserted { .. }]),
            "{b:?}"
        );
        assert_eq!(m.reassertions(), 1);
        let c = m.apply(Message::NewRoute(route(
            "192.0.2.10/32",
            Some(2),
            &[("10.0.0.3", 2)],
        )));
        assert!(matches!(&c.events[..], [KernelEvent::RouteChanged { .. }]));
        // Identical (what IPv6 sends for every replace): a re-assertion.
        let d = m.apply(Message::NewRoute(route(
            "192.0.2.10/32",
            Some(2),
            &[("10.0.0.3", 2)],
        )));
        assert!(matches!(&d.events[..], [KernelEvent::Reasserted { .. }]));
        assert_eq!(m.reassertions(), 2);
    }

    #[test]
    fn unwatched_tables_are_ignored() {
        let mut m = Mirror::new([198]);
        let mut r = route("192.0.2.10/32", None, &[]);
        r.table = 199;
        assert!(m.apply(Message::NewRoute(r)).events.is_empty());
        assert_eq!(m.routes().count(), 0);
    }

    #[test]
    fn ipv6_partial_delete_keeps_the_other_legs() {
        let mut m = Mirror::new([198]);
        m.apply(Message::NewRoute(route(
            "2001:db8::11/128",
            None,
            &[("2001:db8::2", 2), ("2001:db8::3", 2)],
        )));
        let e = m.apply(Message::DelRoute(route(
            "2001:db8::11/128",
            None,
            &[("2001:db8::2", 2)],
        )));
        assert!(
            matches!(&e.events[..], [KernelEvent::RouteChanged { new, .. }] if new.ecmp_legs() == 1)
        );
        let e = m.apply(Message::DelRoute(route(
            "2001:db8::11/128",
            None,
            &[("2001:db8::3", 2)],
        )));
        assert!(matches!(&e.events[..], [KernelEvent::RouteRemoved { .. }]));
    }

    #[test]
    fn nexthop_groups_resolve_and_follow_changes() {
        use crate::kernel::types::GroupMember;
        let nh = |id, gw: &str| NexthopObject {
            id,
            family: 2,
            gateway: Some(gw.parse().unwrap()),
            oif: Some(2),
            blackhole: false,
            group: vec![],
            flags: 0,
        };
        let grp = |id, members: &[(u32, u16)]| NexthopObject {
            id,
            family: 0,
            gateway: None,
            oif: None,
            blackhole: false,
            group: members
                .iter()
                .map(|&(id, weight)| GroupMember { id, weight })
                .collect(),
            flags: 0,
        };
        let mut m = Mirror::new([198]);
        m.apply(Message::NewNexthop(nh(1, "10.0.0.2")));
        m.apply(Message::NewNexthop(nh(2, "10.0.0.3")));
        m.apply(Message::NewNexthop(grp(10, &[(1, 1), (2, 3)])));
        let mut r = route("192.0.2.12/32", None, &[]);
        r.nhid = Some(10);
        m.apply(Message::NewRoute(r));
        let legs = |m: &Mirror| {
            m.routes()
                .next()
                .map(|r| r.nexthops.iter().map(|n| n.weight).collect::<Vec<_>>())
        };
        assert_eq!(legs(&m), Some(vec![1, 3]));
        let e = m.apply(Message::NewNexthop(grp(10, &[(1, 1)])));
        assert!(matches!(&e.events[..], [KernelEvent::RouteChanged { .. }]));
        assert_eq!(legs(&m), Some(vec![1]));
        // Deleting the last member removes the group and its route.
        let e = m.apply(Message::DelNexthop(nh(1, "10.0.0.2")));
        assert!(
            matches!(&e.events[..], [KernelEvent::RouteRemoved { .. }]),
            "{e:?}"
        );
    }

    #[test]
    fn an_event_is_one_route_wide() {
        let (event, route) = (size_of::<KernelEvent>(), size_of::<Route>());
        assert!(
            event <= route + 8,
            "a KernelEvent is {event} bytes, a Route {route}"
        );
    }

    #[test]
    fn replace_emits_only_differences() {
        let mut m = Mirror::new([198]);
        m.apply(Message::NewRoute(route(
            "192.0.2.10/32",
            Some(1),
            &[("10.0.0.2", 2)],
        )));
        m.apply(Message::NewRoute(route(
            "192.0.2.11/32",
            None,
            &[("10.0.0.2", 2)],
        )));
        let mut next = Mirror::new([198]);
        next.apply(Message::NewRoute(route(
            "192.0.2.10/32",
            Some(2),
            &[("10.0.0.2", 2)],
        )));
        next.apply(Message::NewRoute(route(
            "192.0.2.12/32",
            None,
            &[("10.0.0.2", 2)],
        )));
        let ev = m.replace(next, ResyncReason::Timer);
        let kinds: Vec<&str> = ev
            .iter()
            .map(|e| match e {
                KernelEvent::RouteRemoved { .. } => "removed",
                KernelEvent::RouteAdded { .. } => "added",
                KernelEvent::Reasserted { .. } => "reasserted",
                KernelEvent::Resynced { .. } => "resynced",
                _ => "other",
            })
            .collect();
        assert_eq!(kinds, ["removed", "reasserted", "added", "resynced"]);
        assert_eq!(ev.capacity(), ev.len(), "the list is sized once");
        assert_eq!(m.reassertions(), 1);
        assert!(m.watches(198));
    }

    #[test]
    fn the_startup_dump_is_one_resynced_event() {
        let mut next = Mirror::new([198]);
        for p in ["192.0.2.10/32", "192.0.2.11/32"] {
            next.apply(Message::NewRoute(route(p, None, &[("10.0.0.2", 2)])));
        }
        let mut m = Mirror::new([198]);
        let ev = m.replace(next.clone(), ResyncReason::Startup);
        assert!(
            matches!(&ev[..], [KernelEvent::Resynced { routes: Some(routes), .. }] if routes.len() == 2),
            "{ev:?}"
        );
        // Any later dump reports what it found as differences.
        let mut empty = Mirror::new([198]);
        let ev = empty.replace(next.clone(), ResyncReason::Timer);
        assert_eq!(ev.len(), 3, "{ev:?}");
    }

    #[test]
    fn only_a_resync_after_missed_events_carries_the_route_set() {
        let mut next = Mirror::new([198]);
        next.apply(Message::NewRoute(route(
            "192.0.2.10/32",
            None,
            &[("10.0.0.2", 2)],
        )));
        for reason in ResyncReason::ALL {
            let mut m = Mirror::new([198]);
            m.replace(next.clone(), ResyncReason::Startup);
            let ev = m.replace(next.clone(), reason);
            let carried = match &ev[..] {
                [KernelEvent::Resynced { routes, .. }] => routes.as_ref().map(|r| r.len()),
                other => panic!("{reason:?}: an unchanged table gives only Resynced: {other:?}"),
            };
            let want = matches!(reason, ResyncReason::Startup | ResyncReason::ChannelFull);
            assert_eq!(carried, want.then_some(1), "{reason:?}");
        }
    }

    #[test]
    fn a_mirror_of_some_prefixes_keeps_nothing_else() {
        let vip: Prefix = "192.0.2.10/32".parse().unwrap();
        let mut m = Mirror::with_prefixes([254], [vip].into());
        let other = route("198.51.100.0/24", None, &[("10.0.0.2", 2)]);
        let mut other = Route {
            table: 254,
            ..other
        };
        assert!(m.apply(Message::NewRoute(other.clone())).events.is_empty());
        other.prefix = vip;
        assert_eq!(m.apply(Message::NewRoute(other.clone())).events.len(), 1);
        assert_eq!(m.routes().count(), 1);
        // A re-dump keeps the filter.
        let mut next = m.empty_like();
        next.apply(Message::NewRoute(Route {
            prefix: "198.51.100.0/24".parse().unwrap(),
            ..other.clone()
        }));
        assert_eq!(next.routes().count(), 0);
        m.replace(next, ResyncReason::Timer);
        assert!(!m.keeps(254, &"198.51.100.0/24".parse().unwrap()));
        assert!(m.keeps(254, &vip));
    }

    #[test]
    fn link_down_and_address_removal_ask_for_a_resync() {
        let mut m = Mirror::new([198]);
        let up = Link {
            ifindex: 2,
            name: "va".into(),
            up: true,
        };
        assert!(m.apply(Message::NewLink(up.clone())).resync.is_none());
        // Known link, news again: dump (the routes may lag the link state).
        assert_eq!(
            m.apply(Message::NewLink(up.clone())).resync,
            Some(ResyncReason::LinkUp)
        );
        let down = Link { up: false, ..up };
        let a = m.apply(Message::NewLink(down));
        assert_eq!(a.resync, Some(ResyncReason::LinkDown));
        let addr = Address {
            ifindex: 2,
            prefix: "10.0.0.1/32".parse().unwrap(),
            len: 24,
            usable: true,
        };
        m.apply(Message::NewAddr(addr));
        let a = m.apply(Message::DelAddr(addr));
        assert_eq!(a.resync, Some(ResyncReason::AddressRemoved));
        assert!(matches!(
            &a.events[..],
            [KernelEvent::AddressRemoved { len: 24, .. }]
        ));
    }

    #[test]
    fn an_address_whose_duplicate_detection_fails_is_one_address_turned_unusable() {
        let mut m = Mirror::new([198]);
        let ok = Address {
            ifindex: 1,
            prefix: "2001:db8::10/128".parse().unwrap(),
            len: 128,
            usable: false,
        };
        // tentative, then dadfailed (still unusable: no news), then usable.
        let a = m.apply(Message::NewAddr(ok));
        assert!(matches!(
            &a.events[..],
            [KernelEvent::AddressAdded { usable: false, .. }]
        ));
        assert!(m.apply(Message::NewAddr(ok)).events.is_empty());
        let a = m.apply(Message::NewAddr(ok.with_usable(true)));
        assert!(matches!(
            &a.events[..],
            [KernelEvent::AddressAdded { usable: true, .. }]
        ));
        assert_eq!(m.addresses().len(), 1, "one address, not two");
        // Deleted with the other flags than the mirror holds: still gone.
        let a = m.apply(Message::DelAddr(ok));
        assert!(matches!(
            &a.events[..],
            [KernelEvent::AddressRemoved { .. }]
        ));
        assert!(m.addresses().is_empty());
    }
}
