//! `ribbridge check-config`: the settings `run` would start with, checked
//! without starting (as `nginx -t`, `keepalived -t` and `promtool check
//! config` do): the same `--config` and flags as `run`; the resolved
//! settings printed as the TOML file would spell them (every key the role
//! reads, defaults included), exit 0; or what is wrong (the file, the line
//! or key, the flag), exit 2.

use std::process::ExitCode;

use super::Exit;
use super::run::Args;

/// Check, print, exit.
pub fn run(args: Args) -> ExitCode {
    const CMD: &str = "ribbridge check-config";
    let settings = match super::run::settings(&args) {
        Ok(s) => s,
        Err(e) => return super::fail_err(CMD, &e),
    };
    match toml::to_string(&settings.layer()) {
        Ok(text) => {
            print!("{text}");
            Exit::Ok.into()
        }
        Err(e) => super::fail(CMD, &format!("cannot write the settings as TOML: {e}")),
    }
}
