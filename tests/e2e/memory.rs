//! `paige memory` and `/api/memory` from outside: the CLI on its own (it opens the embedded
//! store in DATA_DIR/paige.db) and through a running `paige serve`, with the real model
//! (`PAIGE_MODEL_DIR`, set by scripts/test.sh) and without it.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::World;

/// The model's parent folder; the memory tests need it.
fn model_dir() -> String {
    std::env::var("PAIGE_MODEL_DIR").expect(
        "PAIGE_MODEL_DIR is not set: run scripts/test.sh, or fetch the model with scripts/lib.sh's ensure_embedding_model",
    )
}

pub(crate) fn world_with_model() -> World {
    let mut world = World::ready();
    world.set("PAIGE_MODEL_DIR", &model_dir());
    world
}

pub(crate) fn memory(world: &World, args: &[&str]) -> (bool, String, String) {
    let project = world.project().display().to_string();
    let mut all = vec!["memory"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--project", &project]);
    let (status, stdout, stderr) = world.run(&all);
    (status.success(), stdout, stderr)
}

fn remember_two(world: &World) {
    let (ok, stdout, stderr) =
        memory(world, &["add", "OAuth callback race condition", "--tags", "auth,oauth", "--importance", "high"]);
    assert!(ok, "{stdout}{stderr}");
    assert_eq!(stdout.trim(), "remembered 1 for project");
    let (ok, stdout, stderr) = memory(world, &["add", "CSS grid layout for the dashboard", "--tags", "css"]);
    assert!(ok, "{stdout}{stderr}");
}

/// The query's lines: (distance, content with tags).
fn ranked(stdout: &str) -> Vec<(f32, String)> {
    stdout
        .lines()
        .map(|line| {
            let mut parts = line.splitn(3, "  ");
            let distance =
                parts.next().and_then(|d| d.parse().ok()).unwrap_or_else(|| panic!("no distance in {line:?}"));
            let _project = parts.next();
            (distance, parts.next().unwrap_or_default().to_owned())
        })
        .collect()
}

#[test]
fn without_a_running_paige_the_cli_remembers_and_recalls_by_meaning_in_the_embedded_store() {
    let world = world_with_model();
    remember_two(&world);
    let (ok, stdout, stderr) = memory(&world, &["query", "race condition in auth flow"]);
    assert!(ok, "{stdout}{stderr}");
    let results = ranked(&stdout);
    assert_eq!(results.len(), 2, "{stdout}");
    assert_eq!(results[0].1, "OAuth callback race condition [auth,oauth]");
    assert!(results[0].0 < results[1].0, "best first: {stdout}");
    let (ok, stdout, _) = memory(&world, &["query", "anything", "-n", "1"]);
    assert!(ok && ranked(&stdout).len() == 1, "{stdout}");
    let (ok, stdout, stderr) = memory(&world, &["stats"]);
    assert!(ok, "{stdout}{stderr}");
    assert!(stdout.contains("store: the embedded store"), "{stdout}");
    assert!(stdout.contains("model: all-MiniLM-L6-v2 (384-d)"), "{stdout}");
    assert!(stdout.contains("memories: 2 (0 without a vector"), "{stdout}");
    assert!(stdout.contains("     2  project"), "{stdout}");
}

#[test]
fn without_the_model_the_cli_says_so_and_still_finds_memories_by_their_words() {
    let mut world = World::ready();
    let empty = world.root.path().join("no-models");
    world.set("PAIGE_MODEL_DIR", &empty.display().to_string());
    remember_two(&world);
    let (ok, stdout, stderr) = memory(&world, &["query", "race condition in auth flow"]);
    assert!(ok, "{stdout}{stderr}");
    assert!(stderr.contains("all-MiniLM-L6-v2 is not installed"), "{stderr}");
    let results = ranked(&stdout);
    assert_eq!(results.len(), 1, "only the memory sharing words: {stdout}");
    assert!(results[0].1.starts_with("OAuth callback race condition"), "{stdout}");
    let (_, stdout, _) = memory(&world, &["stats"]);
    assert!(stdout.contains("(2 without a vector"), "{stdout}");
}

#[test]
fn bad_arguments_are_clear_errors() {
    let world = world_with_model();
    let (ok, _, stderr) = memory(&world, &["add", "x", "--importance", "urgent"]);
    assert!(!ok);
    assert!(stderr.contains("importance must be low, medium or high"), "{stderr}");
}

/// A plain HTTP/1.1 request to the running Paige: (status code, body).
fn request(port: u16, token: &str, method: &str, path: &str, body: &str) -> (u16, serde_json::Value) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(60))).expect("timeout");
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(head.as_bytes()).expect("send");
    let mut reply = String::new();
    stream.read_to_string(&mut reply).expect("read");
    let status = reply[9..12].parse().expect("status");
    let json = reply.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or_default();
    (status, serde_json::from_str(json).unwrap_or(serde_json::Value::Null))
}

#[test]
fn the_cli_asks_the_running_paige_which_files_memories_under_the_project_and_answers_over_api_memory() {
    let world = world_with_model();
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", Duration::from_secs(20));
    let info = paige.run_info(&world.data_dir());
    let port = info["port"].as_u64().expect("port") as u16;
    let token = info["token"].as_str().expect("token").to_owned();
    remember_two(&world);
    // The running Paige did the work: its log says the model was loaded.
    paige.wait_for("loaded all-MiniLM-L6-v2", Duration::from_secs(20));
    let (status, reply) = request(
        port,
        &token,
        "POST",
        "/api/memory/query",
        r#"{"queryText": "race condition in auth flow", "project": "project"}"#,
    );
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["available"], true);
    let results = reply["results"].as_array().expect("results");
    assert_eq!(results[0]["content"], "OAuth callback race condition");
    assert_eq!(results[0]["metadata"]["session_id"], "cli");
    assert_eq!(results[0]["metadata"]["tags"], "auth,oauth");
    assert!(results[0]["id"].as_str().is_some_and(|id| id.starts_with("mem_cli_")), "{reply}");
    // Another project's memories only with --all-projects.
    let other = world.root.path().join("cwd");
    let (ok, stdout, _) = world.run(&["memory", "query", "race condition", "--project", &other.display().to_string()]);
    assert!(ok.success() && stdout.trim() == "no memories for cwd", "{stdout}");
    let (ok, stdout, _) =
        world.run(&["memory", "query", "race condition", "--all-projects", "--project", &other.display().to_string()]);
    assert!(ok.success() && ranked(&stdout).len() == 2, "{stdout}");
    let (status, reply) = request(port, &token, "GET", "/api/memory/stats", "");
    assert_eq!((status, reply["stats"]["total"].clone()), (200, serde_json::json!(2)), "{reply}");
    // Bad requests get the one error shape; nothing is stored.
    let (status, reply) = request(port, &token, "POST", "/api/memory/add", "{not json");
    assert_eq!((status, reply["code"].as_str()), (400, Some("bad_request")), "{reply}");
    let (status, reply) = request(port, &token, "POST", "/api/memory/add", r#"{"memories": [{"content": "  "}]}"#);
    assert_eq!(status, 400, "{reply}");
    let (status, _) = request(port, "wrong-token", "POST", "/api/memory/query", r#"{"queryText": "x"}"#);
    assert_eq!(status, 401);
    let (_, reply) = request(port, &token, "GET", "/api/memory/stats", "");
    assert_eq!(reply["stats"]["total"], 2);
    paige.signal("TERM");
}

/// A real `chroma run` (`PAIGE_TEST_CHROMA`) on a free port, killed on drop.
pub(crate) struct Chroma(std::process::Child, u16);

pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("port").local_addr().expect("addr").port()
}

impl Chroma {
    pub(crate) fn start_on(port: u16, data: &std::path::Path) -> Chroma {
        let cli = std::env::var("PAIGE_TEST_CHROMA").expect(
            "PAIGE_TEST_CHROMA is not set: run scripts/test.sh (it installs ChromaDB) or point it at a chroma CLI",
        );
        let child = std::process::Command::new(cli)
            .args(["run", "--path", &data.display().to_string(), "--host", "127.0.0.1", "--port", &port.to_string()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("chroma starts");
        let chroma = Chroma(child, port);
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(std::time::Instant::now() < deadline, "ChromaDB did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        chroma
    }
}

impl Drop for Chroma {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn paige_serve_with_chromadb_url_remembers_there_and_shuts_down_cleanly() {
    let mut world = world_with_model();
    let chroma = Chroma::start_on(free_port(), &world.root.path().join("chroma"));
    world.set("CHROMADB_URL", &format!("http://127.0.0.1:{}", chroma.1));
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ChromaDB connected — collection paige_memories ready", Duration::from_secs(20));
    paige.wait_for("ready in", Duration::from_secs(20));
    remember_two(&world);
    let (ok, stdout, stderr) = memory(&world, &["query", "race condition in auth flow"]);
    assert!(ok, "{stdout}{stderr}");
    assert!(ranked(&stdout)[0].1.starts_with("OAuth callback race condition"), "{stdout}");
    let (_, stdout, _) = memory(&world, &["stats"]);
    assert!(stdout.contains("store: ChromaDB (http://127.0.0.1:"), "{stdout}");
    paige.signal("TERM");
    let status = paige.wait_exit(Duration::from_secs(10));
    assert!(status.success(), "{status:?}: {}", paige.output());
    assert!(!paige.output().contains("panicked"), "{}", paige.output());
}

#[test]
fn paige_serve_starts_without_its_chromadb_and_uses_it_once_it_answers() {
    let mut world = world_with_model();
    let port = free_port();
    world.set("CHROMADB_URL", &format!("http://127.0.0.1:{port}"));
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for(
        &format!("ChromaDB unavailable at http://127.0.0.1:{port} — memory features disabled"),
        Duration::from_secs(20),
    );
    paige.wait_for("ready in", Duration::from_secs(20));
    let (ok, _, stderr) = memory(&world, &["add", "remembered while ChromaDB was down"]);
    assert!(!ok && stderr.contains("nothing was remembered"), "{stderr}");
    // ChromaDB comes up on that port: the next call reconnects.
    let _chroma = Chroma::start_on(port, &world.root.path().join("chroma"));
    let (ok, stdout, stderr) = memory(&world, &["add", "remembered once ChromaDB answered"]);
    assert!(ok, "{stdout}{stderr}");
    paige.wait_for("ChromaDB reconnected", Duration::from_secs(10));
    paige.signal("TERM");
    assert!(paige.wait_exit(Duration::from_secs(10)).success(), "{}", paige.output());
}
