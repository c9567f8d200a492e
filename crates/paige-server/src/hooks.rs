//! `POST /hooks/{event}`: a Claude Code hook payload in, the engine's decision out
//! (`{"decision":"none"|"deny"|"block"|"context", ...}`). `paige hook` turns it into
//! Claude Code's format.

use axum::Json;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use paige_core::governance::{HookEvent, HookInput};

use crate::AppState;
use crate::error::HttpError;

/// How long `paige hook` still waits for the answer (ms), sent with each request.
const ANSWER_WITHIN: &str = "x-paige-answer-within-ms";
/// Taken off that wait for the answer's way back.
const ANSWER_MARGIN: std::time::Duration = std::time::Duration::from_millis(100);

pub(crate) async fn hook(
    State(state): State<AppState>,
    Path(event): Path<String>,
    headers: axum::http::HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let arrived = std::time::Instant::now();
    let Some(event) = HookEvent::parse(&event) else {
        return HttpError::not_found(format!("unknown hook event {event}")).into_response();
    };
    let mut input: HookInput = match paige_core::hook_event::parse_payload(&body) {
        Ok(input) => input,
        Err(err) => return HttpError::bad_request(format!("hook payload is not valid json: {err}")).into_response(),
    };
    // A decision made after `paige hook` stopped waiting reaches no one: the engine must not
    // act on it (a watch window for a call Claude Code never runs).
    let within = headers.get(ANSWER_WITHIN).and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse::<u64>().ok());
    input.answer_by = within.map(|ms| arrived + std::time::Duration::from_millis(ms).saturating_sub(ANSWER_MARGIN));
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
