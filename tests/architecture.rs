//! ARCHITECTURE.md's module graph is the code's: every `crate::MODULE`
//! reference between top-level modules is listed there, nothing listed is
//! absent, and the graph has no cycle. And rule 5: no `Result<_, String>`
//! in `src/`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read src") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The top-level module a file of `src/` belongs to.
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (name != "lib" && name != "main").then(|| name.to_string())
}

/// Edges from the code: `crate::X` in a module other than X (comments aside).
fn code_graph() -> Graph {
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<String> = files.iter().filter_map(|f| module_of(&src, f)).collect();
    let mut g: Graph = modules
        .iter()
        .map(|m| (m.clone(), BTreeSet::new()))
        .collect();
    for f in &files {
        let Some(from) = module_of(&src, f) else {
            continue;
        };
        let text = std::fs::read_to_string(f).expect("read source");
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or("");
            for (i, _) in code.match_indices("crate::") {
                let rest = &code[i + "crate::".len()..];
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if modules.contains(&name) && name != from {
                    g.entry(from.clone()).or_default().insert(name);
                }
            }
            // `use crate::{a, b}` groups.
            if let Some(group) = code.split("use crate::{").nth(1) {
                for name in group.split([',', '}', ' ', ':']) {
                    if modules.contains(name) && name != from {
                        g.entry(from.clone()).or_default().insert(name.to_string());
                    }
                }
            }
        }
    }
    g
}

/// Edges from ARCHITECTURE.md: lines "`a` -> `b`, `c`" (or "-> nothing").
fn documented_graph() -> Graph {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let section = text
        .split("## Module graph")
        .nth(1)
        .expect("ARCHITECTURE.md has a '## Module graph' section");
    let section = section.split("\n## ").next().unwrap_or(section);
    let mut g = Graph::new();
    for line in section.lines() {
        let Some((from, to)) = line.split_once("->") else {
            continue;
        };
        let name = |s: &str| {
            s.trim()
                .trim_matches(|c| c == '`' || c == '-' || c == ' ')
                .to_string()
        };
        let deps = to
            .split(',')
            .map(name)
            .filter(|d| !d.is_empty() && d != "nothing")
            .collect();
        g.insert(name(from), deps);
    }
    g
}

fn cycle(g: &Graph) -> Option<Vec<String>> {
    fn visit(
        g: &Graph,
        n: &str,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == n) {
            let mut c = path[i..].to_vec();
            c.push(n.to_string());
            return Some(c);
        }
        if done.contains(n) {
            return None;
        }
        path.push(n.to_string());
        for d in g.get(n).into_iter().flatten() {
            if let Some(c) = visit(g, d, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    g.keys()
        .find_map(|n| visit(g, n, &mut Vec::new(), &mut done))
}

#[test]
fn architecture_md_lists_the_module_graph_of_the_code() {
    let code = code_graph();
    let doc = documented_graph();
    assert_eq!(
        doc, code,
        "ARCHITECTURE.md's module graph (left) differs from the code's (right)"
    );
}

#[test]
fn no_library_module_imports_in_a_cycle() {
    let code = code_graph();
    assert_eq!(cycle(&code), None, "an import cycle between modules");
}

/// The `Result<T, E>`s of a line whose `E` is `String` (comments aside).
fn string_errors(line: &str) -> usize {
    let code = line.split("//").next().unwrap_or("");
    let mut found = 0;
    for (i, _) in code.match_indices("Result<") {
        let args = &code[i + "Result<".len()..];
        // The arguments up to the matching `>`, split at top-level commas.
        let (mut depth, mut last) = (0usize, String::new());
        for c in args.chars() {
            match c {
                '<' | '(' | '[' => depth += 1,
                '>' | ')' | ']' if depth == 0 => break,
                '>' | ')' | ']' => depth -= 1,
                ',' if depth == 0 => {
                    last.clear();
                    continue;
                }
                _ => {}
            }
            last.push(c);
        }
        let err = last.trim();
        if err == "String" || err == "std::string::String" {
            found += 1;
        }
    }
    found
}

#[test]
fn no_result_in_src_has_a_string_error() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let mut hits = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("read source");
        for (n, line) in text.lines().enumerate() {
            if string_errors(line) > 0 {
                hits.push(format!("{}:{}: {}", f.display(), n + 1, line.trim()));
            }
        }
    }
    assert_eq!(
        hits.len(),
        0,
        "ARCHITECTURE.md rule 5: a typed error (a thiserror enum), not String:\n{}",
        hits.join("\n")
    );
}

#[test]
fn the_string_error_check_finds_one() {
    assert_eq!(string_errors("fn f() -> Result<(), String> {"), 1);
    assert_eq!(
        string_errors("type R = Result<Vec<u8>, std::string::String>;"),
        1
    );
    assert_eq!(
        string_errors("fn f() -> Result<Vec<String>, PlanError> {"),
        0
    );
    assert_eq!(string_errors("fn f() -> Result<Found<String>, E> {"), 0);
    assert_eq!(string_errors("// Result<(), String> in a comment"), 0);
}

#[test]
fn the_cycle_check_finds_a_cycle() {
    let mut g = Graph::new();
    g.insert("a".into(), ["b".to_string()].into());
    g.insert("b".into(), ["a".to_string()].into());
    assert_eq!(cycle(&g), Some(vec!["a".into(), "b".into(), "a".into()]));
}
