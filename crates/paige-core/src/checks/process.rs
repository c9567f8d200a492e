//! Running a check's command: in its own process group (so a timeout, a newer save or
//! shutdown kills the runner and everything it started), with no stdin, no shell, a deadline,
//! and only the tail of its output kept.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

use super::runner::Invocation;

/// The most output kept of each stream (its end: where runners print their results).
const TAIL_BYTES: usize = 256 << 10;
/// How long output may still arrive once the runner has exited (a straggler outside its
/// process group may hold the pipe open; it is not waited for longer).
const DRAIN_GRACE: Duration = Duration::from_millis(500);

/// How the command ended.
#[derive(Debug)]
pub enum Exit {
    Code(i32),
    Signal(i32),
    /// Killed at the deadline.
    TimedOut,
    /// Killed because a newer save (or shutdown) superseded it.
    Cancelled,
    /// It could not start (the program is missing, say).
    NotStarted(std::io::Error),
}

#[derive(Debug)]
pub struct Ran {
    pub exit: Exit,
    /// The end of stdout, then the end of stderr.
    pub output: String,
    pub duration: Duration,
    /// The process group it ran in (its leader's pid), for the tests.
    pub pgid: Option<i32>,
}

/// Kills a process group when dropped, unless disarmed: no check outlives its task.
struct Group(Option<i32>);

impl Group {
    fn kill(&self) {
        if let Some(pgid) = self.0 {
            // SAFETY: killpg only sends a signal to the group the check's leader made.
            unsafe { libc::killpg(pgid, libc::SIGKILL) };
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Runs `invocation` in `cwd` until it exits, `timeout` passes, or `cancel` fires.
/// `started` is called with the group's id once the process runs.
pub async fn run(
    invocation: &Invocation,
    cwd: &Path,
    timeout: Duration,
    cancel: &CancellationToken,
    started: impl FnOnce(i32),
) -> Ran {
    run_program(&invocation.program, &invocation.args, None, cwd, timeout, cancel, started).await
}

/// [`run`] for any program and arguments (the guard self-check runs `paige doctor --guard`),
/// with only `env` for its environment when given.
pub async fn run_program(
    program: &Path,
    args: &[String],
    env: Option<&std::collections::HashMap<String, String>>,
    cwd: &Path,
    timeout: Duration,
    cancel: &CancellationToken,
    started: impl FnOnce(i32),
) -> Ran {
    let begun = Instant::now();
    let mut command = tokio::process::Command::new(program);
    if let Some(env) = env {
        command.env_clear().envs(env);
    }
    command
        .args(args)
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        // Plain, non-interactive output: no colours, no watch mode, no prompts.
        .env("CI", "1")
        .env("NO_COLOR", "1")
        .env("FORCE_COLOR", "0")
        .env("CARGO_TERM_COLOR", "never")
        .process_group(0)
        .kill_on_drop(true);
    // A killed Paige takes it along (its group is killed on every other way out).
    crate::children::die_with_parent_async(&mut command);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(err) => {
            return Ran { exit: Exit::NotStarted(err), output: String::new(), duration: begun.elapsed(), pgid: None };
        }
    };
    let pgid = child.id().and_then(|id| i32::try_from(id).ok());
    let group = Group(pgid);
    if let Some(pgid) = pgid {
        started(pgid);
    }
    let (mut stdout, mut stderr) = (child.stdout.take(), child.stderr.take());
    let (mut out, mut err) = (Tail::default(), Tail::default());
    let (mut out_buf, mut err_buf) = (vec![0u8; 16 << 10], vec![0u8; 16 << 10]);
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let mut killed: Option<Exit> = None;
    let mut status: Option<std::process::ExitStatus> = None;
    let mut grace: Option<std::pin::Pin<Box<tokio::time::Sleep>>> = None;
    loop {
        if status.is_some() && stdout.is_none() && stderr.is_none() {
            break;
        }
        tokio::select! {
            read = read_some(&mut stdout, &mut out_buf) => out.push(&out_buf[..read]),
            read = read_some(&mut stderr, &mut err_buf) => err.push(&err_buf[..read]),
            waited = child.wait(), if status.is_none() => {
                status = Some(waited.unwrap_or_else(|_| std::process::ExitStatus::from_raw(-1)));
                // Whatever it left running in its group goes with it.
                group.kill();
                grace = Some(Box::pin(tokio::time::sleep(DRAIN_GRACE)));
            }
            _ = &mut deadline, if killed.is_none() && status.is_none() => {
                killed = Some(Exit::TimedOut);
                group.kill();
            }
            _ = cancel.cancelled(), if killed.is_none() && status.is_none() => {
                killed = Some(Exit::Cancelled);
                group.kill();
            }
            _ = async { grace.as_mut().expect("set").await }, if grace.is_some() => break,
        }
    }
    drop(group);
    let exit = match (killed, status) {
        (Some(killed), _) => killed,
        (None, Some(status)) => match (status.code(), status.signal()) {
            (Some(code), _) => Exit::Code(code),
            (None, Some(signal)) => Exit::Signal(signal),
            (None, None) => Exit::Code(-1),
        },
        (None, None) => Exit::Code(-1),
    };
    let mut output = out.text();
    let err = err.text();
    if !err.is_empty() {
        output.push('\n');
        output.push_str(&err);
    }
    Ran { exit, output, duration: begun.elapsed(), pgid }
}

/// Reads what is there; a stream at its end (or failing) is closed and never polled again.
async fn read_some<R: tokio::io::AsyncRead + Unpin>(stream: &mut Option<R>, buf: &mut [u8]) -> usize {
    let Some(reader) = stream.as_mut() else { return std::future::pending().await };
    match reader.read(buf).await {
        Ok(0) | Err(_) => {
            *stream = None;
            0
        }
        Ok(n) => n,
    }
}

/// The last [`TAIL_BYTES`] of a stream.
#[derive(Default)]
struct Tail {
    bytes: Vec<u8>,
    cut: bool,
}

impl Tail {
    fn push(&mut self, chunk: &[u8]) {
        self.bytes.extend_from_slice(chunk);
        if self.bytes.len() > 2 * TAIL_BYTES {
            let drop = self.bytes.len() - TAIL_BYTES;
            self.bytes.drain(..drop);
            self.cut = true;
        }
    }

    fn text(&self) -> String {
        let start = match self.cut {
            true => self.bytes.len().saturating_sub(TAIL_BYTES),
            false => 0,
        };
        strip_ansi(&String::from_utf8_lossy(&self.bytes[start..]))
    }
}

/// Output without terminal colour codes (`ESC [ … letter`), whatever the tool ignored.
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::runner::RunnerKind;

    fn sh(script: &str) -> Invocation {
        Invocation { kind: RunnerKind::Cargo, program: "sh".into(), args: vec!["-c".into(), script.into()], tool: "sh" }
    }

    #[tokio::test]
    async fn output_and_exit_code_come_back() {
        let ran = run(
            &sh("echo out; echo err >&2; exit 3"),
            Path::new("/"),
            Duration::from_secs(10),
            &CancellationToken::new(),
            |_| {},
        )
        .await;
        assert!(matches!(ran.exit, Exit::Code(3)), "{:?}", ran.exit);
        assert_eq!(ran.output, "out\n\nerr\n");
    }

    #[tokio::test]
    async fn the_deadline_kills_the_whole_group_even_a_child_left_in_the_background() {
        let dir = tempfile::tempdir().expect("dir");
        let pid_file = dir.path().join("pid");
        let script = format!("sleep 30 & echo $! > {}; wait", pid_file.display());
        let ran =
            run(&sh(&script), Path::new("/"), Duration::from_millis(300), &CancellationToken::new(), |_| {}).await;
        assert!(matches!(ran.exit, Exit::TimedOut), "{:?}", ran.exit);
        assert!(ran.duration < Duration::from_secs(5));
        let pid: i32 = std::fs::read_to_string(&pid_file).expect("pid").trim().parse().expect("number");
        assert!(crate::checks::tests_support::gone(pid), "the background sleep was killed");
    }

    #[tokio::test]
    async fn a_missing_program_does_not_start() {
        let missing = Invocation { program: "paige-no-such-tool".into(), ..sh("") };
        let ran = run(&missing, Path::new("/"), Duration::from_secs(1), &CancellationToken::new(), |_| {}).await;
        assert!(matches!(&ran.exit, Exit::NotStarted(e) if e.kind() == std::io::ErrorKind::NotFound), "{:?}", ran.exit);
    }

    /// A real `cargo test <filter>` on a tiny crate (it builds in well under a second), read
    /// by `summary`: does not compile, then failing with the assertion, then passed.
    /// `CARGO_TARGET_DIR` is unset for it, so it never waits on this build's lock.
    #[tokio::test]
    async fn a_tiny_crates_cargo_test_reads_as_not_compiling_then_failing_then_passing() {
        use crate::checks::CheckStatus;
        use crate::checks::summary::conclude;
        let dir = tempfile::tempdir().expect("dir");
        let write = |path: &str, text: &str| {
            std::fs::create_dir_all(dir.path().join(path).parent().expect("parent")).expect("mkdir");
            std::fs::write(dir.path().join(path), text).expect("write");
        };
        write("Cargo.toml", "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n");
        write(".gitignore", "/target\n");
        let tests =
            "\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn sum_adds() { assert_eq!(super::sum(2, 3), 5); }\n}\n";
        let cargo = Invocation {
            kind: RunnerKind::Cargo,
            program: "env".into(),
            args: ["-u", "CARGO_TARGET_DIR", "cargo", "test", "sum_adds"].map(String::from).to_vec(),
            tool: "cargo",
        };
        let mut seen = Vec::new();
        for body in ["a + c", "a - b", "a + b"] {
            write("src/lib.rs", &format!("pub fn sum(a: i32, b: i32) -> i32 {{ {body} }}\n{tests}"));
            let ran = run(&cargo, dir.path(), Duration::from_secs(120), &CancellationToken::new(), |_| {}).await;
            let Exit::Code(code) = ran.exit else { panic!("{:?}", ran.exit) };
            seen.push(conclude(RunnerKind::Cargo, code, &ran.output, "sum_adds"));
        }
        assert_eq!(seen[0].0, CheckStatus::Failed);
        assert!(
            seen[0].1.starts_with("does not compile: cannot find value `c` in this scope (src/lib.rs:1:"),
            "{:?}",
            seen[0]
        );
        assert_eq!(seen[1].0, CheckStatus::Failed);
        assert!(
            seen[1].1.starts_with("failing: tests::sum_adds: assertion `left == right` failed left: -1 right: 5"),
            "{:?}",
            seen[1]
        );
        assert_eq!(seen[2], (CheckStatus::Passed, "1 test passed".to_owned()));
    }

    #[test]
    fn colour_codes_are_stripped() {
        assert_eq!(strip_ansi("\u{1b}[31mFAILED\u{1b}[0m ok"), "FAILED ok");
    }
}
