//! The embedded terminal: one PTY per UI connection (a desktop window), running Claude Code
//! as DESIGN.md shows — or `PAIGE_AGENT_CMD`, or the user's shell with an install hint when
//! `claude` is missing. Output comes on a `TerminalOutput` channel of its own; input and resizes come
//! in through `terminal:input` / `terminal:resize`. The child runs in its own session
//! (process group) and is killed with the whole group when its connection goes or the core
//! shuts down. A child that ends by itself is reported in the terminal, and the learner's
//! next Enter starts it again on the same output.

use crate::sync::Locked;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use portable_pty::{CommandBuilder, MasterPty, PtySize, native_pty_system};

use crate::protocol::{ConnectionId, TerminalSize};

/// What to run in a terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentCommand {
    pub program: OsString,
    pub args: Vec<OsString>,
    pub cwd: PathBuf,
    /// Written to the terminal before the child's own output (e.g. how to install Claude Code).
    pub banner: Option<String>,
    /// Environment for the child (`PAIGE_URL`/`PAIGE_TOKEN` for `paige hook`): added to
    /// Paige's own, or all of it with `clear_env`.
    pub env: Vec<(OsString, OsString)>,
    /// The child is Claude Code: the Observer may type its nudges there. Never for
    /// `PAIGE_AGENT_CMD` or the fallback shell, where a nudge would run as a command.
    pub accepts_nudges: bool,
    /// `env` is the child's whole environment (Claude Code gets only what it needs; see
    /// `launch::env`), not additions to Paige's.
    pub clear_env: bool,
}

/// `program` in the directories of `path` (a `PATH` value), if one holds it executable.
pub fn find_in_path(program: &str, path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path?).map(|dir| dir.join(program)).find(|candidate| {
        candidate.metadata().map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false)
    })
}

/// One running PTY child.
pub struct Terminal {
    master: Mutex<Box<dyn MasterPty + Send>>,
    writer: Mutex<Box<dyn Write + Send>>,
    child: Mutex<Box<dyn portable_pty::Child + Send + Sync>>,
    pid: Option<u32>,
    reader: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// Set by `kill`: a reader waiting for room in the output channel gives up.
    killed: Arc<std::sync::atomic::AtomicBool>,
    /// Set by the reader when the child's output ended without a `kill`: the child is gone.
    exited: Arc<std::sync::atomic::AtomicBool>,
    accepts_nudges: bool,
    activity: Arc<Mutex<Activity>>,
    /// What runs here, to start it again after it ends.
    command: AgentCommand,
    /// The output channel's sender, kept so a restarted child writes to the same consumer;
    /// dropped by `kill`, so the channel ends with the terminal.
    output: Mutex<Option<tokio::sync::mpsc::Sender<String>>>,
}

/// When the terminal last saw the learner type and the child print (real time: these are
/// bytes on a real PTY), and whether the learner's last input left a line unfinished.
#[derive(Debug, Default)]
struct Activity {
    mid_line: bool,
    last_output: Option<std::time::Instant>,
    last_input: Option<std::time::Instant>,
}

/// How many chunks of output (up to 8 KiB each) a terminal holds for its consumer before its
/// reader waits, and with it the child: back-pressure, never loss.
pub const OUTPUT_CHUNKS: usize = 64;

/// A terminal's output: a bounded channel of its own, apart from the core's event bus, so a
/// flood of output can never crowd out UI messages. Ends when the terminal does.
pub struct TerminalOutput {
    rx: tokio::sync::mpsc::Receiver<String>,
}

impl TerminalOutput {
    /// The next chunk of output as UTF-8 text; `None` once the terminal is gone.
    pub async fn recv(&mut self) -> Option<String> {
        self.rx.recv().await
    }

    /// [`TerminalOutput::recv`] for a plain thread.
    pub fn blocking_recv(&mut self) -> Option<String> {
        self.rx.blocking_recv()
    }
}

impl Terminal {
    /// Starts `command` in a new PTY of `size`. `on_output` gets the output as UTF-8 text
    /// (characters split across reads are held back until complete); the reader blocks
    /// while it runs, which is the back-pressure on the child.
    pub fn spawn(
        command: &AgentCommand,
        size: TerminalSize,
        on_output: impl FnMut(String) + Send + 'static,
    ) -> std::io::Result<Terminal> {
        Terminal::spawn_inner(command, size, Arc::default(), on_output)
    }

    /// Starts `command` with its output sent to a [`TerminalOutput`] of its own.
    pub fn spawn_with_output(
        command: &AgentCommand,
        size: TerminalSize,
    ) -> std::io::Result<(Terminal, TerminalOutput)> {
        let (tx, rx) = tokio::sync::mpsc::channel(OUTPUT_CHUNKS);
        Ok((Terminal::spawn_into(command, size, tx)?, TerminalOutput { rx }))
    }

    /// Starts this terminal's command again in a new PTY of `size`, its output going to the
    /// same [`TerminalOutput`]: what follows a child that ended by itself. The old child is
    /// killed when this terminal is dropped.
    pub fn restart(&self, size: TerminalSize) -> std::io::Result<Terminal> {
        let tx = self.output.locked().clone();
        let tx = tx.ok_or_else(|| std::io::Error::other("this terminal has no output channel to restart on"))?;
        Terminal::spawn_into(&self.command, size, tx)
    }

    /// Kills this terminal's child (and waits until it is gone), says `said` on its output,
    /// then starts `command` in a new PTY of `size` whose output goes to the same
    /// [`TerminalOutput`]: governed mode's relaunch into another intent's view, where the two
    /// must never run at once (the new one continues the old one's conversation).
    pub fn replace_with(&self, command: &AgentCommand, size: TerminalSize, said: &str) -> std::io::Result<Terminal> {
        let tx = self.output.locked().clone();
        let tx = tx.ok_or_else(|| std::io::Error::other("this terminal has no output channel to restart on"))?;
        self.kill();
        // Dropped if its consumer is that far behind: a line, not worth waiting for.
        let _ = tx.try_send(said.to_owned());
        Terminal::spawn_into(command, size, tx)
    }

    /// What runs here.
    pub fn command(&self) -> &AgentCommand {
        &self.command
    }

    fn spawn_into(
        command: &AgentCommand,
        size: TerminalSize,
        tx: tokio::sync::mpsc::Sender<String>,
    ) -> std::io::Result<Terminal> {
        let killed: Arc<std::sync::atomic::AtomicBool> = Arc::default();
        let stop = killed.clone();
        let sender = tx.clone();
        let terminal = Terminal::spawn_inner(command, size, killed, move |mut data| {
            // Waits while the consumer is behind (the child then waits on its PTY), until
            // the consumer is gone or the terminal is killed.
            loop {
                match sender.try_send(data) {
                    Ok(()) | Err(tokio::sync::mpsc::error::TrySendError::Closed(_)) => return,
                    Err(tokio::sync::mpsc::error::TrySendError::Full(back)) => {
                        if stop.load(std::sync::atomic::Ordering::Relaxed) {
                            return;
                        }
                        data = back;
                        std::thread::sleep(std::time::Duration::from_millis(2));
                    }
                }
            }
        })?;
        *terminal.output.locked() = Some(tx);
        Ok(terminal)
    }

    fn spawn_inner(
        command: &AgentCommand,
        size: TerminalSize,
        killed: Arc<std::sync::atomic::AtomicBool>,
        mut on_output: impl FnMut(String) + Send + 'static,
    ) -> std::io::Result<Terminal> {
        let pty = native_pty_system().openpty(pty_size(size)).map_err(std::io::Error::other)?;
        let mut builder = CommandBuilder::new(&command.program);
        builder.args(&command.args);
        builder.cwd(&command.cwd);
        if command.clear_env {
            builder.env_clear();
        }
        builder.env("TERM", "xterm-256color");
        for (key, value) in &command.env {
            builder.env(key, value);
        }
        let mut reader = pty.master.try_clone_reader().map_err(std::io::Error::other)?;
        let writer = pty.master.take_writer().map_err(std::io::Error::other)?;
        let banner = command.banner.clone();
        // Claude Code also when the jail (bwrap) runs it.
        let name = if command.accepts_nudges { "Claude Code".to_owned() } else { program_name(&command.program) };
        let exited: Arc<std::sync::atomic::AtomicBool> = Arc::default();
        let (ended, stopped) = (exited.clone(), killed.clone());
        let activity: Arc<Mutex<Activity>> = Arc::default();
        let seen = activity.clone();
        let mut on_output = move |text: String| {
            seen.locked().last_output = Some(std::time::Instant::now());
            on_output(text);
        };
        // The child is started by the thread that reads its output and lives as long as its
        // PTY: the jail's `--die-with-parent` (PR_SET_PDEATHSIG) fires when the *thread*
        // that forked it ends, and a caller's thread (a runtime's blocking-pool thread, idle
        // for 10 s) could end long before the terminal does.
        let slave = pty.slave;
        let (started_tx, started) = std::sync::mpsc::sync_channel(1);
        let handle = std::thread::Builder::new().name("paige-pty-reader".into()).spawn(move || {
            let child = slave.spawn_command(builder);
            drop(slave);
            let pid = child.as_ref().ok().and_then(|child| child.process_id());
            let spawned = child.is_ok();
            let _ = started_tx.send(child);
            if !spawned {
                return;
            }
            if let Some(banner) = banner {
                on_output(banner);
            }
            let mut buf = [0u8; 8192];
            let mut pending: Vec<u8> = Vec::new();
            loop {
                match reader.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        pending.extend_from_slice(&buf[..n]);
                        let text = take_utf8(&mut pending);
                        if !text.is_empty() {
                            on_output(text);
                        }
                    }
                }
            }
            if !pending.is_empty() {
                on_output(String::from_utf8_lossy(&pending).into_owned());
            }
            // The child ended by itself (a kill is not news): say so where the learner looks.
            if !stopped.load(std::sync::atomic::Ordering::Relaxed) {
                let how = pid.and_then(|p| i32::try_from(p).ok()).and_then(exit_of);
                tracing::warn!(pid = ?pid, "terminal child {name} ended: {}", how.as_deref().unwrap_or("no exit status"));
                ended.store(true, std::sync::atomic::Ordering::Relaxed);
                on_output(exit_notice(&name, how.as_deref()));
            }
        })?;
        let child = started
            .recv()
            .map_err(|_| std::io::Error::other("the terminal's thread ended before its child started"))?
            .map_err(std::io::Error::other)?;
        let pid = child.process_id();
        Ok(Terminal {
            master: Mutex::new(pty.master),
            writer: Mutex::new(writer),
            child: Mutex::new(child),
            pid,
            reader: Mutex::new(Some(handle)),
            killed,
            exited,
            accepts_nudges: command.accepts_nudges,
            activity,
            command: command.clone(),
            output: Mutex::new(None),
        })
    }

    /// The learner typed `input`: a line is unfinished until Enter (or Ctrl-C) ends it. What
    /// the terminal emulator answers by itself (Claude Code asks it about its features at
    /// start, and hears of focus changes) is passed on but is not the learner typing: taken
    /// as such, it held every nudge and the kickoff back for good.
    pub fn write_input(&self, input: &[u8]) -> std::io::Result<()> {
        if let Some(mid_line) = typed_mid_line(input) {
            let mut activity = self.activity.locked();
            activity.last_input = Some(std::time::Instant::now());
            activity.mid_line = mid_line;
        }
        self.write(input)
    }

    /// May a nudge be typed now: the child is Claude Code, the learner is not mid-line, and
    /// it has drawn its screen and then printed nothing for `quiet`. Before its first output
    /// Claude Code is still starting: its terminal is not yet raw, so a paste would be echoed
    /// and its Enter read as a newline.
    pub fn ready_for_nudge(&self, quiet: std::time::Duration) -> bool {
        let activity = self.activity.locked();
        self.accepts_nudges && !activity.mid_line && activity.last_output.is_some_and(|at| at.elapsed() >= quiet)
    }

    pub fn accepts_nudges(&self) -> bool {
        self.accepts_nudges
    }

    /// Whether the child ended by itself (its exit shown in the terminal); see [`Terminal::restart`].
    pub fn has_exited(&self) -> bool {
        self.exited.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn last_input(&self) -> Option<std::time::Instant> {
        self.activity.locked().last_input
    }

    pub fn write(&self, input: &[u8]) -> std::io::Result<()> {
        let mut writer = self.writer.locked();
        writer.write_all(input)?;
        writer.flush()
    }

    pub fn resize(&self, size: TerminalSize) -> std::io::Result<()> {
        self.master.locked().resize(pty_size(size)).map_err(std::io::Error::other)
    }

    /// The child's process id (also its process group: it leads its own session).
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Kills the child's whole process group (SIGHUP, then SIGKILL) and, on Linux, every
    /// other process of its session — an interactive shell puts each background job in a
    /// group of its own, and a job left holding the PTY would also keep the reader from
    /// ending. Then reaps the child and waits for the reader thread. Idempotent.
    pub fn kill(&self) {
        self.killed.store(true, std::sync::atomic::Ordering::Relaxed);
        self.output.locked().take();
        if let Some(pid) = self.pid.and_then(|p| i32::try_from(p).ok()) {
            // SAFETY: killpg and kill only send signals; the group is the child's own session,
            // and `session_members` lists only processes of that session.
            unsafe {
                libc::killpg(pid, libc::SIGHUP);
                libc::killpg(pid, libc::SIGKILL);
            }
            // Until none is left (bounded): a job may fork while a pass runs, and a pass
            // right after the leader's death can miss a member the next one finds.
            for _ in 0..50 {
                let members = session_members(pid);
                if members.is_empty() {
                    break;
                }
                for member in members {
                    // SAFETY: as above; `member` belongs to the child's session.
                    unsafe { libc::kill(member, libc::SIGKILL) };
                }
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
        }
        {
            let mut child = self.child.locked();
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some(handle) = self.reader.locked().take() {
            let _ = handle.join();
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The live processes of session `sid` (the PTY child leads its own session), but `sid`
/// itself. Zombies are dead already and only wait for their reaper.
#[cfg(target_os = "linux")]
fn session_members(sid: i32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let zombie = |pid: i32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map_or(true, |stat| stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')))
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        // SAFETY: getsid only reads the session id of a process.
        .filter(|&pid| pid != sid && unsafe { libc::getsid(pid) } == sid && !zombie(pid))
        .collect()
}

#[cfg(not(target_os = "linux"))]
fn session_members(_sid: i32) -> Vec<i32> {
    Vec::new()
}

/// Whether `input` is only what a terminal emulator sends on its own: CSI reports (cursor
/// position, device status and attributes, mode reports, window reports, focus in/out, the
/// keyboard protocol's flags, SGR mouse events) and OSC, DCS or APC strings (colour and
/// capability replies). Text, Enter, arrows and function keys are typing.
/// What the learner typing `input` means for a delivery: `Some(true)` when it leaves a line
/// unfinished (until Enter or Ctrl-C ends it), `None` when it is only the terminal
/// emulator's own reports (not the learner typing). Shared by the app's terminal and
/// `paige claude`'s PTY.
pub fn typed_mid_line(input: &[u8]) -> Option<bool> {
    if input.is_empty() || only_terminal_reports(input) {
        return None;
    }
    Some(!matches!(input.last(), Some(b'\r' | b'\n' | 0x03)))
}

/// `text` as a bracketed paste, then Enter: Claude Code takes the lines as one message.
pub fn paste(text: &str) -> Vec<u8> {
    [b"\x1b[200~".as_slice(), text.as_bytes(), b"\x1b[201~\r"].concat()
}

fn only_terminal_reports(input: &[u8]) -> bool {
    let mut rest = input;
    while !rest.is_empty() {
        let Some(after) = rest.strip_prefix(b"\x1b") else { return false };
        match after.first() {
            Some(b'[') => {
                let body = &after[1..];
                let Some(end) = body.iter().position(|b| (0x40..=0x7e).contains(b)) else { return false };
                let params = &body[..end];
                let report = match body[end] {
                    b'R' | b'n' | b'c' | b'y' | b't' | b'I' | b'O' => true,
                    b'u' => params.starts_with(b"?"),
                    b'M' | b'm' => params.starts_with(b"<"),
                    _ => false,
                };
                if !report {
                    return false;
                }
                rest = &body[end + 1..];
            }
            Some(b']' | b'P' | b'_') => {
                let body = &after[1..];
                let bel = body.iter().position(|&b| b == 0x07).map(|i| (i, 1));
                let st = body.windows(2).position(|w| w == b"\x1b\\").map(|i| (i, 2));
                let Some((at, len)) = [bel, st].into_iter().flatten().min() else { return false };
                rest = &body[at + len..];
            }
            _ => return false,
        }
    }
    !input.is_empty()
}

/// What the learner knows a terminal's program as: Claude Code, or the program's file name.
fn program_name(program: &std::ffi::OsStr) -> String {
    let name = Path::new(program).file_name().unwrap_or(program).to_string_lossy().into_owned();
    if name == "claude" { "Claude Code".into() } else { name }
}

/// The line a terminal shows when its child ended by itself.
fn exit_notice(name: &str, how: Option<&str>) -> String {
    let ended = how.map_or_else(|| format!("{name} stopped"), |how| format!("{name} {how}"));
    format!("\r\n[{ended}. Press Enter to start it again.]\r\n")
}

/// How child `pid` ended, read without reaping it: `kill` reaps it, so until then its pid,
/// which is also its process group's, cannot be reused. `None` when it is still running a
/// moment after its output closed.
fn exit_of(pid: i32) -> Option<String> {
    let id = libc::id_t::try_from(pid).ok()?;
    for _ in 0..100 {
        // SAFETY: siginfo_t is plain data, zeroed so an empty answer reads as pid 0; waitid
        // with WNOWAIT only reports, leaving the child to be reaped by `kill`.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
        // SAFETY: as above; `info` is a valid siginfo_t to write into.
        if unsafe { libc::waitid(libc::P_PID, id, &mut info, flags) } != 0 {
            return None;
        }
        // SAFETY: waitid filled in (or left zeroed) a SIGCHLD siginfo_t.
        let (who, status) = unsafe { (info.si_pid(), info.si_status()) };
        if who == pid {
            return Some(if info.si_code == libc::CLD_EXITED {
                format!("exited with status {status}")
            } else {
                format!("was ended by signal {status}")
            });
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    None
}

fn pty_size(size: TerminalSize) -> PtySize {
    PtySize { rows: size.rows.max(1), cols: size.cols.max(1), pixel_width: 0, pixel_height: 0 }
}

/// Takes the longest valid UTF-8 prefix out of `pending`, leaving an incomplete trailing
/// character (at most 3 bytes) for the next read; invalid bytes become U+FFFD.
pub fn take_utf8(pending: &mut Vec<u8>) -> String {
    match std::str::from_utf8(pending) {
        Ok(text) => {
            let text = text.to_owned();
            pending.clear();
            text
        }
        Err(err) if err.error_len().is_none() && pending.len() - err.valid_up_to() < 4 => {
            let tail = pending.split_off(err.valid_up_to());
            let text = String::from_utf8_lossy(pending).into_owned();
            *pending = tail;
            text
        }
        Err(_) => {
            let text = String::from_utf8_lossy(pending).into_owned();
            pending.clear();
            text
        }
    }
}

/// The core's terminals, one per connection.
#[derive(Default)]
pub(crate) struct Terminals {
    by_connection: Mutex<std::collections::HashMap<ConnectionId, Arc<Terminal>>>,
    /// What Paige has to type into a Claude Code that runs in no terminal of the app's:
    /// `paige claude` in the learner's own terminal takes it (`claim`) once that Claude Code is
    /// quiet. One at a time, taken once.
    offer: Mutex<Option<Offer>>,
    /// A generation a Claude Code was started with before it was offered (`started_with`).
    pre_taken: Mutex<Option<u64>>,
}

/// A delivery (`coaching/kickoff.rs`) offered to `paige claude`.
#[derive(Debug, Clone)]
pub(crate) struct Offer {
    /// The delivery's generation: a newer one replaces it.
    pub generation: u64,
    pub kind: &'static str,
    pub text: String,
    pub taken: bool,
}

impl Terminals {
    pub(crate) fn get(&self, id: ConnectionId) -> Option<Arc<Terminal>> {
        self.by_connection.locked().get(&id).cloned()
    }

    /// Keeps `terminal` as connection `id`'s; its previous one, if any, is returned.
    pub(crate) fn insert(&self, id: ConnectionId, terminal: Terminal) -> Option<Arc<Terminal>> {
        self.by_connection.locked().insert(id, Arc::new(terminal))
    }

    pub(crate) fn take(&self, id: ConnectionId) -> Option<Arc<Terminal>> {
        self.by_connection.locked().remove(&id)
    }

    /// Where a nudge goes: of the terminals running Claude Code (not ended), the one the
    /// learner typed into last.
    pub(crate) fn nudge_target(&self) -> Option<Arc<Terminal>> {
        let all = self.by_connection.locked();
        all.values().filter(|t| t.accepts_nudges() && !t.has_exited()).max_by_key(|t| t.last_input()).cloned()
    }

    /// Offers `text` for `paige claude` to type, unless this generation was taken already.
    pub(crate) fn offer(&self, generation: u64, kind: &'static str, text: String) {
        let mut offer = self.offer.locked();
        if offer.as_ref().is_some_and(|o| o.generation == generation && o.taken) {
            return;
        }
        let taken = *self.pre_taken.locked() == Some(generation);
        *offer = Some(Offer { generation, kind, text, taken });
    }

    /// Whether `paige claude` took the offer of `generation`.
    pub(crate) fn taken(&self, generation: u64) -> bool {
        self.offer.locked().as_ref().is_some_and(|o| o.generation == generation && o.taken)
    }

    /// Withdraws the offer of `generation`, taken or not.
    pub(crate) fn withdraw(&self, generation: u64) {
        let mut offer = self.offer.locked();
        if offer.as_ref().is_some_and(|o| o.generation == generation) {
            *offer = None;
        }
    }

    /// Marks the delivery of `generation` taken, offered yet or not: a Claude Code was
    /// started with it already.
    pub(crate) fn started_with(&self, generation: u64) {
        *self.pre_taken.locked() = Some(generation);
        if let Some(offer) = self.offer.locked().as_mut().filter(|o| o.generation == generation) {
            offer.taken = true;
        }
    }

    /// What `paige claude` types now: the offer not taken yet, marked taken.
    pub(crate) fn claim(&self) -> Option<Offer> {
        let mut offer = self.offer.locked();
        let open = offer.as_mut().filter(|o| !o.taken)?;
        open.taken = true;
        Some(open.clone())
    }

    pub(crate) fn take_all(&self) -> Vec<Arc<Terminal>> {
        self.by_connection.locked().drain().map(|(_, t)| t).collect()
    }
}
