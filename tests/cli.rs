//! The binary's surface: version, help, and subcommands that are not built
//! yet say so and fail (exit 2) rather than pretend to succeed.

use std::process::Command;

fn ribbridge(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ribbridge"))
        .args(args)
        .output()
        .expect("run ribbridge")
}

#[test]
fn version_names_the_crate_version() {
    let out = ribbridge(&["--version"]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("ribbridge {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn help_lists_every_subcommand() {
    let out = ribbridge(&["--help"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for sub in ["run", "status", "render", "kernel", "frr"] {
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
