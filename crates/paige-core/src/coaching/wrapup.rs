//! The session wrap-up (spec Story 9, FR-117…FR-128, Scenarios 9.5–9.7, 9.9–9.11): what a
//! finished session teaches Paige about the learner.
//!
//! Active session → its action log, phases and progress events → knowledge-gap extraction
//! (Sonnet: gaps into `knowledge_gaps`, a recurring topic bumping its frequency; katas into
//! `kata_specs`) → Dreyfus assessment (Sonnet: upserts, the previous stage kept in the
//! evidence) → memory summarisation (Haiku: memories into the memory store). Each model step
//! is best-effort: a failure is logged and counts 0. Then, always: the session ends
//! `completed` (`session_ended` logged by [`Coaching::end_session`]), `session:completed` is
//! broadcast, and the counts are returned.
//!
//! Exactly once per session: the wrap-up runs as owned background work (on the core's task
//! tracker, so a caller that goes away does not cut it short); every call for the session —
//! concurrent or later — waits for that one run and gets its result. After the run, "the
//! session" of a call without an active session is the one just wrapped up, until another
//! session starts. At shutdown the model steps still to come are skipped. The run's start
//! stops the session's Observer: no nudge reaches the learner or Claude Code while it runs.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use serde_json::json;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::Coaching;
use crate::api::{CallOptions, StructuredOutput};
use crate::coaching_state::Outcome;
pub use crate::coaching_state::{WrapUp, WrapUpError};
use crate::db::{
    ActionType, GapFilter, KataConstraint, NewDreyfusAssessment, NewKataSpec, NewKnowledgeGap, Session, SessionStatus,
};
use crate::memory::{MemoryInput, Origin};
use crate::prompts::memory_summarisation as summary;
use crate::prompts::{PromptModule, dreyfus_assessment as dreyfus, knowledge_gap_extraction as gaps};
use crate::protocol::{ServerMessage, SessionCompleted};

/// The transcript the models see is its last 100 KB (EC-63): about 25k tokens, well within
/// Haiku's context beside the rest of the message; the start is cut, with a marker, because
/// the end of a session says most about how it went.
pub const MAX_TRANSCRIPT_BYTES: usize = 100 * 1024;
/// The newest action-log entries the gap extraction sees.
pub(super) const MAX_ACTIONS: usize = 300;
/// The most frequent known gaps the gap extraction sees.
pub(super) const MAX_EXISTING_GAPS: usize = 100;

impl Coaching {
    /// Wraps up the active session once (see the module doc) and returns what it did; a
    /// second call, while the first runs or after, makes no model call and returns the first
    /// result. `transcript` is cut to its last [`MAX_TRANSCRIPT_BYTES`] before any model
    /// sees it.
    pub async fn end_session_with_wrapup(self: &Arc<Coaching>, transcript: &str) -> Result<WrapUp, WrapUpError> {
        let (session_id, mut outcome) = self.wrapup_for(transcript)?;
        let result = match outcome.wait_for(Option::is_some).await {
            Ok(done) => done.clone().unwrap_or(Err(WrapUpError::Interrupted)),
            Err(_) => Err(WrapUpError::Interrupted),
        };
        if result.is_err() {
            self.wrapups().forget(&session_id);
        }
        result
    }

    /// Starts the wrap-up without waiting for it (a hook must answer at once).
    pub(crate) fn begin_wrapup(self: &Arc<Coaching>, transcript: &str) -> Result<(), WrapUpError> {
        self.wrapup_for(transcript).map(|_| ())
    }

    /// The run of the session a call means: joined if it exists, else started.
    fn wrapup_for(self: &Arc<Coaching>, transcript: &str) -> Result<(String, watch::Receiver<Outcome>), WrapUpError> {
        let mut state = self.wrapups().state();
        let active = self.active_session();
        let session_id = match (&active, &state.last) {
            (Some(session), _) => session.id.clone(),
            (None, Some(last)) if self.is_latest_session(last) => last.clone(),
            (None, _) => return Err(WrapUpError::NoActiveSession),
        };
        if let Some(run) = state.runs.get(&session_id) {
            return Ok((session_id, run.clone()));
        }
        let Some(session) = active else { return Err(WrapUpError::NoActiveSession) };
        if !self.session_had_work(&session_id) {
            // Nothing to learn from: no model call, and not counted as a completed session.
            let set_aside = WrapUp {
                session_id: session_id.clone(),
                knowledge_gaps: 0,
                kata_specs: 0,
                dreyfus_updates: 0,
                memories_stored: 0,
                session_status: SessionStatus::Abandoned,
            };
            let (_, outcome) = watch::channel(Some(Ok(set_aside)));
            state.runs.insert(session_id.clone(), outcome.clone());
            state.last = Some(session_id.clone());
            drop(state);
            self.set_aside_workless();
            return Ok((session_id, outcome));
        }
        let (done, outcome) = watch::channel(None);
        state.runs.insert(session_id.clone(), outcome.clone());
        state.last = Some(session_id.clone());
        drop(state);
        // Nothing nudges the learner (or types into Claude Code, waiting on
        // `paige_end_session`) once the session is wrapping up.
        self.observer().stop(&session_id);
        // However the wrap-up started (the panel, `paige_end_session`, SessionEnd), every UI
        // shows it the same way, and the session's hints go out now, not at the end.
        self.broadcast(ServerMessage::SessionWrappingUp(crate::protocol::WrappingUp {
            session_id: session_id.clone(),
        }));
        self.clear_hints();
        if let Err(err) = self.clear_highlights(None) {
            tracing::warn!("cannot clear the hints at the wrap-up: {err}");
        }
        let transcript = last_bytes(transcript, MAX_TRANSCRIPT_BYTES);
        let core = self.clone();
        self.tasks().spawn(async move {
            let result = core.run_wrapup(session, &transcript, SessionStatus::Completed).await;
            done.send_replace(Some(result));
        });
        Ok((session_id, outcome))
    }

    /// Whether the session holds anything a wrap-up could learn from: a plan, or something the
    /// learner did (saved or edited a file, asked for an explanation, a review or the code,
    /// answered the interview, or prompted Claude Code — only the learner's own prompts).
    pub(crate) fn session_had_work(&self, session_id: &str) -> bool {
        // Edits not summarised yet are work too.
        if self.active_session().is_some_and(|s| s.id == session_id) {
            self.flush_buffer_summaries();
        }
        if self.db().plans_for_session(session_id).map_or(true, |plans| !plans.is_empty()) {
            return true;
        }
        let learners = [
            ActionType::FileSave,
            ActionType::BufferSummary,
            ActionType::BufferSignificantChange,
            ActionType::ExplainRequested,
            ActionType::ReviewRequested,
            ActionType::WorkedExample,
            ActionType::IntakeTurn,
        ];
        let acted = learners
            .into_iter()
            .any(|kind| self.db().recent_actions(session_id, 1, Some(kind)).map_or(true, |found| !found.is_empty()));
        acted || self.db().reliance_counts(session_id).map_or(true, |counts| counts.iter().any(|n| *n > 0))
    }

    /// Ends the live session, which had no plan and no work, as `abandoned`: every UI gets
    /// `session:ended` (abandoned), which is the end of it (no `session:completed` follows).
    fn set_aside_workless(&self) {
        match self.end_session(SessionStatus::Abandoned) {
            Ok(ended) => {
                tracing::info!(session = %ended.id, "a session with no plan and no work ended: abandoned, nothing to wrap up")
            }
            Err(err) => tracing::warn!("cannot end the session: {err}"),
        }
    }

    /// Wraps up a session left idle past the limit, in the background, then marks it
    /// `abandoned` (no transcript: Claude Code's is gone). `false` when its wrap-up already
    /// runs or ran.
    pub(crate) fn begin_abandon_wrapup(self: &Arc<Coaching>, session: Session) -> bool {
        let mut state = self.wrapups().state();
        if state.runs.contains_key(&session.id) {
            return false;
        }
        let (done, outcome) = watch::channel(None);
        state.runs.insert(session.id.clone(), outcome);
        drop(state);
        let core = self.clone();
        self.tasks().spawn(async move {
            let result = core.run_wrapup(session, "", SessionStatus::Abandoned).await;
            done.send_replace(Some(result));
        });
        true
    }

    /// Whether no session started after `session_id` (so a call without an active session
    /// still means it).
    fn is_latest_session(&self, session_id: &str) -> bool {
        match self.db().sessions() {
            Ok(sessions) => sessions.first().is_some_and(|latest| latest.id == session_id),
            Err(err) => {
                tracing::warn!("cannot list sessions: {err}");
                false
            }
        }
    }

    /// The wrap-up's model calls, then the session ends with `status`: `completed` (told to
    /// every UI) or `abandoned` (an idle session set aside: logged only).
    async fn run_wrapup(
        self: &Arc<Coaching>,
        session: Session,
        transcript: &str,
        status: SessionStatus,
    ) -> Result<WrapUp, WrapUpError> {
        let started = Instant::now();
        let cancel = self.shutdown_token();
        let record = self.session_record(&session.id);

        let found = match self
            .ask::<gaps::KnowledgeGapExtractionResponse>(
                &gaps::MODULE,
                &session.id,
                &record.gap_extraction_message(self),
                &cancel,
            )
            .await
        {
            Some(answer) => self.store_gaps(&session.id, &answer),
            None => StoredGaps::default(),
        };

        let dreyfus_updates = match self
            .ask::<dreyfus::DreyfusAssessmentResponse>(
                &dreyfus::MODULE,
                &session.id,
                &record.dreyfus_message(self, &found),
                &cancel,
            )
            .await
        {
            Some(answer) => self.store_assessments(&answer),
            None => 0,
        };

        let memories_stored = match self
            .ask::<summary::MemorySummarisationResponse>(
                &summary::MODULE,
                &session.id,
                &record.summarisation_message(&session, &found, transcript),
                &cancel,
            )
            .await
        {
            Some(answer) => self.store_memories(&session.id, answer).await,
            None => 0,
        };

        let wrapup = WrapUp {
            session_id: session.id.clone(),
            knowledge_gaps: found.gaps,
            kata_specs: found.katas,
            dreyfus_updates,
            memories_stored,
            session_status: status,
        };
        if status == SessionStatus::Abandoned {
            if cancel.is_cancelled() {
                // Cut short by shutdown: still active, wrapped up at the next start.
                return Err(WrapUpError::Interrupted);
            }
            self.abandon_session(&session.id)?;
            tracing::info!(session = %session.id, ?wrapup, "idle session wrapped up and abandoned");
            return Ok(wrapup);
        }
        self.complete_session(&session.id)?;
        self.broadcast(ServerMessage::SessionCompleted(SessionCompleted {
            session_id: session.id,
            knowledge_gaps: wrapup.knowledge_gaps,
            kata_specs: wrapup.kata_specs,
            dreyfus_updates: wrapup.dreyfus_updates,
            memories_stored: wrapup.memories_stored,
        }));
        let model_ms: i64 = match self.db().api_calls_for_session(&wrapup.session_id) {
            Ok(calls) => calls.iter().map(|call| call.latency_ms.max(0)).sum(),
            Err(_) => 0,
        };
        tracing::info!(
            session = %wrapup.session_id,
            total_ms = started.elapsed().as_millis() as u64,
            model_ms,
            knowledge_gaps = wrapup.knowledge_gaps,
            kata_specs = wrapup.kata_specs,
            dreyfus_updates = wrapup.dreyfus_updates,
            memories_stored = wrapup.memories_stored,
            "session wrapped up"
        );
        Ok(wrapup)
    }

    /// One best-effort model call: its answer, or `None` (logged) when it failed or the core
    /// is shutting down.
    async fn ask<T: StructuredOutput>(
        &self,
        module: &PromptModule,
        session_id: &str,
        user_message: &str,
        cancel: &CancellationToken,
    ) -> Option<T> {
        let options = CallOptions {
            session_id: Some(session_id),
            ..CallOptions::new(module.call_type, module.model, module.system_prompt, user_message)
        };
        tokio::select! {
            biased;
            _ = cancel.cancelled() => {
                tracing::warn!(call = module.call_type, "shutting down: wrap-up step skipped, counted as 0");
                None
            }
            answer = self.api().call::<T>(self.db(), &options) => match answer {
                Ok(answer) => Some(answer),
                Err(err) => {
                    tracing::warn!(call = module.call_type, "wrap-up step failed, counted as 0: {err}");
                    None
                }
            }
        }
    }

    /// Stores the answer's gaps (a known topic's frequency bumped instead of a duplicate)
    /// and its katas, each under the gap its `gap_topic` names (else this answer's first gap).
    fn store_gaps(&self, session_id: &str, answer: &gaps::KnowledgeGapExtractionResponse) -> StoredGaps {
        let mut known: HashMap<String, String> = match self.db().knowledge_gaps(&GapFilter::default()) {
            Ok(existing) => existing.into_iter().map(|gap| (topic_key(&gap.topic), gap.id)).rev().collect(),
            Err(err) => {
                tracing::warn!("cannot read the known knowledge gaps: {err}");
                HashMap::new()
            }
        };
        let mut stored = StoredGaps::default();
        let mut seen: Vec<String> = Vec::new();
        for gap in &answer.knowledge_gaps {
            let key = topic_key(&gap.topic);
            if key.is_empty() || seen.contains(&key) {
                continue;
            }
            let result = match known.get(&key) {
                Some(id) => self
                    .db()
                    .record_gap_encounter(id)
                    .and_then(|gap| if gap.addressed { self.db().set_gap_addressed(&gap.id, false) } else { Ok(gap) }),
                None => self.db().create_knowledge_gap(NewKnowledgeGap {
                    session_id: session_id.to_owned(),
                    topic: gap.topic.trim().to_owned(),
                    severity: severity(gap.severity),
                    evidence: gap.evidence.clone(),
                    related_concepts: gap.related_concepts.clone(),
                }),
            };
            match result {
                Ok(row) => {
                    known.insert(key.clone(), row.id);
                    seen.push(key);
                    stored.gaps += 1;
                    stored.topics.push(summary::GapSummary {
                        topic: gap.topic.trim().to_owned(),
                        severity: severity(gap.severity).as_str().to_owned(),
                    });
                }
                Err(err) => tracing::warn!(topic = %gap.topic, "cannot store a knowledge gap: {err}"),
            }
        }
        // A kata already kept under the same title is not kept again: each wrap-up of similar
        // work would otherwise add another copy.
        let mut titles: std::collections::HashSet<String> =
            self.db().katas().unwrap_or_default().iter().map(|k| topic_key(&k.title)).collect();
        for kata in &answer.kata_specs {
            if !titles.insert(topic_key(&kata.title)) {
                tracing::info!(kata = %kata.title, "a kata of that title is kept already");
                continue;
            }
            let gap_id = known.get(&topic_key(&kata.gap_topic)).or_else(|| seen.first().and_then(|key| known.get(key)));
            let Some(gap_id) = gap_id else {
                tracing::warn!(kata = %kata.title, "a kata without a knowledge gap to file it under is not stored");
                continue;
            };
            match self.db().create_kata(NewKataSpec {
                knowledge_gap_id: gap_id.clone(),
                title: kata.title.clone(),
                description: kata.description.clone(),
                scaffolding_code: kata.scaffolding_code.clone(),
                instructor_notes: instructor_notes(kata),
                constraints: kata
                    .constraints
                    .iter()
                    .map(|c| KataConstraint {
                        title: c.title.clone(),
                        description: c.description.clone(),
                        min_level: c.min_level.clamp(1, 10),
                    })
                    .collect(),
            }) {
                Ok(_) => stored.katas += 1,
                Err(err) => tracing::warn!(kata = %kata.title, "cannot store a kata: {err}"),
            }
        }
        stored
    }

    /// Upserts each assessment, the stage it replaces named in its evidence.
    fn store_assessments(&self, answer: &dreyfus::DreyfusAssessmentResponse) -> u32 {
        let mut updated = 0;
        for assessment in &answer.assessments {
            let skill_area = assessment.skill_area.trim();
            if skill_area.is_empty() {
                continue;
            }
            let previous = match self.db().dreyfus(skill_area) {
                Ok(Some(row)) => Some(row.stage),
                _ => assessment.previous_stage.map(stage),
            };
            let evidence = match previous {
                Some(previous) => format!("Previous stage: {previous}. {}", assessment.evidence),
                None => assessment.evidence.clone(),
            };
            let new = NewDreyfusAssessment {
                skill_area: skill_area.to_owned(),
                stage: stage(assessment.stage),
                confidence: assessment.confidence.clamp(0.0, 1.0),
                evidence,
            };
            match self.db().upsert_dreyfus(new) {
                Ok(_) => updated += 1,
                Err(err) => tracing::warn!(skill_area, "cannot store a Dreyfus assessment: {err}"),
            }
        }
        updated
    }

    /// Adds the memories on the blocking pool (the store and the model block).
    async fn store_memories(&self, session_id: &str, answer: summary::MemorySummarisationResponse) -> u32 {
        let inputs: Vec<MemoryInput> = answer
            .memories
            .into_iter()
            .filter(|memory| !memory.content.trim().is_empty())
            .map(|memory| MemoryInput { content: memory.content, tags: memory.tags, importance: memory.importance })
            .collect();
        let memory = self.memory().clone();
        let (origin, project, now) = (Origin::Session(session_id.to_owned()), self.project_name(), self.now());
        match tokio::task::spawn_blocking(move || memory.add_memories(&inputs, &origin, &project, now)).await {
            Ok(added) => u32::try_from(added.added).unwrap_or(u32::MAX),
            Err(err) => {
                tracing::warn!("storing the session's memories failed: {err}");
                0
            }
        }
    }

    /// Ends an idle session `abandoned`, logged; `session:ended` names it (a panel busy with
    /// another session ignores it).
    fn abandon_session(&self, session_id: &str) -> Result<(), WrapUpError> {
        let failed = |err: &dyn std::fmt::Display| WrapUpError::EndFailed(err.to_string());
        let ended = self.db().end_session(session_id, SessionStatus::Abandoned).map_err(|err| failed(&err))?;
        self.learning().session_ended(session_id);
        let duration_ms = (self.now() - ended.started_at).num_milliseconds();
        self.ctx().publish(crate::event::Domain::SessionEnded(self.summary_of(&ended, duration_ms)));
        let data = json!({ "status": SessionStatus::Abandoned, "durationMs": duration_ms });
        if let Err(err) = self.db().log_action(session_id, ActionType::SessionEnded, Some(data)) {
            tracing::warn!("cannot log the end of session {session_id}: {err}");
        }
        Ok(())
    }

    /// Ends the session `completed`: through [`Coaching::end_session`] while it is the active
    /// one; if something else ended it meanwhile, its row is marked completed directly.
    fn complete_session(&self, session_id: &str) -> Result<(), WrapUpError> {
        let failed = |err: &dyn std::fmt::Display| WrapUpError::EndFailed(err.to_string());
        if self.active_session().is_some_and(|active| active.id == session_id) {
            return self.end_session(SessionStatus::Completed).map(drop).map_err(|err| failed(&err));
        }
        let ended = self.db().end_session(session_id, SessionStatus::Completed).map_err(|err| failed(&err))?;
        self.learning().session_ended(session_id);
        let duration_ms = (self.now() - ended.started_at).num_milliseconds();
        let data = json!({ "status": SessionStatus::Completed, "durationMs": duration_ms });
        if let Err(err) = self.db().log_action(session_id, ActionType::SessionEnded, Some(data)) {
            tracing::warn!("cannot log the end of session {session_id}: {err}");
        }
        self.announce_end(&ended, duration_ms);
        Ok(())
    }
}

/// What the gap step stored.
#[derive(Debug, Default)]
pub(super) struct StoredGaps {
    pub(super) gaps: u32,
    pub(super) katas: u32,
    pub(super) topics: Vec<summary::GapSummary>,
}

/// A kata's notes for the reviewer, with its test cases and follow-up (which `kata_specs`
/// has no columns of their own for), so the review sees them.
fn instructor_notes(kata: &gaps::KataSpec) -> String {
    let mut notes = kata.instructor_notes.trim().to_owned();
    if !kata.test_cases.is_empty() {
        notes.push_str("\n\nTest cases:");
        for case in &kata.test_cases {
            notes.push_str("\n- ");
            notes.push_str(case);
        }
    }
    if let Some(follow_up) = kata.follow_up_constraint.as_deref().filter(|f| !f.trim().is_empty()) {
        notes.push_str("\n\nFollow-up constraint: ");
        notes.push_str(follow_up);
    }
    notes.trim_start().to_owned()
}

/// Topics compare without case or extra spaces ("Error  handling" is "error handling").
pub(super) fn topic_key(topic: &str) -> String {
    topic.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

fn severity(severity: gaps::Severity) -> crate::db::Severity {
    match severity {
        gaps::Severity::Low => crate::db::Severity::Low,
        gaps::Severity::Medium => crate::db::Severity::Medium,
        gaps::Severity::High => crate::db::Severity::High,
    }
}

fn stage(stage: dreyfus::DreyfusStage) -> crate::db::DreyfusStage {
    use crate::db::DreyfusStage as Db;
    match stage {
        dreyfus::DreyfusStage::Novice => Db::Novice,
        dreyfus::DreyfusStage::AdvancedBeginner => Db::AdvancedBeginner,
        dreyfus::DreyfusStage::Competent => Db::Competent,
        dreyfus::DreyfusStage::Proficient => Db::Proficient,
        dreyfus::DreyfusStage::Expert => Db::Expert,
    }
}

/// The last `max` bytes of `text` at a character boundary, marked when cut (EC-63).
pub fn last_bytes(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let start = (text.len() - max..=text.len()).find(|i| text.is_char_boundary(*i)).unwrap_or(text.len());
    format!("[… the first {start} bytes of the transcript were cut]\n{}", &text[start..])
}
