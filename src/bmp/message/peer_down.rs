//! What Peer Down says: its reason, and for reasons 1 and 3 the
//! NOTIFICATION's code and subcode.

use super::peer_up::bgp_pdu;
use super::*;

/// The error code and subcode of a NOTIFICATION PDU (RFC 7854 section
/// 4.9: the whole BGP PDU follows reasons 1 and 3).
pub(super) fn notification(data: &[u8]) -> Option<Notification> {
    let (pdu, _) = bgp_pdu(data)?;
    if *pdu.get(18)? != 3 {
        return None;
    }
    Some(Notification {
        code: *pdu.get(19)?,
        subcode: pdu.get(20).copied().unwrap_or(0),
    })
}

pub(super) fn down_reason(reason: PeerDownReason, data_len: usize) -> String {
    let text = match reason {
        PeerDownReason::Reserved => "reserved reason code 0",
        PeerDownReason::LocalSystemClosedNotificationPduFollows => {
            "the router closed the session with a NOTIFICATION"
        }
        PeerDownReason::LocalSystemClosedFsmEvenFollows => {
            "the router closed the session (FSM event)"
        }
        PeerDownReason::RemoteSystemClosedNotificationPduFollows => {
            "the peer closed the session with a NOTIFICATION"
        }
        PeerDownReason::RemoteSystemsClosedNoData => "the peer closed the session without data",
        PeerDownReason::PeerDeConfigured => "the peer was de-configured",
        PeerDownReason::LocalSystemClosedTlvDataFollows => "the router closed the session (TLV)",
    };
    if data_len == 0 {
        text.to_string()
    } else {
        format!("{text} ({data_len} bytes of data)")
    }
}
