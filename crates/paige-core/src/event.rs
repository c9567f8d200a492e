//! Everything the core pushes to its adapters, as one closed enum.
//!
//! The Tauri shell maps each variant to a Tauri event, the server to a WebSocket frame.
//! Variants are added as features land; adapters match exhaustively so none is forgotten.

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", content = "payload")]
pub enum Event {
    /// The core is stopping; adapters close their connections.
    #[serde(rename = "server:shutting_down")]
    ShuttingDown,
}
