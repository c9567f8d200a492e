//! `POST /hooks/{event}`: a Claude Code hook payload in, the engine's decision out
//! (`{"decision":"none"|"deny"|"block"|"context", ...}`). `paige hook` turns it into
//! Claude Code's format.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use paige_core::governance::{HookEvent, HookInput};

use crate::AppState;

pub(crate) async fn hook(
    State(state): State<AppState>,
    Path(event): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    let Some(event) = HookEvent::parse(&event) else {
        return (StatusCode::NOT_FOUND, format!("unknown hook event {event}")).into_response();
    };
    let input: HookInput = match serde_json::from_slice(&body) {
        Ok(input) => input,
        Err(err) => return (StatusCode::BAD_REQUEST, format!("hook payload is not valid json: {err}")).into_response(),
    };
    let core = state.core.clone();
    // The engine does blocking file and SQLite I/O.
    match tokio::task::spawn_blocking(move || core.handle_hook(event, &input)).await {
        Ok(decision) => Json(decision).into_response(),
        Err(err) => {
            tracing::error!("hook engine failed: {err}");
            (StatusCode::INTERNAL_SERVER_ERROR, "hook engine failed").into_response()
        }
    }
}
