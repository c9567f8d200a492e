//! Integration tests of paige-core: one binary (matklad), real SQLite in temp dirs.

mod api;
mod config;
mod db;
mod prompts;
mod run_info;

use std::sync::Arc;

use chrono::{TimeZone, Utc};
use paige_core::ManualClock;

/// A clock fixed at 2026-11-22 10:00:00 UTC that tests advance by hand.
fn clock() -> Arc<ManualClock> {
    Arc::new(ManualClock::new(Utc.with_ymd_and_hms(2026, 11, 22, 10, 0, 0).single().expect("valid date")))
}
