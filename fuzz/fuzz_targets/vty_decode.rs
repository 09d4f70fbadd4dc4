//! The vty reply decoder on arbitrary bytes, fed in two pieces (a split
//! trailer is the codec's hard case), then the typed JSON parsers on each
//! reply's text. Any panic is a bug.
#![no_main]

use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;
use ribbridge::frr::release::{Release, ReleaseNumbering};
use ribbridge::frr::vty::codec::VtyCodec;
use ribbridge::frr::vty::json;
use tokio_util::codec::Decoder;

fuzz_target!(|data: &[u8]| {
    let cut = data.first().map_or(0, |b| usize::from(*b)).min(data.len());
    let mut codec = VtyCodec::default();
    let mut buf = BytesMut::from(&data[..cut]);
    let mut replies = Vec::new();
    while let Ok(Some(r)) = codec.decode(&mut buf) {
        replies.push(r);
    }
    buf.extend_from_slice(&data[cut..]);
    while let Ok(Some(r)) = codec.decode(&mut buf) {
        replies.push(r);
    }
    for r in replies {
        let _ = json::parse_route_table(&r.text);
        let _ = json::parse_summary(&r.text);
        let _ = json::parse_advertised(&r.text);
        let _ = json::table_mode_from_config(&r.text, 198);
        let _ = Release::from_show_version(&r.text).map(|r| r.dialect());
    }
});
