//! The repository's own files: the license Cargo.toml names is in the tree,
//! no Python bytecode is tracked (scripts/ runs from a clean checkout), and
//! README's glossary stands right after its first section with every word
//! the rest of the repository uses in one sense.

use std::path::PathBuf;
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn the_license_cargo_toml_names_is_in_the_tree() {
    assert!(
        read("Cargo.toml")
            .lines()
            .any(|l| l == "license = \"Apache-2.0\""),
        "Cargo.toml names another license: LICENSE must follow"
    );
    let text = read("LICENSE");
    for needle in [
        "Apache License",
        "Version 2.0, January 2004",
        "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION",
        "END OF TERMS AND CONDITIONS",
    ] {
        assert!(
            text.contains(needle),
            "LICENSE lacks {needle:?}: not the full Apache-2.0 text"
        );
    }
}

#[test]
fn no_python_bytecode_is_tracked() {
    let out = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(repo())
        .output()
        .expect("git ls-files");
    assert!(out.status.success(), "git ls-files: {}", out.status);
    let tracked: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .split('\0')
        .filter(|f| f.contains("__pycache__") || f.ends_with(".pyc"))
        .map(str::to_string)
        .collect();
    assert!(tracked.is_empty(), "bytecode tracked: {tracked:?}");
    assert!(
        read(".gitignore").lines().any(|l| l == "__pycache__/"),
        ".gitignore does not ignore __pycache__/"
    );
}

#[test]
fn the_readme_glossary_follows_the_first_section() {
    let readme = read("README.md");
    let headings: Vec<&str> = readme.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(
        headings.first().copied(),
        Some("## Glossary"),
        "the glossary is not the section after the first: {headings:?}"
    );
    let glossary = readme
        .split("## Glossary\n")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("the glossary's text");
    for word in [
        "join",
        "owner loop",
        "writer",
        "vantage",
        "intent",
        "drift",
        "heal",
        "table-direct",
    ] {
        assert!(
            glossary.contains(&format!("- **{word}**: ")),
            "the glossary does not define {word:?}"
        );
    }
}
