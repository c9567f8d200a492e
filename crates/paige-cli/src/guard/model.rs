//! The built-in scripted model (`paige-fake-anthropic` on loopback) and one Claude Code run
//! against it, launched exactly as `paige claude` launches it.

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use paige_fake_anthropic::{FakeAnthropic, Matcher, Reply};
use serde_json::{Value, json};

use super::world::World;

/// The tools Claude Code's own permission layer lets through without asking, so only Paige's
/// layers decide.
const ALLOWED_TOOLS: [&str; 10] = [
    "Bash",
    "Write",
    "Edit",
    "NotebookEdit",
    "Monitor",
    "CronCreate",
    "EnterWorktree",
    "Task",
    "Agent",
    "mcp__paige__*",
];

/// One model turn: a tool call.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    pub tool: String,
    pub input: Value,
}

/// What one Claude Code run did.
pub(crate) struct Run {
    /// Its stream-json events.
    pub events: Vec<Value>,
    /// How Claude Code ended: `None` when it was killed at the deadline.
    pub status: Option<ExitStatus>,
    pub stderr: String,
    /// When each agent-loop request reached the model, in order.
    pub turn_times: Vec<Instant>,
}

impl Run {
    /// The text of every tool result Claude Code sent back, in order.
    pub(crate) fn tool_results(&self) -> Vec<(bool, String)> {
        let mut out = Vec::new();
        for event in self.events.iter().filter(|e| e["type"] == "user") {
            for block in event["message"]["content"].as_array().into_iter().flatten() {
                if block["type"] != "tool_result" {
                    continue;
                }
                let text = match &block["content"] {
                    Value::String(s) => s.clone(),
                    Value::Array(parts) => {
                        parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join(" ")
                    }
                    other => other.to_string(),
                };
                out.push((block["is_error"] == true, text));
            }
        }
        out
    }

    /// The stdout of every hook Claude Code ran, joined.
    pub(crate) fn hook_output(&self) -> String {
        let hooks = self.events.iter().filter(|e| e["subtype"] == "hook_response");
        hooks
            .map(|e| format!("{} {}", e["stdout"].as_str().unwrap_or(""), e["output"].as_str().unwrap_or("")))
            .collect()
    }
}

/// What the learner's desktop around one run holds (`past_hook::Session`).
#[derive(Default)]
pub(crate) struct Stage<'a> {
    /// The learner's terminal (a PTY's slave): Claude Code's stdin and controlling terminal,
    /// as when `paige claude` runs in it.
    pub terminal: Option<&'a std::os::fd::OwnedFd>,
    /// Run once, when the model gets its first request: Claude Code (and its jail) runs.
    pub on_first_turn: Option<Box<dyn FnOnce() + Send>>,
}

/// Runs Claude Code once in `world` as `paige claude -p go …` would, against a fresh
/// scripted model that makes `calls` (one turn each), then says "done"; on a `stage` of the
/// learner's desktop.
pub(crate) fn run_claude(
    runtime: &tokio::runtime::Runtime,
    world: &World,
    label: &str,
    calls: &[Call],
    hooks: bool,
    deadline: Duration,
    stage: Stage,
) -> anyhow::Result<Run> {
    let fake = runtime.block_on(FakeAnthropic::start()).context("cannot start the scripted model on loopback")?;
    let turn_times = Arc::new(Mutex::new(BTreeMap::<usize, Instant>::new()));
    let seen = turn_times.clone();
    let first_turn = Mutex::new(stage.on_first_turn);
    // Never matches: notes when each agent-loop request (by its message count) arrived.
    fake.always(
        Matcher::custom(move |r| {
            if agent_loop(r) {
                if let Some(then) = first_turn.lock().unwrap_or_else(|e| e.into_inner()).take() {
                    then();
                }
                let turns = r.body["messages"].as_array().map_or(0, Vec::len);
                seen.lock().unwrap_or_else(|e| e.into_inner()).entry(turns).or_insert_with(Instant::now);
            }
            false
        }),
        Reply::text("unreachable"),
    );
    // Governed: the handshake first — the intent Claude Code was started for.
    if world.governed {
        let select = json!({"type": "tool_use", "id": format!("{}_select", tool_use_id(label, 0)),
            "name": paige_core::governance::SELECT_TOOL, "input": {"intent_id": super::world::INTENT}});
        fake.once(Matcher::custom(agent_loop), Reply::message(vec![select], "tool_use"));
    }
    for (i, call) in calls.iter().enumerate() {
        let block = json!({"type": "tool_use", "id": tool_use_id(label, i), "name": call.tool, "input": call.input});
        fake.once(Matcher::custom(agent_loop), Reply::message(vec![block], "tool_use"));
    }
    fake.always(Matcher::Any, Reply::text("done"));

    let env = launch_env(world, &fake.base_url());
    let mut extra: Vec<OsString> = ["-p", "go", "--output-format", "stream-json", "--verbose", "--allowedTools"]
        .into_iter()
        .map(OsString::from)
        .collect();
    extra.extend(ALLOWED_TOOLS.iter().map(OsString::from));
    if world.governed {
        extra.push(paige_core::governance::SELECT_TOOL.into());
    }
    let intent = world.governed.then_some(super::world::INTENT);
    let command = crate::claude::prepare(&world.data_dir, &env, extra, intent)?.command;
    if !hooks {
        without_hooks(&command)?;
    }

    let stdout_path = world.dir.join(format!("{label}.stdout"));
    let stderr_path = world.dir.join(format!("{label}.stderr"));
    let mut child = {
        use std::os::unix::process::CommandExt;
        let mut child = Command::new(&command.program);
        child
            .args(&command.args)
            .current_dir(&command.cwd)
            .env_clear()
            .envs(command.env.iter().cloned())
            // Files, not pipes: a writer left running in the background keeps a pipe open.
            .stdout(std::fs::File::create(&stdout_path)?)
            .stderr(std::fs::File::create(&stderr_path)?);
        match stage.terminal {
            // A session of its own (its group too, killed as one) whose terminal is this.
            Some(terminal) => super::past_hook::in_terminal(&mut child, terminal)?,
            None => {
                child.stdin(Stdio::null()).process_group(0);
            }
        }
        // A killed `paige doctor --guard` (say, with the app that started it) takes it along.
        paige_core::children::die_with_parent(&mut child);
        child.spawn().with_context(|| format!("cannot start {}", command.program.to_string_lossy()))?
    };
    let status = wait_or_kill(&mut child, deadline)?;
    let stdout = std::fs::read_to_string(&stdout_path).unwrap_or_default();
    let events = stdout.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default().chars().take(2000).collect();
    let requests: Vec<String> =
        fake.requests().iter().map(|r| json!({"path": r.path, "body": r.body}).to_string()).collect();
    let _ = std::fs::write(world.dir.join(format!("{label}.requests.jsonl")), requests.join("\n"));
    let turn_times = turn_times.lock().unwrap_or_else(|e| e.into_inner()).values().copied().collect();
    drop(fake);
    Ok(Run { events, status, stderr, turn_times })
}

/// The environment `paige claude` is run from: the world's PATH and HOME and the scripted
/// model (whether it jails is the world's `paige serve`'s decision).
pub(crate) fn launch_env(world: &World, base_url: &str) -> HashMap<String, String> {
    let mut env = world.env();
    env.insert("ANTHROPIC_BASE_URL".into(), base_url.into());
    env.insert("ANTHROPIC_API_KEY".into(), "sk-guard".into());
    // Nothing but the scripted model is called: no telemetry, no update check.
    env.insert("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".into(), "1".into());
    // The check runs in whatever layers are in force, none included: that is what it reports.
    env.insert(paige_core::launch::layers::UNGUARDED_VAR.into(), "1".into());
    env
}

/// The id of a scripted call, known to the script (`{TOOL_ID}`) for forged hook events.
pub(crate) fn tool_use_id(label: &str, i: usize) -> String {
    let clean: String = label.chars().filter(char::is_ascii_alphanumeric).collect();
    format!("toolu_guard_{clean}_{i:02}")
}

/// Only the agent loop's requests carry tools; side requests (titles, summaries) get text.
fn agent_loop(r: &paige_fake_anthropic::RecordedRequest) -> bool {
    r.body.get("tools").and_then(Value::as_array).is_some_and(|t| !t.is_empty())
}

/// Waits for `child` (a process group leader) until `deadline`, then kills its group.
/// `None`: it was killed.
pub(crate) fn wait_or_kill(child: &mut Child, deadline: Duration) -> anyhow::Result<Option<ExitStatus>> {
    let until = Instant::now() + deadline;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if Instant::now() >= until {
            if let Ok(pid) = i32::try_from(child.id()) {
                // SAFETY: kill(2) on the process group our own unreaped child leads.
                unsafe { libc::kill(-pid, libc::SIGKILL) };
            }
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `--guard-without hooks`: the launch's `--settings` file loses its hooks, so Paige answers
/// no tool call of this session (and its detector opens no window): what the other layers
/// hold alone. Done to the generated file only, never through a knob of the product.
fn without_hooks(command: &paige_core::terminal::AgentCommand) -> anyhow::Result<()> {
    let at = command.args.iter().position(|a| a == "--settings").context("the launch has no --settings")?;
    let path = std::path::PathBuf::from(&command.args[at + 1]);
    let mut settings: serde_json::Value = serde_json::from_slice(&std::fs::read(&path)?)?;
    settings.as_object_mut().context("settings are an object")?.remove("hooks");
    std::fs::write(&path, settings.to_string())?;
    Ok(())
}
