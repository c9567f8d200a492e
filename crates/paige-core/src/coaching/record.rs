//! What a session's wrap-up reads (its timeline, phases and progress events) and what each
//! of its three model calls is told about the session.

use chrono::SecondsFormat;
use serde_json::Value;

use super::wrapup::{MAX_ACTIONS, MAX_EXISTING_GAPS, StoredGaps, topic_key};
use crate::core::Core;
use crate::db::{GapFilter, Phase, PhaseStatus, ProgressEvent, ProgressEventType, Session};
use crate::prompts::memory_summarisation as summary;
use crate::prompts::{dreyfus_assessment as dreyfus, knowledge_gap_extraction as gaps};

impl Core {
    /// The session's timeline, phases and their progress events; what cannot be read is
    /// left out with a warning (the wrap-up still runs).
    pub(super) fn session_record(&self, session_id: &str) -> SessionRecord {
        let or_empty = |what: &str, err: crate::db::DbError| {
            tracing::warn!("wrap-up cannot read the session's {what}: {err}");
        };
        let mut actions = self.db().recent_actions(session_id, MAX_ACTIONS, None).unwrap_or_else(|err| {
            or_empty("action log", err);
            Vec::new()
        });
        actions.reverse();
        let plans = self.db().plans_for_session(session_id).unwrap_or_else(|err| {
            or_empty("plans", err);
            Vec::new()
        });
        let mut phases = Vec::new();
        for plan in plans {
            match self.db().phases_for_plan(&plan.id) {
                Ok(found) => phases.extend(found),
                Err(err) => or_empty("phases", err),
            }
        }
        let mut progress = Vec::new();
        for phase in &phases {
            match self.db().progress_for_phase(&phase.id) {
                Ok(found) => progress.extend(found),
                Err(err) => or_empty("progress events", err),
            }
        }
        SessionRecord { actions, phases, progress }
    }
}

/// What the models are told about the session.
pub(super) struct SessionRecord {
    actions: Vec<crate::db::ActionEntry>,
    phases: Vec<Phase>,
    progress: Vec<ProgressEvent>,
}

impl SessionRecord {
    pub(super) fn completed(&self) -> impl Iterator<Item = &Phase> {
        self.phases.iter().filter(|phase| phase.status == PhaseStatus::Complete)
    }

    pub(super) fn count(&self, kind: ProgressEventType) -> i64 {
        self.progress.iter().filter(|event| event.event_type == kind).count() as i64
    }

    pub(super) fn summary(&self) -> dreyfus::RecentSummary {
        let helped: Vec<&str> = self
            .progress
            .iter()
            .filter(|e| matches!(e.event_type, ProgressEventType::HintUsed | ProgressEventType::HintEscalated))
            .map(|e| e.phase_id.as_str())
            .collect();
        dreyfus::RecentSummary {
            phases_completed: self.completed().count() as i64,
            hints_used: self.count(ProgressEventType::HintUsed),
            independent_completions: self.completed().filter(|phase| !helped.contains(&phase.id.as_str())).count()
                as i64,
        }
    }

    pub(super) fn gap_extraction_message(&self, core: &Core) -> String {
        let actions: Vec<gaps::ActionEntry> = self
            .actions
            .iter()
            .map(|entry| gaps::ActionEntry {
                action_type: entry.action_type.as_str().to_owned(),
                data: entry.data.clone().unwrap_or(Value::Null),
                created_at: entry.created_at.to_rfc3339_opts(SecondsFormat::Millis, true),
            })
            .collect();
        let phases: Vec<gaps::PhaseOutcome> = self
            .phases
            .iter()
            .map(|phase| gaps::PhaseOutcome {
                title: phase.title.clone(),
                status: phase.status.as_str().to_owned(),
                hint_level: phase.hint_level.as_str().to_owned(),
            })
            .collect();
        let existing: Vec<gaps::ExistingGap> = core
            .db()
            .knowledge_gaps(&GapFilter::default())
            .unwrap_or_default()
            .into_iter()
            .take(MAX_EXISTING_GAPS)
            .map(|gap| gaps::ExistingGap { topic: gap.topic, frequency: gap.frequency })
            .collect();
        gaps::assemble_user_message(&actions, &phases, &existing)
    }

    /// The evidence per skill area is coarse until phases name their skill areas: every known
    /// area and every gap topic of this session gets this session's figures.
    pub(super) fn dreyfus_message(&self, core: &Core, found: &StoredGaps) -> String {
        let current = core.db().dreyfus_assessments().unwrap_or_default();
        let sessions = core.db().sessions().map(|all| all.len() as i64).unwrap_or(1);
        let worked_examples = self
            .progress
            .iter()
            .filter(|e| e.event_type == ProgressEventType::HintUsed)
            .filter(|e| e.data.as_ref().is_some_and(|d| d["workedExample"] == true))
            .count();
        let hint_trend = format!(
            "{} hints used ({worked_examples} of them worked examples: the learner asked \"just show me\") \
             and {} escalations over {} phases this session",
            self.count(ProgressEventType::HintUsed),
            self.count(ProgressEventType::HintEscalated),
            self.phases.len()
        );
        let completion_rate =
            if self.phases.is_empty() { 0.0 } else { self.completed().count() as f64 / self.phases.len() as f64 };
        let mut areas: Vec<String> = current.iter().map(|a| a.skill_area.clone()).collect();
        for topic in &found.topics {
            if !areas.iter().any(|area| topic_key(area) == topic_key(&topic.topic)) {
                areas.push(topic.topic.clone());
            }
        }
        let evidence: Vec<dreyfus::SkillEvidence> = areas
            .into_iter()
            .map(|skill_area| dreyfus::SkillEvidence {
                skill_area,
                sessions,
                hint_trend: hint_trend.clone(),
                completion_rate,
            })
            .collect();
        let current: Vec<dreyfus::CurrentAssessment> = current
            .into_iter()
            .map(|a| dreyfus::CurrentAssessment {
                skill_area: a.skill_area,
                stage: a.stage.as_str().to_owned(),
                confidence: a.confidence,
            })
            .collect();
        dreyfus::assemble_user_message(&evidence, &current, &self.summary())
    }

    pub(super) fn summarisation_message(&self, session: &Session, found: &StoredGaps, transcript: &str) -> String {
        let phases: Vec<summary::CompletedPhase> = self
            .completed()
            .map(|phase| summary::CompletedPhase { title: phase.title.clone(), description: phase.description.clone() })
            .collect();
        let issue = session.issue_title.as_deref().unwrap_or("");
        summary::assemble_user_message(transcript, issue, &phases, &found.topics)
    }
}
