//! The BMP station's state machine driven by arbitrary sessions: up to 8
//! sessions at once from 4 addresses (so that sessions replace each other;
//! each numbered in accept order as the listener does), each
//! fed arbitrary bytes through its own codec and decoder, ended in any
//! order, with the clock moving and the deadlines firing in between. Any
//! panic is a bug, and after every step the bounds hold: no more routers
//! than `max_routers`, no count above the paths a VIP may hold, readiness
//! exactly when a router is synced.
#![no_main]

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};

use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;
use ribbridge::bmp::{BmpCodec, BmpInput, Decoder, Station};
use ribbridge::config::BmpLimits;
use tokio_util::codec::Decoder as _;

const KINDS: [&str; 4] = ["closed", "termination", "malformed", "idle"];

fuzz_target!(|data: &[u8]| {
    let limits = BmpLimits {
        max_routers: 3,
        max_peers: 8,
        max_paths: 4,
        sync_secs: 5,
        ..BmpLimits::default()
    };
    let vips: Vec<ribbridge::model::Prefix> = ["192.0.2.10/32", "2001:db8::10/128"]
        .iter()
        .filter_map(|v| v.parse().ok())
        .collect();
    let mut st = Station::new(vips.iter().copied(), 10, &limits);
    // Per slot: its session's accept sequence number, codec and decoder.
    let mut open: HashMap<u8, (u64, BytesMut, BmpCodec, Decoder)> = HashMap::new();
    let mut accepted = 0u64;
    let mut now = 0u64;
    let mut rest = data;
    while let [op, slot, hi, lo, tail @ ..] = rest {
        let len = usize::from(u16::from_be_bytes([*hi, *lo])).min(tail.len());
        let (payload, next) = tail.split_at(len);
        rest = next;
        let slot = *slot % 8;
        match op % 4 {
            0 if !open.contains_key(&slot) => {
                accepted += 1;
                let session = accepted;
                let address = SocketAddr::from((Ipv4Addr::new(10, 0, 0, slot % 4), 179));
                st.apply(BmpInput::Up { session, address }, now);
                open.insert(slot, (session, BytesMut::new(), BmpCodec::new(1 << 16), Decoder::new()));
            }
            1 => {
                if let Some((session, buf, codec, decoder)) = open.get_mut(&slot) {
                    let session = *session;
                    buf.extend_from_slice(payload);
                    let mut ended = false;
                    loop {
                        match codec.decode(buf) {
                            Ok(Some(frame)) => match decoder.decode(frame) {
                                Ok(message) => {
                                    st.apply(BmpInput::Message { session, message }, now)
                                }
                                Err(_) => {
                                    ended = true;
                                    break;
                                }
                            },
                            Ok(None) => break,
                            Err(_) => {
                                ended = true;
                                break;
                            }
                        }
                    }
                    if ended {
                        open.remove(&slot);
                        let reason = "malformed".to_string();
                        st.apply(BmpInput::Down { session, kind: "malformed", reason }, now);
                    }
                }
            }
            2 => {
                if let Some((session, ..)) = open.remove(&slot) {
                    let kind = KINDS[payload.first().map_or(0, |b| usize::from(*b) % 4)];
                    st.apply(BmpInput::Down { session, kind, reason: String::new() }, now);
                }
            }
            _ => {
                now += payload.iter().map(|b| u64::from(*b) * 100).sum::<u64>();
                if st.next_deadline().is_some_and(|t| t <= now) {
                    st.expire(now);
                }
            }
        }
        let _ = st.take_outputs();
        let doc = st.status(&|ms| ms);
        assert!(doc.len() <= limits.max_routers, "{} routers", doc.len());
        for r in &doc {
            for v in &r.vips {
                assert!(v.paths.unwrap_or(0) as usize <= limits.max_paths, "{r:?}");
            }
        }
        let synced = doc.iter().any(|r| r.state == "synced");
        assert_eq!(st.not_ready().is_none(), synced, "{doc:?}");
    }
});
