//! `/api/session`: start, end and read the coaching session without a UI (headless flows,
//! `paige session ...`). Token-protected like every private route.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use paige_core::SessionError;
use paige_core::db::SessionStatus;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::AppState;
use crate::error::HttpError;

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StartRequest {
    #[serde(default)]
    issue_number: Option<i64>,
    /// The issue's title, or what the work is without an issue (`title` also accepted).
    #[serde(default, alias = "title")]
    issue_title: Option<String>,
    #[serde(default)]
    description: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct EndRequest {
    #[serde(default)]
    status: Option<SessionStatus>,
}

pub(crate) async fn show(State(state): State<AppState>) -> Json<serde_json::Value> {
    Json(json!({ "session": state.core.active_session() }))
}

/// What Claude Code should be told first (`paige claude` asks as it starts): the kickoff of
/// an active session that has no plan yet, else null.
pub(crate) async fn kickoff(State(state): State<AppState>) -> Response {
    let core = state.core.clone();
    match crate::blocking::run(move || core.coaching().kickoff_for_claude_code()).await {
        Some(kickoff) => Json(json!({ "kickoff": kickoff })).into_response(),
        None => internal(),
    }
}

/// What `paige claude` types into its Claude Code now, once it is quiet: a delivery the app
/// had no terminal to type into (the kickoff of a session started after Claude Code, a
/// phase-done note), each given once; else `text: null`.
pub(crate) async fn claim(State(state): State<AppState>) -> Response {
    let core = state.core.clone();
    match crate::blocking::run(move || core.coaching().claim_delivery()).await {
        Some(Some((kind, text))) => Json(json!({ "kind": kind, "text": text })).into_response(),
        Some(None) => Json(json!({ "text": null })).into_response(),
        None => internal(),
    }
}

/// `paige claude --intent`'s launch asks whether to start Claude Code again in another
/// intent's view (`{"launch": id, "quiet": bool}` → `{"intent": id | null}`): once the turn
/// that selected it ended, or once Claude Code is quiet (`quiet` left out: quiet).
pub(crate) async fn relaunch(State(state): State<AppState>, Json(body): Json<Value>) -> Response {
    let launch = body.get("launch").and_then(Value::as_str).unwrap_or_default().to_owned();
    if launch.is_empty() {
        return HttpError::bad_request("name the launch: {\"launch\": \"…\"}").into_response();
    }
    let quiet = body.get("quiet").and_then(Value::as_bool).unwrap_or(true);
    Json(json!({ "intent": state.core.take_relaunch(&launch, quiet) })).into_response()
}

pub(crate) async fn start(State(state): State<AppState>, body: Option<Json<StartRequest>>) -> Response {
    let request = body.map(|Json(b)| b).unwrap_or_default();
    // `gh`, SQLite and the project tree walk: on a blocking thread. An active session is set
    // aside (wrapped up in the background), as a UI's start does.
    let core = state.core.clone();
    let request = paige_core::coaching::StartRequest {
        issue_number: request.issue_number,
        title: request.issue_title,
        description: request.description,
    };
    let started = crate::blocking::run(move || core.coaching().begin_coaching_session(request));
    let Some(started) = started.await else { return internal() };
    match started {
        Ok(session) => (StatusCode::CREATED, Json(json!({ "session": session }))).into_response(),
        Err(err @ SessionError::AlreadyActive(_)) => HttpError::conflict(err.to_string()).into_response(),
        Err(err @ SessionError::NothingToWorkOn) => HttpError::bad_request(err.to_string()).into_response(),
        Err(err) => HttpError::internal(format!("cannot start the session: {err}")).into_response(),
    }
}

pub(crate) async fn end(State(state): State<AppState>, body: Option<Json<EndRequest>>) -> Response {
    let status = body.and_then(|Json(b)| b.status).unwrap_or(SessionStatus::Completed);
    if status == SessionStatus::Active {
        return HttpError::bad_request("status must be completed or abandoned").into_response();
    }
    let core = state.core.clone();
    let Some(ended) = crate::blocking::run(move || core.coaching().end_session(status)).await else {
        return internal();
    };
    match ended {
        Ok(session) => Json(json!({ "session": session })).into_response(),
        Err(err @ SessionError::NoActiveSession) => HttpError::not_found(err.to_string()).into_response(),
        Err(err) => HttpError::internal(format!("cannot end the session: {err}")).into_response(),
    }
}

fn internal() -> Response {
    HttpError::internal("the session request failed").into_response()
}
