//! Claude Code's first step (issue 28): when a session starts (or resumes) without a plan,
//! Paige tells Claude Code to explore, plan and call `paige_run_coaching_pipeline` — a model
//! does only what its context says, and an idle Claude Code sends nothing until someone
//! types. The words come from `prompts/coach-kickoff`. In the app they are pasted into the
//! terminal running Claude Code once it is quiet and the intake interview (if one runs) has
//! handed over, as nudges are typed; `paige claude` passes them as Claude Code's first
//! prompt (`/api/session/kickoff`); Claude Code's SessionStart context carries them too.
//! A phase the learner marks done in the panel is typed in the same way
//! (`prompts/coach-kickoff/phase-done.md`), naming the phase that comes next.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::json;

use super::Coaching;
use crate::db::ActionType;
use crate::prompts::coach_kickoff::NextPhase;

/// How long a kickoff waits for a quiet terminal and the end of the interview before it is
/// left to the SessionStart context and the learner.
const WAIT: Duration = Duration::from_secs(30 * 60);

impl Coaching {
    /// What Claude Code should be told now to start the active session: `None` without one,
    /// once it has a plan, or while its intake interview runs.
    pub fn coaching_kickoff(&self) -> Option<String> {
        let (title, task) = self.kickoff_work()?;
        let description = self.active_session().and_then(|s| self.typed_description(&s.id));
        Some(crate::prompts::coach_kickoff::render(&title, description.as_deref(), task.as_deref()))
    }

    /// What is typed into Claude Code for the kickoff: one line the learner can read
    /// (`render_line`); the kickoff itself comes with it as its UserPromptSubmit context
    /// (`governance/coach.rs`). `None` when there is no kickoff.
    pub fn kickoff_line(&self) -> Option<String> {
        let (title, _) = self.kickoff_work()?;
        Some(crate::prompts::coach_kickoff::render_line(&title))
    }

    /// The live session's work title and the interview's task, while it waits for a plan and
    /// no interview runs.
    fn kickoff_work(&self) -> Option<(String, Option<String>)> {
        let session = self.active_session()?;
        if !self.db().plans_for_session(&session.id).ok()?.is_empty() {
            return None;
        }
        let task = match self.intake().progress() {
            Some(None) => return None,
            Some(Some(task)) => Some(task),
            None => None,
        };
        let title = match (session.issue_number, session.issue_title.as_deref()) {
            (Some(n), Some(t)) => format!("Issue #{n}: {t}"),
            (Some(n), None) => format!("Issue #{n}"),
            (None, Some(t)) => t.to_owned(),
            (None, None) => "(no title)".to_owned(),
        };
        Some((title, task))
    }

    /// The kickoff line for a Claude Code that starts with it as its first prompt (`paige
    /// claude` asks as it starts), kept as Paige's delivery: its UserPromptSubmit is not the
    /// learner's, and brings the kickoff as context.
    pub fn kickoff_for_claude_code(&self) -> Option<String> {
        let text = self.kickoff_line()?;
        // Offered (or about to be) to a `paige claude`? This one starts with it: not twice.
        self.terminals().started_with(self.kickoff_generation().load(Ordering::SeqCst));
        let session = self.active_session().map(|s| s.id);
        if let Err(err) = self.db().record_delivery(session.as_deref(), "kickoff", &text) {
            tracing::warn!("cannot keep that Paige gave the kickoff: {err}");
        }
        Some(text)
    }

    /// Pastes the kickoff into Claude Code's terminal once it is quiet, the interview (if
    /// any) has handed over and still no plan came; given up after `WAIT`, at shutdown, or
    /// when the session changes. Without a terminal running Claude Code (the browser UI)
    /// nothing is typed: `paige claude` asks for the kickoff when it starts.
    pub(crate) fn deliver_kickoff(self: &Arc<Self>) {
        self.type_into_claude_code("kickoff", |core, session| match core.kickoff_line() {
            Some(text) => Delivery::Type(text),
            // No kickoff: a plan came (done), or the interview still runs (wait).
            None if core.db().plans_for_session(session).is_ok_and(|plans| !plans.is_empty()) => Delivery::Drop,
            None => Delivery::Wait,
        });
    }

    /// Tells Claude Code that the learner marked phase `done` done in the panel, and which
    /// phase is next: idle at its prompt, it would not hear of it until the learner typed.
    pub(crate) fn deliver_phase_done(self: &Arc<Self>, done: i64, next: Option<&crate::db::Phase>) {
        let next = next.map(|p| NextPhase { number: p.number, title: &p.title, description: &p.description });
        let text = crate::prompts::coach_kickoff::render_phase_done(done, next);
        self.type_into_claude_code("phase_done", move |_, _| Delivery::Type(text.clone()));
    }

    /// Pastes what `text` gives into the terminal running Claude Code once it is quiet and
    /// the learner is not mid-line, then logs it as a coaching message of `kind`. Given up
    /// after `WAIT`, at shutdown, when the session changes, or when a newer delivery comes
    /// (only the latest is ever typed).
    fn type_into_claude_code(
        self: &Arc<Self>,
        kind: &'static str,
        text: impl Fn(&Coaching, &str) -> Delivery + Send + 'static,
    ) {
        let Some(session) = self.active_session() else { return };
        let (core, cancel) = (self.clone(), self.shutdown_token());
        let (quiet, poll) = (self.config().limits.observer.quiet_output, self.config().limits.delivery_poll);
        let generation = self.kickoff_generation().fetch_add(1, Ordering::SeqCst) + 1;
        self.tasks().spawn(async move {
            let deadline = tokio::time::Instant::now() + WAIT;
            // The UI starts a first session's interview right after the session: give it
            // the moment to begin, so a kickoff waits for its hand-over.
            tokio::select! {
                _ = cancel.cancelled() => return,
                _ = tokio::time::sleep(poll * 2) => {}
            }
            let typed = loop {
                if core.active_session().map(|s| s.id) != Some(session.id.clone())
                    || core.kickoff_generation().load(Ordering::SeqCst) != generation
                    || tokio::time::Instant::now() >= deadline
                {
                    break false;
                }
                // `paige claude` took what was offered (and typed it): done.
                if core.terminals().taken(generation) {
                    break true;
                }
                match core.nudge_terminal() {
                    // What to type is asked only once Claude Code could take it.
                    Some(terminal) if terminal.ready_for_nudge(quiet) => match text(&core, &session.id) {
                        Delivery::Drop => break false,
                        Delivery::Wait => {}
                        Delivery::Type(text) => {
                            let typed = terminal.write(&crate::terminal::paste(&text));
                            match typed {
                                Ok(()) => core.delivered(&session.id, kind, &text, "terminal"),
                                Err(err) => tracing::warn!("cannot type the {kind} into Claude Code: {err}"),
                            }
                            break false;
                        }
                    },
                    Some(_) => {}
                    // No terminal of the app's runs Claude Code: one `paige claude` started in the
                    // learner's own terminal may take it (`claim_delivery`), also when it started
                    // before the session.
                    None => match text(&core, &session.id) {
                        Delivery::Drop => break false,
                        Delivery::Wait => core.terminals().withdraw(generation),
                        Delivery::Type(text) => core.terminals().offer(generation, kind, text),
                    },
                }
                tokio::select! {
                    _ = cancel.cancelled() => break false,
                    _ = tokio::time::sleep(poll) => {}
                }
            };
            if !typed {
                core.terminals().withdraw(generation);
            }
        });
    }

    /// What `paige claude` types into its Claude Code now (`POST /api/agent/claim`): the
    /// delivery offered and not taken yet — each is given once — kept as Paige's words.
    pub fn claim_delivery(&self) -> Option<(String, String)> {
        let offer = self.terminals().claim()?;
        let session = self.active_session()?;
        self.delivered(&session.id, offer.kind, &offer.text, "paige claude");
        Some((offer.kind.to_owned(), offer.text))
    }

    /// Keeps that Paige typed `text` (a `kind`) into Claude Code `via` a terminal: Paige's
    /// words, never the learner's (issue 40); logged as a coaching message.
    fn delivered(&self, session: &str, kind: &str, text: &str, via: &str) {
        if let Err(err) = self.db().record_delivery(Some(session), kind, text) {
            tracing::warn!("cannot keep that Paige typed the {kind}: {err}");
        }
        self.log_action(ActionType::CoachingMessage, json!({ "kind": kind, "via": via }));
    }
}

/// What a waiting delivery does when Claude Code could take it.
enum Delivery {
    Type(String),
    /// Not yet (the interview still runs): look again.
    Wait,
    /// No longer needed.
    Drop,
}
