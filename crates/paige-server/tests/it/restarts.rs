//! Restarts converge (issue 40, item 4): the tokens survive `paige serve` restarts, so a
//! browser tab and a running Claude Code get back in by themselves, and the learner's
//! session is live again as it was; `paige token rotate` makes the old tokens worthless at
//! once, and a Claude Code still holding one is told how to recover. The UI token survives
//! only where an OS layer hides `DATA_DIR` from Claude Code; with none it is never written
//! there (issue 39).

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{Value, json};

use crate::{post_mcp, stateless_tools_list_body};

use paige_core::launch::jail::Confinement;

/// A Paige whose `paige claude` runs under Landlock: an OS layer hides `DATA_DIR`.
async fn start(project: &std::path::Path, data: &std::path::Path, port: u16) -> paige_server::Instance {
    start_with(project, data, port, Confinement::Landlock("no jail in this test".into())).await
}

async fn start_with(
    project: &std::path::Path,
    data: &std::path::Path,
    port: u16,
    layer: Confinement,
) -> paige_server::Instance {
    let config = paige_core::Config {
        anthropic_base_url: Some("http://127.0.0.1:9".into()),
        port,
        agent_jail: layer,
        ..paige_core::Config::new(project.to_owned(), data.to_owned(), "key")
    };
    paige_server::Instance::start(
        config,
        Arc::new(paige_core::SystemClock),
        paige_core::memory::Memory::disabled("not needed here"),
        None,
    )
    .await
    .expect("start")
}

fn base(instance: &paige_server::Instance) -> String {
    format!("http://127.0.0.1:{}", instance.port)
}

async fn api(base: &str, token: &str, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
    let mut request = reqwest::Client::new().request(method, format!("{base}{path}")).bearer_auth(token);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("request");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// The frames a UI gets within a second of saying hello over `/ws` with `token`.
async fn ui_frames(base: &str, token: &str) -> Vec<Value> {
    let url = format!("{}/ws?token={token}", base.replace("http://", "ws://"));
    let (mut socket, _) = tokio_tungstenite::connect_async(url).await.expect("ws");
    use futures_util::SinkExt;
    let hello = json!({"type": "connection:hello", "payload": {"version": "1", "platform": "linux", "windowSize": {"width": 800, "height": 600}}});
    socket.send(tokio_tungstenite::tungstenite::Message::text(hello.to_string())).await.expect("hello");
    let mut frames = Vec::new();
    while let Ok(Some(Ok(message))) = tokio::time::timeout(Duration::from_secs(1), socket.next()).await {
        if let Ok(frame) = serde_json::from_str::<Value>(message.to_text().unwrap_or_default()) {
            frames.push(frame);
        }
    }
    frames
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_restart_the_old_tokens_still_open_paige_and_a_reconnecting_ui_finds_the_session_as_it_was() {
    let (project, data) = (tempfile::tempdir().expect("project"), tempfile::tempdir().expect("data"));
    std::fs::write(project.path().join("main.rs"), "fn main() {}\n").expect("file");
    let first = start(project.path(), data.path(), 0).await;
    let (ui, agent) = (first.token.expose().to_owned(), first.agent_token.expose().to_owned());
    let start_body = json!({"issueTitle": "Login races the token", "description": "fix the race"});
    let (status, started) =
        api(&base(&first), &ui, reqwest::Method::POST, "/api/session/start", Some(start_body)).await;
    assert_eq!(status, 201, "{started}");
    let session = started["session"]["id"].as_str().expect("session id").to_owned();
    let port = first.port;
    first.stop(Duration::from_secs(2)).await.expect("stop");

    let second = start(project.path(), data.path(), port).await;
    assert_eq!((second.token.expose(), second.agent_token.expose()), (ui.as_str(), agent.as_str()));
    // The learner's session is live again, not ended, not set aside.
    let (status, shown) = api(&base(&second), &ui, reqwest::Method::GET, "/api/session", None).await;
    assert_eq!(status, 200);
    assert_eq!(shown["session"]["id"], session.as_str(), "{shown}");
    // The tab that was open reconnects with the token in its address and sees the session.
    let frames = ui_frames(&base(&second), &ui).await;
    let init = frames.iter().find(|f| f["type"] == "connection:init").expect("connection:init");
    assert_eq!(init["payload"]["sessionId"], session.as_str(), "{init}");
    let shown = frames.iter().find(|f| f["type"] == "session:started").expect("the session as it stands");
    assert_eq!(shown["payload"]["title"], "Login races the token", "{shown}");
    // The running Claude Code's MCP config still holds the agent token: its calls still work.
    let listed =
        post_mcp(&base(&second), &stateless_tools_list_body(), &[("Authorization", &format!("Bearer {agent}"))]).await;
    assert_eq!(listed.status().as_u16(), 200);
    second.stop(Duration::from_secs(2)).await.expect("stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rotating_the_tokens_refuses_the_old_ones_at_once_and_tells_claude_code_how_to_recover() {
    let (project, data) = (tempfile::tempdir().expect("project"), tempfile::tempdir().expect("data"));
    let instance = start(project.path(), data.path(), 0).await;
    let (old_ui, old_agent) = (instance.token.expose().to_owned(), instance.agent_token.expose().to_owned());
    let base = base(&instance);
    // Claude Code's token cannot rotate them.
    let (status, _) = api(&base, &old_agent, reqwest::Method::POST, "/api/token/rotate", None).await;
    assert_eq!(status, 403);
    let (status, rotated) = api(&base, &old_ui, reqwest::Method::POST, "/api/token/rotate", None).await;
    assert_eq!(status, 200, "{rotated}");
    let new_ui = rotated["token"].as_str().expect("the new UI token").to_owned();
    assert_ne!(new_ui, old_ui);

    assert_eq!(api(&base, &old_ui, reqwest::Method::GET, "/api/session", None).await.0, 401);
    assert_eq!(api(&base, &new_ui, reqwest::Method::GET, "/api/session", None).await.0, 200);
    // Local tools find the new ones: the run file and the kept file hold them.
    let run = paige_core::run_info::read(data.path()).expect("run file").expect("running");
    assert_eq!(run.token.expect("the UI token").expose(), new_ui);
    let new_agent = run.agent_token.expect("agent token").expose().to_owned();
    assert_ne!(new_agent, old_agent);
    let kept = paige_core::token::load_or_create(data.path(), paige_core::token::UiTokenKept::OnDisk).expect("kept");
    assert_eq!(kept.ui.expose(), new_ui);
    // A Claude Code still holding the old agent token is told what to do.
    let stale =
        post_mcp(&base, &stateless_tools_list_body(), &[("Authorization", &format!("Bearer {old_agent}"))]).await;
    assert_eq!(stale.status().as_u16(), 401);
    let said: Value = stale.json().await.expect("json");
    let error = said["error"].as_str().unwrap_or_default();
    assert!(error.contains("paige claude") && error.contains("session and its plan are kept"), "{error}");
    let fresh =
        post_mcp(&base, &stateless_tools_list_body(), &[("Authorization", &format!("Bearer {new_agent}"))]).await;
    assert_eq!(fresh.status().as_u16(), 200);
    // The run file is still this Paige's: a clean stop removes it.
    instance.stop(Duration::from_secs(2)).await.expect("stop");
    assert!(!instance.run_file().exists(), "removed on stop after a rotation");
}

/// Every file under `dir` whose bytes contain `secret`.
fn files_holding(dir: &std::path::Path, secret: &str) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_holding(&path, secret));
        } else if std::fs::read(&path).is_ok_and(|bytes| bytes.windows(secret.len()).any(|w| w == secret.as_bytes())) {
            found.push(path);
        }
    }
    found
}

/// Issue 39, item 6: with no OS layer, Claude Code reads whatever the learner's user can, so
/// the UI token (which saves files through `/ws`) is never written to `DATA_DIR` — not in
/// the tokens file, not in the run file, not in the log or the database — while the agent
/// token (hooks and MCP only) still survives a restart. A UI token an earlier, guarded start
/// kept is removed. Local tools are told to use `PAIGE_TOKEN`, and find Paige with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_os_layer_the_ui_token_is_never_written_where_claude_code_can_read_it() {
    let (project, data) = (tempfile::tempdir().expect("project"), tempfile::tempdir().expect("data"));
    let guarded = start(project.path(), data.path(), 0).await;
    let kept_ui = guarded.token.expose().to_owned();
    guarded.stop(Duration::from_secs(2)).await.expect("stop");
    assert!(!files_holding(data.path(), &kept_ui).is_empty(), "a guarded start keeps its UI token");

    let off = || Confinement::Off("no user namespaces and no Landlock here".into());
    let first = start_with(project.path(), data.path(), 0, off()).await;
    let (ui, agent) = (first.token.expose().to_owned(), first.agent_token.expose().to_owned());
    assert_ne!(ui, kept_ui, "the kept UI token is not used");
    let (status, _) =
        api(&base(&first), &ui, reqwest::Method::POST, "/api/session/start", Some(json!({"issueTitle": "t"}))).await;
    assert_eq!(status, 201);
    assert_eq!(files_holding(data.path(), &ui), Vec::<std::path::PathBuf>::new(), "the UI token on disk");
    assert_eq!(files_holding(data.path(), &kept_ui), Vec::<std::path::PathBuf>::new(), "the earlier one");
    assert!(!files_holding(data.path(), &agent).is_empty(), "the agent token is kept for hooks and MCP");
    let run = paige_core::run_info::read(data.path()).expect("run file").expect("running");
    assert_eq!((run.token, run.agent_token.as_ref().map(|t| t.expose())), (None, Some(agent.as_str())));

    // `paige session` and the like: told what to do, then found with PAIGE_TOKEN.
    let data_dir = data.path().display().to_string();
    let env = |pairs: &[(&str, &str)]| -> std::collections::HashMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    };
    let local = paige_core::run_info::locate(&env(&[("DATA_DIR", &data_dir)]), None).expect("the local token");
    assert_eq!(local.token.expose(), first.local_token.expose());
    let err = paige_core::run_info::locate_ui(&env(&[("DATA_DIR", &data_dir)]), None).expect_err("no UI token");
    assert!(err.to_string().contains("PAIGE_TOKEN=<token> paige"), "{err}");
    let found = paige_core::run_info::locate_ui(&env(&[("DATA_DIR", &data_dir), ("PAIGE_TOKEN", &ui)]), None)
        .expect("found with PAIGE_TOKEN");
    assert_eq!((found.base_url, found.token.expose()), (base(&first), ui.as_str()));
    let port = first.port;
    first.stop(Duration::from_secs(2)).await.expect("stop");

    let second = start_with(project.path(), data.path(), port, off()).await;
    assert_ne!(second.token.expose(), ui, "a new UI token at each start");
    assert_eq!(second.agent_token.expose(), agent, "the agent token survives");
    assert_eq!(api(&base(&second), &ui, reqwest::Method::GET, "/api/session", None).await.0, 401);
    second.stop(Duration::from_secs(2)).await.expect("stop");
}
