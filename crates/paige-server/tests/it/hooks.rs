//! `POST /hooks/{event}` and the `select_active_intent` MCP tool.

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use tower::ServiceExt as _;

use crate::{TOKEN, fixture, running};

fn write_payload(project: &std::path::Path) -> Value {
    json!({"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Write",
           "tool_input": {"file_path": project.join("a.rs"), "content": "x"}})
}

async fn post(path: &str, body: String, token: Option<&str>) -> (StatusCode, Value, String) {
    let f = fixture();
    let mut request = Request::post(path).header(header::HOST, "127.0.0.1:3000");
    if let Some(token) = token {
        request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    let body = body.replace("{project}", &f.core.project_root().path().display().to_string());
    let request = request.body(Body::from(body)).expect("request");
    let response = paige_server::app(f.core.clone(), TOKEN).router.oneshot(request).await.expect("response");
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20).await.expect("body");
    let text = String::from_utf8_lossy(&bytes).into_owned();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null), text)
}

#[tokio::test]
async fn hooks_require_the_token() {
    let body = write_payload(std::path::Path::new("/p")).to_string();
    let (status, _, _) = post("/hooks/pre-tool-use", body.clone(), None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _, _) = post("/hooks/pre-tool-use", body, Some("wrong")).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_pre_tool_use_write_in_coach_mode_answers_a_typed_deny() {
    let body = write_payload(std::path::Path::new("{project}")).to_string();
    let (status, value, text) = post("/hooks/pre-tool-use", body, Some(TOKEN)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(value["decision"], "deny");
    assert!(value["reason"].as_str().expect("reason").contains("coach mode"), "{value}");
    let (_, value, _) = post("/hooks/Stop", json!({"session_id": "s"}).to_string(), Some(TOKEN)).await;
    assert_eq!(value, json!({"decision": "none"}));
}

#[tokio::test]
async fn unknown_events_and_non_json_payloads_are_client_errors_in_the_one_error_shape() {
    let (status, value, _) = post("/hooks/pre-tool", "{}".into(), Some(TOKEN)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(value, serde_json::json!({"error": "unknown hook event pre-tool", "code": "not_found"}));
    let (status, value, text) = post("/hooks/pre-tool-use", "{oops".into(), Some(TOKEN)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(value["code"], "bad_request", "{text}");
    assert!(value["error"].as_str().is_some_and(|e| e.starts_with("hook payload is not valid json")), "{text}");
    // The guard and the token check answer in the same shape.
    let (status, value, _) = post("/hooks/pre-tool-use", "{}".into(), Some("wrong")).await;
    assert_eq!((status, value["code"].as_str()), (StatusCode::UNAUTHORIZED, Some("unauthorized")));
}

#[tokio::test]
async fn select_active_intent_returns_the_context_or_a_validation_error() {
    let server = running().await;
    let root = server.fixture.core.project_root().path().to_owned();
    let orch = paige_core::governance::Orchestration::new(&root);
    orch.init().expect("init");
    std::fs::write(
        orch.intents_path(),
        "active_intents:\n  - id: INT-001\n    name: Weather\n    status: IN_PROGRESS\n    owned_scope: [\"src/weather/**\"]\n    constraints: [\"no new dependencies\"]\n",
    )
    .expect("yaml");
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", server.base)).auth_header(TOKEN),
    );
    let client = ().serve(transport).await.expect("initialize");
    let tools = client.list_all_tools().await.expect("tools/list");
    let tool = tools.iter().find(|t| t.name == "select_active_intent").expect("tool listed");
    let schema = serde_json::to_value(&tool.input_schema).expect("schema");
    assert_eq!(schema["properties"]["intent_id"]["type"], "string", "{schema}");
    let call = |id: &str| {
        let args = json!({"intent_id": id}).as_object().cloned().expect("object");
        client.call_tool(CallToolRequestParams::new("select_active_intent").with_arguments(args))
    };
    let ok = serde_json::to_value(call("INT-001").await.expect("call")).expect("json");
    assert_ne!(ok["isError"], true, "{ok}");
    let text = ok["content"][0]["text"].as_str().expect("text");
    assert!(text.contains("src/weather/**") && text.contains("no new dependencies"), "{text}");
    let bad = serde_json::to_value(call("INT-404").await.expect("call")).expect("json");
    assert_eq!(bad["isError"], true, "{bad}");
    assert_eq!(bad["content"][0]["text"], "Intent Validation Error: unknown intent INT-404");
    client.cancel().await.expect("close");
}

/// Issue 42: `POST /api/agent/relaunch` hands a launch's switch of views out once — as soon
/// as the turn that selected the intent ended (its Stop hook, carrying the launch's view), or
/// when the launcher says its Claude Code is quiet (`quiet` left out counts as quiet, as older
/// launchers asked only then). Before either, nothing.
#[tokio::test]
async fn a_switch_of_views_is_handed_out_once_its_turn_ended_or_when_quiet() {
    let f = fixture();
    let root = f.core.project_root().path().to_owned();
    let orch = paige_core::governance::Orchestration::new(&root);
    orch.init().expect("init");
    std::fs::write(
        orch.intents_path(),
        "active_intents:\n  - id: INT-001\n    name: Weather\n    status: IN_PROGRESS\n    owned_scope: [\"src/weather/**\"]\n",
    )
    .expect("yaml");
    let router = paige_server::app(f.core.clone(), TOKEN).router;
    let send = |path: &'static str, body: Value| {
        let router = router.clone();
        async move {
            let request = Request::post(path)
                .header(header::HOST, "127.0.0.1:3000")
                .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(body.to_string()))
                .expect("request");
            let response = router.oneshot(request).await.expect("response");
            let bytes = axum::body::to_bytes(response.into_body(), 1 << 20).await.expect("body");
            serde_json::from_slice::<Value>(&bytes).unwrap_or(Value::Null)
        }
    };
    let view = json!({"launch": "V1", "intent": ""});
    let select = |event: &str| {
        json!({"session_id": "s", "hook_event_name": event, "tool_name": "mcp__paige__select_active_intent",
               "tool_input": {"intent_id": "INT-001"}, "tool_use_id": "toolu_1", "paige_view": view})
    };
    send("/hooks/pre-tool-use", select("PreToolUse")).await;
    f.core.select_active_intent("INT-001").expect("selected");
    let told = send("/hooks/post-tool-use", select("PostToolUse")).await;
    assert!(told.to_string().contains("End your turn now"), "{told}");
    let ask = |quiet: Option<bool>| {
        let mut body = json!({"launch": "V1"});
        if let Some(quiet) = quiet {
            body["quiet"] = json!(quiet);
        }
        send("/api/agent/relaunch", body)
    };
    assert_eq!(ask(Some(false)).await, json!({"intent": null}), "not before its turn ended");
    send("/hooks/stop", json!({"session_id": "s", "hook_event_name": "Stop", "paige_view": view})).await;
    assert_eq!(ask(Some(false)).await, json!({"intent": "INT-001"}), "once its turn ended");
    assert_eq!(ask(Some(false)).await, json!({"intent": null}), "handed out once");
    // Selected again from the same view, asked by a launcher that saw it quiet.
    send("/hooks/pre-tool-use", select("PreToolUse")).await;
    send("/hooks/post-tool-use", select("PostToolUse")).await;
    assert_eq!(ask(None).await, json!({"intent": "INT-001"}), "quiet: handed out without a Stop");
}
