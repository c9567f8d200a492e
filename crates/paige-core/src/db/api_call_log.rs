use chrono::{DateTime, Utc};
use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::{Db, DbError, get_ts, new_id, ts};

/// One Claude API call, successful or not (a failure has `latency_ms = -1`, zero tokens and cost).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApiCall {
    pub id: String,
    pub session_id: Option<String>,
    pub call_type: String,
    pub model: String,
    pub input_hash: String,
    pub latency_ms: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cost_estimate: f64,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewApiCall {
    pub session_id: Option<String>,
    pub call_type: String,
    pub model: String,
    pub input_hash: String,
    pub latency_ms: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cost_estimate: f64,
}

/// Spend and speed of model calls (Scenario 4.6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BudgetSummary {
    pub calls: i64,
    pub failed_calls: i64,
    pub total_cost: f64,
    /// Over successful calls only; `None` when there are none.
    pub average_latency_ms: Option<f64>,
    pub by_model: Vec<ModelCost>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelCost {
    pub model: String,
    pub calls: i64,
    pub cost: f64,
}

const COLUMNS: &str =
    "id, session_id, call_type, model, input_hash, latency_ms, input_tokens, output_tokens, cost_estimate, created_at";

fn from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<ApiCall> {
    Ok(ApiCall {
        id: row.get(0)?,
        session_id: row.get(1)?,
        call_type: row.get(2)?,
        model: row.get(3)?,
        input_hash: row.get(4)?,
        latency_ms: row.get(5)?,
        input_tokens: row.get(6)?,
        output_tokens: row.get(7)?,
        cost_estimate: row.get(8)?,
        created_at: get_ts(row, 9)?,
    })
}

impl Db {
    pub fn log_api_call(&self, new: NewApiCall) -> Result<ApiCall, DbError> {
        let call = ApiCall {
            id: new_id(),
            session_id: new.session_id,
            call_type: new.call_type,
            model: new.model,
            input_hash: new.input_hash,
            latency_ms: new.latency_ms,
            input_tokens: new.input_tokens,
            output_tokens: new.output_tokens,
            cost_estimate: new.cost_estimate,
            created_at: self.now(),
        };
        let parent = call.session_id.clone().unwrap_or_default();
        self.conn()
            .execute(
                &format!("INSERT INTO api_call_log ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"),
                params![
                    call.id,
                    call.session_id,
                    call.call_type,
                    call.model,
                    call.input_hash,
                    call.latency_ms,
                    call.input_tokens,
                    call.output_tokens,
                    call.cost_estimate,
                    ts(call.created_at)
                ],
            )
            .map_err(DbError::on_insert("api call", "session", &parent))?;
        Ok(call)
    }

    /// A session's API calls, oldest first.
    pub fn api_calls_for_session(&self, session_id: &str) -> Result<Vec<ApiCall>, DbError> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare(&format!("SELECT {COLUMNS} FROM api_call_log WHERE session_id = ?1 ORDER BY created_at, rowid"))?;
        let rows = stmt.query_map([session_id], from_row)?.collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// Cost and latency over one session's calls, or over all calls when `session_id` is `None`.
    pub fn budget_summary(&self, session_id: Option<&str>) -> Result<BudgetSummary, DbError> {
        let conn = self.conn();
        let (calls, failed_calls, total_cost, average_latency_ms) = conn.query_row(
            "SELECT count(*), count(*) FILTER (WHERE latency_ms < 0), coalesce(sum(cost_estimate), 0.0),
                    avg(latency_ms) FILTER (WHERE latency_ms >= 0)
             FROM api_call_log WHERE ?1 IS NULL OR session_id = ?1",
            [session_id],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
        )?;
        let mut stmt = conn.prepare(
            "SELECT model, count(*), coalesce(sum(cost_estimate), 0.0) FROM api_call_log
             WHERE ?1 IS NULL OR session_id = ?1 GROUP BY model ORDER BY model",
        )?;
        let by_model = stmt
            .query_map([session_id], |row| Ok(ModelCost { model: row.get(0)?, calls: row.get(1)?, cost: row.get(2)? }))?
            .collect::<Result<_, _>>()?;
        Ok(BudgetSummary { calls, failed_calls, total_cost, average_latency_ms, by_model })
    }
}
