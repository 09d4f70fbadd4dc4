//! `--check`: the rendered text through FRR's own parser,
//! `vtysh --dryrun -f FILE`, which parses every line with the command tree
//! of all daemons and connects to none of them.
//!
//! Contract: [`check`] returns `Ok` only when vtysh ran and exited 0; a
//! missing vtysh is an error (the user asked for a check), and a rejection
//! quotes FRR's complaints, which carry the line numbers of the rendered
//! file. The parser checks syntax only: values bgpd itself refuses later
//! (a hold time of 2) pass it, which is why the mapping is validated first.
//!
//! `RIBBRIDGE_FRR_ROOT` names an FRR installed in a chroot (the lab's 10.x
//! roots): the text is copied into the root's `/tmp` and checked with
//! `chroot ROOT vtysh`. Without it, `vtysh` is taken from `PATH`.

use std::path::PathBuf;
use std::process::{Command, ExitStatus};

use super::output::OutputError;

/// Names the root of an FRR installed in a chroot.
pub const FRR_ROOT_ENV: &str = "RIBBRIDGE_FRR_ROOT";

/// Why the check did not pass.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// The copy for the parser could not be written.
    #[error("--check: {source}")]
    Scratch {
        /// Why.
        source: OutputError,
    },
    /// The parser could not be run.
    #[error(
        "--check: cannot run `{parser}`: {source}; install FRR's vtysh (or set {FRR_ROOT_ENV} \
         to an FRR root), or drop --check"
    )]
    Run {
        /// The command.
        parser: String,
        /// Why.
        source: std::io::Error,
    },
    /// FRR's parser rejected the text.
    #[error(
        "--check: FRR's parser (`{parser}`, {status}) rejected the rendered configuration; \
         nothing was written:\n{complaints}\n(line numbers are those of the rendered text: run \
         without --check to see it; if the installed FRR is another release, pass \
         --frr-release for it)"
    )]
    Rejected {
        /// The command.
        parser: String,
        /// How it exited.
        status: ExitStatus,
        /// Its per-line complaints (or all its output when it gave none).
        complaints: String,
    },
}

/// Parse `text` with FRR's parser; `Ok` names the parser that accepted it.
pub fn check(text: &str) -> Result<String, CheckError> {
    let root = std::env::var_os(FRR_ROOT_ENV).map(PathBuf::from);
    let name = format!("ribbridge-render-check-{}.conf", std::process::id());
    let (host_path, inner_path) = match &root {
        Some(r) => (r.join("tmp").join(&name), PathBuf::from("/tmp").join(&name)),
        None => {
            let p = std::env::temp_dir().join(&name);
            (p.clone(), p)
        }
    };
    let _ = std::fs::remove_file(&host_path);
    super::output::write_new(&host_path, text, None)
        .map_err(|source| CheckError::Scratch { source })?;
    let mut cmd = match &root {
        Some(r) => {
            let mut c = Command::new("chroot");
            c.arg(r).arg("vtysh");
            c
        }
        None => Command::new("vtysh"),
    };
    cmd.arg("--dryrun").arg("-f").arg(&inner_path);
    let parser = match &root {
        Some(r) => format!("chroot {} vtysh --dryrun", r.display()),
        None => "vtysh --dryrun".to_string(),
    };
    let out = cmd.output();
    let _ = std::fs::remove_file(&host_path);
    let out = match out {
        Ok(o) => o,
        Err(source) => return Err(CheckError::Run { parser, source }),
    };
    if out.status.success() {
        return Ok(parser);
    }
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // 10.x adds a summary naming /etc/frr/frr.conf whatever -f said: keep
    // only the per-line complaints when there are any.
    let lines: Vec<&str> = all.lines().filter(|l| l.starts_with("line ")).collect();
    let complaints = if lines.is_empty() {
        all.trim().to_string()
    } else {
        lines.join("\n")
    };
    Err(CheckError::Rejected {
        parser,
        status: out.status,
        complaints,
    })
}
