//! `/api/memory`: what `paige memory add|query|stats` asks the running Paige (token-protected
//! like every private route). Memory blocks (the model, SQLite, ChromaDB): every call runs on
//! the blocking pool.
//!
//! - `POST /api/memory/add` `{memories: [{content, tags?, importance?}], sessionId?, project?}`
//!   → `{added}`; ids `mem_{sessionId}_{i}`, or `mem_cli_{uuid}` without a session.
//! - `POST /api/memory/query` `{queryText, nResults?, project?}` → `{results, available}`;
//!   no `project`: every project's memories.
//! - `GET /api/memory/stats` → `{status, stats}` (`stats` null while memory is unavailable).

use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use paige_core::memory::{MemoryInput, Origin, ProjectName};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::json;

use crate::AppState;
use crate::error::HttpError;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct AddRequest {
    memories: Vec<MemoryInput>,
    #[serde(default)]
    session_id: Option<String>,
    /// The project to file them under; the running Paige's own when absent.
    #[serde(default)]
    project: Option<ProjectName>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct QueryRequest {
    query_text: String,
    #[serde(default)]
    n_results: Option<usize>,
    #[serde(default)]
    project: Option<String>,
}

fn parse<T: DeserializeOwned>(body: &[u8]) -> Result<T, HttpError> {
    serde_json::from_slice(body).map_err(|err| HttpError::bad_request(format!("invalid memory request: {err}")))
}

pub(crate) async fn add(State(state): State<AppState>, body: axum::body::Bytes) -> Response {
    let request: AddRequest = match parse(&body) {
        Ok(request) => request,
        Err(err) => return err.into_response(),
    };
    if let Some(empty) = request.memories.iter().position(|memory| memory.content.trim().is_empty()) {
        return HttpError::bad_request(format!("memory {empty} has no content")).into_response();
    }
    let core = state.core.clone();
    let added = crate::blocking::run(move || {
        let origin = request.session_id.map_or(Origin::Cli, Origin::Session);
        let project = request.project.unwrap_or_else(|| core.project_name());
        core.memory().add_memories(&request.memories, &origin, &project, core.now())
    });
    match added.await {
        Some(added) => Json(added).into_response(),
        None => HttpError::internal("adding memories failed").into_response(),
    }
}

pub(crate) async fn query(State(state): State<AppState>, body: axum::body::Bytes) -> Response {
    let request: QueryRequest = match parse(&body) {
        Ok(request) => request,
        Err(err) => return err.into_response(),
    };
    let core = state.core.clone();
    let found = crate::blocking::run(move || {
        let memory = core.memory();
        let results = memory.query_memories(&request.query_text, request.n_results, request.project.as_deref());
        (results, memory.is_available())
    });
    match found.await {
        Some((results, available)) => Json(json!({ "results": results, "available": available })).into_response(),
        None => HttpError::internal("querying memories failed").into_response(),
    }
}

pub(crate) async fn stats(State(state): State<AppState>) -> Response {
    let core = state.core.clone();
    let found = crate::blocking::run(move || {
        let stats = core.memory().stats();
        (core.memory().status(), stats)
    });
    match found.await {
        Some((status, stats)) => Json(json!({ "status": status, "stats": stats })).into_response(),
        None => HttpError::internal("reading memory stats failed").into_response(),
    }
}
