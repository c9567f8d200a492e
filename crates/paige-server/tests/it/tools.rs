//! The MCP tool surface through the real rmcp client over HTTP, in both protocol eras.

use std::time::Duration;

use futures_util::StreamExt;
use paige_core::db::{ActionType, HintLevel, NewPhase};
use rmcp::model::{CallToolRequestParams, CallToolResult, ProtocolVersion};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::{Running, TOKEN, running};

type Client = RunningService<RoleClient, ()>;

/// Coach mode's tools; a governed project is also offered `select_active_intent` (mcp.rs).
const TOOLS: [&str; 14] = [
    "paige_clear_highlights",
    "paige_clear_hints",
    "paige_end_session",
    "paige_get_buffer",
    "paige_get_diff",
    "paige_get_open_files",
    "paige_get_session_state",
    "paige_highlight_lines",
    "paige_hint_files",
    "paige_open_file",
    "paige_run_coaching_pipeline",
    "paige_show_issue_context",
    "paige_show_message",
    "paige_update_phase",
];

pub(crate) fn transport(server: &Running) -> StreamableHttpClientTransport<reqwest::Client> {
    StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", server.base)).auth_header(TOKEN),
    )
}

/// A 2025-11-25 client with a session.
pub(crate) async fn session_client(server: &Running) -> Client {
    ().serve(transport(server)).await.expect("initialize")
}

/// A 2026-07-28 client: stateless POSTs, as current Claude Code sends them.
pub(crate) async fn stateless_client(server: &Running) -> Client {
    ().serve_with_lifecycle(
        transport(server),
        ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] },
    )
    .await
    .expect("discover")
}

pub(crate) async fn call(client: &Client, tool: &str, args: Value) -> CallToolResult {
    let Value::Object(args) = args else { panic!("arguments must be an object") };
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args))
        .await
        .expect("tools/call answered")
}

pub(crate) fn ok(result: &CallToolResult) -> &Value {
    assert_ne!(result.is_error, Some(true), "tool failed: {result:?}");
    result.structured_content.as_ref().expect("structured content")
}

pub(crate) fn error_text(result: &CallToolResult) -> String {
    assert_eq!(result.is_error, Some(true), "expected a tool error: {result:?}");
    result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("\n")
}

fn write(server: &Running, path: &str, content: &str) {
    let full = server.fixture.core.project_root().path().join(path);
    std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
    std::fs::write(full, content).expect("write");
}

fn edit(server: &Running, path: &str, content: &str) {
    let frame = json!({"type": "buffer:update", "payload": {"path": path, "content": content, "cursorPosition": {"line": 1, "column": 1}}});
    let conn = server.fixture.core.connect();
    assert_eq!(server.fixture.core.handle_text(conn, &frame.to_string()), None);
}

/// A `/ws` client collecting broadcasts, returned once the server counts its connection
/// (and so has subscribed it to the event bus): a broadcast made right after reaches it.
pub(crate) async fn ui(
    server: &Running,
) -> tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>> {
    let before = server.fixture.core.connection_count();
    let url = format!("{}/ws?token={TOKEN}", server.base.replace("http://", "ws://"));
    let socket = tokio_tungstenite::connect_async(url).await.expect("ws").0;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while server.fixture.core.connection_count() <= before && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    socket
}

/// The payloads of the `kind` frames arriving until `within` passes without a frame (every
/// frame whole when `kind` is empty).
pub(crate) async fn frames_of(
    socket: &mut tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>,
    kind: &str,
    within: Duration,
) -> Vec<Value> {
    let mut found = Vec::new();
    while let Ok(Some(Ok(Message::Text(text)))) = tokio::time::timeout(within, socket.next()).await {
        let frame: Value = serde_json::from_str(text.as_str()).expect("json");
        // An empty `kind` keeps every frame, whole.
        if kind.is_empty() {
            found.push(frame);
        } else if frame["type"] == kind {
            found.push(frame["payload"].clone());
        }
    }
    found
}

#[tokio::test]
async fn both_eras_list_the_14_coaching_tools_with_model_friendly_schemas() {
    let server = running().await;
    for client in [session_client(&server).await, stateless_client(&server).await] {
        let tools = client.list_all_tools().await.expect("tools/list");
        let mut names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
        names.sort();
        assert_eq!(names, TOOLS);
        for tool in &tools {
            assert!(tool.description.as_ref().is_some_and(|d| d.len() > 30), "{} needs a real description", tool.name);
            let schema = serde_json::to_string(&tool.input_schema).expect("schema");
            assert!(!schema.contains("uint"), "{} uses an unsigned format: {schema}", tool.name);
        }
        client.cancel().await.expect("close");
    }
}

#[tokio::test]
async fn no_tool_can_write_a_file() {
    let server = running().await;
    write(&server, "src/a.rs", "fn a() {}\n");
    server.fixture.core.coaching().start_session(Some(1), None).expect("session");
    edit(&server, "src/a.rs", "fn a() { changed }\n");
    let client = stateless_client(&server).await;
    let before = snapshot(server.fixture.core.project_root().path());
    for tool in TOOLS {
        let _ = call(&client, tool, json!({"path": "src/a.rs", "content": "pwned", "start": 1, "end": 1, "style": "focus",
            "hints": [{"path": "src/a.rs", "style": "important"}], "phase": 1, "status": "active", "message": "m", "type": "info",
            "number": 1, "title": "t", "summary": "s", "planText": "p", "issueSummary": "s", "sessionTranscript": "t", "intent_id": "INT-001"})).await;
    }
    assert_eq!(snapshot(server.fixture.core.project_root().path()), before, "the project is byte-for-byte unchanged");
}

fn snapshot(root: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> =
        walk(root).into_iter().map(|p| (p.display().to_string(), std::fs::read(&p).unwrap_or_default())).collect();
    files.sort();
    files
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|e| if e.path().is_dir() { walk(&e.path()) } else { vec![e.path()] })
        .collect()
}

#[tokio::test]
async fn get_buffer_returns_the_dirty_buffer_or_null() {
    let server = running().await;
    write(&server, "src/auth.ts", "export {}\n");
    edit(&server, "src/auth.ts", "export const token = 1;\n");
    let client = session_client(&server).await;
    let buffer = ok(&call(&client, "paige_get_buffer", json!({"path": "src/auth.ts"})).await)["buffer"].clone();
    assert_eq!(buffer["path"], "src/auth.ts");
    assert_eq!(buffer["content"], "export const token = 1;\n");
    assert_eq!(buffer["dirty"], true);
    assert_eq!(buffer["cursorPosition"], json!({"line": 1, "column": 1}));
    assert!(buffer["lastUpdated"].as_str().is_some_and(|t| t.ends_with('Z')));
    let missing = call(&client, "paige_get_buffer", json!({"path": "unknown.ts"})).await;
    assert_eq!(ok(&missing)["buffer"], Value::Null);
    let outside = call(&client, "paige_get_buffer", json!({"path": "../../etc/passwd"})).await;
    assert!(error_text(&outside).contains("contains '..'"));
}

#[tokio::test]
async fn open_files_are_tracked_across_the_ui_and_mcp() {
    let server = running().await;
    for f in ["a.rs", "b.rs", "c.rs", "d.rs"] {
        write(&server, f, "x\n");
    }
    let conn = server.fixture.core.connect();
    for f in ["a.rs", "b.rs", "c.rs"] {
        server.fixture.core.handle_text(conn, &json!({"type": "file:open", "payload": {"path": f}}).to_string());
    }
    let client = stateless_client(&server).await;
    let mut socket = ui(&server).await;
    let opened = ok(&call(&client, "paige_open_file", json!({"path": "d.rs"})).await).clone();
    assert_eq!(opened, json!({"success": true, "path": "d.rs", "lineCount": 1, "language": "rust"}));
    let files = ok(&call(&client, "paige_get_open_files", json!({})).await)["files"].clone();
    assert_eq!(files, json!(["a.rs", "b.rs", "c.rs", "d.rs"]));
    let broadcasts = frames_of(&mut socket, "editor:open_file", Duration::from_millis(300)).await;
    assert_eq!(broadcasts.len(), 1);
    assert_eq!(broadcasts[0]["content"], "x\n");
}

#[tokio::test]
async fn opening_a_missing_file_is_an_error_and_broadcasts_nothing() {
    let server = running().await;
    let client = session_client(&server).await;
    let mut socket = ui(&server).await;
    let result = call(&client, "paige_open_file", json!({"path": "src/nope.ts"})).await;
    assert_eq!(error_text(&result), "file not found: src/nope.ts");
    let outside = call(&client, "paige_open_file", json!({"path": "/etc/passwd"})).await;
    assert!(error_text(&outside).contains("outside the project"));
    assert!(frames_of(&mut socket, "editor:open_file", Duration::from_millis(300)).await.is_empty());
}

#[tokio::test]
async fn get_diff_returns_one_file_or_only_the_dirty_ones() {
    let server = running().await;
    for f in ["one.rs", "two.rs", "clean.rs"] {
        write(&server, f, "a\nb\n");
    }
    edit(&server, "one.rs", "a\nB\n");
    edit(&server, "two.rs", "a\nb\nc\n");
    edit(&server, "clean.rs", "a\nb\n");
    let conn = server.fixture.core.connect();
    server.fixture.core.handle_text(
        conn,
        &json!({"type": "file:save", "payload": {"path": "clean.rs", "content": "a\nb\n"}}).to_string(),
    );
    let client = stateless_client(&server).await;
    let all = call(&client, "paige_get_diff", json!({})).await;
    let paths: Vec<Value> = ok(&all)["diffs"].as_array().expect("list").iter().map(|d| d["path"].clone()).collect();
    assert_eq!(paths, [json!("one.rs"), json!("two.rs")]);
    let text = all.content[0].as_text().expect("text").text.clone();
    assert!(text.contains("-b\n+B") && text.contains("+c"), "text rendering is the diffs: {text}");
    let one = ok(&call(&client, "paige_get_diff", json!({"path": "one.rs"})).await).clone();
    assert_eq!(
        one["diffs"],
        json!([{"path": "one.rs", "diff": "--- a/one.rs\n+++ b/one.rs\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n"}])
    );
    let none = ok(&call(&client, "paige_get_diff", json!({"path": "clean.rs"})).await).clone();
    assert_eq!(none["diffs"], json!([]));
}

#[tokio::test]
async fn huge_diffs_are_truncated_with_a_marker() {
    let server = running().await;
    let big: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
    write(&server, "big.txt", "");
    edit(&server, "big.txt", &big);
    let client = stateless_client(&server).await;
    let result = call(&client, "paige_get_diff", json!({"path": "big.txt"})).await;
    let value = ok(&result);
    assert_eq!(value["truncated"], true);
    let diff = value["diffs"][0]["diff"].as_str().expect("diff");
    assert!(diff.len() < 41_000 && diff.contains("[truncated:"), "{} bytes", diff.len());
}

#[tokio::test]
async fn highlights_accumulate_as_separate_broadcasts_and_are_logged() {
    let server = running().await;
    write(&server, "src/auth.ts", "1\n2\n3\n4\n5\n");
    let session = server.fixture.core.coaching().start_session(None, None).expect("session");
    let client = session_client(&server).await;
    let mut socket = ui(&server).await;
    ok(&call(
        &client,
        "paige_highlight_lines",
        json!({"path": "src/auth.ts", "start": 1, "end": 2, "style": "focus", "hoverText": "what goes here?"}),
    )
    .await);
    ok(&call(
        &client,
        "paige_highlight_lines",
        json!({"path": "./src/auth.ts", "start": 4, "end": 5, "style": "warning"}),
    )
    .await);
    let highlights = frames_of(&mut socket, "editor:highlight_lines", Duration::from_millis(300)).await;
    assert_eq!(
        highlights,
        [
            json!({"path": "src/auth.ts", "start": 1, "end": 2, "style": "focus", "hoverText": "what goes here?"}),
            json!({"path": "src/auth.ts", "start": 4, "end": 5, "style": "warning"}),
        ]
    );
    let db = server.fixture.core.db();
    assert_eq!(db.recent_actions(&session.id, 10, Some(ActionType::DecorationsApplied)).expect("rows").len(), 2);
    let calls = db.recent_actions(&session.id, 10, Some(ActionType::McpToolCall)).expect("rows");
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].data.as_ref().map(|d| d["toolName"].clone()), Some(json!("paige_highlight_lines")));
    assert!(calls[0].data.as_ref().is_some_and(|d| d["sessionId"].is_string()), "the MCP session id is recorded");

    let bad =
        call(&client, "paige_highlight_lines", json!({"path": "src/auth.ts", "start": 5, "end": 2, "style": "hint"}))
            .await;
    assert!(error_text(&bad).contains("not a range"));
    ok(&call(&client, "paige_clear_highlights", json!({"path": "src/auth.ts"})).await);
    ok(&call(&client, "paige_clear_highlights", json!({})).await);
    let clears = frames_of(&mut socket, "editor:clear_highlights", Duration::from_millis(300)).await;
    assert_eq!(clears, [json!({"path": "src/auth.ts"}), json!({})]);
}

#[tokio::test]
async fn file_hints_glow_and_clear() {
    let server = running().await;
    write(&server, "src/auth.ts", "x");
    write(&server, "src/handlers/oauth.ts", "y");
    let session = server.fixture.core.coaching().start_session(None, None).expect("session");
    let client = stateless_client(&server).await;
    let mut socket = ui(&server).await;
    let hints = json!({"hints": [{"path": "src/auth.ts", "style": "suggested"}, {"path": "src/handlers/oauth.ts", "style": "critical", "directories": ["src/handlers"]}]});
    ok(&call(&client, "paige_hint_files", hints).await);
    ok(&call(&client, "paige_clear_hints", json!({})).await);
    let glow = frames_of(&mut socket, "explorer:hint_files", Duration::from_millis(300)).await;
    assert_eq!(
        glow[0]["hints"][1],
        json!({"path": "src/handlers/oauth.ts", "style": "critical", "directories": ["src/handlers"]})
    );
    let logged =
        server.fixture.core.db().recent_actions(&session.id, 5, Some(ActionType::FileHintsApplied)).expect("rows");
    assert_eq!(logged[0].data, Some(json!({"paths": ["src/auth.ts", "src/handlers/oauth.ts"]})));
    let empty = call(&client, "paige_hint_files", json!({"hints": []})).await;
    assert!(error_text(&empty).contains("hints is empty"));
}

#[tokio::test]
async fn session_tools_need_an_active_session() {
    let server = running().await;
    let client = stateless_client(&server).await;
    let cases = [
        ("paige_get_session_state", json!({})),
        ("paige_update_phase", json!({"phase": 1, "status": "active"})),
        ("paige_show_message", json!({"message": "hi", "type": "info"})),
        ("paige_show_issue_context", json!({"number": 1, "title": "t", "summary": "s", "labels": [], "url": "u"})),
        ("paige_run_coaching_pipeline", json!({"planText": "p", "issueSummary": "s"})),
        ("paige_end_session", json!({"sessionTranscript": "t"})),
    ];
    for (tool, args) in cases {
        assert_eq!(error_text(&call(&client, tool, args).await), "No active session", "{tool}");
    }
}

#[tokio::test]
async fn update_phase_moves_the_phase_and_tells_the_ui() {
    let server = running().await;
    let core = &server.fixture.core;
    let session = core.coaching().start_session(Some(42), Some("OAuth race".into())).expect("session");
    let plan = core.db().create_plan(&session.id, "1. a\n2. b").expect("plan");
    for n in 1..=2 {
        core.db()
            .create_phase(NewPhase {
                plan_id: plan.id.clone(),
                number: n,
                title: format!("Phase {n}"),
                description: format!("do {n}"),
                hint_level: HintLevel::File,
                expected_files: vec![],
                skill_area: None,
                hint_reason: None,
                test_filter: None,
            })
            .expect("phase");
    }
    let client = session_client(&server).await;
    let mut socket = ui(&server).await;
    let started = ok(&call(&client, "paige_update_phase", json!({"phase": 1, "status": "active"})).await).clone();
    assert_eq!(started["success"], true);
    assert_eq!((started["phase"]["number"].clone(), started["phase"]["status"].clone()), (json!(1), json!("active")));
    let phase = core.db().phase(started["phase"]["id"].as_str().expect("id")).expect("row");
    assert!(phase.started_at.is_some());
    ok(&call(&client, "paige_update_phase", json!({"phase": 1, "status": "complete"})).await);
    assert!(core.db().phase(&phase.id).expect("row").completed_at.is_some());
    let again = ok(&call(&client, "paige_update_phase", json!({"phase": 1, "status": "complete"})).await).clone();
    assert_eq!(again["phase"]["status"], "complete", "same status is a successful no-op");
    let unknown = call(&client, "paige_update_phase", json!({"phase": 9, "status": "active"})).await;
    assert_eq!(error_text(&unknown), "phase 9 not found in the current plan");

    let updates = frames_of(&mut socket, "coaching:phase_update", Duration::from_millis(300)).await;
    assert_eq!(
        updates,
        [
            json!({"phase": 1, "status": "active", "description": "do 1", "hintLevel": "file"}),
            json!({"phase": 1, "status": "complete", "description": "do 1", "hintLevel": "file"})
        ]
    );
    let db = core.db();
    assert_eq!(db.recent_actions(&session.id, 5, Some(ActionType::PhaseStarted)).expect("rows").len(), 1);
    assert_eq!(db.recent_actions(&session.id, 5, Some(ActionType::PhaseCompleted)).expect("rows").len(), 1);

    let state =
        ok(&call(&client, "paige_get_session_state", json!({"include": ["phase", "plan", "session"]})).await).clone();
    let mut keys: Vec<&String> = state.as_object().expect("object").keys().collect();
    keys.sort();
    assert_eq!(keys, ["phase", "plan", "session"], "only the requested items");
    assert_eq!(state["phase"], Value::Null, "no phase is active after completing phase 1");
    assert_eq!(state["plan"]["phases"][0], json!({"number": 1, "title": "Phase 1", "status": "complete"}));
    assert_eq!(state["session"]["issueNumber"], 42);
    let all = ok(&call(&client, "paige_get_session_state", json!({"include": []})).await).clone();
    assert_eq!(all.as_object().expect("object").len(), 9, "empty include = all nine");
}

#[tokio::test]
async fn messages_and_issue_context_reach_the_ui() {
    let server = running().await;
    let session = server.fixture.core.coaching().start_session(None, None).expect("session");
    let client = stateless_client(&server).await;
    let mut socket = ui(&server).await;
    ok(&call(&client, "paige_show_message", json!({"message": "Nice work!", "type": "success"})).await);
    ok(&call(
        &client,
        "paige_show_message",
        json!({"message": "Look here", "type": "hint", "anchor": {"path": "a.rs", "line": 3}}),
    )
    .await);
    ok(&call(&client, "paige_show_issue_context", json!({"number": 7, "title": "Fix OAuth race condition", "summary": "...", "labels": ["bug"], "url": "https://example.test/7"})).await);
    let messages = frames_of(&mut socket, "coaching:message", Duration::from_millis(300)).await;
    assert_eq!(
        messages,
        [
            json!({"message": "Nice work!", "type": "success"}),
            json!({"message": "Look here", "type": "hint", "anchor": {"path": "a.rs", "line": 3}})
        ]
    );
    let logged =
        server.fixture.core.db().recent_actions(&session.id, 5, Some(ActionType::CoachingMessage)).expect("rows");
    assert_eq!(logged.len(), 2);
    let bad_type = call(&client, "paige_show_message", json!({"message": "x", "type": "shout"})).await;
    assert_eq!(bad_type.is_error, Some(true), "an unknown type is rejected: {bad_type:?}");
}

#[tokio::test]
async fn tools_without_their_feature_say_what_is_missing_instead_of_faking_success() {
    let server = running().await;
    server.fixture.core.coaching().start_session(None, None).expect("session");
    let client = session_client(&server).await;
    let empty = call(&client, "paige_run_coaching_pipeline", json!({"planText": " ", "issueSummary": "s"})).await;
    assert!(error_text(&empty).contains("must not be empty"));
    // The handshake, where it is offered (a governed project), with no intents declared yet.
    std::fs::create_dir_all(server.fixture.core.project_root().path().join(".orchestration")).expect("governed");
    let client = session_client(&server).await;
    let intent = call(&client, "select_active_intent", json!({"intent_id": "INT-001"})).await;
    assert!(error_text(&intent).starts_with("Intent Validation Error"), "no intents.yaml here");
    let missing_arg = client.call_tool(CallToolRequestParams::new("select_active_intent")).await;
    assert!(missing_arg.is_err() || missing_arg.as_ref().is_ok_and(|r| r.is_error == Some(true)), "{missing_arg:?}");
}
