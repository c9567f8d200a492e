//! The hooks' entry points on the façade: Claude Code's hook payloads go to the hook engine
//! (`governance/`), and after it to coaching (`coaching/`), each a feature object.

use std::sync::Arc;

use crate::core::Core;
use crate::governance::{GovernanceError, HookDecision, HookEvent, HookInput, IntentContext};

impl Core {
    /// The one entry point for every hook (`Governance::handle_hook`).
    pub fn handle_hook(&self, event: HookEvent, input: &HookInput) -> HookDecision {
        self.governance().handle_hook(event, input)
    }

    /// After every hook, for coaching (`Coaching::after_hook`): in coach mode the learner's
    /// prompts and Claude Code's replies are learning signals.
    pub fn after_hook(self: &Arc<Core>, event: HookEvent, input: &HookInput) {
        let coach_mode = matches!(self.governance().governance_enabled(), Ok(false));
        self.coaching().after_hook(event, input, coach_mode);
    }

    /// Whether this project is under governance (`Governance::governance_enabled`).
    pub fn governance_enabled(&self) -> Result<bool, GovernanceError> {
        self.governance().governance_enabled()
    }

    /// The intent a `paige claude --intent` launch is to start Claude Code again for, once
    /// the selecting turn ended or its Claude Code is `quiet` (`Governance::take_relaunch`).
    pub fn take_relaunch(&self, launch: &str, quiet: bool) -> Option<String> {
        self.governance().take_relaunch(launch, quiet)
    }

    /// Validates an intent for selection (`Governance::select_active_intent`).
    pub fn select_active_intent(&self, intent_id: &str) -> Result<IntentContext, GovernanceError> {
        self.governance().select_active_intent(intent_id)
    }
}
