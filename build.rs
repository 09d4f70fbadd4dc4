//! The build's identity for `--version` and `ribbridge_build_info`: the git
//! revision and the commit's date (the date of the source, so that the same
//! revision builds the same binary). `RIBBRIDGE_REVISION` and
//! `RIBBRIDGE_BUILD_DATE` in the environment win (a build from a tarball
//! has no git); without either, `unknown`.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !text.is_empty()).then_some(text)
}

fn main() {
    let revision = std::env::var("RIBBRIDGE_REVISION")
        .ok()
        .or_else(|| git(&["rev-parse", "--short=12", "HEAD"]))
        .unwrap_or_else(|| "unknown".to_string());
    let date = std::env::var("RIBBRIDGE_BUILD_DATE")
        .ok()
        .or_else(|| git(&["log", "-1", "--format=%cs"]))
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=RIBBRIDGE_REVISION={revision}");
    println!("cargo:rustc-env=RIBBRIDGE_BUILD_DATE={date}");
    println!("cargo:rerun-if-env-changed=RIBBRIDGE_REVISION");
    println!("cargo:rerun-if-env-changed=RIBBRIDGE_BUILD_DATE");
    // A new commit moves HEAD (or the branch it names).
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        println!("cargo:rerun-if-changed={dir}/HEAD");
    }
    let common = git(&["rev-parse", "--git-common-dir"]);
    if let (Some(common), Some(head)) = (common, git(&["symbolic-ref", "-q", "HEAD"])) {
        if std::path::Path::new(&common).join(&head).exists() {
            println!("cargo:rerun-if-changed={common}/{head}");
        }
    }
}
