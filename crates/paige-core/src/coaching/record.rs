//! What a session's wrap-up reads (its timeline, phases and progress events) and what each
//! of its three model calls is told about the session.

use chrono::SecondsFormat;
use serde_json::Value;

use super::Coaching;
use super::wrapup::{MAX_ACTIONS, MAX_EXISTING_GAPS, StoredGaps, topic_key};
use crate::db::{GapFilter, Phase, PhaseStatus, ProgressEvent, ProgressEventType, Session};
use crate::prompts::memory_summarisation as summary;
use crate::prompts::{dreyfus_assessment as dreyfus, knowledge_gap_extraction as gaps};

impl Coaching {
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

    pub(super) fn gap_extraction_message(&self, core: &Coaching) -> String {
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

    /// The evidence per skill area: an area with phases in this session gets its own phases'
    /// hints, completion, comprehension answers and solutions typed (issue 30); every other
    /// known area and gap topic gets the session's figures, as before phases named areas.
    pub(super) fn dreyfus_message(&self, core: &Coaching, found: &StoredGaps) -> String {
        let current = core.db().dreyfus_assessments().unwrap_or_default();
        let sessions = core.db().sessions().map(|all| all.len() as i64).unwrap_or(1);
        let mut areas: Vec<String> = Vec::new();
        let mut add = |area: &str| {
            if !area.trim().is_empty() && !areas.iter().any(|a| topic_key(a) == topic_key(area)) {
                areas.push(area.trim().to_owned());
            }
        };
        self.phases.iter().filter_map(|p| p.skill_area.as_deref()).for_each(&mut add);
        current.iter().for_each(|a| add(&a.skill_area));
        found.topics.iter().for_each(|t| add(&t.topic));
        let evidence: Vec<dreyfus::SkillEvidence> =
            areas.into_iter().map(|area| self.area_evidence(core, area, sessions)).collect();
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

    /// One area's evidence: from its own phases when the session had some, else the session's.
    fn area_evidence(&self, core: &Coaching, skill_area: String, sessions: i64) -> dreyfus::SkillEvidence {
        let own: Vec<&Phase> = self
            .phases
            .iter()
            .filter(|p| p.skill_area.as_deref().is_some_and(|a| topic_key(a) == topic_key(&skill_area)))
            .collect();
        let phases: Vec<&Phase> = if own.is_empty() { self.phases.iter().collect() } else { own.clone() };
        let ids: Vec<&str> = phases.iter().map(|p| p.id.as_str()).collect();
        let events = || self.progress.iter().filter(|e| ids.contains(&e.phase_id.as_str()));
        let count = |kind: ProgressEventType| events().filter(|e| e.event_type == kind).count();
        let worked_examples = events()
            .filter(|e| e.event_type == ProgressEventType::HintUsed)
            .filter(|e| e.data.as_ref().is_some_and(|d| d["workedExample"] == true))
            .count();
        let scope = if own.is_empty() { "this session" } else { "this area's phases this session" };
        let hint_trend = format!(
            "{} hints used ({worked_examples} of them worked examples: the learner asked \"just show me\") \
             and {} escalations over {} phases ({scope})",
            count(ProgressEventType::HintUsed),
            count(ProgressEventType::HintEscalated),
            phases.len()
        );
        let completed = phases.iter().filter(|p| p.status == PhaseStatus::Complete).count();
        let completion_rate = if phases.is_empty() { 0.0 } else { completed as f64 / phases.len() as f64 };
        let (comprehension, solutions_typed) =
            if own.is_empty() { (None, None) } else { learning_evidence(core, &own) };
        dreyfus::SkillEvidence { skill_area, sessions, hint_trend, completion_rate, comprehension, solutions_typed }
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

/// The comprehension answers and solutions typed of `phases`.
fn learning_evidence(core: &Coaching, phases: &[&Phase]) -> (Option<dreyfus::ComprehensionEvidence>, Option<i64>) {
    let mut evidence = dreyfus::ComprehensionEvidence {
        correct: 0,
        partial: 0,
        incorrect: 0,
        skipped: 0,
        concepts_missed: Vec::new(),
    };
    let mut asked = 0;
    let mut solutions = 0;
    for phase in phases {
        for q in core.db().questions_for_phase(&phase.id).unwrap_or_default() {
            asked += 1;
            match q.grade.as_deref() {
                Some("correct") => evidence.correct += 1,
                Some(grade) => {
                    if grade == "partial" {
                        evidence.partial += 1
                    } else {
                        evidence.incorrect += 1
                    }
                    evidence.concepts_missed.push(q.concept.clone());
                }
                None => evidence.skipped += 1,
            }
        }
        solutions += core.db().solutions_shown_in_phase(&phase.id).unwrap_or(0) as i64;
    }
    ((asked > 0).then_some(evidence), Some(solutions))
}
