//! A real ChromaDB server for one test: `chroma run` (the CLI of the pinned Python package,
//! installed by scripts/lib.sh's `ensure_chromadb`) on a free port over a fresh directory,
//! killed when dropped.

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The variable naming the `chroma` CLI.
pub const CHROMA_VAR: &str = "PAIGE_TEST_CHROMA";
const COLLECTIONS: &str = "/api/v2/tenants/default_tenant/databases/default_database/collections";
/// Starting takes about a second; allow for a busy machine.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// The `chroma` CLI; fails the test when it is not configured (never passes silently).
fn chroma_cli() -> PathBuf {
    let Some(cli) = std::env::var_os(CHROMA_VAR).filter(|value| !value.is_empty()) else {
        panic!(
            "{CHROMA_VAR} is not set: these tests run a real ChromaDB server. Run scripts/test.sh \
             (its ensure_chromadb installs ChromaDB 1.5.9), or set {CHROMA_VAR} to a `chroma` CLI \
             (e.g. /var/tmp/paige-test-tools/chroma/bin/chroma)"
        )
    };
    let cli = PathBuf::from(cli);
    assert!(cli.is_file(), "{CHROMA_VAR}={} is not a file; run scripts/test.sh to install ChromaDB", cli.display());
    cli
}

/// A port nobody listens on now.
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("local address").port()
}

pub fn url_of(port: u16) -> String {
    format!("http://127.0.0.1:{port}")
}

pub struct Chroma {
    pub port: u16,
    child: Mutex<Option<Child>>,
    dir: tempfile::TempDir,
}

impl Chroma {
    /// A fresh server on a free port.
    pub fn start() -> Chroma {
        Chroma::start_on(free_port())
    }

    /// A fresh server on `port`, answering its heartbeat.
    pub fn start_on(port: u16) -> Chroma {
        let cli = chroma_cli();
        let dir = tempfile::tempdir().expect("temporary directory");
        let log = std::fs::File::create(dir.path().join("chroma.log")).expect("log file");
        let mut command = Command::new(&cli);
        // Should this test's thread end without dropping the server (the test binary killed),
        // the kernel kills the server: no orphan keeps the port and the directory.
        // SAFETY: prctl is async-signal-safe and touches nothing of the parent's.
        unsafe {
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let child = command
            .args(["run", "--host", "127.0.0.1", "--port", &port.to_string(), "--path"])
            .arg(dir.path().join("data"))
            .env("ANONYMIZED_TELEMETRY", "False")
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log file"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|err| panic!("cannot start {} ({CHROMA_VAR}): {err}", cli.display()));
        let chroma = Chroma { port, child: Mutex::new(Some(child)), dir };
        chroma.wait_ready();
        chroma
    }

    fn wait_ready(&self) {
        let client = http();
        let heartbeat = format!("{}/api/v2/heartbeat", self.url());
        let started = Instant::now();
        loop {
            if client.get(&heartbeat).send().is_ok_and(|response| response.status().is_success()) {
                return;
            }
            if let Some(status) = self.child.lock().unwrap().as_mut().and_then(|child| child.try_wait().ok().flatten())
            {
                panic!("chroma run exited ({status}) before answering:\n{}", self.log());
            }
            assert!(
                started.elapsed() < START_TIMEOUT,
                "chroma did not answer within {START_TIMEOUT:?}:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn url(&self) -> String {
        url_of(self.port)
    }

    fn log(&self) -> String {
        let log = std::fs::read_to_string(self.dir.path().join("chroma.log")).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(40).collect();
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    }

    /// Kills the server and waits for it to be gone.
    pub fn kill(&self) {
        if let Some(mut child) = self.child.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    // Another client of the same server, speaking the HTTP API directly.

    pub fn collections(&self) -> String {
        format!("{}{COLLECTIONS}", self.url())
    }

    /// Creates a collection (default settings: the l2 space) and returns its id.
    pub fn create_collection(&self, name: &str, configuration: Option<Value>) -> String {
        let mut body = json!({ "name": name, "get_or_create": true });
        if let Some(configuration) = configuration {
            body["configuration"] = configuration;
        }
        let answer = self.post(&self.collections(), &body);
        answer["id"].as_str().expect("collection id").to_owned()
    }

    pub fn collection(&self, name: &str) -> Value {
        let response = http().get(format!("{}/{name}", self.collections())).send().expect("get collection");
        assert!(response.status().is_success(), "get collection {name}: {}", response.status());
        response.json().expect("collection JSON")
    }

    pub fn delete_collection(&self, name: &str) {
        let response = http().delete(format!("{}/{name}", self.collections())).send().expect("delete collection");
        assert!(response.status().is_success(), "delete collection {name}: {}", response.status());
    }

    pub fn upsert(&self, collection_id: &str, ids: &[&str], embeddings: &[Vec<f32>], project: &str) {
        let metadatas: Vec<Value> = ids.iter().map(|_| json!({ "project": project })).collect();
        let body = json!({ "ids": ids, "embeddings": embeddings, "documents": ids, "metadatas": metadatas });
        self.post(&format!("{}/{collection_id}/upsert", self.collections()), &body);
    }

    pub fn count(&self, collection_id: &str) -> usize {
        let response =
            http().get(format!("{}/{collection_id}/count", self.collections())).send().expect("count collection");
        assert!(response.status().is_success(), "count: {}", response.status());
        response.json::<usize>().expect("count JSON")
    }

    fn post(&self, url: &str, body: &Value) -> Value {
        let response = http().post(url).json(body).send().expect("request to chroma");
        let status = response.status();
        let text = response.text().expect("response text");
        assert!(status.is_success(), "POST {url}: {status} {text}");
        serde_json::from_str(&text).expect("JSON answer")
    }
}

impl Drop for Chroma {
    fn drop(&mut self) {
        self.kill();
    }
}

fn http() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .no_proxy()
        .connect_timeout(Duration::from_secs(1))
        .timeout(Duration::from_secs(10))
        .build()
        .expect("HTTP client")
}
