//! Reliance on the AI (issue 30): each prompt the learner types to Claude Code, classified —
//! by the local rules at once (`reliance.rs`), by Haiku in the background only where they
//! cannot tell (a failed call keeps the prompt as `other`, decided by `unsure`) — and kept on
//! this machine with the session and phase it belongs to. Every UI then gets the session's
//! gauge (`learning:signals`), which the Observer also reads: a phase where delegation
//! dominates is a reason for it to look.

use std::sync::Arc;

use super::Learning;
use super::reliance::{self, RelianceClass, Verdict};
use crate::api::CallOptions;
use crate::prompts::reliance_classification::{self as prompt, RelianceClassificationResponse};
use crate::protocol::{LearningSignals, RelianceGauge};

/// The longest prompt kept (characters); a longer one is kept cut.
pub const MAX_KEPT_PROMPT_CHARS: usize = 8_000;

impl Learning {
    /// UserPromptSubmit: classifies and keeps `prompt`. Returns at once; a model call, when
    /// the rules cannot tell, runs in the background.
    pub(crate) fn prompt_submitted(self: &Arc<Self>, prompt: &str) {
        // What Paige typed into Claude Code itself is kept as Paige's, never counted as the
        // learner's, and costs no model call.
        match self.ctx.db().prompt_author(prompt) {
            Ok(crate::db::Author::Learner) => {}
            Ok(crate::db::Author::Paige) => {
                let prompt: String = prompt.chars().take(MAX_KEPT_PROMPT_CHARS).collect();
                let session = self.ctx.active_session().map(|s| s.id);
                let kept = self.ctx.db().record_prompt(
                    session.as_deref(),
                    None,
                    &prompt,
                    RelianceClass::Other.as_str(),
                    "paige",
                    crate::db::Author::Paige,
                );
                if let Err(err) = kept {
                    tracing::warn!("cannot keep Paige's own prompt: {err}");
                }
                return;
            }
            // Whose it is cannot be told: not counted as the learner's either.
            Err(err) => return tracing::warn!("cannot tell whose prompt this is, so it is not counted: {err}"),
        }
        let prompt: String = prompt.chars().take(MAX_KEPT_PROMPT_CHARS).collect();
        let session = self.ctx.active_session();
        let phase = session.as_ref().and_then(|s| self.phase_in_progress(&s.id));
        let (session_id, phase_id, phase_title) =
            (session.map(|s| s.id), phase.as_ref().map(|p| p.id.clone()), phase.map(|p| p.title));
        match reliance::classify(&prompt) {
            Verdict::Rule { class, rule } => self.keep_prompt(session_id, phase_id, &prompt, class, rule),
            Verdict::Unsure => {
                let learning = self.clone();
                let cancel = self.ctx.shutdown_token();
                self.ctx.tasks().spawn(async move {
                    let asked = tokio::select! {
                        _ = cancel.cancelled() => return,
                        asked = learning.ask_model(session_id.as_deref(), &prompt, phase_title.as_deref()) => asked,
                    };
                    let (class, by) = match asked {
                        Ok(class) => (class, "model"),
                        Err(err) => {
                            tracing::warn!("cannot classify a prompt; kept as other: {err}");
                            (RelianceClass::Other, "unsure")
                        }
                    };
                    learning.keep_prompt(session_id, phase_id, &prompt, class, by);
                });
            }
        }
    }

    async fn ask_model(
        &self,
        session_id: Option<&str>,
        prompt_text: &str,
        phase_title: Option<&str>,
    ) -> Result<RelianceClass, crate::api::ApiError> {
        let message = prompt::assemble_user_message(prompt_text, phase_title);
        let options = CallOptions {
            session_id,
            ..CallOptions::new(prompt::CALL_TYPE, prompt::MODEL, prompt::SYSTEM_PROMPT, &message)
        };
        let answer: RelianceClassificationResponse = self.ctx.api().call(self.ctx.db(), &options).await?;
        Ok(answer.class)
    }

    fn keep_prompt(
        &self,
        session_id: Option<String>,
        phase_id: Option<String>,
        prompt: &str,
        class: RelianceClass,
        by: &str,
    ) {
        let db = self.ctx.db();
        let author = crate::db::Author::Learner;
        if let Err(err) =
            db.record_prompt(session_id.as_deref(), phase_id.as_deref(), prompt, class.as_str(), by, author)
        {
            tracing::warn!("cannot keep the learner's prompt: {err}");
            return;
        }
        tracing::debug!(class = class.as_str(), by, "learner prompt classified");
        if let Some(session_id) = session_id {
            // Every UI is shown it as `learning:signals` (`Event::into_ui_message`).
            self.ctx.publish(crate::event::Domain::RelianceChanged(self.signals(&session_id)));
        }
    }

    /// The session's gauge, its solutions shown then typed, and the phase in progress's gauge.
    pub fn signals(&self, session_id: &str) -> LearningSignals {
        let db = self.ctx.db();
        let counts = db.reliance_counts(session_id).unwrap_or_else(|err| {
            tracing::warn!("cannot count the session's prompts: {err}");
            [0; 5]
        });
        let phase = self
            .phase_in_progress(session_id)
            .and_then(|p| db.phase_reliance_counts(&p.id).ok().map(|c| (p.number, RelianceGauge::of(c))));
        LearningSignals {
            session_id: session_id.to_owned(),
            reliance: RelianceGauge::of(counts),
            solutions_shown: db.solutions_shown(None, Some(session_id)).unwrap_or(0),
            phase: phase.map(|(number, _)| number),
            phase_reliance: phase.map(|(_, gauge)| gauge),
        }
    }

    /// The active phase of the session's latest plan, else its first pending one.
    pub(super) fn phase_in_progress(&self, session_id: &str) -> Option<crate::db::Phase> {
        let db = self.ctx.db();
        let plan = db.current_plan(session_id).ok().flatten()?;
        let phases = db.phases_for_plan(&plan.id).ok()?;
        crate::db::current_phase(&phases).cloned()
    }
}
