//! What Peer Up's two OPENs say of the session: the unicast families both
//! sides offered, add-path (the router receives, the peer sends), and
//! graceful restart (RFC 4724, RFC 8538's N bit) read by our own code.

use super::*;

/// The unicast families both OPENs announce (RFC 4760: an OPEN without a
/// multiprotocol capability speaks IPv4 unicast only). OPENs that are not
/// OPENs (a router that sends none): both families, so nothing is waived.
pub(super) fn negotiated_families(sent: &BgpMessage, received: &BgpMessage) -> Vec<Family> {
    let (BgpMessage::Open(a), BgpMessage::Open(b)) = (sent, received) else {
        return vec![Family::Ipv4, Family::Ipv6];
    };
    let (a, b) = (open_families(a), open_families(b));
    a.into_iter().filter(|f| b.contains(f)).collect()
}

pub(super) fn open_families(open: &BgpOpenMessage) -> BTreeSet<Family> {
    let mut out = BTreeSet::new();
    let mut any_mp = false;
    for param in &open.opt_params {
        let ParamValue::Capacities(caps) = &param.param_value else {
            continue;
        };
        for cap in caps {
            if let CapabilityValue::MultiprotocolExtensions(mp) = &cap.value {
                any_mp = true;
                match (mp.afi, mp.safi) {
                    (Afi::Ipv4, Safi::Unicast) => {
                        out.insert(Family::Ipv4);
                    }
                    (Afi::Ipv6, Safi::Unicast) => {
                        out.insert(Family::Ipv6);
                    }
                    _ => {}
                }
            }
        }
    }
    if !any_mp {
        out.insert(Family::Ipv4);
    }
    out
}

/// True when the router's OPEN offers to receive add-path and the peer's
/// offers to send it, for some unicast family (RFC 7911 section 4).
pub(super) fn add_path_negotiated(sent: &BgpMessage, received: &BgpMessage) -> bool {
    let (BgpMessage::Open(local), BgpMessage::Open(remote)) = (sent, received) else {
        return false;
    };
    let local = add_path_families(local, AddPathSendReceive::Receive);
    let remote = add_path_families(remote, AddPathSendReceive::Send);
    local.iter().any(|f| remote.contains(f))
}

pub(super) fn add_path_families(
    open: &BgpOpenMessage,
    want: AddPathSendReceive,
) -> Vec<(Afi, Safi)> {
    let mut out = Vec::new();
    for param in &open.opt_params {
        let ParamValue::Capacities(caps) = &param.param_value else {
            continue;
        };
        for cap in caps {
            if let CapabilityValue::AddPath(ap) = &cap.value {
                for f in &ap.address_families {
                    if f.send_receive == want || f.send_receive == AddPathSendReceive::SendReceive {
                        out.push((f.afi, f.safi));
                    }
                }
            }
        }
    }
    out
}

/// The BMP common header (6) and per-peer header (42), then Peer Up's
/// local address (16) and ports (4): where the sent OPEN starts.
pub(super) const PEER_UP_OPENS: usize = 6 + 42 + 16 + 4;

/// Graceful restart from a Peer Up frame's two OPENs (sent = the router's,
/// received = the peer's); `None` on anything malformed or missing.
pub(super) fn peer_up_graceful_restart(frame: &[u8]) -> Option<GracefulRestart> {
    let rest = frame.get(PEER_UP_OPENS..)?;
    let (sent, rest) = bgp_pdu(rest)?;
    let (received, _) = bgp_pdu(rest)?;
    let local = open_graceful_restart(sent)?;
    let remote = open_graceful_restart(received)?;
    if remote.families.is_empty() {
        // A helper-only peer (FRR's default): nothing is retained for it.
        return None;
    }
    Some(GracefulRestart {
        notification: local.notification && remote.notification,
        ..remote
    })
}

/// One BGP PDU at the start of `data` (marker checked, its length within
/// `data`), and what follows it.
pub(super) fn bgp_pdu(data: &[u8]) -> Option<(&[u8], &[u8])> {
    let len = usize::from(u16::from_be_bytes([*data.get(16)?, *data.get(17)?]));
    if len < 19 || data.get(..16)?.iter().any(|b| *b != 0xff) {
        return None;
    }
    data.split_at_checked(len)
}

/// The graceful restart capability (code 64) of an OPEN PDU, if it carries
/// a well-formed one (the first one; RFC 4724 allows one).
pub(super) fn open_graceful_restart(pdu: &[u8]) -> Option<GracefulRestart> {
    if *pdu.get(18)? != 1 {
        return None;
    }
    // Version 1, My AS 2, Hold Time 2, BGP Identifier 4, then the
    // optional parameters' length: 1 byte, or RFC 9072's 255, 255, u16
    // with 2-byte parameter lengths.
    let body = pdu.get(19..)?;
    let (params, wide) = match *body.get(9)? {
        255 if *body.get(10)? == 255 => {
            let len = usize::from(u16::from_be_bytes([*body.get(11)?, *body.get(12)?]));
            (body.get(13..13 + len)?, true)
        }
        len => (body.get(10..10 + usize::from(len))?, false),
    };
    let mut params = params;
    while !params.is_empty() {
        let kind = *params.first()?;
        let (len, head) = if wide {
            (
                usize::from(u16::from_be_bytes([*params.get(1)?, *params.get(2)?])),
                3,
            )
        } else {
            (usize::from(*params.get(1)?), 2)
        };
        let value = params.get(head..head + len)?;
        params = params.get(head + len..)?;
        if kind != 2 {
            continue;
        }
        let mut caps = value;
        while !caps.is_empty() {
            let code = *caps.first()?;
            let len = usize::from(*caps.get(1)?);
            let value = caps.get(2..2 + len)?;
            caps = caps.get(2 + len..)?;
            if code == 64 {
                return graceful_restart_capability(value);
            }
        }
    }
    None
}

/// RFC 4724 section 3: flags (R 0x8, N 0x4 per RFC 8538) and a 12-bit
/// restart time, then (AFI u16, SAFI u8, flags u8 with F = 0x80) tuples.
pub(super) fn graceful_restart_capability(value: &[u8]) -> Option<GracefulRestart> {
    let (head, tuples) = value.split_at_checked(2)?;
    if tuples.len() % 4 != 0 {
        return None;
    }
    let word = u16::from_be_bytes([head[0], head[1]]);
    let mut families = Vec::new();
    let mut preserved = Vec::new();
    for t in tuples.chunks_exact(4) {
        let Some(family) = update::family_of(u16::from_be_bytes([t[0], t[1]]), t[2]) else {
            continue;
        };
        if !families.contains(&family) {
            families.push(family);
            if t[3] & 0x80 != 0 {
                preserved.push(family);
            }
        }
    }
    Some(GracefulRestart {
        restart_time: word & 0x0fff,
        families,
        preserved,
        notification: word & 0x4000 != 0,
    })
}
