//! rtnetlink wire decoding: datagrams into frames, frames into the plain
//! data of `kernel::types`. No I/O and no state.
//!
//! Contract: every input is untrusted; a short or inconsistent message is an
//! `Err(WireError)` naming what was wrong, never a panic. Unknown message
//! types and unknown attributes are skipped (the kernel adds attributes over
//! time). Only `crate::model` and the sibling plain-data module are used.
//!
//! Why a decoder of our own rather than netlink-packet-route's
//! `RouteMessage::parse`: it decodes straight into the model without the
//! intermediate `Vec<RouteAttribute>`, it is the same attribute walker the
//! nexthop-object decoder (which netlink-packet-route lacks) needs anyway,
//! and it is immune to that crate's frequent breaking releases. The bench
//! `kernel_decode` compares both on the same captured bytes.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::nexthop::decode_nexthop;
use super::types::{Address, Link, Nexthop, NexthopObject, RTNH_F_ONLINK, Route};
use crate::model::{Prefix, TableId};

/// `NLMSG_NOOP`.
pub const NLMSG_NOOP: u16 = 1;
/// `NLMSG_ERROR`.
pub const NLMSG_ERROR: u16 = 2;
/// `NLMSG_DONE`.
pub const NLMSG_DONE: u16 = 3;
/// `NLMSG_OVERRUN`.
pub const NLMSG_OVERRUN: u16 = 4;
/// `RTM_NEWLINK`.
pub const RTM_NEWLINK: u16 = 16;
/// `RTM_DELLINK`.
pub const RTM_DELLINK: u16 = 17;
/// `RTM_GETLINK`.
pub const RTM_GETLINK: u16 = 18;
/// `RTM_NEWADDR`.
pub const RTM_NEWADDR: u16 = 20;
/// `RTM_DELADDR`.
pub const RTM_DELADDR: u16 = 21;
/// `RTM_GETADDR`.
pub const RTM_GETADDR: u16 = 22;
/// `RTM_NEWROUTE`.
pub const RTM_NEWROUTE: u16 = 24;
/// `RTM_DELROUTE`.
pub const RTM_DELROUTE: u16 = 25;
/// `RTM_GETROUTE`.
pub const RTM_GETROUTE: u16 = 26;
/// `RTM_NEWNEXTHOP`.
pub const RTM_NEWNEXTHOP: u16 = 104;
/// `RTM_DELNEXTHOP`.
pub const RTM_DELNEXTHOP: u16 = 105;
/// `RTM_GETNEXTHOP`.
pub const RTM_GETNEXTHOP: u16 = 106;
/// `NLM_F_REQUEST`: every message we send is a request.
pub const NLM_F_REQUEST: u16 = 0x1;
/// `NLM_F_MULTI`.
pub const NLM_F_MULTI: u16 = 0x2;
/// `NLM_F_ACK`: the kernel answers the request with an `NLMSG_ERROR` (0: done).
pub const NLM_F_ACK: u16 = 0x4;
/// `NLM_F_REPLACE` (new requests): replace an existing object.
pub const NLM_F_REPLACE: u16 = 0x100;
/// `NLM_F_EXCL` (new requests): fail if the object exists.
pub const NLM_F_EXCL: u16 = 0x200;
/// `NLM_F_CREATE` (new requests): create the object if it does not exist.
pub const NLM_F_CREATE: u16 = 0x400;
/// `NLM_F_DUMP` (get requests: `NLM_F_ROOT | NLM_F_MATCH`): dump them all.
pub const NLM_F_DUMP: u16 = 0x300;
/// `NLM_F_DUMP_INTR`: the dump changed while it was read.
pub const NLM_F_DUMP_INTR: u16 = 0x10;

/// `AF_INET`.
pub const AF_INET: u8 = 2;
/// `AF_INET6`.
pub const AF_INET6: u8 = 10;

const NLMSG_HDRLEN: usize = 16;

/// A decoding failure, with what was wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("undecodable netlink message (type {msg_type}): {what}")]
pub struct WireError {
    /// Message type being decoded (0 for framing).
    pub msg_type: u16,
    /// What was wrong.
    pub what: String,
}

impl WireError {
    pub(super) fn new(msg_type: u16, what: impl Into<String>) -> WireError {
        WireError {
            msg_type,
            what: what.into(),
        }
    }
}

/// One netlink message of a datagram: its header and payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    /// `nlmsg_type`.
    pub msg_type: u16,
    /// `nlmsg_flags`.
    pub flags: u16,
    /// `nlmsg_seq`.
    pub seq: u32,
    /// `nlmsg_pid`.
    pub port: u32,
    /// The payload after the 16-byte header.
    pub payload: &'a [u8],
}

/// Iterator over the messages of one datagram. Stops at the first framing
/// error, which it yields.
#[derive(Debug, Clone)]
pub struct Frames<'a> {
    buf: &'a [u8],
}

/// Split a datagram into its messages.
pub fn frames(buf: &[u8]) -> Frames<'_> {
    Frames { buf }
}

impl<'a> Iterator for Frames<'a> {
    type Item = Result<Frame<'a>, WireError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.buf.is_empty() {
            return None;
        }
        let b = self.buf;
        if b.len() < NLMSG_HDRLEN {
            self.buf = &[];
            return Some(Err(WireError::new(0, "truncated netlink header")));
        }
        let len = u32_at(b, 0) as usize;
        if len < NLMSG_HDRLEN || len > b.len() {
            self.buf = &[];
            return Some(Err(WireError::new(
                0,
                format!("nlmsg_len {len} outside 16..={}", b.len()),
            )));
        }
        let frame = Frame {
            msg_type: u16_at(b, 4),
            flags: u16_at(b, 6),
            seq: u32_at(b, 8),
            port: u32_at(b, 12),
            payload: &b[NLMSG_HDRLEN..len],
        };
        self.buf = b.get(align4(len)..).unwrap_or(&[]);
        Some(Ok(frame))
    }
}

/// A decoded message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// `RTM_NEWROUTE`. Legs come inline or from `RTA_MULTIPATH`; a route
    /// with only `RTA_NH_ID` has none yet (the mirror resolves them).
    NewRoute(Route),
    /// `RTM_DELROUTE`.
    DelRoute(Route),
    /// `RTM_NEWLINK`.
    NewLink(Link),
    /// `RTM_DELLINK`.
    DelLink(Link),
    /// `RTM_NEWADDR`.
    NewAddr(Address),
    /// `RTM_DELADDR`.
    DelAddr(Address),
    /// `RTM_NEWNEXTHOP`.
    NewNexthop(NexthopObject),
    /// `RTM_DELNEXTHOP`.
    DelNexthop(NexthopObject),
    /// `NLMSG_DONE`: end of a dump.
    Done,
    /// `NLMSG_ERROR`: 0 is an ACK, otherwise a negative errno.
    Error(i32),
    /// A route of a kind the mirror does not keep (multicast, source-
    /// specific, a family other than IPv4/IPv6) or another message type.
    Ignored,
}

/// Decode one frame.
pub fn decode(frame: &Frame<'_>) -> Result<Message, WireError> {
    let t = frame.msg_type;
    let p = frame.payload;
    Ok(match t {
        RTM_NEWROUTE | RTM_DELROUTE => match decode_route(p)? {
            Some(r) if t == RTM_NEWROUTE => Message::NewRoute(r),
            Some(r) => Message::DelRoute(r),
            None => Message::Ignored,
        },
        RTM_NEWLINK | RTM_DELLINK => {
            let l = decode_link(p)?;
            if t == RTM_NEWLINK {
                Message::NewLink(l)
            } else {
                Message::DelLink(l)
            }
        }
        RTM_NEWADDR | RTM_DELADDR => match decode_addr(p)? {
            Some(a) if t == RTM_NEWADDR => Message::NewAddr(a),
            Some(a) => Message::DelAddr(a),
            None => Message::Ignored,
        },
        RTM_NEWNEXTHOP => Message::NewNexthop(decode_nexthop(p)?),
        RTM_DELNEXTHOP => Message::DelNexthop(decode_nexthop(p)?),
        NLMSG_DONE => Message::Done,
        NLMSG_ERROR => {
            let code = p
                .get(..4)
                .map(|b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
                .ok_or_else(|| WireError::new(t, "NLMSG_ERROR shorter than 4 bytes"))?;
            Message::Error(code)
        }
        _ => Message::Ignored,
    })
}

/// Attributes of a netlink payload: `(type without flag bits, value)`.
#[derive(Debug, Clone)]
pub(super) struct Attrs<'a> {
    buf: &'a [u8],
    msg_type: u16,
}

pub(super) fn attrs(buf: &[u8], msg_type: u16) -> Attrs<'_> {
    Attrs { buf, msg_type }
}

impl<'a> Iterator for Attrs<'a> {
    type Item = Result<(u16, &'a [u8]), WireError>;

    fn next(&mut self) -> Option<Self::Item> {
        let b = self.buf;
        if b.len() < 4 {
            // Trailing padding shorter than an attribute header is legal.
            return None;
        }
        let len = usize::from(u16_at(b, 0));
        if len < 4 || len > b.len() {
            self.buf = &[];
            return Some(Err(WireError::new(
                self.msg_type,
                format!("attribute length {len} outside 4..={}", b.len()),
            )));
        }
        // NLA_F_NESTED / NLA_F_NET_BYTEORDER are flags, not part of the type.
        let ty = u16_at(b, 2) & 0x3fff;
        let value = &b[4..len];
        self.buf = b.get(align4(len)..).unwrap_or(&[]);
        Some(Ok((ty, value)))
    }
}

const RTA_DST: u16 = 1;
const RTA_OIF: u16 = 4;
const RTA_GATEWAY: u16 = 5;
const RTA_PRIORITY: u16 = 6;
const RTA_PREFSRC: u16 = 7;
const RTA_MULTIPATH: u16 = 9;
const RTA_FLOW: u16 = 11;
const RTA_TABLE: u16 = 15;
/// The rtmsg header's table byte for a table above 255 (its id is in
/// `RTA_TABLE` alone).
const RT_TABLE_COMPAT: u8 = 252;
const RTA_VIA: u16 = 18;
const RTA_PREF: u16 = 20;
const RTA_NH_ID: u16 = 30;
const RTM_F_CLONED: u32 = 0x200;

/// Decode an rtmsg payload into a route; `None` for routes the mirror does
/// not keep (other families, source-specific routes, cached clones).
pub fn decode_route(p: &[u8]) -> Result<Option<Route>, WireError> {
    let t = RTM_NEWROUTE;
    if p.len() < 12 {
        return Err(WireError::new(
            t,
            format!("rtmsg of {} bytes, need 12", p.len()),
        ));
    }
    let family = p[0];
    let dst_len = p[1];
    let src_len = p[2];
    let flags = u32_at(p, 8);
    if (family != AF_INET && family != AF_INET6) || src_len != 0 || flags & RTM_F_CLONED != 0 {
        return Ok(None);
    }
    let mut table = u32::from(p[4]);
    let mut dst = None;
    let mut gateway = None;
    let mut oif = None;
    let mut metric = 0;
    let mut realm = None;
    let mut pref = None;
    let mut nhid = None;
    let mut prefsrc = None;
    let mut multipath = None;
    for a in attrs(&p[12..], t) {
        let (ty, v) = a?;
        match ty {
            RTA_DST => dst = Some(ip(family, v, t, "RTA_DST")?),
            RTA_GATEWAY => gateway = Some(ip(family, v, t, "RTA_GATEWAY")?),
            RTA_VIA => gateway = Some(via(v, t)?),
            RTA_OIF => oif = Some(u32_attr(v, t, "RTA_OIF")?),
            RTA_PRIORITY => metric = u32_attr(v, t, "RTA_PRIORITY")?,
            RTA_PREFSRC => prefsrc = Some(ip(family, v, t, "RTA_PREFSRC")?),
            RTA_FLOW => realm = Some(u32_attr(v, t, "RTA_FLOW")?),
            RTA_TABLE => table = u32_attr(v, t, "RTA_TABLE")?,
            RTA_PREF => pref = v.first().copied(),
            RTA_NH_ID => nhid = Some(u32_attr(v, t, "RTA_NH_ID")?),
            RTA_MULTIPATH => multipath = Some(decode_multipath(family, v)?),
            _ => {}
        }
    }
    let addr = match dst {
        Some(a) => a,
        None if family == AF_INET => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        None => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
    };
    let prefix = Prefix::new(addr, dst_len)
        .map_err(|e| WireError::new(t, format!("bad destination: {e}")))?;
    let nexthops = match multipath {
        Some(legs) => legs,
        None if gateway.is_some() || oif.is_some() => vec![Nexthop {
            gateway,
            oif,
            weight: 1,
            // rtm_flags carries the RTNH_F_* bits of a single-path route.
            flags: (flags & 0xff) as u8,
        }],
        None => Vec::new(),
    };
    Ok(Some(Route {
        table,
        prefix,
        protocol: p[5],
        scope: p[6],
        kind: p[7],
        metric,
        realm,
        pref,
        nhid,
        prefsrc,
        nexthops,
    }))
}

fn decode_multipath(family: u8, mut v: &[u8]) -> Result<Vec<Nexthop>, WireError> {
    let t = RTM_NEWROUTE;
    let mut legs = Vec::new();
    while v.len() >= 8 {
        let len = usize::from(u16_at(v, 0));
        if len < 8 || len > v.len() {
            return Err(WireError::new(
                t,
                format!("rtnexthop length {len} outside 8..={}", v.len()),
            ));
        }
        let mut leg = Nexthop {
            gateway: None,
            oif: Some(u32_at(v, 4)).filter(|&i| i != 0),
            weight: u16::from(v[3]) + 1,
            flags: v[2],
        };
        for a in attrs(&v[8..len], t) {
            let (ty, av) = a?;
            match ty {
                RTA_GATEWAY => {
                    leg.gateway = Some(ip(family, av, t, "RTA_GATEWAY in RTA_MULTIPATH")?)
                }
                RTA_VIA => leg.gateway = Some(via(av, t)?),
                _ => {}
            }
        }
        legs.push(leg);
        v = v.get(align4(len)..).unwrap_or(&[]);
    }
    Ok(legs)
}

const IFLA_IFNAME: u16 = 3;
const IFF_UP: u32 = 0x1;
const IFF_LOWER_UP: u32 = 0x1_0000;

/// Decode an ifinfomsg payload.
pub fn decode_link(p: &[u8]) -> Result<Link, WireError> {
    let t = RTM_NEWLINK;
    if p.len() < 16 {
        return Err(WireError::new(
            t,
            format!("ifinfomsg of {} bytes, need 16", p.len()),
        ));
    }
    let ifindex = u32_at(p, 4);
    let flags = u32_at(p, 8);
    let mut name = String::new();
    for a in attrs(&p[16..], t) {
        let (ty, v) = a?;
        if ty == IFLA_IFNAME {
            let end = v.iter().position(|&c| c == 0).unwrap_or(v.len());
            name = String::from_utf8_lossy(&v[..end]).into_owned();
        }
    }
    Ok(Link {
        ifindex,
        name,
        up: flags & IFF_UP != 0 && flags & IFF_LOWER_UP != 0,
    })
}

const IFA_ADDRESS: u16 = 1;
const IFA_LOCAL: u16 = 2;
/// The address's flags in 32 bits (the header's `ifa_flags` holds the low 8).
const IFA_FLAGS: u16 = 8;
/// Duplicate address detection failed: another node holds the address.
pub const IFA_F_DADFAILED: u32 = 0x08;
/// Duplicate address detection has not finished: not usable yet.
pub const IFA_F_TENTATIVE: u32 = 0x40;

/// Decode an ifaddrmsg payload; `None` for families other than IPv4/IPv6.
pub fn decode_addr(p: &[u8]) -> Result<Option<Address>, WireError> {
    let t = RTM_NEWADDR;
    if p.len() < 8 {
        return Err(WireError::new(
            t,
            format!("ifaddrmsg of {} bytes, need 8", p.len()),
        ));
    }
    let family = p[0];
    if family != AF_INET && family != AF_INET6 {
        return Ok(None);
    }
    let len = p[1];
    let mut flags = u32::from(p[2]);
    let ifindex = u32_at(p, 4);
    let mut address = None;
    let mut local = None;
    for a in attrs(&p[8..], t) {
        let (ty, v) = a?;
        match ty {
            IFA_ADDRESS => address = Some(ip(family, v, t, "IFA_ADDRESS")?),
            IFA_LOCAL => local = Some(ip(family, v, t, "IFA_LOCAL")?),
            IFA_FLAGS if v.len() >= 4 => flags = u32_at(v, 0),
            _ => {}
        }
    }
    // On point-to-point links IFA_ADDRESS is the peer; IFA_LOCAL is ours.
    let addr = local
        .or(address)
        .ok_or_else(|| WireError::new(t, "address message without IFA_ADDRESS"))?;
    Ok(Some(Address {
        ifindex,
        prefix: Prefix::host(addr),
        len,
        usable: flags & (IFA_F_TENTATIVE | IFA_F_DADFAILED) == 0,
    }))
}

/// Encode a route as an rtmsg payload (the inverse of `decode_route`), for
/// `RTM_NEWROUTE`/`RTM_DELROUTE` requests.
pub fn encode_route(r: &Route) -> Vec<u8> {
    let family = if r.prefix.is_ipv4() {
        AF_INET
    } else {
        AF_INET6
    };
    let mut b = rtmsg(
        family,
        r.prefix.prefix_len(),
        r.table,
        r.protocol,
        r.scope,
        r.kind,
    );
    if r.prefix.prefix_len() > 0 {
        put_attr(&mut b, RTA_DST, &ip_bytes(r.prefix.addr()));
    }
    if r.metric != 0 {
        put_attr(&mut b, RTA_PRIORITY, &r.metric.to_ne_bytes());
    }
    if let Some(realm) = r.realm {
        put_attr(&mut b, RTA_FLOW, &realm.to_ne_bytes());
    }
    if let Some(pref) = r.pref {
        put_attr(&mut b, RTA_PREF, &[pref]);
    }
    // A heal re-writes the route whole: a dropped `src` would change it.
    if let Some(src) = r.prefsrc {
        put_attr(&mut b, RTA_PREFSRC, &ip_bytes(src));
    }
    if let Some(id) = r.nhid {
        // The legs belong to the nexthop object; the kernel refuses both.
        put_attr(&mut b, RTA_NH_ID, &id.to_ne_bytes());
        return b;
    }
    match r.nexthops.as_slice() {
        [] => {}
        [one] => {
            if let Some(g) = one.gateway {
                put_gateway(&mut b, family, g);
            }
            if let Some(o) = one.oif {
                put_attr(&mut b, RTA_OIF, &o.to_ne_bytes());
            }
        }
        legs => {
            let mut mp = Vec::new();
            for l in legs {
                let start = mp.len();
                mp.extend_from_slice(&0u16.to_ne_bytes());
                mp.push(l.flags & RTNH_F_ONLINK);
                mp.push(u8::try_from(l.weight.saturating_sub(1)).unwrap_or(u8::MAX));
                mp.extend_from_slice(&l.oif.unwrap_or(0).to_ne_bytes());
                if let Some(g) = l.gateway {
                    put_gateway(&mut mp, family, g);
                }
                let len = (mp.len() - start) as u16;
                mp[start..start + 2].copy_from_slice(&len.to_ne_bytes());
            }
            put_attr(&mut b, RTA_MULTIPATH, &mp);
        }
    }
    b
}

/// An rtmsg payload that asks a strict-checking kernel for one table of one
/// family (the filter of an `RTM_GETROUTE` dump).
pub fn encode_route_filter(family: u8, table: TableId) -> Vec<u8> {
    rtmsg(family, 0, table, 0, 0, 0)
}

/// The rtmsg header and its `RTA_TABLE`, the one place a route message's
/// table is written (a table above 255 goes in `RTA_TABLE` alone).
fn rtmsg(family: u8, dst_len: u8, table: TableId, protocol: u8, scope: u8, kind: u8) -> Vec<u8> {
    let header_table = u8::try_from(table).unwrap_or(RT_TABLE_COMPAT);
    let mut b = vec![family, dst_len, 0, 0, header_table, protocol, scope, kind];
    // rtm_flags.
    b.extend_from_slice(&0u32.to_ne_bytes());
    put_attr(&mut b, RTA_TABLE, &table.to_ne_bytes());
    b
}

/// Encode an interface address as an ifaddrmsg payload (`IFA_LOCAL` and
/// `IFA_ADDRESS` both set, as `ip addr add` does).
pub fn encode_addr(a: &Address) -> Vec<u8> {
    let addr = a.prefix.addr();
    let family = if addr.is_ipv4() { AF_INET } else { AF_INET6 };
    let mut b = vec![family, a.len, 0, 0];
    b.extend_from_slice(&a.ifindex.to_ne_bytes());
    put_attr(&mut b, IFA_LOCAL, &ip_bytes(addr));
    put_attr(&mut b, IFA_ADDRESS, &ip_bytes(addr));
    if !a.usable {
        // Only the tests encode an unusable address (a decoder's input).
        put_attr(
            &mut b,
            IFA_FLAGS,
            &(IFA_F_TENTATIVE | IFA_F_DADFAILED).to_ne_bytes(),
        );
    }
    b
}

fn put_gateway(b: &mut Vec<u8>, family: u8, g: IpAddr) {
    if (family == AF_INET) == g.is_ipv4() {
        put_attr(b, RTA_GATEWAY, &ip_bytes(g));
    } else {
        let mut v = u16::from(if g.is_ipv4() { AF_INET } else { AF_INET6 })
            .to_ne_bytes()
            .to_vec();
        v.extend_from_slice(&ip_bytes(g));
        put_attr(b, RTA_VIA, &v);
    }
}

fn ip_bytes(a: IpAddr) -> Vec<u8> {
    match a {
        IpAddr::V4(a) => a.octets().to_vec(),
        IpAddr::V6(a) => a.octets().to_vec(),
    }
}

fn put_attr(b: &mut Vec<u8>, ty: u16, v: &[u8]) {
    let len = 4 + v.len();
    b.extend_from_slice(&(len as u16).to_ne_bytes());
    b.extend_from_slice(&ty.to_ne_bytes());
    b.extend_from_slice(v);
    b.resize(align4(b.len()), 0);
}

/// A netlink message: header (`seq` 0, port 0) then `payload`.
pub fn message(msg_type: u16, flags: u16, payload: &[u8]) -> Vec<u8> {
    let len = 16 + payload.len();
    let mut b = Vec::with_capacity(len);
    b.extend_from_slice(&(len as u32).to_ne_bytes());
    b.extend_from_slice(&msg_type.to_ne_bytes());
    b.extend_from_slice(&flags.to_ne_bytes());
    b.extend_from_slice(&0u32.to_ne_bytes());
    b.extend_from_slice(&0u32.to_ne_bytes());
    b.extend_from_slice(payload);
    b
}

pub(super) fn ip(family: u8, v: &[u8], t: u16, what: &str) -> Result<IpAddr, WireError> {
    match (family, v.len()) {
        (AF_INET, 4) => Ok(IpAddr::V4(Ipv4Addr::new(v[0], v[1], v[2], v[3]))),
        (AF_INET6, 16) => {
            let mut a = [0u8; 16];
            a.copy_from_slice(v);
            Ok(IpAddr::V6(Ipv6Addr::from(a)))
        }
        _ => Err(WireError::new(
            t,
            format!("{what} of {} bytes for family {family}", v.len()),
        )),
    }
}

/// `RTA_VIA`: a family (u16) then the address (IPv4 routes via IPv6
/// gateways).
fn via(v: &[u8], t: u16) -> Result<IpAddr, WireError> {
    if v.len() < 2 {
        return Err(WireError::new(t, "RTA_VIA shorter than 2 bytes"));
    }
    let family = u16_at(v, 0);
    ip(u8::try_from(family).unwrap_or(0), &v[2..], t, "RTA_VIA")
}

pub(super) fn u32_attr(v: &[u8], t: u16, what: &str) -> Result<u32, WireError> {
    if v.len() != 4 {
        return Err(WireError::new(
            t,
            format!("{what} of {} bytes, need 4", v.len()),
        ));
    }
    Ok(u32_at(v, 0))
}

pub(super) fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_ne_bytes([b[at], b[at + 1]])
}

pub(super) fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn align4(n: usize) -> usize {
    (n + 3) & !3
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(bytes: &[u8]) -> Vec<Message> {
        frames(bytes)
            .map(|f| decode(&f.unwrap()).unwrap())
            .collect()
    }

    /// The dump filter: family, the table in the header byte (252 above
    /// 255) and in `RTA_TABLE`, everything else zero.
    #[test]
    fn a_route_filter_is_the_rtmsg_a_strict_dump_asks_for() {
        for (family, table, header) in [(AF_INET, 198u32, 198u8), (AF_INET6, 1000, 252)] {
            let mut want = vec![family, 0, 0, 0, header, 0, 0, 0, 0, 0, 0, 0];
            want.extend_from_slice(&8u16.to_ne_bytes());
            want.extend_from_slice(&RTA_TABLE.to_ne_bytes());
            want.extend_from_slice(&table.to_ne_bytes());
            assert_eq!(encode_route_filter(family, table), want, "table {table}");
        }
    }

    /// `route-dump-table198.bin`: see tests/data/kernel/README.md for the
    /// commands that built the table.
    #[test]
    fn golden_route_dump_of_table_198() {
        let bytes = include_bytes!("../../tests/data/kernel/route-dump-table198.bin");
        let routes: Vec<Route> = decode_all(bytes)
            .into_iter()
            .map(|m| match m {
                Message::NewRoute(r) => r,
                other => panic!("unexpected {other:?}"),
            })
            .collect();
        let show: Vec<String> = routes
            .iter()
            .map(|r| {
                let legs: Vec<String> = r
                    .nexthops
                    .iter()
                    .map(|n| format!("{:?}@{:?}w{}", n.gateway, n.oif, n.weight))
                    .collect();
                format!(
                    "{} t{} p{} s{} k{} m{} realm{:?} nh{:?} [{}]",
                    r.prefix,
                    r.table,
                    r.protocol,
                    r.scope,
                    r.kind,
                    r.metric,
                    r.realm,
                    r.nhid,
                    legs.join(" ")
                )
            })
            .collect();
        let expected = [
            "192.0.2.10/32 t198 p248 s253 k1 m0 realmSome(1) nhNone [None@Some(3)w1]",
            "192.0.2.11/32 t198 p248 s0 k1 m0 realmNone nhNone [Some(10.9.0.2)@Some(3)w1 Some(10.9.0.3)@Some(3)w3]",
            "192.0.2.12/32 t198 p248 s0 k1 m0 realmNone nhSome(10) [Some(10.9.0.2)@Some(3)w1 Some(10.9.0.3)@Some(3)w4]",
            "192.0.2.13/32 t198 p3 s0 k6 m5 realmNone nhNone []",
            "192.0.2.14/32 t198 p248 s0 k6 m0 realmNone nhSome(3) [None@Some(1)w1]",
            "192.0.2.15/32 t198 p248 s0 k1 m20 realmSome(2) nhNone [Some(10.9.0.2)@Some(3)w1]",
            "2001:db8::10/128 t198 p248 s0 k1 m1024 realmNone nhNone [None@Some(3)w1]",
            "2001:db8::11/128 t198 p248 s0 k1 m1024 realmNone nhNone [Some(2001:db8:9::2)@Some(3)w1 Some(2001:db8:9::3)@Some(3)w1]",
            "2001:db8::12/128 t198 p248 s0 k1 m1024 realmNone nhSome(11) [Some(2001:db8:9::2)@Some(3)w1 Some(2001:db8:9::3)@Some(3)w1]",
        ];
        assert_eq!(show, expected);
    }

    /// Links and addresses as the kernel announced them while `va` came up,
    /// got addresses, lost its IPv4 one and went down (README.md).
    #[test]
    fn golden_link_and_address_events() {
        let bytes = include_bytes!("../../tests/data/kernel/link-addr-monitor.bin");
        let got: Vec<String> = decode_all(bytes)
            .into_iter()
            .filter_map(|m| match m {
                Message::NewLink(l) => Some(format!("link {} {} up={}", l.ifindex, l.name, l.up)),
                Message::NewAddr(a) => {
                    Some(format!("+addr {} {}/{}", a.ifindex, a.prefix.addr(), a.len))
                }
                Message::DelAddr(a) => {
                    Some(format!("-addr {} {}/{}", a.ifindex, a.prefix.addr(), a.len))
                }
                _ => None,
            })
            .collect();
        // Link down takes the IPv6 addresses with it (not the IPv4 one).
        assert_eq!(
            got,
            [
                "link 3 va up=true",
                "link 3 va up=true",
                "link 2 vb up=true",
                "+addr 3 10.9.0.1/24",
                "+addr 3 2001:db8:9::1/64",
                "-addr 3 10.9.0.1/24",
                "link 3 va up=false",
                "-addr 3 2001:db8:9::1/64",
                "-addr 3 fe80::4c19:fbff:fec5:cdd/64",
                "link 2 vb up=false",
            ]
        );
    }

    proptest::proptest! {
        /// Whatever the bytes, decoding returns values, never panics.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..512)) {
            for f in frames(&bytes).flatten() {
                let _ = decode(&f);
            }
            let _ = decode_route(&bytes);
            let _ = decode_link(&bytes);
            let _ = decode_addr(&bytes);
            let _ = crate::kernel::nexthop::decode_nexthop(&bytes);
        }

        /// Real captures with one byte changed still decode to values.
        #[test]
        fn corrupted_captures_never_panic(at in 0usize..876, to in proptest::num::u8::ANY) {
            let mut b = include_bytes!("../../tests/data/kernel/route-dump-table198.bin").to_vec();
            let i = at % b.len();
            b[i] = to;
            for f in frames(&b).flatten() {
                let _ = decode(&f);
            }
            let mut n = include_bytes!("../../tests/data/kernel/nexthop-dump.bin").to_vec();
            let j = at % n.len();
            n[j] = to;
            for f in frames(&n).flatten() {
                let _ = decode(&f);
            }
        }
    }

    #[test]
    fn framing_errors_are_values() {
        // nlmsg_len larger than the datagram.
        let mut b = vec![0u8; 20];
        b[0] = 200;
        let r: Vec<_> = frames(&b).collect();
        assert!(matches!(&r[..], [Err(e)] if e.what.contains("nlmsg_len 200")));
        // A truncated header.
        assert!(matches!(frames(&[1, 2, 3]).next(), Some(Err(_))));
        // An rtmsg whose attribute overruns the payload.
        let mut p = vec![AF_INET, 32, 0, 0, 198, 248, 0, 1, 0, 0, 0, 0];
        p.extend_from_slice(&[50, 0, 1, 0, 192, 0, 2, 10]);
        assert!(
            decode_route(&p)
                .unwrap_err()
                .what
                .contains("attribute length 50")
        );
        // RTA_DST of the wrong size for the family.
        let mut p = vec![AF_INET, 32, 0, 0, 198, 248, 0, 1, 0, 0, 0, 0];
        p.extend_from_slice(&[7, 0, 1, 0, 192, 0, 2, 0]);
        assert!(
            decode_route(&p)
                .unwrap_err()
                .what
                .contains("RTA_DST of 3 bytes")
        );
    }

    #[test]
    fn encode_then_decode_is_identity() {
        let bytes = include_bytes!("../../tests/data/kernel/route-dump-table198.bin");
        for f in frames(bytes) {
            let f = f.unwrap();
            if let Message::NewRoute(mut r) = decode(&f).unwrap() {
                if r.nhid.is_some() {
                    // Encoded without legs: the legs belong to the object.
                    r.nexthops.clear();
                }
                let back = decode_route(&encode_route(&r)).unwrap().unwrap();
                assert_eq!(back, r);
            }
        }
        let a = Address {
            ifindex: 3,
            prefix: "2001:db8::10/128".parse().unwrap(),
            len: 64,
            usable: true,
        };
        assert_eq!(decode_addr(&encode_addr(&a)).unwrap(), Some(a));
        let failed = a.with_usable(false);
        assert_eq!(decode_addr(&encode_addr(&failed)).unwrap(), Some(failed));
        // The header's 8 bits alone: tentative.
        let mut b = encode_addr(&a);
        b[2] = IFA_F_TENTATIVE as u8;
        assert_eq!(decode_addr(&b).unwrap(), Some(failed));
    }

    #[test]
    fn table_above_255_comes_from_rta_table() {
        let mut p = vec![AF_INET, 32, 0, 0, 252, 248, 0, 1, 0, 0, 0, 0];
        p.extend_from_slice(&[8, 0, 1, 0, 192, 0, 2, 10]);
        p.extend_from_slice(&[8, 0, 15, 0]);
        p.extend_from_slice(&51820u32.to_ne_bytes());
        let r = decode_route(&p).unwrap().unwrap();
        assert_eq!(r.table, 51820);
        assert_eq!(r.prefix.to_string(), "192.0.2.10/32");
    }
}
