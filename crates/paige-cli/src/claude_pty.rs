//! `paige claude` in the learner's terminal: Claude Code runs in a PTY of `paige claude`'s
//! own, between that terminal and it — as the app's terminal runs it — so Paige can type what
//! it has for Claude Code into it: the kickoff of a session started after Claude Code, a
//! phase-done note (issue 40). Every second, once Claude Code has drawn its screen, printed
//! nothing for [`QUIET`] and the learner is not mid-line, it asks the running Paige
//! (`POST /api/agent/claim`); what it gets it pastes (bracketed) and submits. The learner's
//! keys and Claude Code's output pass through untouched; the window's size follows.
//!
//! Governed mode started for an intent (`paige claude --intent`, issue 42): when its Claude
//! Code binds another intent, Paige asks this launcher (`POST /api/agent/relaunch`) to start
//! it again in that intent's view, continuing the conversation (`--continue`) in the same
//! PTY, and types it a note to go on once it is ready.
//!
//! Only where both stdin and stdout are a terminal: `paige claude -p …` in a script, or with
//! its input redirected, is exec'd as before.

use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use paige_core::run_info::Located;
use paige_core::terminal::AgentCommand;
use portable_pty::{CommandBuilder, PtySize, native_pty_system};

/// How long Claude Code prints nothing before Paige types into it (the app's default).
const QUIET: Duration = Duration::from_secs(2);
/// How often a quiet Claude Code asks Paige for a delivery.
const ASK_EVERY: Duration = Duration::from_secs(1);

/// Whether `paige claude` runs in a terminal (stdin and stdout both).
pub(crate) fn interactive() -> bool {
    rustix::termios::isatty(std::io::stdin()) && rustix::termios::isatty(std::io::stdout())
}

/// Starting Claude Code again in another intent's view (`paige claude --intent`): the
/// command for an intent, and the note typed into it once it is ready.
pub(crate) type Relaunch = Box<dyn Fn(&str) -> anyhow::Result<(AgentCommand, String)> + Send + Sync>;

fn spawn(
    slave: &dyn portable_pty::SlavePty,
    command: &AgentCommand,
) -> anyhow::Result<Box<dyn portable_pty::Child + Send + Sync>> {
    let mut builder = CommandBuilder::new(&command.program);
    builder.args(&command.args);
    builder.cwd(&command.cwd);
    if command.clear_env {
        builder.env_clear();
    }
    for (key, value) in &command.env {
        builder.env(key, value);
    }
    slave.spawn_command(builder).map_err(|e| anyhow::anyhow!("cannot start {}: {e}", command.program.to_string_lossy()))
}

/// What the learner and Claude Code last did in the PTY.
#[derive(Default)]
struct Activity {
    last_output: Option<Instant>,
    mid_line: bool,
}

/// The learner's terminal, put back as it was when dropped.
struct RawMode(rustix::termios::Termios);

/// The terminal's settings before raw mode, for a signal that ends `paige claude`.
static SAVED: std::sync::OnceLock<libc::termios> = std::sync::OnceLock::new();

/// SIGTERM, SIGHUP, SIGINT (sent, not typed: typed keys are Claude Code's in raw mode): the
/// terminal is put back, then the signal does what it would have.
extern "C" fn restore_and_die(signal: libc::c_int) {
    if let Some(saved) = SAVED.get() {
        // SAFETY: tcsetattr(3), signal(2) and raise(3) are async-signal-safe; `saved` is a
        // plain struct written once before the handler was installed.
        unsafe { libc::tcsetattr(0, libc::TCSANOW, saved) };
    }
    // SAFETY: as above.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
}

impl RawMode {
    fn enter() -> anyhow::Result<RawMode> {
        let stdin = std::io::stdin();
        // SAFETY: tcgetattr(3) fills the struct; zeroed is a valid termios to fill.
        let mut plain: libc::termios = unsafe { std::mem::zeroed() };
        if unsafe { libc::tcgetattr(0, &mut plain) } == 0 {
            let _ = SAVED.set(plain);
            for signal in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT] {
                // SAFETY: installs a handler that only calls async-signal-safe functions.
                unsafe { libc::signal(signal, restore_and_die as *const () as libc::sighandler_t) };
            }
        }
        let saved = rustix::termios::tcgetattr(stdin.as_fd()).context("cannot read the terminal's settings")?;
        let mut raw = saved.clone();
        raw.make_raw();
        rustix::termios::tcsetattr(stdin.as_fd(), rustix::termios::OptionalActions::Now, &raw)
            .context("cannot put the terminal in raw mode")?;
        Ok(RawMode(saved))
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = rustix::termios::tcsetattr(std::io::stdin().as_fd(), rustix::termios::OptionalActions::Now, &self.0);
    }
}

fn window_size() -> PtySize {
    match rustix::termios::tcgetwinsize(std::io::stdout()) {
        Ok(ws) if ws.ws_row > 0 && ws.ws_col > 0 => {
            PtySize { rows: ws.ws_row, cols: ws.ws_col, pixel_width: 0, pixel_height: 0 }
        }
        _ => PtySize { rows: 24, cols: 80, pixel_width: 0, pixel_height: 0 },
    }
}

/// Runs `command` in a PTY between this terminal and it until it exits; returns its exit
/// code. `paige` finds the running Paige, asked for deliveries: called at each ask, so a
/// Paige restarted (a new port) or whose tokens were rotated is found again.
pub(crate) fn run(
    command: &AgentCommand,
    paige: impl Fn() -> Option<Located> + Send + 'static,
    relaunch: Option<Relaunch>,
) -> anyhow::Result<i32> {
    let pty = native_pty_system().openpty(window_size()).map_err(|e| anyhow::anyhow!("cannot open a PTY: {e}"))?;
    // Spawned from this thread, which lives as long as the child: the jail's
    // `--die-with-parent` fires when the thread that forked it ends.
    let mut child = spawn(pty.slave.as_ref(), command)?;
    // Kept only to start Claude Code again in it (governed mode's relaunch).
    let slave = relaunch.as_ref().map(|_| pty.slave);
    let killer = Arc::new(Mutex::new(child.clone_killer()));
    let launch = Arc::new(Mutex::new(relaunch.as_ref().and_then(|_| paige_core::launch::launch_of(command))));
    let pending: Arc<Mutex<Option<String>>> = Arc::default();
    let note: Arc<Mutex<Option<String>>> = Arc::default();
    let hung_up = Arc::new(AtomicBool::new(false));
    let mut reader = pty.master.try_clone_reader().map_err(|e| anyhow::anyhow!("{e}"))?;
    let writer = Arc::new(Mutex::new(pty.master.take_writer().map_err(|e| anyhow::anyhow!("{e}"))?));
    let master = pty.master;
    let activity = Arc::new(Mutex::new(Activity::default()));
    let done = Arc::new(AtomicBool::new(false));
    let raw = RawMode::enter()?;

    // Claude Code's output, to the learner's terminal as it comes.
    let seen = activity.clone();
    let output = std::thread::spawn(move || {
        let mut stdout = std::io::stdout();
        let mut buf = [0u8; 8192];
        while let Ok(n @ 1..) = reader.read(&mut buf) {
            seen.lock().expect("activity").last_output = Some(Instant::now());
            if stdout.write_all(&buf[..n]).and_then(|()| stdout.flush()).is_err() {
                break;
            }
        }
    });
    // The learner's keys, to Claude Code. The thread blocks in read(2) until the process ends.
    // Raw mode makes ^D a byte: a read that ends means the learner's terminal is gone (closed
    // window, killed `script`), and Claude Code is hung up as a closed terminal would hang it
    // up, so nothing of it stays running with no one to see it.
    let (typed, keys) = (activity.clone(), writer.clone());
    let (hang_up, gone) = (killer.clone(), hung_up.clone());
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin();
        let mut buf = [0u8; 4096];
        while let Ok(n @ 1..) = stdin.read(&mut buf) {
            let input = &buf[..n];
            if let Some(mid_line) = paige_core::terminal::typed_mid_line(input) {
                typed.lock().expect("activity").mid_line = mid_line;
            }
            let mut writer = keys.lock().expect("writer");
            if writer.write_all(input).and_then(|()| writer.flush()).is_err() {
                return;
            }
        }
        gone.store(true, Ordering::Relaxed);
        let _ = hang_up.lock().expect("killer").kill();
    });
    // Paige's deliveries, and the window's size.
    let (state, pasting, finished) = (activity.clone(), writer.clone(), done.clone());
    let (to_type, asked_for, current, stop) = (note.clone(), pending.clone(), launch.clone(), killer.clone());
    let helper = std::thread::spawn(move || {
        let mut size = window_size();
        let (mut asked, mut asked_relaunch) = (Instant::now(), Instant::now());
        while !finished.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(200));
            let now = window_size();
            if (now.rows, now.cols) != (size.rows, size.cols) {
                size = now;
                let _ = master.resize(size);
            }
            let ready = {
                let a = state.lock().expect("activity");
                !a.mid_line && a.last_output.is_some_and(|at| at.elapsed() >= QUIET)
            };
            // Governed mode's relaunch: whether Paige wants it started again in another
            // intent's view — as soon as the selecting turn ended (its Stop hook), quiet or
            // not — unless the note for the one started again is still to be typed.
            let launch = current.lock().expect("launch").clone();
            if let Some(launch) = launch.as_deref()
                && to_type.lock().expect("note").is_none()
                && asked_relaunch.elapsed() >= ASK_EVERY
            {
                asked_relaunch = Instant::now();
                if let Some(intent) = paige().and_then(|paige| ask_relaunch(&paige, launch, ready)) {
                    *asked_for.lock().expect("pending") = Some(intent);
                    let _ = stop.lock().expect("killer").kill();
                    continue;
                }
            }
            if !ready || asked.elapsed() < ASK_EVERY {
                continue;
            }
            asked = Instant::now();
            let noted = to_type.lock().expect("note").take();
            if let Some(text) = noted.or_else(|| paige().and_then(|paige| claim(&paige))) {
                let mut writer = pasting.lock().expect("writer");
                let typed = writer.write_all(&paige_core::terminal::paste(&text)).and_then(|()| writer.flush());
                if typed.is_err() {
                    break;
                }
            }
        }
    });
    let status = loop {
        let status = child.wait().context("cannot wait for Claude Code")?;
        let next = pending.lock().expect("pending").take().filter(|_| !hung_up.load(Ordering::Relaxed));
        let (Some(intent), Some(rebuild), Some(slave)) = (next, relaunch.as_ref(), slave.as_ref()) else {
            break status;
        };
        let mut out = std::io::stdout();
        let _ = write!(out, "\r\npaige: Claude Code selected {intent}: starting it again in {intent}'s view…\r\n");
        let _ = out.flush();
        let started =
            rebuild(&intent).and_then(|(command, text)| Ok((spawn(slave.as_ref(), &command)?, command, text)));
        match started {
            Ok((next, command, text)) => {
                child = next;
                *killer.lock().expect("killer") = child.clone_killer();
                *launch.lock().expect("launch") = paige_core::launch::launch_of(&command);
                *activity.lock().expect("activity") = Activity::default();
                *note.lock().expect("note") = Some(text);
            }
            Err(err) => {
                let _ = write!(out, "paige: cannot start Claude Code again for {intent}: {err:#}\r\n");
                break status;
            }
        }
    };
    done.store(true, Ordering::Relaxed);
    // Its last output, unless something it left behind still holds the PTY open.
    let deadline = Instant::now() + Duration::from_millis(500);
    while !output.is_finished() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = helper.join();
    drop(raw);
    Ok(i32::try_from(status.exit_code()).unwrap_or(1))
}

/// Asks the running Paige whether to start Claude Code again in another intent's view; `quiet`:
/// Claude Code has printed nothing for a while (its turn is over even if no Stop hook came).
fn ask_relaunch(paige: &Located, launch: &str, quiet: bool) -> Option<String> {
    let body = serde_json::json!({ "launch": launch, "quiet": quiet }).to_string();
    let request = crate::local_http::Request {
        method: "POST",
        path: "/api/agent/relaunch",
        token: paige.token.expose(),
        body: Some(body.as_bytes()),
        timeout: Duration::from_secs(3),
        answer_within: false,
    };
    let response = crate::local_http::send(&paige.base_url, &request).ok()?;
    let value: serde_json::Value = serde_json::from_slice(&response.body).ok().filter(|_| response.status == 200)?;
    value.get("intent").and_then(serde_json::Value::as_str).map(str::to_owned)
}

/// Asks the running Paige for what to type now; `None` for nothing, or when it cannot be asked.
fn claim(paige: &Located) -> Option<String> {
    let request = crate::local_http::Request {
        method: "POST",
        path: "/api/agent/claim",
        token: paige.token.expose(),
        body: Some(b"{}"),
        timeout: Duration::from_secs(3),
        answer_within: false,
    };
    let response = crate::local_http::send(&paige.base_url, &request).ok()?;
    if response.status != 200 {
        return None;
    }
    let value: serde_json::Value = serde_json::from_slice(&response.body).ok()?;
    value.get("text").and_then(serde_json::Value::as_str).map(str::to_owned)
}
