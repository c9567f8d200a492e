//! Paige on large projects (issue 32): the release `paige serve` on synthetic projects of 1k,
//! 10k and 100k files (`src/a{i}/b{j}/f{k}.rs`, 32 to a folder, 20 lines each; an ignored
//! `node_modules`; a git repository with everything committed), in coach mode.
//!
//! `cargo bench -p paige-cli --bench large_project` (release). Environment:
//! - `PAIGE_LARGE_SIZES` — source files per project, default `1000,10000,100000`;
//! - `PAIGE_LARGE_RUNS` — runs per size, each a fresh DATA_DIR, default 3;
//! - `PAIGE_LARGE_WIDE_FOLDERS` — the many-folders project (4 files to a folder), default
//!   25600, 0 skips it;
//! - `PAIGE_LARGE_CAP_SECS` — the longest wait for anything, default 120;
//! - `PAIGE_LARGE_BIN` — another `paige` to measure (say, an older build), default this one.
//!
//! Each run: spawn → `/health` 200; then at once a UI connects to `/ws` (time to its first
//! `fs:tree`) while Claude Code's first Bash call comes (`cargo test`: PreToolUse, PostToolUse)
//! and its turn's Stop; then the wait for the log's "change detector primed", 21 more Bash
//! calls (Pre+Post pairs), the server's RSS and DATA_DIR's size. Hooks are posted as
//! `paige hook` posts them (the agent token, `X-Paige-Answer-Within-Ms`), so a Pre answered
//! after `paige hook` stopped waiting (3 s) is a deny, counted in its cell. The last run
//! then has a Bash call rewrite 1,000 tracked files between its Pre and Post, as a formatter
//! would, checks that Paige undid them, and times the next call. Cells are medians over the
//! runs (the later pairs: p50 of all of them); the final table is in issue 32's layout.

#[path = "large_project/project.rs"]
mod project;
#[path = "large_project/server.rs"]
mod server;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

use project::Project;
use server::{Answer, Paige};

const PER_FOLDER: usize = 32;
const WIDE_PER_FOLDER: usize = 4;
const LATER_PAIRS: usize = 21;
const CHANGED: usize = 1000;
const PRE: &str = include_str!("../../../tests/fixtures/claude-code-hooks/PreToolUse-Bash.json");
const POST: &str = include_str!("../../../tests/fixtures/claude-code-hooks/PostToolUse-Bash.json");
const STOP: &str = include_str!("../../../tests/fixtures/claude-code-hooks/Stop.json");
const TRANSCRIPT: &str = include_str!("../../../tests/fixtures/claude-code-hooks/transcript-bash-session.jsonl");

fn main() {
    let started = Instant::now();
    let sizes: Vec<usize> = env("PAIGE_LARGE_SIZES", "1000,10000,100000")
        .split(',')
        .filter_map(|s| s.trim().replace('_', "").parse().ok())
        .collect();
    let runs: usize = env("PAIGE_LARGE_RUNS", "3").parse().expect("PAIGE_LARGE_RUNS");
    let wide: usize = env("PAIGE_LARGE_WIDE_FOLDERS", "25600").parse().expect("PAIGE_LARGE_WIDE_FOLDERS");
    let cap = Duration::from_secs(env("PAIGE_LARGE_CAP_SECS", "120").parse().expect("PAIGE_LARGE_CAP_SECS"));
    println!("paige on large projects: sizes {sizes:?}, {runs} runs each, cap {} s", cap.as_secs());
    println!("paige: {}", server::binary().display());
    let mut columns = Vec::new();
    for &size in &sizes {
        println!("\n== {size} files ==");
        let project = project::generate(size, PER_FOLDER);
        columns.push((size, measure(&project, runs.max(1), cap)));
    }
    let wide_health = (wide > 0).then(|| {
        println!("\n== {wide} folders × {WIDE_PER_FOLDER} files ==");
        let project = project::generate(wide * WIDE_PER_FOLDER, WIDE_PER_FOLDER);
        let samples: Vec<Option<Duration>> = (0..runs.max(1))
            .map(|run| {
                let mut paige = Paige::spawn(&project.root);
                let health = paige.wait_health(cap);
                println!("  run {}: start → /health {}", run + 1, time(health, cap));
                paige.stop();
                health
            })
            .collect();
        (project.folders, median(samples))
    });
    print_table(&columns, wide_health, cap);
    println!("\nthe whole bench took {:.0} s", started.elapsed().as_secs_f64());
}

fn env(name: &str, default: &str) -> String {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty()).unwrap_or_else(|| default.to_owned())
}

/// One size's figures over its runs.
#[derive(Default)]
struct Column {
    health: Vec<Option<Duration>>,
    tree: Vec<Option<(Duration, usize)>>,
    primed: Vec<Option<Duration>>,
    first_pre: Vec<Answer>,
    first_post: Vec<Answer>,
    stop: Vec<Answer>,
    pairs: Vec<Option<Duration>>,
    pair_denies: usize,
    rss: Vec<u64>,
    /// DATA_DIR's bytes: the files' lengths, and what they take on disk (as `du`).
    data: Vec<(u64, u64)>,
    changed: Option<Changed>,
}

/// The Bash call that changed 1,000 files, and the call after it.
struct Changed {
    pre: Answer,
    post: Option<Answer>,
    restored: usize,
    targets: usize,
    next_pre: Option<Answer>,
    next_post: Option<Answer>,
}

fn measure(project: &Project, runs: usize, cap: Duration) -> Column {
    let hooks = Hooks::new(project);
    let mut column = Column::default();
    for run in 0..runs {
        let mut paige = Paige::spawn(&project.root);
        let health = paige.wait_health(cap);
        column.health.push(health);
        println!("  run {}: start → /health {}", run + 1, time(health, cap));
        if health.is_none() {
            println!("    paige serve did not answer /health; its log ends:\n{}", paige.tail());
            paige.stop();
            continue;
        }
        // The UI connects while Claude Code's first call comes, right after /health.
        let (tree, pre, post, stop) = std::thread::scope(|s| {
            let tree = s.spawn(|| paige.first_tree(cap));
            let id = hooks.next_id();
            let pre = paige.hook("pre-tool-use", &hooks.bash(PRE, &id), cap);
            let post = paige.hook("post-tool-use", &hooks.bash(POST, &id), cap);
            let stop = paige.hook("stop", &hooks.stop(), cap);
            (tree.join().expect("the /ws client"), pre, post, stop)
        });
        println!(
            "    first fs:tree {}{}",
            time(tree.map(|t| t.0), cap),
            tree.map(|t| format!(" ({})", mb(t.1 as u64))).unwrap_or_default()
        );
        println!("    first Bash call: PreToolUse {} ({})", time(pre.took, cap), pre.decision);
        println!("    first Bash call: PostToolUse {} ({})", time(post.took, cap), post.decision);
        println!("    Stop after the first turn {} ({})", time(stop.took, cap), stop.decision);
        let primed = paige.primed(cap);
        match primed {
            Some((at, ms)) => {
                println!("    change detector primed {} after spawn (it logged ms={ms:?})", time(Some(at), cap))
            }
            None => println!("    no \"change detector primed\" within {} s of spawn", cap.as_secs()),
        }
        column.tree.push(tree);
        column.primed.push(primed.map(|p| p.0));
        column.first_pre.push(pre);
        column.first_post.push(post);
        column.stop.push(stop);
        let mut pairs = Vec::new();
        for _ in 0..LATER_PAIRS {
            let (pair, pre, _) = pair(&paige, &hooks, cap);
            column.pair_denies += usize::from(pre.decision != "none");
            pairs.push(pair);
            if pair.is_none() {
                println!("    a pair took over {} s: no more pairs in this run", cap.as_secs());
                break;
            }
        }
        println!("    later Bash calls, Pre+Post pair p50 {} (of {LATER_PAIRS})", time(median(pairs.clone()), cap));
        column.pairs.extend(pairs);
        let rss = paige.rss().unwrap_or(0);
        let data = server::dir_bytes(&paige.data);
        println!("    RSS {}, DATA_DIR {} ({} on disk)", mib(rss), mb(data.0), mb(data.1));
        column.rss.push(rss);
        column.data.push(data);
        if run + 1 == runs {
            column.changed = Some(change_files(&paige, &hooks, project, cap));
        }
        paige.stop();
    }
    column
}

/// A Bash call (`cargo test`, which Paige lets run and watches) that rewrites 1,000 tracked
/// files while it runs; then the next call.
fn change_files(paige: &Paige, hooks: &Hooks, project: &Project, cap: Duration) -> Changed {
    let id = hooks.next_id();
    let pre = paige.hook("pre-tool-use", &hooks.bash(PRE, &id), cap);
    let n = project.sources.len();
    let targets: Vec<&String> = (0..CHANGED.min(n)).map(|i| &project.sources[i * n / CHANGED.min(n)]).collect();
    let mut changed = Changed { pre, post: None, restored: 0, targets: targets.len(), next_pre: None, next_post: None };
    println!("    the changing call: PreToolUse {} ({})", time(changed.pre.took, cap), changed.pre.decision);
    if changed.pre.decision != "none" {
        println!("    its PreToolUse was not allowed: the call would not run, nothing changed");
        return changed;
    }
    let originals: Vec<String> =
        targets.iter().map(|rel| std::fs::read_to_string(project.root.join(rel)).expect("read")).collect();
    let writing = Instant::now();
    for (rel, text) in targets.iter().zip(&originals) {
        std::fs::write(project.root.join(rel), project::reformat(text)).expect("rewrite");
    }
    println!("    rewrote {} files in {:.0} ms", targets.len(), writing.elapsed().as_secs_f64() * 1000.0);
    let post = paige.hook("post-tool-use", &hooks.bash(POST, &id), cap);
    changed.restored = targets
        .iter()
        .zip(&originals)
        .filter(|(rel, text)| std::fs::read_to_string(project.root.join(rel)).is_ok_and(|now| now == **text))
        .count();
    println!(
        "    its PostToolUse {} ({}); Paige undid {} of {} changes",
        time(post.took, cap),
        post.decision,
        changed.restored,
        targets.len()
    );
    changed.post = Some(post);
    let (_, next_pre, next_post) = pair(paige, hooks, cap);
    println!(
        "    the next call: PreToolUse {} ({}), PostToolUse {} ({})",
        time(next_pre.took, cap),
        next_pre.decision,
        time(next_post.took, cap),
        next_post.decision
    );
    changed.next_pre = Some(next_pre);
    changed.next_post = Some(next_post);
    changed
}

/// One Bash call, PreToolUse then PostToolUse: (both together, the Pre's answer, the Post's).
fn pair(paige: &Paige, hooks: &Hooks, cap: Duration) -> (Option<Duration>, Answer, Answer) {
    let id = hooks.next_id();
    let pre = paige.hook("pre-tool-use", &hooks.bash(PRE, &id), cap);
    if pre.took.is_none() {
        // Paige is still busy with the Pre: its Post would wait behind it.
        return (None, pre, Answer { took: None, decision: "not sent".into() });
    }
    let post = paige.hook("post-tool-use", &hooks.bash(POST, &id), cap);
    let both = pre.took.zip(post.took).map(|(a, b)| a + b);
    (both, pre, post)
}

/// The hook payloads Claude Code sends (the fixtures), for this project, one session.
struct Hooks {
    cwd: String,
    transcript: String,
    session: String,
    count: AtomicUsize,
}

impl Hooks {
    fn new(project: &Project) -> Hooks {
        let transcript = project.root.parent().expect("temp dir").join("transcript.jsonl");
        std::fs::write(&transcript, TRANSCRIPT).expect("transcript");
        let pre: Value = serde_json::from_str(PRE).expect("fixture");
        Hooks {
            cwd: project.root.display().to_string(),
            transcript: transcript.display().to_string(),
            session: pre["session_id"].as_str().expect("session_id").to_owned(),
            count: AtomicUsize::new(0),
        }
    }

    fn next_id(&self) -> String {
        format!("toolu_bench{:08}", self.count.fetch_add(1, Ordering::Relaxed))
    }

    fn payload(&self, fixture: &str) -> Value {
        let mut payload: Value = serde_json::from_str(fixture).expect("fixture");
        payload["cwd"] = self.cwd.clone().into();
        payload["transcript_path"] = self.transcript.clone().into();
        payload["session_id"] = self.session.clone().into();
        payload
    }

    /// The Bash PreToolUse or PostToolUse fixture as the call `id`: `cargo test`. Its call is
    /// in the transcript first, as Claude Code writes it before the hook: Paige opens a watch
    /// only for a call it finds there (a hook payload alone is not trusted).
    fn bash(&self, fixture: &str, id: &str) -> String {
        let mut payload = self.payload(fixture);
        payload["tool_use_id"] = id.into();
        payload["tool_input"] = serde_json::json!({"command": "cargo test", "description": "Run the tests"});
        if fixture == PRE {
            use std::io::Write;
            let line = serde_json::json!({"type": "assistant", "message": {"role": "assistant", "content": [
                {"type": "tool_use", "id": id, "name": "Bash", "input": payload["tool_input"]}]}});
            let mut file = std::fs::OpenOptions::new().append(true).open(&self.transcript).expect("transcript");
            writeln!(file, "{line}").expect("transcript line");
        }
        payload.to_string()
    }

    fn stop(&self) -> String {
        self.payload(STOP).to_string()
    }
}

/// The middle value, a missing one (past the cap) counting as the longest.
fn median<T: Ord + Copy>(mut samples: Vec<Option<T>>) -> Option<T> {
    if samples.is_empty() {
        return None;
    }
    samples.sort_by(|a, b| match (a, b) {
        (Some(a), Some(b)) => a.cmp(b),
        (a, b) => b.is_some().cmp(&a.is_some()),
    });
    samples[(samples.len() - 1) / 2]
}

fn time(took: Option<Duration>, cap: Duration) -> String {
    let Some(took) = took else { return format!(">{} s", cap.as_secs()) };
    let ms = took.as_secs_f64() * 1000.0;
    match ms {
        ms if ms < 10.0 => format!("{ms:.1} ms"),
        ms if ms < 1000.0 => format!("{ms:.0} ms"),
        ms if ms < 100_000.0 => format!("{:.1} s", ms / 1000.0),
        ms => format!("{:.0} s", ms / 1000.0),
    }
}

fn mb(bytes: u64) -> String {
    match bytes as f64 / 1e6 {
        mb if mb < 0.1 => format!("{:.1} kB", mb * 1000.0),
        mb if mb < 10.0 => format!("{mb:.1} MB"),
        mb => format!("{mb:.0} MB"),
    }
}

/// 25600 → "25,600".
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

fn mib(bytes: u64) -> String {
    format!("{:.0} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// A hook's median time, with how many of its answers were not `expected`.
fn answers(list: &[Answer], expected: &str, cap: Duration) -> String {
    if list.is_empty() {
        return "n/a".into();
    }
    let cell = time(median(list.iter().map(|a| a.took).collect()), cap);
    let other: Vec<&str> = list.iter().filter(|a| a.decision != expected).map(|a| a.decision.as_str()).collect();
    match other.first() {
        None => cell,
        Some(first) => format!("{cell} ({}× {first})", other.len()),
    }
}

fn print_table(columns: &[(usize, Column)], wide: Option<(usize, Option<Duration>)>, cap: Duration) {
    let label = |size: usize| match size {
        s if s >= 1000 && s.is_multiple_of(1000) => format!("{}k", s / 1000),
        s => s.to_string(),
    };
    let mut head = String::from("| |");
    for (i, (size, _)) in columns.iter().enumerate() {
        head.push_str(&format!(" {}{} |", label(*size), if i == 0 { " files" } else { "" }));
    }
    println!("\n{head}\n|---|{}", "---|".repeat(columns.len()));
    let na = || "n/a".to_owned();
    type Cell<'a> = Box<dyn Fn(&Column) -> String + 'a>;
    let rows: Vec<(&str, Cell)> = vec![
        ("start → `/health` 200", Box::new(|c| time(median(c.health.clone()), cap))),
        (
            "first `fs:tree` (frame size)",
            Box::new(|c| match median(c.tree.iter().map(|t| t.map(|t| t.0)).collect()) {
                Some(at) => {
                    let bytes = median(c.tree.iter().map(|t| t.map(|t| t.1)).collect()).unwrap_or(0);
                    format!("{} ({})", time(Some(at), cap), mb(bytes as u64))
                }
                None if c.tree.is_empty() => na(),
                None => time(None, cap),
            }),
        ),
        (
            "change detector primed (background, since spawn)",
            Box::new(|c| median(c.primed.clone()).map_or_else(na, |d| time(Some(d), cap))),
        ),
        ("first Bash call, PreToolUse", Box::new(|c| answers(&c.first_pre, "none", cap))),
        ("first Bash call, its PostToolUse", Box::new(|c| answers(&c.first_post, "none", cap))),
        (
            "later Bash call, Pre+Post pair p50",
            Box::new(|c| match c.pair_denies {
                0 => time(median(c.pairs.clone()), cap),
                n => format!("{} ({n}× deny)", time(median(c.pairs.clone()), cap)),
            }),
        ),
        ("Stop hook after the first turn", Box::new(|c| answers(&c.stop, "none", cap))),
        ("RSS after the calls", Box::new(|c| median(c.rss.iter().map(|&r| Some(r)).collect()).map_or_else(na, mib))),
        (
            "DATA_DIR after (on disk, as `du`)",
            Box::new(|c| match median(c.data.iter().map(|&d| Some(d)).collect()) {
                Some((bytes, disk)) => format!("{} ({})", mb(bytes), mb(disk)),
                None => na(),
            }),
        ),
        (
            "a Bash call changed 1,000 files: its PostToolUse",
            Box::new(|c| match &c.changed {
                Some(Changed { post: Some(post), .. }) => answers(std::slice::from_ref(post), "block", cap),
                Some(changed) => format!("its Pre: {}", changed.pre.decision),
                None => na(),
            }),
        ),
        (
            "… changes Paige undid",
            Box::new(|c| c.changed.as_ref().map_or_else(na, |ch| format!("{} of {}", ch.restored, ch.targets))),
        ),
        (
            "… the next Bash call, Pre+Post pair",
            Box::new(|c| match c.changed.as_ref().and_then(|ch| ch.next_pre.as_ref().zip(ch.next_post.as_ref())) {
                Some((pre, post)) => {
                    let pair = time(pre.took.zip(post.took).map(|(a, b)| a + b), cap);
                    let denied = if pre.decision == "none" { String::new() } else { format!(", {}", pre.decision) };
                    format!("{pair} (its Pre {}{denied})", time(pre.took, cap))
                }
                None => na(),
            }),
        ),
    ];
    for (name, cell) in &rows {
        let cells: Vec<String> = columns.iter().map(|(_, c)| cell(c)).collect();
        println!("| {name} | {} |", cells.join(" | "));
    }
    if let Some((folders, health)) = wide {
        println!(
            "\nplus: a project with {} folders ({WIDE_PER_FOLDER} files each): start → `/health` 200 in {}",
            thousands(folders),
            time(health, cap)
        );
    }
}
