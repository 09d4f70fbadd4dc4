//! The repository's own files: the license Cargo.toml names is in the tree,
//! no Python bytecode is tracked (scripts/ runs from a clean checkout),
//! README opens with what ribbridge is, its picture (rendered from its
//! source by Debian's graphviz) and how to run it on one node, then the
//! glossary with every word the rest of the repository uses in one sense,
//! before the lab's commands.

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
fn the_readme_opens_with_the_picture_one_node_then_the_glossary() {
    let readme = read("README.md");
    let headings: Vec<&str> = readme.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(
        headings.get(..3),
        Some(
            &[
                "## Run it on one node",
                "## Glossary",
                "## The two commands"
            ][..]
        ),
        "README does not open with running it on one node, the glossary, then the lab: {headings:?}"
    );
    let opening = readme.split("\n## ").next().expect("the opening");
    assert!(
        opening.contains("](docs/chain.svg)"),
        "the opening does not show docs/chain.svg"
    );
    // Nothing before the glossary leans on a word it defines.
    let before = readme.split("## Glossary\n").next().expect("before");
    for word in ["owner loop", "vantage", "intent"] {
        assert!(
            !before.contains(word),
            "{word:?} is used before the glossary defines it"
        );
    }
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

/// docs/chain.svg is docs/chain.dot as Debian's graphviz renders it: edit the
/// source, then `dot -Tsvg docs/chain.dot -o docs/chain.svg`.
#[test]
fn the_readme_s_picture_is_its_source_rendered() {
    let out = Command::new("dot")
        .arg("-Tsvg")
        .arg(repo().join("docs/chain.dot"))
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run graphviz's dot ({e}): scripts/install-deps.sh installs it")
        });
    assert!(
        out.status.success(),
        "dot -Tsvg docs/chain.dot: {}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let committed = std::fs::read(repo().join("docs/chain.svg")).expect("docs/chain.svg");
    assert!(
        out.stdout == committed,
        "docs/chain.svg is not docs/chain.dot rendered: run `dot -Tsvg docs/chain.dot -o docs/chain.svg`"
    );
}
