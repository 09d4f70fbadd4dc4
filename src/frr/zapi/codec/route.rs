//! The routes zebra redistributes: REDISTRIBUTE_ROUTE_ADD/DEL bodies, their
//! nexthops, and the flag bits that say which optional fields follow.
//!
//! The decoder reads what zebra's `zapi_route_encode` writes, field by field
//! as the `message` and nexthop `flags` bits say; the encoder is its exact
//! inverse (the golden tests re-encode every captured route byte for byte),
//! used by tests and fake zebras.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use serde::{Deserialize, Serialize};

use super::body::{AF_INET, AF_INET6, Reader, opt};
use super::error::ZapiError;
use super::frame::Frame;
use super::numbering::Dialect;
// What only the test encoders use.
#[cfg(any(test, feature = "testing"))]
use super::{body::put_prefix, frame::HEADER_SIZE, numbering::Command};
use crate::model::Prefix;
#[cfg(any(test, feature = "testing"))]
use bytes::{BufMut, BytesMut};

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
    /// The `nexthop_types_t` value zebra writes before the gateway.
    #[cfg(any(test, feature = "testing"))]
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

    /// A nexthop count (`field` names it in errors), then that many nexthops.
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

    /// One nexthop: its optional parts follow its own flags, except the
    /// SR-TE colour, which follows the route's `message`.
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
    /// follow its `flags`. Frames may be up to 65535 bytes. Tests and fakes
    /// only (the `testing` feature, which the crate's own tests enable).
    #[cfg(any(test, feature = "testing"))]
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

    /// The inverse of [`Dialect::nexthops`]: the count, then each nexthop.
    #[cfg(any(test, feature = "testing"))]
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

/// Nexthops and routes as zebra redistributes a kube-vip VIP: for tests
/// and fakes only (the `testing` feature, which the crate's own tests
/// enable).
#[cfg(any(test, feature = "testing"))]
impl Nexthop {
    /// A nexthop in VRF 0 to `gateway` with no flags, hence none of the
    /// optional parts.
    pub fn to(gateway: Gateway) -> Nexthop {
        Nexthop {
            vrf_id: 0,
            gateway,
            flags: 0,
            labels: vec![],
            label_type: None,
            weight: None,
            rmac: None,
            srte_color: None,
            backup_idx: vec![],
        }
    }
}

#[cfg(any(test, feature = "testing"))]
impl ZapiRoute {
    /// A VIP of table 198 as zebra redistributes it: of `route_type` (the
    /// release's table-direct or import-table type), instance 198, VRF 0,
    /// unicast, selected (flags 8), over `nexthops`, distance 14, metric 0
    /// and MTU 0 (message NEXTHOP, DISTANCE, METRIC and MTU).
    pub fn sample(route_type: u8, prefix: Prefix, nexthops: Vec<Nexthop>) -> ZapiRoute {
        ZapiRoute {
            vrf_id: 0,
            route_type,
            instance: 198,
            flags: 8,
            message: message::NEXTHOP | message::DISTANCE | message::METRIC | message::MTU,
            safi: 1,
            prefix,
            src_prefix: None,
            nhg_id: None,
            nexthops,
            backup_nexthops: vec![],
            distance: Some(14),
            metric: Some(0),
            tag: None,
            mtu: Some(0),
            table_id: None,
        }
    }
}

/// A typical table-direct route of 10.x (type 31) over interface 1 (for
/// tests).
#[cfg(test)]
pub(crate) fn sample_route() -> ZapiRoute {
    let nexthop = Nexthop::to(Gateway::Ifindex { ifindex: 1 });
    ZapiRoute::sample(31, "192.0.2.10/32".parse().unwrap(), vec![nexthop])
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::frr::zapi::codec::Numbering;
    use crate::frr::zapi::codec::frame::testing::{from_zebra, one};

    #[test]
    fn srv6_nexthops_are_refused_not_misparsed() {
        let d = Dialect::new(Numbering::V10_3);
        let mut r = sample_route();
        r.nexthops[0].flags = nh_flag::SEG6;
        let f = d.encode_route(true, &r).unwrap();
        assert!(matches!(
            d.decode_route(&f),
            Err(ZapiError::Unsupported { .. })
        ));
    }

    fn arb_prefix() -> impl Strategy<Value = Prefix> {
        prop_oneof![
            (any::<u32>(), 0u8..=32).prop_map(|(a, l)| {
                let m = u32::MAX.checked_shl(32 - u32::from(l)).unwrap_or(0);
                Prefix::new(IpAddr::V4(Ipv4Addr::from(a & m)), l).unwrap()
            }),
            (any::<u128>(), 0u8..=128).prop_map(|(a, l)| {
                let m = u128::MAX.checked_shl(128 - u32::from(l)).unwrap_or(0);
                Prefix::new(IpAddr::V6(Ipv6Addr::from(a & m)), l).unwrap()
            }),
        ]
    }

    fn arb_gateway() -> impl Strategy<Value = Gateway> {
        prop_oneof![
            any::<u32>().prop_map(|ifindex| Gateway::Ifindex { ifindex }),
            (any::<u32>(), any::<u32>(), any::<bool>()).prop_map(|(g, ifindex, with_ifindex)| {
                Gateway::Ipv4 {
                    gate: Ipv4Addr::from(g),
                    ifindex,
                    with_ifindex,
                }
            }),
            (any::<u128>(), any::<u32>(), any::<bool>()).prop_map(|(g, ifindex, with_ifindex)| {
                Gateway::Ipv6 {
                    gate: Ipv6Addr::from(g),
                    ifindex,
                    with_ifindex,
                }
            }),
            (0u8..4).prop_map(|kind| Gateway::Blackhole { kind }),
        ]
    }

    fn arb_nexthop(d: Dialect, srte: bool) -> impl Strategy<Value = Nexthop> {
        let flag_bits = nh_flag::ONLINK
            | nh_flag::LABEL
            | nh_flag::WEIGHT
            | nh_flag::HAS_BACKUP
            | nh_flag::EVPN;
        (
            any::<u32>(),
            arb_gateway(),
            any::<u8>().prop_map(move |f| f & flag_bits),
            proptest::collection::vec(any::<u32>(), 0..4),
            any::<u8>(),
            any::<u64>(),
            any::<[u8; 6]>(),
            any::<u32>(),
            proptest::collection::vec(any::<u8>(), 0..4),
        )
            .prop_map(
                move |(vrf_id, gateway, flags, labels, lt, w, rmac, color, backup)| {
                    let has = |b: u8| flags & b != 0;
                    Nexthop {
                        vrf_id,
                        gateway,
                        flags,
                        labels: if has(nh_flag::LABEL) { labels } else { vec![] },
                        label_type: (has(nh_flag::LABEL) && d.label_type()).then_some(lt),
                        weight: has(nh_flag::WEIGHT).then_some(if d.weight_u64 {
                            w
                        } else {
                            w & u64::from(u32::MAX)
                        }),
                        rmac: has(nh_flag::EVPN).then_some(rmac),
                        srte_color: srte.then_some(color),
                        backup_idx: if has(nh_flag::HAS_BACKUP) {
                            backup
                        } else {
                            vec![]
                        },
                    }
                },
            )
    }

    fn arb_dialect() -> impl Strategy<Value = Dialect> {
        (0usize..Numbering::ALL.len(), any::<bool>())
            .prop_map(|(i, w)| Dialect::new(Numbering::ALL[i]).with_weight_u64(w))
    }

    fn arb_route() -> impl Strategy<Value = (Dialect, bool, ZapiRoute)> {
        (arb_dialect(), any::<u32>()).prop_flat_map(|(d, bits)| {
            // Everything but OPAQUE, which the decoder does not keep.
            let msg = bits & 0x3ff;
            let srte = msg & message::SRTE != 0;
            let has = move |b: u32| msg & b != 0;
            (
                Just(d),
                any::<bool>(),
                (
                    any::<u32>(),
                    0..d.route_max(),
                    any::<u16>(),
                    any::<u32>(),
                    arb_prefix(),
                    arb_prefix(),
                    any::<u32>(),
                ),
                proptest::collection::vec(arb_nexthop(d, srte), 0..4),
                proptest::collection::vec(arb_nexthop(d, srte), 0..3),
                (
                    any::<u8>(),
                    any::<u32>(),
                    any::<u32>(),
                    any::<u32>(),
                    any::<u32>(),
                ),
            )
                .prop_map(
                    move |(
                        d,
                        add,
                        (vrf, ty, inst, flags, p, sp, nhg),
                        nhs,
                        bnhs,
                        (dist, met, tag, mtu, tid),
                    )| {
                        // A source prefix has the destination's family.
                        let src =
                            (has(message::SRCPFX) && sp.is_ipv4() == p.is_ipv4()).then_some(sp);
                        let msg = if src.is_none() {
                            msg & !message::SRCPFX
                        } else {
                            msg
                        };
                        let has = |b: u32| msg & b != 0;
                        (
                            d,
                            add,
                            ZapiRoute {
                                vrf_id: vrf,
                                route_type: ty,
                                instance: inst,
                                flags,
                                message: msg,
                                safi: 1,
                                prefix: p,
                                src_prefix: src,
                                nhg_id: has(message::NHG).then_some(nhg),
                                nexthops: if has(message::NEXTHOP) { nhs } else { vec![] },
                                backup_nexthops: if has(message::BACKUP_NEXTHOPS) {
                                    bnhs
                                } else {
                                    vec![]
                                },
                                distance: has(message::DISTANCE).then_some(dist),
                                metric: has(message::METRIC).then_some(met),
                                tag: has(message::TAG).then_some(tag),
                                mtu: has(message::MTU).then_some(mtu),
                                table_id: has(message::TABLEID).then_some(tid),
                            },
                        )
                    },
                )
        })
    }

    proptest! {
        #[test]
        fn routes_round_trip((d, add, route) in arb_route()) {
            let f = d.encode_route(add, &route).unwrap();
            // Through the frame codec's decoder, as zebra would send it.
            let f = one(&from_zebra(&f));
            let want = if add { Command::RedistributeRouteAdd } else { Command::RedistributeRouteDel };
            prop_assert_eq!(d.command_of(f.command), Some(want));
            prop_assert_eq!(d.decode_route(&f).unwrap(), route);
        }
    }
}
