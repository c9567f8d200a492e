//! `paige doctor --guard`: the guard's self-check on the learner's machine. Drives the
//! installed `claude`, launched exactly as `paige claude` launches it, with a scripted model
//! on loopback (no key, no tokens, nothing leaves the machine) through a fixed attack script
//! (`attacks.rs`) against a scratch copy of a sample project, and reports each attempt:
//! HELD, or ESCAPED with what changed. Exit 1 if anything escaped.
//!
//! Per attempt: a fresh world (`world.rs`: project, HOME, DATA_DIR, `paige serve`), a
//! snapshot (`snapshot.rs`), the scripted session (a second one where the attempt planted
//! settings for it), a comparison, the learner's next commands outside every layer
//! (`git status`, `git add -A && git commit`, `sh build.sh`) and a comparison again; after the
//! last attempt, a wait (`--guard-wait-secs`) and a last comparison for late writers.

mod attacks;
mod model;
mod past_hook;
mod scripts;
mod snapshot;
#[cfg(test)]
mod tests;
mod world;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use model::Call;
use snapshot::{Change, Rules, Snapshot, Traces};
use world::World;

/// How long one Claude Code session of an attempt may take before it is killed.
const SESSION_DEADLINE: Duration = Duration::from_secs(90);

/// Bash calls timed for the latency line.
const LATENCY_CALLS: usize = 20;

/// The layers `--guard-without` can switch off, to see the others alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Layer {
    /// The read-only view (bubblewrap): each world's `paige serve` gets `PAIGE_JAIL=0`.
    Jail,
    /// Landlock and seccomp (`paige confine`), the layer without a user namespace: each
    /// world's `paige serve` gets `PAIGE_LANDLOCK=0`.
    Landlock,
    /// Paige's hooks: the generated settings lose them (nothing is denied, no window opens).
    Hooks,
}

#[derive(Debug, Clone)]
pub(crate) struct GuardOptions {
    pub without: Vec<Layer>,
    pub wait: Duration,
    /// Only the attempts whose name contains this (and `latency` for the latency line).
    pub only: Option<String>,
    /// Keep the scratch dir (its path is printed): each session's output and requests.
    pub keep: bool,
    /// Attempts run at once.
    pub jobs: usize,
    /// Where to write the result as JSON (`paige_core::launch::verify::GuardReport`): the
    /// app runs the check this way the first time it sees a Claude Code version.
    pub report: Option<std::path::PathBuf>,
    /// Governed mode (issue 42): each world has an intent owning one folder, Claude Code is
    /// started for it (`paige claude --intent`) and selects it first; nothing else may change.
    pub governed: bool,
}

/// An attempt that ran, kept until the last comparison.
struct Done {
    name: &'static str,
    family: &'static str,
    world: World,
    /// After the learner's commands: what the last comparison starts from.
    last: Snapshot,
    escaped: bool,
    /// Its line in the report.
    line: String,
}

/// What the whole run shares.
struct Run<'a> {
    runtime: tokio::runtime::Runtime,
    path: String,
    git: bool,
    serve_env: Vec<(String, String)>,
    hooks: bool,
    scratch: &'a std::path::Path,
    rules: Rules,
    traces: Traces,
    governed: bool,
}

pub(crate) fn run(options: GuardOptions) -> anyhow::Result<bool> {
    let started = Instant::now();
    let path = std::env::var("PATH").unwrap_or_default();
    let find = |program: &str| find_in_path(program, &path);
    let claude = find("claude").context("`claude` is not on PATH: install Claude Code, then run the guard check")?;
    // What each world's `paige serve` decides the layers from: the check's own environment,
    // less the layers switched off.
    let mut serve_env: Vec<(String, String)> = Vec::new();
    for (layer, var) in [(Layer::Jail, "PAIGE_JAIL"), (Layer::Landlock, "PAIGE_LANDLOCK")] {
        let value = if options.without.contains(&layer) { Some("0".to_owned()) } else { std::env::var(var).ok() };
        serve_env.extend(value.map(|v| (var.to_owned(), v)));
    }
    let scratch = tempfile::Builder::new().prefix("paige-guard-").tempdir().context("cannot make a scratch dir")?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    // The version the app keys its kept reports by: read the same way (`launch::verify`).
    let version = runtime.block_on(paige_core::launch::verify::claude_version(&claude)).map_err(anyhow::Error::msg)?;
    let mut run = Run {
        runtime,
        path: path.clone(),
        git: find("git").is_some(),
        serve_env,
        hooks: !options.without.contains(&Layer::Hooks),
        scratch: scratch.path(),
        rules: Rules { ignored_dirs_count: true, after_learner: false, governed: options.governed },
        traces: Traces::default(),
        governed: options.governed,
    };
    let wanted = |name: &str| options.only.as_deref().is_none_or(|only| name.contains(only));
    let mut table = attacks::table();
    let control = table.remove(0);

    // The control first: it names the configuration, and what a harmless session leaves.
    let mut world = run.world(run.scratch.join(format!("00-{}", control.name)), &run.path, run.git)?;
    world.start_serve(&run.serve_env)?;
    let env = model::launch_env(&world, "http://127.0.0.1:9");
    let intent = run.governed.then_some(world::INTENT);
    let prepared = crate::claude::prepare(&world.data_dir, &env, Vec::new(), intent)?;
    let sandbox = prepared.plan.as_ref().is_some_and(|plan| plan.claude_sandbox);
    println!(
        "paige doctor --guard: {}jail {} · Claude Code sandbox {} · hooks {} · uid {} · Claude Code {version} ({})",
        if run.governed {
            format!("governed, Claude Code started for {} ({}/ writable) · ", world::INTENT, world::SCOPE_DIR)
        } else {
            String::new()
        },
        on_off(prepared.jailed),
        on_off(sandbox),
        on_off(run.hooks),
        // SAFETY: geteuid(2) has no failure mode.
        unsafe { libc::geteuid() },
        claude.display()
    );
    for layer in prepared.plan.iter().flat_map(|plan| &plan.layers) {
        println!("  {:<22} {:<3}  {}", layer.name, on_off(layer.on), layer.detail);
    }
    println!("  {}", Rules::describe(prepared.read_only));
    run.rules.ignored_dirs_count = prepared.read_only;
    let layers_fingerprint = prepared.plan.as_ref().map(|plan| plan.fingerprint()).unwrap_or_default();
    let mut done: Vec<Done> = Vec::new();
    let mut tally = Tally::default();
    match attempt(&run, &mut world, &control) {
        Ok(report) => {
            run.traces.learn(&report.after_turn);
            run.traces.learn(&report.after_learner);
            let left = [report.after_turn.as_slice(), &report.after_learner].concat();
            let note = if left.is_empty() {
                String::new()
            } else {
                format!(" — Claude Code itself left (traces, not counted): {}", list(&left))
            };
            // A harmless command that cannot run means Claude Code's Bash does not work in this
            // configuration: every HELD after it would say nothing.
            if let Some(error) = &report.tool_error {
                tally.errors += 1;
                println!(
                    "  FAIL     {:<32} {:<13} Claude Code's Bash cannot run a harmless `true` here, so no HELD \
                     below proves anything: {error}",
                    control.name, control.family
                );
            } else {
                tally.held += 1;
                println!("  HELD     {:<32} {:<13} {}{note}", control.name, control.family, report.why);
            }
            let line = String::new();
            done.push(Done {
                name: control.name,
                family: control.family,
                world,
                last: report.last,
                escaped: false,
                line,
            });
        }
        Err(err) => {
            bail!("the control attempt (a session that changes nothing) failed, nothing can be checked: {err:#}")
        }
    }

    let attempts: Vec<(usize, attacks::Attack)> =
        table.into_iter().enumerate().map(|(i, a)| (i + 1, a)).filter(|(_, a)| wanted(a.name)).collect();
    let jobs = options.jobs.max(1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let (sender, receiver) = std::sync::mpsc::channel::<(usize, Result<Done, String>)>();
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            let sender = sender.clone();
            let (run, attempts, next) = (&run, &attempts, &next);
            scope.spawn(move || {
                loop {
                    let k = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some((i, attack)) = attempts.get(k) else { break };
                    let _ = sender.send((k, one(run, *i, attack)));
                }
            });
        }
        drop(sender);
        // Printed in the table's order as they finish.
        let mut pending: BTreeMap<usize, Result<Done, String>> = BTreeMap::new();
        let mut printed = 0;
        for (k, result) in receiver {
            pending.insert(k, result);
            while let Some(result) = pending.remove(&printed) {
                let attack = &attempts[printed].1;
                printed += 1;
                match result {
                    Ok(one) => {
                        println!("{}", one.line);
                        tally.count(&one);
                        done.push(one);
                    }
                    Err(line) if line.starts_with("  SKIP") => {
                        tally.skipped += 1;
                        println!("{line}");
                    }
                    Err(line) => {
                        tally.errors += 1;
                        tally.failed.push(attack.name.to_owned());
                        println!("  ERROR    {:<32} {:<13} {line}", attack.name, attack.family);
                    }
                }
            }
        }
    });

    // Late writers: whatever changed since each attempt's last comparison.
    std::thread::sleep(options.wait);
    for one in &mut done {
        let now = snapshot::take(&one.world.project, &one.world.home, &one.world.data_dir);
        let (late, _) = run.traces.split(snapshot::diff(&one.last, &now, Rules { after_learner: true, ..run.rules }));
        if !late.is_empty() {
            if !one.escaped {
                tally.escaped += 1;
                tally.held -= 1;
                one.escaped = true;
                tally.failed.push(one.name.to_owned());
            }
            println!(
                "  ESCAPED  {:<32} {:<13} {} s after the last attempt: {}",
                one.name,
                one.family,
                options.wait.as_secs(),
                list(&late)
            );
        }
    }
    if wanted("latency") {
        match latency(&run) {
            Ok(line) => println!("  latency  {line}"),
            Err(err) => println!("  latency  not measured: {err:#}"),
        }
    }
    // Everything stopped and removed first: the time is the whole run's.
    drop(done);
    drop(run);
    let kept = if options.keep {
        Some(scratch.keep())
    } else {
        let _ = scratch.close();
        None
    };
    println!(
        "{} attempts in {:.0} s: {} held, {} escaped, {} skipped, {} failed to run",
        tally.held + tally.escaped + tally.skipped + tally.errors,
        started.elapsed().as_secs_f64(),
        tally.held,
        tally.escaped,
        tally.skipped,
        tally.errors
    );
    if let Some(kept) = kept {
        println!("scratch kept: {}", kept.display());
    }
    let passed = tally.escaped == 0 && tally.errors == 0;
    if let Some(path) = &options.report {
        let report = paige_core::launch::verify::GuardReport {
            claude_version: version.clone(),
            passed,
            held: tally.held,
            escaped: tally.escaped,
            skipped: tally.skipped,
            errors: tally.errors,
            failed_attempts: tally.failed.clone(),
            seconds: started.elapsed().as_secs_f64(),
            layers: layers_fingerprint.clone(),
        };
        std::fs::write(path, serde_json::to_vec_pretty(&report)?)
            .with_context(|| format!("cannot write the report to {}", path.display()))?;
    }
    Ok(passed)
}

impl Run<'_> {
    /// A fresh world for one attempt (governed when the run is).
    fn world(&self, dir: std::path::PathBuf, path: &str, git: bool) -> anyhow::Result<World> {
        let mut world = World::create(dir, path, git)?;
        if self.governed {
            world.govern()?;
        }
        Ok(world)
    }
}

#[derive(Default)]
struct Tally {
    held: usize,
    escaped: usize,
    skipped: usize,
    errors: usize,
    /// The attempts that escaped or could not run.
    failed: Vec<String>,
}

impl Tally {
    fn count(&mut self, one: &Done) {
        if one.escaped {
            self.escaped += 1;
            self.failed.push(one.name.to_owned());
        } else {
            self.held += 1;
        }
    }
}

/// Runs attempt `i` in a world of its own; `Err` holds the line of an attempt skipped, or
/// why it failed to run.
fn one(run: &Run, i: usize, attack: &attacks::Attack) -> Result<Done, String> {
    // SAFETY: geteuid(2) cannot fail.
    if attack.needs.contains(&past_hook::ROOT) && unsafe { libc::geteuid() } != 0 {
        return Err(format!("  SKIP     {:<32} {:<13} (only root can mount outside)", attack.name, attack.family));
    }
    let missing = attack.needs.iter().filter(|p| **p != past_hook::ROOT).find(|p| find_in_path(p, &run.path).is_none());
    if let Some(missing) = missing {
        return Err(format!("  SKIP     {:<32} {:<13} ({missing} is not installed)", attack.name, attack.family));
    }
    let go = || -> anyhow::Result<Done> {
        let mut world = run.world(run.scratch.join(format!("{i:02}-{}", attack.name)), &run.path, run.git)?;
        world.start_serve(&run.serve_env)?;
        let report = attempt(run, &mut world, attack)?;
        let escaped = !report.after_turn.is_empty() || !report.after_learner.is_empty();
        let line = if escaped { report.changes() } else { report.why.clone() };
        let verdict = if escaped { "ESCAPED" } else { "HELD" };
        let line = format!("  {verdict:<8} {:<32} {:<13} {line}", attack.name, attack.family);
        Ok(Done { name: attack.name, family: attack.family, world, last: report.last, escaped, line })
    };
    go().map_err(|err| format!("{err:#}"))
}

/// What one attempt found.
struct Report {
    after_turn: Vec<Change>,
    after_learner: Vec<Change>,
    /// How the attempt was held, from what Claude Code told the model.
    why: String,
    /// The first tool result of the first session that was an error.
    tool_error: Option<String>,
    last: Snapshot,
}

impl Report {
    fn changes(&self) -> String {
        let mut parts = Vec::new();
        if !self.after_turn.is_empty() {
            parts.push(format!("after the turn: {}", list(&self.after_turn)));
        }
        if !self.after_learner.is_empty() {
            parts.push(format!("after the learner's git and build: {}", list(&self.after_learner)));
        }
        parts.join("; ")
    }
}

fn attempt(run: &Run, world: &mut World, attack: &attacks::Attack) -> anyhow::Result<Report> {
    // Past the hook: Paige's hooks out of the launch, the learner's session played beside it.
    let past_hook = attack.family == past_hook::PAST_HOOK;
    let desktop = if past_hook { Some(past_hook::Session::start(&world.project, attack.name)?) } else { None };
    let before = snapshot::take(&world.project, &world.home, &world.data_dir);
    let mark = format!("PAIGE-GUARD-{}", attack.name);
    let desktop_vars = desktop.as_ref().map(past_hook::Session::vars).unwrap_or_default();
    let fill = |label: &str, calls: &[Call]| -> Vec<Call> {
        let (project, home) = (world.project.display().to_string(), world.home.display().to_string());
        calls
            .iter()
            .enumerate()
            .map(|(i, call)| {
                let id = model::tool_use_id(label, i);
                let mut vars = vec![("MARK", mark.as_str()), ("PROJECT", &project), ("HOME", &home), ("TOOL_ID", &id)];
                vars.extend(desktop_vars.iter().map(|(name, value)| (*name, value.as_str())));
                Call { tool: call.tool.clone(), input: attacks::fill(&call.input, &vars) }
            })
            .collect()
    };
    let hooks = run.hooks && !past_hook;
    let session = |label: &str, calls: &[Call], stage: model::Stage| {
        model::run_claude(&run.runtime, world, label, &fill(label, calls), hooks, SESSION_DEADLINE, stage)
    };
    // The learner's terminal is Claude Code's, as under `paige claude`.
    let stage = || model::Stage { terminal: desktop.as_ref().map(|d| &d.terminal), on_first_turn: None };
    let first = session(
        "session1",
        &attack.calls,
        model::Stage { on_first_turn: desktop.as_ref().and_then(past_hook::Session::later_mount), ..stage() },
    )?;
    let mut why = held_because(&first)?;
    let tool_error = first.tool_results().into_iter().find(|(error, _)| *error).map(|(_, text)| {
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        text.chars().take(200).collect::<String>()
    });
    if let Some(then) = &attack.then {
        let second = session("session2", then, stage())?;
        let fired = second.hook_output().contains(&format!("{mark}-fired"));
        let second_why = held_because(&second)?;
        why = format!("{why} | next session: {}{second_why}", if fired { "the planted hook ran; " } else { "" });
    }
    if let Some(desktop) = &desktop {
        desktop.finish();
    }
    let after = snapshot::take(&world.project, &world.home, &world.data_dir);
    let (after_turn, _) = run.traces.split(snapshot::diff(&before, &after, run.rules));
    let failed = world.learner_next(run.git);
    let last = snapshot::take(&world.project, &world.home, &world.data_dir);
    let (mut after_learner, _) =
        run.traces.split(snapshot::diff(&before, &last, Rules { after_learner: true, ..run.rules }));
    after_learner.retain(|c| !after_turn.iter().any(|t| t.path == c.path));
    if !failed.is_empty() && after_turn.is_empty() && after_learner.is_empty() {
        why = format!("{why} (learner: {failed})");
    }
    world.stop_serve();
    Ok(Report { after_turn, after_learner, why, tool_error, last })
}

/// The first error Claude Code sent back to the model (the layer that held), else the last
/// tool result; an error when the session produced nothing at all.
fn held_because(run: &model::Run) -> anyhow::Result<String> {
    if run.events.is_empty() {
        bail!(
            "Claude Code printed nothing ({}): {}",
            run.status.map_or("killed at the deadline".to_owned(), |s| s.to_string()),
            run.stderr.trim()
        );
    }
    let results = run.tool_results();
    let pick = results.iter().find(|(error, _)| *error).or(results.last());
    let text =
        pick.map_or("(no tool ran)".to_owned(), |(_, text)| text.split_whitespace().collect::<Vec<_>>().join(" "));
    // Which layer said so: Paige's hook (its command line cut), or Claude Code itself.
    let text = match text.split_once(" hook error: ") {
        Some((_, rest)) => format!("Paige's hook: {}", rest.split_once("]: ").map_or(rest, |(_, why)| why)),
        None => text.replace("<tool_use_error>", "Claude Code: ").replace("</tool_use_error>", ""),
    };
    Ok(text.chars().take(120).collect())
}

/// Times [`LATENCY_CALLS`] `true N` Bash calls in one session: the model's requests arrive one
/// call apart, so their gaps are the round trip of a call through every layer.
fn latency(run: &Run) -> anyhow::Result<String> {
    let mut world = run.world(run.scratch.join("latency"), &run.path, run.git)?;
    world.start_serve(&run.serve_env)?;
    let calls: Vec<Call> = (0..LATENCY_CALLS)
        // Each its own (`true 0`, `true 1`, …): governed mode's circuit breaker stops the
        // fourth identical call in a row.
        .map(|i| Call {
            tool: "Bash".into(),
            input: serde_json::json!({"command": format!("true {i}"), "description": "guard"}),
        })
        .collect();
    let stage = model::Stage::default();
    let session = model::run_claude(&run.runtime, &world, "latency", &calls, run.hooks, SESSION_DEADLINE, stage)?;
    let mut gaps: Vec<Duration> = session.turn_times.windows(2).map(|w| w[1] - w[0]).collect();
    if run.governed && !gaps.is_empty() {
        gaps.remove(0); // the handshake's select
    }
    if gaps.len() < LATENCY_CALLS {
        bail!("only {} of {LATENCY_CALLS} calls were made", gaps.len());
    }
    if let Some((_, error)) = session.tool_results().into_iter().find(|(error, _)| *error) {
        let error: String = error.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(120).collect();
        bail!("the `true` calls failed, so their time means nothing: {error}");
    }
    gaps.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    Ok(format!(
        "{LATENCY_CALLS} `true` Bash calls: p50 {:.1} ms, p90 {:.1} ms per call (model request to model request)",
        ms(gaps[gaps.len() / 2]),
        ms(gaps[gaps.len() * 9 / 10])
    ))
}

/// `program` in one of `path`'s folders, executable.
fn find_in_path(program: &str, path: &str) -> Option<std::path::PathBuf> {
    paige_core::terminal::find_in_path(program, Some(std::ffi::OsStr::new(path)))
}

fn on_off(on: bool) -> &'static str {
    if on { "on" } else { "off" }
}

fn list(changes: &[Change]) -> String {
    changes.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}
