//! Everything the core pushes to its adapters, as one closed enum.
//!
//! The server turns `Ui` into WebSocket frames, the Tauri shell into Tauri events;
//! `ActionLogged` feeds in-process subscribers such as the observer.

use serde::Serialize;

use crate::db::ActionEntry;
use crate::protocol::ServerMessage;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", content = "data", rename_all = "snake_case")]
pub enum Event {
    /// A message for every connected UI client.
    Ui(ServerMessage),
    /// A message for one UI client only (e.g. the tree a newly connected UI asked for).
    UiTo { connection: crate::protocol::ConnectionId, message: ServerMessage },
    /// A row was written to the action log.
    ActionLogged(ActionEntry),
    /// The editor's buffer of `path` changed (not an action-log row: the Observer counts them).
    BufferEdited { path: String },
    /// The core is stopping; adapters close their connections.
    ShuttingDown,
}
