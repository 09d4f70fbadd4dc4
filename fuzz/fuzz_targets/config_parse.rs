//! ribbridge's TOML configuration file on arbitrary text. Errors must be
//! values naming the file; nothing panics.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = ribbridge::config::parse(text, std::path::Path::new("fuzz.toml"));
    }
});
