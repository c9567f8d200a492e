//! The UI protocol over a real `/ws` connection (tokio-tungstenite client).

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use paige_core::db::ActionType;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::{Running, TOKEN, running};

pub(crate) type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

pub(crate) async fn connect(server: &Running) -> Socket {
    let url = format!("{}/ws", server.base.replace("http://", "ws://"));
    let mut request = url.into_client_request().expect("request");
    request.headers_mut().insert("Authorization", format!("Bearer {TOKEN}").parse().expect("header"));
    let (socket, _) = tokio_tungstenite::connect_async(request).await.expect("ws connects");
    socket
}

pub(crate) async fn send(socket: &mut Socket, frame: Value) {
    socket.send(Message::Text(frame.to_string().into())).await.expect("send");
}

/// The next JSON frame, failing the test after 2 s.
pub(crate) async fn next(socket: &mut Socket) -> Value {
    loop {
        let message = tokio::time::timeout(Duration::from_secs(2), socket.next())
            .await
            .expect("a frame within 2 s")
            .expect("socket open")
            .expect("frame");
        if let Message::Text(text) = message {
            return serde_json::from_str(text.as_str()).expect("frame is JSON");
        }
    }
}

/// Waits for the first frame of type `kind`.
pub(crate) async fn next_of(socket: &mut Socket, kind: &str) -> Value {
    loop {
        let frame = next(socket).await;
        if frame["type"] == kind {
            return frame;
        }
    }
}

async fn hello(socket: &mut Socket) -> Value {
    send(
        socket,
        json!({"type": "connection:hello", "id": "1", "timestamp": 0,
        "payload": {"version": "test", "platform": "linux", "windowSize": {"width": 800, "height": 600}}}),
    )
    .await;
    next_of(socket, "connection:init").await
}

fn write(server: &Running, path: &str, content: &str) -> std::path::PathBuf {
    let full = server.fixture.core.project_root().path().join(path);
    std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
    std::fs::write(&full, content).expect("write");
    full
}

#[tokio::test]
async fn hello_is_answered_with_init() {
    let server = running().await;
    let mut socket = connect(&server).await;
    let init = hello(&mut socket).await;
    assert_eq!(init["id"], "1");
    assert!(init["timestamp"].as_i64().is_some());
    assert!(init["payload"]["capabilities"].as_array().is_some_and(|c| c.contains(&json!("buffer:update"))));
}

#[tokio::test]
async fn file_open_sends_content_and_logs_the_action() {
    let server = running().await;
    write(&server, "src/app.js", "let x = 1;\n");
    let session = server.fixture.core.coaching().start_session(Some(1), Some("t".into())).expect("session");
    let mut socket = connect(&server).await;
    hello(&mut socket).await;
    send(&mut socket, json!({"type": "file:open", "payload": {"path": "src/app.js"}})).await;
    let content = next_of(&mut socket, "fs:content").await;
    assert_eq!(
        content["payload"],
        json!({"path": "src/app.js", "content": "let x = 1;\n", "language": "javascript", "lineCount": 1, "binary": false})
    );
    let rows = server.fixture.core.db().recent_actions(&session.id, 10, Some(ActionType::FileOpen)).expect("rows");
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].data, Some(json!({"path": "src/app.js"})));
}

#[tokio::test]
async fn file_save_acks_and_writes_to_disk() {
    let server = running().await;
    let mut socket = connect(&server).await;
    send(&mut socket, json!({"type": "file:save", "payload": {"path": "notes/todo.md", "content": "- write tests\n"}}))
        .await;
    let ack = next_of(&mut socket, "fs:save_ack").await;
    assert_eq!(
        (ack["payload"]["path"].as_str(), ack["payload"]["success"].as_bool()),
        (Some("notes/todo.md"), Some(true))
    );
    let on_disk =
        std::fs::read_to_string(server.fixture.core.project_root().path().join("notes/todo.md")).expect("saved");
    assert_eq!(on_disk, "- write tests\n");
}

#[tokio::test]
async fn a_save_the_disk_refuses_reports_a_save_error() {
    use std::os::unix::fs::PermissionsExt;
    let server = running().await;
    let locked = write(&server, "locked/keep.txt", "x").parent().expect("dir").to_owned();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).expect("chmod");
    // A directory where the file should be fails for everyone; a read-only directory fails
    // for everyone but root (CI runs as root, so both are tried).
    let mut targets = vec!["locked"];
    if !running_as_root() {
        targets.push("locked/new.txt");
    }
    let mut socket = connect(&server).await;
    for target in targets {
        send(&mut socket, json!({"type": "file:save", "payload": {"path": target, "content": "data"}})).await;
        let error = next_of(&mut socket, "fs:save_error").await;
        assert_eq!(error["payload"]["path"], target);
        let expected = if target == "locked" {
            format!("{target} is a directory, not a file")
        } else {
            format!("cannot write {target}")
        };
        assert!(error["payload"]["error"].as_str().is_some_and(|e| e.starts_with(&expected)), "{error}");
    }
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).expect("chmod back");
    assert_eq!(std::fs::read_to_string(locked.join("keep.txt")).expect("read"), "x", "nothing lost");
}

fn running_as_root() -> bool {
    std::process::Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0\n"))
}

#[tokio::test]
async fn traversal_is_a_connection_error_and_touches_nothing() {
    let server = running().await;
    let outside = server.fixture.core.project_root().path().parent().expect("parent").join("escaped.txt");
    let mut socket = connect(&server).await;
    send(
        &mut socket,
        json!({"type": "file:save", "id": "s1", "payload": {"path": "../escaped.txt", "content": "pwned"}}),
    )
    .await;
    let error = next(&mut socket).await;
    assert_eq!((error["type"].as_str(), error["id"].as_str()), (Some("connection:error"), Some("s1")));
    assert_eq!(error["payload"]["code"], "PATH_REJECTED");
    assert!(!outside.exists(), "nothing written outside the project");
}

#[tokio::test]
async fn malformed_json_is_answered_and_unknown_types_are_ignored() {
    let server = running().await;
    let mut socket = connect(&server).await;
    socket.send(Message::Text("{this is not json".into())).await.expect("send");
    let error = next(&mut socket).await;
    assert_eq!(error["payload"]["code"], "INVALID_JSON");
    send(&mut socket, json!({"type": "mind:read", "payload": {}})).await;
    send(&mut socket, json!({"type": "file:open", "payload": {"path": 7}})).await;
    let invalid = next(&mut socket).await;
    assert_eq!(invalid["payload"]["code"], "INVALID_PAYLOAD", "the unknown type produced no frame before this one");
    assert_eq!(hello(&mut socket).await["type"], "connection:init", "connection still usable");
}

#[tokio::test]
async fn every_client_receives_broadcasts() {
    let server = running().await;
    write(&server, "shared.rs", "fn shared() {}\n");
    let mut first = connect(&server).await;
    let mut second = connect(&server).await;
    hello(&mut first).await;
    hello(&mut second).await;
    send(&mut first, json!({"type": "file:open", "payload": {"path": "shared.rs"}})).await;
    for socket in [&mut first, &mut second] {
        assert_eq!(next_of(socket, "fs:content").await["payload"]["path"], "shared.rs");
    }
    assert_eq!(server.fixture.core.connection_count(), 2);
    first.close(None).await.expect("close");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(server.fixture.core.connection_count(), 1, "closed connection forgotten");
}

#[tokio::test]
async fn watcher_changes_and_session_start_reach_the_ui() {
    let server = running().await;
    server.fixture.core.start_watcher().expect("watcher");
    let mut socket = connect(&server).await;
    hello(&mut socket).await;
    server.fixture.core.coaching().start_session(None, None).expect("session");
    let tree = next_of(&mut socket, "fs:tree").await;
    assert_eq!(tree["payload"]["root"]["type"], "directory");
    write(&server, "fresh.txt", "new");
    let update = next_of(&mut socket, "fs:tree_update").await;
    assert_eq!(update["payload"], json!({"action": "add", "path": "fresh.txt"}));
}

#[tokio::test]
async fn connecting_sends_the_first_level_and_fs_list_pages_a_big_folder_and_refuses_paths_outside() {
    let server = running().await;
    for i in 0..2500 {
        write(&server, &format!("many/f{i:04}.rs"), "");
    }
    write(&server, "many/sub/deep/x.rs", "");
    write(&server, "src/main.rs", "fn main() {}\n");
    let mut socket = connect(&server).await;
    hello(&mut socket).await;
    let tree = next_of(&mut socket, "fs:tree").await;
    let root = &tree["payload"]["root"];
    assert_eq!(root["children"][0], json!({"name": "many", "path": "many", "type": "directory"}), "too big to send");
    assert_eq!(root["children"][1]["children"], json!([{"name": "main.rs", "path": "src/main.rs", "type": "file"}]));
    assert!(tree.to_string().len() < 4_000, "{tree}");
    send(&mut socket, json!({"type": "fs:list", "id": "l1", "payload": {"path": "many"}})).await;
    let first = next_of(&mut socket, "fs:children").await;
    assert_eq!(first["id"], "l1");
    let page = &first["payload"];
    assert_eq!(
        (page["offset"].as_u64(), page["total"].as_u64(), page["nextOffset"].as_u64()),
        (Some(0), Some(2501), Some(2000))
    );
    assert_eq!(page["children"].as_array().map(Vec::len), Some(2000));
    assert_eq!(
        page["children"][0],
        json!({"name": "sub", "path": "many/sub", "type": "directory"}),
        "folders first, unlisted"
    );
    assert!(first.to_string().len() < 200_000, "a page is {} bytes", first.to_string().len());
    send(&mut socket, json!({"type": "fs:list", "payload": {"path": "many", "offset": 2000}})).await;
    let rest = next_of(&mut socket, "fs:children").await["payload"].clone();
    assert_eq!((rest["offset"].as_u64(), rest["children"].as_array().map(Vec::len)), (Some(2000), Some(501)));
    assert_eq!(rest.get("nextOffset"), None, "the last page");
    assert_eq!(rest["children"][500]["path"], "many/f2499.rs");
    send(&mut socket, json!({"type": "fs:list", "payload": {"path": "../"}})).await;
    let refused = next_of(&mut socket, "fs:list_error").await["payload"].clone();
    assert_eq!(refused["path"], "../");
    assert!(refused["error"].as_str().is_some_and(|e| e.contains("inside the project")), "{refused}");
    send(&mut socket, json!({"type": "fs:list", "payload": {"path": "src/main.rs"}})).await;
    assert_eq!(next_of(&mut socket, "fs:list_error").await["payload"]["error"], "\"src/main.rs\" is not a folder");
    assert_eq!(hello(&mut socket).await["type"], "connection:init", "connection still usable");
    assert!(!server.fixture.core.project_tree().listed().contains(&"many/sub".to_owned()), "never asked for");
}

#[tokio::test]
async fn ws_needs_the_token_which_a_browser_may_pass_as_a_query() {
    let server = running().await;
    let url = format!("{}/ws", server.base.replace("http://", "ws://"));
    let err = tokio_tungstenite::connect_async(url.as_str()).await.expect_err("no token");
    assert!(err.to_string().contains("401"), "{err}");
    let (mut socket, _) = tokio_tungstenite::connect_async(format!("{url}?token={TOKEN}")).await.expect("query token");
    assert_eq!(hello(&mut socket).await["type"], "connection:init");
    let mut foreign = format!("{url}?token={TOKEN}").into_client_request().expect("request");
    foreign.headers_mut().insert("Origin", "http://attacker.example".parse().expect("header"));
    let err = tokio_tungstenite::connect_async(foreign).await.expect_err("foreign origin");
    assert!(err.to_string().contains("403"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_start_from_one_ui_tells_every_ui_and_a_start_without_work_is_refused() {
    use futures_util::SinkExt;
    use tokio_tungstenite::tungstenite::Message;
    let server = crate::running().await;
    let mut starter = crate::tools::ui(&server).await;
    let mut other = crate::tools::ui(&server).await;
    let start = serde_json::json!({"type": "session:start", "id": "s1", "payload": {"issueNumber": 12}}).to_string();
    starter.send(Message::Text(start.clone().into())).await.expect("send");
    let started = crate::tools::frames_of(&mut other, "session:started", std::time::Duration::from_millis(500)).await;
    assert_eq!(started.len(), 1, "the other UI hears of it");
    assert_eq!(started[0]["issueContext"]["number"], 12);
    assert_eq!(started[0]["phases"], serde_json::json!([]));
    let session = server.fixture.core.active_session().expect("a session is active");
    assert_eq!(session.issue_number, Some(12));
    // Nothing to work on: refused, and the session goes on. (A start with work sets the
    // active session aside: sessions.rs.)
    let empty = serde_json::json!({"type": "session:start", "id": "s2", "payload": {}}).to_string();
    starter.send(Message::Text(empty.into())).await.expect("send");
    let refused =
        crate::tools::frames_of(&mut starter, "connection:error", std::time::Duration::from_millis(500)).await;
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert_eq!(refused[0]["code"], "INVALID_MESSAGE");
    assert_eq!(server.fixture.core.active_session().map(|s| s.id), Some(session.id), "the first session goes on");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_headless_session_start_also_tells_the_connected_uis() {
    let server = crate::running().await;
    let mut socket = crate::tools::ui(&server).await;
    let response = reqwest::Client::new()
        .post(format!("{}/api/session/start", server.base))
        .bearer_auth(crate::TOKEN)
        .json(&serde_json::json!({"issueNumber": 4, "issueTitle": "Greet the user"}))
        .send()
        .await
        .expect("start");
    assert_eq!(response.status(), 201);
    let started = crate::tools::frames_of(&mut socket, "session:started", std::time::Duration::from_millis(500)).await;
    assert_eq!(started.len(), 1);
    assert_eq!(started[0]["issueContext"]["title"], "Greet the user");
}

#[tokio::test]
async fn a_client_that_closes_gets_the_servers_close_back() {
    let server = running().await;
    let mut socket = connect(&server).await;
    socket.send(Message::Close(None)).await.expect("close sent");
    // A browser sees 1006 (abnormal closure) when the socket ends without the server's Close.
    let reply = loop {
        match tokio::time::timeout(Duration::from_secs(5), socket.next()).await.expect("an answer to the close") {
            Some(Ok(Message::Text(_))) => continue,
            other => break other,
        }
    };
    assert!(matches!(reply, Some(Ok(Message::Close(_)))), "the closing handshake completes: {reply:?}");
}
