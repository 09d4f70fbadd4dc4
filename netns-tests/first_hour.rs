//! README's "Run it on one node", followed word for word as a new user
//! would, in a lab node: rb-node1 (FRR 10.7, `redistribute table-direct
//! 198`, one BGP peer: the router) stands in for the node, its VIP written
//! as kube-vip writes it (the address, then the route in table 198).
//!
//! Every line of the section's `sh` blocks runs in that namespace, in
//! order, through `sh -c`: `ribbridge` on the PATH (this build's binary),
//! FRR's sockets at `/var/run/frr` (the node's socket directory bound there
//! in a mount namespace of the command's own), no flag the README does not
//! show. A line ending in `&` runs in the background and the next waits for
//! the log line the section says it logs; every other line must exit 0.
//! `check-config` must print what the section says it prints, and the last
//! line's output must be the table the section shows, the FRR release's
//! patch level aside. ~7 s, most of it the lab.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::support::daemon::Daemon;
use crate::support::{Lab, RouteWatch, lab, repo};

const VIP: &str = "192.0.2.10/32";
const NODE: &str = "rb-node1";
/// What the section says `run` logs once it is ready.
const READY: &str = "readiness changed ready=true";
/// How long the daemon may take to log it (an event awaited, not timed).
const LIMIT: Duration = Duration::from_secs(20);

/// The section's text: from its heading to the next one.
fn section(readme: &str) -> &str {
    let from = readme
        .find("\n## Run it on one node\n")
        .expect("README has no \"## Run it on one node\" section");
    let body = &readme[from + 1..];
    let end = body[3..].find("\n## ").map_or(body.len(), |i| i + 3);
    &body[..end]
}

/// The lines of the fenced blocks of `lang` in `text`, block by block,
/// their indentation removed.
fn blocks(text: &str, lang: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut open: Option<Vec<String>> = None;
    for l in text.lines() {
        let t = l.trim();
        match (&mut open, t.strip_prefix("```")) {
            (None, Some(tag)) if tag == lang => open = Some(Vec::new()),
            (Some(_), Some("")) => out.extend(open.take()),
            (Some(b), _) => b.push(t.to_string()),
            (None, _) => {}
        }
    }
    out
}

/// `line` as the README's reader runs it on the node: a shell in rb-node1,
/// this build's `ribbridge` first on the PATH, FRR's sockets at
/// /var/run/frr (a tmpfs /run of the command's own, the node's socket
/// directory bound at /run/frr), its own process group.
fn on_the_node(line: &str, bin: &Path, sockdir: &Path) -> Command {
    let mut c = Command::new("ip");
    c.args(["netns", "exec", NODE, "unshare", "--mount", "sh", "-c"])
        .arg(
            "mount -t tmpfs tmpfs /run && mkdir /run/frr && \
             mount --bind \"$SOCKDIR\" /run/frr && exec sh -c \"$LINE\"",
        )
        .env(
            "PATH",
            format!("{}:/usr/sbin:/usr/bin:/sbin:/bin", bin.display()),
        )
        .env("SOCKDIR", sockdir)
        .env("LINE", line)
        .env_remove("RUST_LOG")
        .process_group(0);
    c
}

/// A background line's processes, stopped with their group at the end
/// (the shell's child outlives a kill of the shell alone).
struct Background(Daemon);

impl Drop for Background {
    fn drop(&mut self) {
        let _ = nix::sys::signal::killpg(self.0.pid(), nix::sys::signal::Signal::SIGTERM);
    }
}

/// The release's patch level is the lab's, not the README's.
fn without_patch_level(table: &str) -> String {
    table
        .lines()
        .map(|l| match l.strip_prefix("FRR ") {
            Some(rest) => {
                let (release, tail) = rest.split_once(' ').unwrap_or((rest, ""));
                let minor: Vec<&str> = release.split('.').take(2).collect();
                format!("FRR {}.x {tail}", minor.join("."))
            }
            None => l.trim_end().to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread")]
async fn the_readme_s_first_hour_ends_with_the_status_table_frr_10_7() {
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    let text = section(&readme);
    let lines: Vec<String> = blocks(text, "sh")
        .into_iter()
        .flatten()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert!(
        lines.len() >= 3,
        "the section's sh blocks hold {lines:?}: no commands to follow"
    );
    assert!(
        text.contains(&format!("`{READY}`")),
        "the section does not say the log line its reader waits for ({READY:?})"
    );
    let shown = blocks(text, "text")
        .pop()
        .expect("the section shows no ```text block: what should the reader see?")
        .join("\n");

    let lab_guard = Lab::up("10.7", 1, &[VIP]);
    let sockdir = lab_guard.sockdir(NODE);
    assert!(
        !sockdir.starts_with("/run"),
        "{} is under /run, which the commands' own tmpfs hides",
        sockdir.display()
    );
    let mut router = RouteWatch::open("rb-router");
    lab(&["vip-add", "node1", VIP, "--with-address"]);
    router
        .wait_nexthops("192.0.2.10".parse().expect("addr"), 32, 1, LIMIT)
        .await
        .expect("the router has node1's path");

    let bin = tempfile::tempdir().expect("tempdir");
    std::os::unix::fs::symlink(
        env!("CARGO_BIN_EXE_ribbridge"),
        bin.path().join("ribbridge"),
    )
    .expect("symlink ribbridge");

    let mut background = Vec::new();
    let mut last = String::new();
    for line in &lines {
        if let Some(cmd) = line.strip_suffix('&') {
            // The lab's daemon fixture reads its log: no record, no flags
            // of the fixture's own.
            let command = on_the_node(cmd.trim(), bin.path(), &sockdir).into();
            let mut d =
                Daemon::spawn_command(NODE, command, bin.path().join("no-record"), 7585, &[]);
            let l = d.wait_log(READY, LIMIT).await;
            eprintln!("{line}: {l}");
            background.push(Background(d));
            continue;
        }
        let out = on_the_node(line, bin.path(), &sockdir)
            .output()
            .unwrap_or_else(|e| panic!("{line}: {e}"));
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "`{line}` exited {}:\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        eprintln!("$ {line}\n{stdout}");
        if line.starts_with("ribbridge check-config") {
            for said in [
                "frr_dir = \"/var/run/frr\"",
                "tables = [198]",
                "mode = \"observe\"",
                "listen = \"127.0.0.1:7585\"",
            ] {
                assert!(
                    stdout.lines().any(|l| l == said),
                    "`{line}` does not print {said:?}, as the section says:\n{stdout}"
                );
            }
        }
        last = stdout;
    }
    assert_eq!(
        without_patch_level(last.trim_end()),
        without_patch_level(&shown),
        "the last command's output is not the table the section shows"
    );
    drop(background);
}
