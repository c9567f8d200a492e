//! Three tokens per launch: the UI token opens every private route; the agent token — the one
//! Claude Code's environment and MCP config hold — opens only `POST /hooks/*`, `/mcp` and the
//! routes of its launcher; the local tools' token opens only what `paige session` and
//! `paige memory` call. The run file names the UI token only behind an OS layer (issue 39).

use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::{initialize_body, post_mcp, stateless_tools_list_body};

struct Launched {
    instance: paige_server::Instance,
    base: String,
    _dirs: (tempfile::TempDir, tempfile::TempDir),
}

/// A real launch (`Instance::start`, as `paige serve` and the app do), with a file in its
/// project, where no OS layer confines Claude Code.
async fn launch() -> Launched {
    launch_with(paige_core::launch::jail::Confinement::Off("no OS layer in this test".into())).await
}

async fn launch_with(layer: paige_core::launch::jail::Confinement) -> Launched {
    let project = tempfile::tempdir().expect("project");
    let data = tempfile::tempdir().expect("data");
    std::fs::write(project.path().join("main.rs"), "fn main() {}\n").expect("file");
    let config = paige_core::Config {
        anthropic_base_url: Some("http://127.0.0.1:9".into()),
        agent_jail: layer,
        ..paige_core::Config::new(project.path().to_owned(), data.path().to_owned(), "key")
    };
    let instance = paige_server::Instance::start(
        config,
        Arc::new(paige_core::SystemClock),
        paige_core::memory::Memory::disabled("not needed here"),
        None,
    )
    .await
    .expect("start");
    let base = format!("http://127.0.0.1:{}", instance.port);
    Launched { instance, base, _dirs: (project, data) }
}

/// The status of a WebSocket upgrade on `/ws` with `token` in the header or the query.
async fn ws_status(base: &str, token: &str, in_query: bool) -> u16 {
    let url = format!("{}/ws", base.replace("http://", "ws://"));
    let request = if in_query {
        format!("{url}?token={token}").into_client_request().expect("request")
    } else {
        let mut request = url.into_client_request().expect("request");
        request.headers_mut().insert("Authorization", format!("Bearer {token}").parse().expect("header"));
        request
    };
    match tokio_tungstenite::connect_async(request).await {
        Ok((_, response)) => response.status().as_u16(),
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => response.status().as_u16(),
        Err(err) => panic!("/ws: {err}"),
    }
}

/// Status of each `/api` route with `token`.
async fn api_statuses(base: &str, token: &str) -> Vec<(&'static str, u16)> {
    let client = reqwest::Client::new();
    let calls: [(&str, reqwest::Method, Option<Value>); 6] = [
        ("/api/session", reqwest::Method::GET, None),
        ("/api/session/start", reqwest::Method::POST, Some(json!({"issueNumber": 1, "issueTitle": "t"}))),
        ("/api/session/end", reqwest::Method::POST, Some(json!({}))),
        ("/api/memory/add", reqwest::Method::POST, Some(json!({"content": "x"}))),
        ("/api/memory/query", reqwest::Method::POST, Some(json!({"query": "x"}))),
        ("/api/memory/stats", reqwest::Method::GET, None),
    ];
    let mut statuses = Vec::new();
    for (path, method, body) in calls {
        let mut request = client.request(method, format!("{base}{path}")).bearer_auth(token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        statuses.push((path, request.send().await.expect("request").status().as_u16()));
    }
    statuses
}

async fn hook(base: &str, token: &str) -> (u16, Value) {
    let payload = json!({"session_id": "s", "hook_event_name": "Stop"});
    let response = reqwest::Client::new()
        .post(format!("{base}/hooks/stop"))
        .bearer_auth(token)
        .json(&payload)
        .send()
        .await
        .expect("hook");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn mcp_statuses(base: &str, token: &str) -> Vec<u16> {
    let auth = format!("Bearer {token}");
    let mut statuses = Vec::new();
    for body in [initialize_body(), stateless_tools_list_body()] {
        statuses.push(post_mcp(base, &body, &[("Authorization", &auth)]).await.status().as_u16());
    }
    statuses
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_run_file_holds_the_ui_token_only_where_an_os_layer_hides_it_from_claude_code() {
    let landlock = paige_core::launch::jail::Confinement::Landlock("no jail in this test".into());
    for (launched, names_ui) in [(launch().await, false), (launch_with(landlock).await, true)] {
        let instance = &launched.instance;
        let path = instance.run_file();
        assert_eq!(std::fs::metadata(path).expect("run file").permissions().mode() & 0o777, 0o600);
        let info: Value = serde_json::from_slice(&std::fs::read(path).expect("read")).expect("json");
        let ui = instance.token.expose();
        assert_eq!(info.get("token").and_then(Value::as_str), names_ui.then_some(ui), "{info}");
        assert_eq!(info["agentToken"], instance.agent_token.expose());
        assert_eq!(info["localToken"], instance.local_token.expose());
        let all = [ui, instance.agent_token.expose(), instance.local_token.expose()];
        assert!(all[0] != all[1] && all[1] != all[2] && all[0] != all[2], "three different tokens");
        assert!(all.iter().all(|t| t.len() == 64), "32 random bytes, hex");
        instance.stop(Duration::from_secs(2)).await.expect("stop");
    }
}

/// Status of `paige claude`'s routes and the token rotation with `token`.
async fn launcher_and_rotate_statuses(base: &str, token: &str) -> Vec<(&'static str, u16)> {
    let client = reqwest::Client::new();
    let calls = [
        ("/api/session/kickoff", reqwest::Method::GET),
        ("/api/agent/claim", reqwest::Method::POST),
        ("/api/agent/relaunch", reqwest::Method::POST),
        ("/api/token/rotate", reqwest::Method::POST),
    ];
    let mut statuses = Vec::new();
    for (path, method) in calls {
        let request = client.request(method, format!("{base}{path}")).bearer_auth(token).json(&json!({}));
        statuses.push((path, request.send().await.expect("request").status().as_u16()));
    }
    statuses
}

/// Issue 39: where nothing hides the run file from Claude Code, the agent can read the local
/// tools' token — so it opens `paige session`'s and `paige memory`'s routes and nothing that
/// saves a file or hands out the UI token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_local_tools_token_opens_their_routes_and_not_the_ui_protocol_hooks_mcp_or_rotation() {
    let launched = launch().await;
    let (base, local) = (&launched.base, launched.instance.local_token.expose());
    for (path, status) in api_statuses(base, local).await {
        assert!(![401, 403].contains(&status), "{path} with the local token: {status}");
    }
    assert_eq!(ws_status(base, local, false).await, 403, "/ws with the local token in the header");
    assert_eq!(ws_status(base, local, true).await, 403, "/ws with the local token in the query");
    assert_eq!(hook(base, local).await.0, 403, "a hook with the local token");
    assert_eq!(mcp_statuses(base, local).await, [403, 403], "MCP with the local token");
    for (path, status) in launcher_and_rotate_statuses(base, local).await {
        assert_eq!(status, 403, "{path} with the local token");
    }
    launched.instance.stop(Duration::from_secs(2)).await.expect("stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_token_posts_hooks_and_calls_mcp_and_opens_nothing_else() {
    let launched = launch().await;
    let (base, agent) = (&launched.base, launched.instance.agent_token.expose());
    assert_eq!(ws_status(base, agent, false).await, 403, "/ws with the agent token in the header");
    assert_eq!(ws_status(base, agent, true).await, 403, "/ws with the agent token in the query");
    for (path, status) in api_statuses(base, agent).await {
        assert_eq!(status, 403, "{path} with the agent token");
    }
    assert_eq!(launched.instance.core.active_session(), None, "no session was started");
    let (status, decision) = hook(base, agent).await;
    assert_eq!((status, decision), (200, json!({"decision": "none"})), "a hook with the agent token");
    assert_eq!(mcp_statuses(base, agent).await, [200, 200], "MCP with the agent token, both eras");
    // `paige claude` holds only this token: its routes open, the rotation does not.
    let launcher = launcher_and_rotate_statuses(base, agent).await;
    for (path, status) in &launcher[..3] {
        assert!(![401, 403].contains(status), "{path} with the agent token: {status}");
    }
    assert_eq!(launcher[3], ("/api/token/rotate", 403));
    launched.instance.stop(Duration::from_secs(2)).await.expect("stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ui_token_still_opens_every_route() {
    let launched = launch().await;
    let (base, ui) = (&launched.base, launched.instance.token.expose());
    assert_eq!(ws_status(base, ui, false).await, 101);
    assert_eq!(ws_status(base, ui, true).await, 101);
    for (path, status) in api_statuses(base, ui).await {
        assert!(![401, 403].contains(&status), "{path} with the UI token: {status}");
    }
    assert_eq!(hook(base, ui).await.0, 200);
    assert_eq!(mcp_statuses(base, ui).await, [200, 200]);
    launched.instance.stop(Duration::from_secs(2)).await.expect("stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_token_cannot_save_a_file_through_the_ui_protocol() {
    let launched = launch().await;
    let main = launched.instance.core.project_root().path().join("main.rs");
    // What the model tried: a `file:save` over `/ws` with the token from its environment.
    let url =
        format!("{}/ws?token={}", launched.base.replace("http://", "ws://"), launched.instance.agent_token.expose());
    let refused = tokio_tungstenite::connect_async(url).await.expect_err("refused");
    assert!(refused.to_string().contains("403"), "{refused}");
    assert_eq!(std::fs::read_to_string(&main).expect("read"), "fn main() {}\n");
    launched.instance.stop(Duration::from_secs(2)).await.expect("stop");
}
