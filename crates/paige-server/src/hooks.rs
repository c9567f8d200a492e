//! `POST /hooks/{event}`: a Claude Code hook payload in, the engine's decision out
//! (`{"decision":"none"|"deny"|"block"|"context", ...}`). `paige hook` turns it into
//! Claude Code's format.

use axum::Json;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use paige_core::governance::{HookEvent, HookInput};

use crate::AppState;
use crate::error::HttpError;

pub(crate) async fn hook(
    State(state): State<AppState>,
    Path(event): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    let Some(event) = HookEvent::parse(&event) else {
        return HttpError::not_found(format!("unknown hook event {event}")).into_response();
    };
    let input: HookInput = match serde_json::from_slice(&body) {
        Ok(input) => input,
        Err(err) => return HttpError::bad_request(format!("hook payload is not valid json: {err}")).into_response(),
    };
    let core = state.core.clone();
    // The engine does blocking file and SQLite I/O; a SessionEnd also starts the coaching
    // session's wrap-up, in the background (the hook answers at once).
    let ran = crate::blocking::run(move || {
        let decision = core.handle_hook(event, &input);
        core.after_hook(event, &input);
        decision
    });
    match ran.await {
        Some(decision) => Json(decision).into_response(),
        None => HttpError::internal("hook engine failed").into_response(),
    }
}
