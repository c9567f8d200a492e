//! The core's terminals: one per UI connection (a desktop window), as `impl Core` entry
//! points over [`crate::terminal`], which knows nothing of the core.

use crate::core::Core;
use crate::protocol::{ConnectionId, TerminalSize};
use crate::terminal::{AgentCommand, Terminal, TerminalOutput};

impl Core {
    /// Opens the terminal of connection `id` running `command`; its output comes on the
    /// returned [`TerminalOutput`], its own bounded channel (never the event bus, where a
    /// flood would crowd out UI messages). A terminal the connection had is killed first.
    pub fn open_terminal(&self, id: ConnectionId, command: &AgentCommand) -> std::io::Result<TerminalOutput> {
        self.close_terminal(id);
        let size = self.terminal_size().unwrap_or(TerminalSize { cols: 80, rows: 24 });
        let (terminal, output) = Terminal::spawn_with_output(command, size)?;
        tracing::info!(connection = id.0, pid = ?terminal.pid(), "terminal started: {:?}", command.program);
        if let Some(previous) = self.terminals().insert(id, terminal) {
            previous.kill();
        }
        Ok(output)
    }

    /// Kills the terminal of connection `id`, if it has one.
    pub fn close_terminal(&self, id: ConnectionId) {
        if let Some(terminal) = self.terminals().take(id) {
            terminal.kill();
            tracing::info!(connection = id.0, "terminal closed");
        }
    }

    pub fn has_terminal(&self, id: ConnectionId) -> bool {
        self.terminals().get(id).is_some()
    }

    pub(crate) fn terminal_input(&self, id: ConnectionId, input: &str) -> Result<(), String> {
        let terminal = self.terminals().get(id).ok_or_else(|| "this window has no terminal".to_owned())?;
        terminal.write(input.as_bytes()).map_err(|err| format!("cannot write to the terminal: {err}"))
    }

    pub(crate) fn terminal_resize(&self, id: ConnectionId, size: TerminalSize) {
        if let Some(terminal) = self.terminals().get(id)
            && let Err(err) = terminal.resize(size)
        {
            tracing::warn!(connection = id.0, "cannot resize the terminal: {err}");
        }
    }
}
