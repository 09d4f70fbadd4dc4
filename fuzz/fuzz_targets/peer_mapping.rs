//! The FRRPeerMapping JSON on arbitrary text; every mapping that parses is
//! rendered through the built-in template for its override hosts and the
//! default, on both releases. Nothing panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ribbridge::model::TableMode;
use ribbridge::render::identity::RouterId;
use ribbridge::render::mapping::Mapping;
use ribbridge::render::template::{self, Context};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(m) = Mapping::parse("fuzz.json", text) else {
        return;
    };
    let id = RouterId {
        node_ip: "198.18.1.2".parse().unwrap(),
        router_id: "198.18.1.2".parse().unwrap(),
    };
    let mut hosts: Vec<String> = m.host_overrides.keys().take(4).cloned().collect();
    hosts.push("no-such-host".into());
    for h in &hosts {
        for rel in [TableMode::TableDirect, TableMode::ImportTable] {
            let ctx = Context::new(&m, h, id, rel);
            let _ = template::render("built-in", template::BUILTIN, &ctx);
        }
    }
});
