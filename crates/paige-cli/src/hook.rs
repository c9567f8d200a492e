//! `paige hook <event>`: what Claude Code runs for each hook event. Reads the payload on
//! stdin, asks the running Paige (`POST /hooks/<event>`), prints the decision in Claude
//! Code's format. Prints nothing when Paige has no objection — never `allow`, which would
//! skip Claude Code's own permission checks.
//!
//! Claude Code fails open (a crashing, slow or missing hook lets the call through), so for a
//! PreToolUse of anything but a read every error — bad input, no Paige, timeout, garbage
//! reply, panic — becomes a deny: exit 2 with the reason on stderr.
//!
//! Kept small for start-up time: std's `TcpStream` speaks the one loopback HTTP/1.1 request
//! (`local_http.rs`), no async runtime.

use std::io::{Read, Write};
use std::process::ExitCode;
use std::time::Duration;

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
        use paige_core::hook_event::{LAUNCH_VAR, VIEW_INTENT_VAR};
        let view = std::env::var(LAUNCH_VAR).ok().zip(std::env::var(VIEW_INTENT_VAR).ok());
        ask_paige(event, &with_view(&stdin, view))
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
        // Claude Code's structured refusal: it reads as Paige's, where an exit 2 shows as a
        // "hook error" naming this command (issue 41). Writing it failing is exit 2 below.
        HookDecision::Deny { reason } if event == HookEvent::PreToolUse => writeln!(
            out,
            "{}",
            serde_json::json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                "permissionDecision": "deny", "permissionDecisionReason": reason}})
        ),
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

/// Where Paige listens: PAIGE_URL + PAIGE_TOKEN, else DATA_DIR/run/server.json.
/// The payload with the launch and view this Claude Code runs in (`paige claude --intent`:
/// `view`, from the environment its launcher gave it); as it came otherwise, without a second
/// parse on every hook. Any `paige_view` in the payload itself is dropped: only the launcher
/// says which view it made.
fn with_view(payload: &[u8], view: Option<(String, String)>) -> Vec<u8> {
    if view.is_none() && !payload.windows(b"paige_view".len()).any(|w| w == b"paige_view") {
        return payload.to_vec();
    }
    let Ok(serde_json::Value::Object(mut fields)) = serde_json::from_slice::<serde_json::Value>(payload) else {
        return payload.to_vec();
    };
    let had = fields.remove("paige_view").is_some();
    match view {
        Some((launch, intent)) => {
            fields.insert("paige_view".into(), serde_json::json!({"launch": launch, "intent": intent}));
        }
        None if !had => return payload.to_vec(),
        None => {}
    }
    serde_json::to_vec(&fields).unwrap_or_else(|_| payload.to_vec())
}

fn ask_paige(event: HookEvent, body: &[u8]) -> anyhow::Result<HookDecision> {
    let env: std::collections::HashMap<String, String> = std::env::vars().collect();
    let paige = paige_core::run_info::locate_agent(&env, None)?;
    let path = format!("/hooks/{}", event.slug());
    let request = crate::local_http::Request {
        method: "POST",
        path: &path,
        token: paige.token.expose(),
        body: Some(body),
        timeout: timeout(event),
        answer_within: true,
    };
    let response = crate::local_http::send(&paige.base_url, &request)?;
    if response.status != 200 {
        bail!("paige answered {}: {}", response.status, String::from_utf8_lossy(&response.body).trim());
    }
    serde_json::from_slice(&response.body).context("paige's answer is not a hook decision")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_launcher_says_which_view_a_hook_comes_from() {
        let plain = br#"{"session_id":"s","tool_name":"Bash"}"#;
        assert_eq!(with_view(plain, None), plain.to_vec(), "no view: the payload as it came");
        let viewed: serde_json::Value =
            serde_json::from_slice(&with_view(plain, Some(("L1".into(), "INT-001".into())))).expect("json");
        assert_eq!(viewed["paige_view"], serde_json::json!({"launch": "L1", "intent": "INT-001"}));
        let forged = br#"{"session_id":"s","paige_view":{"launch":"L9","intent":"INT-009"}}"#;
        let dropped: serde_json::Value = serde_json::from_slice(&with_view(forged, None)).expect("json");
        assert!(dropped.get("paige_view").is_none(), "{dropped}");
        let replaced: serde_json::Value =
            serde_json::from_slice(&with_view(forged, Some(("L1".into(), "INT-001".into())))).expect("json");
        assert_eq!(replaced["paige_view"]["intent"], "INT-001");
    }

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
}
