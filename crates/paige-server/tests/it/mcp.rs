use std::time::Duration;

use rmcp::model::ProtocolVersion;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientLifecycleMode, ClientServiceExt, ServiceExt};

use crate::{TOKEN, initialize_body, post_mcp, rpc_message, running, stateless_tools_list_body};

fn transport(base: &str) -> StreamableHttpClientTransport<reqwest::Client> {
    StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(format!("{base}/mcp")).auth_header(TOKEN),
    )
}

#[tokio::test]
async fn legacy_initialize_creates_a_session_with_an_id() {
    let server = running().await;
    let auth = format!("Bearer {TOKEN}");
    let response = post_mcp(&server.base, &initialize_body(), &[("Authorization", &auth)]).await;
    assert_eq!(response.status(), 200);
    let session_id =
        response.headers().get("mcp-session-id").expect("Mcp-Session-Id header").to_str().expect("text").to_owned();
    assert!(uuid_like(&session_id), "{session_id}");
    let message = rpc_message(response).await;
    assert_eq!(message["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(message["result"]["serverInfo"]["name"], "paige");
    assert_eq!(server.sessions.count().await, 1);
}

#[tokio::test]
async fn rmcp_client_in_session_mode_lists_tools() {
    let server = running().await;
    let client = ().serve(transport(&server.base)).await.expect("legacy initialize");
    let info = client.peer_info().expect("server info");
    assert_eq!(info.protocol_version, ProtocolVersion::V_2025_11_25);
    let tools = client.list_all_tools().await.expect("tools/list");
    assert_eq!(tools.len(), 14, "coach mode: Paige's coaching tools");
    assert!(!tools.iter().any(|t| t.name == "select_active_intent"), "no governed tool in coach mode");
    assert_eq!(server.sessions.count().await, 1);
    client.cancel().await.expect("client closes");
}

/// Issue 40: the handshake tool is offered only where it means something — a governed
/// project (`.orchestration/`), from the moment it is one.
#[tokio::test]
async fn a_governed_project_is_offered_the_handshake_tool_and_a_coached_one_is_not() {
    let server = running().await;
    let listed = || async {
        let client = ().serve(transport(&server.base)).await.expect("initialize");
        let names: Vec<String> =
            client.list_all_tools().await.expect("tools/list").into_iter().map(|t| t.name.to_string()).collect();
        client.cancel().await.expect("client closes");
        names
    };
    assert!(!listed().await.contains(&"select_active_intent".to_owned()));
    let root = server.fixture.core.project_root().path().to_owned();
    std::fs::create_dir_all(root.join(".orchestration")).expect("governed");
    let names = listed().await;
    assert_eq!(names.len(), 15, "{names:?}");
    assert!(names.contains(&"select_active_intent".to_owned()), "{names:?}");
}

#[tokio::test]
async fn stateless_2026_request_is_answered_without_a_session() {
    let server = running().await;
    let auth = format!("Bearer {TOKEN}");
    let response = post_mcp(&server.base, &stateless_tools_list_body(), &[("Authorization", &auth)]).await;
    assert_eq!(response.status(), 200);
    assert!(response.headers().get("mcp-session-id").is_none(), "stateless: no session id");
    let message = rpc_message(response).await;
    assert_eq!(message["id"], 7);
    assert_eq!(message["result"]["tools"].as_array().map(Vec::len), Some(14), "{message}");
    assert_eq!(server.sessions.count().await, 0);
}

#[tokio::test]
async fn rmcp_client_in_2026_discover_mode_lists_tools() {
    let server = running().await;
    let client = ()
        .serve_with_lifecycle(
            transport(&server.base),
            ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] },
        )
        .await
        .expect("server/discover");
    assert_eq!(client.list_all_tools().await.expect("tools/list").len(), 14);
    assert_eq!(server.sessions.count().await, 0, "2026-07-28 keeps no session");
    client.cancel().await.expect("client closes");
}

#[tokio::test]
async fn shutdown_closes_open_sessions_and_stops_serving() {
    let mut server = running().await;
    let client = ().serve(transport(&server.base)).await.expect("legacy initialize");
    assert_eq!(server.sessions.count().await, 1);

    server.stop.cancel();
    let served = tokio::time::timeout(Duration::from_secs(5), &mut server.task).await;
    served.expect("server stops within 5 s despite the open session").expect("task").expect("serve ok");
    assert!(reqwest::get(format!("{}/health", server.base)).await.is_err(), "no longer accepting");
    drop(client);
}

fn uuid_like(s: &str) -> bool {
    s.len() == 36 && s.chars().filter(|c| *c == '-').count() == 4
}

/// Issue 28: the persona, the kickoff and the MCP server's instructions describe one protocol
/// (plan, `paige_run_coaching_pipeline` once, then the phases): every Paige tool they (and the
/// word of a phase the learner marked done) name is a tool this server lists, so the words
/// and the tools cannot drift apart.
#[tokio::test]
async fn the_persona_kickoff_and_instructions_name_only_tools_the_server_has() {
    let server = running().await;
    let client = ().serve(transport(&server.base)).await.expect("legacy initialize");
    let instructions = client.peer_info().and_then(|info| info.instructions.clone()).expect("instructions");
    let tools: Vec<String> =
        client.list_all_tools().await.expect("tools/list").iter().map(|t| t.name.to_string()).collect();
    client.cancel().await.expect("client closes");
    for (source, text) in [
        ("coach-persona", paige_core::prompts::coach_persona::SYSTEM_PROMPT),
        ("coach-kickoff", paige_core::prompts::coach_kickoff::TEMPLATE),
        ("MCP instructions", instructions.as_str()),
        ("coach-kickoff/phase-done", paige_core::prompts::coach_kickoff::PHASE_DONE_TEMPLATE),
    ] {
        let phase_done = source.ends_with("phase-done");
        assert!(phase_done || text.contains("paige_run_coaching_pipeline"), "{source} says how a plan reaches Paige");
        let words = text.split(|c: char| !(c.is_ascii_lowercase() || c == '_'));
        for name in words.filter(|w| w.starts_with("paige_") && w.len() > "paige_".len()) {
            assert!(tools.iter().any(|t| t == name), "{source} names {name}, which is not a tool: {tools:?}");
        }
    }
}
