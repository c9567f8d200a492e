//! The UI protocol (spec Story 5): typed messages, the JSON envelope, and the dispatcher.
//! The same catalog travels over Tauri IPC and over the server's `/ws`.

#[cfg(feature = "ts")]
pub mod bindings;
mod client;
mod dispatch;
mod envelope;
mod server;

pub use client::*;
pub use dispatch::{ConnectionId, ConnectionMeta};
pub use envelope::{Decoded, decode, encode};
pub use server::*;
