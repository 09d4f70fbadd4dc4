//! The daemon's settings: a TOML file, overridden by flags.
//!
//! Contract: unknown keys are rejected; every error names the file, the key
//! and what is allowed. Defaults are safe: repair mode, loopback listener,
//! table 198, no address-touching actions.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::model::{Prefix, TableId, VIP_TABLE};
use crate::reconcile::{Mode, Redistribution, Vantage};

/// Where FRR's sockets are when nothing says otherwise.
pub const DEFAULT_FRR_DIR: &str = "/var/run/frr";

/// The settings as the file spells them (every key optional).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// Directory with zserv.api, zebra.vty, bgpd.vty.
    pub frr_dir: Option<PathBuf>,
    /// Watched kernel tables.
    pub tables: Option<Vec<TableId>>,
    /// Prefixes that are VIPs even when no table holds them.
    pub vips: Option<Vec<String>>,
    /// HTTP listen address.
    pub listen: Option<String>,
    /// `observe` or `repair`.
    pub mode: Option<String>,
    /// JSON-lines event log.
    pub record: Option<PathBuf>,
    /// Grace before a difference is a drift, milliseconds.
    pub grace_ms: Option<u64>,
    /// Grace for classes read from bgpd, milliseconds.
    pub bgp_grace_ms: Option<u64>,
    /// Heal attempts before giving up.
    pub max_attempts: Option<u32>,
    /// Allow address-touching heal actions.
    pub heal_addresses: Option<bool>,
    /// Force the table mode instead of reading bgpd's configuration.
    pub table_mode: Option<String>,
    /// Slow refresh of bgpd's per-peer view, seconds.
    pub bgp_poll_secs: Option<u64>,
    /// Slow periodic kernel re-dump, seconds.
    pub resync_secs: Option<u64>,
    /// `node` (beside FRR) or `router` (ECMP only).
    pub vantage: Option<String>,
}

/// The resolved settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Directory with FRR's sockets.
    pub frr_dir: PathBuf,
    /// Watched tables.
    pub tables: Vec<TableId>,
    /// Configured VIPs.
    pub vips: BTreeSet<Prefix>,
    /// HTTP listen address.
    pub listen: SocketAddr,
    /// observe or repair.
    pub mode: Mode,
    /// JSON-lines event log.
    pub record: Option<PathBuf>,
    /// Grace, milliseconds.
    pub grace_ms: u64,
    /// Grace of bgpd's classes, milliseconds.
    pub bgp_grace_ms: u64,
    /// Heal attempts before giving up.
    pub max_attempts: u32,
    /// Allow address-touching heal actions.
    pub heal_addresses: bool,
    /// Forced table mode (None: read from bgpd).
    pub table_mode: Option<Redistribution>,
    /// bgpd slow refresh, seconds.
    pub bgp_poll_secs: u64,
    /// Kernel slow re-dump, seconds.
    pub resync_secs: u64,
    /// Node or router.
    pub vantage: Vantage,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            frr_dir: PathBuf::from(DEFAULT_FRR_DIR),
            tables: vec![VIP_TABLE],
            vips: BTreeSet::new(),
            listen: SocketAddr::from(([127, 0, 0, 1], 9774)),
            mode: Mode::Repair,
            record: None,
            grace_ms: 500,
            bgp_grace_ms: 2_000,
            max_attempts: 3,
            heal_addresses: false,
            table_mode: None,
            bgp_poll_secs: 30,
            resync_secs: 60,
            vantage: Vantage::Node,
        }
    }
}

/// Read and validate a file.
pub fn load(path: &Path) -> Result<FileConfig, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read the configuration: {e}", path.display()))?;
    parse(&text, path)
}

/// Parse file text; `path` only names the file in errors.
pub fn parse(text: &str, path: &Path) -> Result<FileConfig, String> {
    toml::from_str(text).map_err(|e| {
        let msg = e.message().to_string();
        match e.span() {
            Some(span) => {
                let line = text.as_bytes()[..span.start.min(text.len())]
                    .iter()
                    .filter(|b| **b == b'\n')
                    .count()
                    + 1;
                format!("{}:{line}: {msg}", path.display())
            }
            None => format!("{}: {msg}", path.display()),
        }
    })
}

/// Apply a file over the defaults; `path` names the file in errors.
pub fn resolve(file: FileConfig, path: &Path) -> Result<Settings, String> {
    let at = |key: &str, msg: String| format!("{}: key '{key}': {msg}", path.display());
    let mut s = Settings::default();
    if let Some(d) = file.frr_dir {
        s.frr_dir = d;
    }
    if let Some(v) = file.vantage {
        s.vantage = parse_vantage(&v).map_err(|m| at("vantage", m))?;
    }
    if let Some(t) = file.tables {
        s.tables = check_tables(t, s.vantage).map_err(|m| at("tables", m))?;
    }
    if let Some(v) = file.vips {
        s.vips = parse_vips(&v).map_err(|m| at("vips", m))?;
    }
    if let Some(l) = file.listen {
        s.listen = parse_listen(&l).map_err(|m| at("listen", m))?;
    }
    if let Some(m) = file.mode {
        s.mode = parse_mode(&m).map_err(|m| at("mode", m))?;
    }
    s.record = file.record;
    if let Some(g) = file.grace_ms {
        s.grace_ms = in_range(g, GRACE_MS).map_err(|m| at("grace_ms", m))?;
    }
    if let Some(g) = file.bgp_grace_ms {
        s.bgp_grace_ms = in_range(g, GRACE_MS).map_err(|m| at("bgp_grace_ms", m))?;
    }
    if let Some(n) = file.max_attempts {
        s.max_attempts = in_range(n, 1..=100).map_err(|m| at("max_attempts", m))?;
    }
    if let Some(h) = file.heal_addresses {
        s.heal_addresses = h;
    }
    if let Some(t) = file.table_mode {
        s.table_mode = Some(parse_table_mode(&t).map_err(|m| at("table_mode", m))?);
    }
    if let Some(p) = file.bgp_poll_secs {
        s.bgp_poll_secs = in_range(p, 1..=3600).map_err(|m| at("bgp_poll_secs", m))?;
    }
    if let Some(r) = file.resync_secs {
        s.resync_secs = in_range(r, 1..=86_400).map_err(|m| at("resync_secs", m))?;
    }
    Ok(s)
}

/// Allowed graces, milliseconds.
pub const GRACE_MS: std::ops::RangeInclusive<u64> = 10..=600_000;

/// `v` when inside `range`, else an error that names the range.
pub fn in_range<T: PartialOrd + std::fmt::Display>(
    v: T,
    range: std::ops::RangeInclusive<T>,
) -> Result<T, String> {
    if range.contains(&v) {
        Ok(v)
    } else {
        Err(format!(
            "{v} is outside {}..={}",
            range.start(),
            range.end()
        ))
    }
}

/// Tables must be real kernel tables: not 0 (unspec) nor 253-255 (default,
/// main, local), which a node's ribbridge may heal and so must never touch.
/// The router vantage only reads: it may watch main (254).
pub fn check_tables(t: Vec<TableId>, vantage: Vantage) -> Result<Vec<TableId>, String> {
    if t.is_empty() {
        return Err("at least one table is needed".to_string());
    }
    for id in &t {
        if vantage == Vantage::Router && *id == 254 {
            continue;
        }
        if *id == 0 || (253..=255).contains(id) {
            return Err(format!(
                "table {id} is reserved (0 unspec, 253 default, 254 main, 255 local); watch the VIP table, e.g. 198"
            ));
        }
    }
    let mut t = t;
    t.sort_unstable();
    t.dedup();
    Ok(t)
}

/// Parse VIP prefixes.
pub fn parse_vips(v: &[String]) -> Result<BTreeSet<Prefix>, String> {
    v.iter()
        .map(|s| s.parse::<Prefix>().map_err(|e| e.to_string()))
        .collect()
}

/// Parse a listen address.
pub fn parse_listen(l: &str) -> Result<SocketAddr, String> {
    l.parse()
        .map_err(|_| format!("'{l}' is not ADDRESS:PORT, e.g. 127.0.0.1:9774 or [::1]:9774"))
}

/// Parse a mode.
pub fn parse_mode(m: &str) -> Result<Mode, String> {
    match m {
        "observe" => Ok(Mode::Observe),
        "repair" => Ok(Mode::Repair),
        _ => Err(format!("'{m}' is not a mode: use observe or repair")),
    }
}

/// Parse a vantage.
pub fn parse_vantage(v: &str) -> Result<Vantage, String> {
    match v {
        "node" => Ok(Vantage::Node),
        "router" => Ok(Vantage::Router),
        _ => Err(format!("'{v}' is not a vantage: use node or router")),
    }
}

/// Parse a table mode.
pub fn parse_table_mode(m: &str) -> Result<Redistribution, String> {
    match m {
        "table_direct" | "table-direct" => Ok(Redistribution::TableDirect),
        "import_table" | "import-table" => Ok(Redistribution::ImportTable),
        _ => Err(format!(
            "'{m}' is not a table mode: use table_direct or import_table"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> &'static Path {
        Path::new("/etc/ribbridge.toml")
    }

    #[test]
    fn full_file_resolves() {
        let f = parse(
            "frr_dir = \"/run/frr\"\ntables = [198, 199]\nvips = [\"192.0.2.10/32\"]\nlisten = \"127.0.0.1:9999\"\nmode = \"observe\"\ngrace_ms = 300\n",
            p(),
        )
        .expect("parse");
        let s = resolve(f, p()).expect("resolve");
        assert_eq!(s.tables, vec![198, 199]);
        assert_eq!(s.mode, Mode::Observe);
        assert_eq!(s.grace_ms, 300);
        assert_eq!(s.listen.port(), 9999);
        assert_eq!(s.vips.len(), 1);
    }

    #[test]
    fn unknown_key_names_key_file_and_line() {
        let e = parse("mode = \"repair\"\nmaximum_paths = 3\n", p()).expect_err("unknown");
        assert!(
            e.starts_with("/etc/ribbridge.toml:2: unknown field `maximum_paths`"),
            "{e}"
        );
    }

    #[test]
    fn bad_values_name_the_key() {
        let cases = [
            (
                "mode = \"fix\"",
                "key 'mode': 'fix' is not a mode: use observe or repair",
            ),
            ("tables = [254]", "key 'tables': table 254 is reserved"),
            (
                "vips = [\"192.0.2.10/24\"]",
                "key 'vips': '192.0.2.10/24' has bits set beyond its length",
            ),
            (
                "listen = \"localhost\"",
                "key 'listen': 'localhost' is not ADDRESS:PORT",
            ),
            ("grace_ms = 1", "key 'grace_ms': 1 is outside 10..=600000"),
            (
                "table_mode = \"kernel\"",
                "key 'table_mode': 'kernel' is not a table mode",
            ),
        ];
        for (text, want) in cases {
            let e = resolve(parse(text, p()).expect("parse"), p()).expect_err(text);
            assert!(e.starts_with("/etc/ribbridge.toml: "), "{e}");
            assert!(e.contains(want), "{text}: {e}");
        }
    }

    #[test]
    fn type_errors_name_the_line() {
        let e = parse("\n\ngrace_ms = \"fast\"\n", p()).expect_err("type");
        assert!(e.starts_with("/etc/ribbridge.toml:3: "), "{e}");
    }
}
