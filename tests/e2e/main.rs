//! End-to-end tests of the built `paige` binary, run as a real process: configuration
//! errors, start-up, the run file, and shutdown on signals.

mod blackbox;
mod claude;
mod coaching;
mod confine;
mod crash;
mod doctor;
mod failures;
mod flood;
mod governed;
mod guard;
mod hook;
mod intake;
mod interrupted;
mod large;
mod launch;
mod learning;
mod literal;
mod load;
mod memory;
mod record;
mod serve;
mod session;
mod tokens;
mod watch;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub const PAIGE: &str = env!("CARGO_BIN_EXE_paige");

/// A test that cannot run here says why and passes — unless `PAIGE_NO_SKIPS=1`
/// (`scripts/test.sh` sets it: CI fails on a skip), where it fails saying the same.
pub fn skipped(why: &str) {
    if std::env::var("PAIGE_NO_SKIPS").is_ok_and(|v| v == "1") {
        panic!("this test would be skipped ({why}), and PAIGE_NO_SKIPS=1 runs every test");
    }
    eprintln!("SKIPPED: {why}");
}

/// A scratch world for one run: a working dir (where `.env` is looked for), a project and a
/// data dir, and a clean environment holding only what the test sets.
pub struct World {
    pub root: tempfile::TempDir,
    pub env: Vec<(String, String)>,
}

impl World {
    pub fn empty() -> World {
        let root = tempfile::tempdir().expect("temp dir");
        for dir in ["cwd", "project", "home"] {
            std::fs::create_dir(root.path().join(dir)).expect("mkdir");
        }
        let env = vec![("HOME".into(), root.path().join("home").display().to_string())];
        World { root, env }
    }

    /// A world with everything required set and port 0. Its `paige serve` finds no
    /// bubblewrap (no `PATH` until a test sets one) and has Landlock off, so what is tested
    /// is Paige's own layers — the hooks and the change detector — as on a machine with no OS
    /// layer, where the learner said to start coach mode anyway (`PAIGE_UNGUARDED=1`). A test
    /// of an OS layer sets `PATH` (the jail) or `PAIGE_LANDLOCK=1`.
    pub fn ready() -> World {
        let mut world = World::empty();
        let project = world.project().display().to_string();
        let data = world.data_dir().display().to_string();
        world.set("PROJECT_DIR", &project).set("ANTHROPIC_API_KEY", "sk-test").set("PORT", "0").set("DATA_DIR", &data);
        world.set("PAIGE_LANDLOCK", "0").set("PAIGE_UNGUARDED", "1");
        world
    }

    pub fn set(&mut self, key: &str, value: &str) -> &mut World {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.into(), value.into()));
        self
    }

    pub fn unset(&mut self, key: &str) -> &mut World {
        self.env.retain(|(k, _)| k != key);
        self
    }

    pub fn cwd(&self) -> PathBuf {
        self.root.path().join("cwd")
    }

    pub fn project(&self) -> PathBuf {
        self.root.path().join("project")
    }

    pub fn data_dir(&self) -> PathBuf {
        self.root.path().join("data")
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(PAIGE);
        command.args(args).current_dir(self.cwd()).env_clear().envs(self.env.iter().cloned());
        command
    }

    /// Runs to completion: (status, stdout, stderr).
    pub fn run(&self, args: &[&str]) -> (ExitStatus, String, String) {
        let output = self.command(args).stdin(Stdio::null()).output().expect("paige runs");
        (output.status, String::from_utf8_lossy(&output.stdout).into(), String::from_utf8_lossy(&output.stderr).into())
    }

    pub fn spawn(&self, args: &[&str]) -> Running {
        self.spawn_command(self.command(args))
    }

    /// `paige <args>` run by `wrapper` (its words, then the paige binary and `args`).
    pub fn spawn_wrapped(&self, wrapper: &[&str], args: &[&str]) -> Running {
        let mut command = Command::new(wrapper[0]);
        command.args(&wrapper[1..]).arg(PAIGE).args(args);
        command.current_dir(self.cwd()).env_clear().envs(self.env.iter().cloned());
        self.spawn_command(command)
    }

    fn spawn_command(&self, mut command: Command) -> Running {
        let mut child =
            command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("paige starts");
        let (tx, lines) = mpsc::channel();
        let stdout = child.stdout.take().expect("stdout");
        let stderr = child.stderr.take().expect("stderr");
        let out_tx = tx.clone();
        std::thread::spawn(move || {
            BufReader::new(stdout).lines().map_while(Result::ok).for_each(|l| drop(out_tx.send(l)))
        });
        std::thread::spawn(move || BufReader::new(stderr).lines().map_while(Result::ok).for_each(|l| drop(tx.send(l))));
        Running { child, lines, seen: Vec::new() }
    }
}

/// A `paige` process; killed if the test ends without stopping it.
pub struct Running {
    pub child: Child,
    lines: mpsc::Receiver<String>,
    pub seen: Vec<String>,
}

impl Running {
    /// Waits for an output line containing `needle`; panics with all output after `timeout`.
    pub fn wait_for(&mut self, needle: &str, timeout: Duration) -> String {
        let deadline = Instant::now() + timeout;
        if let Some(line) = self.seen.iter().find(|l| l.contains(needle)) {
            return line.clone();
        }
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.contains(needle) {
                        return line;
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => break,
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    if self.seen.iter().any(|l| l.contains(needle)) {
                        break;
                    }
                    panic!("paige exited before printing {needle:?}; output:\n{}", self.seen.join("\n"))
                }
            }
        }
        panic!("no {needle:?} within {timeout:?}; output:\n{}", self.seen.join("\n"))
    }

    pub fn signal(&self, name: &str) {
        let status =
            Command::new("kill").arg(format!("-{name}")).arg(self.child.id().to_string()).status().expect("kill");
        assert!(status.success(), "kill -{name} failed");
    }

    /// Waits for exit; panics if still running after `timeout`. Collects the remaining output.
    pub fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                while let Ok(line) = self.lines.recv_timeout(Duration::from_millis(200)) {
                    self.seen.push(line);
                }
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "paige still running after {timeout:?}; output:\n{}",
                self.seen.join("\n")
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn output(&self) -> String {
        self.seen.join("\n")
    }

    /// The run file of this `paige serve` (in `data_dir`), with its UI token in `token`: the
    /// file's, else — where no OS layer hides `DATA_DIR` from Claude Code (`World::ready`),
    /// so Paige keeps that token in memory only — the one it printed for the learner.
    pub fn run_info(&mut self, data_dir: &Path) -> serde_json::Value {
        let mut info = read_json(&data_dir.join("run/server.json"));
        if info.get("token").is_none() {
            let line = self.wait_for("PAIGE_TOKEN=", Duration::from_secs(10));
            let printed = line.split("PAIGE_TOKEN=").nth(1).unwrap_or_default();
            let token: String = printed.chars().take_while(char::is_ascii_hexdigit).collect();
            assert_eq!(token.len(), 64, "the printed UI token: {line}");
            info["token"] = token.into();
        }
        info
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The reason of a PreToolUse call Paige refused, in Claude Code's structured form: exit 0 and
/// `permissionDecision: deny` on stdout (issue 41: an exit 2 shows as a "hook error" naming
/// the hook's command). Panics on any other answer.
pub fn refusal(status: std::process::ExitStatus, stdout: &str, stderr: &str) -> String {
    assert_eq!(status.code(), Some(0), "a refusal is a decision, not an error; stderr: {stderr}");
    let answer: serde_json::Value =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("a decision on stdout ({e}): {stdout:?}"));
    let decision = &answer["hookSpecificOutput"];
    assert_eq!(
        (decision["hookEventName"].as_str(), decision["permissionDecision"].as_str()),
        (Some("PreToolUse"), Some("deny")),
        "{answer}"
    );
    decision["permissionDecisionReason"].as_str().expect("a reason").to_owned()
}

/// A PreToolUse call Paige let through: exit 0 and no refusal on stdout.
pub fn let_through(answer: (std::process::ExitStatus, String, String)) {
    let (status, stdout, stderr) = answer;
    assert_eq!(status.code(), Some(0), "stderr: {stderr}");
    assert!(!stdout.contains("permissionDecision"), "refused: {stdout}");
}

pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display())))
        .expect("valid JSON")
}
