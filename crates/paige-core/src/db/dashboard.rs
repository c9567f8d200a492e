//! The dashboard's reads (spec Story 12): the stats of a period exactly as the spec's queries,
//! the sessions still active, the katas with their attempts and best level, and the gaps and
//! sessions the two model flows are given. Read-only, one lock for the whole state.

use chrono::{DateTime, Utc};
use rusqlite::{Connection, params};

use super::{Db, DbError, Severity, get_json, ts};

/// The counters of `dashboard:state`'s `stats` for one period (FR-169, FR-170).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PeriodStats {
    pub sessions_completed: u32,
    pub total_coaching_minutes: f64,
    pub issues_worked_on: u32,
    pub knowledge_gaps_identified: u32,
    pub knowledge_gaps_addressed: u32,
    pub hints_used: u32,
    pub api_cost_total: f64,
}

/// A session still `active`, as the dashboard shows it (the live one) or offers it to resume.
#[derive(Debug, Clone, PartialEq)]
pub struct ActiveSessionRow {
    pub id: String,
    pub issue_number: Option<i64>,
    pub issue_title: Option<String>,
    pub started_at: String,
    pub phases_completed: u32,
    pub phases_total: u32,
    /// What coaching it has cost so far, in USD ([`Db::coaching_cost`]).
    pub cost: f64,
}

/// A kata with its gap's topic, the number of attempts and the best level any reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KataRow {
    pub id: String,
    pub title: String,
    pub topic: String,
    pub attempts_count: u32,
    pub best_level: Option<u8>,
    pub constraint_count: u32,
}

/// What `dashboard:state` is made of, read under one lock.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DashboardRows {
    pub stats: PeriodStats,
    pub in_progress: Vec<ActiveSessionRow>,
    pub katas: Vec<KataRow>,
}

/// A gap not yet addressed, for the learning materials (FR-175) and the issue assessment.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenGap {
    pub topic: String,
    pub severity: Severity,
    pub related_concepts: Vec<String>,
    pub frequency: i64,
}

/// A completed session, for the issue assessment's `recent_sessions`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletedSession {
    pub issue_title: Option<String>,
    pub completed_at: String,
}

/// The start of "all" (the spec's "epoch (no filter)"): ISO 8601 text sorts after it.
const EPOCH: &str = "1970-01-01T00:00:00.000Z";

/// Severity, most severe first, as SQL.
const BY_SEVERITY: &str = "CASE severity WHEN 'high' THEN 0 WHEN 'medium' THEN 1 ELSE 2 END";

impl Db {
    /// Stats since `period_start` (`None`: all time), the active sessions and every kata.
    pub fn dashboard_rows(&self, period_start: Option<DateTime<Utc>>) -> Result<DashboardRows, DbError> {
        let start = period_start.map_or_else(|| EPOCH.to_owned(), ts);
        let conn = self.conn();
        let stats = stats(&conn, &start, period_start.is_none())?;
        Ok(DashboardRows { stats, in_progress: in_progress(&conn)?, katas: katas(&conn)? })
    }

    /// Up to `limit` unaddressed gaps, most severe first, then the most frequent (FR-175).
    pub fn unaddressed_gaps(&self, limit: usize) -> Result<Vec<OpenGap>, DbError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT topic, severity, related_concepts, frequency FROM knowledge_gaps WHERE addressed = 0
             ORDER BY {BY_SEVERITY}, frequency DESC, last_encountered_at DESC, rowid LIMIT ?1"
        ))?;
        let rows = stmt
            .query_map([limit as i64], |row| {
                Ok(OpenGap {
                    topic: row.get(0)?,
                    severity: row.get(1)?,
                    related_concepts: get_json(row, 2)?,
                    frequency: row.get(3)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// The `limit` most recently completed sessions, newest first.
    pub fn recently_completed(&self, limit: usize) -> Result<Vec<CompletedSession>, DbError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT issue_title, ended_at FROM sessions WHERE status = 'completed' AND ended_at IS NOT NULL
             ORDER BY ended_at DESC LIMIT ?1",
        )?;
        let rows = stmt
            .query_map([limit as i64], |row| {
                Ok(CompletedSession { issue_title: row.get(0)?, completed_at: row.get(1)? })
            })?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// What coaching `session_id` has cost so far: its model calls but the dashboard's own
    /// (the issue assessment and the learning materials, which the dashboard asks for
    /// whatever the session).
    pub fn coaching_cost(&self, session_id: &str) -> Result<f64, DbError> {
        Ok(self.conn().query_row(
            "SELECT COALESCE(SUM(cost_estimate), 0) FROM api_call_log WHERE session_id = ?1
             AND call_type NOT IN ('issue_assessment', 'learning_materials')",
            [session_id],
            |row| row.get(0),
        )?)
    }

    /// The titles of every kata, for the learning materials' `available_katas`.
    pub fn kata_titles(&self) -> Result<Vec<String>, DbError> {
        let conn = self.conn();
        let mut stmt = conn.prepare("SELECT title FROM kata_specs ORDER BY rowid DESC")?;
        let rows = stmt.query_map([], |row| row.get(0))?.collect::<Result<_, _>>()?;
        Ok(rows)
    }
}

/// The spec's six stats queries (`:periodStart` bound to `start`; `all_time` when it is the
/// epoch), the indexes of migration 09 under them.
fn stats(conn: &Connection, start: &str, all_time: bool) -> Result<PeriodStats, DbError> {
    let count = |sql: &str| -> Result<u32, DbError> {
        let n: Option<i64> = conn.query_row(sql, params![start], |row| row.get(0))?;
        Ok(u32::try_from(n.unwrap_or(0)).unwrap_or(u32::MAX))
    };
    let total = |sql: &str| -> Result<f64, DbError> {
        Ok(conn.query_row(sql, params![start], |row| row.get::<_, Option<f64>>(0))?.unwrap_or(0.0))
    };
    // The spec's first two queries share their WHERE: one pass over the completed sessions.
    let (sessions_completed, total_coaching_minutes): (i64, Option<f64>) = conn.query_row(
        "SELECT COUNT(*), SUM((julianday(ended_at) - julianday(started_at)) * 1440) FROM sessions
         WHERE status = 'completed' AND ended_at >= ?1",
        params![start],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )?;
    let issues_worked_on =
        count("SELECT COUNT(DISTINCT issue_number) FROM sessions WHERE issue_number IS NOT NULL AND started_at >= ?1")?;
    let (identified, addressed): (i64, Option<i64>) = conn.query_row(
        "SELECT COUNT(*), SUM(CASE WHEN addressed = 1 THEN 1 ELSE 0 END) FROM knowledge_gaps
         WHERE last_encountered_at >= ?1",
        params![start],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )?;
    let hints_used = count(if all_time {
        // Every progress event belongs to a phase of a plan of a session (foreign keys,
        // deleted by cascade) and every session starts after the epoch: the spec's joins keep
        // every row, so "all" counts them through the `(event_type, phase_id)` index.
        "SELECT COUNT(*) FROM progress_events WHERE event_type = 'hint_used' AND ?1 IS NOT NULL"
    } else {
        // The spec's query, joined from the period's sessions (CROSS JOIN fixes that order).
        "SELECT COUNT(*) FROM sessions s
         CROSS JOIN plans pl ON pl.session_id = s.id
         CROSS JOIN phases p ON p.plan_id = pl.id
         CROSS JOIN progress_events pe ON pe.phase_id = p.id
         WHERE pe.event_type = 'hint_used' AND s.started_at >= ?1"
    })?;
    let api_cost_total = total("SELECT SUM(cost_estimate) FROM api_call_log WHERE created_at >= ?1")?;
    let small = |n: i64| u32::try_from(n).unwrap_or(u32::MAX);
    Ok(PeriodStats {
        sessions_completed: small(sessions_completed),
        total_coaching_minutes: total_coaching_minutes.unwrap_or(0.0),
        issues_worked_on,
        knowledge_gaps_identified: small(identified),
        knowledge_gaps_addressed: small(addressed.unwrap_or(0)),
        hints_used,
        api_cost_total,
    })
}

fn in_progress(conn: &Connection) -> Result<Vec<ActiveSessionRow>, DbError> {
    // Its latest plan's phases, and the cost of its model calls.
    let mut stmt = conn.prepare(
        "SELECT s.id, s.issue_number, s.issue_title, s.started_at,
                (SELECT COUNT(*) FROM phases p WHERE p.plan_id = (SELECT id FROM plans WHERE session_id = s.id
                    ORDER BY created_at DESC, rowid DESC LIMIT 1) AND p.status = 'complete'),
                (SELECT COUNT(*) FROM phases p WHERE p.plan_id = (SELECT id FROM plans WHERE session_id = s.id
                    ORDER BY created_at DESC, rowid DESC LIMIT 1)),
                (SELECT COALESCE(SUM(cost_estimate), 0) FROM api_call_log a WHERE a.session_id = s.id
                    AND a.call_type NOT IN ('issue_assessment', 'learning_materials'))
         FROM sessions s WHERE s.status = 'active'
         ORDER BY s.started_at DESC, s.rowid DESC",
    )?;
    let rows = stmt
        .query_map([], |row| {
            Ok(ActiveSessionRow {
                id: row.get(0)?,
                issue_number: row.get(1)?,
                issue_title: row.get(2)?,
                started_at: row.get(3)?,
                phases_completed: row.get(4)?,
                phases_total: row.get(5)?,
                cost: row.get(6)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

/// Only the level of an attempt: the rest of it (the code) is skipped, not kept.
#[derive(serde::Deserialize)]
struct Level {
    #[serde(default)]
    level: Option<u8>,
}

/// Every kata, newest first, with its gap's topic; the attempts counted and the best level
/// taken from the `user_attempts` JSON in application code, as the spec says (no attempt
/// with a level: `None`).
fn katas(conn: &Connection) -> Result<Vec<KataRow>, DbError> {
    let mut stmt = conn.prepare(
        "SELECT k.id, k.title, g.topic, k.user_attempts, json_array_length(k.constraints)
         FROM kata_specs k JOIN knowledge_gaps g ON g.id = k.knowledge_gap_id
         ORDER BY k.rowid DESC",
    )?;
    let rows = stmt
        .query_map([], |row| {
            let attempts: Vec<Level> = get_json(row, 3)?;
            Ok(KataRow {
                id: row.get(0)?,
                title: row.get(1)?,
                topic: row.get(2)?,
                attempts_count: u32::try_from(attempts.len()).unwrap_or(u32::MAX),
                best_level: attempts.iter().filter_map(|a| a.level).max(),
                constraint_count: row.get(4)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}
