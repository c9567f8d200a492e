//! Governed mode in the app's terminal, by construction (issue 42): Claude Code runs in a
//! view of the project where only the selected intent's folders are writable — before any
//! intent is selected, none. When it selects an intent its view does not make writable, its
//! hooks tell it to end its turn and register the switch (`Governance::relaunch_for`); once
//! that turn ended (its Stop hook) or it is quiet, this terminal's watcher takes the switch,
//! starts Claude Code again in the new intent's view in the same terminal, continuing the
//! conversation (`--continue`), and types it a note to go on once it is quiet. `paige claude --intent` does the same in the learner's own
//! terminal (`paige-cli`'s `claude_pty.rs`, over `POST /api/agent/relaunch`).

use std::sync::Arc;

use crate::core::Core;
use crate::launch::{Rebuild, launch_of, scope::go_on_note};
use crate::protocol::{ConnectionId, TerminalSize};
use crate::terminal::{AgentCommand, Terminal, TerminalOutput};

/// Why a relaunch did not happen: before the old Claude Code was stopped, or after.
enum Failed {
    Before(String),
    After(String),
}

impl Core {
    /// [`Core::open_terminal`] for a governed Claude Code in an intent's view: started again by
    /// `rebuild` in the view of each intent it selects, in this terminal, until the terminal
    /// is closed or replaced, or Paige shuts down.
    pub fn open_governed_terminal(
        self: &Arc<Self>,
        id: ConnectionId,
        command: &AgentCommand,
        rebuild: Rebuild,
    ) -> std::io::Result<TerminalOutput> {
        let output = self.open_terminal(id, command)?;
        if let (Some(launch), Some(terminal)) = (launch_of(command), self.terminals().get(id)) {
            self.watch_relaunches(id, terminal, launch, rebuild);
        }
        Ok(output)
    }

    fn watch_relaunches(
        self: &Arc<Self>,
        id: ConnectionId,
        mut watched: Arc<Terminal>,
        mut launch: String,
        rebuild: Rebuild,
    ) {
        let (core, cancel) = (self.clone(), self.shutdown_token());
        let (quiet, poll) = (self.config().limits.observer.quiet_output, self.config().limits.delivery_poll);
        self.tasks().spawn(async move {
            let mut note: Option<String> = None;
            loop {
                tokio::select! {
                    _ = cancel.cancelled() => return,
                    _ = tokio::time::sleep(poll) => {}
                }
                // Closed, or another launch opened in it: this watcher's work is over. The same
                // launch started again (Enter after it exited) is followed.
                match core.terminals().get(id) {
                    Some(current) if Arc::ptr_eq(&current, &watched) => {}
                    Some(current) if launch_of(current.command()).as_deref() == Some(launch.as_str()) => {
                        (watched, note) = (current, None);
                    }
                    _ => return,
                }
                let ready = watched.ready_for_nudge(quiet);
                if note.is_some() {
                    if let Some(text) = note.take_if(|_| ready)
                        && let Err(err) = watched.write(&crate::terminal::paste(&text))
                    {
                        tracing::warn!("cannot type the relaunch note into Claude Code: {err}");
                    }
                    continue;
                }
                // Once the turn that selected it ended (its Stop hook), or it is quiet.
                let Some(intent) = core.governance().take_relaunch(&launch, ready) else { continue };
                let size = core.live().terminal_size().unwrap_or(TerminalSize { cols: 80, rows: 24 });
                let (old, rebuild, chosen) = (watched.clone(), rebuild.clone(), intent.clone());
                let relaunched = tokio::task::spawn_blocking(move || -> Result<(Terminal, AgentCommand), Failed> {
                    // Made before the old one is stopped: a view that cannot be made leaves it running.
                    let command = rebuild(&chosen).map_err(Failed::Before)?;
                    let said = format!(
                        "\r\n\x1b[1mPaige: Claude Code selected {chosen}: starting it again in {chosen}'s view…\x1b[0m\r\n"
                    );
                    let terminal =
                        old.replace_with(&command, size, &said).map_err(|err| Failed::After(err.to_string()))?;
                    Ok((terminal, command))
                })
                .await
                .unwrap_or_else(|err| Err(Failed::After(err.to_string())));
                let (terminal, command) = match relaunched {
                    Ok(started) => started,
                    Err(Failed::Before(why)) => {
                        core.show_agent_problem(&format!(
                            "Paige cannot start Claude Code in {intent}'s view ({why}): it goes on in the view it has, \
                             where {intent}'s files are read-only."
                        ));
                        continue;
                    }
                    Err(Failed::After(why)) => {
                        core.show_agent_problem(&format!(
                            "Paige could not start Claude Code again in {intent}'s view: {why}. Reopen the project \
                             to start it."
                        ));
                        return;
                    }
                };
                // The window closed meanwhile: nothing to start it for.
                if !core.terminals().get(id).is_some_and(|current| Arc::ptr_eq(&current, &watched)) {
                    terminal.kill();
                    return;
                }
                tracing::info!(connection = id.0, pid = ?terminal.pid(), "Claude Code started again in {intent}'s view");
                core.terminals().insert(id, terminal);
                let (Some(next), Some(current)) = (launch_of(&command), core.terminals().get(id)) else { return };
                (launch, watched, note) = (next, current, Some(go_on_note(&intent)));
            }
        });
    }
}
