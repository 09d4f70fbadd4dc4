//! The ZAPI decoders on arbitrary bytes: the frame codec over a byte stream,
//! then every body decoder of every release's dialect on each frame. Any
//! panic is a bug: input from zebra must only ever produce error values.
#![no_main]

use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;
use ribbridge::frr::zapi::codec::{Dialect, FrameCodec, Numbering};
use tokio_util::codec::Decoder;

fuzz_target!(|data: &[u8]| {
    let mut buf = BytesMut::from(data);
    while let Ok(Some(frame)) = FrameCodec.decode(&mut buf) {
        for n in Numbering::ALL {
            for w64 in [false, true] {
                let d = Dialect::new(n).with_weight_u64(w64);
                if let Ok(r) = d.decode_route(&frame) {
                    // What decodes must re-encode (the fields are consistent).
                    let _ = d.encode_route(true, &r);
                }
                let _ = d.decode_hello(&frame);
                let _ = d.decode_redistribute(&frame);
                let _ = d.decode_router_id_add(&frame);
            }
        }
    }
});
