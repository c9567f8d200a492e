//! Delivering a nudge (spec Story 10, FR-140, FR-143): `nudge_sent` logged, `observer:nudge`
//! to every UI, and — so Claude Code answers as Paige — the nudge typed into the terminal of
//! the learner's window, but only when that terminal runs Claude Code (never
//! `PAIGE_AGENT_CMD` or the fallback shell, where it would run as a command), the learner's
//! last input there ended its line, and the terminal has been quiet for a moment. Otherwise
//! it waits; a nudge not typed within `stale_after`, or superseded by a newer trigger, is
//! dropped and logged `nudge_suppressed` (`stale`). When the Observer stops (the session's
//! wrap-up began, or it ended) a waiting nudge is dropped without a word: Claude Code may
//! be waiting on `paige_end_session`, and a line typed now would land in its prompt.

use crate::sync::Locked;
use std::sync::Arc;

use serde_json::json;

use super::Shared;
use crate::db::ActionType;
use crate::prompts::observer_triage::{ObserverTriageResponse, Signal};
use crate::protocol::{NudgeContext, ObserverNudge, ServerMessage};

/// How often a waiting nudge looks at the terminal again.
const POLL: std::time::Duration = std::time::Duration::from_millis(100);

fn signal_name(signal: Signal) -> String {
    serde_json::to_value(signal).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

/// One line for Claude Code's prompt: what the Observer saw and what Paige asks of it.
/// Newlines and control characters from the model are flattened: the line ends only with
/// the Enter that submits it.
pub(crate) fn prompt_line(answer: &ObserverTriageResponse) -> String {
    let c = &answer.suggested_context;
    let mut seen = vec![format!("signal {}", signal_name(answer.signal))];
    if let Some(file) = &c.current_file {
        seen.push(format!("the learner is in {file}"));
    }
    if let Some(time) = &c.time_in_file {
        seen.push(format!("for {time}"));
    }
    if let Some(expected) = &c.expected_file {
        seen.push(format!("the phase expects {expected}"));
    }
    if let Some(phase) = &c.phase_description {
        seen.push(format!("the phase: {phase}"));
    }
    let line = format!(
        "[Paige's Observer] {}. As Paige, give the learner one short, encouraging nudge in your own words; \
         do not write their code.",
        seen.join("; ")
    );
    line.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

impl super::Observer {
    /// `cancel` is the Observer's token: its stopping drops a nudge still waiting.
    pub(super) fn nudge(
        self: &Arc<Self>,
        answer: ObserverTriageResponse,
        state: &Shared,
        generation: u64,
        cancel: tokio_util::sync::CancellationToken,
    ) {
        let signal = signal_name(answer.signal);
        // Logged even when no UI is there to see it (EC-68).
        self.ctx.log_action(ActionType::NudgeSent, json!({ "signal": signal, "confidence": answer.confidence }));
        let c = &answer.suggested_context;
        self.ctx.broadcast(ServerMessage::ObserverNudge(ObserverNudge {
            signal: signal.clone(),
            confidence: answer.confidence,
            context: NudgeContext {
                current_file: c.current_file.clone(),
                expected_file: c.expected_file.clone(),
                time_in_file: c.time_in_file.clone(),
                phase_description: c.phase_description.clone(),
            },
        }));
        state.locked().last_nudge = Some(self.ctx.now());
        let Some(terminal) = self.terminals.nudge_target() else {
            tracing::info!("no terminal runs Claude Code: the nudge is shown in the UI only");
            return;
        };
        let line = prompt_line(&answer);
        let (ctx, state) = (self.ctx.clone(), state.clone());
        let settings = self.settings;
        let shutdown = self.ctx.shutdown_token();
        self.ctx.tasks().spawn(async move {
            let deadline = tokio::time::Instant::now() + settings.stale_after;
            let why = loop {
                if cancel.is_cancelled() {
                    tracing::info!(signal, "the observer stopped: the waiting nudge is dropped");
                    return;
                }
                if state.locked().generation != generation {
                    break "superseded by a newer trigger";
                }
                if terminal.ready_for_nudge(settings.quiet_output) {
                    let typed = terminal.write(line.as_bytes()).and_then(|()| terminal.write(b"\r"));
                    match typed {
                        Ok(()) => {
                            tracing::info!(signal, "nudge typed into Claude Code");
                            // Paige's words, never the learner's (issue 40).
                            let session = ctx.active_session().map(|s| s.id);
                            if let Err(err) = ctx.db().record_delivery(session.as_deref(), "nudge", &line) {
                                tracing::warn!("cannot keep that Paige typed a nudge: {err}");
                            }
                        }
                        Err(err) => tracing::warn!("cannot type the nudge into the terminal: {err}"),
                    }
                    return;
                }
                if tokio::time::Instant::now() >= deadline {
                    break "not typed in time: the learner was busy in the terminal";
                }
                tokio::select! {
                    _ = shutdown.cancelled() => return,
                    _ = cancel.cancelled() => {}
                    _ = tokio::time::sleep(POLL) => {}
                }
            };
            ctx.log_action(ActionType::NudgeSuppressed, json!({ "signal": signal, "reason": "stale", "why": why }));
        });
    }
}
