//! bgpd's running configuration read as an intent, then its policy
//! evaluated, on arbitrary text: the reader never panics, and every
//! verdict is one the configuration explains (a denying entry exists in
//! its route-map; a redistribution found is one of those read).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ribbridge::model::Prefix;
use ribbridge::model::intent::Verdict;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // The text after a NUL, if any, is zebra's configuration.
    let (bgpd, zebra) = match text.split_once('\0') {
        Some((b, z)) => (b, Some(z)),
        None => (text, None),
    };
    let intent = ribbridge::model::intent::parse(bgpd, zebra);
    let mut prefixes: Vec<Prefix> = ["192.0.2.10/32", "2001:db8::10/128", "0.0.0.0/0", "::/0"]
        .iter()
        .filter_map(|s| s.parse().ok())
        .collect();
    // Every prefix the configuration names is a candidate too.
    for entries in intent
        .ip_prefix_lists
        .values()
        .chain(intent.ipv6_prefix_lists.values())
    {
        prefixes.extend(entries.iter().map(|e| e.prefix));
    }
    prefixes.truncate(64);
    for r in &intent.redistributions {
        for p in &prefixes {
            if let Some(Verdict::Deny {
                route_map,
                seq: Some(seq),
                ..
            }) = intent.redistributed(r.table, p)
            {
                let entries = &intent.route_maps[route_map];
                assert!(entries.iter().any(|e| e.seq == seq && !e.permit));
            }
            for peer in intent.peers.keys() {
                let _ = intent.sent_to(peer, p).to_string();
            }
        }
    }
});
