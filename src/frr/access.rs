//! Why one of FRR's sockets refused us, said so that the fix is obvious:
//! zebra makes zserv.api `srwx------` for its own user, and the vty sockets
//! `srwxrwx---` for its user and the `frrvty` group, so a ribbridge under
//! another uid is refused with a bare `Permission denied`.
//!
//! Contract: [`refusal`] turns a refused connect into the socket's owner,
//! group and mode, this process's uid, gid and groups, and the setting to
//! change for each launcher; any other error gets the empty string.

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The explanation to append to a refused connect to `path` (starting
/// with "; "), or "" when `err` is not a refusal.
pub fn refusal(path: &Path, err: &io::Error) -> String {
    if err.kind() != io::ErrorKind::PermissionDenied {
        return String::new();
    }
    let me = format!(
        "uid {} gid {} groups {:?}",
        nix::unistd::geteuid(),
        nix::unistd::getegid(),
        nix::unistd::getgroups()
            .map(|g| g.into_iter().map(|g| g.as_raw()).collect::<Vec<_>>())
            .unwrap_or_default()
    );
    let owner = match std::fs::metadata(path) {
        Ok(m) => {
            return format!(
                "; {} is owned by uid {} gid {} with mode {:04o}, and ribbridge runs as {me}: run it as the \
                 socket's owner, uid {} gid {} (Kubernetes: securityContext.runAsUser and runAsGroup, or \
                 `--user {}:{}` in args where the container starts as root, as the repair manifests do; \
                 systemd: User= and Group=; podman: --user)",
                path.display(),
                m.uid(),
                m.gid(),
                m.mode() & 0o7777,
                m.uid(),
                m.gid(),
                m.uid(),
                m.gid()
            );
        }
        Err(e) => e,
    };
    // The directory itself refuses a lookup: say whose it is.
    let dir = path.parent().unwrap_or(Path::new("/"));
    let dir_owner = std::fs::metadata(dir)
        .map(|m| {
            format!(
                "owned by uid {} gid {} with mode {:04o}",
                m.uid(),
                m.gid(),
                m.mode() & 0o7777
            )
        })
        .unwrap_or_else(|e| format!("unreadable too ({e})"));
    format!(
        "; its owner cannot be read ({owner}): the directory {} is {dir_owner}, and ribbridge runs as {me}: \
         run it as FRR's user (Kubernetes: securityContext.runAsUser and runAsGroup, or `--user UID:GID` \
         where the container starts as root; systemd: User= and Group=; podman: --user)",
        dir.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_refusal_is_explained() {
        let p = Path::new("/nonexistent/zserv.api");
        assert_eq!(refusal(p, &io::Error::from(io::ErrorKind::NotFound)), "");
        let text = refusal(p, &io::Error::from(io::ErrorKind::PermissionDenied));
        assert!(
            text.contains("the directory /nonexistent") && text.contains("runAsUser"),
            "{text}"
        );
    }

    #[test]
    fn a_refusal_names_the_owner_the_mode_and_the_process() {
        let dir = tempfile::tempdir().expect("tempdir");
        let sock = dir.path().join("zserv.api");
        std::fs::write(&sock, b"").expect("file");
        std::fs::set_permissions(&sock, std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .expect("chmod");
        let m = std::fs::metadata(&sock).expect("stat");
        let text = refusal(&sock, &io::Error::from(io::ErrorKind::PermissionDenied));
        for want in [
            format!("owned by uid {} gid {} with mode 0700", m.uid(), m.gid()),
            format!("ribbridge runs as uid {}", nix::unistd::geteuid()),
            format!("--user {}:{}", m.uid(), m.gid()),
            "User= and Group=".to_string(),
        ] {
            assert!(text.contains(&want), "{want:?} not in {text}");
        }
    }
}
