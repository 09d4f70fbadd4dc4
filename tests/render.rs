//! `ribbridge render` as a user runs it: golden files for the matrix of
//! mappings, every bad input with its exact message, the exit codes, the
//! atomic write and the unchanged detection. Neither root nor FRR needed:
//! the node's identity comes from flags or from files in a temporary
//! directory (`RIBBRIDGE_NODEIP_DIR`, `RUNTIMECFG_HOSTNAME_PATH`), never from
//! the machine. `RIBBRIDGE_BLESS=1 cargo test --test render` rewrites the
//! golden files; review the diff.

#![allow(clippy::unwrap_used)] // a test: a failed unwrap is a failed test

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/render")
}

/// One run of the binary with a private identity directory.
struct Run {
    tmp: tempfile::TempDir,
    cmd: Command,
}

impl Run {
    fn new(args: &[&str]) -> Run {
        let tmp = tempfile::tempdir().unwrap();
        let nodeip = tmp.path().join("nodeip");
        std::fs::create_dir(&nodeip).unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ribbridge"));
        cmd.arg("render")
            .args(args)
            .env_remove("RUNTIMECFG_HOSTNAME_PATH")
            .env_remove("RIBBRIDGE_FRR_ROOT")
            .env("RIBBRIDGE_NODEIP_DIR", &nodeip)
            .current_dir(dir());
        Run { tmp, cmd }
    }

    /// Write `text` as the nodeip file `name` (ipv4 or ipv6).
    fn nodeip(mut self, name: &str, text: &str) -> Run {
        std::fs::write(self.tmp.path().join("nodeip").join(name), text).unwrap();
        self.cmd
            .env("RIBBRIDGE_NODEIP_DIR", self.tmp.path().join("nodeip"));
        self
    }

    /// Point RUNTIMECFG_HOSTNAME_PATH at a file holding `text`.
    fn hostname_file(mut self, text: &str) -> Run {
        let p = self.tmp.path().join("hostname");
        std::fs::write(&p, text).unwrap();
        self.cmd.env("RUNTIMECFG_HOSTNAME_PATH", p);
        self
    }

    fn out(mut self) -> Output {
        self.cmd.output().expect("run ribbridge")
    }
}

/// Render `peers` for master-0 with router id 192.168.111.20, plus `extra`.
fn master0(peers: &str, extra: &[&str]) -> Run {
    let mut args = vec![
        "--peers",
        peers,
        "--hostname",
        "master-0",
        "--router-id",
        "192.168.111.20",
    ];
    args.extend_from_slice(extra);
    Run::new(&args)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Compare `got` with the golden file `name`, or rewrite it when blessing.
fn golden(name: &str, got: &str) {
    let path = dir().join(name);
    if std::env::var_os("RIBBRIDGE_BLESS").is_some() {
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (RIBBRIDGE_BLESS=1 writes it)", path.display()));
    assert_eq!(got, want, "rendered text differs from {}", path.display());
}

fn render_ok(run: Run, golden_name: &str) -> String {
    let o = run.out();
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let text = stdout(&o);
    golden(golden_name, &text);
    text
}

// --- the matrix ---------------------------------------------------------------

#[test]
fn defaults_only() {
    let run = master0("defaults-only.json", &[]);
    let t = render_ok(run, "defaults-only.conf");
    // No VIP list: the prefix-list admits host routes of table 198 only.
    assert!(t.contains("permit 0.0.0.0/0 ge 32"), "{t}");
    assert!(!t.contains("address-family ipv6"), "{t}");
}

#[test]
fn defaults_only_for_frr_8_4() {
    let run = master0("defaults-only.json", &["--frr-release", "8.4"]);
    let t = render_ok(run, "defaults-only-8.4.conf");
    assert!(t.contains("\nip import-table 198\n"), "{t}");
    assert!(
        t.contains("  redistribute table 198 route-map KUBE-VIP-ROUTES-V4\n"),
        "{t}"
    );
    assert!(!t.contains("table-direct"), "{t}");
}

#[test]
fn host_override_from_the_hostname_file_and_nodeip() {
    let run = Run::new(&["--peers", "host-override.json"])
        .hostname_file("master-1.ostest.example.com\n")
        .nodeip("ipv4", "192.168.111.21\n");
    let t = render_ok(run, "host-override.conf");
    assert!(t.contains("hostname master-1\n") && t.contains("bgp router-id 192.168.111.21\n"));
    assert!(
        t.contains("neighbor 192.168.2.2 bfd") && !t.contains("192.168.1.1"),
        "{t}"
    );
}

#[test]
fn host_without_override_gets_the_default_peers() {
    let run = Run::new(&["--peers", "host-override.json", "--hostname", "master-3"])
        .nodeip("ipv4", "192.168.111.23");
    let o = run.out();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = stdout(&o);
    assert!(t.contains("neighbor 192.168.1.1 remote-as 64512\n"), "{t}");
    assert!(!t.contains(" bfd\n") && !t.contains("192.168.2.1"), "{t}");
}

#[test]
fn ipv6_only_takes_the_ipv6_nodeip_file() {
    let run = Run::new(&["--peers", "ipv6-only.json", "--hostname", "master-0"])
        .nodeip("ipv4", "192.0.2.99")
        .nodeip("ipv6", "fd2e:6f44:5dd8:c956::14\n");
    let t = render_ok(run, "ipv6-only.conf");
    // FRR's router id is IPv4: the low 32 bits of the node's IPv6 address.
    assert!(t.contains("bgp router-id 0.0.0.20\n"), "{t}");
    assert!(!t.contains("address-family ipv4"), "{t}");
}

#[test]
fn dual_stack_configmap_form() {
    let run = Run::new(&["--peers", "dual-stack.json", "--hostname", "master-2"])
        .nodeip("ipv4", "192.168.111.22")
        .nodeip("ipv6", "fd2e:6f44:5dd8:c956::16");
    let t = render_ok(run, "dual-stack.conf");
    assert!(t.contains("bgp router-id 192.168.111.22\n"), "{t}");
    assert!(t.contains(
        "ipv6 prefix-list KUBE-VIP-PREFIXES-V6 seq 20 permit fd2e:6f44:5dd8:c956::10/128\n"
    ));
}

#[test]
fn every_optional_field() {
    let run = master0("every-field.json", &[]);
    let t = render_ok(run, "every-field.conf");
    for line in [
        " neighbor 192.168.111.1 port 1179\n",
        " neighbor 192.168.111.1 password s3cret\n",
        " neighbor 192.168.111.1 bfd\n",
        " neighbor 192.168.111.1 ebgp-multihop\n",
        " neighbor 192.168.111.1 timers 3 9\n",
        " neighbor 192.168.111.2 port 179\n",
        " neighbor 192.168.111.2 timers 30 90\n",
        " neighbor 192.168.111.3 timers 10 30\n",
        " set community 64512:100 additive\n",
    ] {
        assert!(t.contains(line), "missing {line:?} in:\n{t}");
    }
    // Empty password, "false" flags: nothing emitted.
    assert!(!t.contains("192.168.111.2 password") && !t.contains("192.168.111.2 bfd"));
}

#[test]
fn every_optional_field_for_frr_8_4() {
    let run = master0("every-field.json", &["--frr-release", "8.4"]);
    render_ok(run, "every-field-8.4.conf");
}

#[test]
fn communities_standard_large_and_well_known() {
    let run = master0("communities.json", &[]);
    let t = render_ok(run, "communities.conf");
    let std_line = " set community 64512:100 65535:0 no-export graceful-shutdown additive\n";
    let large = " set large-community 64512:7:42 additive\n";
    // Attached to both families' redistribution, i.e. to what is sent.
    assert_eq!(t.matches(std_line).count(), 2, "{t}");
    assert_eq!(t.matches(large).count(), 2, "{t}");
}

#[test]
fn user_template_gets_the_same_context() {
    let run = master0("every-field.json", &["--template", "user.j2"]);
    render_ok(run, "user.conf");
}

// --- bad input: exact messages, exit 2, nothing written ------------------------

/// Render `json` (written as peers.json in a temporary directory) and
/// expect exit 2 with exactly `want` (after "ribbridge render: " and with
/// FILE standing for the file's path) as the last line of stderr.
fn rejects(json: &str, extra: &[&str], want: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let peers = tmp.path().join("peers.json");
    std::fs::write(&peers, json).unwrap();
    let out = tmp.path().join("frr.conf");
    let p = peers.to_str().unwrap();
    let mut args = vec![
        "--peers",
        p,
        "--hostname",
        "master-0",
        "--router-id",
        "192.168.111.20",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = Run::new(&args).out();
    assert_eq!(o.status.code(), Some(2), "stdout: {}", stdout(&o));
    let err = stderr(&o);
    let last = err.lines().last().unwrap_or("");
    assert_eq!(
        last,
        format!("ribbridge render: {}", want.replace("FILE", p))
    );
    assert!(!out.exists(), "an error must write nothing");
}

fn one_peer(fields: &str) -> String {
    format!(
        r#"{{"localASN": 64512, "defaultPeers": [{{"peerAddress": "192.168.1.1", "peerASN": 64513{fields}}}]}}"#
    )
}

#[test]
fn unknown_fields_are_named() {
    rejects(
        r#"{"localASN": 64512, "defaultPeers": [], "peers": []}"#,
        &[],
        "FILE: unknown field `peers`, expected one of `localASN`, `defaultPeers`, `hostOverrides`, \
         `communities`, `apiVIPs`, `ingressVIPs` at line 1 column 47: the file must be an \
         FRRPeerMapping (localASN, defaultPeers, hostOverrides, communities; peers with \
         peerAddress, peerASN, password, bfdEnabled, ebgpMultiHop, holdTime, keepaliveTime, \
         port), optionally with apiVIPs and ingressVIPs",
    );
    rejects(
        &one_peer(r#", "prot": 1179"#),
        &[],
        "FILE: unknown field `prot`, expected one of `peerAddress`, `peerASN`, `password`, \
         `bfdEnabled`, `ebgpMultiHop`, `holdTime`, `keepaliveTime`, `port` at line 1 column 92: \
         the file must be an FRRPeerMapping (localASN, defaultPeers, hostOverrides, communities; \
         peers with peerAddress, peerASN, password, bfdEnabled, ebgpMultiHop, holdTime, \
         keepaliveTime, port), optionally with apiVIPs and ingressVIPs",
    );
}

#[test]
fn schema_types_are_enforced() {
    let tail = ": the file must be an FRRPeerMapping (localASN, defaultPeers, hostOverrides, \
                communities; peers with peerAddress, peerASN, password, bfdEnabled, ebgpMultiHop, \
                holdTime, keepaliveTime, port), optionally with apiVIPs and ingressVIPs";
    rejects(
        r#"{"defaultPeers": []}"#,
        &[],
        &format!("FILE: missing field `localASN` at line 1 column 20{tail}"),
    );
    rejects(
        &one_peer(r#", "bfdEnabled": true"#),
        &[],
        &format!(
            "FILE: invalid type: boolean `true`, expected a string at line 1 column 104{tail}"
        ),
    );
    rejects(
        "not json",
        &[],
        &format!("FILE: expected ident at line 1 column 2{tail}"),
    );
}

#[test]
fn bad_values_name_the_field() {
    let cases: &[(&str, &str)] = &[
        (
            r#", "holdTime": "2""#,
            "defaultPeers[0].holdTime: 2s is below 3 seconds: BGP needs a hold time of at least 3 seconds",
        ),
        (
            r#", "holdTime": "20s", "keepaliveTime": "30s""#,
            "defaultPeers[0].holdTime: 20s is below keepaliveTime 30s: the hold time must be at least the keepalive time (usually 3 times it)",
        ),
        (
            r#", "holdTime": "70000""#,
            "defaultPeers[0].holdTime: 70000s is above 65535 seconds, the most BGP can carry",
        ),
        (
            r#", "holdTime": "1.5s""#,
            "defaultPeers[0].holdTime: '1.5s' is not a duration: write whole seconds, e.g. \"90\" or \"90s\" or \"1m30s\"",
        ),
        (
            r#", "keepaliveTime": "0""#,
            "defaultPeers[0].keepaliveTime: 0s is out of range: a keepalive time is 1 to 65535 seconds",
        ),
        (
            r#", "bfdEnabled": "yes""#,
            "defaultPeers[0].bfdEnabled: 'yes' must be \"true\" or \"false\"",
        ),
        (
            r#", "ebgpMultiHop": "True""#,
            "defaultPeers[0].ebgpMultiHop: 'True' must be \"true\" or \"false\"",
        ),
        (
            r#", "port": 0"#,
            "defaultPeers[0].port: 0 is out of range: a TCP port is 1 to 65535",
        ),
        (
            r#", "port": 70000"#,
            "defaultPeers[0].port: 70000 is out of range: a TCP port is 1 to 65535",
        ),
        (
            r#", "password": "two words""#,
            "defaultPeers[0].password: contains a space or control character, which frr.conf cannot carry: use a password without them",
        ),
    ];
    for (fields, want) in cases {
        rejects(&one_peer(fields), &[], &format!("FILE: {want}"));
    }
    let long = "x".repeat(81);
    rejects(
        &one_peer(&format!(r#", "password": "{long}""#)),
        &[],
        "FILE: defaultPeers[0].password: is 81 bytes long: TCP-MD5 keys are at most 80 bytes",
    );
}

#[test]
fn bad_addresses_and_asns() {
    let peer = |addr: &str, asn: &str| {
        format!(
            r#"{{"localASN": 64512, "defaultPeers": [{{"peerAddress": "{addr}", "peerASN": {asn}}}]}}"#
        )
    };
    rejects(
        &peer("192.168.1.300", "64513"),
        &[],
        "FILE: defaultPeers[0].peerAddress: '192.168.1.300' is not an IP address: write e.g. 192.168.1.1 or 2001:db8::1",
    );
    rejects(
        &peer("fe80::1", "64513"),
        &[],
        "FILE: defaultPeers[0].peerAddress: fe80::1 cannot be a BGP peer (unspecified, loopback, multicast or link-local): use the peer's routable address",
    );
    rejects(
        &peer("192.168.1.1", "0"),
        &[],
        "FILE: defaultPeers[0].peerASN: 0 is out of range: an ASN is 1 to 4294967295",
    );
    rejects(
        &peer("192.168.1.1", "4294967296"),
        &[],
        "FILE: defaultPeers[0].peerASN: 4294967296 is out of range: an ASN is 1 to 4294967295",
    );
    rejects(
        r#"{"localASN": -1, "defaultPeers": []}"#,
        &[],
        "FILE: localASN: -1 is out of range: an ASN is 1 to 4294967295",
    );
    rejects(
        r#"{"localASN": 64512, "defaultPeers": [{"peerAddress": "192.168.1.1", "peerASN": 1}, {"peerAddress": "192.168.1.1", "peerASN": 2}]}"#,
        &[],
        "FILE: defaultPeers[1].peerAddress: 192.168.1.1 is listed twice (also defaultPeers[0]): list each peer once",
    );
}

#[test]
fn bad_overrides_communities_and_vips() {
    let base =
        r#""localASN": 64512, "defaultPeers": [{"peerAddress": "192.168.1.1", "peerASN": 1}]"#;
    rejects(
        &format!(
            r#"{{{base}, "hostOverrides": {{"master-1": [{{"peerAddress": "10.0.0.1", "peerASN": 1, "holdTime": "1"}}]}}}}"#
        ),
        &[],
        "FILE: hostOverrides.master-1[0].holdTime: 1s is below 3 seconds: BGP needs a hold time of at least 3 seconds",
    );
    rejects(
        &format!(r#"{{{base}, "hostOverrides": {{"master-1": []}}}}"#),
        &[],
        "FILE: hostOverrides.master-1: the peer list is empty: list the host's peers or remove the entry",
    );
    rejects(
        &format!(
            r#"{{{base}, "hostOverrides": {{"master-1.example.com": [{{"peerAddress": "10.0.0.1", "peerASN": 1}}]}}}}"#
        ),
        &[],
        "FILE: hostOverrides.master-1.example.com: a key must be a short hostname (no dots, no spaces), e.g. master-0",
    );
    rejects(
        &format!(r#"{{{base}, "communities": ["64512:100", "65536:1"]}}"#),
        &[],
        "FILE: communities[1]: '65536:1' is not a BGP community: write ASN:VALUE with both parts 0 to 65535 (e.g. 64512:100), a large community A:B:C with each part 0 to 4294967295, or one of no-export, no-advertise, local-AS, no-peer, blackhole, graceful-shutdown, internet",
    );
    rejects(
        &format!(r#"{{{base}, "apiVIPs": ["192.168.111.0/24"]}}"#),
        &[],
        "FILE: apiVIPs[0]: '192.168.111.0/24' is not a single address: a VIP is a /32 or /128",
    );
    rejects(
        &format!(r#"{{{base}, "ingressVIPs": ["api.example.com"]}}"#),
        &[],
        "FILE: ingressVIPs[0]: 'api.example.com' is not a VIP: write an address, e.g. 192.168.111.5 or 2001:db8::5",
    );
}

#[test]
fn no_peers_and_release_mismatch() {
    rejects(
        r#"{"localASN": 64512}"#,
        &[],
        "FILE: no peers for host 'master-0': hostOverrides has no entry 'master-0' and defaultPeers is empty; add defaultPeers or a hostOverrides entry for master-0",
    );
    rejects(
        r#"{"localASN": 64512, "defaultPeers": [{"peerAddress": "192.168.1.1", "peerASN": 1}], "apiVIPs": ["2001:db8::5"]}"#,
        &["--frr-release", "8.4"],
        "FILE: the mapping lists IPv6 VIPs but FRR 8.4 cannot advertise IPv6 VIPs (it has no IPv6 import-table; table-direct came with FRR 10): render for FRR 10 with --frr-release 10",
    );
    rejects(
        r#"{"localASN": 64512, "defaultPeers": [{"peerAddress": "2001:db8::1", "peerASN": 1}]}"#,
        &["--frr-release", "8.4"],
        "FILE: every peer of this host is IPv6 but FRR 8.4 cannot advertise IPv6 VIPs (it has no IPv6 import-table; table-direct came with FRR 10): render for FRR 10 with --frr-release 10",
    );
}

#[test]
fn identity_errors_say_where_and_what_to_do() {
    let o = Run::new(&["--peers", "defaults-only.json", "--hostname", "master-0"])
        .nodeip("ipv4", "not-an-ip\n")
        .out();
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains(
            "nodeip/ipv4: 'not-an-ip' is not an IPv4 address; fix the file or pass --router-id"
        ),
        "{err}"
    );
    let o = Run::new(&["--peers", "defaults-only.json", "--router-id", "10.0.0.1"])
        .hostname_file("\n")
        .out();
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains(
            "hostname: '' is not a hostname (empty, or with spaces): pass --hostname NAME"
        ),
        "{err}"
    );
    let o = Run::new(&[
        "--peers",
        "missing.json",
        "--hostname",
        "m",
        "--router-id",
        "10.0.0.1",
    ])
    .out();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o).trim(),
        "ribbridge render: missing.json: cannot read the peer mapping: No such file or directory (os error 2)"
    );
}

#[test]
fn template_errors_name_the_template() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("bad.j2");
    std::fs::write(
        &t,
        "router bgp {{ local_asn }}\n bgp router-id {{ routerid }}\n",
    )
    .unwrap();
    let o = master0("defaults-only.json", &["--template", t.to_str().unwrap()]).out();
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    let want = format!(
        "ribbridge render: {0}: the template failed: undefined value (in {0}:2)",
        t.display()
    );
    assert!(err.starts_with(&want), "{err}");
}

// --- writing: exit codes, atomic rename, unchanged detection ---------------------

#[test]
fn writes_atomically_then_reports_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("frr.conf");
    let o = out.to_str().unwrap();
    let args = |json: &'static str| {
        vec![
            "--peers".to_string(),
            json.to_string(),
            "--hostname".into(),
            "master-0".into(),
            "--router-id".into(),
            "192.168.111.20".into(),
            "--out".into(),
            o.to_string(),
        ]
    };
    let run = |a: Vec<String>| {
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        Run::new(&a).out()
    };
    // First write: exit 0, mode 0640, the golden text, no temporary left.
    let r = run(args("defaults-only.json"));
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    assert!(r.stdout.is_empty());
    let meta = std::fs::metadata(&out).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o640);
    golden(
        "defaults-only.conf",
        &std::fs::read_to_string(&out).unwrap(),
    );
    let entries = || std::fs::read_dir(tmp.path()).unwrap().count();
    assert_eq!(entries(), 1);

    // Same input: exit 3, the file untouched (same inode, same mtime).
    let r = run(args("defaults-only.json"));
    assert_eq!(r.status.code(), Some(3), "{}", stderr(&r));
    assert!(stderr(&r).contains("is unchanged; not written"));
    let again = std::fs::metadata(&out).unwrap();
    assert_eq!(
        (again.ino(), again.mtime(), again.mtime_nsec()),
        (meta.ino(), meta.mtime(), meta.mtime_nsec())
    );

    // New input: exit 0, a new inode (renamed over, never rewritten in place).
    let r = run(args("communities.json"));
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    let new = std::fs::metadata(&out).unwrap();
    assert_ne!(new.ino(), meta.ino(), "the file must be replaced by rename");
    golden("communities.conf", &std::fs::read_to_string(&out).unwrap());
    assert_eq!(entries(), 1);

    // A failed render leaves the previous file exactly as it was.
    let r = run(args("missing.json"));
    assert_eq!(r.status.code(), Some(2));
    let after = std::fs::metadata(&out).unwrap();
    assert_eq!(
        (after.ino(), after.mtime_nsec()),
        (new.ino(), new.mtime_nsec())
    );
}

#[test]
fn unwritable_out_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("no-such-dir/frr.conf");
    let o = master0("defaults-only.json", &["--out", out.to_str().unwrap()]).out();
    assert_eq!(o.status.code(), Some(2));
    let want = format!(
        "ribbridge render: cannot write {}/no-such-dir/.frr.conf.ribbridge-",
        tmp.path().display()
    );
    assert!(stderr(&o).starts_with(&want), "{}", stderr(&o));
}

#[test]
fn vips_without_a_peer_of_their_family_are_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let peers = tmp.path().join("peers.json");
    std::fs::write(
        &peers,
        r#"{"localASN": 64512, "defaultPeers": [{"peerAddress": "192.168.1.1", "peerASN": 1}],
            "apiVIPs": ["192.168.111.5", "2001:db8::5"]}"#,
    )
    .unwrap();
    let o = master0(peers.to_str().unwrap(), &[]).out();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        format!(
            "ribbridge render: warning: {}: defaultPeers of 'master-0' has no IPv6 peer, so \
             2001:db8::5/128 will not be advertised\n",
            peers.display()
        )
    );
    assert!(!stdout(&o).contains("2001:db8::5"));
}
