//! Decoder of nexthop-object messages (`RTM_NEWNEXTHOP`/`RTM_DELNEXTHOP`,
//! `struct nhmsg` + `NHA_*` attributes, linux/nexthop.h), which
//! netlink-packet-route does not have.
//!
//! Contract: decodes id, family, gateway, output interface, blackhole and
//! group members with their weights; any other attribute (resilient-group
//! buckets, encap, FDB, op flags) is skipped. Malformed input is an
//! `Err(WireError)`, never a panic. The golden tests use bytes captured from
//! kernel 6.18 (tests/data/kernel/README.md says how).

use super::types::{GroupMember, NexthopObject};
use super::wire::{RTM_NEWNEXTHOP, WireError, attrs, ip, u32_at, u32_attr};

const NHA_ID: u16 = 1;
const NHA_GROUP: u16 = 2;
const NHA_BLACKHOLE: u16 = 4;
const NHA_OIF: u16 = 5;
const NHA_GATEWAY: u16 = 6;

/// Decode an nhmsg payload.
pub fn decode_nexthop(p: &[u8]) -> Result<NexthopObject, WireError> {
    let t = RTM_NEWNEXTHOP;
    if p.len() < 8 {
        return Err(WireError::new(
            t,
            format!("nhmsg of {} bytes, need 8", p.len()),
        ));
    }
    let family = p[0];
    let mut nh = NexthopObject {
        id: 0,
        family,
        gateway: None,
        oif: None,
        blackhole: false,
        group: Vec::new(),
        flags: u32_at(p, 4),
    };
    let mut id = None;
    for a in attrs(&p[8..], t) {
        let (ty, v) = a?;
        match ty {
            NHA_ID => id = Some(u32_attr(v, t, "NHA_ID")?),
            NHA_OIF => nh.oif = Some(u32_attr(v, t, "NHA_OIF")?),
            NHA_GATEWAY => nh.gateway = Some(ip(family, v, t, "NHA_GATEWAY")?),
            NHA_BLACKHOLE => nh.blackhole = true,
            NHA_GROUP => nh.group = decode_group(v)?,
            _ => {}
        }
    }
    nh.id = id.ok_or_else(|| WireError::new(t, "nexthop message without NHA_ID"))?;
    Ok(nh)
}

/// `struct nexthop_grp { u32 id; u8 weight; u8 weight_high; u16 resvd2; }`:
/// the weight on the wire is weight - 1; kernels since 6.12 carry 16 bits
/// (`weight_high`, zero on older kernels, which called it `resvd1`).
fn decode_group(v: &[u8]) -> Result<Vec<GroupMember>, WireError> {
    if v.len() % 8 != 0 {
        return Err(WireError::new(
            RTM_NEWNEXTHOP,
            format!("NHA_GROUP of {} bytes, not a multiple of 8", v.len()),
        ));
    }
    Ok(v.chunks_exact(8)
        .map(|c| {
            let w = (u16::from(c[5]) << 8) | u16::from(c[4]);
            GroupMember {
                id: u32_at(c, 0),
                weight: w.saturating_add(1),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::super::wire::{Message, RTM_DELNEXTHOP, decode, frames};
    use super::*;

    fn objects(bytes: &[u8]) -> Vec<(u16, NexthopObject)> {
        frames(bytes)
            .map(|f| {
                let f = f.unwrap();
                match decode(&f).unwrap() {
                    Message::NewNexthop(n) | Message::DelNexthop(n) => (f.msg_type, n),
                    other => panic!("unexpected {other:?}"),
                }
            })
            .collect()
    }

    fn show(n: &NexthopObject) -> String {
        let mut s = format!("id {}", n.id);
        if !n.group.is_empty() {
            let g: Vec<String> = n
                .group
                .iter()
                .map(|m| format!("{},{}", m.id, m.weight))
                .collect();
            s += &format!(" group {}", g.join("/"));
        }
        if let Some(g) = n.gateway {
            s += &format!(" via {g}");
        }
        if let Some(o) = n.oif {
            s += &format!(" oif {o}");
        }
        if n.blackhole {
            s += " blackhole";
        }
        s
    }

    /// The dump of `ip nexthop` in the capture namespace (README.md).
    #[test]
    fn golden_nexthop_dump() {
        let got: Vec<String> = objects(include_bytes!("../../tests/data/kernel/nexthop-dump.bin"))
            .iter()
            .map(|(_, n)| show(n))
            .collect();
        assert_eq!(
            got,
            [
                "id 1 via 10.9.0.2 oif 3",
                "id 2 via 10.9.0.3 oif 3",
                "id 3 blackhole",
                "id 4 via 2001:db8:9::2 oif 3",
                "id 5 via 2001:db8:9::3 oif 3",
                "id 10 group 1,1/2,4",
                "id 11 group 4,1/5,1",
            ]
        );
    }

    /// `ip monitor`-style capture of add, add group, replace group, delete
    /// group, delete nexthop.
    #[test]
    fn golden_nexthop_events() {
        let got: Vec<String> = objects(include_bytes!(
            "../../tests/data/kernel/nexthop-monitor.bin"
        ))
        .iter()
        .map(|(t, n)| {
            format!(
                "{} {}",
                if *t == RTM_DELNEXTHOP { "del" } else { "new" },
                show(n)
            )
        })
        .collect();
        assert_eq!(
            got,
            [
                "new id 6 via 10.9.0.4 oif 3",
                "new id 12 group 1,2/6,7",
                "new id 12 group 1,1/6,1",
                "del id 12 group 1,1/6,1",
                "del id 6 via 10.9.0.4 oif 3",
            ]
        );
    }

    #[test]
    fn malformed_nexthops_are_errors() {
        assert!(
            decode_nexthop(&[0; 4])
                .unwrap_err()
                .what
                .contains("nhmsg of 4")
        );
        // No NHA_ID.
        assert!(
            decode_nexthop(&[2, 0, 0, 0, 0, 0, 0, 0])
                .unwrap_err()
                .what
                .contains("NHA_ID")
        );
        // A group of 6 bytes.
        let mut p = vec![0u8; 8];
        p.extend_from_slice(&[10, 0, 2, 0, 1, 0, 0, 0, 0, 0]);
        p.extend_from_slice(&[0, 0]);
        assert!(
            decode_nexthop(&p)
                .unwrap_err()
                .what
                .contains("NHA_GROUP of 6")
        );
    }
}
