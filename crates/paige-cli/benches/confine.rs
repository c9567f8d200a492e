//! What coach mode's layers cost (issue 39): the added start time of a launch per layer, and
//! the added time of one Bash call inside them, each next to the same thing unconfined in the
//! same run. Median and p90 over RUNS runs.
//! - start: `true` as Claude Code would be started — plain; `paige confine` (Landlock,
//!   seccomp, capabilities); the jail (`bwrap`, user namespace when possible); both.
//! - per call: inside each, `sh -c true` spawned 200 times in a loop (what Claude Code does
//!   for a Bash call, less the model), per spawn.
//! - per hook: inside each, 200 connections to a local echo server on Paige's port, one
//!   request and its answer each (what `paige hook` does); in the jail with its own network
//!   they go through `paige relay` and Paige's gate.
//!
//! Run with `cargo bench -p paige-cli --bench confine` (release). Target: ≤ 5 ms p50 added per
//! Bash call.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 40;
const CALLS: usize = 200;

fn main() {
    let paige = env!("CARGO_BIN_EXE_paige");
    let dir = tempfile::tempdir().expect("temp dir");
    let project = dir.path().join("project");
    let data = dir.path().join("data");
    let config = data.join("claude");
    for d in [&project, &config] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    let echo = echo_server();
    let policy = serde_json::json!({
        "fs": true, "read": ["/"], "write": [config, "/tmp", "/dev/shm"], "hide": [],
        "devices": ["/dev/null", "/dev/tty", "/dev/pts", "/dev/ptmx"],
        "tcp_connect": [443, echo], "scope_abstract_unix": true, "scope_signals": true,
        "seccomp": true, "deny_unix_sockets": true, "deny_mounts": true, "drop_caps": false,
    })
    .to_string();
    let path = std::env::var_os("PATH");
    let jail = paige_core::launch::jail::probe(path.as_deref()).ok();
    let (jail_args, gate_args): (Vec<String>, Vec<String>) = jail
        .as_ref()
        .map(|probed| {
            let spec = paige_core::launch::jail::JailSpec {
                bwrap: probed.bwrap.clone(),
                userns: probed.userns,
                project_dir: project.clone(),
                data_dir: data.clone(),
                claude_config_dir: config.clone(),
                run_files: Vec::new(),
                keep_under_tmp: vec![Path::new(paige).to_owned()],
                gate: None,
                writable: Vec::new(),
            };
            let gate = data.join("gate.sock");
            let gated = paige_core::launch::jail::JailSpec { gate: Some(gate.clone()), ..spec.clone() };
            let words = |spec: &paige_core::launch::jail::JailSpec| {
                let mut args = vec![probed.bwrap.display().to_string()];
                args.extend(paige_core::launch::jail::args(spec).iter().map(|a| a.to_string_lossy().into_owned()));
                args.push("--".into());
                args
            };
            let mut with_gate: Vec<String> = [paige, "gate", "--socket"].map(str::to_owned).to_vec();
            with_gate.extend([gate.display().to_string(), "--allow".into(), format!("127.0.0.1:{echo}"), "--".into()]);
            with_gate.extend(words(&gated));
            (words(&spec), with_gate)
        })
        .unwrap_or_default();
    let confine = vec![paige.to_owned(), "confine".into(), "--policy".into(), policy.clone(), "--".into()];
    let relayed: Vec<String> = [paige, "confine", "--gate", paige_core::launch::gate::SOCKET_IN_JAIL, "--forward"]
        .map(str::to_owned)
        .into_iter()
        .chain([echo.to_string(), "--proxy".into(), "--policy".into(), policy, "--".into()])
        .collect();
    let mut cells: Vec<(&str, Vec<String>)> = vec![("plain", Vec::new()), ("paige confine", confine.clone())];
    if !jail_args.is_empty() {
        cells.push(("jail", jail_args.clone()));
        cells.push(("jail + paige confine", [jail_args, confine].concat()));
        cells.push(("jail + own network + gate", [gate_args, relayed].concat()));
    } else {
        println!("the jail cannot run here: its rows are missing");
    }
    println!("confine: {RUNS} runs each; start = spawn to exit of `true`; per call = one `sh -c true` inside");
    let mut base: Option<(Duration, Duration, Duration)> = None;
    for (name, prefix) in &cells {
        let start = median_p90(RUNS, || run(prefix, &["/bin/true"]));
        let loop_script = format!("i=0; while [ $i -lt {CALLS} ]; do sh -c true; i=$((i+1)); done");
        let calls = median_p90(RUNS / 4, || run(prefix, &["/bin/sh", "-c", &loop_script]) / CALLS as u32);
        let hook_script = format!(
            "import socket\nfor _ in range({CALLS}):\n    s = socket.create_connection(('127.0.0.1', {echo}))\n    s.sendall(b'ping')\n    assert s.recv(4) == b'ping'\n    s.close()"
        );
        let hooks = median_p90(RUNS / 4, || run(prefix, &["python3", "-c", &hook_script]) / CALLS as u32);
        let (base_start, base_call, base_hook) = *base.get_or_insert((start.0, calls.0, hooks.0));
        println!(
            "  {name:<26} start p50 {:>7.2} ms (+{:>6.2}) p90 {:>7.2} ms · per call p50 {:>6.3} ms (+{:>6.3}, ×{:.2}) p90 {:>6.3} ms · per hook p50 {:>6.3} ms (+{:>6.3})",
            ms(start.0),
            ms(start.0.saturating_sub(base_start)),
            ms(start.1),
            ms(calls.0),
            ms(calls.0.saturating_sub(base_call)),
            calls.0.as_secs_f64() / base_call.as_secs_f64(),
            ms(calls.1),
            ms(hooks.0),
            ms(hooks.0.saturating_sub(base_hook)),
        );
    }
}

/// A TCP echo server on 127.0.0.1 (Paige's port, for the bench): its port.
fn echo_server() -> u16 {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut buf = [0u8; 64];
                while let Ok(n @ 1..) = stream.read(&mut buf) {
                    if stream.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
            });
        }
    });
    port
}

fn run(prefix: &[String], command: &[&str]) -> Duration {
    let words: Vec<&str> = prefix.iter().map(String::as_str).chain(command.iter().copied()).collect();
    let started = Instant::now();
    let status = Command::new(words[0])
        .args(&words[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("runs");
    assert!(status.success(), "{words:?} failed: {status}");
    started.elapsed()
}

fn median_p90(runs: usize, mut f: impl FnMut() -> Duration) -> (Duration, Duration) {
    let mut times: Vec<Duration> = (0..runs.max(3)).map(|_| f()).collect();
    times.sort();
    (times[times.len() / 2], times[times.len() * 9 / 10])
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
