//! `export`: the database's learning history, row by row, through a [`Writer`] (the line
//! types are in `record/mod.rs`). Each row becomes its line as it is read: a record of any
//! size is written with one session in memory.

use std::io::{BufWriter, Write};

use chrono::{DateTime, Utc};
use ed25519_dalek::SigningKey;
use serde::Serialize;

use super::RecordError;
use super::writer::Writer;
use crate::db::{
    Db, HintLevel, PhaseStatus, RecordKata, RecordPhase, RecordQuestion, RecordReview, RecordRow, RecordSession,
    RecordSolution, RelianceCounts, SessionStatus, iso,
};

/// What [`export`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportSummary {
    /// Every line, the header and the signature included.
    pub lines: u64,
    pub sessions: u64,
    pub bytes: u64,
    /// The signing key (hex), to pin.
    pub public_key: String,
}

/// Writes the learning record of what happened since `since` (all time when `None`) to
/// `out`, signed by `key`; `now` is its `exportedAt`. With no sessions the record is still
/// valid: a header, the reliance line and the signature.
pub fn export(
    db: &Db,
    key: &SigningKey,
    since: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
    out: &mut impl Write,
) -> Result<ExportSummary, RecordError> {
    let mut writer = Writer::new(BufWriter::with_capacity(64 << 10, out), key, now, since)?;
    let mut sessions = 0;
    db.each_record_row(since, |row| -> Result<(), RecordError> {
        match row {
            RecordRow::Session(session) => {
                sessions += 1;
                writer.push(&SessionLine::from(&session))
            }
            RecordRow::Question(question) => writer.push(&QuestionLine::from(&question)),
            RecordRow::Kata(kata) => push_kata(&mut writer, &kata),
            RecordRow::Review(review) => writer.push(&ReviewLine::from(&review)),
            RecordRow::Reliance(counts) => writer.push(&reliance(since, now, &counts)),
            RecordRow::Solution(solution) => writer.push(&SolutionLine::from(&solution)),
        }
    })?;
    let (buffered, written) = writer.finish()?;
    buffered.into_inner().map_err(|err| RecordError::Write(err.into_error()))?;
    Ok(ExportSummary { lines: written.lines, sessions, bytes: written.bytes, public_key: written.public_key })
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SessionLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    id: &'a str,
    issue_number: Option<i64>,
    issue_title: Option<&'a str>,
    status: SessionStatus,
    started_at: &'a str,
    ended_at: Option<&'a str>,
    phases: Vec<PhaseLine<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhaseLine<'a> {
    plan: u32,
    number: i64,
    title: &'a str,
    skill_area: Option<&'a str>,
    status: PhaseStatus,
    hint_level: HintLevel,
    completed_at: Option<&'a str>,
}

impl<'a> From<&'a RecordSession> for SessionLine<'a> {
    fn from(s: &'a RecordSession) -> SessionLine<'a> {
        SessionLine {
            kind: "session",
            id: &s.id,
            issue_number: s.issue_number,
            issue_title: s.issue_title.as_deref(),
            status: s.status,
            started_at: &s.started_at,
            ended_at: s.ended_at.as_deref(),
            phases: s.phases.iter().map(PhaseLine::from).collect(),
        }
    }
}

impl<'a> From<&'a RecordPhase> for PhaseLine<'a> {
    fn from(p: &'a RecordPhase) -> PhaseLine<'a> {
        PhaseLine {
            plan: p.plan,
            number: p.number,
            title: &p.title,
            skill_area: p.skill_area.as_deref(),
            status: p.status,
            hint_level: p.hint_level,
            completed_at: p.completed_at.as_deref(),
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct QuestionLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    session: &'a str,
    phase: Option<i64>,
    skill_area: Option<&'a str>,
    #[serde(rename = "kind")]
    question_kind: &'a str,
    concept: &'a str,
    status: &'a str,
    grade: Option<&'a str>,
    answered_at: Option<&'a str>,
}

impl<'a> From<&'a RecordQuestion> for QuestionLine<'a> {
    fn from(q: &'a RecordQuestion) -> QuestionLine<'a> {
        QuestionLine {
            kind: "comprehension",
            session: &q.session_id,
            phase: q.phase_number,
            skill_area: q.skill_area.as_deref(),
            question_kind: &q.kind,
            concept: &q.concept,
            status: &q.status,
            grade: q.grade.as_deref(),
            answered_at: q.answered_at.as_deref(),
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct KataLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    session: &'a str,
    kata: &'a str,
    topic: &'a str,
    attempt: usize,
    level: Option<u8>,
    passed: Option<bool>,
    made_under: &'a [String],
    unlocked: Vec<&'a str>,
}

/// One line per attempt; `unlocked` holds the constraints the best level so far opened.
fn push_kata(writer: &mut Writer<impl Write>, kata: &RecordKata) -> Result<(), RecordError> {
    let mut best = 0u8;
    for (i, attempt) in kata.attempts.iter().enumerate() {
        best = best.max(attempt.level.unwrap_or(0));
        writer.push(&KataLine {
            kind: "kata_attempt",
            session: &kata.session_id,
            kata: &kata.title,
            topic: &kata.topic,
            attempt: i + 1,
            level: attempt.level,
            passed: attempt.passed,
            made_under: &attempt.constraints,
            unlocked: kata.constraints.iter().filter(|c| c.min_level <= best).map(|c| c.title.as_str()).collect(),
        })?;
    }
    Ok(())
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReviewLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    topic: &'a str,
    #[serde(rename = "kind")]
    item_kind: &'a str,
    skill_area: Option<&'a str>,
    grade: &'a str,
    rating: &'a str,
    scheduled_days: i64,
    reviewed_at: &'a str,
}

impl<'a> From<&'a RecordReview> for ReviewLine<'a> {
    fn from(r: &'a RecordReview) -> ReviewLine<'a> {
        ReviewLine {
            kind: "review",
            topic: &r.topic,
            item_kind: &r.kind,
            skill_area: r.skill_area.as_deref(),
            grade: &r.grade,
            rating: &r.rating,
            scheduled_days: r.scheduled_days,
            reviewed_at: &r.reviewed_at,
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RelianceLine {
    #[serde(rename = "type")]
    kind: &'static str,
    since: Option<String>,
    until: String,
    /// Whose prompts these are: always the learner's (what Paige typed is not counted).
    author: &'static str,
    prompts: u64,
    classes: Classes,
}

/// Prompts per reliance class, named as stored (`RELIANCE_CLASSES`).
#[derive(Serialize)]
struct Classes {
    delegation: u32,
    debugging_help: u32,
    conceptual_question: u32,
    verification: u32,
    other: u32,
}

fn reliance(since: Option<DateTime<Utc>>, now: DateTime<Utc>, counts: &RelianceCounts) -> RelianceLine {
    let [delegation, debugging_help, conceptual_question, verification, other] = *counts;
    RelianceLine {
        kind: "reliance",
        since: since.map(iso),
        until: iso(now),
        author: "learner",
        prompts: counts.iter().map(|&n| u64::from(n)).sum(),
        classes: Classes { delegation, debugging_help, conceptual_question, verification, other },
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SolutionLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    session: Option<&'a str>,
    phase: Option<i64>,
    path: &'a str,
    overlap: f64,
    block_lines: i64,
    created_at: &'a str,
}

impl<'a> From<&'a RecordSolution> for SolutionLine<'a> {
    fn from(s: &'a RecordSolution) -> SolutionLine<'a> {
        SolutionLine {
            kind: "solutions_shown",
            session: s.session_id.as_deref(),
            phase: s.phase_number,
            path: &s.path,
            overlap: s.overlap,
            block_lines: s.block_lines,
            created_at: &s.created_at,
        }
    }
}
