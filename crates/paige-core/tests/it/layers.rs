//! The layering of `paige-core` (issue 29), read from its source: which module names which.
//! A module's references are its `crate::…`, `super::…` and `self::…` paths (in `use` lines
//! and inline), comments left out. The rules:
//! - a leaf module (configuration, vocabulary, storage, files, the model client, prompts, the
//!   protocol, live state, the terminal, the launcher…) names no feature and not `Core`;
//! - the leaf modules import one another without a cycle;
//! - inside a module, its parts import one another without a cycle (`governance/bash.rs`
//!   hands words to `programs/`, which knows nothing of the parser);
//! - no module imports itself back through others;
//! - only the handlers (the top layer, `impl Core` entry points) name `Core`: the features
//!   are objects built by `Core::open` with what they use (issue 40: `Coaching` and
//!   `Governance` too);
//! - a feature names no handler: what it needs comes in through its constructor;
//! - `Core` has under 120 methods (issue 40);
//! - no handler calls another handler's method: a handler calls the façade's base (`core.rs`,
//!   and `project.rs`, the project's files every adapter reads), its own module's, or a
//!   feature's. `dispatch` is exempt: it is the UI's routing table, whose job is to call them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Modules below the features: they must never reach up.
const LEAVES: &[&str] = &[
    "api",
    "buffers",
    "clock",
    "config",
    "db",
    "event",
    "files",
    "github",
    "hook_event",
    "launch",
    "limits",
    "live",
    "memory",
    "models",
    "prompts",
    "protocol",
    "record",
    "run_info",
    "sandbox",
    "settings",
    "sync",
    "terminal",
    "token",
    "transcript",
    "ctx",
    "vocab",
];

/// The top layer: `Core` itself and the handlers that take `&Core` (`impl Core` entry points,
/// like rust-analyzer's handlers over its global state). No other module names `Core`: the
/// features (`observer`, `intake`, `dashboard`, `detector`, `checks`) are objects `Core::open`
/// builds with what they use (`ctx.rs`).
const HANDLERS: &[&str] =
    &["agent", "core", "dispatch", "explain", "hooks", "practice", "project", "connection_terminals", "timed_call"];

/// One source file: its module path (`governance::programs` for `governance/programs/mod.rs`)
/// and the module paths it names.
struct Source {
    file: String,
    module: Vec<String>,
    names: Vec<Vec<String>>,
}

fn sources() -> Vec<Source> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    collect(&src, &mut files);
    let module_of = |path: &Path| {
        let rel = path.strip_prefix(&src).expect("under src").with_extension("");
        let mut module: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
            module.pop();
        }
        (rel.display().to_string(), module)
    };
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(f).1).collect();
    files
        .into_iter()
        .map(|path| {
            let (file, module) = module_of(&path);
            let text = without_comments(&std::fs::read_to_string(&path).expect("source"));
            let mut names = references(&text, &module);
            names.extend(child_references(&text, &module, &modules));
            Source { file, module, names }
        })
        .collect()
}

/// Paths that start at one of the file's own submodules (`use wrapup::WrapUps;` in a
/// `mod.rs`, or `window::open(…)` inline), which name that submodule's file.
fn child_references(text: &str, module: &[String], modules: &BTreeSet<Vec<String>>) -> Vec<Vec<String>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(found) = text[at..].find("::") {
        let end = at + found;
        let start = text[..end].rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
        let before_is_path = start >= 2 && &bytes[start - 2..start] == b"::";
        let ident = &text[start..end];
        if !ident.is_empty() && !before_is_path {
            let child: Vec<String> = module.iter().cloned().chain([ident.to_owned()]).collect();
            if modules.contains(&child) {
                let (rest, _) = parse_tree(text, end + 2);
                out.extend(rest.into_iter().map(|p| child.iter().cloned().chain(p).collect()));
            }
        }
        at = end + 2;
    }
    out
}

fn collect(dir: &Path, into: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            collect(&path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            into.push(path);
        }
    }
}

/// The source without comments and without its unit tests (`#[cfg(test)] mod …`, which may
/// reach anywhere).
fn without_comments(text: &str) -> String {
    let text = text.find("#[cfg(test)]\nmod ").map_or(text, |at| &text[..at]);
    text.lines().map(|line| line.find("//").map_or(line, |at| &line[..at])).collect::<Vec<_>>().join("\n")
}

/// Every path `text` names from `crate`, `super` or `self`, resolved to an absolute module
/// path (braces expanded: `crate::{a::b, c}` names `a::b` and `c`).
/// `module` is the file's own module (a `mod.rs` is its folder's), which `self::` names and
/// whose parent `super::` names.
fn references(text: &str, module: &[String]) -> Vec<Vec<String>> {
    let here: Vec<String> = module.to_vec();
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        let rest = &text[at..];
        let start = ["crate::", "super::", "self::"].iter().find(|p| rest.starts_with(**p)).copied();
        let boundary = at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
        match start {
            Some(prefix) if boundary => {
                let mut base: Vec<String> = match prefix {
                    "crate::" => Vec::new(),
                    "self::" => here.clone(),
                    _ => here[..here.len().saturating_sub(1)].to_vec(),
                };
                let mut pos = at + prefix.len();
                // `super::super::`
                while prefix == "super::" && text[pos..].starts_with("super::") {
                    base.pop();
                    pos += "super::".len();
                }
                let (paths, end) = parse_tree(text, pos);
                out.extend(paths.into_iter().map(|p| base.iter().cloned().chain(p).collect()));
                at = end.max(at + 1);
            }
            _ => at += rest.chars().next().map_or(1, char::len_utf8),
        }
    }
    out
}

/// A path tree at `pos` (`a::b`, `a::{b, c::d}`, `{a, b}`): its paths and where it ends.
fn parse_tree(text: &str, mut pos: usize) -> (Vec<Vec<String>>, usize) {
    let ident = |pos: usize| {
        let len = text[pos..].find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(text.len() - pos);
        (&text[pos..pos + len], pos + len)
    };
    let mut prefix = Vec::new();
    loop {
        let skip = text[pos..].len() - text[pos..].trim_start().len();
        pos += skip;
        if text[pos..].starts_with('{') {
            let mut paths = Vec::new();
            pos += 1;
            loop {
                pos += text[pos..].len() - text[pos..].trim_start().len();
                if text[pos..].starts_with('}') || pos >= text.len() {
                    return (paths, pos + 1);
                }
                let (inner, end) = parse_tree(text, pos);
                paths.extend(inner.into_iter().map(|p| prefix.iter().cloned().chain(p).collect::<Vec<String>>()));
                pos = end;
                pos += text[pos..].len() - text[pos..].trim_start().len();
                if text[pos..].starts_with(',') {
                    pos += 1;
                }
            }
        }
        let (name, end) = ident(pos);
        if name.is_empty() {
            return (vec![prefix], pos);
        }
        prefix.push(name.to_owned());
        pos = end;
        if text[pos..].starts_with("::") {
            pos += 2;
        } else {
            return (vec![prefix], pos);
        }
    }
}

/// The top-level module a path names (`Core` and its re-export count as `core`).
fn top(path: &[String]) -> Option<String> {
    let first = path.first()?;
    Some(if first == "Core" { "core".to_owned() } else { first.clone() })
}

/// The strongly connected components of more than one node.
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    // Nodes that reach each other: reachability by search from every node (a few dozen).
    let reach = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(node) = todo.pop() {
            for next in edges.get(&node).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> = edges.keys().map(|n| (n, reach(n))).collect();
    let mut found: Vec<BTreeSet<String>> = Vec::new();
    for (node, from) in &reaches {
        let scc: BTreeSet<String> = from
            .iter()
            .filter(|other| reaches.get(other).is_some_and(|back| back.contains(*node)))
            .cloned()
            .chain([(*node).clone()])
            .collect();
        if scc.len() > 1 && !found.contains(&scc) {
            found.push(scc);
        }
    }
    found
}

/// Edges between top-level modules.
fn top_level_graph(sources: &[Source]) -> BTreeMap<String, BTreeSet<String>> {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let modules: BTreeSet<String> = sources.iter().filter_map(|s| s.module.first().cloned()).collect();
    for source in sources {
        let Some(from) = source.module.first() else { continue };
        let targets = edges.entry(from.clone()).or_default();
        for named in source.names.iter().filter_map(|p| top(p)) {
            if &named != from && modules.contains(&named) {
                targets.insert(named);
            }
        }
    }
    edges
}

/// Which files make the edges inside `cycle`, for the failure message.
fn edges_within(sources: &[Source], cycle: &BTreeSet<String>) -> Vec<String> {
    let mut out = BTreeSet::new();
    for source in sources {
        let Some(from) = source.module.first().filter(|m| cycle.contains(*m)) else { continue };
        for named in source.names.iter().filter_map(|p| top(p)) {
            if &named != from && cycle.contains(&named) {
                out.insert(format!("{from} -> {named} ({}.rs)", source.file));
            }
        }
    }
    out.into_iter().collect()
}

#[test]
fn leaf_modules_name_no_feature_and_not_core() {
    let sources = sources();
    let mut wrong = Vec::new();
    for source in sources.iter().filter(|s| s.module.first().is_some_and(|m| LEAVES.contains(&m.as_str()))) {
        for named in source.names.iter().filter_map(|p| top(p)) {
            let known = sources.iter().any(|s| s.module.first() == Some(&named)) || named == "core";
            if known && !LEAVES.contains(&named.as_str()) {
                wrong.push(format!("{} names {named}", source.module.join("::")));
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    assert!(wrong.is_empty(), "a leaf module reaches up: {wrong:#?}");
}

#[test]
fn the_leaf_modules_import_one_another_without_a_cycle() {
    let sources = sources();
    let mut edges = top_level_graph(&sources);
    edges.retain(|m, _| LEAVES.contains(&m.as_str()));
    for targets in edges.values_mut() {
        targets.retain(|m| LEAVES.contains(&m.as_str()));
    }
    let found: Vec<Vec<String>> = cycles(&edges).iter().map(|c| edges_within(&sources, c)).collect();
    assert!(found.is_empty(), "leaf modules in a cycle: {found:#?}");
}

#[test]
fn inside_each_module_its_parts_import_one_another_without_a_cycle() {
    let sources = sources();
    let mut found = Vec::new();
    let parents: BTreeSet<String> =
        sources.iter().filter(|s| s.module.len() >= 2).map(|s| s.module[0].clone()).collect();
    for parent in parents {
        let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for source in sources.iter().filter(|s| s.module.len() >= 2 && s.module[0] == parent) {
            let from = source.module[1].clone();
            let targets = edges.entry(from.clone()).or_default();
            for named in &source.names {
                if named.len() >= 2 && named[0] == parent && named[1] != from {
                    targets.insert(named[1].clone());
                }
            }
        }
        // Only parts that are files or folders of this module.
        let parts: BTreeSet<String> = edges.keys().cloned().collect();
        for targets in edges.values_mut() {
            targets.retain(|t| parts.contains(t));
        }
        found.extend(cycles(&edges).into_iter().map(|c| format!("{parent}: {c:?}")));
    }
    assert!(found.is_empty(), "parts of a module in a cycle: {found:#?}");
}

#[test]
fn no_module_of_paige_core_is_in_an_import_cycle() {
    let sources = sources();
    let found: Vec<Vec<String>> =
        cycles(&top_level_graph(&sources)).iter().map(|cycle| edges_within(&sources, cycle)).collect();
    assert!(found.is_empty(), "modules in an import cycle: {found:#?}");
}

#[test]
fn only_the_handlers_name_core() {
    let mut wrong: Vec<String> = sources()
        .iter()
        .filter(|s| s.module.first().is_some_and(|m| !HANDLERS.contains(&m.as_str())))
        .filter(|s| s.names.iter().any(|p| top(p).as_deref() == Some("core")))
        .map(|s| format!("{}.rs", s.file))
        .collect();
    wrong.sort();
    wrong.dedup();
    assert!(wrong.is_empty(), "below the handlers, these name Core: {wrong:?}");
}

#[test]
fn a_feature_names_no_handler() {
    let sources = sources();
    let mut wrong = Vec::new();
    let feature = |m: &str| !LEAVES.contains(&m) && !HANDLERS.contains(&m);
    for source in sources.iter().filter(|s| s.module.first().is_some_and(|m| feature(m))) {
        for named in source.names.iter().filter_map(|p| top(p)) {
            if HANDLERS.contains(&named.as_str()) {
                wrong.push(format!("{}.rs names {named}", source.file));
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    assert!(wrong.is_empty(), "a feature reaches up into the handlers: {wrong:#?}");
}

/// The `impl Core` methods each handler module defines (`fn name` inside `impl Core {…}`).
fn core_methods(sources: &[Source]) -> BTreeMap<String, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = BTreeMap::new();
    for source in sources.iter().filter(|s| s.module.first().is_some_and(|m| HANDLERS.contains(&m.as_str()))) {
        let text = without_comments(&std::fs::read_to_string(src.join(format!("{}.rs", source.file))).expect("source"));
        let mut inside = false;
        for line in text.lines() {
            if line.starts_with("impl Core") {
                inside = true;
            } else if line.starts_with('}') {
                inside = false;
            } else if inside && let Some(name) = method_name(line) {
                out.insert(name, source.module[0].clone());
            }
        }
    }
    out
}

/// `name` of a line `    pub(crate) async fn name(…`.
fn method_name(line: &str) -> Option<String> {
    let rest = line.strip_prefix("    ")?.trim_start_matches("pub(crate) ").trim_start_matches("pub(super) ");
    let rest = rest.trim_start_matches("pub ").trim_start_matches("async ").strip_prefix("fn ")?;
    let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
    Some(rest[..end].to_owned())
}

/// Issue 40: the façade stays thin, with the features' methods on the features (212 `impl
/// Core` methods before `Coaching` and `Governance` became objects; 104 after).
#[test]
fn core_has_under_120_methods() {
    let count = core_methods(&sources()).len();
    assert!(count < 120, "Core has {count} methods: move a feature's verbs onto its object");
    assert!(count > 20, "the reader found only {count} methods of Core: it no longer reads `impl Core` blocks");
}

#[test]
fn no_handler_calls_another_handlers_method() {
    let sources = sources();
    let methods = core_methods(&sources);
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut wrong = BTreeSet::new();
    let base = |owner: &str| matches!(owner, "core" | "project");
    for source in sources.iter().filter(|s| s.module.first().is_some_and(|m| HANDLERS.contains(&m.as_str()))) {
        let own = &source.module[0];
        if own == "dispatch" {
            continue;
        }
        let text = without_comments(&std::fs::read_to_string(src.join(format!("{}.rs", source.file))).expect("source"));
        for receiver in ["self.", "core."] {
            for (at, _) in text.match_indices(receiver) {
                if at > 0 && text.as_bytes()[at - 1].is_ascii_alphanumeric() {
                    continue;
                }
                let rest = &text[at + receiver.len()..];
                let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
                if !rest[end..].starts_with('(') {
                    continue;
                }
                if let Some(owner) = methods.get(&rest[..end]).filter(|o| *o != own && !base(o)) {
                    wrong.insert(format!("{}.rs calls {owner}'s {}", source.file, &rest[..end]));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "handlers call one another ({}): {wrong:#?}", wrong.len());
}

/// The reader above, on what it must see: braces, `super::super`, comments left out.
#[test]
fn the_reader_resolves_a_mod_rs_files_own_submodules() {
    let module = ["coaching".to_owned()];
    let modules: BTreeSet<Vec<String>> =
        [vec!["coaching".to_owned()], vec!["coaching".to_owned(), "wrapup".to_owned()]].into_iter().collect();
    let text = "pub(crate) use wrapup::WrapUps;\nlet x = serde_json::json!(1);";
    let shown: Vec<String> = child_references(text, &module, &modules).iter().map(|p| p.join("::")).collect();
    assert_eq!(shown, ["coaching::wrapup::WrapUps"]);
}

#[test]
fn the_reader_resolves_braces_super_and_skips_comments() {
    let module = ["governance".to_owned(), "programs".to_owned(), "dev".to_owned()];
    let text = "use super::{Opts, Runner};\nuse super::super::tools::ToolCall;\n// crate::core::Core\nlet x = crate::{a::b, c::{d, e}};";
    let names = references(&without_comments(text), &module);
    let shown: Vec<String> = names.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        shown,
        [
            "governance::programs::Opts",
            "governance::programs::Runner",
            "governance::tools::ToolCall",
            "a::b",
            "c::d",
            "c::e"
        ]
    );
}
