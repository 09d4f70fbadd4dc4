//! `ribbridge render` as a user runs it: what only the command line does.
//! Exit codes (0, 2 with nothing written, 3 unchanged), the notes and
//! errors on standard error, the identity from the environment, and the
//! exit codes in `--help`. The library's cases are in `tests/render.rs`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/render")
}

/// `ribbridge render ARGS` in tests/render, with a private, empty nodeip
/// directory, no hostname file unless `env` sets them, and no drain intent
/// (an absent `--drain-state`, never the machine's) unless `args` give one.
fn ribbridge(args: &[&str], env: &[(&str, &Path)]) -> Output {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ribbridge"));
    cmd.arg("render").args(args);
    if !args.contains(&"--drain-state") {
        cmd.arg("--drain-state").arg(tmp.path().join("drain"));
    }
    cmd.env_remove("RUNTIMECFG_HOSTNAME_PATH")
        .env_remove("RIBBRIDGE_FRR_ROOT")
        .env("RIBBRIDGE_NODEIP_DIR", tmp.path())
        .current_dir(dir());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run ribbridge")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `--peers PEERS` for master-0 with router id 192.168.111.20, plus `extra`.
fn master0(peers: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "--peers",
        peers,
        "--hostname",
        "master-0",
        "--router-id",
        "192.168.111.20",
    ];
    args.extend_from_slice(extra);
    ribbridge(&args, &[])
}

/// Exit 2, nothing on standard output, and `want` as the last line of
/// standard error.
fn fails_with(o: &Output, want: &str) {
    assert_eq!(o.status.code(), Some(2), "stderr: {}", stderr(o));
    assert_eq!(stdout(o), "");
    assert_eq!(stderr(o).lines().last().unwrap_or(""), want);
}

#[test]
fn written_then_unchanged_exits_3() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("frr.conf");
    let o = out.to_str().expect("utf-8");
    let first = master0("defaults-only.json", &["--out", o]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    assert_eq!(stdout(&first), "");
    assert!(
        stderr(&first).ends_with(&format!("ribbridge render: wrote {o}\n")),
        "{}",
        stderr(&first)
    );
    let text = std::fs::read_to_string(&out).expect("written");
    assert_eq!(
        text,
        std::fs::read_to_string(dir().join("defaults-only.conf")).expect("golden")
    );

    let again = master0("defaults-only.json", &["--out", o]);
    assert_eq!(again.status.code(), Some(3), "{}", stderr(&again));
    assert!(
        stderr(&again).ends_with(&format!(
            "ribbridge render: {o} is unchanged; not written\n"
        )),
        "{}",
        stderr(&again)
    );

    // A failed render leaves the previous file exactly as it was.
    let failed = master0("missing.json", &["--out", o]);
    fails_with(
        &failed,
        "ribbridge render: missing.json: cannot read the peer mapping: No such file or \
         directory (os error 2)",
    );
    assert_eq!(std::fs::read_to_string(&out).expect("kept"), text);
}

#[test]
fn without_out_the_text_goes_to_stdout_and_the_notes_to_stderr() {
    let o = ribbridge(
        &[
            "--peers",
            "host-override.json",
            "--hostname",
            "master-3",
            "--router-id",
            "192.168.111.23",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("neighbor 192.168.1.1 remote-as 64512\n"));
    assert_eq!(
        stderr(&o),
        "ribbridge render: host 'master-3' (from --hostname) is not in hostOverrides (entries: \
         master-0, master-1, master-2): using defaultPeers (1 peer)\n\
         ribbridge render: router id 192.168.111.23 (from --router-id)\n"
    );
}

#[test]
fn the_environment_gives_the_identity() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let hostname = tmp.path().join("hostname");
    std::fs::write(&hostname, "master-1.ostest.example.com\n").expect("write");
    let nodeip = tmp.path().join("nodeip");
    std::fs::create_dir(&nodeip).expect("mkdir");
    std::fs::write(nodeip.join("ipv4"), "192.168.111.21\n").expect("write");
    let o = ribbridge(
        &["--peers", "host-override.json"],
        &[
            ("RUNTIMECFG_HOSTNAME_PATH", &hostname),
            ("RIBBRIDGE_NODEIP_DIR", &nodeip),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        std::fs::read_to_string(dir().join("host-override.conf")).expect("golden")
    );
    assert_eq!(
        stderr(&o),
        format!(
            "ribbridge render: host 'master-1' (from {}): using hostOverrides['master-1'] (2 \
             peers)\nribbridge render: router id 192.168.111.21 (from {}/ipv4)\n",
            hostname.display(),
            nodeip.display()
        )
    );
}

#[test]
fn warnings_are_printed_as_warnings() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let peers = tmp.path().join("peers.json");
    std::fs::write(
        &peers,
        r#"{"localASN": 64512, "defaultPeers": [{"peerAddress": "192.168.1.1", "peerASN": 1}],
            "apiVIPs": ["192.168.111.5", "2001:db8::5"]}"#,
    )
    .expect("write");
    let o = master0(peers.to_str().expect("utf-8"), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).ends_with(&format!(
            "ribbridge render: warning: {}: defaultPeers of 'master-0' has no IPv6 peer, so \
             2001:db8::5/128 will not be advertised\n",
            peers.display()
        )),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_yaml_file_is_named_as_yaml() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let peers = tmp.path().join("peers.yaml");
    std::fs::write(
        &peers,
        "localASN: 64512\ndefaultPeers:\n  - peerAddress: 192.168.1.1\n    peerASN: 64513\n",
    )
    .expect("write");
    let p = peers.to_str().expect("utf-8");
    let out = tmp.path().join("frr.conf");
    let o = master0(p, &["--out", out.to_str().expect("utf-8")]);
    fails_with(
        &o,
        &format!(
            "ribbridge render: {p}: this is YAML; the mapping file is JSON (convert it, e.g. \
             `yq -o json {p}`)"
        ),
    );
    assert!(!out.exists(), "an error must write nothing");
}

#[test]
fn a_type_error_names_the_field_path() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let peers = tmp.path().join("peers.json");
    std::fs::write(
        &peers,
        r#"{
  "localASN": 64512,
  "hostOverrides": {
    "m0": [
      {"peerAddress": "192.168.1.1", "peerASN": 64513},
      {"peerAddress": "192.168.1.2", "peerASN": "64513"}
    ]
  }
}"#,
    )
    .expect("write");
    let p = peers.to_str().expect("utf-8");
    fails_with(
        &master0(p, &[]),
        &format!(
            "ribbridge render: {p}: hostOverrides.m0[1].peerASN: invalid type: string \
             \"64513\", expected an integer"
        ),
    );
}

#[test]
fn a_failed_write_names_the_target_file() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("no-such-dir/frr.conf");
    let o = master0(
        "defaults-only.json",
        &["--out", out.to_str().expect("utf-8")],
    );
    fails_with(
        &o,
        &format!(
            "ribbridge render: cannot write {}: No such file or directory (os error 2)",
            out.display()
        ),
    );
}

#[test]
fn a_drain_intent_renders_drained_and_a_garbled_one_is_an_error() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let state = tmp.path().join("drain");
    let s = state.to_str().expect("utf-8");
    // Absent: the usual file.
    let o = master0("defaults-only.json", &["--drain-state", s]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        std::fs::read_to_string(dir().join("defaults-only.conf")).expect("golden")
    );
    // Drained: the drain's entry ahead of the route-map, and a note.
    std::fs::write(
        &state,
        "{\"drained\":true,\"since\":\"2026-12-01T19:49:29Z\",\"tables\":[198]}\n",
    )
    .expect("write");
    let o = master0("defaults-only.json", &["--drain-state", s]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains(
            "route-map KUBE-VIP-ROUTES-V4 deny 1\n description ribbridge-drain\nexit\n\
             route-map KUBE-VIP-ROUTES-V4 permit 10\n"
        ),
        "{}",
        stdout(&o)
    );
    assert!(
        stderr(&o).ends_with(&format!(
            "ribbridge render: drained ({s} says so since 2026-12-01T19:49:29Z): each VIP \
             route-map starts with the drain's deny entry (description ribbridge-drain), so FRR \
             started from this configuration stays drained; ribbridge undrain ends it\n"
        )),
        "{}",
        stderr(&o)
    );
    // Garbled: an error naming the file, nothing rendered.
    std::fs::write(&state, "yes\n").expect("write");
    let o = master0("defaults-only.json", &["--drain-state", s]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    assert!(
        stderr(&o).starts_with(&format!(
            "ribbridge render: {s}: not a ribbridge drain intent ("
        )),
        "{}",
        stderr(&o)
    );
}

#[test]
fn help_lists_the_exit_codes() {
    let o = Command::new(env!("CARGO_BIN_EXE_ribbridge"))
        .args(["render", "--help"])
        .output()
        .expect("run ribbridge");
    assert_eq!(o.status.code(), Some(0));
    assert!(
        stdout(&o)
            .contains("Exit status: 0 written or printed, 2 error (nothing written), 3 unchanged"),
        "{}",
        stdout(&o)
    );
    // Also in the short help.
    let o = Command::new(env!("CARGO_BIN_EXE_ribbridge"))
        .args(["render", "-h"])
        .output()
        .expect("run ribbridge");
    assert!(stdout(&o).contains("Exit status: "), "{}", stdout(&o));
}

#[test]
fn a_bad_release_is_a_usage_error() {
    let o = master0("defaults-only.json", &["--frr-release", "9"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("possible values: 10, 8.4"),
        "{}",
        stderr(&o)
    );
}
