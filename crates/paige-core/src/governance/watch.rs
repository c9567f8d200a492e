//! Layer 3 in the hooks: the change detector's window around watched calls (Bash, other
//! servers' MCP tools), and what is done with what it finds — coach mode undoes every change
//! to a learner file (lockfiles kept), governed mode undoes changes outside the bound intent's
//! scope (a denial on the ledger) and ledgers those inside with their SHA-256. A window whose
//! call never got its PostToolUse (interrupted, killed) is closed at the session's Stop,
//! SessionEnd or next prompt, or at a new session's start, without undoing anything. When
//! coach mode's Claude Code runs in the jail no window is opened: nothing it runs can write.
//! A window opens only for a call Claude Code's own transcript shows (`transcript::names_call`):
//! a forged pair of hook payloads around the learner's save names none, and undoes nothing.

use super::Governance;
use super::intents::{self, Orchestration};
use super::ledger::{self, NewTrace, TraceKind};
use super::tools::ToolCall;
use super::{GovernanceError, HookDecision, HookEvent, HookInput};
use crate::detector::{self, End, Outcome, Settled, Verdict};

impl Governance {
    /// Runs after the mode's own decision for the same hook.
    pub(super) fn watch(
        &self,
        event: HookEvent,
        input: &HookInput,
        call: &ToolCall,
        decision: HookDecision,
        governed: bool,
    ) -> Result<HookDecision, GovernanceError> {
        let call_id = input.tool_use_id.as_deref().unwrap_or("unidentified call");
        let session = input.session_id.as_str();
        let end = match event {
            // In the jail no call can write a learner file: in coach mode there is nothing to
            // watch, and nothing the learner changes meanwhile is ever taken for the agent's.
            HookEvent::PreToolUse if !governed && self.config().agent_jailed => return Ok(decision),
            HookEvent::PreToolUse if call.is_watched() && decision == HookDecision::None => {
                let tool = input.tool_name.as_deref().unwrap_or_default();
                let path = input.transcript_path.as_deref();
                if let Err(why) = super::transcript::names_call(path, input.tool_use_id.as_deref(), tool) {
                    tracing::warn!("a PreToolUse for a call not in Claude Code's transcript: {why}");
                    return Ok(HookDecision::Deny {
                        reason: format!(
                            "Paige watches a call only when Claude Code's own transcript shows it, and cannot find \
                             this one ({why}), so it is denied."
                        ),
                    });
                }
                // Governed: a call whose changes could not be told apart (the detector has not
                // read the whole project yet) would go unledgered; it is refused instead (fail
                // closed, issue 42), with the moment to wait.
                if governed && !self.detector().primed() && self.detector().prime_pending() {
                    return Ok(HookDecision::Deny {
                        reason: "Paige is still reading the project to record what this call changes; it is \
                                 denied so nothing goes unrecorded in the ledger. Try it again in a moment."
                            .to_owned(),
                    });
                }
                if let Err(err) = self.detector().watch_begin_in(call_id, session, call.backgrounds(), input.answer_by)
                {
                    return Ok(HookDecision::Deny {
                        reason: format!("Paige cannot watch this call's file changes, so it is denied: {err}"),
                    });
                }
                return Ok(decision);
            }
            HookEvent::PostToolUse | HookEvent::PostToolUseFailure if call.is_watched() => {
                let settled = self.settle(End::Call(call_id), input, call, governed)?;
                let Some(report) = self.report(&settled, governed) else { return Ok(decision) };
                return Ok(match event {
                    HookEvent::PostToolUse => HookDecision::Block { reason: report },
                    _ => HookDecision::Context { context: report },
                });
            }
            // Most turns end with no window open: nothing to load or walk then.
            _ if !self.detector().watching() => return Ok(decision),
            HookEvent::Stop | HookEvent::SessionEnd => End::Turn(Some(session)),
            // Come only once the session's calls ended: one still open was interrupted.
            HookEvent::UserPromptSubmit => End::Lost(Some(session)),
            // A new or resumed session: any session's open call lost its end (Claude Code
            // was killed, or crashed). A compaction continues the same turn.
            HookEvent::SessionStart if input.source.as_deref() != Some("compact") => End::Lost(None),
            _ => return Ok(decision),
        };
        let settled = self.settle(end, input, call, governed)?;
        self.report(&settled, governed);
        Ok(decision)
    }

    fn settle(
        &self,
        end: End<'_>,
        input: &HookInput,
        call: &ToolCall,
        governed: bool,
    ) -> Result<Vec<Settled>, GovernanceError> {
        let root = self.project_root().path().to_owned();
        let io = |err: detector::DetectorError| GovernanceError::Io {
            path: root.clone(),
            source: std::io::Error::other(err.to_string()),
        };
        if !governed {
            let verdict = |path: &str| match detector::is_lockfile(path) {
                true => Verdict::Keep("a lockfile builds rewrite"),
                false => Verdict::Undo,
            };
            return self.detector().watch_close(end, verdict).map_err(io);
        }
        let orch = Orchestration::new(&root);
        let session = self.db().agent_session(&input.session_id)?;
        let intents = orch.load().ok();
        let intent = intents.as_ref().and_then(|f| session.intent_id.as_deref().and_then(|id| f.get(id).cloned()));
        let scope = intent.as_ref().map(intents::scope_set).transpose()?;
        let verdict = |path: &str| match &scope {
            Some(scope) if scope.is_match(path) => Verdict::Keep("inside the intent's owned scope"),
            _ => Verdict::Undo,
        };
        let settled = self.detector().watch_close(end, verdict).map_err(io)?;
        for change in &settled {
            let violation = || {
                let intent = session.intent_id.as_deref().unwrap_or("(none bound)");
                format!(
                    "Scope Violation: {} changed {} outside intent {intent}'s owned_scope",
                    call.tool(),
                    change.path
                )
            };
            let (kind, reason) = match &change.outcome {
                Outcome::Kept(_) => (TraceKind::Mutation, Some(mutation_reason(input, intent.as_ref()))),
                Outcome::Undone => (TraceKind::Denial, Some(format!("{}; Paige undid it", violation()))),
                Outcome::Failed(err) => {
                    (TraceKind::Denial, Some(format!("{}; Paige could not undo it: {err}", violation())))
                }
                // Not the call's, as far as Paige can tell: the learner is told, the ledger
                // (the agent's record) is not.
                Outcome::Left(_) => continue,
            };
            let kept = matches!(change.outcome, Outcome::Kept(_));
            let (file_hash, blocks) = match kept {
                true => self.kept_content(change),
                false => (change.sha256.clone(), Vec::new()),
            };
            let trace = NewTrace {
                file: Some(change.path.clone()),
                file_hash,
                blocks,
                reason,
                ..self.trace(kind, &session, call)
            };
            ledger::append(&orch.trace_path(), trace)?;
            self.paige_wrote(&orch.trace_path());
        }
        if let Some(intents) = intents.filter(|_| settled.iter().any(|c| matches!(c.outcome, Outcome::Kept(_)))) {
            self.write_intent_map(&orch, &intents)?;
        }
        Ok(settled)
    }

    /// What the ledger says of a change the call made and Paige kept: the file's SHA-256 (of
    /// what a deletion removed, for one), and the blocks it wrote, against the version the
    /// detector kept from before the call.
    fn kept_content(&self, change: &Settled) -> (Option<String>, Vec<ledger::Block>) {
        let store = self.detector().store();
        let earlier_sha =
            change.version.and_then(|id| self.db().file_version(id).ok().flatten()).map(|(_, version)| version.sha256);
        let Some(sha) = change.sha256.clone() else { return (earlier_sha, Vec::new()) };
        let now = self.project_root().resolve(&change.path).ok().and_then(|p| crate::files::read_bytes(&p).ok());
        let blocks = match now {
            Some(now) if crate::files::sha256_hex(&now) == sha && !crate::files::sniff_binary(&now) => {
                let before = earlier_sha.and_then(|s| store.get(&s).ok()).unwrap_or_default();
                ledger::changed_blocks(&String::from_utf8_lossy(&before), &String::from_utf8_lossy(&now))
            }
            // Past the size cap, binary, or changed again since: the hash alone.
            _ => Vec::new(),
        };
        (Some(sha), blocks)
    }

    /// Tells the learner (UI, log, action log) what was settled; returns the text for Claude
    /// Code when something was undone.
    fn report(&self, settled: &[Settled], governed: bool) -> Option<String> {
        let mut undone = Vec::new();
        let mut left = Vec::new();
        let mut unread = Vec::new();
        for change in settled {
            match &change.outcome {
                Outcome::Kept(_) => {
                    tracing::info!(path = change.path, outcome = %change.outcome, "a tool call changed a file; kept")
                }
                Outcome::Left(why) if *why == detector::STILL_READING => unread.push(change.clone()),
                Outcome::Left(_) => left.push(change.clone()),
                Outcome::Undone | Outcome::Failed(_) => undone.push(change.clone()),
            }
        }
        self.report_left(&left);
        let why = match governed {
            true => "Paige undid file changes outside the bound intent's owned scope:",
            false => {
                "Paige is in coach mode: the learner's files are theirs to change. Paige undid what this call \
                 changed (explain the change to the learner and let them make it):"
            }
        };
        let unread = detector::describe(
            &unread,
            "Paige could not check these changes against what the files held before (it was still reading the \
             project when the call ran), so they stay as the call left them; tell the learner what you changed:",
        );
        let text = match (detector::describe(&undone, why), unread) {
            (Some(undone), Some(unread)) => format!("{undone}\n\n{unread}"),
            (one, other) => one.or(other)?,
        };
        tracing::warn!("{text}");
        let kept = format!("{text}\nEvery replaced version is kept: `paige restore` lists them.");
        self.broadcast(crate::protocol::ServerMessage::notice(crate::protocol::MessageKind::Warning, kept));
        self.log_action(crate::db::ActionType::ChangeReverted, serde_json::json!({ "changes": undone }));
        Some(text)
    }

    /// Tells the learner about changes Paige left as they are: it cannot tell who made them.
    fn report_left(&self, left: &[Settled]) {
        let lost = |s: &&Settled| s.outcome == Outcome::Left(detector::LOST_END);
        let (lost, other): (Vec<Settled>, Vec<Settled>) = left.iter().cloned().partition(|s| lost(&s));
        let texts = [
            detector::describe(
                &lost,
                "Paige saw these files change while an interrupted command may still have been running; nothing \
                 was undone:",
            ),
            detector::describe(&other, "Paige saw these files change during a command and left them as they are:"),
        ];
        for text in texts.into_iter().flatten() {
            let text = format!("{text}\n`paige restore` has the earlier versions.");
            tracing::warn!("{text}");
            self.broadcast(crate::protocol::ServerMessage::notice(crate::protocol::MessageKind::Warning, text));
        }
    }
}

/// Why a kept change was made, for the ledger: the call's own description (Bash asks for
/// one), else the bound intent's name.
pub(super) fn mutation_reason(input: &HookInput, intent: Option<&intents::Intent>) -> String {
    let described = input.tool_input.as_ref().and_then(|i| i["description"].as_str()).map(str::trim);
    match (described.filter(|d| !d.is_empty()), intent) {
        (Some(description), _) => description.to_owned(),
        (None, Some(intent)) => format!("intent {}: {}", intent.id, intent.name),
        (None, None) => "no reason given".to_owned(),
    }
}
