//! `POST /api/token/rotate` (UI token only): new tokens, kept in `DATA_DIR/tokens.json` and
//! in force at once; the run file is rewritten so local tools find them. What held the old
//! ones — a browser tab, a running Claude Code — is refused from then on and told how to
//! recover. With `PAIGE_TOKEN` set, that stays the UI token and only the agent token changes.

use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::error::HttpError;
use crate::{AppState, Tokens};

pub(crate) async fn rotate(State(state): State<AppState>) -> Response {
    let core = state.core.clone();
    let rotated = crate::blocking::run(move || -> anyhow::Result<_> {
        let data_dir = &core.config().data_dir;
        let mut fresh = paige_core::token::rotate(data_dir, core.config().agent_jail.ui_token_kept())?;
        if let Some(token) = core.config().token.clone() {
            fresh.ui = token.into();
        }
        // The run file names them for `paige session`, `paige claude` and the hooks (the UI
        // token only where it named one: where an OS layer hides it from Claude Code).
        if let Some(mut info) = paige_core::run_info::read(data_dir)?
            && info.pid == std::process::id()
        {
            info.token = info.token.is_some().then(|| fresh.ui.clone());
            info.agent_token = Some(fresh.agent.clone());
            info.local_token = Some(fresh.local.clone());
            paige_core::run_info::write(data_dir, &info)?;
        }
        Ok(fresh)
    })
    .await;
    match rotated {
        Some(Ok(fresh)) => {
            state.replace_tokens(Tokens::from(&fresh));
            tracing::info!("tokens rotated: clients holding the old ones are refused from now on");
            Json(json!({ "token": fresh.ui.expose() })).into_response()
        }
        Some(Err(err)) => HttpError::internal(format!("cannot rotate the tokens: {err:#}")).into_response(),
        None => HttpError::internal("cannot rotate the tokens: the worker failed").into_response(),
    }
}
