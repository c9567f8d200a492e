//! Time is injected: business logic asks a [`Clock`], never `Utc::now()` directly.

use crate::sync::Locked;
use std::sync::Mutex;

use chrono::{DateTime, Duration, Utc};

/// Where the core gets "now" from. Production uses [`SystemClock`]; tests use [`ManualClock`].
pub trait Clock: Send + Sync + 'static {
    fn now(&self) -> DateTime<Utc>;
}

/// The wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that only moves when told to. For tests of timestamps, ordering and timers.
#[derive(Debug)]
pub struct ManualClock {
    now: Mutex<DateTime<Utc>>,
}

impl ManualClock {
    pub fn new(start: DateTime<Utc>) -> ManualClock {
        ManualClock { now: Mutex::new(start) }
    }

    pub fn advance(&self, by: Duration) {
        let mut now = self.now.locked();
        *now += by;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.now.locked()
    }
}
