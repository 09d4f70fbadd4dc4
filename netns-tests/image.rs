//! The container image (deploy/Containerfile, built offline by
//! scripts/build-image.sh) run in the lab beside rb-node1's FRR 10.7 the
//! way docs/DEPLOY.md deploys it: podman joins the node's network
//! namespace (hostNetwork), FRR's socket directory is mounted read-only at
//! /var/run/frr, the root filesystem is read-only, every capability is
//! dropped, and the process runs as FRR's user with `frrvty` as a
//! supplementary group (the ids read from the FRR root, as the lab's FRR
//! runs them).
//!
//! - observe, no capability: `ribbridge status` run inside the container
//!   says `advertised`;
//! - repair without CAP_NET_ADMIN: 10.7's `kernel_only` drift (route then
//!   address in one netlink batch, FRRouting/frr#22654) is not healed: the
//!   kernel refuses the write, the daemon logs and reports the error, the
//!   kernel route and the router's single path stay as they were;
//! - repair with `--cap-add=NET_ADMIN` only: healed from inside the
//!   container, the router back to 2 paths.
//!
//! `RIBBRIDGE_IMAGE=name:tag` uses that image instead of building one.
//! podman runs with runc (crun refuses hybrid cgroup hosts) and explicit
//! rlimits (podman's defaults exceed what some sandboxes allow).

use std::net::IpAddr;
use std::process::Command as StdCommand;
use std::time::{Duration, Instant};

use ribbridge::reconcile::Class;
use tokio::process::Command;

use crate::privilege::frr_id;
use crate::support::daemon::Daemon;
use crate::support::{Lab, RouteWatch, lab, repo};

const FRR: &str = "10.7";
const VIP: &str = "192.0.2.10/32";
const NODE: &str = "rb-node1";
const NAME: &str = "rb-image-test";
const PORT: u16 = 7585;
fn vip_addr() -> IpAddr {
    "192.0.2.10".parse().expect("address")
}

fn podman() -> StdCommand {
    let mut c = StdCommand::new("podman");
    c.args(["--runtime", "runc"]);
    c
}

/// The image to run: `RIBBRIDGE_IMAGE`, else what scripts/build-image.sh
/// builds (the release binary is rebuilt only if the sources changed).
pub(crate) fn image() -> String {
    if let Ok(tag) = std::env::var("RIBBRIDGE_IMAGE") {
        return tag;
    }
    built("build-image.sh", &[])
}

/// The tag `scripts/SCRIPT ARGS` prints once it built (or found current)
/// its image: build-image.sh, build-pause-image.sh.
pub(crate) fn built(script: &str, args: &[&str]) -> String {
    let t = Instant::now();
    let out = StdCommand::new(repo().join("scripts").join(script))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run scripts/{script}: {e}"));
    assert!(
        out.status.success(),
        "scripts/{script} {args:?} failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let tag = String::from_utf8_lossy(&out.stdout).trim().to_string();
    eprintln!("image {tag} built (or reused) in {:?}", t.elapsed());
    tag
}

/// The image's size in bytes, as podman counts it.
fn image_size(tag: &str) -> u64 {
    let out = podman()
        .args(["image", "inspect", "--format", "{{.Size}}", tag])
        .output()
        .expect("podman image inspect");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("image size of {tag}: {e}"))
}

/// Removes the container when dropped (also when a test panics: the
/// podman client killed on drop would leave it running).
struct Container;

impl Container {
    fn remove() {
        let _ = podman()
            .args(["rm", "--force", "--ignore", "--time", "0", NAME])
            .output();
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        Container::remove();
    }
}

/// `podman run` of `image` in rb-node1's namespace as FRR's user, every
/// capability dropped but `caps`, with `args` after `run`'s own flags.
fn start(lab_guard: &Lab, image: &str, caps: &[&str], args: &[&str]) -> (Daemon, Container) {
    Container::remove();
    let sockdir = lab_guard.sockdir(NODE);
    let (uid, gid) = (frr_id(FRR, "passwd", "frr"), frr_id(FRR, "group", "frr"));
    let vty = frr_id(FRR, "group", "frrvty");
    // The recording is the one writable path: a host directory, so the
    // root filesystem stays read-only.
    let dir = tempfile::tempdir().expect("tempdir").keep();
    std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o777))
        .expect("chmod record dir");
    let mut cmd = Command::new("podman");
    cmd.args(["--runtime", "runc", "run", "--rm", "--name", NAME])
        .arg(format!("--network=ns:/run/netns/{NODE}"))
        .args([
            "--ulimit",
            "nofile=1024:1024",
            "--ulimit",
            "nproc=1024:1024",
        ])
        .arg(format!("--user={uid}:{gid}"))
        .arg(format!("--group-add={vty}"))
        .args(["--cap-drop=all", "--security-opt=no-new-privileges"])
        .args(caps.iter().map(|c| format!("--cap-add={c}")))
        .args(["--read-only", "--read-only-tmpfs=false"])
        .args(["-e", "RUST_LOG=info"])
        .arg(format!("--volume={}:/var/run/frr:ro", sockdir.display()))
        .arg(format!("--volume={}:/record", dir.display()))
        .arg(image)
        .args(["run", "--frr-dir", "/var/run/frr"])
        .args(["--listen", &format!("127.0.0.1:{PORT}")])
        .args(["--record", "/record/events.jsonl"])
        .args(args);
    let d = Daemon::spawn_command(NODE, cmd, dir.join("events.jsonl"), PORT, args);
    (d, Container)
}

/// The host pid of the daemon inside the container.
fn container_pid() -> String {
    let out = podman()
        .args(["inspect", "--format", "{{.State.Pid}}", NAME])
        .output()
        .expect("podman inspect");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The credentials of the daemon inside the container.
fn creds() -> crate::support::Creds {
    super::support::creds_full(&container_pid())
}

/// FRR's user holding `caps` (hex) in the permitted, effective and
/// bounding sets, nothing inheritable or ambient (podman fills both with
/// an added capability; ribbridge empties them), `no_new_privs` set.
fn expect_creds(caps: &str) {
    let c = creds();
    eprintln!("podman: {c}");
    let frr_uid = frr_id(FRR, "passwd", "frr").to_string();
    let zero = "0000000000000000";
    assert_eq!(
        (
            c.uid.as_str(),
            c.prm.as_str(),
            c.eff.as_str(),
            c.bnd.as_str(),
            c.inh.as_str(),
            c.amb.as_str(),
            c.no_new_privs.as_str()
        ),
        (frr_uid.as_str(), caps, caps, caps, zero, zero, "1"),
        "{c}"
    );
}

/// `ribbridge status` run inside the container: (exit code, output).
fn status_inside() -> (i32, String) {
    let out = podman()
        .args(["exec", NAME, "/usr/bin/ribbridge", "status", "--endpoint"])
        .arg(format!("127.0.0.1:{PORT}"))
        .output()
        .expect("podman exec");
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// The node's table-198 route to the VIP, as `ip route` prints it.
fn node_route() -> String {
    lab(&["exec", NODE, "ip", "route", "show", "table", "198", VIP])
        .trim()
        .to_string()
}

#[tokio::test]
async fn image_beside_frr_10_7_observe_then_repair_with_and_without_net_admin() {
    let image = image();
    let size = image_size(&image);
    eprintln!(
        "image {image}: {size} bytes ({:.1} MiB)",
        size as f64 / 1_048_576.0
    );
    let lab_guard = Lab::up(FRR, 2, &[VIP]);
    let mut router = RouteWatch::open("rb-router");

    // 1. Observe, no capability at all: advertised, said from inside.
    crate::support::vip_with_address_on_node1(&mut router, VIP).await;
    let t = Instant::now();
    let (mut d, container) = start(&lab_guard, &image, &[], &["--mode", "observe"]);
    d.wait_log("VIP consistent && to=advertised", Duration::from_secs(30))
        .await;
    eprintln!(
        "container (observe) saw the VIP advertised {:?} after podman run",
        t.elapsed()
    );
    expect_creds("0000000000000000");
    // The image's one malloc arena (deploy/Containerfile) reaches the
    // daemon.
    let environ = std::fs::read(format!("/proc/{}/environ", container_pid())).expect("environ");
    assert!(
        environ
            .split(|b| *b == 0)
            .any(|v| v == b"MALLOC_ARENA_MAX=1"),
        "the daemon runs without the image's MALLOC_ARENA_MAX=1: {}",
        String::from_utf8_lossy(&environ)
    );
    let (code, text) = status_inside();
    assert!(
        code == 0
            && text
                .lines()
                .any(|l| l.starts_with(VIP) && l.contains("advertised")),
        "status inside the container, exit {code}:\n{text}"
    );
    eprintln!("status inside the container (observe, exit {code}):\n{text}");
    d.stop().await;
    drop(container);

    // 2. Repair without CAP_NET_ADMIN: the kernel write is refused,
    // reported, and nothing else changes.
    lab(&["vip-del", "node1", VIP, "--with-address"]);
    router
        .wait_nexthops(vip_addr(), 32, 1, Duration::from_secs(15))
        .await
        .expect("node2's path only");
    let (mut d, container) = start(&lab_guard, &image, &[], &["--mode", "repair"]);
    d.wait_log("zebra: subscribed", Duration::from_secs(30))
        .await;
    let line = crate::support::kernel_only_unhealed(&mut d).await;
    // The refused heal may be the fast one, before the drift is reported.
    d.seen_or_wait("VIP drift && to=kernel_only", Duration::from_secs(10))
        .await;
    let mark = d.drain().len();
    let before = node_route();
    assert!(
        line.contains("Operation not permitted") || line.contains("EPERM"),
        "{line}"
    );
    eprintln!("without NET_ADMIN: {line}");
    let (doc, code) = d.status().await;
    let v = crate::support::vip_of(&doc, VIP);
    assert_eq!((v.state.class(), code), (Some(Class::KernelOnly), 1));
    let result = v.heal.last_result.clone().unwrap_or_default();
    assert!(
        result.starts_with("error:") || result == "gave_up",
        "heal result {result:?}"
    );
    let (code, text) = status_inside();
    assert!(
        code == 1
            && text
                .lines()
                .any(|l| l.starts_with(VIP) && l.contains("kernel_only") && l.contains("error")),
        "status inside the container, exit {code}:\n{text}"
    );
    eprintln!("status inside the container (repair without NET_ADMIN, exit {code}):\n{text}");
    assert_eq!(node_route(), before, "the kernel route changed");
    assert_eq!(
        router.nexthops(vip_addr(), 32).await,
        1,
        "the router's paths changed"
    );
    let (_, _, log) = d.stop().await;
    assert!(
        !log[mark..].iter().any(|l| l.contains("VIP consistent")),
        "a heal without NET_ADMIN succeeded? {log:?}"
    );
    drop(container);

    // 3. Repair with CAP_NET_ADMIN and nothing else: healed.
    let t = Instant::now();
    let (mut d, container) = start(&lab_guard, &image, &["NET_ADMIN"], &["--mode", "repair"]);
    if let Err(e) = router
        .wait_nexthops(vip_addr(), 32, 2, Duration::from_secs(20))
        .await
    {
        panic!("not healed: {e}; log:\n{}", d.drain().join("\n"));
    }
    eprintln!(
        "with NET_ADMIN only: healed from inside the container, router back to 2 paths {:?} after podman run",
        t.elapsed()
    );
    expect_creds("0000000000001000");
    d.wait_log("VIP consistent && to=advertised", Duration::from_secs(10))
        .await;
    let m = d.metrics().await;
    assert!(
        m.contains("ribbridge_heal_actions_total{"),
        "heal not counted:\n{m}"
    );
    d.stop().await;
    drop(container);
    drop(lab_guard);
}
