//! `paige gate` and `paige relay` (hidden): the two ends of the jail's only way out
//! (`paige_core::launch::gate` says what passes and why).
//!
//! - `paige gate --socket S --allow HOST:PORT… [--upstream URL] -- JAIL…` runs outside the jail:
//!   it listens on the UNIX socket S (bound into the jail), runs the jail as its child and
//!   exits with it. Each connection opens with one line: `hello` (answered `ok`),
//!   `connect 127.0.0.1:PORT` (a loopback port it allows), or `proxy` (then an HTTP
//!   `CONNECT HOST:PORT` request, admitted only to a host it allows; anything else gets 403).
//! - `paige relay --gate S --forward PORT… [--proxy]` runs inside, started by `paige confine`
//!   before its own layers apply (seccomp there may forbid UNIX sockets): it listens on
//!   `127.0.0.1:PORT` for each port, and on a free port for the proxy, prints
//!   `ready PROXY_PORT`, and passes every connection to the gate.
//!
//! Every connection is two blocking copies on threads of their own; there are at most
//! [`MAX_CONNECTIONS`] at once, and an opening line or request head must come within
//! [`HEAD_TIMEOUT`].

use std::ffi::OsString;
use std::io::{BufRead, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use clap::Args;

/// Connections open at once, per end; more wait for one to close.
const MAX_CONNECTIONS: usize = 256;
/// How long the opening line or an HTTP request head may take.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest opening line or request head.
const MAX_HEAD: usize = 8 * 1024;

#[derive(Debug, Args)]
pub(crate) struct GateArgs {
    /// The UNIX socket to listen on (made new; removed when the jail ends)
    #[arg(long, value_name = "PATH")]
    socket: PathBuf,
    /// A destination to admit: `127.0.0.1:PORT` forwarded as is, `HOST:PORT` for CONNECT
    #[arg(long = "allow", value_name = "HOST:PORT")]
    allow: Vec<String>,
    /// The learner's own HTTPS proxy, which CONNECTs to hosts go through
    #[arg(long, value_name = "URL")]
    upstream: Option<String>,
    /// The jail and its arguments, after `--`
    #[arg(last = true, required = true, value_name = "PROGRAM")]
    command: Vec<OsString>,
}

#[derive(Debug, Args)]
pub(crate) struct RelayArgs {
    /// The gate's socket
    #[arg(long, value_name = "PATH")]
    gate: PathBuf,
    /// A loopback port to listen on and pass to the gate as is
    #[arg(long, value_name = "PORT")]
    forward: Vec<u16>,
    /// Also listen on a free port as an HTTPS proxy, and print it
    #[arg(long)]
    proxy: bool,
}

/// What the gate admits.
#[derive(Debug, Clone)]
struct Rules {
    allow: Vec<String>,
    upstream: Option<(String, Option<String>)>,
}

impl Rules {
    fn new(allow: Vec<String>, upstream: Option<&str>) -> Result<Rules, String> {
        let upstream = match upstream {
            None => None,
            Some(url) => {
                let url = url::Url::parse(url).map_err(|e| format!("the upstream proxy {url:?}: {e}"))?;
                let host = url.host_str().ok_or_else(|| format!("the upstream proxy {url} names no host"))?;
                let port = url.port_or_known_default().unwrap_or(80);
                let auth = (!url.username().is_empty()).then(|| {
                    let decode = |s: &str| percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned();
                    let pair = format!("{}:{}", decode(url.username()), decode(url.password().unwrap_or_default()));
                    base64::Engine::encode(&base64::engine::general_purpose::STANDARD, pair)
                });
                Some((format!("{host}:{port}"), auth))
            }
        };
        Ok(Rules { allow: allow.into_iter().map(|a| a.to_ascii_lowercase()).collect(), upstream })
    }

    fn admits(&self, destination: &str) -> bool {
        let destination = destination.to_ascii_lowercase();
        self.allow.contains(&destination)
    }
}

/// Runs the gate and the jail; exits as the jail does.
pub(crate) fn run_gate(args: GateArgs) -> ExitCode {
    let refuse = |what: String| {
        eprintln!("paige gate: {what}; Claude Code was not started");
        ExitCode::from(126)
    };
    let rules = match Rules::new(args.allow, args.upstream.as_deref()) {
        Ok(rules) => Arc::new(rules),
        Err(why) => return refuse(why),
    };
    if let Some(dir) = args.socket.parent() {
        sweep(dir);
    }
    let listener = match bind_private(&args.socket) {
        Ok(listener) => listener,
        Err(e) => return refuse(format!("cannot listen on {}: {e}", args.socket.display())),
    };
    std::thread::spawn(move || serve(listener, rules));
    let (program, rest) = args.command.split_first().expect("clap requires the program");
    // Signals keep their default: a gate ended by one (Ctrl-C in a cooked terminal, `kill`)
    // takes the jail with it (`bwrap --die-with-parent`), as the jail alone did.
    let status = std::process::Command::new(program).args(rest).status();
    let _ = std::fs::remove_file(&args.socket);
    match status {
        Ok(status) => {
            use std::os::unix::process::ExitStatusExt;
            let code = status.code().or_else(|| status.signal().map(|s| 128 + s)).unwrap_or(1);
            ExitCode::from(u8::try_from(code).unwrap_or(1))
        }
        Err(e) => refuse(format!("cannot start {}: {e}", program.to_string_lossy())),
    }
}

/// The gate's accept loop: every connection on a thread of its own, until the process ends
/// (the gate exits when the jail does).
fn serve(listener: UnixListener, rules: Arc<Rules>) {
    let open = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming().flatten() {
        let rules = rules.clone();
        spawn_limited(&open, move || serve_one(stream, &rules));
    }
}

/// Listens on `path`, 0600 from the start (the umask is the process's own, set around bind).
fn bind_private(path: &Path) -> std::io::Result<UnixListener> {
    // SAFETY: umask(2) has no failure mode; nothing else in this process makes files meanwhile.
    let old = unsafe { libc::umask(0o177) };
    let bound = UnixListener::bind(path);
    // SAFETY: as above.
    unsafe { libc::umask(old) };
    bound
}

/// Removes gate sockets nobody listens on any more (a gate killed with its terminal).
fn sweep(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let is_gate = name.to_str().is_some_and(|n| n.starts_with("gate-") && n.ends_with(".sock"));
        if is_gate
            && entry.file_type().is_ok_and(|t| std::os::unix::fs::FileTypeExt::is_socket(&t))
            && UnixStream::connect(entry.path()).is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionRefused)
        {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Runs `work` on a thread of its own once fewer than [`MAX_CONNECTIONS`] run.
fn spawn_limited(open: &Arc<AtomicUsize>, work: impl FnOnce() + Send + 'static) {
    while open.load(Ordering::Acquire) >= MAX_CONNECTIONS {
        std::thread::sleep(Duration::from_millis(20));
    }
    open.fetch_add(1, Ordering::AcqRel);
    let running = open.clone();
    let spawned = std::thread::Builder::new().spawn(move || {
        work();
        running.fetch_sub(1, Ordering::AcqRel);
    });
    if spawned.is_err() {
        open.fetch_sub(1, Ordering::AcqRel);
    }
}

/// One connection from the jail: its opening line, then what it asks for if admitted.
fn serve_one(mut stream: UnixStream, rules: &Rules) {
    let _ = stream.set_read_timeout(Some(HEAD_TIMEOUT));
    let Some(line) = read_until(&mut stream, b"\n") else { return };
    match line.trim() {
        "hello" => {
            let _ = stream.write_all(b"ok\n");
        }
        "proxy" => proxy(stream, rules),
        other => match other.strip_prefix("connect ") {
            Some(to) if to.starts_with("127.0.0.1:") && rules.admits(to) => {
                if let Ok(out) = TcpStream::connect(to) {
                    let _ = out.set_nodelay(true);
                    let _ = stream.set_read_timeout(None);
                    pipe(stream, out);
                }
            }
            _ => tracing::warn!(asked = other, "the gate refused a connection from the jail"),
        },
    }
}

/// An HTTP `CONNECT` to an admitted host, straight or through the learner's proxy.
fn proxy(mut stream: UnixStream, rules: &Rules) {
    let Some(head) = read_until(&mut stream, b"\r\n\r\n") else { return };
    let mut words = head.lines().next().unwrap_or_default().split_whitespace();
    let (method, target) = (words.next().unwrap_or_default(), words.next().unwrap_or_default());
    let reply = |stream: &mut UnixStream, status: &str, text: &str| {
        let body = format!("{text}\n");
        let _ = write!(
            stream,
            "HTTP/1.1 {status}\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
    };
    if !method.eq_ignore_ascii_case("CONNECT") {
        return reply(&mut stream, "405 Method Not Allowed", "Paige's gate passes only CONNECT (HTTPS).");
    }
    if !rules.admits(target) {
        tracing::warn!(target, "the gate refused a CONNECT from the jail");
        let text = format!(
            "Paige's coach mode lets Claude Code reach only Paige and its model API; {target} is not one of them."
        );
        return reply(&mut stream, "403 Forbidden", &text);
    }
    let connected = match &rules.upstream {
        None => TcpStream::connect(target).map(|out| (out, true)),
        Some((proxy, auth)) => TcpStream::connect(proxy.as_str()).and_then(|mut out| {
            let auth = auth.as_ref().map(|a| format!("proxy-authorization: Basic {a}\r\n")).unwrap_or_default();
            write!(out, "CONNECT {target} HTTP/1.1\r\nhost: {target}\r\n{auth}\r\n")?;
            // The upstream's own answer goes back to Claude Code as it is.
            Ok((out, false))
        }),
    };
    match connected {
        Ok((out, answer)) => {
            if answer && stream.write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n").is_err() {
                return;
            }
            let _ = stream.set_read_timeout(None);
            pipe(stream, out);
        }
        Err(e) => reply(&mut stream, "502 Bad Gateway", &format!("Paige's gate cannot reach {target}: {e}")),
    }
}

/// Reads byte by byte (nothing past the end is taken from the stream) up to and including
/// `end`; None on EOF, a timeout, or more than [`MAX_HEAD`] bytes.
fn read_until(stream: &mut impl Read, end: &[u8]) -> Option<String> {
    let mut bytes = Vec::new();
    let mut byte = [0u8; 1];
    while !bytes.ends_with(end) {
        if bytes.len() >= MAX_HEAD || stream.read(&mut byte).ok()? == 0 {
            return None;
        }
        bytes.push(byte[0]);
    }
    String::from_utf8(bytes).ok()
}

/// Copies both ways until each side has closed its half.
fn pipe(a: impl Duplex, b: impl Duplex) {
    let (Ok(a2), Ok(b2)) = (a.clone_box(), b.clone_box()) else { return };
    let forth = std::thread::spawn(move || copy_half(Box::new(a), b2));
    copy_half(Box::new(b), a2);
    let _ = forth.join();
}

fn copy_half(mut from: Box<dyn Duplex>, mut to: Box<dyn Duplex>) {
    let _ = std::io::copy(&mut from, &mut to);
    to.shut_write();
}

/// A stream the relay copies to and from.
trait Duplex: Read + Write + Send + 'static {
    fn clone_box(&self) -> std::io::Result<Box<dyn Duplex>>;
    fn shut_write(&self);
}

impl Duplex for UnixStream {
    fn clone_box(&self) -> std::io::Result<Box<dyn Duplex>> {
        Ok(Box::new(self.try_clone()?))
    }
    fn shut_write(&self) {
        let _ = self.shutdown(Shutdown::Write);
    }
}

impl Duplex for TcpStream {
    fn clone_box(&self) -> std::io::Result<Box<dyn Duplex>> {
        Ok(Box::new(self.try_clone()?))
    }
    fn shut_write(&self) {
        let _ = self.shutdown(Shutdown::Write);
    }
}

/// Runs inside the jail: listens, says `ready PROXY_PORT`, and relays until killed.
pub(crate) fn run_relay(args: RelayArgs) -> ExitCode {
    let fail = |what: String| {
        eprintln!("paige relay: {what}");
        ExitCode::from(126)
    };
    // The gate must be there before Claude Code starts: its first call would fail otherwise.
    let hello = UnixStream::connect(&args.gate).and_then(|mut s| {
        s.set_read_timeout(Some(HEAD_TIMEOUT))?;
        s.write_all(b"hello\n")?;
        let mut answer = String::new();
        std::io::BufReader::new(s).read_line(&mut answer)?;
        match answer.trim() == "ok" {
            true => Ok(()),
            false => Err(std::io::Error::other(format!("it answered {answer:?}"))),
        }
    });
    if let Err(e) = hello {
        return fail(format!("Paige's gate at {} does not answer: {e}", args.gate.display()));
    }
    let mut listeners = Vec::new();
    for port in &args.forward {
        match TcpListener::bind(("127.0.0.1", *port)) {
            Ok(l) => listeners.push((l, format!("connect 127.0.0.1:{port}\n"))),
            Err(e) => return fail(format!("cannot listen on 127.0.0.1:{port}: {e}")),
        }
    }
    let mut proxy_port = 0;
    if args.proxy {
        match TcpListener::bind(("127.0.0.1", 0)).and_then(|l| Ok((l.local_addr()?.port(), l))) {
            Ok((port, l)) => {
                proxy_port = port;
                listeners.push((l, "proxy\n".to_owned()));
            }
            Err(e) => return fail(format!("cannot listen for the proxy: {e}")),
        }
    }
    println!("ready {proxy_port}");
    let _ = std::io::stdout().flush();
    relay(listeners, args.gate);
    ExitCode::SUCCESS
}

/// The relay's accept loops: each connection to a listener goes to the gate, opened with the
/// listener's line. Runs until the process is killed (with Claude Code).
fn relay(listeners: Vec<(TcpListener, String)>, gate: PathBuf) {
    let gate = Arc::new(gate);
    let open = Arc::new(AtomicUsize::new(0));
    let mut loops = Vec::new();
    for (listener, opening) in listeners {
        let (gate, open) = (gate.clone(), open.clone());
        loops.push(std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                // Hooks and MCP are small requests answered at once: no Nagle delay on them.
                let _ = stream.set_nodelay(true);
                let (gate, opening) = (gate.clone(), opening.clone());
                spawn_limited(&open, move || {
                    if let Ok(mut out) = UnixStream::connect(gate.as_path())
                        && out.write_all(opening.as_bytes()).is_ok()
                    {
                        pipe(stream, out);
                    }
                });
            }
        }));
    }
    for handle in loops {
        let _ = handle.join();
    }
}

/// Starts `paige relay` for `paige confine`, before its layers apply; returns the proxy's
/// port. The relay dies with the process that started it (Claude Code, after the exec).
pub(crate) fn start_relay(gate: &Path, forward: &[u16], proxy: bool) -> Result<u16, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find paige for the relay: {e}"))?;
    let mut command = std::process::Command::new(exe);
    command.arg("relay").arg("--gate").arg(gate);
    for port in forward {
        command.arg("--forward").arg(port.to_string());
    }
    if proxy {
        command.arg("--proxy");
    }
    command.stdin(std::process::Stdio::null()).stdout(std::process::Stdio::piped());
    paige_core::children::die_with_parent(&mut command);
    let mut child = command.spawn().map_err(|e| format!("cannot start the relay: {e}"))?;
    let stdout = child.stdout.take().expect("piped");
    let mut line = String::new();
    let _ = std::io::BufReader::new(stdout).read_line(&mut line);
    match line.trim().strip_prefix("ready ").and_then(|p| p.parse().ok()) {
        Some(port) => Ok(port),
        None => {
            let _ = child.kill();
            let status = child.wait().map(|s| s.to_string()).unwrap_or_default();
            Err(format!("the relay to Paige's gate did not start ({status})"))
        }
    }
}

#[cfg(test)]
#[path = "gate_tests.rs"]
mod tests;
