//! ARCHITECTURE.md's module graph is the code's: every `crate::MODULE`
//! reference between top-level modules is listed there, nothing listed is
//! absent, and the graph has no cycle. Inside `daemon` and `reconcile` the
//! files import one another in no cycle either (`FILE_GRAPHS`). And rule
//! 5: no `Result<_, String>` in `src/`.

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

/// The code of a source file as the file graph reads it: comments gone,
/// string and character literals emptied (their text is no path), so that
/// braces and `::` are the code's own.
fn strip(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            i += rest.find("*/").map_or(rest.len(), |e| e + 2);
        } else if let Some((open, hashes)) = raw_string_start(rest) {
            let close = format!("\"{}", "#".repeat(hashes));
            i += open
                + rest[open..]
                    .find(&close)
                    .map_or(rest.len() - open, |e| e + close.len());
            out.push_str("\"\"");
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(b.len());
            out.push_str("\"\"");
        } else if let Some(len) = char_literal(rest) {
            i += len;
            out.push_str("' '");
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// A raw string (`r"`, `r#"`, `br"`, ...) at the start of `s`: the length
/// of its opening and its number of `#`s.
fn raw_string_start(s: &str) -> Option<(usize, usize)> {
    let after = s.strip_prefix('r').or_else(|| s.strip_prefix("br"))?;
    let hashes = after.len() - after.trim_start_matches('#').len();
    let open = s.len() - after.len() + hashes + 1;
    after[hashes..].starts_with('"').then_some((open, hashes))
}

/// The length of a character literal at the start of `s` (`'a'`, `'\n'`,
/// `'\u{7f}'`), or None (a lifetime, or no quote).
fn char_literal(s: &str) -> Option<usize> {
    let body = s.strip_prefix('\'')?;
    let len = if body.starts_with('\\') {
        body.find('\'')?
    } else {
        body.chars().next()?.len_utf8()
    };
    (body[len..].starts_with('\'')).then_some(len + 2)
}

/// `code` without its `#[cfg(test)]` items (a test module, a test-only
/// import or helper): what the tests use is no dependency of the code.
fn without_tests(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let item = &rest[at..];
        let mut depth = 0usize;
        let mut end = item.len();
        for (i, c) in item.char_indices().skip("#[cfg(test)]".len()) {
            match c {
                '[' | '(' => depth += 1,
                ']' | ')' => depth = depth.saturating_sub(1),
                ';' if depth == 0 => {
                    end = i + 1;
                    break;
                }
                '{' => {
                    end = matching_brace(item, i);
                    break;
                }
                _ => {}
            }
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// The index after the `}` that closes the `{` at `open`.
fn matching_brace(s: &str, open: usize) -> usize {
    let mut depth = 0usize;
    for (i, c) in s[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return open + i + 1;
                }
            }
            _ => {}
        }
    }
    s.len()
}

/// The paths a `use` tree names, each as its segments (`a::{b, c::d}`:
/// `a::b` and `a::c::d`; `x as y` is `x`; `self` in a group is the group's
/// own path).
fn use_paths(tree: &str) -> Vec<Vec<String>> {
    fn expand(prefix: &[String], tree: &str, out: &mut Vec<Vec<String>>) {
        let tree = tree.trim();
        let (head, group) = match tree.find('{') {
            Some(open) => (
                &tree[..open],
                Some(&tree[open + 1..tree.rfind('}').unwrap_or(tree.len())]),
            ),
            None => (tree, None),
        };
        let mut path = prefix.to_vec();
        let head = head.split(" as ").next().unwrap_or(head);
        path.extend(
            head.split("::")
                .map(str::trim)
                .filter(|s| !s.is_empty() && *s != "self")
                .map(String::from),
        );
        let Some(group) = group else {
            out.push(path);
            return;
        };
        let (mut depth, mut from) = (0usize, 0);
        for (i, c) in group.char_indices().chain([(group.len(), ',')]) {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    if !group[from..i].trim().is_empty() {
                        expand(&path, &group[from..i], out);
                    }
                    from = i + 1;
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    expand(&[], tree, &mut out);
    out
}

/// A path a file names, and whether a `use` names it.
type Named = (bool, Vec<String>);

/// Every path of `code` (comments and tests stripped): the `use` trees
/// expanded, then every other `a::b::c` that starts with `crate`, `super`,
/// `self` or one of `locals` (the files a `mod.rs` declares, which it
/// names bare).
fn code_paths(code: &str, locals: &BTreeSet<String>) -> Vec<Named> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut paths = Vec::new();
    let mut rest = String::new();
    let mut s = code;
    while let Some(at) = s.find("use ") {
        let starts_word = !s[..at].ends_with(ident);
        let end = s[at..].find(';').map_or(s.len(), |e| at + e);
        if starts_word {
            rest.push_str(&s[..at]);
            let tree = &s[at + "use ".len()..end];
            paths.extend(use_paths(tree).into_iter().map(|p| (true, p)));
            s = &s[end..];
        } else {
            rest.push_str(&s[..at + "use ".len()]);
            s = &s[at + "use ".len()..];
        }
    }
    rest.push_str(s);
    let chars: Vec<char> = rest.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if !ident(chars[i]) || (i > 0 && (ident(chars[i - 1]) || chars[i - 1] == ':')) {
            i += 1;
            continue;
        }
        let mut path = Vec::new();
        loop {
            let start = i;
            while i < chars.len() && ident(chars[i]) {
                i += 1;
            }
            path.push(chars[start..i].iter().collect::<String>());
            let sep = chars.get(i) == Some(&':') && chars.get(i + 1) == Some(&':');
            if !(sep && chars.get(i + 2).is_some_and(|c| ident(*c))) {
                break;
            }
            i += 2;
        }
        let first = path[0].as_str();
        if path.len() > 1 && (["crate", "super", "self"].contains(&first) || locals.contains(first))
        {
            paths.push((false, path));
        }
    }
    paths
}

/// One file of a module directory: its node in the file graph (`mod` for
/// `mod.rs`, else the file's name; a file below `X/` belongs to `X`) and
/// its module path (`["reconcile", "step"]`).
struct ModFile {
    node: String,
    path: Vec<String>,
    code: String,
}

/// A path of `file` from the crate's root, or None (an outside crate).
fn absolute(file: &ModFile, path: &[String], locals: &BTreeSet<String>) -> Option<Vec<String>> {
    let mut base = file.path.clone();
    let mut segs = path;
    match path.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            segs = &path[1..];
        }
        Some("self") => segs = &path[1..],
        Some("super") => {
            while segs.first().is_some_and(|s| s == "super") {
                base.pop();
                segs = &segs[1..];
            }
        }
        Some(first) if file.node == "mod" && locals.contains(first) => {}
        _ => return None,
    }
    base.extend(segs.iter().cloned());
    Some(base)
}

/// The graph among the files of one module directory: an edge `a -> b`
/// when file `a` names something of file `b` (`super::b::X`, or `super::X`
/// that `mod.rs` re-exports from `b`; `mod` is `mod.rs`'s own code, its
/// declarations aside). Files only the tests compile are left out.
fn file_graph(module: &str, files: &[ModFile]) -> Graph {
    let root = files.iter().find(|f| f.node == "mod");
    let test_only: BTreeSet<String> = root
        .map(|r| {
            r.code
                .split("#[cfg(test)]")
                .skip(1)
                .filter_map(|s| s.trim_start().strip_prefix("mod "))
                .filter_map(|s| s.split(';').next())
                .filter(|n| n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
                .map(|n| n.trim().to_string())
                .collect()
        })
        .unwrap_or_default();
    let nodes: BTreeSet<String> = files
        .iter()
        .map(|f| f.node.clone())
        .filter(|n| !test_only.contains(n))
        .collect();
    // What `mod.rs` re-exports: the name, from which file.
    let mut exported = BTreeMap::new();
    if let Some(r) = root {
        let uses = code_paths(&without_tests(&r.code), &nodes);
        for (_, p) in uses.iter().filter(|(is_use, _)| *is_use) {
            if let Some(abs) = absolute(r, p, &nodes) {
                if abs.len() > 2 && abs[0] == module && nodes.contains(&abs[1]) {
                    exported.insert(abs[abs.len() - 1].clone(), abs[1].clone());
                }
            }
        }
    }
    let mut g: Graph = nodes.iter().map(|n| (n.clone(), BTreeSet::new())).collect();
    for f in files.iter().filter(|f| nodes.contains(&f.node)) {
        for (_, p) in code_paths(&without_tests(&f.code), &nodes) {
            let Some(abs) = absolute(f, &p, &nodes) else {
                continue;
            };
            if abs.len() < 2 || abs[0] != module {
                continue;
            }
            let to = if nodes.contains(&abs[1]) {
                abs[1].clone()
            } else {
                exported
                    .get(&abs[1])
                    .cloned()
                    .unwrap_or_else(|| "mod".to_string())
            };
            if to != f.node {
                g.entry(f.node.clone()).or_default().insert(to);
            }
        }
    }
    g
}

/// The files of `src/<module>/`, read (and `src/<module>.rs`, its root
/// when it has no `mod.rs`).
fn module_files(module: &str) -> Vec<ModFile> {
    let src = root().join("src");
    let dir = src.join(module);
    let mut paths = Vec::new();
    rust_files(&dir, &mut paths);
    let outer = src.join(format!("{module}.rs"));
    if outer.is_file() {
        paths.push(outer);
    }
    paths
        .iter()
        .map(|p| {
            let rel: Vec<String> = match p.strip_prefix(&dir) {
                Ok(r) => r
                    .with_extension("")
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect(),
                Err(_) => vec!["mod".to_string()],
            };
            let node = rel[0].clone();
            let mut path = vec![module.to_string()];
            path.extend(rel.iter().filter(|s| *s != "mod").cloned());
            let text = std::fs::read_to_string(p).expect("read source");
            ModFile {
                node,
                path,
                code: strip(&text),
            }
        })
        .collect()
}

/// The modules whose files must not import one another in a circle.
const FILE_GRAPHS: [&str; 2] = ["daemon", "reconcile"];

#[test]
fn no_file_of_a_module_imports_another_in_a_cycle() {
    let found: Vec<String> = FILE_GRAPHS
        .iter()
        .filter_map(|m| {
            let c = cycle(&file_graph(m, &module_files(m)))?;
            Some(format!("src/{m}/: {}", c.join(" -> ")))
        })
        .collect();
    assert!(
        found.is_empty(),
        "an import cycle among the files of a module (`mod` is mod.rs's own code):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_file_graph_reads_uses_re_exports_and_bare_paths() {
    let file = |node: &str, text: &str| {
        let mut path = vec!["m".to_string()];
        if node != "mod" {
            path.push(node.to_string());
        }
        ModFile {
            node: node.to_string(),
            path,
            code: strip(text),
        }
    };
    let files = [
        file(
            "mod",
            "mod a;\nmod b;\nmod c;\n#[cfg(test)]\nmod t;\npub use c::{Thing, other::More};\n\
             pub fn run() { a::go(); }\n",
        ),
        file(
            "a",
            "use super::{b::{self, X}, Thing};\n// super::c::Y\nlet s = \"super::mod\";\n",
        ),
        file(
            "b",
            "fn f() { let _ = crate::m::More::new(); }\n#[cfg(test)]\nmod tests { use super::super::a; }\n",
        ),
        file("c", "use super::run;\nlet r = br#\"use super::b;\"#;\n"),
        file("t", "use super::a;\n"),
    ];
    let g = file_graph("m", &files);
    let edges = |n: &str| g[n].iter().cloned().collect::<Vec<_>>();
    assert_eq!(g.keys().collect::<Vec<_>>(), ["a", "b", "c", "mod"]);
    assert_eq!(edges("mod"), ["a", "c"]);
    assert_eq!(edges("a"), ["b", "c"]);
    assert_eq!(edges("b"), ["c"]);
    assert_eq!(edges("c"), ["mod"]);
    assert_eq!(
        cycle(&g),
        Some(["a", "b", "c", "mod", "a"].map(String::from).to_vec())
    );
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
