//! The BGP UPDATE decoder of Route Monitoring (`bmp::update::decode`) on
//! arbitrary bytes, with and without add-path ids and with 4- and 2-byte AS
//! numbers. Any panic is a bug: a router's bytes must only ever produce an
//! `Update` or an `UpdateError`. A decoded `Update` must also hold: only an
//! UPDATE that announces has anomalies, each at most once, and paths carry
//! an add-path id exactly when ids were read.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ribbridge::bmp::update::{Options, decode};

fuzz_target!(|data: &[u8]| {
    for add_path in [false, true] {
        for asn4 in [false, true] {
            if let Ok(u) = decode(data, Options { add_path, asn4 }) {
                assert!(u.anomalies.is_empty() || !u.announced.is_empty());
                assert!(u.anomalies.windows(2).all(|w| w[0] < w[1]));
                assert!(
                    u.announced
                        .iter()
                        .chain(&u.withdrawn)
                        .all(|p| p.path_id.is_some() == add_path)
                );
            }
        }
    }
});
