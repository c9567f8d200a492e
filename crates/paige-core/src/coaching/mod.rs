//! Coaching (spec Story 9): the pipeline that turns Claude Code's plan into phased, hinted
//! coaching (`pipeline.rs`), and the wrap-up that learns from a finished session
//! (`wrapup.rs`), started by `paige_end_session` or Claude Code's SessionEnd hook
//! or the UI's `session:end` (`session_end.rs`). Model calls go through the one `ApiClient`; memory through `Memory`; both
//! are awaited or run on the blocking pool, never on a UI thread.

pub(crate) mod activity;
mod comprehension;
mod fading;
mod feature;
pub(crate) use crate::github;
mod hints;
mod kickoff;
mod learner;
mod lifecycle;
mod pipeline;
mod record;
mod reviews;
mod session_end;
mod steer;
mod worked_example;
mod wrapup;

pub use activity::{BUFFER_SUMMARY_INTERVAL, SessionError};
pub(crate) use feature::Uses;
pub use feature::{Coaching, CoachingSettings};
pub use learner::ReplanError;
pub use lifecycle::StartRequest;
pub(crate) use lifecycle::current_phase;
pub use pipeline::{PipelineError, PipelineInput, PipelineOutput, PipelinePhase};
pub use session_end::condense;
pub use steer::{AgentError, PhaseView};
pub use wrapup::{MAX_TRANSCRIPT_BYTES, WrapUp, WrapUpError, last_bytes};
