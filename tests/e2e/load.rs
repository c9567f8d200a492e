//! The built `paige serve` under load and in a soak, measured from outside: 100 MCP clients
//! (rmcp, the 2025-11-25 session era) making mixed tool calls, 10 UIs over `/ws` streaming
//! `buffer:update`, and a terminal printing continuously, while the server's RSS is read from
//! /proc.
//!
//! `paige serve` has no PTY: the browser UI has no terminal (`terminal:input` is refused as
//! INVALID_MESSAGE; only a desktop window gets one, and the desktop e2e floods that PTY while
//! MCP calls and the window's IPC are timed). The terminal beside it is the user's own,
//! where Claude Code runs, and what it prints reaches Paige only through the hooks `paige hook`
//! posts: so the terminal here is Claude Code's Bash calls printing 64 KB each, as the
//! PreToolUse (the change detector's window opens) and PostToolUse (the output; the window
//! closes with a walk of the project) that `/hooks/*` receives.
//!
//! `PAIGE_LOAD_CALLS` (calls per MCP client) and `PAIGE_SOAK_SECS` (the soak after its warm-up)
//! keep a plain `cargo test` short; scripts/test.sh sets the CI values.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use paige_fake_anthropic::{FakeAnthropic, Matcher, Reply};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use tokio::sync::Barrier;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

use crate::{Running, World};

pub(crate) mod measure;

use measure::{SETTLE_WINDOW, Sampler, assert_log_clean, cpu_secs, median, read_log, rss_mb, warm_up};

const MCP_CLIENTS: usize = 100;
const UI_CLIENTS: usize = 10;
/// A call not answered within this counts as unanswered.
const CALL_DEADLINE: Duration = Duration::from_secs(60);
/// How often each UI sends its buffer (an editor debounces keystrokes about this much).
const UI_PERIOD: Duration = Duration::from_millis(50);
/// One Bash call's output, as Claude Code reports it in PostToolUse.
const TERMINAL_OUTPUT_BYTES: usize = 64 << 10;

type Client = RunningService<rmcp::RoleClient, ()>;

fn env_number(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(raw) => raw.trim().parse().unwrap_or_else(|_| panic!("{name}={raw:?} is not a whole number")),
        Err(_) => default,
    }
}

/// The two tests run one at a time: each measures its own server, not the other's clients.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_mcp_clients_ten_uis_and_a_terminal_get_every_call_answered_without_errors() {
    let calls = env_number("PAIGE_LOAD_CALLS", 20) as usize;
    let _alone = ONE_AT_A_TIME.lock().await;
    let server = Server::start().await;
    let idle = rss_mb(server.pid());
    let sampler = Sampler::start(server.pid(), server.port as u16);
    let background = Background::start(&server).await;

    let clients = connect_clients(&server).await;
    let (started, cpu, own) = (Instant::now(), cpu_secs(server.pid()), cpu_secs(std::process::id()));
    let results = run_clients(clients, Budget::Calls(calls)).await;
    let (elapsed, cpu, own) = (started.elapsed(), cpu_secs(server.pid()) - cpu, cpu_secs(std::process::id()) - own);
    let (uis, terminal) = background.stop().await;
    let (samples, slowest_health) = sampler.stop();
    let stats = Stats::of(&results);
    let peak = samples.iter().map(|s| s.1).fold(idle, f64::max);
    let output = server.stop();
    let (problems, lagged) = read_log(&output);

    eprintln!(
        "load: {MCP_CLIENTS} MCP clients x {calls} calls = {} answered in {elapsed:.1?} ({:.0} calls/s), \
         p50 {:?}, p99 {:?}, max {:?}; {} buffer updates from {UI_CLIENTS} UIs ({} frames back), \
         {} terminal outputs ({} MB); CPU: server {cpu:.1} s, clients (this process) {own:.1} s; RSS idle {idle:.1} MB, peak {peak:.1} MB; /health at worst {slowest_health:?}; \
         bus listeners fell behind {lagged} times",
        stats.answered,
        stats.answered as f64 / elapsed.as_secs_f64(),
        stats.p50,
        stats.p99,
        stats.max,
        uis.sent,
        uis.received,
        terminal.sent,
        (terminal.sent * TERMINAL_OUTPUT_BYTES as u64) >> 20,
    );
    stats.assert_clean(MCP_CLIENTS * calls);
    uis.assert_clean("UI frames");
    terminal.assert_clean("terminal hooks");
    assert_log_clean(&problems);
    assert!(peak < idle + PEAK_ALLOWANCE_MB, "peak RSS {peak:.1} MB, {idle:.1} MB idle");
    assert!(slowest_health < HEALTH_DEADLINE, "/health took {slowest_health:?} under load");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_soak_of_the_same_mix_grows_rss_less_than_5_percent_after_warm_up() {
    let soak = Duration::from_secs(env_number("PAIGE_SOAK_SECS", 10).max(5));
    let _alone = ONE_AT_A_TIME.lock().await;
    let server = Server::start().await;
    let sampler = Sampler::start(server.pid(), server.port as u16);
    let background = Background::start(&server).await;

    let clients = connect_clients(&server).await;
    let stop = CancellationToken::new();
    let started = Instant::now();
    let running = tokio::spawn(run_clients(clients, Budget::UntilStopped(stop.clone())));
    let (warmed, warm) = warm_up(&sampler, started).await;
    tokio::time::sleep(soak).await;
    let end = median(sampler.between(Instant::now() - SETTLE_WINDOW, Instant::now()));
    stop.cancel();
    let results = running.await.expect("clients");
    let elapsed = started.elapsed();
    let (uis, terminal) = background.stop().await;
    let (samples, slowest_health) = sampler.stop();
    let output = server.stop();
    let (problems, lagged) = read_log(&output);
    let stats = Stats::of(&results);

    let growth = (end - warm) / warm * 100.0;
    let (first, last) = (samples[0].0, samples[samples.len() - 1].0);
    let every = (last - first) / 12;
    let timeline: Vec<String> = (0..=12)
        .filter_map(|k| samples.iter().find(|s| s.0 >= first + every * k))
        .map(|s| format!("{:.1}", s.1))
        .collect();
    eprintln!(
        "soak: {:.0?} warm-up then {soak:?}: {} calls ({:.0} calls/s, p50 {:?}, p99 {:?}), {} buffer \
         updates, {} terminal outputs; RSS after warm-up {warm:.1} MB, at the end {end:.1} MB ({growth:+.2} %), \
         peak {:.1} MB; /health at worst {slowest_health:?}; bus listeners fell behind \
         {lagged} times; every {every:.0?}: {}",
        warmed - started,
        stats.answered,
        stats.answered as f64 / elapsed.as_secs_f64(),
        stats.p50,
        stats.p99,
        uis.sent,
        terminal.sent,
        samples.iter().map(|s| s.1).fold(0.0, f64::max),
        timeline.join(" "),
    );
    stats.assert_clean(stats.made);
    uis.assert_clean("UI frames");
    terminal.assert_clean("terminal hooks");
    assert_log_clean(&problems);
    assert!(slowest_health < HEALTH_DEADLINE, "/health took {slowest_health:?} in the soak");
    assert!(growth < 5.0, "RSS grew {growth:.2} % after warm-up: {warm:.1} MB -> {end:.1} MB");
}

/// A stall, not a slow machine: `/health` waits for nothing but the runtime.
const HEALTH_DEADLINE: Duration = Duration::from_secs(3);

/// Above the idle server: 100 MCP sessions, their requests in flight and the buffers.
const PEAK_ALLOWANCE_MB: f64 = 256.0;

/// `paige serve` with a coaching session and a two-phase plan, its model calls answered by the
/// fake Messages API (the plan, and the Observer's triage, which the buffer updates wake).
struct Server {
    _fake: FakeAnthropic,
    _world: World,
    paige: Running,
    port: u64,
    token: String,
}

impl Server {
    async fn start() -> Server {
        let fake = FakeAnthropic::start().await.expect("fake Messages API");
        fake.always(Matcher::call_type("coach_agent"), Reply::json(&plan()));
        let triage = json!({"should_nudge": false, "confidence": 0.2, "signal": "no_nudge", "reasoning": "on track",
            "suggested_context": {"current_file": "src/auth.rs", "expected_file": "src/auth.rs", "time_in_file": "1m", "phase_description": "Read the callback"}});
        fake.always(Matcher::call_type("observer_triage"), Reply::json(&triage));
        let mut world = World::ready();
        world.set("ANTHROPIC_BASE_URL", &fake.base_url());
        let src = world.project().join("src");
        std::fs::create_dir_all(&src).expect("src");
        std::fs::write(src.join("auth.rs"), numbered(40, 0)).expect("auth.rs");
        for ui in 0..UI_CLIENTS {
            std::fs::write(src.join(format!("ui{ui}.rs")), numbered(200, 0)).expect("ui file");
        }
        let mut paige = world.spawn(&["serve"]);
        paige.wait_for("ready in", Duration::from_secs(20));
        let info = paige.run_info(&world.data_dir());
        let port = info["port"].as_u64().expect("port");
        let token = info["token"].as_str().expect("token").to_owned();
        let server = Server { _fake: fake, _world: world, paige, port, token };

        let started = reqwest::Client::new()
            .post(format!("{}/api/session/start", server.base()))
            .bearer_auth(&server.token)
            .json(&json!({"issueTitle": "Login races the token"}))
            .send()
            .await
            .expect("session start sent");
        assert!(started.status().is_success(), "session start: {}", started.text().await.unwrap_or_default());
        let client = server.client().await;
        let planned = call(
            &client,
            "paige_run_coaching_pipeline",
            json!({"planText": "1. Read\n2. Await", "issueSummary": "Login races the token"}),
        )
        .await;
        assert!(planned.is_ok(), "the plan: {planned:?}");
        client.cancel().await.expect("close");
        server
    }

    fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn pid(&self) -> u32 {
        self.paige.child.id()
    }

    async fn client(&self) -> Client {
        let config = StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", self.base()))
            .auth_header(self.token.clone());
        ().serve(StreamableHttpClientTransport::from_config(config)).await.expect("MCP initialize")
    }

    /// SIGTERM, a clean exit, and everything the server printed.
    fn stop(mut self) -> String {
        self.paige.signal("TERM");
        let status = self.paige.wait_exit(Duration::from_secs(30));
        assert_eq!(status.code(), Some(0), "{}", self.paige.output());
        self.paige.output()
    }
}

fn plan() -> Value {
    let phase = |number: u32, title: &str| {
        json!({"number": number, "title": title, "description": format!("{title} in the callback."),
            "expected_files": ["src/auth.rs"], "hint_level": "line",
            "hints": {"file_hints": [{"path": "src/auth.rs", "style": "important"}],
                "line_hints": [{"path": "src/auth.rs", "start": 2, "end": 3, "style": "focus", "hover_text": "Here"}]},
            "knowledge_gap_opportunities": []})
    };
    json!({"phases": [phase(1, "Read"), phase(2, "Await")], "memory_connection": null, "estimated_difficulty": "beginner"})
}

/// `lines` numbered lines, line `changed` (1-based; 0 for none) edited.
fn numbered(lines: usize, changed: usize) -> String {
    (1..=lines)
        .map(|n| if n == changed { format!("let x{n} = edited();\n") } else { format!("let x{n} = {n};\n") })
        .collect()
}

/// The `i`-th call of MCP client `client`: read tools, highlights and hints, phase updates.
fn mixed_call(client: usize, i: usize) -> (&'static str, Value) {
    let ui_file = format!("src/ui{}.rs", (client * 7 + i / 10) % UI_CLIENTS);
    let statuses = ["active", "complete", "pending"];
    match (client + i) % 10 {
        0 => ("paige_get_diff", json!({})),
        1 => ("paige_get_diff", json!({"path": ui_file})),
        2 => ("paige_get_buffer", json!({"path": ui_file})),
        3 => ("paige_get_open_files", json!({})),
        4 => ("paige_get_session_state", json!({"include": []})),
        5 => ("paige_open_file", json!({"path": "src/auth.rs"})),
        6 => (
            "paige_highlight_lines",
            json!({"path": "src/auth.rs", "start": 1 + i % 30, "end": 3 + i % 30, "style": "focus"}),
        ),
        7 => ("paige_clear_highlights", json!({"path": "src/auth.rs"})),
        8 => ("paige_hint_files", json!({"hints": [{"path": ui_file, "style": "suggested"}]})),
        _ => ("paige_update_phase", json!({"phase": 1 + i % 2, "status": statuses[i % 3]})),
    }
}

/// A tool call: the result, or why it failed (a transport error, a tool error, no answer).
async fn call(client: &Client, tool: &str, args: Value) -> Result<(), String> {
    let Value::Object(args) = args else { return Err("arguments must be an object".into()) };
    let request = client.call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args));
    match tokio::time::timeout(CALL_DEADLINE, request).await {
        Err(_) => Err(format!("{tool}: no answer within {CALL_DEADLINE:?}")),
        Ok(Err(err)) => Err(format!("{tool}: {err}")),
        Ok(Ok(result)) if result.is_error == Some(true) => Err(format!("{tool}: tool error {:?}", result.content)),
        Ok(Ok(_)) => Ok(()),
    }
}

enum Budget {
    Calls(usize),
    UntilStopped(CancellationToken),
}

/// What one MCP client saw: each answered call's latency, and the failures.
#[derive(Default)]
struct ClientResult {
    made: usize,
    latencies: Vec<Duration>,
    errors: Vec<String>,
}

/// All MCP clients, initialized before any call is made.
async fn connect_clients(server: &Server) -> Vec<Client> {
    let connecting = (0..MCP_CLIENTS).map(|_| server.client());
    futures_util::future::join_all(connecting).await
}

/// Every client making calls at once, each waiting for its answer before the next.
async fn run_clients(clients: Vec<Client>, budget: Budget) -> Vec<ClientResult> {
    let budget = Arc::new(budget);
    let start = Arc::new(Barrier::new(clients.len()));
    let tasks: Vec<_> = clients
        .into_iter()
        .enumerate()
        .map(|(n, client)| {
            let (budget, start) = (budget.clone(), start.clone());
            tokio::spawn(async move {
                start.wait().await;
                let mut result = ClientResult::default();
                while match &*budget {
                    Budget::Calls(calls) => result.made < *calls,
                    Budget::UntilStopped(stop) => !stop.is_cancelled(),
                } {
                    let (tool, args) = mixed_call(n, result.made);
                    let began = Instant::now();
                    match call(&client, tool, args).await {
                        Ok(()) => result.latencies.push(began.elapsed()),
                        Err(err) => result.errors.push(err),
                    }
                    result.made += 1;
                }
                if let Err(err) = client.cancel().await {
                    result.errors.push(format!("closing the MCP session: {err}"));
                }
                result
            })
        })
        .collect();
    futures_util::future::join_all(tasks).await.into_iter().map(|r| r.expect("client task")).collect()
}

struct Stats {
    made: usize,
    answered: usize,
    errors: Vec<String>,
    p50: Duration,
    p99: Duration,
    max: Duration,
}

impl Stats {
    fn of(results: &[ClientResult]) -> Stats {
        let mut latencies: Vec<Duration> = results.iter().flat_map(|r| r.latencies.iter().copied()).collect();
        latencies.sort();
        let at = |q: f64| latencies.get(((latencies.len() as f64 * q) as usize).min(latencies.len().saturating_sub(1)));
        Stats {
            made: results.iter().map(|r| r.made).sum(),
            answered: latencies.len(),
            errors: results.iter().flat_map(|r| r.errors.iter().cloned()).collect(),
            p50: at(0.5).copied().unwrap_or_default(),
            p99: at(0.99).copied().unwrap_or_default(),
            max: latencies.last().copied().unwrap_or_default(),
        }
    }

    fn assert_clean(&self, expected: usize) {
        assert_no_errors("MCP calls", &self.errors);
        assert_eq!(self.answered, expected, "every call answered");
        assert!(expected > 0, "no call was made");
    }
}

fn assert_no_errors(what: &str, errors: &[String]) {
    assert!(errors.is_empty(), "{} {what} failed, the first: {:?}", errors.len(), &errors[..errors.len().min(5)]);
}

/// The UIs and the terminal, running until stopped.
struct Background {
    stop: CancellationToken,
    uis: Vec<tokio::task::JoinHandle<Traffic>>,
    terminal: tokio::task::JoinHandle<Traffic>,
}

impl Background {
    async fn start(server: &Server) -> Background {
        let stop = CancellationToken::new();
        let url = format!("ws://127.0.0.1:{}/ws?token={}", server.port, server.token);
        let mut uis = Vec::new();
        for n in 0..UI_CLIENTS {
            let (socket, _) = tokio_tungstenite::connect_async(url.as_str()).await.expect("ws connects");
            uis.push(tokio::spawn(ui(socket, n, stop.clone())));
        }
        let terminal = tokio::spawn(terminal(server.base(), server.token.clone(), stop.clone()));
        Background { stop, uis, terminal }
    }

    async fn stop(self) -> (Traffic, Traffic) {
        self.stop.cancel();
        let mut all = Traffic::default();
        for ui in self.uis {
            let one = ui.await.expect("ui task");
            all.sent += one.sent;
            all.received += one.received;
            all.errors.extend(one.errors);
            all.silent += usize::from(one.received == 0);
        }
        (all, self.terminal.await.expect("terminal task"))
    }
}

/// What the UIs, or the terminal, did while the MCP clients ran.
#[derive(Default)]
struct Traffic {
    /// Buffer updates, or the terminal's outputs (each a PreToolUse and a PostToolUse).
    sent: u64,
    /// Frames the UIs got back: the broadcasts of highlights, hints, phases.
    received: u64,
    /// UIs that got none.
    silent: usize,
    errors: Vec<String>,
}

impl Traffic {
    fn assert_clean(&self, what: &str) {
        assert_no_errors(what, &self.errors);
        assert!(self.sent > 0, "{what}: nothing sent");
        assert_eq!(self.silent, 0, "{what}: every UI got the broadcasts");
    }
}

type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A UI editing `src/ui<n>.rs`: its whole buffer every [`UI_PERIOD`], one line changed each
/// time; reads every frame the server sends, counting `connection:error` as an error.
async fn ui(socket: Socket, n: usize, stop: CancellationToken) -> Traffic {
    let (mut tx, mut rx) = socket.split();
    let received = Arc::new(AtomicU64::new(0));
    let failed = Arc::new(Mutex::new(Vec::new()));
    let reader = {
        let (received, failed) = (received.clone(), failed.clone());
        tokio::spawn(async move {
            while let Some(message) = rx.next().await {
                let error = match message {
                    Ok(Message::Text(text)) => match serde_json::from_str::<Value>(text.as_str()) {
                        Ok(frame) if frame["type"] == "connection:error" => Some(frame.to_string()),
                        Ok(_) => None,
                        Err(err) => Some(format!("a frame that is not JSON: {err}")),
                    },
                    Ok(Message::Close(_)) => break,
                    Ok(_) => None,
                    Err(err) => Some(format!("socket error: {err}")),
                };
                received.fetch_add(1, Ordering::Relaxed);
                if let Some(error) = error {
                    failed.lock().expect("errors").push(error);
                }
            }
        })
    };
    let path = format!("src/ui{n}.rs");
    let mut result = Traffic::default();
    let mut tick = tokio::time::interval(UI_PERIOD);
    while !stop.is_cancelled() {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stop.cancelled() => break,
        }
        let line = 1 + (result.sent as usize % 200);
        let frame = json!({"type": "buffer:update", "payload": {"path": path, "content": numbered(200, line),
            "cursorPosition": {"line": line, "column": 1}}});
        if let Err(err) = tx.send(Message::Text(frame.to_string().into())).await {
            result.errors.push(format!("UI {n} cannot send: {err}"));
            break;
        }
        result.sent += 1;
    }
    let _ = tx.send(Message::Close(None)).await;
    if tokio::time::timeout(Duration::from_secs(10), reader).await.is_err() {
        result.errors.push(format!("UI {n}: the server did not close the socket"));
    }
    result.received = received.load(Ordering::Relaxed);
    result.errors.extend(failed.lock().expect("errors").drain(..));
    result
}

/// Claude Code's Bash calls in the terminal beside Paige, back to back, each printing
/// [`TERMINAL_OUTPUT_BYTES`]: the PreToolUse and PostToolUse hooks `paige hook` posts.
/// Paige has no objection to a read-only command, so every answer must be `none`.
async fn terminal(base: String, token: String, stop: CancellationToken) -> Traffic {
    let http = reqwest::Client::new();
    let line = "test auth::callback_waits_for_the_token ... ok\n";
    let stdout: String = line.repeat(TERMINAL_OUTPUT_BYTES / line.len());
    let mut result = Traffic::default();
    let mut n = 0u64;
    while !stop.is_cancelled() {
        n += 1;
        let transcript = std::env::temp_dir().join(format!("paige-load-transcript-{}.jsonl", std::process::id()));
        let common = json!({"session_id": "load-terminal", "cwd": "/", "permission_mode": "default",
            "transcript_path": transcript,
            "tool_name": "Bash", "tool_input": {"command": "cat target/test.log", "description": "Show the test log"},
            "tool_use_id": format!("toolu_load_{n}")});
        let mut post = common.clone();
        post["hook_event_name"] = json!("PostToolUse");
        post["tool_response"] = json!({"stdout": stdout, "stderr": "", "interrupted": false, "isImage": false});
        let mut pre = common;
        pre["hook_event_name"] = json!("PreToolUse");
        // As Claude Code does, beside running the hook: the call is on its transcript.
        crate::hook::record_call(&pre);
        for (event, body) in [("pre-tool-use", pre), ("post-tool-use", post)] {
            let sent = http.post(format!("{base}/hooks/{event}")).bearer_auth(&token).json(&body).send().await;
            let answer = match sent {
                Ok(response) if response.status().is_success() => {
                    response.json::<Value>().await.map_err(|e| e.to_string())
                }
                Ok(response) => Err(format!("HTTP {}", response.status())),
                Err(err) => Err(err.to_string()),
            };
            match answer {
                Ok(decision) if decision["decision"] == "none" => {}
                Ok(decision) => result.errors.push(format!("{event}: {decision}")),
                Err(err) => result.errors.push(format!("{event}: {err}")),
            }
        }
        result.sent += 1;
    }
    result
}
