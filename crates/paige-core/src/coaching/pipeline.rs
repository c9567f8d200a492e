//! The coaching pipeline (spec Story 9, `paige_run_coaching_pipeline`): Claude Code's plan
//! becomes phases with hints, adapted to the learner's Dreyfus stages and to what Paige
//! remembers of earlier sessions.
//!
//! Active session → Dreyfus stages → memory (top 10, every project) → Haiku keeps the
//! relevant memories (skipped without memories; a failure means none) → Sonnet coach agent
//! (the one step that must succeed: otherwise an error and nothing stored) → plan, phases
//! and hints in one transaction → `coaching_pipeline` logged → `coaching:plan_ready` → the
//! first phase's hints in the editor and explorer, as its hint level allows.
//!
//! Zero phases from the coach is an empty plan, stored, and an empty list (EC-57: unusual,
//! not an error). A `memory_connection` needs a memory: when the coach was given none, the
//! connection it names is its own invention and is dropped before Claude Code or the UI see it.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::Coaching;
use crate::api::{ApiError, CallOptions};
use crate::db::{ActionType, DbError, HintLevel, HintSpan, HintStyle, NewPhase, NewPhaseHint, Phase, PhaseHint};
use crate::prompts::coach_agent::{self, CoachAgentResponse, CoachingMemory, FileHintStyle, LineHintStyle};
use crate::prompts::memory_retrieval_filter::{self, MemoryRetrievalFilterResponse, RawMemory};
use crate::protocol::{FileHint, HighlightLines, MessageKind, PhaseSummary, PlanReady, ServerMessage};

/// Memories the pipeline reads (FR-110).
const MEMORIES: usize = 10;

/// What Claude Code sends (`paige_run_coaching_pipeline`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PipelineInput {
    pub plan_text: String,
    pub issue_summary: String,
    pub issue_number: Option<i64>,
}

/// One phase as Claude Code gets it back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PipelinePhase {
    pub number: i64,
    pub title: String,
    pub description: String,
    pub hint_level: HintLevel,
}

/// What the pipeline answers Claude Code (spec output).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PipelineOutput {
    pub plan_id: String,
    pub phases: Vec<PipelinePhase>,
    pub memory_connection: Option<String>,
    pub estimated_difficulty: String,
}

#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error("No active session")]
    NoActiveSession,
    #[error("the coach agent failed, nothing was stored: {0}")]
    Coach(ApiError),
    #[error("cannot store the plan: {0}")]
    Db(#[from] DbError),
}

impl Coaching {
    /// Runs the pipeline for the active session. Model calls are awaited; memory and SQLite
    /// run on the blocking pool. Two calls at once are independent: each stores its own plan.
    pub async fn run_coaching_pipeline(
        self: &Arc<Coaching>,
        input: PipelineInput,
    ) -> Result<PipelineOutput, PipelineError> {
        let session = self.active_session().ok_or(PipelineError::NoActiveSession)?;
        self.broadcast(ServerMessage::notice(MessageKind::Info, "Turning Claude Code's plan into phases for you…"));
        let core = self.clone();
        let query = input.issue_summary.clone();
        let (stages, memories) = blocking(move || {
            let stages = dreyfus_summary(&core);
            let memories = core.memory().query_memories(&query, Some(MEMORIES), None);
            (stages, memories)
        })
        .await;
        let relevant = self.filter_memories(&session.id, &input, memories).await;
        let user_message = coach_agent::assemble_user_message(&input.plan_text, &stages, &relevant);
        let options = CallOptions {
            session_id: Some(&session.id),
            ..CallOptions::new(coach_agent::CALL_TYPE, coach_agent::MODEL, coach_agent::SYSTEM_PROMPT, &user_message)
        };
        let mut coached: CoachAgentResponse = match self.api().call_with_retry(self.db(), &options).await {
            Ok(coached) => coached,
            Err(err) => {
                // Claude Code gets the error as the tool's answer; the learner sees it where
                // the plan would be, with "Ask Claude Code to plan again".
                let message = err.readable("Paige could not turn Claude Code's plan into phases");
                self.broadcast(ServerMessage::CoachingPlanFailed(crate::protocol::PlanFailed {
                    session_id: session.id.clone(),
                    message,
                }));
                return Err(PipelineError::Coach(err));
            }
        };
        coached.memory_connection = memory_connection(coached.memory_connection.take(), &relevant);
        let core = self.clone();
        let (session_id, plan_text) = (session.id.clone(), input.plan_text.clone());
        let phases = coached.phases.clone();
        let (plan, stored) = blocking(move || {
            let rows = faded(&core, to_rows(&phases));
            let created = core.db().create_plan_with_phases(&session_id, &plan_text, rows)?;
            // What the phases' files hold now: each phase's comprehension check asks about
            // the learner's change from here.
            let phases: Vec<_> = created.1.iter().map(|(phase, _)| phase.clone()).collect();
            core.learning().keep_baselines(&phases);
            Ok::<_, crate::db::DbError>(created)
        })
        .await?;
        let summaries: Vec<PhaseSummary> = stored.iter().map(|(phase, _)| summary(phase)).collect();
        let difficulty = serde_json::to_value(coached.estimated_difficulty)
            .ok()
            .and_then(|value| value.as_str().map(str::to_owned))
            .unwrap_or_default();
        self.log_action(
            ActionType::CoachingPipeline,
            serde_json::json!({
                "planId": plan.id,
                "phaseCount": stored.len(),
                "memoriesUsed": relevant.len(),
                "issueNumber": input.issue_number,
            }),
        );
        // Every UI is shown it as `coaching:plan_ready` (`Event::into_ui_message`).
        let shown = PlanReady {
            plan_id: plan.id.clone(),
            phases: summaries,
            memory_connection: coached.memory_connection.clone(),
            estimated_difficulty: difficulty.clone(),
        };
        self.ctx().publish(crate::event::Domain::PlanReady { session_id: session.id.clone(), plan: shown });
        if let Some((first, hints)) = stored.first() {
            self.show_phase_hints(first, hints);
        }
        Ok(PipelineOutput {
            plan_id: plan.id,
            phases: stored
                .iter()
                .map(|(phase, _)| PipelinePhase {
                    number: phase.number,
                    title: phase.title.clone(),
                    description: phase.description.clone(),
                    hint_level: phase.hint_level,
                })
                .collect(),
            memory_connection: coached.memory_connection,
            estimated_difficulty: difficulty,
        })
    }

    /// Haiku keeps the memories that matter for this issue; none when there are none to
    /// filter or the call fails (D48).
    async fn filter_memories(
        &self,
        session_id: &str,
        input: &PipelineInput,
        memories: Vec<crate::memory::MemoryResult>,
    ) -> Vec<CoachingMemory> {
        if memories.is_empty() {
            return Vec::new();
        }
        let raw: Vec<RawMemory> = memories
            .into_iter()
            .map(|memory| RawMemory {
                content: memory.content,
                metadata: match serde_json::to_value(memory.metadata) {
                    Ok(serde_json::Value::Object(map)) => map,
                    _ => Default::default(),
                },
            })
            .collect();
        let user_message = memory_retrieval_filter::assemble_user_message(&input.issue_summary, &input.plan_text, &raw);
        let options = CallOptions {
            session_id: Some(session_id),
            ..CallOptions::new(
                memory_retrieval_filter::CALL_TYPE,
                memory_retrieval_filter::MODEL,
                memory_retrieval_filter::SYSTEM_PROMPT,
                &user_message,
            )
        };
        match self.api().call::<MemoryRetrievalFilterResponse>(self.db(), &options).await {
            Ok(filtered) => filtered
                .relevant_memories
                .into_iter()
                .map(|m| CoachingMemory {
                    content: m.content,
                    connection: m.connection,
                    use_in_coaching: m.use_in_coaching,
                })
                .collect(),
            Err(err) => {
                tracing::warn!("the memory filter failed; coaching without memories: {err}");
                Vec::new()
            }
        }
    }

    /// A phase's hints in the editor and explorer, as much as its level allows: `none`
    /// shows nothing, `file` the files, `region` and `line` the lines too. A hint naming a
    /// path outside the project is skipped with a warning.
    pub(crate) fn show_phase_hints(&self, phase: &Phase, hints: &[PhaseHint]) {
        if phase.hint_level == HintLevel::None {
            return;
        }
        let files: Vec<FileHint> = hints
            .iter()
            .filter(|hint| hint.span == HintSpan::File)
            .map(|hint| FileHint { path: hint.path.clone(), style: hint.style, directories: None })
            .collect();
        if !files.is_empty()
            && let Err(err) = self.hint_files(files)
        {
            tracing::warn!("phase {} file hints not shown: {err}", phase.number);
        }
        if phase.hint_level == HintLevel::File {
            return;
        }
        for hint in hints {
            let HintSpan::Line { start_line, end_line } = hint.span else { continue };
            let lines = HighlightLines {
                path: hint.path.clone(),
                start: start_line.max(1) as u32,
                end: end_line.max(start_line).max(1) as u32,
                style: hint.style,
                hover_text: hint.hover_text.clone(),
            };
            if let Err(err) = self.highlight_lines(lines) {
                tracing::warn!("phase {} line hint on {} not shown: {err}", phase.number, hint.path);
            }
        }
    }
}

/// The coach's link to an earlier session, kept only when it was given a memory to link to
/// and said something (a blank one is none).
fn memory_connection(connection: Option<String>, given: &[CoachingMemory]) -> Option<String> {
    connection.filter(|text| !given.is_empty() && !text.trim().is_empty())
}

/// The learner's stages for the coach agent: "novice" with no assessment yet, else each
/// skill area with its stage.
fn dreyfus_summary(core: &Coaching) -> String {
    match core.db().dreyfus_assessments() {
        Ok(assessments) if !assessments.is_empty() => {
            assessments.iter().map(|a| format!("{}: {}", a.skill_area, a.stage.as_str())).collect::<Vec<_>>().join(", ")
        }
        Ok(_) => "novice".into(),
        Err(err) => {
            tracing::warn!("cannot read the Dreyfus assessments; assuming novice: {err}");
            "novice".into()
        }
    }
}

pub(crate) fn summary(phase: &Phase) -> PhaseSummary {
    PhaseSummary {
        number: phase.number,
        title: phase.title.clone(),
        description: phase.description.clone(),
        hint_level: phase.hint_level,
        status: phase.status,
        skill_area: phase.skill_area.clone(),
        hint_reason: phase.hint_reason.clone(),
        test_filter: phase.test_filter.clone(),
    }
}

/// Each phase's starting hint level after the learner's history in its skill area
/// (`fading.rs`); a history that cannot be read leaves the coach agent's level.
fn faded(core: &Coaching, mut rows: Vec<(NewPhase, Vec<NewPhaseHint>)>) -> Vec<(NewPhase, Vec<NewPhaseHint>)> {
    for (phase, _) in &mut rows {
        let Some(area) = phase.skill_area.clone() else { continue };
        match core.db().skill_area_history(&area, super::fading::STREAK) {
            Ok(history) => {
                let start = super::fading::starting_level(phase.hint_level, &area, &history);
                phase.hint_level = start.level;
                phase.hint_reason = start.reason;
            }
            Err(err) => tracing::warn!("cannot read the history of {area}; the coach agent's level stands: {err}"),
        }
    }
    rows
}

/// The coach agent's phases as rows to store.
fn to_rows(phases: &[coach_agent::CoachPhase]) -> Vec<(NewPhase, Vec<NewPhaseHint>)> {
    phases
        .iter()
        .map(|phase| {
            let new_phase = NewPhase {
                plan_id: String::new(),
                number: phase.number,
                title: phase.title.clone(),
                description: phase.description.clone(),
                hint_level: level(phase.hint_level),
                expected_files: phase.expected_files.clone(),
                skill_area: phase
                    .skill_area
                    .as_deref()
                    .map(|area| area.trim().to_lowercase())
                    .filter(|area| !area.is_empty()),
                hint_reason: None,
                test_filter: test_filter(phase.test_filter.as_deref()),
            };
            let files = phase.hints.file_hints.iter().map(|hint| NewPhaseHint {
                phase_id: String::new(),
                path: hint.path.clone(),
                span: HintSpan::File,
                style: match hint.style {
                    FileHintStyle::Suggested => HintStyle::Suggested,
                    FileHintStyle::Important => HintStyle::Important,
                    FileHintStyle::Critical => HintStyle::Critical,
                },
                hover_text: None,
            });
            let lines = phase.hints.line_hints.iter().map(|hint| NewPhaseHint {
                phase_id: String::new(),
                path: hint.path.clone(),
                span: HintSpan::Line { start_line: hint.start, end_line: hint.end },
                style: match hint.style {
                    LineHintStyle::Hint => HintStyle::Hint,
                    LineHintStyle::Focus => HintStyle::Focus,
                    LineHintStyle::Warning => HintStyle::Warning,
                },
                hover_text: Some(hint.hover_text.clone()),
            });
            (new_phase, files.chain(lines).collect())
        })
        .collect()
}

/// The coach agent's test filter, trimmed; a blank one, or one too long to be a test's name,
/// is none (the step check then says the phase has no test).
fn test_filter(filter: Option<&str>) -> Option<String> {
    filter.map(str::trim).filter(|f| !f.is_empty() && f.len() <= crate::checks::MAX_FILTER_BYTES).map(str::to_owned)
}

fn level(level: coach_agent::HintLevel) -> HintLevel {
    match level {
        coach_agent::HintLevel::None => HintLevel::None,
        coach_agent::HintLevel::File => HintLevel::File,
        coach_agent::HintLevel::Region => HintLevel::Region,
        coach_agent::HintLevel::Line => HintLevel::Line,
    }
}

/// Runs blocking work (SQLite, memory) on the runtime's blocking pool; a panic there is a
/// bug, re-raised here.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    match tokio::task::spawn_blocking(work).await {
        Ok(value) => value,
        Err(err) => std::panic::resume_unwind(err.into_panic()),
    }
}
