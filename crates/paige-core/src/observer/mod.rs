//! The Observer (spec Story 10): one per live coaching session, watching the event bus,
//! deciding with a Haiku triage call whether Paige should nudge, and delivering the nudge.

/// The live session's Observer, if any.
#[derive(Default)]
pub(crate) struct Observers {}
