//! The live session's step checks: a loop on the event bus that, on a save of one of the
//! phase in progress's expected files, runs the phase's check in the background — under the
//! change detector's window, like Claude Code's Bash (what the tests change among the
//! learner's files is undone) — and records and broadcasts `coaching:step_check`.

use crate::sync::Locked;
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use super::StepChecks;
use super::process::{self, Exit, Ran};
use super::runner::{self, Invocation};
use super::{CheckStatus, PhaseCheck};
use crate::db::{ActionType, Phase};
use crate::detector::{self, Verdict};
use crate::event::Event;
use crate::protocol::{MessageKind, ServerMessage, StepCheck};

impl StepChecks {
    /// Starts `session_id`'s step checks; they stop when `cancel` (the session's token) fires,
    /// and a check still running then is killed and its result discarded.
    pub(crate) fn start(
        self: &Arc<Self>,
        session_id: &str,
        cancel: CancellationToken,
        runtime: &tokio::runtime::Handle,
    ) {
        // Subscribed before the session's first action is logged: no save is missed.
        let events = self.ctx.subscribe();
        let checks = Arc::downgrade(self);
        let session_id = session_id.to_owned();
        let handle = runtime.clone();
        self.ctx.tasks().spawn_on(watch_saves(checks, session_id, events, cancel, handle), runtime);
    }

    /// The phase in progress of `session_id`'s latest plan, if `path` is one of its expected files.
    fn phase_expecting(&self, session_id: &str, path: &str) -> Option<Phase> {
        let plan = self.ctx.db().current_plan(session_id).ok().flatten()?;
        let phases = self.ctx.db().phases_for_plan(&plan.id).ok()?;
        let phase = crate::db::current_phase(&phases)?;
        let same = |expected: &String| self.ctx.root().resolve(expected).is_ok_and(|p| p.rel() == path);
        phase.expected_files.iter().any(same).then(|| phase.clone())
    }

    /// Records and broadcasts a check's state.
    fn announce_check(
        &self,
        phase: &Phase,
        status: CheckStatus,
        summary: String,
        ran: Option<Duration>,
        command: Option<&Invocation>,
    ) -> PhaseCheck {
        let finished_at = (status != CheckStatus::Running).then(|| self.ctx.now());
        let duration_ms = ran.map(|d| d.as_millis() as u64);
        let check = self.state.record(phase, status, summary, finished_at, duration_ms);
        tracing::info!(phase = phase.number, status = status.as_str(), summary = check.summary, "step check");
        let step = StepCheck {
            phase: phase.number,
            status,
            summary: check.summary.clone(),
            consecutive_failures: check.consecutive_failures,
            duration_ms: check.duration_ms,
            command: command.map(Invocation::display),
        };
        // Every UI is shown it as `coaching:step_check` (`Event::into_ui_message`).
        self.ctx.publish(crate::event::Domain::StepChecked(step));
        check
    }

    /// Tells the learner what Paige undid of what the check changed (as for Claude Code's Bash).
    fn report_check_changes(&self, settled: &[detector::Settled], command: &Invocation) {
        let undone: Vec<_> = settled
            .iter()
            .filter(|s| matches!(s.outcome, detector::Outcome::Undone | detector::Outcome::Failed(_)))
            .cloned()
            .collect();
        let why = format!("The step check (`{}`) changed your files; Paige undid it:", command.display());
        let Some(text) = detector::describe(&undone, &why) else { return };
        tracing::warn!("{text}");
        let text = format!("{text}\nEvery replaced version is kept: `paige restore` lists them.");
        self.ctx.broadcast(ServerMessage::notice(MessageKind::Warning, text));
        self.ctx.log_action(
            ActionType::ChangeReverted,
            serde_json::json!({ "changes": undone, "stepCheck": command.display() }),
        );
    }
}

async fn watch_saves(
    checks: Weak<StepChecks>,
    session_id: String,
    mut events: tokio::sync::broadcast::Receiver<Event>,
    cancel: CancellationToken,
    runtime: tokio::runtime::Handle,
) {
    loop {
        let event = tokio::select! {
            _ = cancel.cancelled() => break,
            event = events.recv() => event,
        };
        let entry = match event {
            Ok(Event::ActionLogged(entry))
                if entry.action_type == ActionType::FileSave
                    && entry.session_id.as_deref() == Some(session_id.as_str()) =>
            {
                entry
            }
            Ok(Event::ShuttingDown) | Err(RecvError::Closed) => break,
            Ok(_) => continue,
            Err(RecvError::Lagged(missed)) => {
                tracing::warn!(missed, "the step checks fell behind the event bus; some saves were not seen");
                continue;
            }
        };
        let Some(path) = entry.data.as_ref().and_then(|d| d["path"].as_str()).map(str::to_owned) else { continue };
        let Some(strong) = checks.upgrade() else { break };
        let (lookup, session, saved) = (strong.clone(), session_id.clone(), path.clone());
        // The database off the runtime.
        let phase = match tokio::task::spawn_blocking(move || lookup.phase_expecting(&session, &saved)).await {
            Ok(Some(phase)) => phase,
            _ => continue,
        };
        let check = cancel.child_token();
        let id = strong.state.supersede(check.clone());
        let task = run_check(strong.clone(), phase, path, id, check);
        strong.ctx.tasks().spawn_on(task, &runtime);
    }
    if let Some(checks) = checks.upgrade() {
        // The session is over: a check still running goes with it.
        let running = checks.state.running.locked().take();
        if let Some((_, running)) = running {
            running.cancel();
        }
    }
}

/// Runs `phase`'s check after a save of `saved`; `cancel` fires when a newer save supersedes
/// it or the session ends (its result is then discarded).
async fn run_check(checks: Arc<StepChecks>, phase: Phase, saved: String, id: u64, cancel: CancellationToken) {
    let invocation = match runner::plan(checks.ctx.root(), phase.test_filter.as_deref()) {
        Ok(invocation) => invocation,
        Err(why) => {
            checks.announce_check(&phase, CheckStatus::Error, why.to_string(), None, None);
            checks.state.release(id);
            return;
        }
    };
    checks.announce_check(
        &phase,
        CheckStatus::Running,
        format!("running {}", invocation.display()),
        None,
        Some(&invocation),
    );
    let call_id = format!("step-check-{id}");
    let (c, call, path) = (checks.clone(), call_id.clone(), saved);
    let opened = tokio::task::spawn_blocking(move || -> Result<(), detector::DetectorError> {
        c.detector.watch_begin(&call, false)?;
        // The save that started this is the learner's, whether or not the watcher has
        // reported it yet: a window opened after it must not take it for the check's.
        if let Ok(file) = c.ctx.root().resolve(&path)
            && let Ok(bytes) = crate::files::read_bytes(&file)
        {
            c.detector.note_save(file.rel(), &bytes);
        }
        Ok(())
    })
    .await;
    match opened {
        Ok(Ok(())) => {}
        Ok(Err(err)) => {
            let why = format!("Paige cannot watch this check's file changes, so it did not run: {err}");
            checks.announce_check(&phase, CheckStatus::Error, why, None, Some(&invocation));
            checks.state.release(id);
            return;
        }
        Err(_) => {
            checks.state.release(id);
            return;
        }
    }
    let timeout = checks.timeout;
    let ran = process::run(&invocation, checks.ctx.root().path(), timeout, &cancel, |_| {}).await;
    let (c, call) = (checks.clone(), call_id);
    let verdict = |path: &str| match detector::is_lockfile(path) {
        true => Verdict::Keep("a lockfile builds rewrite"),
        false => Verdict::Undo,
    };
    match tokio::task::spawn_blocking(move || c.detector.watch_end(Some(&call), verdict)).await {
        Ok(Ok(settled)) => checks.report_check_changes(&settled, &invocation),
        Ok(Err(err)) => tracing::warn!("the step check's file changes could not be settled: {err}"),
        Err(_) => {}
    }
    checks.state.release(id);
    if cancel.is_cancelled() {
        tracing::debug!(phase = phase.number, "a step check was superseded or its session ended; result discarded");
        return;
    }
    let filter = phase.test_filter.as_deref().unwrap_or_default().trim().to_owned();
    let (status, summary) = outcome(&invocation, &ran, timeout, &filter);
    checks.announce_check(&phase, status, summary, Some(ran.duration), Some(&invocation));
}

/// The status and summary of a check that ran.
fn outcome(invocation: &Invocation, ran: &Ran, timeout: Duration, filter: &str) -> (CheckStatus, String) {
    match &ran.exit {
        Exit::Code(code) => super::summary::conclude(invocation.kind, *code, &ran.output, filter),
        Exit::TimedOut => {
            (CheckStatus::Error, format!("the check took longer than {}, so Paige stopped it", seconds(timeout)))
        }
        Exit::Cancelled => (CheckStatus::Error, "the check was stopped".into()),
        Exit::Signal(signal) => (CheckStatus::Error, format!("the test runner was killed (signal {signal})")),
        Exit::NotStarted(err) if err.kind() == std::io::ErrorKind::NotFound => {
            (CheckStatus::Error, format!("{} is not installed (or not on Paige's PATH)", invocation.tool))
        }
        Exit::NotStarted(err) => (CheckStatus::Error, format!("cannot run {}: {err}", invocation.tool)),
    }
}

/// "60 s", "1.5 s".
fn seconds(duration: Duration) -> String {
    let ms = duration.as_millis();
    match ms % 1000 {
        0 => format!("{} s", ms / 1000),
        _ => format!("{:.1} s", duration.as_secs_f64()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_tool_and_a_timeout_are_clear_statuses() {
        let invocation = runner::invocation(runner::RunnerKind::Cargo, std::path::Path::new("/p"), "adds");
        let ran = |exit| Ran { exit, output: String::new(), duration: Duration::ZERO, pgid: None };
        let missing = ran(Exit::NotStarted(std::io::ErrorKind::NotFound.into()));
        assert_eq!(
            outcome(&invocation, &missing, Duration::from_secs(60), "adds"),
            (CheckStatus::Error, "cargo is not installed (or not on Paige's PATH)".into())
        );
        assert_eq!(
            outcome(&invocation, &ran(Exit::TimedOut), Duration::from_secs(60), "adds").1,
            "the check took longer than 60 s, so Paige stopped it"
        );
        assert_eq!(seconds(Duration::from_millis(1500)), "1.5 s");
    }
}
