//! The typed JSON of vty replies (`show ... json`) on arbitrary text,
//! without the vty framing: route tables, BGP summaries, advertised
//! routes (typed and through the streaming key scan, fed in two pieces),
//! the running configuration's table mode, `show version`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ribbridge::frr::release::{Release, ReleaseNumbering};
use ribbridge::frr::vty::json;
use ribbridge::frr::vty::scan::{KeyScan, KeysOf};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = json::parse_route_table(text);
    let _ = json::parse_summary(text);
    let _ = json::parse_advertised(text);
    let cut = data
        .first()
        .map_or(0, |b| usize::from(*b) % (data.len() + 1));
    let mut scan = KeyScan::new(KeysOf::Member("advertisedRoutes"));
    scan.feed(&data[..cut]);
    scan.feed(&data[cut..]);
    let _ = scan.finish();
    let _ = json::table_mode_from_config(text, 198);
    let _ = Release::from_show_version(text).map(|r| r.dialect());
});
