//! Fuzzing MCP tool argument decoding through the real rmcp client, in both protocol eras:
//! random argument objects shaped by each tool's input schema (valid, mistyped, missing or
//! extra fields, hostile strings). Every call is answered, the server stays healthy and
//! nothing in or beside the project changes (the MCP surface has no write path).
//! `PAIGE_FUZZ_CASES` sets the number of calls (twice that many, spread over the tools).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use chrono::{TimeZone, Utc};
use paige_core::db::{HintLevel, NewPhase};
use paige_core::{Config, Core, ManualClock};
use paige_fake_anthropic::{FakeAnthropic, Matcher, Reply};
use rmcp::model::{CallToolRequestParams, JsonObject};
use serde_json::{Map, Value, json};

use crate::tools::{session_client, stateless_client};
use crate::{Fixture, TOKEN, serve_fixture};

const DEFAULT_CASES: u64 = 48;

/// Strings that probe path handling and the decoders' edges.
const NASTY: &[&str] = &[
    "",
    ".",
    "..",
    "../sibling/secret.txt",
    "/etc/passwd",
    "src/main.rs",
    "escape/secret.txt",
    "a\0b",
    "é/😀.rs",
    "src//main.rs",
    "src/main.rs/",
    "-1",
    "null",
    "{",
    "\u{202e}x",
    "red",
    "pending",
    "buffer",
    "INT-001",
];

/// splitmix64: a seeded generator, so a failing case is reproduced by its printed seed.
/// Without `chaos` it makes near-valid arguments (every field, of its type); with it, also
/// mistyped, missing and extra fields.
struct Rng {
    state: u64,
    chaos: bool,
}

impl Rng {
    fn new(seed: u64) -> Rng {
        let mut rng = Rng { state: seed, chaos: false };
        rng.chaos = rng.next().is_multiple_of(2);
        rng
    }

    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    fn string(&mut self) -> String {
        match self.below(4) {
            0 => (0..self.below(30)).filter_map(|_| char::from_u32(self.next() as u32 % 0x3000)).collect(),
            1 => "x".repeat(self.below(20_000)),
            _ => (*self.pick(NASTY)).to_owned(),
        }
    }

    fn number(&mut self) -> Value {
        if !self.chaos {
            return json!(self.below(5));
        }
        match self.below(3) {
            0 => json!(*self.pick(&[0i64, 1, 2, 3, -1, i64::MAX, i64::MIN, u32::MAX as i64])),
            1 => json!(self.next() as i64),
            _ => json!(*self.pick(&[0.5f64, -0.0, 1e300])),
        }
    }

    /// Any JSON value, `depth` levels at most.
    fn any(&mut self, depth: u32) -> Value {
        match self.below(if depth == 0 { 4 } else { 6 }) {
            0 => Value::Null,
            1 => json!(self.next().is_multiple_of(2)),
            2 => self.number(),
            3 => json!(self.string()),
            4 => Value::Array((0..self.below(4)).map(|_| self.any(depth - 1)).collect()),
            _ => Value::Object((0..self.below(4)).map(|_| (self.string(), self.any(depth - 1))).collect()),
        }
    }

    /// A value for `schema`: mostly of its type, sometimes anything at all.
    fn value(&mut self, schema: &Value, defs: &Value, depth: u32) -> Value {
        if depth == 0 || (self.chaos && self.below(6) == 0) {
            return self.any(2);
        }
        if let Some(name) = schema["$ref"].as_str().and_then(|r| r.rsplit('/').next()) {
            return self.value(&defs[name], defs, depth - 1);
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            if let Some(options) = schema[key].as_array().filter(|o| !o.is_empty()) {
                let option = self.pick(options).clone();
                return self.value(&option, defs, depth - 1);
            }
        }
        if let Some(values) = schema["enum"].as_array().filter(|v| !v.is_empty()) {
            return self.pick(values).clone();
        }
        if let Some(value) = schema.get("const") {
            return value.clone();
        }
        let kind = match &schema["type"] {
            Value::Array(kinds) if !kinds.is_empty() => self.pick(kinds).as_str().unwrap_or("").to_owned(),
            Value::String(kind) => kind.clone(),
            _ => String::new(),
        };
        match kind.as_str() {
            "string" => json!(self.string()),
            "integer" | "number" => self.number(),
            "boolean" => json!(self.next().is_multiple_of(2)),
            "null" => Value::Null,
            "array" => {
                Value::Array((0..self.below(4)).map(|_| self.value(&schema["items"], defs, depth - 1)).collect())
            }
            "object" => Value::Object(self.object(schema, defs, depth - 1)),
            _ => self.any(2),
        }
    }

    /// An object for `schema`: each property usually present, sometimes an extra one.
    fn object(&mut self, schema: &Value, defs: &Value, depth: u32) -> Map<String, Value> {
        let mut out = Map::new();
        if let Some(properties) = schema["properties"].as_object() {
            for (name, property) in properties {
                if !self.chaos || self.below(4) != 0 {
                    out.insert(name.clone(), self.value(property, defs, depth));
                }
            }
        }
        if self.chaos && self.below(4) == 0 {
            out.insert(self.string(), self.any(1));
        }
        out
    }
}

fn cases() -> u64 {
    std::env::var("PAIGE_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(DEFAULT_CASES)
}

/// Every file, directory and symlink under `dir` with its content (or link target).
pub(crate) fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
            if meta.file_type().is_symlink() {
                out.insert(
                    path.clone(),
                    std::fs::read_link(&path).unwrap_or_default().into_os_string().into_encoded_bytes(),
                );
            } else if meta.is_dir() {
                out.insert(path.clone(), b"<dir>".to_vec());
                walk(&path, out);
            } else {
                out.insert(path.clone(), std::fs::read(&path).unwrap_or_default());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, &mut out);
    out
}

/// A served core over `outer/project`, which holds a file and a symlink `escape` to
/// `outer/sibling`; the model API refuses every call at once (a fast, unretried error) and
/// `gh` is missing.
pub(crate) async fn server(fake: &FakeAnthropic) -> (crate::Running, PathBuf) {
    fake.always(Matcher::custom(|_| true), Reply::unauthorized());
    let outer = tempfile::tempdir().expect("outer");
    let data = tempfile::tempdir().expect("data");
    let project = outer.path().join("project");
    std::fs::create_dir_all(project.join("src")).expect("src");
    std::fs::create_dir_all(outer.path().join("sibling")).expect("sibling");
    std::fs::write(project.join("src/main.rs"), "fn main() {\n    println!(\"hi\");\n}\n").expect("main");
    std::fs::write(outer.path().join("sibling/secret.txt"), "secret\n").expect("secret");
    std::os::unix::fs::symlink(outer.path().join("sibling"), project.join("escape")).expect("symlink");
    let config = Config {
        token: Some(TOKEN.into()),
        anthropic_base_url: Some(fake.base_url()),
        gh_program: Some(PathBuf::from("/nonexistent/gh")),
        ..Config::new(project, data.path().to_owned(), "test-key")
    };
    let clock = Arc::new(ManualClock::new(Utc.with_ymd_and_hms(2026, 11, 22, 9, 0, 0).single().expect("date")));
    let core = Arc::new(Core::open(config, clock.clone()).expect("core opens"));
    let outer_path = outer.path().to_owned();
    (serve_fixture(Fixture::new(core, clock, (outer, data))).await, outer_path)
}

/// An active session with a two-phase plan, so the session tools get past "No active session".
pub(crate) fn start_session_with_a_plan(core: &Arc<Core>) {
    let session = core.coaching().start_session(Some(42), Some("Fuzz".into())).expect("session");
    let plan = core.db().create_plan(&session.id, "1. a\n2. b").expect("plan");
    for number in 1..=2 {
        let phase = NewPhase {
            plan_id: plan.id.clone(),
            number,
            title: format!("Phase {number}"),
            description: format!("do {number}"),
            hint_level: HintLevel::File,
            expected_files: vec!["src/main.rs".into()],
            skill_area: None,
            hint_reason: None,
            test_filter: None,
        };
        core.db().create_phase(phase).expect("phase");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_tool_arguments_are_answered_keep_the_server_healthy_and_change_no_file() {
    let fake = FakeAnthropic::start().await.expect("fake api");
    let (server, outer) = server(&fake).await;
    let clients = [session_client(&server).await, stateless_client(&server).await];
    let tools = clients[0].list_all_tools().await.expect("tools/list");
    let before = snapshot(&outer);
    let core = &server.fixture.core;
    let health = format!("{}/health", server.base);
    for seed in 0..cases() * 2 {
        if core.active_session().is_none() {
            start_session_with_a_plan(core);
        }
        let mut rng = Rng::new(seed);
        let tool = &tools[seed as usize % tools.len()];
        let schema = Value::Object(tool.input_schema.as_ref().clone());
        let args: JsonObject = rng.object(&schema, &schema["$defs"], 4);
        let client = &clients[seed as usize % 2];
        let request = CallToolRequestParams::new(tool.name.to_string()).with_arguments(args.clone());
        let answer = tokio::time::timeout(Duration::from_secs(20), client.call_tool(request)).await;
        let context = format!("seed {seed}: {} {}", tool.name, Value::Object(args));
        match answer {
            Err(_) => panic!("no answer within 20 s — {context}"),
            // A result (maybe a tool error) or a JSON-RPC error: both are answers.
            Ok(Ok(_)) | Ok(Err(rmcp::ServiceError::McpError(_))) => {}
            Ok(Err(err)) => panic!("the call failed without an answer: {err} — {context}"),
        }
        if seed % 16 == 15 {
            assert_eq!(reqwest::get(&health).await.expect("health").status(), 200, "{context}");
        }
        assert!(snapshot(&outer) == before, "a file changed — {context}");
    }
    assert_eq!(reqwest::get(&health).await.expect("health").status(), 200);
}
