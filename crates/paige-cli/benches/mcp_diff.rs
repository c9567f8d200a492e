//! `paige_get_diff` over MCP: round-trip latency and throughput with 8 concurrent clients on
//! a 5,000-line dirty buffer with 50 changed lines, plus the server's peak RSS — for Paige
//! (`paige serve`, release) in both MCP eras and, in the same run, the baselines: the official
//! TypeScript MCP SDK serving the same tool shape (`benches/mcp-baseline`, installed with npm
//! on first use) with 2025-11-25 sessions, and in its stateless mode for the stateless era.
//!
//! `cargo bench -p paige-cli --bench mcp_diff` — targets: p50 ≤ 1 ms, ≥ 5,000 calls/s (≥ 20×
//! the baseline), RSS ≤ 60 MB.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures_util::SinkExt;
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use serde_json::json;

const TOKEN: &str = "bench-token";
const SEQUENTIAL: usize = 1000;
const CONCURRENT_CLIENTS: usize = 8;
const LOAD_FOR: Duration = Duration::from_secs(5);

#[derive(Clone, Copy, PartialEq)]
enum Era {
    Sessions,
    Stateless,
    /// The TypeScript SDK's stateless mode: 2025-11-25 without a session id (the SDK does not
    /// implement the 2026-07-28 era), the baseline for Paige's stateless figures.
    SdkStateless,
}

struct Figures {
    p50: Duration,
    p99: Duration,
    calls_per_s: f64,
    /// With a raw HTTP load generator (pre-built requests, replies read but not parsed), so
    /// the 2 cores go to the server rather than to JSON parsing in the client.
    raw_calls_per_s: f64,
    peak_rss_mb: f64,
    reply_kb: f64,
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).expect("project");
    let saved: String = (0..5000).map(|i| format!("    let value_{i} = compute({i}, \"line {i}\");\n")).collect();
    let buffer: String = saved
        .lines()
        .enumerate()
        .map(|(i, l)| if i % 100 == 7 { format!("{l} // edited\n") } else { format!("{l}\n") })
        .collect();
    std::fs::write(project.join("big.rs"), &saved).expect("file");
    std::fs::write(dir.path().join("buffer.txt"), &buffer).expect("buffer");

    println!(
        "paige_get_diff, 5,000-line buffer with 50 changed lines; {SEQUENTIAL} sequential calls, then {CONCURRENT_CLIENTS} clients for {LOAD_FOR:?}"
    );
    let mut paige = start_paige(dir.path(), &project).await;
    set_buffer(paige.port, &buffer).await;
    let sessions = measure(paige.port, paige.child.id(), Era::Sessions, false).await;
    report("paige, 2025-11-25 sessions", &sessions);
    let stateless = measure(paige.port, paige.child.id(), Era::Stateless, false).await;
    report("paige, 2026-07-28 stateless", &stateless);
    stop(&mut paige.child);

    for (era, name, ours) in [
        (Era::Sessions, "TS SDK 1.32, 2025-11-25 sessions", &sessions),
        (Era::SdkStateless, "TS SDK 1.32, stateless mode", &stateless),
    ] {
        let Some(mut baseline) = start_baseline(dir.path(), &project, era).await else {
            println!("  baseline skipped: node or npm missing");
            return;
        };
        let base = measure(baseline.port, baseline.child.id(), era, true).await;
        report(name, &base);
        stop(&mut baseline.child);
        let throughput = if era == Era::Sessions {
            format!("{:.1}× (rmcp client)", ours.calls_per_s / base.calls_per_s)
        } else {
            format!(
                "{:.1}× (rmcp client), {:.1}× (raw client)",
                ours.calls_per_s / base.calls_per_s,
                ours.raw_calls_per_s / base.raw_calls_per_s
            )
        };
        println!(
            "    paige vs this baseline: p50 {:.1}× faster, p99 {:.1}× faster, throughput {throughput}, peak RSS {:.1}× smaller",
            base.p50.as_secs_f64() / ours.p50.as_secs_f64(),
            base.p99.as_secs_f64() / ours.p99.as_secs_f64(),
            base.peak_rss_mb / ours.peak_rss_mb
        );
    }
}

struct Server {
    child: Child,
    port: u16,
}

async fn start_paige(dir: &Path, project: &Path) -> Server {
    let data = dir.join("data");
    let child = Command::new(env!("CARGO_BIN_EXE_paige"))
        .args(["serve", "--port", "0"])
        .env("PROJECT_DIR", project)
        .env("DATA_DIR", &data)
        .env("ANTHROPIC_API_KEY", "bench")
        .env("PAIGE_TOKEN", TOKEN)
        .env("RUST_LOG", "warn")
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("paige starts");
    let run_file = data.join("run/server.json");
    let started = Instant::now();
    let port = loop {
        if let Ok(bytes) = std::fs::read(&run_file)
            && let Ok(info) = serde_json::from_slice::<serde_json::Value>(&bytes)
        {
            break info["port"].as_u64().expect("port") as u16;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "paige did not start");
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let client = reqwest::Client::new();
    client
        .post(format!("http://127.0.0.1:{port}/api/session/start"))
        .bearer_auth(TOKEN)
        .json(&json!({"issueNumber": 1}))
        .send()
        .await
        .expect("session starts");
    Server { child, port }
}

/// Puts the dirty buffer into Paige through `/ws`, as the editor would.
async fn set_buffer(port: u16, buffer: &str) {
    let (mut socket, _) =
        tokio_tungstenite::connect_async(format!("ws://127.0.0.1:{port}/ws?token={TOKEN}")).await.expect("ws");
    let frame = json!({"type": "buffer:update", "payload": {"path": "big.rs", "content": buffer}});
    socket.send(tokio_tungstenite::tungstenite::Message::Text(frame.to_string().into())).await.expect("send");
    socket.close(None).await.expect("close");
    tokio::time::sleep(Duration::from_millis(100)).await;
}

async fn start_baseline(dir: &Path, project: &Path, era: Era) -> Option<Server> {
    let baseline = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../benches/mcp-baseline");
    if !baseline.join("node_modules").exists() {
        let installed =
            Command::new("npm").args(["ci", "--no-audit", "--no-fund"]).current_dir(&baseline).status().ok()?;
        if !installed.success() {
            return None;
        }
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0").ok()?.local_addr().ok()?.port();
    let child = Command::new("node")
        .arg(baseline.join("server.mjs"))
        .arg(port.to_string())
        .arg(project.join("big.rs"))
        .arg(dir.join("buffer.txt"))
        .arg("big.rs")
        .args((era == Era::SdkStateless).then_some("stateless"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if started.elapsed() > Duration::from_secs(10) {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Some(Server { child, port })
}

async fn client(port: u16, era: Era) -> RunningService<RoleClient, ()> {
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(format!("http://127.0.0.1:{port}/mcp")).auth_header(TOKEN),
    );
    match era {
        Era::Sessions | Era::SdkStateless => ().serve(transport).await.expect("initialize"),
        Era::Stateless => ()
            .serve_with_lifecycle(
                transport,
                ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] },
            )
            .await
            .expect("discover"),
    }
}

async fn get_diff(client: &RunningService<RoleClient, ()>) -> usize {
    let result = client
        .call_tool(CallToolRequestParams::new("paige_get_diff").with_arguments(serde_json::Map::new()))
        .await
        .expect("tools/call");
    assert_ne!(result.is_error, Some(true), "{result:?}");
    serde_json::to_string(&result).map(|s| s.len()).unwrap_or(0)
}

async fn measure(port: u16, pid: u32, era: Era, baseline: bool) -> Figures {
    let one = client(port, era).await;
    let mut reply_bytes = 0;
    for _ in 0..100 {
        reply_bytes = get_diff(&one).await;
    }
    let mut samples = Vec::with_capacity(SEQUENTIAL);
    for _ in 0..SEQUENTIAL {
        let started = Instant::now();
        get_diff(&one).await;
        samples.push(started.elapsed());
    }
    samples.sort();
    let _ = one.cancel().await;

    let mut clients = Vec::new();
    for _ in 0..CONCURRENT_CLIENTS {
        clients.push(client(port, era).await);
    }
    let deadline = Instant::now() + LOAD_FOR;
    let started = Instant::now();
    let mut tasks = Vec::new();
    for c in clients {
        tasks.push(tokio::spawn(async move {
            let mut calls = 0u64;
            while Instant::now() < deadline {
                get_diff(&c).await;
                calls += 1;
            }
            let _ = c.cancel().await;
            calls
        }));
    }
    let mut total = 0;
    for t in tasks {
        total += t.await.expect("load task");
    }
    let elapsed = started.elapsed();
    // rmcp ends a session's per-request SSE stream a little after the reply, which a raw client
    // waiting for end-of-body pays for (the rmcp client reads events as they come): no raw
    // figure for Paige's sessions; the stateless path is what Claude Code uses by default.
    let raw_calls_per_s = if era == Era::Sessions && !baseline { f64::NAN } else { raw_load(port, era).await };
    Figures {
        p50: samples[SEQUENTIAL / 2],
        p99: samples[SEQUENTIAL * 99 / 100],
        calls_per_s: total as f64 / elapsed.as_secs_f64(),
        raw_calls_per_s,
        peak_rss_mb: peak_rss_mb(pid),
        reply_kb: reply_bytes as f64 / 1024.0,
    }
}

/// `CONCURRENT_CLIENTS` tasks posting a pre-built `tools/call` and reading (not parsing) the
/// reply, for `LOAD_FOR`; calls per second.
async fn raw_load(port: u16, era: Era) -> f64 {
    let url = format!("http://127.0.0.1:{port}/mcp");
    let http = reqwest::Client::new();
    let (version, session) = match era {
        Era::Stateless => ("2026-07-28", None),
        Era::SdkStateless => ("2025-11-25", None),
        Era::Sessions => ("2025-11-25", Some(raw_initialize(&http, &url).await)),
    };
    let meta = json!({"io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}});
    let mut params = json!({"name": "paige_get_diff", "arguments": {}});
    if era == Era::Stateless {
        params["_meta"] = meta;
    }
    // Each call gets its own JSON-RPC id: concurrent requests of one session must not share one.
    let params = params.to_string();
    let next_id = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(1));
    let deadline = Instant::now() + LOAD_FOR;
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..CONCURRENT_CLIENTS {
        let (http, url, params, session, next_id) =
            (http.clone(), url.clone(), params.clone(), session.clone(), next_id.clone());
        tasks.push(tokio::spawn(async move {
            let mut calls = 0u64;
            while Instant::now() < deadline {
                let mut request = http
                    .post(&url)
                    .bearer_auth(TOKEN)
                    .header("Content-Type", "application/json")
                    .header("Accept", "application/json, text/event-stream")
                    .header("MCP-Protocol-Version", version)
                    .header("Mcp-Method", "tools/call")
                    .header("Mcp-Name", "paige_get_diff")
                    .body(format!(
                        r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{params}}}"#,
                        next_id.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                    ));
                if let Some(id) = &session {
                    request = request.header("mcp-session-id", id);
                }
                let response = request.send().await.expect("post");
                assert!(response.status().is_success(), "raw call failed: {}", response.status());
                let bytes = response.bytes().await.expect("body");
                assert!(bytes.len() > 10_000, "a real diff came back: {}", String::from_utf8_lossy(&bytes));
                calls += 1;
            }
            calls
        }));
    }
    let mut total = 0;
    for t in tasks {
        total += t.await.expect("raw task");
    }
    total as f64 / started.elapsed().as_secs_f64()
}

/// A 2025-11-25 session opened by hand: initialize, then `notifications/initialized`.
async fn raw_initialize(http: &reqwest::Client, url: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    let response = http
        .post(url)
        .bearer_auth(TOKEN)
        .header("Accept", "application/json, text/event-stream")
        .json(&init)
        .send()
        .await
        .expect("initialize");
    let id = response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).expect("session id").to_owned();
    let _ = response.bytes().await;
    http.post(url)
        .bearer_auth(TOKEN)
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2025-11-25")
        .header("mcp-session-id", &id)
        .json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .send()
        .await
        .expect("initialized");
    id
}

/// Peak resident set (VmHWM) of a process, in MiB.
fn peak_rss_mb(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map(|kb| kb / 1024.0)
        .unwrap_or(f64::NAN)
}

fn report(name: &str, f: &Figures) {
    println!(
        "  {name:<34} p50 {:>6.3} ms  p99 {:>6.3} ms  {:>6.0} calls/s (raw client {:>6.0})  peak RSS {:>6.1} MiB  reply {:.0} KiB",
        f.p50.as_secs_f64() * 1000.0,
        f.p99.as_secs_f64() * 1000.0,
        f.calls_per_s,
        f.raw_calls_per_s,
        f.peak_rss_mb,
        f.reply_kb
    );
}

fn stop(child: &mut Child) {
    let _ = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status();
    let _ = child.wait();
}
