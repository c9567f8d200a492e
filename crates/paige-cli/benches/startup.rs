//! Start-up latency of `paige serve`: time from spawning the process to its first
//! successful `GET /health`, over 30 runs, and in the same run the baseline: the official
//! TypeScript MCP SDK's server (`benches/mcp-baseline`, as `mcp_diff` uses) from spawn to its
//! first HTTP answer. Run with `cargo bench -p paige-cli --bench startup` (release profile).
//! Target (issue 2): median ≤ 100 ms.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 30;
const GIVE_UP: Duration = Duration::from_secs(10);

fn main() {
    // `cargo bench` passes harness flags such as `--bench`; this binary takes none.
    let paige = time_runs("paige serve: spawn → first 200 /health", |dir, port| {
        std::fs::create_dir(dir.join("project")).expect("project dir");
        let mut command = Command::new(env!("CARGO_BIN_EXE_paige"));
        command
            .args(["serve", "--port", &port.to_string()])
            .env("PROJECT_DIR", dir.join("project"))
            .env("DATA_DIR", dir.join("data"))
            .env("ANTHROPIC_API_KEY", "bench");
        (command, "/health", 200)
    });
    let baseline = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../benches/mcp-baseline");
    if !baseline.join("node_modules").exists() {
        let installed = Command::new("npm").args(["ci", "--no-audit", "--no-fund"]).current_dir(&baseline).status();
        if !installed.is_ok_and(|s| s.success()) {
            println!("  baseline skipped: node or npm missing");
            return;
        }
    }
    let sdk = time_runs("TS SDK 1.32 server: spawn → first HTTP answer", |dir, port| {
        std::fs::write(dir.join("a.rs"), "fn main() {}\n").expect("file");
        let mut command = Command::new("node");
        command
            .arg(baseline.join("server.mjs"))
            .arg(port.to_string())
            .arg(dir.join("a.rs"))
            .arg(dir.join("a.rs"))
            .arg("a.rs");
        // Its /mcp answers a GET without a session with 400: an answer is what is timed.
        (command, "/mcp", 400)
    });
    println!("  paige vs the TS SDK server: median {:.1}× faster, p99 {:.1}× faster", sdk.0 / paige.0, sdk.1 / paige.1);
}

/// Starts the command `setup` builds `RUNS` times, each in a fresh temp dir on a free port,
/// timing spawn → the first answer with the expected status; prints and returns (p50, p99) ms.
fn time_runs(name: &str, setup: impl Fn(&Path, u16) -> (Command, &'static str, u16)) -> (f64, f64) {
    let mut samples = Vec::with_capacity(RUNS);
    for run in 0..RUNS {
        let dir = tempfile::tempdir().expect("temp dir");
        let port = free_port();
        let (mut command, path, status) = setup(dir.path(), port);
        let started = Instant::now();
        let mut child =
            command.current_dir(dir.path()).stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("server starts");
        let elapsed = loop {
            if answers(port, path, status) {
                break started.elapsed();
            }
            assert!(started.elapsed() < GIVE_UP, "{name}, run {run}: no answer within {GIVE_UP:?}");
            std::thread::sleep(Duration::from_micros(500));
        };
        let _ = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status();
        let _ = child.wait();
        samples.push(elapsed.as_secs_f64() * 1000.0);
    }
    samples.sort_by(f64::total_cmp);
    let median = (samples[RUNS / 2 - 1] + samples[RUNS / 2]) / 2.0;
    let p99 = samples[(RUNS * 99).div_ceil(100) - 1];
    println!(
        "{name}, {RUNS} runs\n  median {median:.1} ms   min {:.1} ms   p99 {p99:.1} ms   max {:.1} ms",
        samples[0],
        samples[RUNS - 1]
    );
    (median, p99)
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

fn answers(port: u16, path: &str, status: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else { return false };
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut response = String::new();
    stream.read_to_string(&mut response).is_ok() && response.starts_with(&format!("HTTP/1.1 {status}"))
}
