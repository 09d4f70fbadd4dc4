//! `ribbridge render` against real FRR: every golden file passes FRR's own
//! parser on the releases it is for, and, per release, a rendered config
//! restarts the lab's node1 and its sessions reach Established with the
//! router, which then holds node1's VIP with the mapping's communities.

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::support::{Lab, RouteWatch, lab, repo, require_root};

const CACHE: &str = "/var/cache/ribbridge";
const V4: &str = "192.0.2.10/32";
const V6: &str = "2001:db8::10/128";
// Sessions after a restart and the first advertisement: a deadline to fail
// rather than hang, not a measured bound (the time is printed).
const SETTLE: Duration = Duration::from_secs(60);

/// The chroot of a 10.x release, None for the host's 8.4.
fn frr_root(frr: &str) -> Option<PathBuf> {
    (frr != "8.4").then(|| Path::new(CACHE).join(format!("frr-{frr}")))
}

fn ribbridge(args: &[&str], frr: &str) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ribbridge"));
    cmd.arg("render")
        .args(args)
        .env_remove("RUNTIMECFG_HOSTNAME_PATH")
        .env_remove("RIBBRIDGE_FRR_ROOT")
        .current_dir(repo().join("tests/render"));
    if let Some(r) = frr_root(frr) {
        assert!(
            r.join("usr/bin/vtysh").exists(),
            "FRR {frr} is not installed under {}; run scripts/install-frr.sh {frr}",
            r.display()
        );
        cmd.env("RIBBRIDGE_FRR_ROOT", r);
    }
    cmd.output().expect("run ribbridge")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Render the file `template` verbatim (a template without `{{` renders as
/// itself) for `frr`'s release, with `extra` flags.
fn verbatim(template: &str, frr: &str, extra: &[&str]) -> Output {
    let release = if frr == "8.4" { "8.4" } else { "10" };
    let mut args = vec![
        "--peers",
        "defaults-only.json",
        "--hostname",
        "m",
        "--router-id",
        "10.0.0.1",
        "--frr-release",
        release,
        "--template",
        template,
    ];
    args.extend_from_slice(extra);
    ribbridge(&args, frr)
}

/// `--check` a golden file verbatim.
fn check_golden(name: &str, frr: &str) -> Output {
    verbatim(name, frr, &["--check"])
}

#[test]
fn golden_files_pass_frrs_parser() {
    require_root();
    let mut checked = 0;
    for entry in std::fs::read_dir(repo().join("tests/render")).expect("tests/render") {
        let name = entry
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        if !name.ends_with(".conf") {
            continue;
        }
        let releases: &[&str] = if name.ends_with("-8.4.conf") {
            &["8.4"]
        } else {
            &["10.3", "10.7"]
        };
        for frr in releases {
            let o = check_golden(&name, frr);
            assert_eq!(
                o.status.code(),
                Some(0),
                "FRR {frr} rejects {name}:\n{}",
                stderr(&o)
            );
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} golden files checked");
    eprintln!("{checked} golden file checks passed");
}

#[test]
fn check_rejects_a_config_for_another_release() {
    require_root();
    // An FRR 10 config through 8.4's parser: table-direct is unknown there.
    let o = check_golden("defaults-only.conf", "8.4");
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    // After the notes (peers, router id), the parser's verdict.
    assert!(
        err.contains(
            "\nribbridge render: --check: FRR's parser (`vtysh --dryrun`, exit status: 2) \
             rejected the rendered configuration; nothing was written:\n\
             line 13: % Unknown command[28]:   redistribute table-direct 198 route-map KUBE-VIP-ROUTES-V4\n"
        ),
        "{err}"
    );
    // And 8.4's import-table is still valid syntax on 10.x (it is not the
    // parser that keeps the two apart, only the template).
    let o = check_golden("defaults-only-8.4.conf", "10.7");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

fn prefix(p: &str) -> (IpAddr, u8) {
    let (a, l) = p.split_once('/').expect("prefix");
    (a.parse().expect("addr"), l.parse().expect("len"))
}

fn json(ns: &str, cmd: &str) -> serde_json::Value {
    let text = lab(&["vtysh", ns, cmd]);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{cmd} in {ns}: {e}:\n{text}"))
}

async fn rendered_config_peers_with_the_router(frr: &'static str) {
    let v10 = frr != "8.4";
    let vips: &[&str] = if v10 { &[V4, V6] } else { &[V4] };
    let lab_guard = Lab::up(frr, 1, vips);
    let tmp = tempfile::tempdir().expect("tempdir");
    // node1's own peers come from hostOverrides; the default peer does not
    // exist, so a session proves the override was used.
    let mapping = format!(
        r#"{{"localASN": 64512,
  "defaultPeers": [{{"peerAddress": "203.0.113.1", "peerASN": 64999}}],
  "hostOverrides": {{"rb-node1": [
    {{"peerAddress": "198.18.1.1", "peerASN": 64513, "bfdEnabled": "true",
      "ebgpMultiHop": "true", "holdTime": "9", "keepaliveTime": "3"}},
    {{"peerAddress": "fdbb:0:0:1::1", "peerASN": 64513}}]}},
  "communities": ["64512:100", "64512:1:2"],
  "apiVIPs": ["192.0.2.10"], "ingressVIPs": [{}]}}"#,
        if v10 { r#""2001:db8::10""# } else { "" }
    );
    let peers = tmp.path().join("peers.json");
    std::fs::write(&peers, mapping).expect("write mapping");
    let out = tmp.path().join("frr.conf");
    let args = [
        "--peers",
        peers.to_str().expect("utf-8"),
        "--hostname",
        "rb-node1.lab.example",
        "--router-id",
        "198.18.1.2",
        "--frr-release",
        if v10 { "10" } else { "8.4" },
        "--out",
        out.to_str().expect("utf-8"),
        "--check",
    ];
    let o = ribbridge(&args, frr);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = ribbridge(&args, frr);
    assert_eq!(
        o.status.code(),
        Some(3),
        "a second render must be unchanged: {}",
        stderr(&o)
    );
    let conf = std::fs::read_to_string(&out).expect("rendered file");

    let mut router = RouteWatch::open("rb-router");
    let restart = Instant::now();
    lab(&["node-config", "node1", out.to_str().expect("utf-8")]);
    for v in vips {
        lab(&["vip-add", "node1", v]);
    }
    for v in vips {
        let (a, l) = prefix(v);
        router
            .wait_nexthops(a, l, 1, SETTLE)
            .await
            .unwrap_or_else(|e| panic!("FRR {frr}: {e}\nrendered:\n{conf}"));
        let t = restart.elapsed();
        eprintln!("FRR {frr}: router has node1's {v} {t:?} after node1's restart began");
    }

    // The route arrived, so the sessions that carry it are Established.
    let summary = json("rb-router", "show bgp summary json");
    let state = |af: &str, peer: &str| {
        summary[af]["peers"][peer]["state"]
            .as_str()
            .map(str::to_owned)
    };
    assert_eq!(
        state("ipv4Unicast", "198.18.1.2").as_deref(),
        Some("Established"),
        "{summary:#}"
    );
    let v6 = state("ipv6Unicast", "fdbb:0:0:1::2");
    if v10 {
        assert_eq!(v6.as_deref(), Some("Established"), "{summary:#}");
    } else {
        // 8.4 carries no IPv6 VIP: no route event says when this session
        // is up, so its state is reported, not awaited.
        eprintln!("FRR 8.4: IPv6 session state {v6:?}");
    }
    // Communities ride on what is sent.
    let path = json("rb-router", "show bgp ipv4 unicast 192.0.2.10/32 json");
    assert_eq!(
        path["paths"][0]["community"]["string"], "64512:100",
        "{path:#}"
    );
    assert_eq!(
        path["paths"][0]["largeCommunity"]["string"], "64512:1:2",
        "{path:#}"
    );
    // bgpd took every neighbor and redistribute line as written.
    let running = lab(&["vtysh", "rb-node1", "show running-config"]);
    let applied = |l: &&str| {
        !l.trim_start().starts_with('!')
            && (l.starts_with(" neighbor")
                || l.contains("redistribute")
                || l.contains("import-table"))
    };
    for line in conf.lines().filter(applied) {
        assert!(
            // 8.4 prints the default TTL: `ebgp-multihop 255`.
            running
                .lines()
                .any(|r| r == line || r.strip_suffix(" 255") == Some(line)),
            "FRR {frr} dropped {line:?}; running config:\n{running}"
        );
    }
    drop(lab_guard);
}

#[tokio::test]
async fn rendered_config_peers_with_the_router_frr_8_4() {
    rendered_config_peers_with_the_router("8.4").await;
}

#[tokio::test]
async fn rendered_config_peers_with_the_router_frr_10_3() {
    rendered_config_peers_with_the_router("10.3").await;
}

#[tokio::test]
async fn rendered_config_peers_with_the_router_frr_10_7() {
    rendered_config_peers_with_the_router("10.7").await;
}

#[test]
fn replacing_keeps_owner_and_group() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    require_root();
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("frr.conf");
    std::fs::write(&out, "old\n").expect("write");
    // FRR's daemons read frr.conf through its group: a replacement must
    // keep the owner and group it had (nobody:nogroup here, as root).
    std::os::unix::fs::chown(&out, Some(65534), Some(65534)).expect("chown");
    let o = verbatim(
        "defaults-only.conf",
        "8.4",
        &["--out", out.to_str().expect("utf-8")],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let m = std::fs::metadata(&out).expect("metadata");
    assert_eq!(
        (m.uid(), m.gid(), m.permissions().mode() & 0o777),
        (65534, 65534, 0o640)
    );
}
