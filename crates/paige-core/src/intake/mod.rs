//! The intake interview (background-session-guard spec): a short, time-boxed conversation
//! about the learner's past projects in Paige's own chat panel, before a session's coding.
//! `guard.rs` is the pure, event-sourced guard; `invitation.rs` keeps coding invitations out
//! of the interviewer's replies.

pub mod guard;
pub mod invitation;
