//! Failure injection on a running `paige serve` (issue 19): a full disk under the project, a
//! read-only DATA_DIR and ChromaDB killed and restarted mid-run. Each ends in a stated
//! degraded behaviour with a clear message. The disk tests mount a small tmpfs or a read-only
//! bind mount: CI runs as root, which ignores permission bits, so only a read-only mount makes
//! a folder unwritable there. Without the right to mount they print why and return.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::memory::{Chroma, free_port, memory, world_with_model};
use crate::{Running, World};

/// A mount on `target`, undone on drop — lazily if something still holds it — so a failing
/// test never leaves one behind.
struct Mount {
    target: PathBuf,
}

impl Mount {
    /// A tmpfs of `size` (e.g. "64k") on `target`; `None`, said why, when mounting is impossible.
    fn tmpfs(target: &Path, size: &str) -> Option<Mount> {
        mount(&["-t", "tmpfs", "-o", &format!("size={size},mode=0755"), "tmpfs"], target)
    }

    /// `source` bind-mounted on `target`, writable until [`Mount::read_only`].
    fn bind(source: &Path, target: &Path) -> Option<Mount> {
        mount(&["--bind", &source.display().to_string()], target)
    }

    /// Remounts it read-only: a read-only file system, which even root cannot write.
    fn read_only(&self) {
        let status =
            Command::new("mount").args(["-o", "remount,ro,bind"]).arg(&self.target).status().expect("mount runs");
        assert!(status.success(), "cannot remount {} read-only", self.target.display());
    }
}

fn mount(args: &[&str], target: &Path) -> Option<Mount> {
    std::fs::create_dir_all(target).expect("mount point");
    match Command::new("mount").args(args).arg(target).output() {
        Ok(out) if out.status.success() => Some(Mount { target: target.to_owned() }),
        Ok(out) => {
            let why = String::from_utf8_lossy(&out.stderr);
            crate::skipped(&format!("cannot mount on {} ({}): this test needs root", target.display(), why.trim()));
            None
        }
        Err(err) => {
            crate::skipped(&format!("cannot run mount ({err}): this test needs mount(8) and root"));
            None
        }
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let undone = Command::new("umount").arg(&self.target).status().is_ok_and(|s| s.success());
        if !undone {
            let _ = Command::new("umount").arg("-l").arg(&self.target).status();
        }
    }
}

type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A UI on the running Paige's /ws, found through its run file (`Running::run_info`).
async fn ui(info: &Value) -> Socket {
    let url = format!("ws://127.0.0.1:{}/ws?token={}", info["port"], info["token"].as_str().expect("token"));
    tokio_tungstenite::connect_async(url).await.expect("ws").0
}

async fn send(socket: &mut Socket, kind: &str, payload: Value) {
    socket.send(Message::Text(json!({"type": kind, "payload": payload}).to_string().into())).await.expect("send");
}

/// The first frame of one of `kinds`, within 5 s.
async fn next_of(socket: &mut Socket, kinds: &[&str]) -> Value {
    let wanted = async {
        while let Some(Ok(message)) = socket.next().await {
            let frame: Value = serde_json::from_str(message.to_text().unwrap_or("{}")).unwrap_or_default();
            if kinds.iter().any(|k| frame["type"] == *k) {
                return frame;
            }
        }
        panic!("the socket closed before any of {kinds:?}")
    };
    tokio::time::timeout(Duration::from_secs(5), wanted).await.unwrap_or_else(|_| panic!("no {kinds:?} within 5 s"))
}

/// The editor's buffer of `path` as the coding agent reads it (`paige_get_buffer` over MCP).
async fn mcp_buffer(data_dir: &Path, path: &str) -> Value {
    use rmcp::ServiceExt;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let info = crate::read_json(&data_dir.join("run/server.json"));
    let config = StreamableHttpClientTransportConfig::with_uri(format!("http://127.0.0.1:{}/mcp", info["port"]))
        .auth_header(info["agentToken"].as_str().expect("agentToken").to_owned());
    let client = ().serve(StreamableHttpClientTransport::from_config(config)).await.expect("MCP initialize");
    let args = json!({"path": path}).as_object().cloned().expect("object");
    let request = rmcp::model::CallToolRequestParams::new("paige_get_buffer").with_arguments(args);
    let result = client.call_tool(request).await.expect("paige_get_buffer");
    client.cancel().await.expect("close");
    result.structured_content.expect("structured")["buffer"].clone()
}

fn serve(world: &World) -> Running {
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", Duration::from_secs(20));
    paige
}

/// Stops `paige` with SIGTERM; it must exit 0 and never have panicked.
fn stop(mut paige: Running) {
    paige.signal("TERM");
    let status = paige.wait_exit(Duration::from_secs(10));
    assert!(status.success(), "{status:?}: {}", paige.output());
    assert!(!paige.output().contains("panicked"), "{}", paige.output());
}

fn temp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .expect("read dir")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| name.starts_with(".paige-save-"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_save_onto_a_full_disk_is_a_save_error_and_loses_nothing() {
    let world = World::ready();
    let Some(_disk) = Mount::tmpfs(&world.project(), "16k") else { return };
    std::fs::write(world.project().join("notes.md"), "keep me\n").expect("file");
    let mut paige = serve(&world);
    let mut socket = ui(&paige.run_info(&world.data_dir())).await;
    // The learner's edit, bigger than the disk (and within what `paige_get_buffer` returns whole).
    let big = "a line the disk has no room for\n".repeat(1000);
    let cursor = json!({"line": 1, "column": 1});
    send(&mut socket, "buffer:update", json!({"path": "notes.md", "content": big, "cursorPosition": cursor})).await;
    send(&mut socket, "file:save", json!({"path": "notes.md", "content": big})).await;
    let error = next_of(&mut socket, &["fs:save_error", "fs:save_ack"]).await;
    assert_eq!(error["type"], "fs:save_error", "{error}");
    assert_eq!(error["payload"]["path"], "notes.md");
    let message = error["payload"]["error"].as_str().expect("error");
    assert!(message.starts_with("cannot write notes.md") && message.contains("No space left on device"), "{message}");
    // Nothing lost: the file as it was, no half-written temp file, the edit still in the buffer.
    assert_eq!(std::fs::read_to_string(world.project().join("notes.md")).expect("read"), "keep me\n");
    assert_eq!(temp_files(&world.project()), Vec::<String>::new());
    let buffer = mcp_buffer(&world.data_dir(), "notes.md").await;
    let kept = buffer["content"].as_str().expect("content");
    assert!(kept == big && buffer["dirty"] == true, "the edit is kept unsaved: {} of {} chars", kept.len(), big.len());
    // What fits saves as ever.
    send(&mut socket, "file:save", json!({"path": "notes.md", "content": "keep me\nand this\n"})).await;
    let ack = next_of(&mut socket, &["fs:save_error", "fs:save_ack"]).await;
    assert_eq!((ack["type"].as_str(), ack["payload"]["success"].as_bool()), (Some("fs:save_ack"), Some(true)), "{ack}");
    assert_eq!(std::fs::read_to_string(world.project().join("notes.md")).expect("read"), "keep me\nand this\n");
    drop(socket);
    stop(paige);
}

/// A world whose DATA_DIR is a bind mount of a folder beside it, writable until made read-only.
fn world_with_mounted_data_dir() -> Option<(World, Mount)> {
    let world = World::ready();
    let source = world.root.path().join("data-source");
    std::fs::create_dir(&source).expect("mkdir");
    let mount = Mount::bind(&source, &world.data_dir())?;
    Some((world, mount))
}

/// A DATA_DIR can only become read-only between runs: Linux refuses to remount a file system
/// (or a bind mount) read-only while a process holds a file on it open for writing, as Paige
/// holds its database.
#[test]
fn a_data_dir_that_became_read_only_is_named_at_start_up_with_exit_code_1_and_left_untouched() {
    let Some((world, data)) = world_with_mounted_data_dir() else { return };
    stop(serve(&world));
    let database = std::fs::read(world.data_dir().join("paige.db")).expect("database");
    data.read_only();
    let (status, _, stderr) = world.run(&["serve"]);
    assert_eq!(status.code(), Some(1), "{stderr}");
    let expected = format!(
        "DATA_DIR {} is on a read-only file system: Paige keeps its database there — make it writable or set \
         DATA_DIR to another folder",
        world.data_dir().canonicalize().expect("canonical").display()
    );
    assert!(stderr.contains(&expected), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(std::fs::read(world.data_dir().join("paige.db")).expect("database"), database, "untouched");
}

#[test]
fn chromadb_killed_mid_run_is_a_clear_memory_error_and_is_used_again_once_restarted() {
    let mut world = world_with_model();
    let port = free_port();
    let store = world.root.path().join("chroma");
    let chroma = Chroma::start_on(port, &store);
    world.set("CHROMADB_URL", &format!("http://127.0.0.1:{port}"));
    let mut paige = serve(&world);
    paige.wait_for("ChromaDB connected", Duration::from_secs(20));
    let (ok, stdout, stderr) = memory(&world, &["add", "OAuth callback race condition", "--tags", "auth"]);
    assert!(ok, "{stdout}{stderr}");
    // Killed mid-run: each call says memory is unavailable; Paige keeps serving.
    drop(chroma);
    let (ok, _, stderr) = memory(&world, &["query", "race condition"]);
    assert!(!ok && stderr.contains("error: memory is unavailable"), "{stderr}");
    paige.wait_for("memory unavailable until it reconnects", Duration::from_secs(10));
    let (ok, _, stderr) = memory(&world, &["add", "remembered while ChromaDB was down"]);
    assert!(!ok && stderr.contains("nothing was remembered"), "{stderr}");
    // Restarted on its data: the next call reconnects and what was remembered before is there.
    let _chroma = Chroma::start_on(port, &store);
    let (ok, stdout, stderr) = memory(&world, &["query", "race condition"]);
    assert!(ok, "{stdout}{stderr}");
    assert!(stdout.contains("OAuth callback race condition"), "{stdout}");
    paige.wait_for("ChromaDB reconnected", Duration::from_secs(10));
    let (ok, stdout, stderr) = memory(&world, &["add", "remembered once ChromaDB was back"]);
    assert!(ok && stdout.contains("remembered 1"), "{stdout}{stderr}");
    stop(paige);
}
