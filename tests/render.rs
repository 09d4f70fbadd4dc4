//! The render library (`ribbridge::render::render`) as the CLI calls it:
//! golden files for the matrix of mappings, every bad input with its exact
//! message, the notes, the atomic write and the unchanged detection. No
//! binary, no root, no FRR: the node's identity comes from the input or from
//! files in a temporary directory (a [`Discovery`] pointing there), never
//! from the machine. `render/cli.rs` runs the built binary for what only the
//! command line does (exit codes, stderr, `--help`).
//! `RIBBRIDGE_BLESS=1 cargo test --test render` rewrites the golden files;
//! review the diff.

#![allow(clippy::unwrap_used)] // a test: a failed unwrap is a failed test

#[path = "render/cli.rs"]
mod cli;

use std::error::Error as _;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use ribbridge::model::TableMode;
use ribbridge::render::output::{self, Written};
use ribbridge::render::{
    self, Discovery, IdentityError, MappingError, MappingSource, Note, RenderError, RenderInput,
    Rendered, TemplateError, ValueError,
};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/render")
}

/// A render input with a private identity directory: `nodeip/` (empty
/// unless [`Case::nodeip`] writes into it) and no hostname file.
struct Case {
    tmp: tempfile::TempDir,
    input: RenderInput,
}

impl Case {
    /// The mapping `name` of tests/render.
    fn file(name: &str) -> Case {
        Case::of(MappingSource::File(dir().join(name)))
    }

    /// The mapping `json`, named peers.json in errors.
    fn text(json: &str) -> Case {
        Case::of(MappingSource::Text {
            name: "peers.json".into(),
            text: json.into(),
        })
    }

    fn of(mapping: MappingSource) -> Case {
        let tmp = tempfile::tempdir().unwrap();
        let nodeip = tmp.path().join("nodeip");
        std::fs::create_dir(&nodeip).unwrap();
        let mut input = RenderInput::new(mapping);
        input.discovery = Discovery {
            hostname_file: None,
            nodeip_dir: nodeip,
        };
        Case { tmp, input }
    }

    /// For master-0 with router id 192.168.111.20.
    fn master0(mut self) -> Case {
        self.input.hostname = Some("master-0".into());
        self.input.router_id = Some("192.168.111.20".parse().unwrap());
        self
    }

    fn host(mut self, name: &str) -> Case {
        self.input.hostname = Some(name.into());
        self
    }

    fn release(mut self, r: TableMode) -> Case {
        self.input.table_mode = r;
        self
    }

    /// Write `text` as the nodeip file `name` (ipv4 or ipv6).
    fn nodeip(self, name: &str, text: &str) -> Case {
        std::fs::write(self.input.discovery.nodeip_dir.join(name), text).unwrap();
        self
    }

    /// A hostname file holding `text`; returns its path too.
    fn hostname_file(mut self, text: &str) -> (Case, PathBuf) {
        let p = self.tmp.path().join("hostname");
        std::fs::write(&p, text).unwrap();
        self.input.discovery.hostname_file = Some(p.clone());
        (self, p)
    }

    fn render(&self) -> Result<Rendered, RenderError> {
        render::render(&self.input)
    }

    fn ok(&self) -> Rendered {
        self.render().unwrap_or_else(|e| panic!("{e}"))
    }

    fn err(&self) -> RenderError {
        match self.render() {
            Ok(r) => panic!("rendered, expected an error:\n{}", r.text),
            Err(e) => e,
        }
    }
}

/// Compare `got` with the golden file `name`, or rewrite it when blessing.
fn golden(name: &str, got: &str) {
    let path = dir().join(name);
    if std::env::var_os("RIBBRIDGE_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (RIBBRIDGE_BLESS=1 writes it)", path.display()));
    assert_eq!(got, want, "rendered text differs from {}", path.display());
}

fn render_ok(case: Case, golden_name: &str) -> Rendered {
    let r = case.ok();
    golden(golden_name, &r.text);
    r
}

fn notes(r: &Rendered) -> Vec<String> {
    r.notes.iter().map(ToString::to_string).collect()
}

// --- the matrix ---------------------------------------------------------------

#[test]
fn defaults_only() {
    let r = render_ok(
        Case::file("defaults-only.json").master0(),
        "defaults-only.conf",
    );
    // No VIP list: the prefix-list admits host routes of table 198 only.
    assert!(r.text.contains("permit 0.0.0.0/0 ge 32"), "{}", r.text);
    assert!(!r.text.contains("address-family ipv6"), "{}", r.text);
    assert_eq!(
        notes(&r),
        [
            "host 'master-0' (from --hostname): the mapping has no hostOverrides: using \
             defaultPeers (1 peer)",
            "router id 192.168.111.20 (from --router-id)",
        ]
    );
}

#[test]
fn defaults_only_for_frr_8_4() {
    let case = Case::file("defaults-only.json")
        .master0()
        .release(TableMode::ImportTable);
    let t = render_ok(case, "defaults-only-8.4.conf").text;
    assert!(t.contains("\nip import-table 198\n"), "{t}");
    assert!(
        t.contains("  redistribute table 198 route-map KUBE-VIP-ROUTES-V4\n"),
        "{t}"
    );
    assert!(!t.contains("table-direct"), "{t}");
}

#[test]
fn host_override_from_the_hostname_file_and_nodeip() {
    let (case, hostname) = Case::file("host-override.json")
        .nodeip("ipv4", "192.168.111.21\n")
        .hostname_file("master-1.ostest.example.com\n");
    let r = render_ok(case, "host-override.conf");
    let t = &r.text;
    assert!(t.contains("hostname master-1\n") && t.contains("bgp router-id 192.168.111.21\n"));
    assert!(
        t.contains("neighbor 192.168.2.2 bfd") && !t.contains("192.168.1.1"),
        "{t}"
    );
    assert_eq!(
        r.notes,
        [
            Note::Info(format!(
                "host 'master-1' (from {}): using hostOverrides['master-1'] (2 peers)",
                hostname.display()
            )),
            Note::Info(format!(
                "router id 192.168.111.21 (from {}/nodeip/ipv4)",
                hostname.parent().unwrap().display()
            )),
        ]
    );
}

#[test]
fn host_without_override_gets_the_default_peers() {
    let r = Case::file("host-override.json")
        .host("master-3")
        .nodeip("ipv4", "192.168.111.23")
        .ok();
    assert!(
        r.text.contains("neighbor 192.168.1.1 remote-as 64512\n"),
        "{}",
        r.text
    );
    assert!(
        !r.text.contains(" bfd\n") && !r.text.contains("192.168.2.1"),
        "{}",
        r.text
    );
    assert_eq!(
        notes(&r)[0],
        "host 'master-3' (from --hostname) is not in hostOverrides (entries: master-0, \
         master-1, master-2): using defaultPeers (1 peer)"
    );
}

#[test]
fn a_long_override_list_is_cut_in_the_note() {
    let hosts: Vec<String> = (0..12)
        .map(|i| format!(r#""m{i:02}": [{{"peerAddress": "10.0.0.1", "peerASN": 1}}]"#))
        .collect();
    let json = format!(
        r#"{{"localASN": 64512, "defaultPeers": [{{"peerAddress": "10.0.0.2", "peerASN": 1}}, {{"peerAddress": "10.0.0.3", "peerASN": 1}}],
            "hostOverrides": {{{}}}}}"#,
        hosts.join(", ")
    );
    let r = Case::text(&json).master0().ok();
    assert_eq!(
        notes(&r)[0],
        "host 'master-0' (from --hostname) is not in hostOverrides (entries: m00, m01, m02, \
         m03, m04, m05, m06, m07, ... (12 in all)): using defaultPeers (2 peers)"
    );
}

#[test]
fn ipv6_only_takes_the_ipv6_nodeip_file() {
    let case = Case::file("ipv6-only.json")
        .host("master-0")
        .nodeip("ipv4", "192.0.2.99")
        .nodeip("ipv6", "fd2e:6f44:5dd8:c956::14\n");
    let r = render_ok(case, "ipv6-only.conf");
    // FRR's router id is IPv4: the low 32 bits of the node's IPv6 address.
    assert!(r.text.contains("bgp router-id 0.0.0.20\n"), "{}", r.text);
    assert!(!r.text.contains("address-family ipv4"), "{}", r.text);
    let n = notes(&r);
    assert!(
        n[1].starts_with("router id 0.0.0.20 (the low 32 bits of fd2e:6f44:5dd8:c956::14, from ")
            && n[1].ends_with("/nodeip/ipv6)"),
        "{n:?}"
    );
}

#[test]
fn dual_stack_configmap_form() {
    let case = Case::file("dual-stack.json")
        .host("master-2")
        .nodeip("ipv4", "192.168.111.22")
        .nodeip("ipv6", "fd2e:6f44:5dd8:c956::16");
    let t = render_ok(case, "dual-stack.conf").text;
    assert!(t.contains("bgp router-id 192.168.111.22\n"), "{t}");
    assert!(t.contains(
        "ipv6 prefix-list KUBE-VIP-PREFIXES-V6 seq 20 permit fd2e:6f44:5dd8:c956::10/128\n"
    ));
}

#[test]
fn every_optional_field() {
    let t = render_ok(Case::file("every-field.json").master0(), "every-field.conf").text;
    for line in [
        " neighbor 192.168.111.1 port 1179\n",
        " neighbor 192.168.111.1 password s3cret\n",
        " neighbor 192.168.111.1 bfd\n",
        " neighbor 192.168.111.1 graceful-restart\n",
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
    assert!(!t.contains("192.168.111.2 graceful-restart"));
}

#[test]
fn every_optional_field_for_frr_8_4() {
    let case = Case::file("every-field.json")
        .master0()
        .release(TableMode::ImportTable);
    render_ok(case, "every-field-8.4.conf");
}

#[test]
fn communities_standard_large_and_well_known() {
    let t = render_ok(Case::file("communities.json").master0(), "communities.conf").text;
    let std_line = " set community 64512:100 65535:0 no-export graceful-shutdown additive\n";
    let large = " set large-community 64512:7:42 additive\n";
    // Attached to both families' table_mode, i.e. to what is sent.
    assert_eq!(t.matches(std_line).count(), 2, "{t}");
    assert_eq!(t.matches(large).count(), 2, "{t}");
}

#[test]
fn user_template_gets_the_same_context() {
    let mut case = Case::file("every-field.json").master0();
    case.input.template = Some(dir().join("user.j2"));
    render_ok(case, "user.conf");
}

// --- drained by intent -----------------------------------------------------------

const DRAIN_FROM: &str = "/run/ribbridge/drain says so since 2026-12-01T19:49:29Z";

#[test]
fn drained_keeps_the_drain_entry_ahead_of_each_vip_route_map() {
    let mut case = Case::file("dual-stack.json").master0();
    case.input.drained = Some(DRAIN_FROM.into());
    let r = render_ok(case, "drained.conf");
    let t = &r.text;
    for m in ["KUBE-VIP-ROUTES-V4", "KUBE-VIP-ROUTES-V6"] {
        let entry = format!(
            "route-map {m} deny 1\n description ribbridge-drain\nexit\nroute-map {m} permit 10\n"
        );
        assert!(t.contains(&entry), "{t}");
    }
    assert_eq!(
        notes(&r).last().unwrap(),
        &format!(
            "drained ({DRAIN_FROM}): each VIP route-map starts with the drain's deny entry \
             (description ribbridge-drain), so FRR started from this configuration stays \
             drained; ribbridge undrain ends it"
        )
    );
    // ribbridge drain reads it as its own drain: nothing more to do, and
    // undrain removes exactly these entries.
    assert!(ribbridge::drain::plan::is_drained(t, 198));
    assert!(
        ribbridge::drain::plan::drain_commands(t, &[198])
            .unwrap()
            .is_empty()
    );
    let u = ribbridge::drain::plan::undrain_commands(t, &[198]).unwrap();
    assert_eq!(
        &u[..2],
        [
            "no route-map KUBE-VIP-ROUTES-V4 deny 1",
            "no route-map KUBE-VIP-ROUTES-V6 deny 1"
        ]
    );
    // Not drained, the same mapping renders its usual file.
    let r = Case::file("dual-stack.json").master0().ok();
    assert!(!r.text.contains("ribbridge-drain"));
    assert!(!ribbridge::drain::plan::is_drained(&r.text, 198));
}

#[test]
fn drained_for_frr_8_4() {
    let mut case = Case::file("defaults-only.json")
        .master0()
        .release(TableMode::ImportTable);
    case.input.drained = Some(DRAIN_FROM.into());
    let t = render_ok(case, "drained-8.4.conf").text;
    assert!(
        t.contains(
            "route-map KUBE-VIP-ROUTES-V4 deny 1\n description ribbridge-drain\nexit\n\
             route-map KUBE-VIP-ROUTES-V4 permit 10\n"
        ),
        "{t}"
    );
    assert!(ribbridge::drain::plan::is_drained(&t, 198));
}

#[test]
fn a_user_template_gets_drained_and_is_warned_when_it_ignores_it() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("drain.j2");
    std::fs::write(
        &t,
        "{% for af in families %}{% if drained %}route-map {{ af.route_map }} deny \
         {{ drain_seq }}\n description {{ drain_mark }}\nexit\n{% endif %}\
         route-map {{ af.route_map }} permit 10\nexit\n{% endfor %}",
    )
    .unwrap();
    let mut case = Case::file("defaults-only.json").master0();
    case.input.template = Some(t.clone());
    assert_eq!(
        case.ok().text,
        "route-map KUBE-VIP-ROUTES-V4 permit 10\nexit\n"
    );
    case.input.drained = Some(DRAIN_FROM.into());
    let r = case.ok();
    assert_eq!(
        r.text,
        "route-map KUBE-VIP-ROUTES-V4 deny 1\n description ribbridge-drain\nexit\n\
         route-map KUBE-VIP-ROUTES-V4 permit 10\nexit\n"
    );
    assert!(matches!(r.notes.last(), Some(Note::Info(n)) if n.starts_with("drained (")));
    // A template that writes no drain entry: a warning, the text as usual.
    let mut case = Case::file("every-field.json").master0();
    case.input.template = Some(dir().join("user.j2"));
    case.input.drained = Some(DRAIN_FROM.into());
    let r = render_ok(case, "user.conf");
    assert_eq!(
        notes(&r).last().unwrap(),
        &format!(
            "warning: drained ({DRAIN_FROM}), but the template writes no drain entry (a \
             route-map entry with description ribbridge-drain): FRR started from this \
             configuration advertises the VIPs; write it when `drained` is true (see the \
             render module's documentation)"
        )
    );
}

#[test]
fn mapping_text_renders_like_the_file() {
    let text = std::fs::read_to_string(dir().join("every-field.json")).unwrap();
    let r = Case::text(&text).master0().ok();
    golden("every-field.conf", &r.text);
}

#[test]
fn vips_without_a_peer_of_their_family_are_a_warning() {
    let r = Case::text(
        r#"{"localASN": 64512, "defaultPeers": [{"peerAddress": "192.168.1.1", "peerASN": 1}],
            "apiVIPs": ["192.168.111.5", "2001:db8::5"]}"#,
    )
    .master0()
    .ok();
    assert_eq!(
        r.notes.last().unwrap(),
        &Note::Warning(
            "peers.json: defaultPeers of 'master-0' has no IPv6 peer, so 2001:db8::5/128 will \
             not be advertised"
                .into()
        )
    );
    assert_eq!(
        r.notes.last().unwrap().to_string(),
        "warning: peers.json: defaultPeers of 'master-0' has no IPv6 peer, so 2001:db8::5/128 \
         will not be advertised"
    );
    assert!(!r.text.contains("2001:db8::5"));
}

// --- bad input: exact messages --------------------------------------------------

/// Render `json` (named peers.json) for master-0 with `release` and expect
/// exactly `want` as the error's message.
fn rejects_for(json: &str, release: TableMode, want: &str) -> RenderError {
    let e = Case::text(json).master0().release(release).err();
    assert_eq!(e.to_string(), want);
    e
}

fn rejects(json: &str, want: &str) -> RenderError {
    rejects_for(json, TableMode::TableDirect, want)
}

fn one_peer(fields: &str) -> String {
    format!(
        r#"{{"localASN": 64512, "defaultPeers": [{{"peerAddress": "192.168.1.1", "peerASN": 64513{fields}}}]}}"#
    )
}

const SCHEMA: &str = "the file must be an FRRPeerMapping (localASN, defaultPeers, \
                      hostOverrides, communities; peers with peerAddress, peerASN, password, \
                      bfdEnabled, enableGracefulRestart, ebgpMultiHop, holdTime, keepaliveTime, port), optionally with \
                      apiVIPs and ingressVIPs";

#[test]
fn unknown_fields_are_named_by_their_path() {
    rejects(
        r#"{"localASN": 64512, "defaultPeers": [], "peers": []}"#,
        "peers.json: peers: unknown field `peers`, expected one of `localASN`, `defaultPeers`, \
         `hostOverrides`, `communities`, `apiVIPs`, `ingressVIPs`",
    );
    let e = rejects(
        &one_peer(r#", "prot": 1179"#),
        "peers.json: defaultPeers[0].prot: unknown field `prot`, expected one of `peerAddress`, \
         `peerASN`, `password`, `bfdEnabled`, `enableGracefulRestart`, `ebgpMultiHop`, \
         `holdTime`, `keepaliveTime`, `port`",
    );
    let RenderError::Mapping(m) = &e else {
        panic!("{e:?}")
    };
    assert_eq!(m.field(), Some("defaultPeers[0].prot"));
}

#[test]
fn type_errors_are_named_by_their_path() {
    let e = rejects(
        r#"{"localASN": 64512, "hostOverrides": {"m0": [{"peerAddress": "10.0.0.1", "peerASN": 1},
            {"peerAddress": "10.0.0.2", "peerASN": "64513"}]}}"#,
        "peers.json: hostOverrides.m0[1].peerASN: invalid type: string \"64513\", expected an \
         integer",
    );
    // The cause is serde_json's error, which still knows the line.
    let json = e
        .source()
        .and_then(|s| s.downcast_ref::<serde_json::Error>())
        .unwrap();
    assert_eq!(json.line(), 2);
    rejects(
        &one_peer(r#", "bfdEnabled": true"#),
        "peers.json: defaultPeers[0].bfdEnabled: invalid type: boolean `true`, expected a string",
    );
    rejects(
        &one_peer(r#", "port": "179""#),
        "peers.json: defaultPeers[0].port: invalid type: string \"179\", expected an integer",
    );
    rejects(
        r#"{"localASN": 1.5}"#,
        "peers.json: localASN: invalid type: floating point `1.5`, expected an integer",
    );
    rejects(
        r#"{"localASN": 1, "defaultPeers": [1]}"#,
        "peers.json: defaultPeers[0]: invalid type: integer `1`, expected a peer object \
         (peerAddress, peerASN, ...)",
    );
    rejects(
        r#"{"localASN": 1, "communities": "64512:100"}"#,
        "peers.json: communities: invalid type: string \"64512:100\", expected a sequence",
    );
}

#[test]
fn a_wrong_top_level_says_what_the_file_must_be() {
    rejects(
        r#"{"defaultPeers": []}"#,
        &format!("peers.json: missing field `localASN`: {SCHEMA}"),
    );
    rejects(
        "[1, 2]",
        &format!("peers.json: the top level is an array, not an object: {SCHEMA}"),
    );
    rejects(
        " 64512\n",
        &format!("peers.json: the top level is a number, not an object: {SCHEMA}"),
    );
}

#[test]
fn syntax_errors_keep_the_line_and_column() {
    rejects(
        "not json",
        &format!("peers.json: expected ident at line 1 column 2: {SCHEMA}"),
    );
    rejects(
        "{\"localASN\": 64512,\n}",
        &format!("peers.json: trailing comma at line 2 column 1: {SCHEMA}"),
    );
    rejects(
        r#"{"localASN": 64512} {}"#,
        &format!("peers.json: trailing characters at line 1 column 21: {SCHEMA}"),
    );
}

#[test]
fn yaml_is_named_as_yaml() {
    let want = "peers.json: this is YAML; the mapping file is JSON (convert it, e.g. `yq -o json \
                peers.json`)";
    for yaml in [
        "localASN: 64512\ndefaultPeers:\n- peerAddress: 192.168.1.1\n  peerASN: 64513\n",
        "\n# the cluster's peers\nlocalASN: 64512\n",
        "---\nlocalASN: 64512\n",
        "\"localASN\": 64512\n",
        "localASN:\n  64512\n",
    ] {
        let e = rejects(yaml, want);
        assert!(
            matches!(e, RenderError::Mapping(MappingError::Yaml { .. })),
            "{e:?}"
        );
    }
    // JSON, also JSON with leading blank lines, is not taken for YAML.
    for json in [
        "\n\n  {\"localASN\": 64512}",
        "[]",
        "64512",
        "\"localASN: 1\"",
    ] {
        assert!(!ribbridge::render::mapping::looks_like_yaml(json), "{json}");
    }
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
            r#", "enableGracefulRestart": "on""#,
            "defaultPeers[0].enableGracefulRestart: 'on' must be \"true\" or \"false\"",
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
        rejects(&one_peer(fields), &format!("peers.json: {want}"));
    }
    let long = "x".repeat(81);
    let e = rejects(
        &one_peer(&format!(r#", "password": "{long}""#)),
        "peers.json: defaultPeers[0].password: is 81 bytes long: TCP-MD5 keys are at most 80 bytes",
    );
    // The typed cause, for code that inspects it.
    assert_eq!(
        e.source()
            .and_then(|s| s.downcast_ref::<ValueError>())
            .cloned(),
        Some(ValueError::PasswordLength(81))
    );
}

#[test]
fn bad_addresses_and_asns() {
    let peer = |addr: &str, asn: &str| {
        format!(
            r#"{{"localASN": 64512, "defaultPeers": [{{"peerAddress": "{addr}", "peerASN": {asn}}}]}}"#
        )
    };
    for (addr, asn, want) in [
        (
            "192.168.1.300",
            "64513",
            "defaultPeers[0].peerAddress: '192.168.1.300' is not an IP address: write e.g. 192.168.1.1 or 2001:db8::1",
        ),
        (
            "fe80::1",
            "64513",
            "defaultPeers[0].peerAddress: fe80::1 cannot be a BGP peer (unspecified, loopback, multicast or link-local): use the peer's routable address",
        ),
        (
            "192.168.1.1",
            "0",
            "defaultPeers[0].peerASN: 0 is out of range: an ASN is 1 to 4294967295",
        ),
        (
            "192.168.1.1",
            "4294967296",
            "defaultPeers[0].peerASN: 4294967296 is out of range: an ASN is 1 to 4294967295",
        ),
        (
            "192.168.1.1",
            "18446744073709551615",
            "defaultPeers[0].peerASN: 18446744073709551615 is out of range: an ASN is 1 to 4294967295",
        ),
    ] {
        rejects(&peer(addr, asn), &format!("peers.json: {want}"));
    }
    rejects(
        r#"{"localASN": -1, "defaultPeers": []}"#,
        "peers.json: localASN: -1 is out of range: an ASN is 1 to 4294967295",
    );
    rejects(
        r#"{"localASN": 64512, "defaultPeers": [{"peerAddress": "192.168.1.1", "peerASN": 1}, {"peerAddress": "192.168.1.1", "peerASN": 2}]}"#,
        "peers.json: defaultPeers[1].peerAddress: 192.168.1.1 is listed twice (also defaultPeers[0]): list each peer once",
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
        "peers.json: hostOverrides.master-1[0].holdTime: 1s is below 3 seconds: BGP needs a hold time of at least 3 seconds",
    );
    rejects(
        &format!(r#"{{{base}, "hostOverrides": {{"master-1": []}}}}"#),
        "peers.json: hostOverrides.master-1: the peer list is empty: list the host's peers or remove the entry",
    );
    rejects(
        &format!(
            r#"{{{base}, "hostOverrides": {{"master-1.example.com": [{{"peerAddress": "10.0.0.1", "peerASN": 1}}]}}}}"#
        ),
        "peers.json: hostOverrides.master-1.example.com: a key must be a short hostname (no dots, no spaces), e.g. master-0",
    );
    rejects(
        &format!(r#"{{{base}, "communities": ["64512:100", "65536:1"]}}"#),
        "peers.json: communities[1]: '65536:1' is not a BGP community: write ASN:VALUE with both parts 0 to 65535 (e.g. 64512:100), a large community A:B:C with each part 0 to 4294967295, or one of no-export, no-advertise, local-AS, no-peer, blackhole, graceful-shutdown, internet",
    );
    rejects(
        &format!(r#"{{{base}, "apiVIPs": ["192.168.111.0/24"]}}"#),
        "peers.json: apiVIPs[0]: '192.168.111.0/24' is not a single address: a VIP is a /32 or /128",
    );
    rejects(
        &format!(r#"{{{base}, "ingressVIPs": ["api.example.com"]}}"#),
        "peers.json: ingressVIPs[0]: 'api.example.com' is not a VIP: write an address, e.g. 192.168.111.5 or 2001:db8::5",
    );
}

#[test]
fn no_peers_and_release_mismatch() {
    let e = rejects(
        r#"{"localASN": 64512}"#,
        "peers.json: no peers for host 'master-0': hostOverrides has no entry 'master-0' and defaultPeers is empty; add defaultPeers or a hostOverrides entry for master-0",
    );
    assert!(matches!(e, RenderError::NoPeers { .. }), "{e:?}");
    rejects_for(
        r#"{"localASN": 64512, "defaultPeers": [{"peerAddress": "192.168.1.1", "peerASN": 1}], "apiVIPs": ["2001:db8::5"]}"#,
        TableMode::ImportTable,
        "peers.json: the mapping lists IPv6 VIPs but FRR 8.4 cannot advertise IPv6 VIPs (it has no IPv6 import-table; table-direct came with FRR 10): render for FRR 10 with --frr-release 10",
    );
    rejects_for(
        r#"{"localASN": 64512, "defaultPeers": [{"peerAddress": "2001:db8::1", "peerASN": 1}]}"#,
        TableMode::ImportTable,
        "peers.json: every peer of this host is IPv6 but FRR 8.4 cannot advertise IPv6 VIPs (it has no IPv6 import-table; table-direct came with FRR 10): render for FRR 10 with --frr-release 10",
    );
}

#[test]
fn identity_errors_say_where_and_what_to_do() {
    let case = Case::file("defaults-only.json")
        .host("master-0")
        .nodeip("ipv4", "not-an-ip\n");
    let e = case.err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}/ipv4: 'not-an-ip' is not an IPv4 address; fix the file or pass --router-id",
            case.input.discovery.nodeip_dir.display()
        )
    );
    assert!(
        matches!(e, RenderError::Identity(IdentityError::NodeipBad { .. })),
        "{e:?}"
    );

    let (mut case, file) = Case::file("defaults-only.json").hostname_file("\n");
    case.input.router_id = Some("10.0.0.1".parse().unwrap());
    assert_eq!(
        case.err().to_string(),
        format!(
            "{}: '' is not a hostname (empty, or with spaces): pass --hostname NAME",
            file.display()
        )
    );

    let mut case = Case::file("defaults-only.json").master0();
    let missing = case.tmp.path().join("no-such-hostname");
    case.input.hostname = None;
    case.input.discovery.hostname_file = Some(missing.clone());
    let e = case.err();
    assert_eq!(
        e.to_string(),
        format!(
            "RUNTIMECFG_HOSTNAME_PATH names {}, which cannot be read: No such file or directory \
             (os error 2); fix the path or pass --hostname",
            missing.display()
        )
    );
    let io = e
        .source()
        .and_then(|s| s.downcast_ref::<std::io::Error>())
        .unwrap();
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);

    let e = Case::text(
        r#"{"localASN": 1, "defaultPeers": [{"peerAddress": "2001:db8::1", "peerASN": 1}]}"#,
    )
    .host("m")
    .nodeip("ipv6", "2001:db8::\n")
    .err();
    assert!(
        e.to_string().ends_with(
            "/nodeip/ipv6: 2001:db8:: gives the router id 0.0.0.0, which BGP forbids; pass \
             --router-id with an IPv4 address"
        ),
        "{e}"
    );
}

#[test]
fn a_missing_mapping_file_is_named() {
    let mut case = Case::file("defaults-only.json").master0();
    case.input.mapping = MappingSource::File("missing.json".into());
    let e = case.err();
    assert_eq!(
        e.to_string(),
        "missing.json: cannot read the peer mapping: No such file or directory (os error 2)"
    );
    assert!(
        matches!(e, RenderError::Mapping(MappingError::Read { .. })),
        "{e:?}"
    );
}

#[test]
fn template_errors_name_the_template() {
    let mut case = Case::file("defaults-only.json").master0();
    let t = case.tmp.path().join("bad.j2");
    std::fs::write(
        &t,
        "router bgp {{ local_asn }}\n bgp router-id {{ routerid }}\n",
    )
    .unwrap();
    case.input.template = Some(t.clone());
    let e = case.err();
    let want = format!(
        "{0}: the template failed: undefined value (in {0}:2)",
        t.display()
    );
    assert!(e.to_string().starts_with(&want), "{e}");
    assert!(
        matches!(e, RenderError::Template(TemplateError::Render { .. })),
        "{e:?}"
    );

    case.input.template = Some(case.tmp.path().join("none.j2"));
    assert_eq!(
        case.err().to_string(),
        format!(
            "{}: cannot read the template: No such file or directory (os error 2)",
            case.tmp.path().join("none.j2").display()
        )
    );
}

// --- writing: atomic rename, unchanged detection, errors name the target ------

#[test]
fn writes_atomically_then_reports_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("frr.conf");
    let first = Case::file("defaults-only.json").master0().ok().text;
    // First write: mode 0640, the text, no temporary left.
    assert_eq!(
        output::write_if_changed(&out, &first).unwrap(),
        Written::Written
    );
    let meta = std::fs::metadata(&out).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o640);
    golden(
        "defaults-only.conf",
        &std::fs::read_to_string(&out).unwrap(),
    );
    let entries = || std::fs::read_dir(tmp.path()).unwrap().count();
    assert_eq!(entries(), 1);

    // Same text: the file untouched (same inode, same mtime).
    assert_eq!(
        output::write_if_changed(&out, &first).unwrap(),
        Written::Unchanged
    );
    let again = std::fs::metadata(&out).unwrap();
    assert_eq!(
        (again.ino(), again.mtime(), again.mtime_nsec()),
        (meta.ino(), meta.mtime(), meta.mtime_nsec())
    );

    // New text: a new inode (renamed over, never rewritten in place).
    let second = Case::file("communities.json").master0().ok().text;
    assert_eq!(
        output::write_if_changed(&out, &second).unwrap(),
        Written::Written
    );
    let new = std::fs::metadata(&out).unwrap();
    assert_ne!(new.ino(), meta.ino(), "the file must be replaced by rename");
    golden("communities.conf", &std::fs::read_to_string(&out).unwrap());
    assert_eq!(entries(), 1);
}

#[test]
fn a_failed_write_names_the_target_not_the_temporary_file() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("no-such-dir/frr.conf");
    let e = output::write_if_changed(&out, "text\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "cannot write {}: No such file or directory (os error 2)",
            out.display()
        )
    );
    assert!(!e.to_string().contains(".frr.conf.ribbridge-"), "{e}");
    assert!(e.source().is_some());

    // A directory where the file should be: named, and nothing is left
    // beside it.
    let out = tmp.path().join("frr.conf");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("x"), "").unwrap();
    let e = output::write_if_changed(&out, "text\n").unwrap_err();
    assert!(
        e.to_string().starts_with(&format!(
            "{}: cannot read the current file: ",
            out.display()
        )),
        "{e}"
    );
    let leftover: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftover, ["frr.conf"]);
}
