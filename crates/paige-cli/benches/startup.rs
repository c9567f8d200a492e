//! Start-up latency of `paige serve`: time from spawning the process to its first
//! successful `GET /health`, over 20 runs. Run with `cargo bench -p paige-cli --bench startup`
//! (release profile). Target (issue 2): median ≤ 100 ms.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 20;
const GIVE_UP: Duration = Duration::from_secs(10);

fn main() {
    // `cargo bench` passes harness flags such as `--bench`; this binary takes none.
    let paige = env!("CARGO_BIN_EXE_paige");
    let mut samples = Vec::with_capacity(RUNS);
    for run in 0..RUNS {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir(dir.path().join("project")).expect("project dir");
        let port = free_port();
        let started = Instant::now();
        let mut child = Command::new(paige)
            .args(["serve", "--port", &port.to_string()])
            .env("PROJECT_DIR", dir.path().join("project"))
            .env("DATA_DIR", dir.path().join("data"))
            .env("ANTHROPIC_API_KEY", "bench")
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("paige starts");
        let elapsed = loop {
            if health_ok(port) {
                break started.elapsed();
            }
            assert!(started.elapsed() < GIVE_UP, "run {run}: no /health within {GIVE_UP:?}");
            std::thread::sleep(Duration::from_micros(500));
        };
        let _ = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status();
        let _ = child.wait();
        samples.push(elapsed);
    }
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let median = (ms(samples[RUNS / 2 - 1]) + ms(samples[RUNS / 2])) / 2.0;
    println!("paige serve: process start → first 200 /health, {RUNS} runs");
    println!(
        "  median {median:.1} ms   min {:.1} ms   p90 {:.1} ms   max {:.1} ms   (target ≤ 100 ms)",
        ms(samples[0]),
        ms(samples[RUNS * 9 / 10 - 1]),
        ms(samples[RUNS - 1])
    );
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

fn health_ok(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else { return false };
    let request = format!("GET /health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut response = String::new();
    stream.read_to_string(&mut response).is_ok() && response.starts_with("HTTP/1.1 200")
}
