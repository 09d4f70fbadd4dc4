//! The binary's surface: version, help, exit codes, and the flag checks a
//! new user trips over (each runs the built binary; none needs root or FRR).

use std::process::Command;

fn ribbridge(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ribbridge"))
        .args(args)
        .output()
        .expect("run ribbridge")
}

#[test]
fn version_names_the_crate_version_the_revision_and_its_date() {
    let out = ribbridge(&["--version"]);
    assert!(out.status.success());
    // The revision the checkout is at, as git says (the build is of it).
    let git = |args: &[&str]| {
        let o = Command::new("git")
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("git");
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    };
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!(
            "ribbridge {} (revision {}, {})",
            env!("CARGO_PKG_VERSION"),
            git(&["rev-parse", "--short=12", "HEAD"]),
            git(&["log", "-1", "--format=%cs"]),
        )
    );
}

#[test]
fn help_lists_every_subcommand() {
    let out = ribbridge(&["--help"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for sub in [
        "run", "status", "drain", "undrain", "render", "kernel", "frr",
    ] {
        assert!(
            text.lines().any(|l| l.trim_start().starts_with(sub)),
            "--help does not list `{sub}`:\n{text}"
        );
    }
}

#[test]
fn unknown_flag_is_a_usage_error() {
    let out = ribbridge(&["run", "--no-such-flag"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--no-such-flag"));
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn an_invalid_log_filter_is_an_error_not_info() {
    let out = ribbridge(&["--log", "ribbridge=loud", "status"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let e = stderr(&out);
    assert!(
        e.contains("--log 'ribbridge=loud' is not a log filter"),
        "{e}"
    );
}

#[test]
fn log_format_json_writes_json_lines() {
    use std::io::BufRead;
    // `run` logs its start before it touches anything; read that one line.
    let mut child = Command::new(env!("CARGO_BIN_EXE_ribbridge"))
        .args([
            "--log-format",
            "json",
            "run",
            "--listen",
            "127.0.0.1:0",
            "--frr-dir",
            "/nonexistent/ribbridge-test",
            "--mode",
            "observe",
        ])
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("spawn ribbridge run");
    let mut line = String::new();
    let stderr = child.stderr.take().expect("stderr");
    std::io::BufReader::new(stderr)
        .read_line(&mut line)
        .expect("read a log line");
    let _ = child.kill();
    let _ = child.wait();
    let v: serde_json::Value = serde_json::from_str(&line).expect("a JSON log line");
    assert!(v["level"].is_string() && v["fields"].is_object(), "{line}");
}

#[test]
fn kernel_family_is_4_or_6_only() {
    let out = ribbridge(&["kernel", "--family", "5"]);
    assert_eq!(out.status.code(), Some(2));
    let e = stderr(&out);
    assert!(e.contains("'5'") && e.contains("use 4 or 6"), "{e}");
}

#[test]
fn status_takes_host_port_and_names_it_when_unreachable() {
    // A port nothing listens on: bind one, note it, close it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let endpoint = format!("127.0.0.1:{port}");
    let out = ribbridge(&["status", "--endpoint", &endpoint]);
    assert_eq!(out.status.code(), Some(2));
    let e = stderr(&out);
    assert!(
        e.contains(&format!("cannot reach ribbridge at http://{endpoint}"))
            && e.contains("--oneshot"),
        "{e}"
    );
}

#[test]
fn a_flag_without_its_mode_is_an_error() {
    for args in [
        &["status", "--frr-dir", "/var/run/frr"][..],
        &["status", "--table", "198"][..],
        &["status", "--oneshot", "--endpoint", "127.0.0.1:1"][..],
    ] {
        let out = ribbridge(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let e = stderr(&out);
        assert!(e.contains("--oneshot"), "{args:?}: {e}");
    }
}

#[test]
fn every_subcommand_help_states_its_exit_codes() {
    for sub in [
        "run", "status", "drain", "undrain", "render", "kernel", "frr",
    ] {
        let out = ribbridge(&[sub, "--help"]);
        assert!(out.status.success(), "{sub}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("Exit status: 0 "), "{sub} --help:\n{text}");
        assert!(text.contains(" 2 error"), "{sub} --help:\n{text}");
    }
}

#[test]
fn frr_takes_table_mode_not_mode() {
    let out = ribbridge(&["frr", "--frr-dir", "/x", "--mode", "table-direct"]);
    assert_eq!(out.status.code(), Some(2));
    let out = ribbridge(&["frr", "--frr-dir", "/x", "--table-mode", "kernel"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("use table-direct"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn completions_and_man_page_come_from_the_clap_model() {
    let out = ribbridge(&["completions", "bash"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("_ribbridge()") && text.contains("--table-mode"),
        "{text}"
    );
    let out = ribbridge(&["man"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with(".ie") || text.contains(".TH ribbridge"),
        "{text}"
    );
    assert!(
        text.contains(".TH ribbridge-status"),
        "the subcommands' pages"
    );
}

#[test]
fn drain_and_undrain_help_name_their_exit_codes() {
    for sub in ["drain", "undrain"] {
        let out = ribbridge(&[sub, "--help"]);
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        for word in [
            "Exit status: 0",
            "1 not done within --timeout",
            "2 error",
            "--confirm",
            "--endpoint",
            "--frr-dir",
            "--drain-state",
            "/run/ribbridge/drain",
        ] {
            assert!(text.contains(word), "{sub} --help lacks '{word}':\n{text}");
        }
    }
}

#[test]
fn drain_flag_errors_are_usage_errors() {
    for (args, needle) in [
        (
            &["drain", "--timeout", "soon"][..],
            "'soon' is not a duration",
        ),
        (&["drain", "--timeout", "0s"][..], "more than 0"),
        (&["undrain", "--endpoint", "localhost"][..], "no port"),
        (
            &["drain", "--confirm", "https://10.0.0.1:7585/status"][..],
            "https is not served",
        ),
        (
            &["drain", "--confirm", "http://10.0.0.1:7585/metrics"][..],
            "a path ('/metrics')",
        ),
        (&["undrain", "--table", "x"][..], "--table"),
        (&["drain", "--no-such-flag"][..], "--no-such-flag"),
    ] {
        let out = ribbridge(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn drain_without_frr_is_an_error_naming_the_socket() {
    let dir = std::env::temp_dir().join(format!("ribbridge-no-frr-{}", std::process::id()));
    for sub in ["drain", "undrain"] {
        let out = ribbridge(&[
            sub,
            "--frr-dir",
            dir.to_str().expect("utf-8"),
            "--timeout",
            "1s",
        ]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains("bgpd.vty"), "{}", stderr(&out));
    }
}

#[test]
fn bmp_flags_need_the_bmp_vantage_and_the_station_needs_its_address() {
    let cases: [(&[&str], &str); 4] = [
        (
            &["run", "--bmp-listen", "127.0.0.1:11019"],
            "--bmp-listen: only the BMP station reads it, and the vantage is node: add --vantage bmp",
        ),
        (
            &[
                "run",
                "--vantage",
                "router",
                "--table",
                "254",
                "--vip",
                "192.0.2.10/32",
                "--bmp-stale-secs",
                "60",
            ],
            "--bmp-stale-secs: only the BMP station reads it, and the vantage is router",
        ),
        (
            &["run", "--vantage", "bmp", "--vip", "192.0.2.10/32"],
            "vantage bmp: the BMP station needs the address routers connect to: give --bmp-listen ADDR:PORT",
        ),
        (
            &["run", "--vantage", "bmp", "--bmp-listen", "127.0.0.1:11019"],
            "vantage bmp: the bmp vantage needs the VIPs to count: give --vip PREFIX",
        ),
    ];
    for (args, want) in cases {
        let out = ribbridge(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let e = stderr(&out);
        assert!(e.contains(want), "{args:?}: {e}");
    }
    let out = ribbridge(&["run", "--vantage", "station"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("bmp (a BMP station"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_bmp_station_in_use_names_its_address() {
    // Something already listens on the station's port: the start fails
    // with the address and what to do, before anything runs.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = taken.local_addr().expect("addr").to_string();
    let out = ribbridge(&[
        "run",
        "--listen",
        "127.0.0.1:0",
        "--vantage",
        "bmp",
        "--vip",
        "192.0.2.10/32",
        "--bmp-listen",
        &addr,
        "--bmp-allow",
        "127.0.0.0/8",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let e = stderr(&out);
    assert!(
        e.contains(&format!(
            "--bmp-listen {addr}: cannot listen for BMP sessions"
        )) && e.contains("choose another address with --bmp-listen"),
        "{e}"
    );
}

#[test]
fn no_intent_is_for_drain_only() {
    let out = ribbridge(&["undrain", "--no-intent", "--frr-dir", "/nonexistent"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--no-intent is for drain only"), "{err}");
}

/// The help entry of `flag` (from its line to the next flag's), its
/// whitespace folded: what `--help` says of it, however clap wraps it.
fn help_entry(help: &str, flag: &str) -> String {
    let is_flag_line = |l: &str, f: &str| l.split_whitespace().next() == Some(f);
    let mut lines = help.lines().skip_while(|l| !is_flag_line(l, flag));
    let first = lines
        .next()
        .unwrap_or_else(|| panic!("no {flag} in the help:\n{help}"));
    std::iter::once(first)
        .chain(lines.take_while(|l| {
            !l.split_whitespace()
                .next()
                .is_some_and(|w| w.starts_with("--") && w.len() > 2 && !w.contains('`'))
        }))
        .flat_map(str::split_whitespace)
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn run_help_shows_the_defaults_the_daemon_runs_with() {
    let d = ribbridge::config::Settings::default();
    let n = ribbridge::config::NodeRole::default();
    let st = ribbridge::config::StationRole::default();
    // The daemon's grace is the core's: one value, written once.
    assert_eq!(n.grace_ms, ribbridge::reconcile::Config::default().grace_ms);
    let out = ribbridge(&["run", "--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for (flag, default) in [
        ("--grace-ms", n.grace_ms.to_string()),
        ("--bgp-grace-ms", n.bgp_grace_ms.to_string()),
        ("--max-attempts", n.max_attempts.to_string()),
        ("--bgp-poll-secs", n.bgp_poll_secs.to_string()),
        ("--resync-secs", d.resync_secs.to_string()),
        ("--require-address", n.require_address.to_string()),
        ("--frr-dir", n.frr_dir.display().to_string()),
        ("--table", n.table.to_string()),
        ("--listen", d.listen.to_string()),
        ("--mode", n.mode.to_string()),
        ("--writer-silent-ticks", n.writer_silent_ticks.to_string()),
        ("--flap-pairs", n.flap_pairs.to_string()),
        ("--flap-window-secs", n.flap_window_secs.to_string()),
        ("--heal-rate", n.heal_rate.to_string()),
        ("--heal-burst", n.heal_burst.to_string()),
        ("--forget-after-secs", n.forget_after_secs.to_string()),
        ("--bmp-stale-secs", st.stale_secs.to_string()),
        ("--bmp-sync-secs", st.limits.sync_secs.to_string()),
        ("--bmp-max-routers", st.limits.max_routers.to_string()),
        ("--bmp-max-peers", st.limits.max_peers.to_string()),
        ("--bmp-max-paths", st.limits.max_paths.to_string()),
        (
            "--bmp-sessions-per-address",
            st.limits.sessions_per_address.to_string(),
        ),
        ("--bmp-max-sessions", st.limits.max_sessions.to_string()),
        ("--http-max-connections", d.http_max_connections.to_string()),
        ("--max-detailed-vips", n.max_detailed_vips.to_string()),
        ("--drain-state", n.drain_state.display().to_string()),
    ] {
        let entry = help_entry(&help, flag);
        assert!(
            entry.contains(&format!("[default: {default}]")),
            "run --help's {flag} does not show the default {default}: {entry}"
        );
    }
}

#[test]
fn status_and_drain_help_show_the_defaults_they_run_with() {
    let n = ribbridge::config::NodeRole::default();
    let out = ribbridge(&["status", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    for (flag, default) in [
        ("--require-address", n.require_address.to_string()),
        ("--frr-dir", n.frr_dir.display().to_string()),
        ("--table", n.table.to_string()),
    ] {
        let entry = help_entry(&help, flag);
        assert!(
            entry.contains(&format!("[default: {default}]")),
            "status --help's {flag}: {entry}"
        );
    }
    let out = ribbridge(&["drain", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help_entry(&help, "--frr-dir").contains(&format!(
        "[default: {}]",
        ribbridge::config::DEFAULT_FRR_DIR
    )));
    assert!(
        help_entry(&help, "--table")
            .contains(&format!("[default: {}]", ribbridge::model::VIP_TABLE))
    );
}

#[test]
fn check_config_prints_the_resolved_settings_or_names_the_line_and_exits_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let good = dir.path().join("good.toml");
    std::fs::write(
        &good,
        "vips = [\"192.0.2.10/32\"]\n[[vip]]\nprefix = \"192.0.2.10/32\"\nhealth = \"http://127.0.0.1:8080/\"\nwithdraw = true\n",
    )
    .expect("write");
    let out = ribbridge(&[
        "check-config",
        "--config",
        good.to_str().expect("utf-8"),
        "--mode",
        "observe",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    // The flag over the file, the file's probe table, the defaults.
    for line in [
        "mode = \"observe\"",
        "withdraw = true",
        "grace_ms = 100",
        "tables = [198]",
    ] {
        assert!(text.lines().any(|l| l == line), "no {line:?} in\n{text}");
    }
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "mode = \"observe\"\ngrace_msx = 5\n").expect("write");
    let out = ribbridge(&["check-config", "--config", bad.to_str().expect("utf-8")]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("{}:2: unknown field `grace_msx`", bad.display())),
        "{err}"
    );
}

/// Every setting is a flag, the probe tables too: `withdraw = true` reaches
/// the settings of a daemon started with the OpenShift static pod's own
/// arguments (the static pod mounts no configuration file), as DEPLOY.md
/// says to add it.
#[test]
fn withdraw_reaches_a_daemon_started_as_the_static_pod_starts_it() {
    let manifest = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("deploy/openshift/0005-ribbridge.yaml"),
    )
    .expect("the static pod");
    // The container's args: the list under `args:`, one `- ARG` a line.
    let mut lines = manifest.lines().skip_while(|l| l.trim() != "args:").skip(1);
    let mut args: Vec<String> = Vec::new();
    for l in lines.by_ref() {
        let Some(arg) = l.trim().strip_prefix("- ") else {
            break;
        };
        args.push(arg.to_string());
    }
    assert_eq!(args.first().map(String::as_str), Some("run"), "{args:?}");
    let mut cmd: Vec<&str> = vec!["check-config"];
    cmd.extend(args[1..].iter().map(String::as_str));
    cmd.extend([
        "--health",
        "192.0.2.10/32=https://localhost:6443/readyz",
        "--probe",
        "192.0.2.10/32:withdraw=true,insecure=true,fall=2",
    ]);
    let out = ribbridge(&cmd);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table: Vec<&str> = text.lines().skip_while(|l| *l != "[[vip]]").collect();
    for line in [
        "prefix = \"192.0.2.10/32\"",
        "withdraw = true",
        "fall = 2",
        "insecure = true",
    ] {
        assert!(
            table.contains(&line),
            "no {line:?} in the [[vip]] table of\n{text}"
        );
    }
    assert!(text.lines().any(|l| l == "mode = \"observe\""), "{text}");
}
