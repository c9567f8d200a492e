//! `paige hook <event>`: what Claude Code runs for each hook event. Reads the payload on
//! stdin, asks the running Paige (`POST /hooks/<event>`), prints the decision in Claude
//! Code's format. Prints nothing when Paige has no objection — never `allow`, which would
//! skip Claude Code's own permission checks.
//!
//! Claude Code fails open (a crashing, slow or missing hook lets the call through), so for a
//! PreToolUse of anything but a read every error — bad input, no Paige, timeout, garbage
//! reply, panic — becomes a deny: exit 2 with the reason on stderr.
//!
//! Kept small for start-up time: std's `TcpStream` speaks the one loopback HTTP/1.1 request,
//! no async runtime.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};

use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use paige_core::governance::{HookDecision, HookEvent, ToolCall};

/// How long Paige may take to answer a PreToolUse (PAIGE_HOOK_TIMEOUT_MS overrides): the call
/// waits for it. Events that may settle a watch window wait longer by default (the undo of a
/// call's changes takes time proportional to them): up to a second under Claude Code's own
/// timeout for them.
const DEFAULT_TIMEOUT: Duration = Duration::from_millis(3000);
const MAX_STDIN: u64 = 16 * 1024 * 1024;

pub fn run(event: &str) -> ExitCode {
    let Some(event) = HookEvent::parse(event) else {
        eprintln!("error: unknown hook event {event:?} (expected one of: {})", slugs());
        // An unknown event cannot be a tool call we must stop; say so and let it pass.
        return ExitCode::FAILURE;
    };
    let mut stdin = Vec::new();
    let read = std::io::stdin().take(MAX_STDIN).read_to_end(&mut stdin);
    let payload: Option<serde_json::Value> = paige_core::hook_event::parse_payload(&stdin).ok();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| -> anyhow::Result<HookDecision> {
        read.context("cannot read the hook payload on stdin")?;
        if payload.is_none() {
            bail!("the hook payload on stdin is not json");
        }
        ask_paige(event, &stdin)
    }));
    let outcome = match outcome {
        Ok(result) => result,
        Err(_) => Err(anyhow::anyhow!("paige hook panicked")),
    };
    match outcome {
        Ok(decision) => print_decision(event, decision),
        Err(err) => fail(event, payload.as_ref(), &err),
    }
}

fn slugs() -> String {
    HookEvent::ALL.iter().map(|e| e.slug()).collect::<Vec<_>>().join(", ")
}

/// The error path: deny a PreToolUse that is not a read (fail closed); otherwise stay silent on
/// stdout so Claude Code carries on.
fn fail(event: HookEvent, payload: Option<&serde_json::Value>, err: &anyhow::Error) -> ExitCode {
    let tool = payload.and_then(|p| p.get("tool_name")).and_then(|t| t.as_str());
    let input = payload.and_then(|p| p.get("tool_input"));
    // Without Paige nothing is checked or watched: only reads and Paige's own tools run.
    // Every shell command is denied, read-only or not (a flood of connections or a busy
    // detector must not turn into unwatched commands), and so is every tool Paige does not
    // know to be a read.
    let must_deny =
        event == HookEvent::PreToolUse && tool.is_none_or(|t| !ToolCall::parse(t, input).passes_without_paige());
    if must_deny {
        eprintln!(
            "Paige could not check this {} call, so it is denied (fail closed): {err:#}. Is Paige running?",
            tool.unwrap_or("tool")
        );
        return ExitCode::from(2);
    }
    eprintln!("paige hook {}: {err:#}", event.slug());
    ExitCode::SUCCESS
}

fn print_decision(event: HookEvent, decision: HookDecision) -> ExitCode {
    let mut out = std::io::stdout().lock();
    let printed = match decision {
        HookDecision::None => Ok(()),
        HookDecision::Deny { reason } if event == HookEvent::PreToolUse => {
            eprintln!("{reason}");
            return ExitCode::from(2);
        }
        HookDecision::Stop { reason } => {
            let mut answer = serde_json::json!({"continue": false, "stopReason": reason});
            if event == HookEvent::PreToolUse {
                answer["hookSpecificOutput"] = serde_json::json!({"hookEventName": "PreToolUse",
                    "permissionDecision": "deny", "permissionDecisionReason": reason});
            }
            writeln!(out, "{answer}")
        }
        HookDecision::Deny { reason } | HookDecision::Block { reason } => {
            writeln!(out, "{}", serde_json::json!({"decision": "block", "reason": reason}))
        }
        HookDecision::Context { context } if event == HookEvent::PreCompact => writeln!(out, "{context}"),
        HookDecision::Context { context } => writeln!(
            out,
            "{}",
            serde_json::json!({"hookSpecificOutput": {"hookEventName": event.name(), "additionalContext": context}})
        ),
    };
    match printed.and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("paige hook: cannot write the decision: {err}");
            if event == HookEvent::PreToolUse { ExitCode::from(2) } else { ExitCode::SUCCESS }
        }
    }
}

/// Where Paige listens: PAIGE_URL + PAIGE_TOKEN, else DATA_DIR/run/server.json.
/// `http://host:port[/base]` → (host, port, base without trailing slash).
fn parse_url(url: &str) -> anyhow::Result<(String, u16, String)> {
    let rest = url.strip_prefix("http://").with_context(|| format!("PAIGE_URL {url:?} is not an http:// url"))?;
    let (authority, base) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
        None => (rest, ""),
    };
    let (host, port) = authority.rsplit_once(':').with_context(|| format!("PAIGE_URL {url:?} has no port"))?;
    let port = port.parse().with_context(|| format!("PAIGE_URL {url:?} has a bad port"))?;
    Ok((host.trim_matches(['[', ']']).to_owned(), port, base.to_owned()))
}

/// The longest wait honoured for `event`: a second under the hook timeout Claude Code is
/// given for it in the generated settings. Past that Claude Code would give up first and fail
/// open, deciding instead of Paige.
fn max_timeout(event: HookEvent) -> Duration {
    Duration::from_millis(event.hook_timeout_secs() as u64 * 1000 - 1000)
}
/// The shortest honoured: enough for one local round trip.
const MIN_TIMEOUT: Duration = Duration::from_millis(100);

fn timeout(event: HookEvent) -> Duration {
    timeout_from(event, std::env::var("PAIGE_HOOK_TIMEOUT_MS").ok().as_deref())
}

/// `PAIGE_HOOK_TIMEOUT_MS`, clamped to what keeps Paige the one deciding; when unset or not
/// a number, 3 s for a PreToolUse (and PreCompact) and the longest honoured for the rest.
fn timeout_from(event: HookEvent, value: Option<&str>) -> Duration {
    let default = if event.hook_timeout_secs() > paige_core::governance::HOOK_TIMEOUT_SECS {
        max_timeout(event)
    } else {
        DEFAULT_TIMEOUT
    };
    value
        .and_then(|ms| ms.trim().parse().ok())
        .map(Duration::from_millis)
        .unwrap_or(default)
        .clamp(MIN_TIMEOUT, max_timeout(event))
}

fn ask_paige(event: HookEvent, body: &[u8]) -> anyhow::Result<HookDecision> {
    let env: std::collections::HashMap<String, String> = std::env::vars().collect();
    let paige = paige_core::run_info::locate_agent(&env, None)?;
    let (host, port, base) = parse_url(&paige.base_url)?;
    let token = paige.token.expose();
    let deadline = Instant::now() + timeout(event);
    let remaining = || deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
    let addr = (host.as_str(), port)
        .to_socket_addrs()
        .with_context(|| format!("cannot resolve {host}"))?
        .next()
        .with_context(|| format!("cannot resolve {host}"))?;
    let mut stream =
        TcpStream::connect_timeout(&addr, remaining()).with_context(|| format!("cannot reach paige at {addr}"))?;
    stream.set_nodelay(true).ok();
    stream.set_write_timeout(Some(remaining()))?;
    let host_header = if host.contains(':') { format!("[{host}]:{port}") } else { format!("{host}:{port}") };
    // How long this command still waits: Paige does not act on a decision nobody hears.
    let head = format!(
        "POST {base}/hooks/{} HTTP/1.1\r\nHost: {host_header}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nX-Paige-Answer-Within-Ms: {}\r\n\
         Connection: close\r\n\r\n",
        event.slug(),
        body.len(),
        remaining().as_millis()
    );
    let mut request = head.into_bytes();
    request.extend_from_slice(body);
    stream.write_all(&request).context("cannot send the hook payload to paige")?;
    let mut response = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        stream.set_read_timeout(Some(remaining()))?;
        if Instant::now() >= deadline {
            bail!("paige did not answer within {} ms", timeout(event).as_millis());
        }
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                response.extend_from_slice(&buf[..n]);
                if complete(&response) {
                    break;
                }
            }
            Err(err) if matches!(err.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                bail!("paige did not answer within {} ms", timeout(event).as_millis())
            }
            Err(err) => return Err(err).context("cannot read paige's answer"),
        }
    }
    let (status, body) = split_response(&response)?;
    if status != 200 {
        bail!("paige answered {status}: {}", String::from_utf8_lossy(body).trim());
    }
    serde_json::from_slice(body).context("paige's answer is not a hook decision")
}

fn header_end(response: &[u8]) -> Option<usize> {
    response.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

fn content_length(head: &str) -> Option<usize> {
    head.lines()
        .find_map(|l| l.split_once(':').filter(|(k, _)| k.trim().eq_ignore_ascii_case("content-length")))
        .and_then(|(_, v)| v.trim().parse().ok())
}

/// True once the headers and `Content-Length` bytes of body have arrived.
fn complete(response: &[u8]) -> bool {
    let Some(end) = header_end(response) else { return false };
    let head = String::from_utf8_lossy(&response[..end]);
    content_length(&head).is_some_and(|len| response.len() >= end + len)
}

fn split_response(response: &[u8]) -> anyhow::Result<(u16, &[u8])> {
    let end = header_end(response).context("paige's answer is not http")?;
    let head = String::from_utf8_lossy(&response[..end]);
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .filter(|_| head.starts_with("HTTP/1."))
        .context("paige's answer is not http")?;
    let body = &response[end..];
    let body = match content_length(&head) {
        Some(len) if body.len() >= len => &body[..len],
        Some(_) => bail!("paige's answer was cut short"),
        None => body,
    };
    Ok((status, body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hook_timeout_is_clamped_below_claude_codes_own() {
        let pre = HookEvent::PreToolUse;
        assert_eq!(timeout_from(pre, None), DEFAULT_TIMEOUT);
        assert_eq!(timeout_from(pre, Some("1500")), Duration::from_millis(1500));
        assert_eq!(timeout_from(pre, Some("60000")), max_timeout(pre));
        assert!(max_timeout(pre) < Duration::from_secs(paige_core::governance::HOOK_TIMEOUT_SECS as u64));
        assert_eq!(timeout_from(pre, Some("0")), MIN_TIMEOUT);
        assert_eq!(timeout_from(pre, Some("soon")), DEFAULT_TIMEOUT);
        // A settle may take as long as the undo: the longest Claude Code leaves it, less a second.
        let post = HookEvent::PostToolUse;
        assert_eq!(timeout_from(post, None), Duration::from_secs(59));
        assert_eq!(timeout_from(post, Some("120000")), Duration::from_secs(59));
        assert_eq!(timeout_from(post, Some("1500")), Duration::from_millis(1500));
    }

    #[test]
    fn parse_url_takes_host_port_and_base() {
        assert_eq!(parse_url("http://127.0.0.1:4100").unwrap(), ("127.0.0.1".into(), 4100, String::new()));
        assert_eq!(parse_url("http://localhost:9/x/").unwrap(), ("localhost".into(), 9, "/x".into()));
        assert!(parse_url("https://127.0.0.1:1").is_err());
        assert!(parse_url("http://127.0.0.1").is_err());
    }

    #[test]
    fn split_response_rejects_short_bodies_and_non_http() {
        assert_eq!(split_response(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}").unwrap(), (200, &b"{}"[..]));
        assert!(split_response(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{}").is_err());
        assert!(split_response(b"garbage\r\n\r\n").is_err());
    }
}
