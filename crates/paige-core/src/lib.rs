//! Paige's core: configuration, state and domain logic, free of Tauri, HTTP and JSON-RPC.
//!
//! Adapters hold a [`Core`] and call plain functions on it; everything the core pushes
//! comes out as one closed [`Event`] enum.

mod agent;
pub mod api;
pub mod buffers;
pub mod checks;
pub mod children;
pub mod clock;
pub mod coaching;
mod coaching_state;
pub mod config;
mod connection_terminals;
mod core;
pub mod ctx;
pub mod dashboard;
pub mod db;
pub mod detector;
pub mod diffs;
mod dispatch;
pub mod event;
pub mod explain;
pub mod files;
pub mod github;
pub mod governance;
pub mod hook_event;
mod hooks;
pub mod intake;
pub mod launch;
pub mod learning;
pub mod limits;
mod live;
pub mod memory;
mod models;
pub mod observer;
pub mod practice;
mod project;
pub mod prompts;
pub mod protocol;
pub mod record;
pub mod review;
pub mod run_info;
pub mod sandbox;
pub mod settings;
mod sync;
pub mod terminal;
mod timed_call;
pub mod token;
pub mod transcript;
pub mod vocab;

pub use crate::core::{Core, CoreError};
pub use agent::{AgentError, BufferView, PhaseView, StateItem};
pub use clock::{Clock, ManualClock, SystemClock};
pub use coaching::{BUFFER_SUMMARY_INTERVAL, Coaching, SessionError};
pub use config::{Config, ConfigError, ConfigOverrides};
pub use event::Event;
pub use limits::Limits;
pub use project::{FileDiff, ProjectError};
