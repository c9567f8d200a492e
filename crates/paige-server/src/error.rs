//! The one error shape of every HTTP route (`/api`, `/hooks`, the guard, the fallback):
//! `{"error": "<message>", "code": "<code>"}` with its status. MCP errors travel inside
//! JSON-RPC instead, as the protocol wants.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HttpError {
    status: StatusCode,
    code: &'static str,
    message: String,
}

impl HttpError {
    pub(crate) fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> HttpError {
        HttpError { status, code, message: message.into() }
    }

    pub(crate) fn forbidden(message: impl Into<String>) -> HttpError {
        HttpError::new(StatusCode::FORBIDDEN, "forbidden", message)
    }

    pub(crate) fn unauthorized(message: impl Into<String>) -> HttpError {
        HttpError::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
    }

    pub(crate) fn not_found(message: impl Into<String>) -> HttpError {
        HttpError::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    pub(crate) fn bad_request(message: impl Into<String>) -> HttpError {
        HttpError::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    pub(crate) fn conflict(message: impl Into<String>) -> HttpError {
        HttpError::new(StatusCode::CONFLICT, "conflict", message)
    }

    /// Logged here, so every internal failure leaves a line whatever the route.
    pub(crate) fn internal(message: impl Into<String>) -> HttpError {
        let message = message.into();
        tracing::error!("request failed: {message}");
        HttpError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }
}

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        (self.status, Json(json!({ "error": self.message, "code": self.code }))).into_response()
    }
}
