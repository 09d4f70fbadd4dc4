//! The kernel's wire decoders on arbitrary bytes: the nexthop-object
//! decoder (`RTM_NEWNEXTHOP` payloads), the route, link and address
//! decoders, and the datagram framing with `decode` on every frame. Any
//! panic is a bug; an error is the expected answer to garbage.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ribbridge::kernel::{nexthop, wire};

fuzz_target!(|data: &[u8]| {
    let _ = nexthop::decode_nexthop(data);
    let _ = wire::decode_route(data);
    let _ = wire::decode_link(data);
    let _ = wire::decode_addr(data);
    for f in wire::frames(data) {
        match f {
            Ok(frame) => {
                let _ = wire::decode(&frame);
            }
            Err(_) => break,
        }
    }
});
