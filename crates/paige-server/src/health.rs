use axum::Json;
use axum::extract::State;
use serde_json::{Value, json};

use crate::AppState;

/// `GET /health` → `{"status":"ok","uptime":<seconds>}`.
pub(crate) async fn health(State(state): State<AppState>) -> Json<Value> {
    let uptime = state.core.uptime().num_milliseconds() as f64 / 1000.0;
    Json(json!({ "status": "ok", "uptime": uptime }))
}
