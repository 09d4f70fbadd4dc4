//! ZAPI wire codec: the 10-byte frame header (a `tokio-util` codec), the
//! per-release numbering ([`Dialect`]), the messages a read-only client sends
//! (HELLO, REDISTRIBUTE_ADD/DELETE, ROUTER_ID_ADD) and the route bodies zebra
//! pushes (REDISTRIBUTE_ROUTE_ADD/DEL).
//!
//! Contract:
//! - Decoding never panics: a bad marker or version, a length below the
//!   header size, or a truncated body is a [`ZapiError`] value.
//! - Frames are length-delimited (u16, header included), so a frame of any
//!   command the client does not know is handed up whole and can be skipped.
//! - Everything that differs between FRR releases (command numbers, route
//!   type numbers, the nexthop weight width, the MPLS `label_type` byte, the
//!   HELLO body) is in [`Dialect`]; nothing here guesses a release.
//! - Nexthops carrying SEG6/SEG6LOCAL data have a release- and host-dependent
//!   layout: such a route is refused ([`ZapiError::Unsupported`]), never
//!   misparsed.
//!
//! Depends on nothing internal but [`crate::model`].

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use bytes::{Buf, BufMut, Bytes, BytesMut};
use serde::{Deserialize, Serialize};
use tokio_util::codec::{Decoder, Encoder};

use crate::model::Prefix;

/// Size of the ZAPI header (version 6, FRR 6.0 and later).
pub const HEADER_SIZE: usize = 10;
/// The header marker of FRR (Quagga used 255).
pub const MARKER: u8 = 0xFE;
/// The only ZAPI version this codec speaks (FRR 6.0 through 10.x).
pub const VERSION: u8 = 6;
/// zebra drops client-to-zebra frames larger than this (`ZEBRA_MAX_PACKET_SIZ`).
pub const MAX_CLIENT_FRAME: usize = 16384;

/// `AF_INET` as zebra writes it in prefixes.
const AF_INET: u8 = 2;
/// `AF_INET6` as zebra writes it in prefixes.
const AF_INET6: u8 = 10;

/// Why a frame or a body could not be decoded or encoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ZapiError {
    /// The header marker is not 0xFE: not a FRR zserv peer, or a desynchronised stream.
    BadMarker(u8),
    /// The header version is not 6.
    BadVersion(u8),
    /// The header length is below the header size.
    BadLength(u16),
    /// A body ended before a field: which field, and the command.
    Truncated {
        /// The command number of the frame.
        command: u16,
        /// The field being read.
        field: &'static str,
    },
    /// A value is out of its range (e.g. prefix length 40 for IPv4).
    Invalid {
        /// The command number of the frame.
        command: u16,
        /// What was wrong.
        what: String,
    },
    /// The body uses a feature whose layout this client does not decode.
    Unsupported {
        /// The command number of the frame.
        command: u16,
        /// The feature.
        what: &'static str,
    },
    /// An encoded frame would exceed what zebra accepts.
    TooLarge(usize),
    /// The socket failed.
    Io(String),
}

impl fmt::Display for ZapiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ZapiError::BadMarker(m) => write!(
                f,
                "ZAPI header marker is {m:#04x}, expected 0xfe: the peer is not FRR's zebra (or the stream lost sync)"
            ),
            ZapiError::BadVersion(v) => write!(
                f,
                "ZAPI header version is {v}, expected 6: this zebra speaks a ZAPI this client does not support"
            ),
            ZapiError::BadLength(l) => {
                write!(f, "ZAPI header length {l} is below the 10-byte header")
            }
            ZapiError::Truncated { command, field } => {
                write!(
                    f,
                    "ZAPI command {command}: body ends before field '{field}'"
                )
            }
            ZapiError::Invalid { command, what } => write!(f, "ZAPI command {command}: {what}"),
            ZapiError::Unsupported { command, what } => write!(
                f,
                "ZAPI command {command}: carries {what}, whose layout this client does not decode; the route is ignored"
            ),
            ZapiError::TooLarge(n) => write!(
                f,
                "a {n}-byte ZAPI frame exceeds the {MAX_CLIENT_FRAME} bytes zebra accepts"
            ),
            ZapiError::Io(e) => write!(f, "ZAPI socket: {e}"),
        }
    }
}

impl std::error::Error for ZapiError {}

impl From<std::io::Error> for ZapiError {
    fn from(e: std::io::Error) -> ZapiError {
        ZapiError::Io(e.to_string())
    }
}

/// One ZAPI frame: the header fields and the raw body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The VRF the message is about (0 = default).
    pub vrf_id: u32,
    /// The command number (release dependent: see [`Dialect`]).
    pub command: u16,
    /// The body, after the header.
    pub body: Bytes,
}

/// The frame codec: length-delimited frames of up to 65535 bytes.
#[derive(Debug, Default, Clone, Copy)]
pub struct FrameCodec;

impl Decoder for FrameCodec {
    type Item = Frame;
    type Error = ZapiError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, ZapiError> {
        if src.len() < HEADER_SIZE {
            src.reserve(HEADER_SIZE - src.len());
            return Ok(None);
        }
        let len = u16::from_be_bytes([src[0], src[1]]);
        // Check the header before waiting for the body: a desynchronised
        // stream must fail now, not after up to 64 KiB of garbage.
        if src[2] != MARKER {
            return Err(ZapiError::BadMarker(src[2]));
        }
        if src[3] != VERSION {
            return Err(ZapiError::BadVersion(src[3]));
        }
        if usize::from(len) < HEADER_SIZE {
            return Err(ZapiError::BadLength(len));
        }
        let len = usize::from(len);
        if src.len() < len {
            src.reserve(len - src.len());
            return Ok(None);
        }
        let mut frame = src.split_to(len);
        frame.advance(4);
        let vrf_id = frame.get_u32();
        let command = frame.get_u16();
        Ok(Some(Frame {
            vrf_id,
            command,
            body: frame.freeze(),
        }))
    }
}

impl Encoder<Frame> for FrameCodec {
    type Error = ZapiError;

    fn encode(&mut self, item: Frame, dst: &mut BytesMut) -> Result<(), ZapiError> {
        let len = HEADER_SIZE + item.body.len();
        if len > MAX_CLIENT_FRAME {
            return Err(ZapiError::TooLarge(len));
        }
        dst.reserve(len);
        // `len` <= 16384, so the cast cannot truncate.
        dst.put_u16(len as u16);
        dst.put_u8(MARKER);
        dst.put_u8(VERSION);
        dst.put_u32(item.vrf_id);
        dst.put_u16(item.command);
        dst.extend_from_slice(&item.body);
        Ok(())
    }
}

/// Which ZAPI numbering table a release uses (frr-protocols.md §1.5, §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Numbering {
    /// FRR 8.2 to 8.4.
    V8_2,
    /// FRR 9.0.
    V9_0,
    /// FRR 9.1.
    V9_1,
    /// FRR 10.0 and 10.1.
    V10_0,
    /// FRR 10.2.
    V10_2,
    /// FRR 10.3 and later.
    V10_3,
}

/// Everything about the ZAPI wire that depends on the FRR release.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dialect {
    /// The command numbering table.
    pub numbering: Numbering,
    /// Nexthop weight is a u64 on the wire (FRR 10.1 and later), else a u32.
    pub weight_u64: bool,
}

/// The commands this client uses, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Command {
    /// ZEBRA_HELLO (client to zebra).
    Hello,
    /// ZEBRA_CAPABILITIES (zebra's answer to HELLO).
    Capabilities,
    /// ZEBRA_REDISTRIBUTE_ADD (subscribe).
    RedistributeAdd,
    /// ZEBRA_REDISTRIBUTE_DELETE (unsubscribe).
    RedistributeDelete,
    /// ZEBRA_REDISTRIBUTE_ROUTE_ADD (zebra to client, an upsert).
    RedistributeRouteAdd,
    /// ZEBRA_REDISTRIBUTE_ROUTE_DEL (zebra to client).
    RedistributeRouteDel,
    /// ZEBRA_ROUTER_ID_ADD (asks for the router id; zebra answers at once).
    RouterIdAdd,
    /// ZEBRA_ROUTER_ID_DELETE.
    RouterIdDelete,
    /// ZEBRA_ROUTER_ID_UPDATE (zebra's answer to ROUTER_ID_ADD).
    RouterIdUpdate,
    /// ZEBRA_VRF_ADD (unsolicited).
    VrfAdd,
    /// ZEBRA_ERROR.
    Error,
}

/// Route type ZEBRA_ROUTE_SYSTEM: what a read-only client says HELLO as.
pub const ROUTE_SYSTEM: u8 = 0;

impl Dialect {
    /// The dialect of a numbering table, with the weight width of its first
    /// release; use [`Dialect::with_weight_u64`] for 10.1.
    pub const fn new(numbering: Numbering) -> Dialect {
        Dialect {
            numbering,
            weight_u64: matches!(numbering, Numbering::V10_2 | Numbering::V10_3),
        }
    }

    /// The same dialect with the given nexthop weight width.
    pub const fn with_weight_u64(self, weight_u64: bool) -> Dialect {
        Dialect {
            numbering: self.numbering,
            weight_u64,
        }
    }

    fn is_10(self) -> bool {
        matches!(
            self.numbering,
            Numbering::V10_0 | Numbering::V10_2 | Numbering::V10_3
        )
    }

    /// The wire number of a command.
    pub fn command(self, c: Command) -> u16 {
        // Below ZEBRA_INTERFACE_SET_ARP (inserted at 7 in 10.0) nothing moved;
        // every command this client uses is above it.
        let shift = u16::from(self.is_10());
        match c {
            Command::Hello => 18 + shift,
            Command::Capabilities => 19 + shift,
            Command::RedistributeAdd => 11 + shift,
            Command::RedistributeDelete => 12 + shift,
            Command::RedistributeRouteAdd => 30 + shift,
            Command::RedistributeRouteDel => 31 + shift,
            Command::RouterIdAdd => 15 + shift,
            Command::RouterIdDelete => 16 + shift,
            Command::RouterIdUpdate => 17 + shift,
            Command::VrfAdd => match self.numbering {
                Numbering::V10_0 => 34,
                _ => 33,
            },
            Command::Error => match self.numbering {
                Numbering::V8_2 | Numbering::V9_0 | Numbering::V10_0 => 118,
                Numbering::V9_1 => 117,
                Numbering::V10_2 | Numbering::V10_3 => 120,
            },
        }
    }

    /// The command a wire number stands for, if this client knows it.
    pub fn command_of(self, n: u16) -> Option<Command> {
        use Command::*;
        [
            Hello,
            Capabilities,
            RedistributeAdd,
            RedistributeDelete,
            RedistributeRouteAdd,
            RedistributeRouteDel,
            RouterIdAdd,
            RouterIdDelete,
            RouterIdUpdate,
            VrfAdd,
            Error,
        ]
        .into_iter()
        .find(|c| self.command(*c) == n)
    }

    /// ZEBRA_ROUTE_TABLE (what `ip import-table N` creates).
    pub fn route_table(self) -> u8 {
        if self.is_10() { 16 } else { 15 }
    }

    /// ZEBRA_ROUTE_TABLE_DIRECT (10.0 and later only).
    pub fn route_table_direct(self) -> Option<u8> {
        self.is_10().then_some(31)
    }

    /// ZEBRA_ROUTE_MAX: route types must be below it.
    pub fn route_max(self) -> u8 {
        if self.is_10() { 33 } else { 31 }
    }

    /// Whether nexthop MPLS labels carry a `label_type` byte (9.0 and later).
    pub fn label_type(self) -> bool {
        !matches!(self.numbering, Numbering::V8_2)
    }

    /// Whether HELLO still has the `receive_notify` byte (before 10.0).
    pub fn hello_has_notify(self) -> bool {
        !self.is_10()
    }
}

/// Address family identifier as ZAPI writes it (`AFI_IP`, `AFI_IP6`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Afi {
    /// IPv4 (1).
    Ipv4,
    /// IPv6 (2).
    Ipv6,
}

impl Afi {
    /// The wire value.
    pub fn wire(self) -> u8 {
        match self {
            Afi::Ipv4 => 1,
            Afi::Ipv6 => 2,
        }
    }

    /// From the wire value.
    pub fn from_wire(v: u8) -> Option<Afi> {
        match v {
            1 => Some(Afi::Ipv4),
            2 => Some(Afi::Ipv6),
            _ => None,
        }
    }
}

/// ZEBRA_HELLO's body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hello {
    /// The route type the client speaks for; 0 for a read-only client, so
    /// that zebra never flushes a real daemon's routes when it disconnects.
    pub proto: u8,
    /// The instance of that type.
    pub instance: u16,
    /// A session id.
    pub session_id: u32,
}

/// ZEBRA_REDISTRIBUTE_ADD/DELETE's body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Redistribute {
    /// The address family.
    pub afi: Afi,
    /// The route type (e.g. [`Dialect::route_table`]).
    pub route_type: u8,
    /// The instance: the table id for TABLE and TABLE_DIRECT.
    pub instance: u16,
}

impl Dialect {
    /// HELLO as a frame, in this release's body layout (9 bytes before 10.0,
    /// 8 from 10.0), never synchronous (a synchronous client gets no deletes).
    pub fn encode_hello(self, h: Hello) -> Frame {
        let mut b = BytesMut::with_capacity(9);
        b.put_u8(h.proto);
        b.put_u16(h.instance);
        b.put_u32(h.session_id);
        if self.hello_has_notify() {
            b.put_u8(0); // receive_notify
        }
        b.put_u8(0); // synchronous
        Frame {
            vrf_id: 0,
            command: self.command(Command::Hello),
            body: b.freeze(),
        }
    }

    /// Decodes a HELLO body (for tests and fakes).
    pub fn decode_hello(self, f: &Frame) -> Result<Hello, ZapiError> {
        let mut r = Reader::new(f);
        Ok(Hello {
            proto: r.u8("proto")?,
            instance: r.u16("instance")?,
            session_id: r.u32("session_id")?,
        })
    }

    /// REDISTRIBUTE_ADD (`add`) or REDISTRIBUTE_DELETE as a frame, for VRF `vrf_id`.
    pub fn encode_redistribute(self, add: bool, vrf_id: u32, r: Redistribute) -> Frame {
        let mut b = BytesMut::with_capacity(4);
        b.put_u8(r.afi.wire());
        b.put_u8(r.route_type);
        b.put_u16(r.instance);
        let c = if add {
            Command::RedistributeAdd
        } else {
            Command::RedistributeDelete
        };
        Frame {
            vrf_id,
            command: self.command(c),
            body: b.freeze(),
        }
    }

    /// Decodes a REDISTRIBUTE_ADD/DELETE body (for tests and fakes).
    pub fn decode_redistribute(self, f: &Frame) -> Result<Redistribute, ZapiError> {
        let mut r = Reader::new(f);
        let afi = r.u8("afi")?;
        let afi = Afi::from_wire(afi).ok_or_else(|| r.invalid(format!("unknown afi {afi}")))?;
        Ok(Redistribute {
            afi,
            route_type: r.u8("type")?,
            instance: r.u16("instance")?,
        })
    }

    /// ROUTER_ID_ADD for `afi`: zebra answers at once with ROUTER_ID_UPDATE,
    /// which, as zebra handles a client's messages in order, arrives after
    /// the dumps of every REDISTRIBUTE_ADD sent before it (the client uses it
    /// as the end-of-dump marker ZAPI lacks).
    pub fn encode_router_id_add(self, afi: Afi) -> Frame {
        let mut b = BytesMut::with_capacity(2);
        b.put_u16(u16::from(afi.wire()));
        Frame {
            vrf_id: 0,
            command: self.command(Command::RouterIdAdd),
            body: b.freeze(),
        }
    }

    /// Decodes a ROUTER_ID_ADD body (for tests and fakes).
    pub fn decode_router_id_add(self, f: &Frame) -> Result<Afi, ZapiError> {
        let mut r = Reader::new(f);
        let afi = r.u16("afi")?;
        u8::try_from(afi)
            .ok()
            .and_then(Afi::from_wire)
            .ok_or_else(|| r.invalid(format!("unknown afi {afi}")))
    }
}

/// `ZAPI_MESSAGE_*` bits of a route's `message` field.
pub mod message {
    /// Nexthops follow.
    pub const NEXTHOP: u32 = 0x01;
    /// Distance follows.
    pub const DISTANCE: u32 = 0x02;
    /// Metric follows.
    pub const METRIC: u32 = 0x04;
    /// Tag follows.
    pub const TAG: u32 = 0x08;
    /// MTU follows.
    pub const MTU: u32 = 0x10;
    /// A source prefix follows the prefix.
    pub const SRCPFX: u32 = 0x20;
    /// Backup nexthops follow.
    pub const BACKUP_NEXTHOPS: u32 = 0x40;
    /// A nexthop group id follows.
    pub const NHG: u32 = 0x80;
    /// A table id follows.
    pub const TABLEID: u32 = 0x100;
    /// Each nexthop carries an SR-TE colour.
    pub const SRTE: u32 = 0x200;
    /// Opaque data follows.
    pub const OPAQUE: u32 = 0x400;
}

/// `ZAPI_NEXTHOP_FLAG_*` bits of a nexthop's `flags` field.
pub mod nh_flag {
    /// On-link nexthop.
    pub const ONLINK: u8 = 0x01;
    /// MPLS labels follow.
    pub const LABEL: u8 = 0x02;
    /// A weight follows.
    pub const WEIGHT: u8 = 0x04;
    /// Backup indexes follow.
    pub const HAS_BACKUP: u8 = 0x08;
    /// SRv6 segments follow (layout release-dependent: refused).
    pub const SEG6: u8 = 0x10;
    /// SRv6 local behaviour follows (host layout: refused).
    pub const SEG6LOCAL: u8 = 0x20;
    /// A router MAC follows.
    pub const EVPN: u8 = 0x40;
}

/// Where a nexthop points.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Gateway {
    /// NEXTHOP_TYPE_IFINDEX (1): an interface only.
    Ifindex {
        /// Interface index.
        ifindex: u32,
    },
    /// NEXTHOP_TYPE_IPV4 (2) / IPV4_IFINDEX (3).
    Ipv4 {
        /// The gateway.
        gate: Ipv4Addr,
        /// Interface index (0 when none).
        ifindex: u32,
        /// True for IPV4_IFINDEX.
        with_ifindex: bool,
    },
    /// NEXTHOP_TYPE_IPV6 (4) / IPV6_IFINDEX (5).
    Ipv6 {
        /// The gateway.
        gate: Ipv6Addr,
        /// Interface index (0 when none).
        ifindex: u32,
        /// True for IPV6_IFINDEX.
        with_ifindex: bool,
    },
    /// NEXTHOP_TYPE_BLACKHOLE (6).
    Blackhole {
        /// 0 unspec, 1 null, 2 reject, 3 admin-prohibited.
        kind: u8,
    },
}

impl Gateway {
    fn wire_type(&self) -> u8 {
        match self {
            Gateway::Ifindex { .. } => 1,
            Gateway::Ipv4 {
                with_ifindex: false,
                ..
            } => 2,
            Gateway::Ipv4 { .. } => 3,
            Gateway::Ipv6 {
                with_ifindex: false,
                ..
            } => 4,
            Gateway::Ipv6 { .. } => 5,
            Gateway::Blackhole { .. } => 6,
        }
    }

    /// The gateway address, if any.
    pub fn addr(&self) -> Option<IpAddr> {
        match self {
            Gateway::Ipv4 { gate, .. } => Some(IpAddr::V4(*gate)),
            Gateway::Ipv6 { gate, .. } => Some(IpAddr::V6(*gate)),
            _ => None,
        }
    }
}

/// One nexthop of a redistributed route.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Nexthop {
    /// The nexthop's VRF.
    pub vrf_id: u32,
    /// Where it points.
    pub gateway: Gateway,
    /// `ZAPI_NEXTHOP_FLAG_*` bits as received.
    pub flags: u8,
    /// MPLS labels (host byte order on the wire).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<u32>,
    /// The label type byte (9.0 and later, when labels are present).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_type: Option<u8>,
    /// The weight, present only when the WEIGHT flag is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<u64>,
    /// The EVPN router MAC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rmac: Option<[u8; 6]>,
    /// The SR-TE colour (when the route's message has SRTE).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub srte_color: Option<u32>,
    /// Indexes of backup nexthops.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub backup_idx: Vec<u8>,
}

/// A route zebra redistributes (REDISTRIBUTE_ROUTE_ADD/DEL body).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZapiRoute {
    /// The VRF of the frame header.
    pub vrf_id: u32,
    /// The route type (release numbering).
    pub route_type: u8,
    /// The instance: the table id for TABLE and TABLE_DIRECT.
    pub instance: u16,
    /// `ZEBRA_FLAG_*` bits, informational.
    pub flags: u32,
    /// `ZAPI_MESSAGE_*` bits as received.
    pub message: u32,
    /// The SAFI (1, unicast, in redistribution).
    pub safi: u8,
    /// The destination.
    pub prefix: Prefix,
    /// The source prefix of an IPv6 source-specific route.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src_prefix: Option<Prefix>,
    /// A nexthop group id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nhg_id: Option<u32>,
    /// Every nexthop zebra sent (all active ones).
    pub nexthops: Vec<Nexthop>,
    /// Backup nexthops.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub backup_nexthops: Vec<Nexthop>,
    /// Administrative distance.
    pub distance: Option<u8>,
    /// Metric.
    pub metric: Option<u32>,
    /// Tag.
    pub tag: Option<u32>,
    /// MTU.
    pub mtu: Option<u32>,
    /// Table id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_id: Option<u32>,
}

/// Bounds-checked reads of a frame body.
struct Reader<'a> {
    buf: &'a [u8],
    command: u16,
}

impl<'a> Reader<'a> {
    fn new(f: &'a Frame) -> Reader<'a> {
        Reader {
            buf: &f.body,
            command: f.command,
        }
    }

    fn take(&mut self, n: usize, field: &'static str) -> Result<&'a [u8], ZapiError> {
        if self.buf.len() < n {
            return Err(ZapiError::Truncated {
                command: self.command,
                field,
            });
        }
        let (a, b) = self.buf.split_at(n);
        self.buf = b;
        Ok(a)
    }

    fn array<const N: usize>(&mut self, field: &'static str) -> Result<[u8; N], ZapiError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N, field)?);
        Ok(a)
    }

    fn u8(&mut self, field: &'static str) -> Result<u8, ZapiError> {
        Ok(self.take(1, field)?[0])
    }

    fn u16(&mut self, field: &'static str) -> Result<u16, ZapiError> {
        Ok(u16::from_be_bytes(self.array(field)?))
    }

    fn u32(&mut self, field: &'static str) -> Result<u32, ZapiError> {
        Ok(u32::from_be_bytes(self.array(field)?))
    }

    fn u64(&mut self, field: &'static str) -> Result<u64, ZapiError> {
        Ok(u64::from_be_bytes(self.array(field)?))
    }

    fn invalid(&self, what: String) -> ZapiError {
        ZapiError::Invalid {
            command: self.command,
            what,
        }
    }

    /// `family u8, len u8, PSIZE(len) bytes` (or, with `family` given, only
    /// the length and bytes, as for the source prefix).
    fn prefix(&mut self, family: Option<u8>) -> Result<Prefix, ZapiError> {
        let family = match family {
            Some(f) => f,
            None => self.u8("family")?,
        };
        let len = self.u8("prefixlen")?;
        let (max, v6) = match family {
            AF_INET => (32u8, false),
            AF_INET6 => (128u8, true),
            f => return Err(self.invalid(format!("unknown address family {f}"))),
        };
        if len > max {
            return Err(self.invalid(format!("prefix length {len} above {max}")));
        }
        let bytes = self.take(usize::from(len).div_ceil(8), "prefix")?;
        let addr = if v6 {
            let mut a = [0u8; 16];
            a[..bytes.len()].copy_from_slice(bytes);
            IpAddr::V6(Ipv6Addr::from(a))
        } else {
            let mut a = [0u8; 4];
            a[..bytes.len()].copy_from_slice(bytes);
            IpAddr::V4(Ipv4Addr::from(a))
        };
        // zebra sends the network address; a set host bit is a corrupt frame.
        Prefix::new(addr, len).map_err(|e| self.invalid(e.to_string()))
    }
}

impl Dialect {
    /// Decodes a REDISTRIBUTE_ROUTE_ADD/DEL body.
    pub fn decode_route(self, f: &Frame) -> Result<ZapiRoute, ZapiError> {
        let mut r = Reader::new(f);
        let route_type = r.u8("type")?;
        if route_type >= self.route_max() {
            return Err(r.invalid(format!(
                "route type {route_type} is not below ZEBRA_ROUTE_MAX {} of this release",
                self.route_max()
            )));
        }
        let instance = r.u16("instance")?;
        let flags = r.u32("flags")?;
        let msg = r.u32("message")?;
        let safi = r.u8("safi")?;
        let prefix = r.prefix(None)?;
        let family = if prefix.is_ipv4() { AF_INET } else { AF_INET6 };
        let src_prefix = if msg & message::SRCPFX != 0 {
            Some(r.prefix(Some(family))?)
        } else {
            None
        };
        let nhg_id = if msg & message::NHG != 0 {
            Some(r.u32("nhgid")?)
        } else {
            None
        };
        let nexthops = if msg & message::NEXTHOP != 0 {
            self.nexthops(&mut r, msg, "nexthop_num")?
        } else {
            Vec::new()
        };
        let backup_nexthops = if msg & message::BACKUP_NEXTHOPS != 0 {
            self.nexthops(&mut r, msg, "backup_nexthop_num")?
        } else {
            Vec::new()
        };
        let distance = opt(msg & message::DISTANCE, || r.u8("distance"))?;
        let metric = opt(msg & message::METRIC, || r.u32("metric"))?;
        let tag = opt(msg & message::TAG, || r.u32("tag"))?;
        let mtu = opt(msg & message::MTU, || r.u32("mtu"))?;
        let table_id = opt(msg & message::TABLEID, || r.u32("tableid"))?;
        // OPAQUE (u16 length + bytes) may follow; nothing this client needs.
        Ok(ZapiRoute {
            vrf_id: f.vrf_id,
            route_type,
            instance,
            flags,
            message: msg,
            safi,
            prefix,
            src_prefix,
            nhg_id,
            nexthops,
            backup_nexthops,
            distance,
            metric,
            tag,
            mtu,
            table_id,
        })
    }

    fn nexthops(
        self,
        r: &mut Reader<'_>,
        msg: u32,
        field: &'static str,
    ) -> Result<Vec<Nexthop>, ZapiError> {
        let n = r.u16(field)?;
        // Each nexthop is at least 10 bytes: never allocate more than the body can hold.
        let mut v = Vec::with_capacity(usize::from(n).min(r.buf.len() / 10));
        for _ in 0..n {
            v.push(self.nexthop(r, msg)?);
        }
        Ok(v)
    }

    fn nexthop(self, r: &mut Reader<'_>, msg: u32) -> Result<Nexthop, ZapiError> {
        let vrf_id = r.u32("nexthop vrf_id")?;
        let ty = r.u8("nexthop type")?;
        let flags = r.u8("nexthop flags")?;
        if flags & (nh_flag::SEG6 | nh_flag::SEG6LOCAL) != 0 {
            return Err(ZapiError::Unsupported {
                command: r.command,
                what: "an SRv6 nexthop",
            });
        }
        let gateway = match ty {
            1 => Gateway::Ifindex {
                ifindex: r.u32("ifindex")?,
            },
            2 | 3 => Gateway::Ipv4 {
                gate: Ipv4Addr::from(r.array::<4>("ipv4 gate")?),
                ifindex: r.u32("ifindex")?,
                with_ifindex: ty == 3,
            },
            4 | 5 => Gateway::Ipv6 {
                gate: Ipv6Addr::from(r.array::<16>("ipv6 gate")?),
                ifindex: r.u32("ifindex")?,
                with_ifindex: ty == 5,
            },
            6 => Gateway::Blackhole {
                kind: r.u8("bh_type")?,
            },
            t => return Err(r.invalid(format!("unknown nexthop type {t}"))),
        };
        let mut labels = Vec::new();
        let mut label_type = None;
        if flags & nh_flag::LABEL != 0 {
            let n = r.u8("label_num")?;
            if self.label_type() {
                label_type = Some(r.u8("label_type")?);
            }
            for _ in 0..n {
                // zebra copies the label array raw, in its host order.
                labels.push(u32::from_ne_bytes(r.array("label")?));
            }
        }
        let weight = if flags & nh_flag::WEIGHT != 0 {
            Some(if self.weight_u64 {
                r.u64("weight")?
            } else {
                u64::from(r.u32("weight")?)
            })
        } else {
            None
        };
        let rmac = if flags & nh_flag::EVPN != 0 {
            Some(r.array::<6>("rmac")?)
        } else {
            None
        };
        let srte_color = opt(msg & message::SRTE, || r.u32("srte_color"))?;
        let mut backup_idx = Vec::new();
        if flags & nh_flag::HAS_BACKUP != 0 {
            let n = r.u8("backup_num")?;
            for _ in 0..n {
                backup_idx.push(r.u8("backup_idx")?);
            }
        }
        Ok(Nexthop {
            vrf_id,
            gateway,
            flags,
            labels,
            label_type,
            weight,
            rmac,
            srte_color,
            backup_idx,
        })
    }

    /// Encodes a route as zebra would (REDISTRIBUTE_ROUTE_ADD if `add`, else
    /// DEL): used by tests and fake peers, and to check the decoder against
    /// its inverse. Fields follow `route.message`; a nexthop's optional parts
    /// follow its `flags`. Frames may be up to 65535 bytes.
    pub fn encode_route(self, add: bool, route: &ZapiRoute) -> Result<Frame, ZapiError> {
        let c = if add {
            Command::RedistributeRouteAdd
        } else {
            Command::RedistributeRouteDel
        };
        let mut b = BytesMut::new();
        let msg = route.message;
        b.put_u8(route.route_type);
        b.put_u16(route.instance);
        b.put_u32(route.flags);
        b.put_u32(msg);
        b.put_u8(route.safi);
        put_prefix(&mut b, &route.prefix, true);
        if msg & message::SRCPFX != 0 {
            let sp = route.src_prefix.as_ref().ok_or(ZapiError::Invalid {
                command: self.command(c),
                what: "SRCPFX set without a source prefix".into(),
            })?;
            put_prefix(&mut b, sp, false);
        }
        if msg & message::NHG != 0 {
            b.put_u32(route.nhg_id.unwrap_or(0));
        }
        if msg & message::NEXTHOP != 0 {
            self.put_nexthops(&mut b, msg, &route.nexthops)?;
        }
        if msg & message::BACKUP_NEXTHOPS != 0 {
            self.put_nexthops(&mut b, msg, &route.backup_nexthops)?;
        }
        if msg & message::DISTANCE != 0 {
            b.put_u8(route.distance.unwrap_or(0));
        }
        for (bit, v) in [
            (message::METRIC, route.metric),
            (message::TAG, route.tag),
            (message::MTU, route.mtu),
            (message::TABLEID, route.table_id),
        ] {
            if msg & bit != 0 {
                b.put_u32(v.unwrap_or(0));
            }
        }
        if HEADER_SIZE + b.len() > usize::from(u16::MAX) {
            return Err(ZapiError::TooLarge(HEADER_SIZE + b.len()));
        }
        Ok(Frame {
            vrf_id: route.vrf_id,
            command: self.command(c),
            body: b.freeze(),
        })
    }

    fn put_nexthops(self, b: &mut BytesMut, msg: u32, nhs: &[Nexthop]) -> Result<(), ZapiError> {
        let n = u16::try_from(nhs.len()).map_err(|_| ZapiError::TooLarge(nhs.len()))?;
        b.put_u16(n);
        for nh in nhs {
            b.put_u32(nh.vrf_id);
            b.put_u8(nh.gateway.wire_type());
            b.put_u8(nh.flags);
            match &nh.gateway {
                Gateway::Ifindex { ifindex } => b.put_u32(*ifindex),
                Gateway::Ipv4 { gate, ifindex, .. } => {
                    b.put_slice(&gate.octets());
                    b.put_u32(*ifindex);
                }
                Gateway::Ipv6 { gate, ifindex, .. } => {
                    b.put_slice(&gate.octets());
                    b.put_u32(*ifindex);
                }
                Gateway::Blackhole { kind } => b.put_u8(*kind),
            }
            if nh.flags & nh_flag::LABEL != 0 {
                let n = u8::try_from(nh.labels.len())
                    .map_err(|_| ZapiError::TooLarge(nh.labels.len()))?;
                b.put_u8(n);
                if self.label_type() {
                    b.put_u8(nh.label_type.unwrap_or(0));
                }
                for l in &nh.labels {
                    b.put_slice(&l.to_ne_bytes());
                }
            }
            if nh.flags & nh_flag::WEIGHT != 0 {
                let w = nh.weight.unwrap_or(0);
                if self.weight_u64 {
                    b.put_u64(w);
                } else {
                    b.put_u32(u32::try_from(w).map_err(|_| ZapiError::Invalid {
                        command: 0,
                        what: format!("weight {w} does not fit this release's u32"),
                    })?);
                }
            }
            if nh.flags & nh_flag::EVPN != 0 {
                b.put_slice(&nh.rmac.unwrap_or_default());
            }
            if msg & message::SRTE != 0 {
                b.put_u32(nh.srte_color.unwrap_or(0));
            }
            if nh.flags & nh_flag::HAS_BACKUP != 0 {
                let n = u8::try_from(nh.backup_idx.len())
                    .map_err(|_| ZapiError::TooLarge(nh.backup_idx.len()))?;
                b.put_u8(n);
                b.put_slice(&nh.backup_idx);
            }
        }
        Ok(())
    }
}

fn put_prefix(b: &mut BytesMut, p: &Prefix, with_family: bool) {
    if with_family {
        b.put_u8(if p.is_ipv4() { AF_INET } else { AF_INET6 });
    }
    b.put_u8(p.prefix_len());
    let n = usize::from(p.prefix_len()).div_ceil(8);
    match p.addr() {
        IpAddr::V4(a) => b.put_slice(&a.octets()[..n]),
        IpAddr::V6(a) => b.put_slice(&a.octets()[..n]),
    }
}

fn opt<T>(bit: u32, read: impl FnOnce() -> Result<T, ZapiError>) -> Result<Option<T>, ZapiError> {
    if bit != 0 { read().map(Some) } else { Ok(None) }
}
