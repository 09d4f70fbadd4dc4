//! Plain data of the kernel view: routes, nexthops, links, addresses and the
//! events the kernel task emits. No I/O, no decoding; depends only on
//! `crate::model`, so the wire layer may build these values directly.

use std::collections::HashMap;
use std::net::IpAddr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::model::{Prefix, TableId};

/// `RTN_UNICAST`: the ordinary route type.
pub const RTN_UNICAST: u8 = 1;
/// `RTN_BLACKHOLE`.
pub const RTN_BLACKHOLE: u8 = 6;
/// `RTN_UNREACHABLE`.
pub const RTN_UNREACHABLE: u8 = 7;
/// `RTN_PROHIBIT`.
pub const RTN_PROHIBIT: u8 = 8;
/// `RT_SCOPE_UNIVERSE`.
pub const RT_SCOPE_UNIVERSE: u8 = 0;
/// `RT_SCOPE_LINK`.
pub const RT_SCOPE_LINK: u8 = 253;
/// `RTNH_F_DEAD`: the nexthop is dead (its link is down).
pub const RTNH_F_DEAD: u8 = 1;
/// `RTNH_F_ONLINK`.
pub const RTNH_F_ONLINK: u8 = 4;
/// `RTNH_F_LINKDOWN`: the carrier of the nexthop's link is down.
pub const RTNH_F_LINKDOWN: u8 = 16;

/// One ECMP leg of a route.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Nexthop {
    /// Gateway address (`RTA_GATEWAY` or `NHA_GATEWAY`), none for a
    /// directly connected leg.
    pub gateway: Option<IpAddr>,
    /// Output interface index.
    pub oif: Option<u32>,
    /// ECMP weight, 1-based as `ip` prints it (the wire carries weight - 1).
    pub weight: u16,
    /// `RTNH_F_*` flags (dead, onlink, linkdown).
    pub flags: u8,
}

/// A route of a watched table, as the kernel holds it, ECMP legs resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Route {
    /// Table id (from `RTA_TABLE` when present, else the header byte).
    pub table: TableId,
    /// Destination prefix.
    pub prefix: Prefix,
    /// `rtm_protocol` (kube-vip marks its routes 248).
    pub protocol: u8,
    /// `rtm_scope`.
    pub scope: u8,
    /// `rtm_type` (1 unicast, 6 blackhole, ...).
    pub kind: u8,
    /// `RTA_PRIORITY`; 0 when the kernel sent none (IPv4 default).
    pub metric: u32,
    /// `RTA_FLOW` (the realm word; kube-vip toggles it to re-assert).
    pub realm: Option<u32>,
    /// `RTA_PREF` (IPv6 router preference), when present.
    pub pref: Option<u8>,
    /// `RTA_NH_ID`: the nexthop object the route uses, if any.
    pub nhid: Option<u32>,
    /// `RTA_PREFSRC`: the source address the route prefers (`src`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefsrc: Option<IpAddr>,
    /// The ECMP legs: inline, from `RTA_MULTIPATH`, or resolved from the
    /// nexthop object `nhid`. Empty for blackhole/unreachable routes.
    pub nexthops: Vec<Nexthop>,
}

/// What identifies a route in a table: two routes with the same key cannot
/// coexist in the kernel (a second one replaces the first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RouteKey {
    /// Table id.
    pub table: TableId,
    /// Destination prefix.
    pub prefix: Prefix,
    /// Metric (IPv6 routes of different metrics coexist, as do IPv4 ones).
    pub metric: u32,
}

impl Route {
    /// The key of this route in the mirror.
    pub fn key(&self) -> RouteKey {
        RouteKey {
            table: self.table,
            prefix: self.prefix,
            metric: self.metric,
        }
    }

    /// Number of ECMP legs that forward traffic: 0 for a route that drops
    /// it (blackhole, unreachable, prohibit), even when the kernel names
    /// `lo` as its device (a blackhole nexthop object does).
    pub fn ecmp_legs(&self) -> usize {
        if matches!(self.kind, RTN_BLACKHOLE | RTN_UNREACHABLE | RTN_PROHIBIT) {
            0
        } else {
            self.nexthops.len()
        }
    }

    /// Equal in everything but the realm: a kube-vip re-assertion (a replace
    /// that flips the realm) is not a change of the route.
    pub fn same_ignoring_realm(&self, other: &Route) -> bool {
        self.table == other.table
            && self.prefix == other.prefix
            && self.protocol == other.protocol
            && self.scope == other.scope
            && self.kind == other.kind
            && self.metric == other.metric
            && self.pref == other.pref
            && self.nhid == other.nhid
            && self.nexthops == other.nexthops
    }
}

/// Routes and legs as kube-vip writes them: for tests and benches only
/// (the `testing` feature, which the crate's own tests enable).
#[cfg(any(test, feature = "testing"))]
impl Route {
    /// A kube-vip route of `table` to `prefix` over `nexthops`: protocol
    /// [`crate::model::VIP_PROTOCOL`], unicast, universe scope, metric 0,
    /// no realm, preference, nexthop object or preferred source.
    pub fn vip(table: TableId, prefix: Prefix, nexthops: Vec<Nexthop>) -> Route {
        Route {
            table,
            prefix,
            protocol: crate::model::VIP_PROTOCOL,
            scope: RT_SCOPE_UNIVERSE,
            kind: RTN_UNICAST,
            metric: 0,
            realm: None,
            pref: None,
            nhid: None,
            prefsrc: None,
            nexthops,
        }
    }
}

#[cfg(any(test, feature = "testing"))]
impl Nexthop {
    /// A leg of weight 1 without flags out of interface `oif`, through
    /// `gateway` (`None`: directly connected).
    pub fn leg(gateway: Option<IpAddr>, oif: u32) -> Nexthop {
        Nexthop {
            gateway,
            oif: Some(oif),
            weight: 1,
            flags: 0,
        }
    }
}

/// A network interface.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Link {
    /// Interface index.
    pub ifindex: u32,
    /// Interface name (`IFLA_IFNAME`).
    pub name: String,
    /// `IFF_UP` and `IFF_LOWER_UP` both set: the link carries traffic.
    pub up: bool,
}

/// An address assigned to an interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Address {
    /// Interface index.
    pub ifindex: u32,
    /// The address itself as a host prefix (`/32`, `/128`): what a VIP
    /// check asks ("is 192.0.2.10 assigned here?").
    pub prefix: Prefix,
    /// The interface prefix length it was assigned with (`/24` in
    /// `10.0.0.1/24`).
    pub len: u8,
    /// The address can be used: neither `tentative` (IPv6 duplicate
    /// address detection still running) nor `dadfailed` (another node
    /// holds it). A VIP whose address is unusable cannot be served.
    #[serde(default = "usable")]
    pub usable: bool,
}

/// An address is usable unless its flags say otherwise.
fn usable() -> bool {
    true
}

impl Address {
    /// The same address with the other usability: the one a flag change
    /// replaces.
    pub fn with_usable(self, usable: bool) -> Address {
        Address { usable, ..self }
    }
}

/// A nexthop object (`RTM_NEWNEXTHOP`), kept so that a route with
/// `RTA_NH_ID` gets its legs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NexthopObject {
    /// `NHA_ID`.
    pub id: u32,
    /// Address family of the nhmsg (`AF_INET`, `AF_INET6`, 0 for groups).
    pub family: u8,
    /// `NHA_GATEWAY`.
    pub gateway: Option<IpAddr>,
    /// `NHA_OIF`.
    pub oif: Option<u32>,
    /// `NHA_BLACKHOLE`.
    pub blackhole: bool,
    /// `NHA_GROUP`: member ids and 1-based weights; empty for a single
    /// nexthop.
    pub group: Vec<GroupMember>,
    /// `nh_flags` (`RTNH_F_*`).
    pub flags: u32,
}

/// One member of a nexthop group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupMember {
    /// The member's nexthop id.
    pub id: u32,
    /// 1-based weight.
    pub weight: u16,
}

/// Why the mirror was replaced by a full re-dump.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResyncReason {
    /// The first dump.
    Startup,
    /// The receive buffer overflowed (ENOBUFS): events were lost.
    Overrun,
    /// A dump came back with `NLM_F_DUMP_INTR`: it may be inconsistent.
    DumpInterrupted,
    /// A link went down: the kernel flushes IPv4 routes without events
    /// (or, on carrier loss, flags them `linkdown`, also without events).
    LinkDown,
    /// A link's carrier came back: the kernel clears `linkdown` without
    /// events.
    LinkUp,
    /// An address was removed: same silent flush.
    AddressRemoved,
    /// A message could not be decoded: its effect is unknown.
    Undecodable,
    /// The periodic re-dump (a no-op replace emits no event at all).
    Timer,
    /// The event channel to the daemon was full: events were dropped.
    ChannelFull,
}

impl ResyncReason {
    /// Every reason, for counters and metrics labels.
    pub const ALL: [ResyncReason; 9] = [
        ResyncReason::Startup,
        ResyncReason::Overrun,
        ResyncReason::DumpInterrupted,
        ResyncReason::LinkDown,
        ResyncReason::LinkUp,
        ResyncReason::AddressRemoved,
        ResyncReason::Undecodable,
        ResyncReason::Timer,
        ResyncReason::ChannelFull,
    ];

    /// Whether the resync's `Resynced` event carries the whole route set:
    /// at startup (nothing was sent before) and after a full channel
    /// (events were dropped, so the differences from the mirror are not
    /// the consumer's). Every other resync follows events that all reached
    /// the consumer, and its differences bring it to the new state.
    pub fn carries_routes(self) -> bool {
        matches!(self, ResyncReason::Startup | ResyncReason::ChannelFull)
    }

    /// The snake_case label (`overrun`, `link_down`, ...).
    pub fn label(self) -> &'static str {
        match self {
            ResyncReason::Startup => "startup",
            ResyncReason::Overrun => "overrun",
            ResyncReason::DumpInterrupted => "dump_interrupted",
            ResyncReason::LinkDown => "link_down",
            ResyncReason::LinkUp => "link_up",
            ResyncReason::AddressRemoved => "address_removed",
            ResyncReason::Undecodable => "undecodable",
            ResyncReason::Timer => "timer",
            ResyncReason::ChannelFull => "channel_full",
        }
    }
}

/// What the kernel task tells the daemon.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum KernelEvent {
    /// A route appeared in a watched table.
    RouteAdded {
        /// The route.
        route: Route,
    },
    /// A route of a watched table changed (other than its realm).
    RouteChanged {
        /// Before; boxed so that an event is one route wide (a resync's
        /// list of differences holds one per changed route: 176-byte
        /// events, half of it room for a second route, ~17 MB for 100 000
        /// routes missed in an overrun).
        old: Box<Route>,
        /// After.
        new: Route,
    },
    /// A route left a watched table.
    RouteRemoved {
        /// The route as it was.
        route: Route,
    },
    /// A replace that changed only the realm (kube-vip's heartbeat, or our
    /// own heal): counted, not a change.
    Reasserted {
        /// The route, with its new realm.
        route: Route,
    },
    /// An address was added, or its usability changed (IPv6 duplicate
    /// address detection ended, or failed).
    AddressAdded {
        /// Interface index.
        ifindex: u32,
        /// The address as a host prefix.
        prefix: Prefix,
        /// The length it was assigned with.
        len: u8,
        /// Neither `tentative` nor `dadfailed`.
        #[serde(default = "usable")]
        usable: bool,
    },
    /// An address was removed.
    AddressRemoved {
        /// Interface index.
        ifindex: u32,
        /// The address as a host prefix.
        prefix: Prefix,
        /// The length it was assigned with.
        len: u8,
    },
    /// A link came up (or appeared up).
    LinkUp {
        /// Interface index.
        ifindex: u32,
        /// Interface name.
        name: String,
    },
    /// A link went down (or disappeared).
    LinkDown {
        /// Interface index.
        ifindex: u32,
        /// Interface name.
        name: String,
    },
    /// The mirror was replaced by a full re-dump; the differences were
    /// emitted just before this event.
    Resynced {
        /// Why.
        reason: ResyncReason,
        /// Every watched route after the resync, in key order, when the
        /// consumer may lack some of the events before it (the startup, a
        /// full channel: [`ResyncReason::carries_routes`]): rebuild from it.
        /// None otherwise: the differences before this event were the whole
        /// change, and a second copy of the table (40 B a route) at every
        /// periodic re-dump would be most of the daemon's peak memory.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        routes: Option<RouteSet>,
    },
}

/// What a route holds beyond its key and its realm. Routes with the same
/// shape share one (a node's kube-vip routes all have the same: protocol
/// 248, `dev lo`): the mirror interns them, a [`RouteSet`] lists each once.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct Shape {
    pub(super) protocol: u8,
    pub(super) scope: u8,
    pub(super) kind: u8,
    pub(super) pref: Option<u8>,
    pub(super) nhid: Option<u32>,
    pub(super) prefsrc: Option<IpAddr>,
    /// Sorted.
    pub(super) nexthops: Box<[Nexthop]>,
}

impl Shape {
    /// The shape of `r` (its legs as they are).
    pub(super) fn of(r: Route) -> Shape {
        Shape {
            protocol: r.protocol,
            scope: r.scope,
            kind: r.kind,
            pref: r.pref,
            nhid: r.nhid,
            prefsrc: r.prefsrc,
            nexthops: r.nexthops.into_boxed_slice(),
        }
    }

    /// The route of `key` and `realm` with this shape.
    pub(super) fn route(&self, key: &RouteKey, realm: Option<u32>) -> Route {
        Route {
            table: key.table,
            prefix: key.prefix,
            protocol: self.protocol,
            scope: self.scope,
            kind: self.kind,
            metric: key.metric,
            realm,
            pref: self.pref,
            nhid: self.nhid,
            prefsrc: self.prefsrc,
            nexthops: self.nexthops.to_vec(),
        }
    }
}

/// A list of routes in a compact, read-only form: 40 bytes a route (key,
/// realm, the index of its shape) and each distinct shape once. A resync
/// carries the whole table in one: as a `Vec<Route>` it was ~136 bytes a
/// route and a heap block per route's legs, at the daemon's peak.
/// Serialized as the list of routes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RouteSet {
    entries: Vec<(RouteKey, Option<u32>, u32)>,
    pub(super) shapes: Vec<Shape>,
}

/// Builds a [`RouteSet`], each distinct shape stored once.
#[derive(Debug, Default)]
pub(super) struct RouteSetBuilder {
    set: RouteSet,
    seen: HashMap<Shape, u32>,
}

impl RouteSetBuilder {
    /// Room for `n` routes.
    pub(super) fn with_capacity(n: usize) -> RouteSetBuilder {
        RouteSetBuilder {
            set: RouteSet {
                entries: Vec::with_capacity(n),
                shapes: Vec::new(),
            },
            seen: HashMap::new(),
        }
    }

    /// Append the route of `key` and `realm` with `shape`.
    pub(super) fn push(&mut self, key: RouteKey, realm: Option<u32>, shape: &Shape) {
        let i = match self.seen.get(shape) {
            Some(i) => *i,
            None => {
                let i = u32::try_from(self.set.shapes.len()).unwrap_or(u32::MAX);
                self.set.shapes.push(shape.clone());
                self.seen.insert(shape.clone(), i);
                i
            }
        };
        self.set.entries.push((key, realm, i));
    }

    /// The set.
    pub(super) fn build(self) -> RouteSet {
        self.set
    }
}

impl RouteSet {
    /// How many routes.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// No route.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The routes, in order, each built as it is handed out.
    pub fn iter(&self) -> impl Iterator<Item = Route> + '_ {
        // Every index was pushed with its shape and a set is never edited
        // afterwards: the lookup always finds it.
        self.entries.iter().filter_map(|(k, realm, i)| {
            self.shapes
                .get(usize::try_from(*i).ok()?)
                .map(|s| s.route(k, *realm))
        })
    }
}

impl FromIterator<Route> for RouteSet {
    fn from_iter<I: IntoIterator<Item = Route>>(routes: I) -> RouteSet {
        let mut b = RouteSetBuilder::default();
        for r in routes {
            let (key, realm) = (r.key(), r.realm);
            b.push(key, realm, &Shape::of(r));
        }
        b.build()
    }
}

impl From<Vec<Route>> for RouteSet {
    fn from(routes: Vec<Route>) -> RouteSet {
        routes.into_iter().collect()
    }
}

impl Serialize for RouteSet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for RouteSet {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RouteSet, D::Error> {
        Vec::<Route>::deserialize(d).map(RouteSet::from)
    }
}
