//! Property-based fuzzing of every decoder that reads untrusted input: UI frames, hook
//! payloads, the path guard, the intents YAML, the ledger and the intake guard's stored
//! events. Invariants: no panic, bad input answered with an error, nothing outside the
//! project touched, no learner file changed in coach mode. `PAIGE_FUZZ_CASES` sets the
//! number of cases per target (CI can raise it; the default keeps the suite quick).

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{TimeZone, Utc};
use paige_core::files::ProjectRoot;
use paige_core::governance::bash::{Effect, classify};
use paige_core::governance::ledger::{self, NewTrace, TraceEntry, TraceKind};
use paige_core::governance::{HookDecision, HookEvent, HookInput, Orchestration, ToolCall};
use paige_core::intake::guard::{GuardConfig, GuardEvent, Timed, replay};
use paige_core::protocol::{ClientMessage, Decoded, ServerMessage, decode};
use paige_core::{Config, Core};
use proptest::prelude::*;
use proptest::test_runner::{Config as RunnerConfig, TestRunner};
use serde_json::{Value, json};

use super::governance::INTENTS;

const DEFAULT_CASES: u32 = 48;
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/claude-code-hooks");
const HOOK_FIXTURES: &[&str] = &[
    "PostToolUse-Write-create",
    "PostToolUse-Write-update",
    "PostToolUse-mcp-check",
    "PreToolUse-Write",
    "PreToolUse-mcp-check",
    "SessionEnd",
    "SessionStart",
    "Stop",
    "UserPromptSubmit",
];

/// Field names the protocol and the hooks use, so random objects often look almost valid.
const KEYS: &[&str] = &[
    "path",
    "content",
    "fromPath",
    "toPath",
    "range",
    "textLength",
    "level",
    "previousLevel",
    "lastActionTimestamp",
    "cols",
    "rows",
    "input",
    "issueNumber",
    "title",
    "description",
    "sessionId",
    "muted",
    "code",
    "kataId",
    "statsPeriod",
    "typing",
    "text",
    "version",
    "platform",
    "windowSize",
    "width",
    "height",
    "selectedText",
    "startLine",
    "endLine",
    "language",
    "userCode",
    "command",
    "file_path",
    "content",
    "old_string",
    "new_string",
    "edits",
    "notebook_path",
    "run_in_background",
    "intent_id",
    "tool_name",
    "tool_input",
    "tool_response",
    "prompt",
    "cwd",
    "transcript_path",
];

/// Strings that probe the path guard and the decoders' edges.
fn nasty() -> Vec<String> {
    let mut out: Vec<String> = [
        "",
        ".",
        "..",
        "../sibling/secret.txt",
        "../../../../etc/passwd",
        "/etc/passwd",
        "src/main.rs",
        "src/../../sibling/secret.txt",
        "escape/secret.txt",
        "escape",
        "a\0b",
        "src/\0",
        "~/x",
        "é/ü/😀.rs",
        "src//main.rs",
        "./src/./main.rs",
        "src/main.rs/",
        "\\..\\..\\x",
        "NEW.rs",
        "src/new.rs",
        "connection:hello",
        "-1",
        "1e400",
        "null",
        "{",
        "\u{202e}rs.exe",
    ]
    .map(String::from)
    .to_vec();
    out.push("a/".repeat(300));
    out.push("x".repeat(5_000));
    out
}

fn text() -> BoxedStrategy<String> {
    prop_oneof![3 => ".{0,24}", 2 => prop::sample::select(nasty())].boxed()
}

fn key() -> BoxedStrategy<String> {
    prop_oneof![3 => prop::sample::select(KEYS).prop_map(String::from), 1 => "[a-zA-Z_]{1,8}"].boxed()
}

/// Any JSON value, a few levels deep.
fn json_value() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        prop::sample::select(vec![0i64, 1, -1, 2, 80, 24, u32::MAX as i64, i64::MAX]).prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| serde_json::Number::from_f64(f).map(Value::Number)),
        text().prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(key(), inner, 0..5).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
    .boxed()
}

/// An object of known field names with random values: often a near-valid payload.
fn object() -> BoxedStrategy<Value> {
    prop::collection::btree_map(key(), prop_oneof![2 => text().prop_map(Value::from), 1 => json_value()], 0..6)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
        .boxed()
}

fn runner() -> TestRunner {
    let cases = std::env::var("PAIGE_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(DEFAULT_CASES);
    TestRunner::new(RunnerConfig { cases, failure_persistence: None, ..RunnerConfig::default() })
}

fn run<S: Strategy>(strategy: S, test: impl Fn(S::Value) -> Result<(), TestCaseError>) {
    if let Err(err) = runner().run(&strategy, test) {
        panic!("{err}");
    }
}

/// Every file, directory and symlink under `dir` with its content (or link target).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).unwrap_or_default();
                out.insert(path, target.into_os_string().into_encoded_bytes());
            } else if meta.is_dir() {
                out.insert(path.clone(), b"<dir>".to_vec());
                walk(&path, out);
            } else {
                out.insert(path.clone(), std::fs::read(&path).unwrap_or_default());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, &mut out);
    out
}

/// Puts the files of `initial` back as they were and removes what was added since (`now`).
fn restore(initial: &BTreeMap<PathBuf, Vec<u8>>, now: &BTreeMap<PathBuf, Vec<u8>>) {
    for (path, content) in now.iter().rev() {
        match initial.get(path) {
            None if content == b"<dir>" => std::fs::remove_dir_all(path).unwrap_or_default(),
            None => std::fs::remove_file(path).unwrap_or_default(),
            Some(was) if was != content && was != b"<dir>" => std::fs::write(path, was).expect("restore"),
            Some(_) => {}
        }
    }
    for (path, was) in initial.iter().filter(|(path, _)| !now.contains_key(*path)) {
        if was == b"<dir>" {
            std::fs::create_dir_all(path).expect("restore dir");
        } else {
            std::fs::write(path, was).expect("restore file");
        }
    }
}

/// A real core over `outer/project` (with a symlink `escape` to `outer/sibling`) and a data
/// dir elsewhere, inside a runtime so background work runs too; no model API is reachable.
struct World {
    core: Arc<Core>,
    outer: tempfile::TempDir,
    _data: tempfile::TempDir,
    runtime: tokio::runtime::Runtime,
}

impl World {
    fn new() -> World {
        let outer = tempfile::tempdir().expect("outer");
        let project = outer.path().join("project");
        let sibling = outer.path().join("sibling");
        std::fs::create_dir_all(project.join("src")).expect("src");
        std::fs::create_dir_all(&sibling).expect("sibling");
        std::fs::write(project.join("src/main.rs"), "fn main() {}\n").expect("main");
        std::fs::write(project.join("README.md"), "# demo\n").expect("readme");
        std::fs::write(sibling.join("secret.txt"), "secret\n").expect("secret");
        symlink(&sibling, project.join("escape")).expect("symlink");
        let data = tempfile::tempdir().expect("data");
        let mut config = Config::new(project, data.path().to_owned(), "test");
        config.anthropic_base_url = Some("http://127.0.0.1:9".into());
        config.gh_program = Some(PathBuf::from("/nonexistent/gh"));
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("rt");
        let core = {
            let _entered = runtime.enter();
            Arc::new(Core::open(config, super::clock()).expect("core"))
        };
        World { core, outer, _data: data, runtime }
    }

    fn project(&self) -> PathBuf {
        self.outer.path().join("project")
    }

    /// Everything outside the project (the project's own files are compared separately).
    fn outside(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        let project = self.project();
        snapshot(self.outer.path()).into_iter().filter(|(p, _)| !p.starts_with(&project)).collect()
    }
}

/// A valid payload of each client type, for the fuzzer to mutate.
fn template(kind: &str) -> Value {
    let range = json!({"startLine": 1, "startColumn": 1, "endLine": 1, "endColumn": 4});
    match kind {
        "connection:hello" => json!({"version": "1", "platform": "linux", "windowSize": {"width": 800, "height": 600}}),
        "dashboard:request" => json!({"statsPeriod": "7d"}),
        "session:start" => json!({"issueNumber": 7, "title": "Add a widget", "description": "a widget"}),
        "session:resume" => json!({"sessionId": "s-1"}),
        "file:open" | "file:close" | "explorer:expand_dir" | "explorer:collapse_dir" => json!({"path": "src/main.rs"}),
        "file:save" => json!({"path": "src/main.rs", "content": "fn main() {}\n"}),
        "fs:list" => json!({"path": "src", "offset": 0}),
        "buffer:update" => json!({"path": "src/main.rs", "content": "fn main() { }\n",
                                  "cursorPosition": {"line": 1, "column": 2}, "selections": [range]}),
        "editor:tab_switch" => json!({"fromPath": "README.md", "toPath": "src/main.rs"}),
        "editor:selection" => json!({"path": "src/main.rs", "range": range, "textLength": 3}),
        "hints:level_change" => json!({"level": "line", "previousLevel": "file"}),
        "user:explain" => json!({"path": "src/main.rs", "language": "rust",
                                 "selection": {"startLine": 1, "startCol": 1, "endLine": 1, "endCol": 3},
                                 "selectedText": "fn", "surroundingContext": "fn main() {}"}),
        "user:review" => json!({"kataId": "k-1", "userCode": "fn f() {}", "activeConstraintTitles": ["short"]}),
        "user:idle_start" => json!({"lastActionTimestamp": 1_795_000_000_000i64}),
        "observer:mute" => json!({"muted": true}),
        "practice:submit_solution" => json!({"kataId": "k-1", "code": "fn f() {}", "activeConstraints": []}),
        "practice:kata_request" => json!({"kataId": "k-1"}),
        "intake:typing" => json!({"typing": true}),
        "intake:answer" => json!({"text": "I built a CLI in Rust"}),
        "terminal:input" => json!({"input": "ls\n"}),
        "terminal:resize" => json!({"cols": 80, "rows": 24}),
        _ => json!({}),
    }
}

/// `value` with some leaves replaced: by a nasty string, a random number or any JSON.
fn mutate_leaves(value: &mut Value, choices: &mut impl Iterator<Item = (u8, String, Value)>) {
    match value {
        Value::Object(map) => map.values_mut().for_each(|v| mutate_leaves(v, choices)),
        Value::Array(items) => items.iter_mut().for_each(|v| mutate_leaves(v, choices)),
        leaf => match choices.next() {
            Some((op @ 4..=5, text, _)) if leaf.is_string() => *leaf = Value::from(format!("{text}{}", op - 4)),
            Some((4..=5, _, Value::Number(n))) => *leaf = Value::Number(n),
            Some((6, text, _)) => *leaf = Value::from(text),
            Some((7, _, any)) => *leaf = any,
            _ => {}
        },
    }
}

/// One UI frame: raw text, any JSON, or a known type with a mutated valid or a random payload.
fn frame() -> BoxedStrategy<String> {
    let choice = (0u8..8, text(), json_value());
    let mutated = (prop::sample::select(ClientMessage::TYPES), prop::collection::vec(choice, 0..10)).prop_map(
        |(kind, choices)| {
            let mut payload = template(kind);
            mutate_leaves(&mut payload, &mut choices.into_iter());
            json!({"type": kind, "id": "f1", "payload": payload}).to_string()
        },
    );
    let random = (prop::sample::select(ClientMessage::TYPES), prop_oneof![3 => object(), 1 => json_value()])
        .prop_map(|(kind, payload)| json!({"type": kind, "payload": payload}).to_string());
    prop_oneof![1 => ".{0,120}", 1 => json_value().prop_map(|v| v.to_string()), 2 => random, 6 => mutated].boxed()
}

#[test]
fn ui_frames_never_panic_get_known_replies_and_change_learner_files_only_by_a_save() {
    let w = World::new();
    let _entered = w.runtime.enter();
    let conn = w.core.connect();
    let outside = w.outside();
    let initial = snapshot(&w.project());
    run(prop::collection::vec(frame(), 1..6), |frames| {
        // Each case starts from the same project: saves would otherwise pile up files that
        // every later case walks and snapshots, slowing the run quadratically.
        restore(&initial, &snapshot(&w.project()));
        for text in frames {
            let project = snapshot(&w.project());
            let decoded = decode(&text);
            let invalid = matches!(decoded, Decoded::Invalid { .. });
            let save = matches!(&decoded, Decoded::Message { message: ClientMessage::FileSave(_), .. });
            if let Some(reply) = w.core.handle_text(conn, &text) {
                let reply: Value = serde_json::from_str(&reply).map_err(|e| TestCaseError::fail(format!("{e}")))?;
                let kind = reply["type"].as_str().unwrap_or_default();
                prop_assert!(ServerMessage::TYPES.contains(&kind), "{text:?} got unknown reply {reply}");
                prop_assert!(!invalid || kind == "connection:error", "{text:?} got {reply}");
            } else {
                prop_assert!(!invalid, "{text:?} was rejected without an answer");
            }
            prop_assert!(w.outside() == outside, "{text:?} changed a file outside the project");
            prop_assert!(save || snapshot(&w.project()) == project, "{text:?} changed a learner file");
        }
        Ok(())
    });
}

/// A recorded hook payload, pointed at `root`, with random top-level and tool-input fields.
fn mutated_fixture(root: &Path) -> BoxedStrategy<Value> {
    let root = root.display().to_string();
    let fixtures: Vec<Value> = HOOK_FIXTURES
        .iter()
        .map(|name| {
            let text = std::fs::read_to_string(format!("{FIXTURES}/{name}.json")).expect("fixture");
            serde_json::from_str(&text.replace("/home/learner/project", &root)).expect("fixture json")
        })
        .collect();
    let tools = prop::sample::select(vec![
        "Write",
        "Edit",
        "MultiEdit",
        "NotebookEdit",
        "Bash",
        "Read",
        "Grep",
        "mcp__paige__get_buffer",
        "mcp__files__write_file",
        "mcp__paige__select_active_intent",
        "",
    ]);
    let file = prop_oneof![
        prop::sample::select(vec![format!("{root}/src/main.rs"), format!("{root}/escape/secret.txt")]),
        text(),
    ];
    let command = prop_oneof![
        prop::sample::select(vec!["rm -rf ..", "cat src/main.rs", "echo x > ../sibling/secret.txt", "make"])
            .prop_map(String::from),
        text(),
    ];
    (prop::sample::select(fixtures), tools, object(), file, command, object())
        .prop_map(|(mut value, tool, tool_input, file, command, top)| {
            let mut input = match tool_input {
                Value::Object(map) => map,
                _ => unreachable!("object() makes objects"),
            };
            input.insert("file_path".into(), file.into());
            input.insert("command".into(), command.into());
            value["tool_name"] = tool.into();
            value["tool_input"] = Value::Object(input);
            if let Value::Object(top) = top {
                for (k, v) in top {
                    value[k] = v;
                }
            }
            value
        })
        .boxed()
}

#[test]
fn hook_payloads_never_panic_never_let_a_write_through_in_coach_mode_and_change_no_file() {
    let w = World::new();
    let _entered = w.runtime.enter();
    let outside = w.outside();
    let project = snapshot(&w.project());
    let payload = prop_oneof![1 => json_value(), 3 => mutated_fixture(&w.project())];
    run((prop::sample::select(HookEvent::ALL.to_vec()), payload), |(event, value)| {
        let Ok(input) = serde_json::from_value::<HookInput>(value) else { return Ok(()) };
        let decision = w.core.handle_hook(event, &input);
        let must_object = event == HookEvent::PreToolUse
            && match input.call() {
                ToolCall::Write { .. }
                | ToolCall::OtherMcp { .. }
                | ToolCall::Refused { .. }
                | ToolCall::Unknown { .. } => true,
                ToolCall::Bash { parsed, .. } => parsed.effect != Effect::ReadOnly,
                _ => false,
            };
        prop_assert!(!must_object || decision != HookDecision::None, "coach mode let {input:?} through");
        prop_assert!(w.outside() == outside, "{input:?} changed a file outside the project");
        prop_assert!(snapshot(&w.project()) == project, "{input:?} changed a learner file");
        Ok(())
    });
}

#[test]
fn governed_hooks_over_a_mutated_intents_file_and_ledger_fail_safe_and_change_no_learner_file() {
    let w = World::new();
    let _entered = w.runtime.enter();
    let orch = Orchestration::new(&w.project());
    orch.init().expect("init");
    let (outside, orchestration) = (w.outside(), orch.dir());
    // Governance's own files: `.orchestration/`, and the Shared Brain (`AGENT.md`), where an
    // intent completed in State 3 leaves a lesson (FR-010) — checked apart, as append-only.
    let brain = w.project().join("AGENT.md");
    let learner =
        || snapshot(&w.project()).into_iter().filter(|(p, _)| !p.starts_with(&orchestration) && *p != brain).collect();
    let project: BTreeMap<PathBuf, Vec<u8>> = learner();
    let lessons_before = std::cell::RefCell::new(String::new());
    let events = prop::sample::select(HookEvent::ALL.to_vec());
    let edits = prop_oneof![1 => Just(Vec::new()), 2 => edits(4)];
    run((edits, ".{0,40}", events, mutated_fixture(&w.project())), |(edits, garbage, event, value)| {
        std::fs::write(orch.intents_path(), mutate(INTENTS.to_owned(), edits)).expect("intents");
        let trace = std::fs::read_to_string(orch.trace_path()).unwrap_or_default();
        std::fs::write(orch.trace_path(), trace + &garbage).expect("ledger");
        let Ok(input) = serde_json::from_value::<HookInput>(value) else { return Ok(()) };
        let decision = w.core.handle_hook(event, &input);
        let corrupt = orch.load().is_err();
        let mutating = event == HookEvent::PreToolUse && input.call().may_mutate();
        prop_assert!(!(corrupt && mutating) || decision != HookDecision::None, "corrupt intents let {input:?} through");
        prop_assert!(w.outside() == outside, "{input:?} changed a file outside the project");
        prop_assert!(learner() == project, "{input:?} changed a learner file");
        let lessons = std::fs::read_to_string(&brain).unwrap_or_default();
        let before = lessons_before.replace(lessons.clone());
        let added = lessons.strip_prefix(before.as_str());
        prop_assert!(added.is_some(), "{input:?} rewrote AGENT.md instead of appending to it");
        let added = added
            .unwrap_or_default()
            .trim_start_matches("# Shared Brain\n\nLessons agents learned in this project.\n\n");
        prop_assert!(
            added.lines().all(|l| l.starts_with("- ") && l.as_bytes().get(12) == Some(&b':')),
            "{input:?} added to AGENT.md what is not a dated lesson: {added:?}"
        );
        Ok(())
    });
}

#[test]
fn the_bash_classifier_takes_any_command_line() {
    let line = prop_oneof![
        ".{0,200}",
        prop::collection::vec(
            prop_oneof![
                prop::sample::select(vec![
                    "rm", "cat", "sed -i", "|", "&&", ";", ">", ">>", "<<EOF", "$(", ")", "`", "'", "\"", "\\", "sudo",
                    "env", "xargs", "-c", "bash", "{", "}", "(", "&", "\n", "#", "=", "*",
                ])
                .prop_map(String::from),
                text(),
            ],
            0..16
        )
        .prop_map(|parts| parts.join(" ")),
    ];
    run(line, |command| {
        let _ = classify(&command);
        Ok(())
    });
}

#[test]
fn a_resolved_path_never_leaves_the_root_whatever_the_string() {
    let w = World::new();
    let root = ProjectRoot::new(&w.project()).expect("root");
    let canonical_root = root.path().canonicalize().expect("canonical root");
    let path = prop_oneof![
        text(),
        prop::collection::vec(prop::sample::select(nasty()), 1..5).prop_map(|p| p.join("/")),
        ".{0,40}".prop_map(|s| format!("{}/{s}", w.project().display())),
    ];
    run(path, |input| {
        if let Ok(resolved) = root.resolve(&input) {
            let abs = resolved.abs();
            let parent = abs.parent().expect("a resolved path has a parent");
            let mut existing = parent.to_owned();
            while !existing.exists() {
                existing = existing.parent().expect("the root exists").to_owned();
            }
            let real = existing.canonicalize().expect("canonical parent");
            prop_assert!(real.starts_with(&canonical_root), "{input:?} resolved to {}", abs.display());
            prop_assert!(abs != canonical_root.as_path(), "{input:?} resolved to the root itself");
        }
        Ok(())
    });
}

/// `text` with up to `edits` characters replaced, inserted or deleted at random places.
fn mutate(text: String, edits: Vec<(usize, u8, char)>) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for (at, op, c) in edits {
        let at = at % (chars.len() + 1);
        match op % 3 {
            0 if at < chars.len() => chars[at] = c,
            1 => chars.insert(at, c),
            _ if at < chars.len() => {
                chars.remove(at);
            }
            _ => {}
        }
    }
    chars.into_iter().collect()
}

fn edits(max: usize) -> impl Strategy<Value = Vec<(usize, u8, char)>> {
    let c = prop_oneof![
        prop::sample::select(vec![':', '-', ' ', '\n', '[', ']', '{', '}', '"', '\'', '&', '*', '!', '#', '|', '\t']),
        any::<char>(),
    ];
    prop::collection::vec((any::<usize>(), any::<u8>(), c), 1..max)
}

#[test]
fn a_random_or_mutated_intents_file_loads_or_fails_clearly() {
    let tmp = tempfile::tempdir().expect("project");
    let orch = Orchestration::new(tmp.path());
    orch.init().expect("init");
    let yaml = prop_oneof![
        3 => edits(12).prop_map(|e| mutate(INTENTS.to_owned(), e)),
        1 => ".{0,200}",
        1 => json_value().prop_map(|v| v.to_string()),
    ];
    run(yaml, |yaml| {
        std::fs::write(orch.intents_path(), &yaml).expect("write");
        if let Err(err) = orch.load() {
            prop_assert!(!err.to_string().is_empty(), "an empty error for {yaml:?}");
        }
        Ok(())
    });
}

/// A valid ledger of `n` lines, as written by [`ledger::append`].
fn valid_ledger(dir: &Path, n: usize) -> String {
    let path = dir.join("agent_trace.jsonl");
    let _ = std::fs::remove_file(&path);
    for i in 0..n {
        let new = NewTrace {
            id: format!("t{i}"),
            timestamp: Utc.with_ymd_and_hms(2026, 11, 22, 10, 0, i as u32).single().expect("time"),
            kind: if i % 3 == 2 { TraceKind::Denial } else { TraceKind::Mutation },
            intent_id: Some("INT-001".into()),
            session_id: "s".into(),
            model: None,
            tool: "Write".into(),
            file: Some(format!("src/f{i}.rs")),
            blocks: Vec::new(),
            file_hash: Some(ledger::sha256_hex(format!("{i}").as_bytes())),
            command: None,
            reason: Some(if i % 3 == 2 { "out of scope" } else { "the intent's work" }.into()),
        };
        ledger::append(&path, new).expect("append");
    }
    std::fs::read_to_string(&path).expect("ledger")
}

#[test]
fn a_mutated_ledger_line_is_reported_as_broken_and_reading_never_panics() {
    let tmp = tempfile::tempdir().expect("dir");
    let path = tmp.path().join("agent_trace.jsonl");
    run((1..6usize, any::<usize>(), edits(4)), |(n, which, edits)| {
        let text = valid_ledger(tmp.path(), n);
        prop_assert_eq!(ledger::verify(&text), Ok(n));
        let mut lines: Vec<String> = text.lines().map(String::from).collect();
        let which = which % n;
        let edits = edits.into_iter().filter(|(_, _, c)| *c != '\n' && *c != '\r').collect();
        lines[which] = mutate(lines[which].clone(), edits);
        let mutated = lines.join("\n") + "\n";
        std::fs::write(&path, &mutated).expect("write");
        let _ = ledger::read_all(&path).expect("readable");
        let before: TraceEntry = serde_json::from_str(text.lines().nth(which).expect("line")).expect("entry");
        let after = serde_json::from_str::<TraceEntry>(&lines[which]).ok();
        match ledger::verify(&mutated) {
            Ok(count) => prop_assert!(
                count == n && after.as_ref() == Some(&before),
                "line {} changed to {:?} but the ledger verified",
                which + 1,
                lines[which]
            ),
            Err(broken) => prop_assert!(broken.line <= which + 1, "{broken} after a change on line {}", which + 1),
        }
        Ok(())
    });
}

/// A guard event: any JSON, or a known `type` with random fields.
fn guard_event() -> BoxedStrategy<Value> {
    let kinds = vec![
        "questionDelivered",
        "replyStarted",
        "replyFinished",
        "typingStarted",
        "typingStopped",
        "answerSubmitted",
        "control",
        "controlFailed",
        "tick",
    ];
    let field = prop_oneof![
        Just("turn"),
        Just("question"),
        Just("kind"),
        Just("answer"),
        Just("pillars"),
        Just("newProject"),
        Just("error"),
        Just("adaptability"),
        Just("creativity"),
        Just("reasoning"),
    ];
    let typed = (prop::sample::select(kinds), prop::collection::btree_map(field, json_value(), 0..5)).prop_map(
        |(kind, fields)| {
            let mut map: serde_json::Map<String, Value> = fields.into_iter().map(|(k, v)| (k.into(), v)).collect();
            map.insert("type".into(), kind.into());
            Value::Object(map)
        },
    );
    prop_oneof![1 => json_value(), 3 => typed].boxed()
}

#[test]
fn stored_intake_guard_events_replay_without_panicking_whatever_they_hold() {
    let events = prop::collection::vec((any::<i64>(), guard_event()), 0..24);
    run((events, any::<bool>()), |(events, short)| {
        let mut timed: Vec<Timed> = events
            .into_iter()
            .filter_map(|(at_ms, value)| {
                serde_json::from_value::<GuardEvent>(value).ok().map(|event| Timed { at_ms, event })
            })
            .collect();
        let config =
            if short { GuardConfig { timebox_ms: 1, ..GuardConfig::default() } } else { GuardConfig::default() };
        let _ = replay(&config, &timed);
        timed.sort_by_key(|t| t.at_ms);
        let _ = replay(&config, &timed);
        Ok(())
    });
}
