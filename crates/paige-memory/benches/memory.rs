//! Memory recall latency: embed a query with all-MiniLM-L6-v2, then the top 10 of 10,000
//! memories (5 projects), unfiltered and with a project filter — in the embedded store and,
//! in the same run, in a real ChromaDB (`chroma run` from `PAIGE_TEST_CHROMA`) holding the
//! same vectors. Prints p50/p99 per step and the ratio ChromaDB / embedded.
//!
//!   PAIGE_MODEL_DIR=… PAIGE_TEST_CHROMA=… cargo bench -p paige-memory --bench memory
//!   (MEMORIES=N, QUERIES=N to change the sizes)

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use paige_core::memory::{MemoryMetadata, MemoryQuery, MemoryRecord, MemoryStore};
use paige_memory::{ChromaStore, EmbeddedStore};

const DIM: usize = 384;
const PROJECTS: usize = 5;
const QUERIES: [&str; 8] = [
    "race condition in auth flow",
    "useEffect cleanup",
    "off-by-one error in a loop",
    "how to read a stack trace",
    "SQL injection",
    "async function forgot to await",
    "CSS grid layout",
    "borrow checker and mutable references",
];

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Deterministic unit vectors (xorshift), so both stores hold exactly the same data.
fn vectors(count: usize) -> Vec<Vec<f32>> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    (0..count)
        .map(|_| {
            let mut v: Vec<f32> = (0..DIM)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
                })
                .collect();
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.iter_mut().for_each(|x| *x /= norm);
            v
        })
        .collect()
}

fn records(vectors: &[Vec<f32>]) -> Vec<MemoryRecord> {
    vectors
        .iter()
        .enumerate()
        .map(|(i, v)| MemoryRecord {
            id: format!("mem_bench_{i}"),
            content: format!("memory {i} about some coding lesson"),
            metadata: MemoryMetadata {
                session_id: "bench".into(),
                project: format!("project-{}", i % PROJECTS),
                project_path: format!("/bench/project-{}", i % PROJECTS),
                created_at: "2026-11-22T00:00:00.000Z".into(),
                importance: "medium".into(),
                tags: "bench".into(),
            },
            embedding: Some(v.clone()),
        })
        .collect()
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_chroma(data: &std::path::Path) -> Option<(Server, String)> {
    let cli = std::env::var("PAIGE_TEST_CHROMA").ok()?;
    let port = std::net::TcpListener::bind("127.0.0.1:0").ok()?.local_addr().ok()?.port();
    let child = Command::new(cli)
        .args(["run", "--path", &data.display().to_string(), "--host", "127.0.0.1", "--port", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let server = Server(child);
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Some((server, format!("http://127.0.0.1:{port}")));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    None
}

fn percentile(samples: &mut [f64], p: f64) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[((samples.len() - 1) as f64 * p).round() as usize]
}

/// (p50, p99) in ms of `search` for each query vector, and of embed + search.
fn measure(store: &dyn MemoryStore, queries: &[Vec<f32>], embed_ms: &[f64], project: Option<&str>) -> [f64; 4] {
    let mut search = Vec::new();
    let mut total = Vec::new();
    for (i, vector) in queries.iter().enumerate() {
        let query = MemoryQuery { text: QUERIES[i % QUERIES.len()], embedding: Some(vector), n_results: 10, project };
        let started = Instant::now();
        let results = store.query(&query).expect("query");
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        assert_eq!(results.len(), 10);
        search.push(ms);
        total.push(ms + embed_ms[i]);
    }
    [
        percentile(&mut search, 0.5),
        percentile(&mut search, 0.99),
        percentile(&mut total, 0.5),
        percentile(&mut total, 0.99),
    ]
}

fn main() {
    let count = env_usize("MEMORIES", 10_000);
    let runs = env_usize("QUERIES", 200);
    let model_dir =
        PathBuf::from(std::env::var("PAIGE_MODEL_DIR").expect("PAIGE_MODEL_DIR: the model's parent folder"));
    let model = paige_memory::find_model(&[model_dir], paige_memory::DEFAULT_IDLE).expect("the model is installed");
    model.embed(&["warm up"]).expect("the model loads");
    // Embedding each query, timed alone.
    let mut embed_ms = Vec::new();
    let mut query_vectors = Vec::new();
    for i in 0..runs {
        let started = Instant::now();
        let vector = model.embed(&[QUERIES[i % QUERIES.len()]]).expect("embed").remove(0);
        embed_ms.push(started.elapsed().as_secs_f64() * 1000.0);
        query_vectors.push(vector);
    }
    let stored = records(&vectors(count));
    let dir = tempfile::tempdir().expect("tempdir");
    let embedded = EmbeddedStore::new(&dir.path().join("paige.db"));
    embedded.connect().expect("embedded store");
    let started = Instant::now();
    for chunk in stored.chunks(1000) {
        embedded.add(chunk).expect("add");
    }
    println!("{count} memories in {PROJECTS} projects; {runs} queries; top 10");
    println!("embedded store: added in {:.1} s", started.elapsed().as_secs_f64());
    let mut embed_sorted = embed_ms.clone();
    println!(
        "embed one query:            p50 {:7.2} ms   p99 {:7.2} ms",
        percentile(&mut embed_sorted, 0.5),
        percentile(&mut embed_sorted, 0.99)
    );
    let report = |name: &str, figures: [f64; 4]| {
        println!(
            "{name:<28} search p50 {:7.2} ms  p99 {:7.2} ms   embed+search p50 {:7.2} ms  p99 {:7.2} ms",
            figures[0], figures[1], figures[2], figures[3]
        );
    };
    let local_all = measure(&embedded, &query_vectors, &embed_ms, None);
    let local_one = measure(&embedded, &query_vectors, &embed_ms, Some("project-2"));
    report("embedded, all projects", local_all);
    report("embedded, project filter", local_one);
    let Some((_server, url)) = start_chroma(&dir.path().join("chroma")) else {
        println!("ChromaDB: not measured (set PAIGE_TEST_CHROMA to a `chroma` CLI)");
        return;
    };
    let chroma = ChromaStore::new(&url);
    let deadline = Instant::now() + Duration::from_secs(30);
    while chroma.connect().is_err() {
        assert!(Instant::now() < deadline, "ChromaDB did not come up");
        std::thread::sleep(Duration::from_millis(200));
    }
    let started = Instant::now();
    for chunk in stored.chunks(1000) {
        chroma.add(chunk).expect("add to ChromaDB");
    }
    println!("ChromaDB: added in {:.1} s", started.elapsed().as_secs_f64());
    let remote_all = measure(&chroma, &query_vectors, &embed_ms, None);
    let remote_one = measure(&chroma, &query_vectors, &embed_ms, Some("project-2"));
    report("ChromaDB, all projects", remote_all);
    report("ChromaDB, project filter", remote_one);
    println!(
        "ChromaDB / embedded, embed+search p50: {:.1}x all projects, {:.1}x with the project filter",
        remote_all[2] / local_all[2],
        remote_one[2] / local_one[2]
    );
}
