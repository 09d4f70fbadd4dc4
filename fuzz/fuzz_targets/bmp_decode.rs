//! The BMP station's input path on arbitrary bytes: the stream codec, the
//! decoder of each frame (bgpkit-parser and bmp::update underneath) and the view applying
//! what decodes. Any panic is a bug: a router's bytes must only ever produce
//! error values (a panic would kill the session task).
#![no_main]

use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;
use ribbridge::bmp::{BmpCodec, Decoder, View};
use tokio_util::codec::Decoder as _;

fuzz_target!(|data: &[u8]| {
    let vips = ["192.0.2.10/32", "2001:db8::10/128"]
        .iter()
        .filter_map(|v| v.parse().ok());
    let mut view = View::new(vips);
    view.session_up("r");
    let mut buf = BytesMut::from(data);
    let mut codec = BmpCodec::new(1 << 16);
    let mut decoder = Decoder::new();
    while let Ok(Some(frame)) = codec.decode(&mut buf) {
        if let Ok(msg) = decoder.decode(frame) {
            let _ = view.apply("r", &msg);
        }
    }
    let _ = codec.decode_eof(&mut buf);
    for v in view.vips().copied().collect::<Vec<_>>() {
        let _ = view.paths("r", &v);
        let _ = view.detail("r", &v);
    }
    view.session_down("r");
});
