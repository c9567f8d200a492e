//! Crash safety (issue 19): a write-heavy workload runs through Paige's own code in a child
//! process (this test binary again, in child mode) that is killed with SIGKILL at random
//! points, again and again on one DATA_DIR and project. The child prints `ack …` only after
//! Paige's API acknowledged a write, so after every kill: the database passes
//! `PRAGMA integrity_check`, every acknowledged row is there, every saved file holds a whole
//! save, the ledger parses and its chain verifies, and the next start succeeds.
//!
//! `PAIGE_CRASH_KILLS` sets the kills (default 5), `PAIGE_CRASH_SEED` replays a run's kill
//! points (the seed is printed).

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use paige_core::db::KataAttempt;
use paige_core::governance::intents::Orchestration;
use paige_core::governance::ledger::{self, TraceEntry};
use paige_core::intake::guard::GuardEvent;

use crate::World;

/// Set in the child's environment: the run's number. The child's DATA_DIR and project come
/// in `CHILD_DATA` and `CHILD_PROJECT`.
const CHILD_RUN: &str = "PAIGE_CRASH_CHILD_RUN";
const CHILD_DATA: &str = "PAIGE_CRASH_CHILD_DATA";
const CHILD_PROJECT: &str = "PAIGE_CRASH_CHILD_PROJECT";
/// This test's name, for re-running the binary as the child.
const TEST_NAME: &str = "crash::sigkill_at_random_points_loses_no_acknowledged_write";
const DEFAULT_KILLS: usize = 5;
/// A child still running this long was never killed: it gives up so it cannot outlive a
/// broken parent.
const CHILD_DEADLINE: Duration = Duration::from_secs(60);
/// How long one child may take to start (a loaded CI machine is slow).
const START: Duration = Duration::from_secs(60);
/// Kill points after the child is ready: up to this long into its workload.
const MAX_WORK: Duration = Duration::from_millis(1200);
/// One kill in `EARLY_ONE_IN` lands in the first `EARLY` after spawning: mid start-up,
/// while the core opens (and migrates) the database and announces itself.
const EARLY_ONE_IN: u64 = 5;
const EARLY: Duration = Duration::from_millis(40);
const INTENT: &str = "INT-001";
/// The Claude Code session: it outlives Paige's crashes, as it would (its intent stays its).
const AGENT: &str = "agent-session";
const INTENTS: &str = r#"
active_intents:
  - id: INT-001
    name: Crash workload
    status: IN_PROGRESS
    owned_scope: ["src/weather/**"]
"#;
/// The files the learner saves, again and again across runs.
const SAVED: [&str; 2] = ["notes/plan.md", "src/main.rs"];

#[test]
fn sigkill_at_random_points_loses_no_acknowledged_write() {
    if let Ok(run) = std::env::var(CHILD_RUN) {
        let var = |name| PathBuf::from(std::env::var(name).unwrap_or_else(|_| panic!("{name} is set for the child")));
        child::run(run.parse().expect("run number"), var(CHILD_DATA), var(CHILD_PROJECT));
    }
    let kills: usize = std::env::var("PAIGE_CRASH_KILLS").ok().map_or(DEFAULT_KILLS, |k| {
        k.parse().unwrap_or_else(|_| panic!("PAIGE_CRASH_KILLS must be a number, not {k:?}"))
    });
    let seed: u64 = std::env::var("PAIGE_CRASH_SEED").ok().map_or_else(
        || std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_nanos() as u64,
        |s| s.parse().unwrap_or_else(|_| panic!("PAIGE_CRASH_SEED must be a number, not {s:?}")),
    );
    println!("crash: {kills} kills, seed {seed} (PAIGE_CRASH_SEED={seed} replays the kill points)");
    let mut rng = SplitMix(seed);
    let mut world = World::ready();
    if let Ok(models) = std::env::var("PAIGE_MODEL_DIR") {
        world.set("PAIGE_MODEL_DIR", &models);
    }
    let orch = Orchestration::new(&world.project());
    orch.init().expect("init .orchestration");
    std::fs::write(orch.intents_path(), INTENTS).expect("intents");

    let mut acks = Acks::default();
    let started = Instant::now();
    for run in 0..kills {
        let kill = match rng.below(EARLY_ONE_IN) {
            0 => KillAt::AfterSpawn(EARLY.mul_f64(rng.unit())),
            _ => KillAt::AfterReady(MAX_WORK.mul_f64(rng.unit())),
        };
        let outcome = run_and_kill(&world, run, kill, &mut acks);
        let counts = check(&world, &acks);
        println!("crash: run {run} killed {kill:?} ({outcome}); acknowledged so far and present: {counts}");
    }
    let elapsed = started.elapsed();
    println!(
        "crash: {kills} kills in {:.1} s, {:.0} ms per kill; {} writes acknowledged, none lost",
        elapsed.as_secs_f64(),
        elapsed.as_secs_f64() * 1000.0 / kills.max(1) as f64,
        acks.total()
    );
    next_start_serves(&world);
}

// ---- the parent: kill, then check ---------------------------------------------------------

#[derive(Debug, Clone, Copy)]
enum KillAt {
    AfterSpawn(Duration),
    AfterReady(Duration),
}

/// What the children acknowledged, across every run.
#[derive(Default)]
struct Acks {
    actions: HashSet<String>,
    memories: HashSet<String>,
    katas: HashSet<String>,
    intake: HashSet<(String, u32)>,
    ledger: HashSet<String>,
    /// Per saved path: the last acknowledged content's hash, and the hashes of saves tried
    /// since (one of them may have landed before the kill).
    saves: HashMap<String, (Option<String>, Vec<String>)>,
}

impl Acks {
    fn total(&self) -> usize {
        self.actions.len() + self.memories.len() + self.katas.len() + self.intake.len() + self.ledger.len()
    }

    fn record(&mut self, line: &str) {
        let words: Vec<&str> = line.split(' ').collect();
        match words.as_slice() {
            ["ack", "action", id] => drop(self.actions.insert((*id).into())),
            ["ack", "memory", id] => drop(self.memories.insert((*id).into())),
            ["ack", "kata", code] => drop(self.katas.insert((*code).into())),
            ["ack", "intake", session, seq] => drop(self.intake.insert(((*session).into(), seq.parse().expect("seq")))),
            ["ack", "ledger", hash] => drop(self.ledger.insert((*hash).into())),
            ["try", "save", path, hash] => self.saves.entry((*path).into()).or_default().1.push((*hash).into()),
            ["ack", "save", path, hash] => {
                *self.saves.entry((*path).into()).or_default() = (Some((*hash).into()), Vec::new());
            }
            _ => {}
        }
    }
}

/// Spawns the child, lets it work until the kill point, SIGKILLs it and collects every
/// acknowledgement it printed. Panics if the child fails to start or stops on its own.
fn run_and_kill(world: &World, run: usize, kill: KillAt, acks: &mut Acks) -> String {
    let spawned = Instant::now();
    let mut command = Command::new(std::env::current_exe().expect("test binary"));
    command
        .args([TEST_NAME, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_RUN, run.to_string())
        .env(CHILD_DATA, world.data_dir())
        .env(CHILD_PROJECT, world.project())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = KillOnDrop(command.spawn().expect("the child starts"));
    let lines = complete_lines(child.0.stdout.take().expect("stdout"));
    let mut stderr = child.0.stderr.take().expect("stderr");
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let mut kill_at = match kill {
        KillAt::AfterSpawn(after) => Some(spawned + after),
        KillAt::AfterReady(_) => None,
    };
    let mut ready = false;
    let mut seen = 0;
    let died = loop {
        let now = Instant::now();
        if kill_at.is_some_and(|at| now >= at) {
            break None;
        }
        let wait = kill_at.map_or(spawned + START, |at| at).saturating_duration_since(now);
        match lines.recv_timeout(wait) {
            Ok(line) if line == "ready" => {
                ready = true;
                if let KillAt::AfterReady(after) = kill {
                    kill_at = Some(Instant::now() + after);
                }
            }
            Ok(line) => {
                seen += 1;
                acks.record(&line);
            }
            Err(mpsc::RecvTimeoutError::Timeout) if kill_at.is_some() => {}
            Err(mpsc::RecvTimeoutError::Timeout) => break Some(format!("not ready within {START:?}")),
            Err(mpsc::RecvTimeoutError::Disconnected) => break Some("it exited before it was killed".into()),
        }
    };
    child.0.kill().expect("SIGKILL");
    let status = child.0.wait().expect("wait");
    for line in lines.iter() {
        seen += 1;
        acks.record(&line);
    }
    let errors = errors.join().unwrap_or_default();
    if let Some(why) = died {
        panic!("crash run {run}: the child failed: {why} ({status}); its stderr:\n{errors}");
    }
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(9), "run {run} ended by SIGKILL");
    format!("{} after {:?}, {seen} lines", if ready { "working" } else { "starting" }, spawned.elapsed())
}

/// The child's stdout as complete lines: a line cut short by the kill was never printed.
fn complete_lines(stdout: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
            if let Some(whole) = line.strip_suffix('\n')
                && tx.send(whole.to_owned()).is_err()
            {
                break;
            }
            line.clear();
        }
    });
    rx
}

struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Every check after a kill; returns the counts it found, for the log.
fn check(world: &World, acks: &Acks) -> String {
    let db = world.data_dir().join("paige.db");
    if !db.exists() {
        // Killed before the core created it: nothing can have been acknowledged.
        assert_eq!(acks.total(), 0, "acknowledged writes but no {}", db.display());
        return "no database yet".into();
    }
    // Closing this connection must not checkpoint the WAL the killed child left, so the next
    // start opens the database as the crash left it. (Not read-only: a WAL whose index the
    // kill cut short needs recovery, which only a writer may run — as the next start does.)
    let conn = rusqlite::Connection::open(&db).unwrap_or_else(|err| panic!("cannot open {}: {err}", db.display()));
    conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)
        .expect("no checkpoint on close");
    let verdict: Vec<String> = column(&conn, "PRAGMA integrity_check");
    assert_eq!(verdict, ["ok"], "PRAGMA integrity_check");

    // Killed before the first migration committed: nothing can have been acknowledged.
    if column(&conn, "SELECT name FROM sqlite_master WHERE name = 'action_log'").is_empty() {
        assert_eq!(acks.total(), 0, "acknowledged writes but no schema in {}", db.display());
        return "no schema yet".into();
    }
    let actions: HashSet<String> = column(&conn, "SELECT id FROM action_log").into_iter().collect();
    missing("action_log rows", &acks.actions, &actions);
    let memories: HashSet<String> = column(&conn, "SELECT id FROM memories").into_iter().collect();
    missing("memories", &acks.memories, &memories);
    let mut attempts = HashSet::new();
    for raw in column(&conn, "SELECT user_attempts FROM kata_specs") {
        let parsed: Vec<KataAttempt> = serde_json::from_str(&raw).expect("user_attempts is a list of attempts");
        attempts.extend(parsed.into_iter().map(|a| a.code));
    }
    missing("kata attempts", &acks.katas, &attempts);
    let mut intake = HashSet::new();
    let mut statement = conn.prepare("SELECT session_id, seq, event FROM intake_events").expect("intake_events");
    let rows = statement
        .query_map([], |row| Ok((row.get::<_, String>(0)?, row.get::<_, u32>(1)?, row.get::<_, String>(2)?)))
        .expect("query");
    for row in rows {
        let (session, seq, event) = row.expect("intake row");
        serde_json::from_str::<GuardEvent>(&event).unwrap_or_else(|err| panic!("stored guard event {event}: {err}"));
        intake.insert((session, seq));
    }
    missing("intake events", &acks.intake, &intake);

    let trace = Orchestration::new(&world.project()).trace_path();
    let text = std::fs::read_to_string(&trace).unwrap_or_default();
    let lines = ledger::verify(&text).unwrap_or_else(|broken| panic!("the ledger does not verify: {broken}"));
    let hashes: HashSet<String> =
        text.lines().filter_map(|l| serde_json::from_str::<TraceEntry>(l).ok()?.hash).collect();
    missing("ledger lines", &acks.ledger, &hashes);

    for (path, (acked, tried)) in &acks.saves {
        let on_disk = std::fs::read(world.project().join(path)).ok().map(|bytes| ledger::sha256_hex(&bytes));
        let whole = on_disk.is_none() && acked.is_none()
            || on_disk.as_ref().is_some_and(|h| tried.contains(h))
            || on_disk == *acked;
        assert!(whole, "{path} holds neither its last acknowledged save nor one tried after it ({on_disk:?})");
    }
    format!(
        "{} actions, {} memories, {} kata attempts, {} intake events, {} of {lines} ledger lines, {} saved files",
        acks.actions.len(),
        acks.memories.len(),
        acks.katas.len(),
        acks.intake.len(),
        acks.ledger.len(),
        acks.saves.len()
    )
}

fn column(conn: &rusqlite::Connection, sql: &str) -> Vec<String> {
    let mut statement = conn.prepare(sql).unwrap_or_else(|err| panic!("{sql}: {err}"));
    let rows = statement.query_map([], |row| row.get::<_, String>(0)).unwrap_or_else(|err| panic!("{sql}: {err}"));
    rows.collect::<Result<_, _>>().unwrap_or_else(|err| panic!("{sql}: {err}"))
}

fn missing<T: std::hash::Hash + Eq + std::fmt::Debug>(what: &str, acked: &HashSet<T>, found: &HashSet<T>) {
    let lost: Vec<&T> = acked.difference(found).collect();
    assert!(lost.is_empty(), "{} acknowledged {what} missing after the kill: {lost:?}", lost.len());
}

/// The real next start after the last kill: `paige serve` on the same DATA_DIR answers
/// /health, has swept the temp files of interrupted saves, and `paige ledger verify` agrees.
fn next_start_serves(world: &World) {
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", START);
    let info = crate::read_json(&world.data_dir().join("run/server.json"));
    let port = info["port"].as_u64().expect("port");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let health: serde_json::Value = runtime
        .block_on(async { reqwest::get(format!("http://127.0.0.1:{port}/health")).await?.json().await })
        .expect("/health answers");
    assert_eq!(health["status"], "ok", "{health}");
    // Temp files of interrupted writes — the learner's saves, the sidecar files in
    // .orchestration/ — are gone from the project.
    let temp: Vec<PathBuf> = walk(&world.project())
        .into_iter()
        .filter(|p| {
            p.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .is_some_and(|n| n.starts_with(paige_core::files::TEMP_PREFIX) || n.starts_with(".tmp"))
        })
        .collect();
    assert!(temp.is_empty(), "temp files of interrupted writes left after the next start: {temp:?}");
    paige.signal("TERM");
    assert!(paige.wait_exit(Duration::from_secs(10)).success(), "{}", paige.output());
    let (status, stdout, stderr) =
        world.run(&["ledger", "verify", "--project", &world.project().display().to_string()]);
    assert!(status.success() && stdout.contains("hash chain is intact"), "{stdout}{stderr}");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => found.extend(walk(&path)),
            _ => found.push(path),
        }
    }
    found
}

/// A small seeded generator (SplitMix64): the kill points of a seed are the same everywhere.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// In [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The child's side: the workload.
mod child;
