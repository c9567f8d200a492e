//! Who is on the other end of the protocol: one connected UI.

use chrono::{DateTime, Utc};

use super::WindowSize;

/// Identifies one connected UI (a window, or a `/ws` socket).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct ConnectionId(pub u64);

/// What a UI told us about itself in `connection:hello`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionMeta {
    pub version: Option<String>,
    pub platform: Option<String>,
    pub window_size: Option<WindowSize>,
    pub connected_at: DateTime<Utc>,
}
