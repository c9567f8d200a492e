//! The core's terminals: one per UI connection (a desktop window), as `impl Core` entry
//! points over [`crate::terminal`], which knows nothing of the core.

mod guard_check;
mod relaunch;

use crate::core::Core;
use crate::protocol::{ConnectionId, TerminalSize};
use crate::sync::Locked;
use crate::terminal::{AgentCommand, Terminal, TerminalOutput};

impl Core {
    /// Opens the terminal of connection `id` running `command`; its output comes on the
    /// returned [`TerminalOutput`], its own bounded channel (never the event bus, where a
    /// flood would crowd out UI messages). A terminal the connection had is killed first.
    pub fn open_terminal(&self, id: ConnectionId, command: &AgentCommand) -> std::io::Result<TerminalOutput> {
        self.close_terminal(id);
        let size = self.live().terminal_size().unwrap_or(TerminalSize { cols: 80, rows: 24 });
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

    /// The learner typed `input`. Once the child has ended by itself, Enter starts it again
    /// (as its exit notice says) and other keys go nowhere.
    pub(crate) fn terminal_input(&self, id: ConnectionId, input: &str) -> Result<(), String> {
        let terminal = self.terminals().get(id).ok_or_else(|| "this window has no terminal".to_owned())?;
        if !terminal.has_exited() {
            return terminal
                .write_input(input.as_bytes())
                .map_err(|err| format!("cannot write to the terminal: {err}"));
        }
        if !input.contains(['\r', '\n']) {
            return Ok(());
        }
        let size = self.live().terminal_size().unwrap_or(TerminalSize { cols: 80, rows: 24 });
        let restarted = terminal.restart(size).map_err(|err| format!("cannot start the terminal again: {err}"))?;
        tracing::info!(connection = id.0, pid = ?restarted.pid(), "terminal started again");
        if let Some(previous) = self.terminals().insert(id, restarted) {
            previous.kill();
        }
        Ok(())
    }

    pub(crate) fn terminal_resize(&self, id: ConnectionId, size: TerminalSize) {
        if let Some(terminal) = self.terminals().get(id)
            && let Err(err) = terminal.resize(size)
        {
            tracing::warn!(connection = id.0, "cannot resize the terminal: {err}");
        }
    }

    /// How Claude Code is launched here (read at each terminal start, so switching a project
    /// between modes takes effect on the next one); the UI is told which mode is active and,
    /// in coach mode without the OS sandbox, why.
    pub fn agent_mode(&self, path: Option<&std::ffi::OsStr>) -> crate::launch::AgentMode {
        self.agent_launch_mode(path).0
    }

    /// Tells every UI, now and on connecting, that Claude Code could not be started as the
    /// mode needs (an error notice where the mode's notice goes).
    pub fn show_agent_problem(&self, text: &str) {
        let notice = crate::protocol::ServerMessage::notice(crate::protocol::MessageKind::Error, text.to_owned());
        self.broadcast(notice.clone());
        self.live().set_agent_notice(notice);
    }

    /// [`Core::agent_mode`] and, in coach mode, how Claude Code is confined (`launch::jail`:
    /// decided when Paige started, see [`Core::agent_jailed`]). The notice names each layer
    /// in force (`launch::layers`), and says "read-only" only when it is true.
    pub fn agent_launch_mode(
        &self,
        path: Option<&std::ffi::OsStr>,
    ) -> (crate::launch::AgentMode, crate::launch::jail::Confinement) {
        use crate::launch::AgentMode;
        use crate::protocol::MessageKind;
        let confinement = self.config().agent_jail.clone();
        let (mode, notice) = match self.governance().governance_enabled() {
            Ok(true) => (
                AgentMode::Governed,
                (
                    MessageKind::Info,
                    if confinement.read_only() {
                        "Governed mode: Claude Code works under the intents in .orchestration/ and can write only the \
                         folders of the intent it selected (none before it selects one)."
                    } else {
                        "Governed mode: Claude Code works under the intents in .orchestration/; Paige's hooks hold each \
                         intent's scope."
                    }
                    .to_owned(),
                ),
            ),
            _ => {
                let (mode, plan) = self.coach_plan(path);
                let names = |on: bool| {
                    plan.layers.iter().filter(|l| l.on == on).map(|l| l.name.as_str()).collect::<Vec<_>>().join(", ")
                };
                let mut layers = String::new();
                for (on, label) in [(true, "On"), (false, "Off here")] {
                    let list = names(on);
                    if !list.is_empty() {
                        layers.push_str(&format!(" {label}: {list}."));
                    }
                }
                let notice = if plan.read_only {
                    (
                        MessageKind::Info,
                        format!("Coach mode: you write the code; Claude Code sees your project read-only.{layers}"),
                    )
                } else if plan.unguarded() {
                    (
                        MessageKind::Error,
                        format!(
                            "Coach mode WITHOUT an operating-system guard ({}): your files are not read-only to Claude \
                             Code; only Paige's hooks and change detector stand in its way.",
                            confinement.why_off().unwrap_or_default()
                        ),
                    )
                } else {
                    (
                        MessageKind::Warning,
                        format!(
                            "Coach mode cannot give Claude Code a read-only view of your project ({}); its commands \
                             run sandboxed, and Paige's hooks and change detector keep your files yours.{layers}",
                            confinement.why_off().unwrap_or_default()
                        ),
                    )
                };
                (mode, notice)
            }
        };
        let (kind, text) = notice;
        let notice = crate::protocol::ServerMessage::notice(kind, text);
        self.broadcast(notice.clone());
        self.live().set_agent_notice(notice);
        (mode, confinement)
    }

    /// Coach mode's layers for a launch with `PATH` `path` (what the notice and a guard
    /// check's key are made from).
    pub fn coach_plan(
        &self,
        path: Option<&std::ffi::OsStr>,
    ) -> (crate::launch::AgentMode, crate::launch::layers::Plan) {
        let sandbox = sandbox_probe(path);
        let mode = crate::launch::AgentMode::Coach { sandbox: sandbox.is_ok() };
        let config = self.config();
        let plan = crate::launch::layers::Plan::new(crate::launch::layers::Inputs {
            confinement: &config.agent_jail,
            sandbox,
            hooks: true,
            project_dir: &config.project_dir,
            data_dir: &config.data_dir,
            config_dir: &config.data_dir.join("claude"),
            run_files: &[],
            ports: Vec::new(),
            support: paige_confine::support(),
            destinations: crate::launch::gate::Destinations::for_launch(0, &std::collections::HashMap::new()),
        });
        (mode, plan)
    }

    /// Whether coach mode's Claude Code runs in the jail (every launcher follows the decision
    /// Paige made at start). Then no tool the agent runs can write a learner file, and the
    /// change detector stands down in coach mode: whatever changes is the learner's own.
    pub fn agent_jailed(&self) -> bool {
        self.config().agent_jail.read_only()
    }
}

type Probe<T> = (Option<std::ffi::OsString>, Result<T, String>);

/// [`crate::sandbox::probe`], once per `PATH`.
fn sandbox_probe(path: Option<&std::ffi::OsStr>) -> Result<(), String> {
    static PROBES: std::sync::Mutex<Vec<Probe<()>>> = std::sync::Mutex::new(Vec::new());
    let key = path.map(std::ffi::OsStr::to_owned);
    if let Some((_, known)) = PROBES.locked().iter().find(|(k, _)| *k == key) {
        return known.clone();
    }
    let result = crate::sandbox::probe(path);
    PROBES.locked().push((key, result.clone()));
    result
}
