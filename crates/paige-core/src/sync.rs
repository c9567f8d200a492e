//! The one poison-recovering lock: a panic while a lock was held leaves state that is still
//! consistent for every use here (each critical section is a few assignments), so Paige goes
//! on with it rather than failing every later caller.

use std::sync::{Mutex, MutexGuard};

/// `mutex.locked()`: the guard, whether or not a holder panicked.
pub trait Locked<T> {
    fn locked(&self) -> MutexGuard<'_, T>;
}

impl<T> Locked<T> for Mutex<T> {
    fn locked(&self) -> MutexGuard<'_, T> {
        self.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
