use paige_core::protocol::*;
use proptest::prelude::*;
use serde_json::{Value, json};

use super::test_core;

const CONN: ConnectionId = ConnectionId(1);

fn reply(t: &super::TestCore, frame: Value) -> Option<Value> {
    t.core.handle_text(CONN, &frame.to_string()).map(|text| serde_json::from_str(&text).expect("reply is JSON"))
}

#[test]
fn catalog_has_the_spec_types_and_paiges_coaching_extensions() {
    // The spec's 23 client types and Paige's eighteen: `session:list`, `coaching:show_me`,
    // `coaching:phase_done`, `coaching:replan`, `practice:list`, `practice:kata_request`, the
    // intake interview's four, the learning signals' three (issue 30), spaced review's
    // three with the record's export (issue 31), and the explorer's `fs:list` (issue 32).
    assert_eq!(ClientMessage::TYPES.len(), 41);
    for extension in [
        "session:list",
        "coaching:show_me",
        "coaching:phase_done",
        "coaching:replan",
        "practice:list",
        "practice:kata_request",
        "intake:start",
        "intake:typing",
        "intake:answer",
        "intake:skip",
        "learning:answer",
        "learning:skip",
        "learning:retry",
        "reviews:list",
        "reviews:start",
        "reviews:answer",
        "record:export",
        "fs:list",
    ] {
        assert!(ClientMessage::TYPES.contains(&extension), "{extension}");
    }
    let catalog = [
        "connection:init",
        "connection:error",
        "dashboard:dreyfus",
        "dashboard:state",
        "dashboard:issues",
        "dashboard:issues_error",
        "fs:tree",
        "fs:tree_update",
        "fs:content",
        "fs:save_ack",
        "fs:save_error",
        "editor:decorations",
        "editor:clear_decorations",
        "editor:hover_hint",
        "editor:open_file",
        "editor:highlight_lines",
        "editor:clear_highlights",
        "explorer:hint_files",
        "explorer:clear_hints",
        "session:started",
        "session:resumed",
        "session:ended",
        "coaching:phase_update",
        "coaching:message",
        "coaching:issue_context",
        "coaching:plan_ready",
        "observer:nudge",
        "observer:status",
        "explain:response",
        "review:response",
        "practice:kata_load",
        "practice:solution_review",
    ];
    let revisions =
        ["session:completed", "explain:error", "review:error", "dashboard:materials", "dashboard:materials_error"];
    let extensions = [
        "session:options",
        "coaching:worked_example",
        "coaching:worked_example_error",
        "coaching:step_check",
        "coaching:agent_activity",
        "coaching:plan_failed",
        "session:wrapping_up",
        "practice:katas",
        "practice:kata_error",
        "intake:sentence",
        "intake:reply_done",
        "intake:state",
        "intake:transition",
        "intake:error",
        "learning:check",
        "learning:signals",
        "learning:error",
        "reviews:due",
        "reviews:question",
        "reviews:graded",
        "reviews:error",
        "record:exported",
        "record:error",
        "fs:children",
        "fs:list_error",
    ];
    assert_eq!(catalog.len(), 32);
    let mut expected: Vec<&str> = catalog.iter().chain(revisions.iter()).chain(extensions.iter()).copied().collect();
    let mut actual = ServerMessage::TYPES.to_vec();
    expected.sort_unstable();
    actual.sort_unstable();
    assert_eq!(actual, expected);
}

#[test]
fn decoding_classifies_bad_frames() {
    let code = |text: &str| match decode(text) {
        Decoded::Invalid { error, .. } => format!("{:?}", error.code),
        Decoded::Unknown { type_name } => format!("unknown {type_name}"),
        Decoded::Message { message, .. } => format!("ok {}", message.type_name()),
    };
    assert_eq!(code("{not json"), "InvalidJson");
    assert_eq!(code(""), "InvalidJson");
    assert_eq!(code("[1,2]"), "InvalidMessage");
    assert_eq!(code(r#"{"payload":{}}"#), "InvalidMessage");
    assert_eq!(code(r#"{"type":"file:open","payload":{"path":42}}"#), "InvalidPayload");
    assert_eq!(code(r#"{"type":"file:open","payload":{}}"#), "InvalidPayload");
    assert_eq!(code(r#"{"payload":{"path":1},"type":"file:open"}"#), "InvalidPayload", "payload before type");
    assert_eq!(code(r#"{"payload":{"path":"a"},"type":"file:open"}"#), "ok file:open", "payload before type");
    assert_eq!(code(r#"{"type":"file:open","payload":{"path":"a"}} trailing"#), "InvalidJson");
    match decode(r#"{"type":"file:open","id":"q9","payload":{"path":[]}}"#) {
        Decoded::Invalid { id, error } => {
            assert_eq!(id.as_deref(), Some("q9"), "the id survives a bad payload");
            assert!(error.message.starts_with("invalid payload for file:open"), "{}", error.message);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(code(r#"{"type":"telepathy:send","payload":{}}"#), "unknown telepathy:send");
    assert_eq!(code(r#"{"type":"session:end"}"#), "ok session:end", "a missing payload is {{}}");
    assert_eq!(
        code(r#"{"type":"file:open","payload":{"path":"a.rs","extra":1},"id":"r1","timestamp":1}"#),
        "ok file:open"
    );
}

#[test]
fn server_messages_travel_in_the_spec_envelope() {
    let frame =
        encode(&ServerMessage::FsSaveAck(SaveAck { path: "a.rs".into(), success: true, timestamp: 5 }), Some("r1"), 99);
    assert_eq!(
        serde_json::from_str::<Value>(&frame).expect("json"),
        json!({"type": "fs:save_ack", "payload": {"path": "a.rs", "success": true, "timestamp": 5}, "id": "r1", "timestamp": 99})
    );
}

#[test]
fn hello_stores_metadata_and_answers_init_with_the_request_id() {
    let t = test_core(&[]);
    let conn = t.core.connect();
    let frame = json!({"type": "connection:hello", "id": "h1", "timestamp": 1,
        "payload": {"version": "0.1.0", "platform": "linux", "windowSize": {"width": 1280, "height": 800}}});
    let reply: Value =
        serde_json::from_str(&t.core.handle_text(conn, &frame.to_string()).expect("reply")).expect("json");
    assert_eq!(reply["type"], "connection:init");
    assert_eq!(reply["id"], "h1");
    assert_eq!(reply["payload"]["sessionId"], Value::Null);
    let capabilities = reply["payload"]["capabilities"].as_array().expect("list");
    assert!(capabilities.contains(&json!("file:open")) && capabilities.contains(&json!("dashboard:request")));
    assert!(!capabilities.contains(&json!("terminal:input")), "a UI without a terminal");
    assert_eq!(reply["payload"]["featureFlags"]["observer"], true);
    assert_eq!(reply["payload"]["featureFlags"]["dashboard"], true);
    let meta = t.core.connection(conn).expect("tracked");
    assert_eq!((meta.platform.as_deref(), meta.window_size.map(|w| w.width)), (Some("linux"), Some(1280)));
    t.core.disconnect(conn);
    assert_eq!(t.core.connection_count(), 0);
}

#[test]
fn hello_sends_the_project_tree_to_that_ui_only_so_n_uis_cost_n_frames() {
    let t = test_core(&[("src/main.rs", "fn main() {}\n"), ("README.md", "# r\n")]);
    let mut events = t.core.subscribe();
    let other = t.core.connect();
    let conn = t.core.connect();
    let frame = json!({"type": "connection:hello", "timestamp": 1,
        "payload": {"version": "0.1.0", "platform": "linux", "windowSize": {"width": 1, "height": 1}}});
    t.core.handle_text(conn, &frame.to_string()).expect("reply");
    let mut trees = Vec::new();
    while let Ok(event) = events.try_recv() {
        match event {
            paige_core::Event::UiTo { connection, message: ServerMessage::FsTree(tree) } => {
                trees.push((connection, tree))
            }
            paige_core::Event::Ui(ServerMessage::FsTree(_)) => panic!("hello broadcast the tree to every UI"),
            _ => {}
        }
    }
    assert_eq!(trees.len(), 1, "one tree, for the UI that said hello");
    let (to, tree) = &trees[0];
    assert_eq!(*to, conn);
    assert_ne!(*to, other);
    let names: Vec<&str> = tree.root.children.iter().flatten().map(|n| n.path.as_str()).collect();
    assert_eq!(names, ["src", "README.md"]);
}

#[test]
fn terminal_input_from_a_ui_without_a_terminal_is_refused_as_an_invalid_message() {
    let t = test_core(&[]);
    let reply = reply(&t, json!({"type": "terminal:input", "payload": {"input": "ls\n"}})).expect("reply");
    assert_eq!(reply["type"], "connection:error");
    assert_eq!(reply["payload"]["code"], "INVALID_MESSAGE", "the sender's mistake, not a missing feature");
    assert_eq!(reply["payload"]["context"]["type"], "terminal:input");
    assert!(reply["payload"]["message"].as_str().is_some_and(|m| m.contains("no terminal")), "{reply}");
}

#[test]
fn file_open_outside_the_project_or_missing_is_an_error_reply() {
    let t = test_core(&[("a.rs", "x")]);
    let rejected =
        reply(&t, json!({"type": "file:open", "payload": {"path": "../../etc/passwd"}})).expect("error reply");
    assert_eq!(rejected["payload"]["code"], "PATH_REJECTED");
    assert!(t.core.open_files().is_empty());
    let missing = reply(&t, json!({"type": "file:open", "payload": {"path": "missing.rs"}})).expect("error reply");
    assert_eq!(missing["payload"]["code"], "FILE_NOT_FOUND");
}

#[test]
fn terminal_resize_stores_the_dimensions() {
    let t = test_core(&[]);
    assert_eq!(reply(&t, json!({"type": "terminal:resize", "payload": {"cols": 120, "rows": 40}})), None);
    assert_eq!(t.core.terminal_size(), Some(TerminalSize { cols: 120, rows: 40 }));
}

#[test]
fn open_files_follow_open_and_close() {
    let t = test_core(&[("a.rs", "a"), ("b.rs", "b")]);
    for path in ["a.rs", "b.rs"] {
        assert_eq!(reply(&t, json!({"type": "file:open", "payload": {"path": path}})), None);
    }
    assert_eq!(reply(&t, json!({"type": "file:close", "payload": {"path": "./a.rs"}})), None);
    assert_eq!(t.core.open_files(), ["b.rs"]);
}

#[test]
fn buffers_diffs_and_binary_files() {
    let t = test_core(&[("a.rs", "one\ntwo\n"), ("img.png", "png"), ("gone.rs", "bye\n")]);
    assert_eq!(t.core.diff("a.rs").expect("diff"), "", "no buffer → empty diff");
    let update = |path: &str, content: &str| json!({"type": "buffer:update", "payload": {"path": path, "content": content, "cursorPosition": {"line": 2, "column": 1}, "selections": []}});
    assert_eq!(reply(&t, update("a.rs", "one\n2\n")), None);
    let buffer = t.core.buffer("a.rs").expect("path").expect("buffer");
    assert!(buffer.dirty);
    assert_eq!(buffer.cursor_position, CursorPosition { line: 2, column: 1 });
    assert_eq!(t.core.diff("a.rs").expect("diff"), "--- a/a.rs\n+++ b/a.rs\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n");

    let rejected = reply(&t, update("img.png", "text")).expect("binary rejected");
    assert_eq!(rejected["payload"]["code"], "BINARY_FILE");
    assert_eq!(t.core.buffer("img.png").expect("path"), None, "binary never cached");

    assert_eq!(reply(&t, update("gone.rs", "bye\nagain\n")), None);
    std::fs::remove_file(t.project.path().join("gone.rs")).expect("delete");
    assert_eq!(
        t.core.diff("gone.rs").expect("diff"),
        "--- a/gone.rs\n+++ b/gone.rs\n@@ -0,0 +1,2 @@\n+bye\n+again\n",
        "deleted on disk → diff against empty"
    );
    let dirty: Vec<String> = t.core.dirty_diffs().into_iter().map(|d| d.path).collect();
    assert_eq!(dirty, ["a.rs", "gone.rs"]);

    let saved = json!({"type": "file:save", "payload": {"path": "a.rs", "content": "one\n2\n"}});
    assert_eq!(reply(&t, saved), None);
    assert_eq!(std::fs::read_to_string(t.project.path().join("a.rs")).expect("read"), "one\n2\n");
    assert!(!t.core.buffer("a.rs").expect("path").expect("buffer").dirty, "saved → clean");
    assert_eq!(t.core.diff("a.rs").expect("diff"), "");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn no_frame_can_panic_the_dispatcher(text in ".{0,200}", kind in prop::sample::select(ClientMessage::TYPES.to_vec()), payload in ".{0,60}") {
        let t = test_core(&[]);
        let _ = t.core.handle_text(CONN, &text);
        let _ = t.core.handle_text(CONN, &format!(r#"{{"type":"{kind}","payload":{payload}}}"#));
        let _ = t.core.handle_text(CONN, &format!(r#"{{"type":"{kind}","payload":{{"path":{}}}}}"#, serde_json::to_string(&payload).expect("json")));
    }
}

#[test]
fn diff_follows_changes_to_the_buffer_and_to_the_disk() {
    let t = test_core(&[("a.rs", "a\nb\n")]);
    let update = |content: &str| json!({"type": "buffer:update", "payload": {"path": "a.rs", "content": content}});
    reply(&t, update("a.rs\nB\n"));
    reply(&t, update("a\nB\n"));
    let first = t.core.diff("a.rs").expect("diff");
    assert!(first.contains("-b\n+B\n"), "{first}");
    assert_eq!(t.core.diff("a.rs").expect("diff"), first, "unchanged → same diff");

    reply(&t, update("a\nC\n"));
    assert!(t.core.diff("a.rs").expect("diff").contains("+C\n"), "a new buffer version is diffed afresh");

    std::fs::write(t.project.path().join("a.rs"), "a\nC\n").expect("write");
    assert_eq!(t.core.diff("a.rs").expect("diff"), "", "the file changed on disk (same length) → diffed afresh");
    std::fs::remove_file(t.project.path().join("a.rs")).expect("delete");
    assert_eq!(t.core.diff("a.rs").expect("diff"), "--- a/a.rs\n+++ b/a.rs\n@@ -0,0 +1,2 @@\n+a\n+C\n");
}

#[test]
fn only_memory_only_frames_may_run_on_the_async_runtime() {
    use paige_core::protocol::decode;
    let frame = |kind: &str, payload: serde_json::Value| json!({"type": kind, "payload": payload}).to_string();
    let update =
        frame("buffer:update", json!({"path": "a.rs", "content": "x", "cursorPosition": {"line": 1, "column": 1}}));
    assert!(!decode(&update).may_block(), "buffer:update is memory-only");
    assert!(!decode("not json").may_block(), "a bad frame is answered at once");
    for blocking in [
        frame("file:open", json!({"path": "a.rs"})),
        frame("file:save", json!({"path": "a.rs", "content": "x"})),
        frame(
            "connection:hello",
            json!({"version": "1", "platform": "linux", "windowSize": {"width": 1, "height": 1}}),
        ),
        frame("terminal:input", json!({"input": "ls\r"})),
        frame("session:start", json!({"issueNumber": 1})),
    ] {
        assert!(decode(&blocking).may_block(), "{blocking}");
    }
}

#[test]
fn hello_says_memory_exactly_while_this_paige_has_a_store_that_answers() {
    let project = tempfile::tempdir().expect("project");
    let data = tempfile::tempdir().expect("data");
    let config = paige_core::Config::new(project.path().to_owned(), data.path().to_owned(), "test");
    let store = Box::new(super::wrapup::ListStore::default());
    let memory = paige_core::memory::Memory::new(store, Err("no model here".into()));
    let core = std::sync::Arc::new(paige_core::Core::open(config, super::clock()).expect("core").with_memory(memory));
    let hello = json!({"type": "connection:hello", "timestamp": 1,
        "payload": {"version": "0.1.0", "platform": "linux", "windowSize": {"width": 1, "height": 1}}});
    let reply: Value =
        serde_json::from_str(&core.handle_text(core.connect(), &hello.to_string()).expect("reply")).expect("json");
    assert_eq!(reply["payload"]["featureFlags"]["memory"], true);
    let without = test_core(&[]);
    let reply: Value =
        serde_json::from_str(&without.core.handle_text(without.core.connect(), &hello.to_string()).expect("reply"))
            .expect("json");
    assert_eq!(reply["payload"]["featureFlags"]["memory"], false, "no store configured");
}
