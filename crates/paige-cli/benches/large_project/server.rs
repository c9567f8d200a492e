//! A `paige serve` (the release binary) on a project, and the plain clients the bench talks
//! to it with: `/health`, hooks posted as `paige hook` posts them, the first `fs:tree` over
//! `/ws`, its log (the "change detector primed" line), RSS and DATA_DIR's size.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The `paige` measured: this build's, or `PAIGE_LARGE_BIN` (another build, to compare).
pub fn binary() -> PathBuf {
    let own = || PathBuf::from(env!("CARGO_BIN_EXE_paige"));
    std::env::var_os("PAIGE_LARGE_BIN").filter(|v| !v.is_empty()).map_or_else(own, PathBuf::from)
}

/// What the log reader found: when the detector said it was primed (since spawn, with the
/// `ms=` it logged), and the last lines for a failure's message.
#[derive(Default)]
struct Log {
    primed: Option<(Duration, Option<u64>)>,
    tail: std::collections::VecDeque<String>,
}

pub struct Paige {
    child: Child,
    pub port: u16,
    pub spawned: Instant,
    pub data: PathBuf,
    ui_token: String,
    agent_token: String,
    log: Arc<(Mutex<Log>, Condvar)>,
    _scratch: tempfile::TempDir,
}

/// The UI token the bench gives `paige serve` (`PAIGE_TOKEN`).
const UI_TOKEN: &str = "bench0ui0token0bench0ui0token0bench0ui0token0bench0ui0token00000";

impl Paige {
    /// Spawns `paige serve` on `project` with a fresh DATA_DIR, HOME and working dir (so no
    /// `.env` is read), coach mode (no `.orchestration/`), the jail off (in the jail coach mode
    /// watches no call) and the model API pointed at a closed port.
    pub fn spawn(project: &Path) -> Paige {
        let scratch = tempfile::Builder::new().prefix("paige-large-run-").tempdir().expect("temp dir");
        let (data, home, cwd) = (scratch.path().join("data"), scratch.path().join("home"), scratch.path().join("cwd"));
        for dir in [&home, &cwd] {
            std::fs::create_dir_all(dir).expect("mkdir");
        }
        let port = free_port();
        let spawned = Instant::now();
        let mut child = Command::new(binary())
            .args(["serve", "--port", &port.to_string()])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("PROJECT_DIR", project)
            .env("DATA_DIR", &data)
            .env("ANTHROPIC_API_KEY", "bench")
            .env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
            // No OS layer, so the change detector watches every call (it stands down when the
            // project is read-only by construction).
            .env("PAIGE_JAIL", "0")
            .env("PAIGE_LANDLOCK", "0")
            // With no OS layer the UI token is in no file: the bench names it.
            .env("PAIGE_TOKEN", UI_TOKEN)
            .env("RUST_LOG", "info")
            .current_dir(&cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("paige serve starts");
        let log: Arc<(Mutex<Log>, Condvar)> = Arc::default();
        let out: Box<dyn Read + Send> = Box::new(child.stdout.take().expect("stdout"));
        let err: Box<dyn Read + Send> = Box::new(child.stderr.take().expect("stderr"));
        for pipe in [out, err] {
            let log = log.clone();
            std::thread::spawn(move || read_log(pipe, spawned, &log));
        }
        Paige {
            child,
            port,
            spawned,
            data,
            ui_token: String::new(),
            agent_token: String::new(),
            log,
            _scratch: scratch,
        }
    }

    /// Polls `/health` until it answers 200 (then reads the agent token from the run file): the
    /// time since spawn, or `None` past `cap` or when the server exited.
    pub fn wait_health(&mut self, cap: Duration) -> Option<Duration> {
        loop {
            if get_status(self.port, "/health") == Some(200) {
                let at = self.spawned.elapsed();
                let text = std::fs::read_to_string(self.data.join("run/server.json")).expect("the run file");
                let info: serde_json::Value = serde_json::from_str(&text).expect("run file json");
                self.ui_token = UI_TOKEN.to_owned();
                self.agent_token = info["agentToken"].as_str().expect("agentToken").to_owned();
                return Some(at);
            }
            if self.spawned.elapsed() > cap || self.child.try_wait().ok().flatten().is_some() {
                return None;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Waits until the log says the detector is primed, at most until `cap` after spawn:
    /// (since spawn, the `ms=` logged).
    pub fn primed(&self, cap: Duration) -> Option<(Duration, Option<u64>)> {
        let (lock, ready) = &*self.log;
        let mut log = lock.lock().expect("log");
        loop {
            if log.primed.is_some() {
                return log.primed;
            }
            let left = cap.checked_sub(self.spawned.elapsed())?;
            log = ready.wait_timeout(log, left.min(Duration::from_millis(200))).expect("log").0;
        }
    }

    /// Posts a hook as `paige hook` does, with the agent token and how long it would wait.
    pub fn hook(&self, slug: &str, body: &str, cap: Duration) -> Answer {
        let within = if slug == "pre-tool-use" { 3000 } else { 59_000 };
        post(self.port, &self.agent_token, &format!("/hooks/{slug}"), body, within, cap)
    }

    /// Connects to `/ws`, says hello and waits for the first `fs:tree`: (time since the
    /// connect began, the frame's bytes).
    pub fn first_tree(&self, cap: Duration) -> Option<(Duration, usize)> {
        first_tree(self.port, &self.ui_token, cap)
    }

    /// VmRSS of the server, bytes.
    pub fn rss(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
        line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kib| kib * 1024)
    }

    pub fn tail(&self) -> String {
        self.log.0.lock().expect("log").tail.iter().cloned().collect::<Vec<_>>().join("\n")
    }

    /// SIGTERM, then SIGKILL if it has not exited within 10 s.
    pub fn stop(mut self) {
        // SAFETY: kill(2) on the pid of our own child, which has not been reaped yet.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let until = Instant::now() + Duration::from_secs(10);
        while Instant::now() < until {
            if self.child.try_wait().ok().flatten().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        println!("    (paige serve did not stop within 10 s of SIGTERM: killed)");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read_log(pipe: Box<dyn Read + Send>, spawned: Instant, log: &(Mutex<Log>, Condvar)) {
    for line in BufReader::new(pipe).lines() {
        let Ok(line) = line else { break };
        let at = spawned.elapsed();
        let mut state = log.0.lock().expect("log");
        if state.primed.is_none() && line.contains("change detector primed") {
            let ms = line.split_whitespace().find_map(|w| w.strip_prefix("ms=")).and_then(|v| v.parse().ok());
            state.primed = Some((at, ms));
            log.1.notify_all();
        }
        if state.tail.len() >= 40 {
            state.tail.pop_front();
        }
        state.tail.push_back(line);
    }
}

/// A hook's answer: how long it took (`None`: not within the cap) and the engine's decision
/// (`none`, `deny`, `block`, `context`; else what went wrong).
#[derive(Clone, Debug)]
pub struct Answer {
    pub took: Option<Duration>,
    pub decision: String,
}

fn post(port: u16, token: &str, path: &str, body: &str, within_ms: u64, cap: Duration) -> Answer {
    let started = Instant::now();
    let failed = |took| Answer { took, decision: "no answer".into() };
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else { return failed(Some(started.elapsed())) };
    stream.set_nodelay(true).ok();
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nX-Paige-Answer-Within-Ms: {within_ms}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    if stream.write_all(request.as_bytes()).is_err() {
        return failed(Some(started.elapsed()));
    }
    let mut response = Vec::new();
    let mut buf = [0u8; 16384];
    loop {
        let Some(left) = cap.checked_sub(started.elapsed()).filter(|l| !l.is_zero()) else { return failed(None) };
        stream.set_read_timeout(Some(left)).ok();
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                response.extend_from_slice(&buf[..n]);
                if complete(&response) {
                    break;
                }
            }
            Err(err) if matches!(err.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                return failed(None);
            }
            Err(_) => return failed(Some(started.elapsed())),
        }
    }
    let took = Some(started.elapsed());
    let text = String::from_utf8_lossy(&response);
    let status = text.split_whitespace().nth(1).and_then(|s| s.parse::<u16>().ok()).unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    let decision = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v["decision"].as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("HTTP {status}: {}", body.chars().take(200).collect::<String>()));
    Answer { took, decision }
}

/// True once the headers and `Content-Length` bytes of body have arrived.
fn complete(response: &[u8]) -> bool {
    let Some(end) = response.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4) else { return false };
    let head = String::from_utf8_lossy(&response[..end]).to_ascii_lowercase();
    let length = head.lines().find_map(|l| l.strip_prefix("content-length:")).and_then(|v| v.trim().parse().ok());
    length.is_some_and(|len: usize| response.len() >= end + len)
}

fn first_tree(port: u16, token: &str, cap: Duration) -> Option<(Duration, usize)> {
    use tokio_tungstenite::tungstenite::{self, Message, protocol::WebSocketConfig};
    let started = Instant::now();
    let stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(cap)).ok()?;
    let config = WebSocketConfig::default().max_message_size(None).max_frame_size(None);
    let url = format!("ws://127.0.0.1:{port}/ws?token={token}");
    let (mut socket, _) = tungstenite::client::client_with_config(url, stream, Some(config)).ok()?;
    let hello = serde_json::json!({"type": "connection:hello", "payload": {"version": "bench", "platform": "bench",
        "windowSize": {"width": 1280, "height": 800}}});
    socket.send(Message::text(hello.to_string())).ok()?;
    while started.elapsed() < cap {
        let Message::Text(text) = socket.read().ok()? else { continue };
        let at = started.elapsed();
        let head = text.get(..text.len().min(64)).unwrap_or("");
        let tree = match head.contains("\"type\":") {
            true => head.contains("\"type\":\"fs:tree\""),
            false => serde_json::from_str::<serde_json::Value>(&text).is_ok_and(|v| v["type"] == "fs:tree"),
        };
        if tree {
            let _ = socket.close(None);
            return Some((at, text.len()));
        }
    }
    None
}

/// The status of a plain GET, `None` when nothing answers.
fn get_status(port: u16, path: &str) -> Option<u16> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(stream, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n").ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    response.split_whitespace().nth(1)?.parse().ok()
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

/// Bytes of every file under `dir` (not following symlinks): their lengths, and the blocks
/// they take on disk (what `du` counts).
pub fn dir_bytes(dir: &Path) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(dir) else { return (0, 0) };
    entries.flatten().fold((0, 0), |(len, disk), entry| {
        let (l, d) = match entry.file_type() {
            Ok(t) if t.is_dir() => dir_bytes(&entry.path()),
            Ok(t) if t.is_file() => entry.metadata().map_or((0, 0), |m| (m.len(), m.blocks() * 512)),
            _ => (0, 0),
        };
        (len + l, disk + d)
    })
}
