//! The library's layout by layer, checked: a module imports only the layers
//! below its own (`src/lib.rs` lists them), never a sibling layer, and no
//! two modules import each other, directly or round a longer circle.
//!
//! Imports are read from the source text: every `crate::` path outside a
//! comment, and every `super::` path, resolved to the module it names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first, as `src/lib.rs` and the README's Layout say.
/// Folders on one rank are siblings: neither may import the other.
const LAYERS: &[&[&str]] = &[
    &["error", "id", "time"],
    &["agy"],
    &["stream"],
    &["kinds", "store"],
    &["decode"],
    &["encode", "edit", "pack", "list", "usage"],
    &["format", "render"],
    &["cli"],
];

fn rank(top: &str) -> usize {
    LAYERS
        .iter()
        .position(|layer| layer.contains(&top))
        .unwrap_or_else(|| panic!("src/{top} is in no layer of tests/layers.rs"))
}

/// Every library source file (not `src/bin/`) with its module path.
fn modules() -> Vec<(Vec<String>, PathBuf)> {
    fn walk(dir: &Path, path: &[String], out: &mut Vec<(Vec<String>, PathBuf)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for entry in entries {
            let name = entry.file_name().unwrap().to_str().unwrap().to_string();
            if entry.is_dir() {
                if path.is_empty() && name == "bin" {
                    continue;
                }
                let mut inner = path.to_vec();
                inner.push(name);
                walk(&entry, &inner, out);
            } else if let Some(stem) = name.strip_suffix(".rs") {
                let mut module = path.to_vec();
                if stem != "mod" && stem != "lib" {
                    module.push(stem.to_string());
                }
                out.push((module, entry));
            }
        }
    }
    let mut out = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &[],
        &mut out,
    );
    out
}

/// The module paths a file's code names: `crate::a::b::Item`,
/// `super::b::Item`, and each path of a group (`use super::{a::X, b}`,
/// across lines too), as written (the caller keeps the part that is a
/// module). Comment lines are left out.
fn named_paths(module: &[String], text: &str) -> Vec<Vec<String>> {
    let code: Vec<&str> = text
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect();
    let code = code.join("\n");
    let mut raw = Vec::new();
    for (start, _) in code
        .match_indices("crate::")
        .chain(code.match_indices("super::"))
    {
        let before = code[..start].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        use_tree(&code[start..], Vec::new(), &mut raw);
    }
    raw.into_iter()
        .map(|words| {
            let mut path: Vec<String> = if words[0] == "crate" {
                Vec::new()
            } else {
                // A mod.rs's module path is its folder's, so `super` is
                // one step up from the module path in either kind of file.
                let mut base = module.to_vec();
                let ups = words.iter().take_while(|w| *w == "super").count();
                for _ in 0..ups {
                    base.pop();
                }
                base
            };
            path.extend(
                words
                    .into_iter()
                    .skip_while(|w| w == "crate" || w == "super"),
            );
            path
        })
        .collect()
}

/// Reads the path or use tree at the start of `text` (words joined by
/// `::`, perhaps ending in a `{…}` group of trees) after `prefix`, pushes
/// each whole path to `out`, and returns how many bytes it read.
fn use_tree(text: &str, mut prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    let bytes = text.as_bytes();
    let mut at = 0;
    let skip_space = |at: &mut usize| {
        while *at < bytes.len() && bytes[*at].is_ascii_whitespace() {
            *at += 1;
        }
    };
    loop {
        skip_space(&mut at);
        if bytes.get(at) == Some(&b'{') {
            at += 1;
            loop {
                skip_space(&mut at);
                match bytes.get(at) {
                    Some(b'}') => return at + 1,
                    Some(b',') => at += 1,
                    Some(_) => {
                        let read = use_tree(&text[at..], prefix.clone(), out);
                        if read == 0 {
                            return at;
                        }
                        at += read;
                    }
                    None => return at,
                }
            }
        }
        let word: String = text[at..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if word.is_empty() {
            break;
        }
        at += word.len();
        prefix.push(word);
        let rest = &text[at..];
        let gap = rest.len() - rest.trim_start().len();
        if rest[gap..].starts_with("::") {
            at += gap + 2;
        } else {
            break;
        }
    }
    if !prefix.is_empty() {
        out.push(prefix);
    }
    at
}

/// The import graph between modules: for each module, the other modules
/// its code names (the longest module prefix of each path), leaving out a
/// module's own ancestors and descendants, which `mod` ties together anyway.
fn graph() -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let modules = modules();
    let known: BTreeSet<Vec<String>> = modules.iter().map(|(m, _)| m.clone()).collect();
    let mut graph = BTreeMap::new();
    for (module, file) in &modules {
        let text = std::fs::read_to_string(file).unwrap();
        let mut edges = BTreeSet::new();
        for path in named_paths(module, &text) {
            let target = (0..=path.len())
                .rev()
                .map(|n| path[..n].to_vec())
                .find(|prefix| known.contains(prefix))
                .unwrap();
            let related = target.starts_with(module) || module.starts_with(&target);
            if !related {
                edges.insert(target);
            }
        }
        graph.insert(module.clone(), edges);
    }
    graph
}

#[test]
fn no_module_imports_a_layer_above_or_beside_its_own() {
    let mut wrong = Vec::new();
    for (module, edges) in graph() {
        let Some(top) = module.first() else { continue };
        for target in edges {
            let other = &target[0];
            if other != top && rank(other) >= rank(top) {
                wrong.push(format!(
                    "{} imports {}",
                    module.join("::"),
                    target.join("::")
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layers:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_two_modules_import_each_other() {
    let graph = graph();
    // Depth-first search for a back edge, reporting the circle it closes.
    fn visit(
        node: &Vec<String>,
        graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        stack: &mut Vec<Vec<String>>,
        done: &mut BTreeSet<Vec<String>>,
        circles: &mut Vec<String>,
    ) {
        if done.contains(node) {
            return;
        }
        if let Some(at) = stack.iter().position(|n| n == node) {
            let circle: Vec<String> = stack[at..]
                .iter()
                .chain([node])
                .map(|m| m.join("::"))
                .collect();
            circles.push(circle.join(" -> "));
            return;
        }
        stack.push(node.clone());
        for next in &graph[node] {
            visit(next, graph, stack, done, circles);
        }
        stack.pop();
        done.insert(node.clone());
    }
    let mut done = BTreeSet::new();
    let mut circles = Vec::new();
    for node in graph.keys() {
        visit(node, &graph, &mut Vec::new(), &mut done, &mut circles);
    }
    assert!(
        circles.is_empty(),
        "modules in a circle:\n{}",
        circles.join("\n")
    );
}

#[test]
fn the_checker_sees_an_import_and_resolves_super() {
    let module = vec!["render".to_string(), "page".to_string()];
    let text = "use super::site::Entry;\n// crate::cli in a comment\nlet x = crate::store::root::check_id(id);\nuse super::{\n    calls::{self, cut},\n    summary::Summary,\n};\n";
    let paths = named_paths(&module, text);
    let words = |path: &[&str]| path.iter().map(|w| w.to_string()).collect::<Vec<_>>();
    assert_eq!(
        paths,
        vec![
            words(&["store", "root", "check_id"]),
            words(&["render", "site", "Entry"]),
            words(&["render", "calls", "self"]),
            words(&["render", "calls", "cut"]),
            words(&["render", "summary", "Summary"]),
        ]
    );
}
