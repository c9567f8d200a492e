//! `paige_get_diff` over MCP: round-trip latency and throughput with 8 concurrent clients on
//! a 5,000-line dirty buffer with 50 changed lines, plus the server's peak RSS — for Paige
//! (`paige serve`, release) and, in the same run, the baseline: the official TypeScript MCP
//! SDK serving the same tool shape (`benches/mcp-baseline`, installed with npm on first use).
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
}

struct Figures {
    p50: Duration,
    p99: Duration,
    calls_per_s: f64,
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
    let sessions = measure(paige.port, paige.child.id(), Era::Sessions).await;
    report("paige, 2025-11-25 sessions", &sessions);
    let stateless = measure(paige.port, paige.child.id(), Era::Stateless).await;
    report("paige, 2026-07-28 stateless", &stateless);
    stop(&mut paige.child);

    match start_baseline(dir.path(), &project).await {
        Some(mut baseline) => {
            let base = measure(baseline.port, baseline.child.id(), Era::Sessions).await;
            report("TS SDK 1.32, 2025-11-25 sessions", &base);
            stop(&mut baseline.child);
            println!(
                "  ratios (paige sessions / baseline): p50 {:.1}× faster, throughput {:.1}×, RSS {:.1}× smaller",
                base.p50.as_secs_f64() / sessions.p50.as_secs_f64(),
                sessions.calls_per_s / base.calls_per_s,
                base.peak_rss_mb / sessions.peak_rss_mb
            );
        }
        None => println!("  baseline skipped: node or npm missing"),
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

async fn start_baseline(dir: &Path, project: &Path) -> Option<Server> {
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
        Era::Sessions => ().serve(transport).await.expect("initialize"),
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

async fn measure(port: u16, pid: u32, era: Era) -> Figures {
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
    Figures {
        p50: samples[SEQUENTIAL / 2],
        p99: samples[SEQUENTIAL * 99 / 100],
        calls_per_s: total as f64 / elapsed.as_secs_f64(),
        peak_rss_mb: peak_rss_mb(pid),
        reply_kb: reply_bytes as f64 / 1024.0,
    }
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
        "  {name:<34} p50 {:>6.3} ms  p99 {:>6.3} ms  {:>7.0} calls/s  peak RSS {:>6.1} MiB  reply {:.0} KiB",
        f.p50.as_secs_f64() * 1000.0,
        f.p99.as_secs_f64() * 1000.0,
        f.calls_per_s,
        f.peak_rss_mb,
        f.reply_kb
    );
}

fn stop(child: &mut Child) {
    let _ = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status();
    let _ = child.wait();
}
