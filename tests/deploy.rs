//! The deployment files under `deploy/` agree with the code: the example
//! configuration holds every key at its default and parses with the
//! daemon's own parser; the image, the unit and every manifest use the
//! registered port; the image is built from nothing but the static binary,
//! as FRR's user. (The manifests' schema and security posture are checked
//! by scripts/check-manifests.py, the unit's exposure and a boot beside FRR
//! by scripts/check-systemd-unit.sh; scripts/test.sh runs both.)

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use ribbridge::config::{self, Layer, Settings};

/// The port the deployment files use: outside 9000-9999 (OpenShift opens
/// that range between nodes; localhost-only ports stay out of it) and clear
/// of frr-k8s (7572, 7573, 9123, 9140, 9141).
const PORT: u16 = 7585;

/// Every key of the configuration file (`config::Layer`).
const KEYS: [&str; 16] = [
    "frr_dir",
    "tables",
    "vips",
    "listen",
    "http_max_connections",
    "mode",
    "record",
    "grace_ms",
    "bgp_grace_ms",
    "max_attempts",
    "heal_addresses",
    "table_mode",
    "bgp_poll_secs",
    "resync_secs",
    "vantage",
    "drain_state",
];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn listen() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], PORT))
}

#[test]
fn example_config_is_every_key_at_its_default() {
    let path = repo().join("deploy/ribbridge.toml");
    let file = config::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let s = Settings::resolve(Some((&path, file)), Layer::default()).expect("resolves");
    // The defaults, with the registered port (the code's default moves to
    // it too; until then the example sets it).
    let want = Settings {
        listen: listen(),
        ..Settings::default()
    };
    assert_eq!(s, want);

    // Every key has its line, set or commented out, and the commented
    // ones are keys the parser knows (uncommented, the file still parses).
    let text = read("deploy/ribbridge.toml");
    for key in KEYS {
        assert!(
            text.lines().any(|l| {
                let l = l.trim_start_matches("# ");
                l.starts_with(&format!("{key} = "))
            }),
            "deploy/ribbridge.toml has no line for '{key}'"
        );
    }
    let uncommented: String = text
        .lines()
        .map(|l| match l.strip_prefix("# ") {
            Some(rest) if KEYS.iter().any(|k| rest.starts_with(&format!("{k} = "))) => rest,
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let all = config::parse(
        &uncommented,
        Path::new("deploy/ribbridge.toml (all keys set)"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    Settings::resolve(Some((&path, all)), Layer::default()).expect("all keys set resolve");

    // The commented [[vip]] example, uncommented (but its CA file, which
    // this host lacks): one probed VIP, every key the parser's.
    let (_, example) = text.split_once("# [[vip]]\n").expect("a [[vip]] example");
    let example: String = example
        .lines()
        .filter_map(|l| l.strip_prefix("# "))
        .filter(|l| {
            l.split_once(" = ").is_some_and(|(k, _)| {
                k != "ca_file" && k.chars().all(|c| c.is_ascii_lowercase() || c == '_')
            })
        })
        .map(|l| format!("{l}\n"))
        .collect();
    let file = config::parse(
        &format!("[[vip]]\n{example}"),
        Path::new("deploy/ribbridge.toml ([[vip]] example)"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let s = Settings::resolve(Some((&path, file)), Layer::default()).expect("the example resolves");
    let ribbridge::config::Role::Node(node) = &s.role else {
        panic!("the example resolves to a node: {:?}", s.role);
    };
    assert_eq!(node.probes.len(), 1, "{:?}", node.probes);
}

#[test]
fn containerfile_is_the_static_binary_alone_as_frrs_user() {
    let text = read("deploy/Containerfile");
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert_eq!(lines.first(), Some(&"FROM scratch"), "{lines:?}");
    assert!(
        lines.contains(&"USER 100:101"),
        "FRR's image user: {lines:?}"
    );
    assert!(lines.contains(&"ENTRYPOINT [\"/usr/bin/ribbridge\"]"));
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("CMD [") && l.contains(&format!("\"127.0.0.1:{PORT}\""))),
        "{lines:?}"
    );
    // Nothing else enters the image: one COPY, of the binary, no RUN.
    let copies: Vec<&&str> = lines.iter().filter(|l| l.starts_with("COPY")).collect();
    assert_eq!(copies, [&"COPY ribbridge /usr/bin/ribbridge"]);
    assert!(!lines.iter().any(|l| l.starts_with("RUN")));
    assert!(text.contains("org.opencontainers.image.version"));
}

#[test]
fn systemd_unit_has_the_hardening_and_the_example_config() {
    let unit = read("deploy/systemd/ribbridge.service");
    let has = |line: &str| unit.lines().any(|l| l.trim() == line);
    for line in [
        "After=frr.service",
        "Requires=frr.service",
        "User=frr",
        "SupplementaryGroups=frrvty",
        "AmbientCapabilities=",
        "CapabilityBoundingSet=",
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
        "ProtectHome=yes",
        "PrivateTmp=yes",
        "RestrictAddressFamilies=AF_UNIX AF_NETLINK AF_INET AF_INET6",
        "SystemCallFilter=@system-service",
        "Restart=on-failure",
        "ExecStart=/usr/local/bin/ribbridge run --config /etc/ribbridge/ribbridge.toml",
        "RuntimeDirectory=ribbridge",
        "RuntimeDirectoryPreserve=yes",
    ] {
        assert!(has(line), "deploy/systemd/ribbridge.service lacks '{line}'");
    }
    // The drain unit writes the drain's intent where the daemon reads it:
    // the same runtime directory, kept when either unit stops.
    let drain = read("deploy/systemd/ribbridge-drain.service");
    for line in ["RuntimeDirectory=ribbridge", "RuntimeDirectoryPreserve=yes"] {
        assert!(
            drain.lines().any(|l| l.trim() == line),
            "deploy/systemd/ribbridge-drain.service lacks '{line}'"
        );
    }
    assert!(
        drain.contains("--drain-state /run/ribbridge/drain"),
        "the drain unit names the intent file"
    );
    assert_eq!(
        ribbridge::config::DEFAULT_DRAIN_STATE,
        "/run/ribbridge/drain"
    );
    assert!(
        unit.lines().any(|l| l.starts_with("MemoryMax=")),
        "no MemoryMax"
    );
    // As shipped the unit observes (the default mode, no --mode); repair
    // mode's drop-in gives it CAP_NET_ADMIN and nothing else.
    assert!(!unit.contains("--mode"), "the unit names a mode");
    let repair = read("deploy/systemd/repair.conf");
    for line in [
        "AmbientCapabilities=CAP_NET_ADMIN",
        "CapabilityBoundingSet=CAP_NET_ADMIN",
        "ExecStart=",
    ] {
        assert!(
            repair.lines().any(|l| l.trim() == line),
            "repair.conf lacks '{line}'"
        );
    }
    assert!(repair.contains("--mode repair"));
}

/// Every `127.0.0.1:PORT` and `port: N` near the endpoint in deploy/ names
/// the registered port, never one inside 9000-9999.
#[test]
fn every_deployment_file_uses_the_registered_port() {
    let mut files = Vec::new();
    let mut dirs = vec![repo().join("deploy")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).expect("deploy/") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                files.push(p);
            }
        }
    }
    assert!(files.len() >= 10, "{files:?}");
    let mut seen = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).expect("read");
        for (n, line) in text.lines().enumerate() {
            let mut rest = line;
            while let Some(i) = rest.find("127.0.0.1:") {
                rest = &rest[i + "127.0.0.1:".len()..];
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                if let Ok(port) = digits.parse::<u16>() {
                    seen += 1;
                    assert_eq!(port, PORT, "{}:{}: {line}", f.display(), n + 1);
                }
            }
        }
    }
    assert!(seen >= 10, "only {seen} endpoint addresses found");
    assert!(!(9000..=9999).contains(&PORT));
}
