//! How Claude Code is launched for a project — the one launcher the app's terminal and
//! `paige claude` in the learner's shell share, so both run it exactly alike: the same
//! arguments, settings, sandbox, tokens and environment.
//!
//! In coach mode Claude Code runs in the jail (`jail.rs`) where bubblewrap can make one; the
//! permission mode is pinned (auto mode became Claude Code's default); only settings the
//! agent cannot write are loaded (`--setting-sources project`: the project's own settings,
//! read-only in the jail, plus Paige's `--settings`; never the user's or the local file,
//! which a command could rewrite with `disableAllHooks`); MCP servers come only from Paige's
//! config (`--strict-mcp-config`); Claude Code keeps its state in Paige's config dir
//! (`DATA_DIR/claude`, seeded once from the learner's login); and it gets only the
//! environment it needs (`env.rs`).

pub mod env;
pub mod first_run;
pub mod gate;
pub mod jail;
pub mod layers;
pub mod scope;
pub mod verify;

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

pub use env::Origin;

use crate::terminal::AgentCommand;

/// Claude Code's write tools, removed in coach mode: the learner writes the code. Only tools
/// the installed Claude Code has (a name it does not know is warned about on its first
/// screen); the hooks deny any other write tool, and the jail makes writes impossible.
pub const COACH_DISALLOWED_TOOLS: [&str; 3] = ["Edit", "Write", "NotebookEdit"];

/// The permission mode Claude Code runs in: asked, never auto.
pub const PERMISSION_MODE: &str = "default";

/// Why coach mode does not start Claude Code when Paige's hook command is missing.
pub const MISSING_HOOKS: &str = "Paige cannot start Claude Code in coach mode: its hook command `paige` was not found \
     beside the app or on PATH, and without it nothing would check what Claude Code does. Reinstall Paige, or build the \
     CLI (`cargo build --release -p paige-cli`) and put it on PATH; this terminal is your own shell meanwhile.";

/// How Claude Code is launched for the project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentMode {
    /// The learner writes the code: the coach persona, no write tools, and — when it can run
    /// here — Claude Code's Bash sandbox with the learner's files read-only.
    Coach { sandbox: bool },
    /// `.orchestration/` (now or once): Claude Code works under declared intents with all its
    /// tools; Paige's hooks check every call.
    Governed,
}

/// Where the server the agent talks to listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentServer {
    pub port: u16,
    /// The agent token: it opens `/hooks` and `/mcp`, nothing else.
    pub token: crate::token::Token,
    /// The `paige` CLI that Claude Code's hooks run (`paige hook <event>`); without it Claude
    /// Code starts without Paige's hooks (coach mode still removes its write tools).
    pub hook_command: Option<PathBuf>,
}

/// The command that starts Claude Code again in intent `id`'s view, continuing its
/// conversation (the launcher knows its server, environment and confinement).
pub type Rebuild = std::sync::Arc<dyn Fn(&str) -> Result<crate::terminal::AgentCommand, String> + Send + Sync>;

/// The launch id Paige knows a governed Claude Code by (`PAIGE_LAUNCH` in its environment).
pub fn launch_of(command: &crate::terminal::AgentCommand) -> Option<String> {
    let name = std::ffi::OsStr::new(crate::hook_event::LAUNCH_VAR);
    command.env.iter().find(|(k, _)| k == name).map(|(_, v)| v.to_string_lossy().into_owned())
}

/// The command for a new terminal, without the jail or Landlock (as with `PAIGE_UNGUARDED=1`:
/// for embedders and tests that run no agent of their own) and with only `PATH` and `SHELL` of
/// the launching environment: [`Launch`] with its defaults. `data_dir` holds the
/// generated configs (`run/`, 0600 — never the project) and Claude Code's config dir.
pub fn agent_command(
    project_dir: &Path,
    data_dir: &Path,
    server: &AgentServer,
    mode: AgentMode,
    agent_override: Option<&str>,
    path: Option<&std::ffi::OsStr>,
    shell: Option<&str>,
) -> std::io::Result<AgentCommand> {
    let mut env = std::collections::HashMap::new();
    if let Some(path) = path {
        env.insert("PATH".to_owned(), path.to_string_lossy().into_owned());
    }
    if let Some(shell) = shell {
        env.insert("SHELL".to_owned(), shell.to_owned());
    }
    env.insert(layers::UNGUARDED_VAR.to_owned(), "1".to_owned());
    Launch {
        project_dir,
        data_dir,
        server,
        mode,
        env: &env,
        origin: Origin::App,
        agent_override,
        confinement: jail::Confinement::Off("not asked for (agent_command)".into()),
        extra_args: Vec::new(),
        scope: None,
    }
    .command()
}

/// One launch of Claude Code (or the override, or the fallback shell).
#[derive(Debug, Clone)]
pub struct Launch<'a> {
    pub project_dir: &'a Path,
    pub data_dir: &'a Path,
    pub server: &'a AgentServer,
    pub mode: AgentMode,
    /// The launching environment: `PATH` finds `claude` (and `bwrap`), `SHELL` the fallback;
    /// only the allow-list of `env.rs` reaches the child.
    pub env: &'a HashMap<String, String>,
    pub origin: Origin,
    /// `PAIGE_AGENT_CMD`: run this instead (split on whitespace), not jailed, not Claude Code.
    pub agent_override: Option<&'a str>,
    /// How coach mode confines Claude Code: the running Paige's decision, which every
    /// launcher follows ([`jail::Confinement`]); coach mode only.
    pub confinement: jail::Confinement,
    /// Passed on to `claude` after Paige's own arguments (`paige claude -p …`).
    pub extra_args: Vec<OsString>,
    /// Governed mode started for an intent (`paige claude --intent ID`): Claude Code runs in
    /// the jail (or under Landlock) with only that intent's folders writable ([`scope`]).
    /// `None`: governed mode runs without an OS layer, Paige's hooks hold the scope.
    pub scope: Option<scope::View>,
}

impl Launch<'_> {
    fn path(&self) -> Option<&std::ffi::OsStr> {
        self.env.get("PATH").map(std::ffi::OsStr::new)
    }

    /// The run dir: Paige's generated configs for Claude Code (0700, files 0600).
    pub fn run_dir(&self) -> PathBuf {
        self.data_dir.join("run")
    }

    /// Claude Code's config dir under Paige (`CLAUDE_CONFIG_DIR`), one per mode: coach mode's
    /// is writable in the jail, and nothing planted there (a link for a transcript, a setting)
    /// reaches a governed Claude Code, which runs outside it.
    pub fn claude_config_dir(&self) -> PathBuf {
        match self.mode {
            AgentMode::Coach { .. } => self.data_dir.join("claude"),
            AgentMode::Governed => self.data_dir.join("claude-governed"),
        }
    }

    /// The command for a terminal or for `paige claude` to exec.
    pub fn command(&self) -> std::io::Result<AgentCommand> {
        let cwd = self.project_dir.to_owned();
        if let Some(cmd) = self.agent_override.map(str::trim).filter(|c| !c.is_empty()) {
            let mut words = cmd.split_whitespace().map(OsString::from);
            let program = words.next().unwrap_or_default();
            return Ok(AgentCommand {
                program,
                args: words.collect(),
                cwd,
                banner: None,
                env: paige_env(self.server),
                accepts_nudges: false,
                clear_env: false,
            });
        }
        let Some(claude) = crate::terminal::find_in_path("claude", self.path()) else {
            let shell = self.env.get("SHELL").map(String::as_str).filter(|s| !s.is_empty()).unwrap_or("/bin/sh");
            return Ok(AgentCommand {
                program: shell.into(),
                args: Vec::new(),
                cwd,
                banner: Some(
                    "Claude Code is not installed: run `npm install -g @anthropic-ai/claude-code`, then reopen Paige.\r\n"
                        .into(),
                ),
                env: paige_env(self.server),
                accepts_nudges: false,
                clear_env: false,
            });
        };
        let coach = matches!(self.mode, AgentMode::Coach { .. });
        if coach && self.server.hook_command.is_none() {
            // Without its hooks nothing checks what Claude Code does: coach mode is refused,
            // visibly, rather than run unguarded.
            tracing::error!("{MISSING_HOOKS}");
            return Ok(self.refused(MISSING_HOOKS));
        }
        let run_dir = self.run_dir();
        let config_dir = self.claude_config_dir();
        let view = match self.mode {
            AgentMode::Governed => self.scope.as_ref().filter(|_| self.confinement.read_only()),
            AgentMode::Coach { .. } => None,
        };
        let mut plan = (coach || view.is_some()).then(|| self.plan(&config_dir));
        if let (Some(plan), Some(view)) = (plan.as_mut(), view) {
            plan.allow_write(view, self.project_dir);
        }
        if let Some(plan) = &plan
            && plan.unguarded()
            && !layers::unguarded_asked(self.env)
        {
            let refusal = layers::refusal(self.confinement.why_off().unwrap_or_default());
            tracing::error!("{refusal}");
            return Ok(self.refused(&refusal));
        }
        seed_config_dir(&config_dir, self.env.get("HOME").map(Path::new));
        // The key Claude Code gets: only from the learner's shell (`env::agent_env`).
        let key = (self.origin == Origin::Shell).then(|| self.env.get("ANTHROPIC_API_KEY")).flatten();
        let first_run = first_run::answer_first_screens(
            &config_dir,
            self.project_dir,
            key.map(|k| k.trim()).filter(|k| !k.is_empty()),
        );
        let mcp_config = write_mcp_config(&run_dir, self.server)?;
        let mut run_files = vec![mcp_config.clone()];
        let mut args: Vec<OsString> = vec!["--mcp-config".into(), mcp_config.into_os_string()];
        args.extend(["--strict-mcp-config".into(), "--permission-mode".into(), PERMISSION_MODE.into()]);
        args.extend(["--setting-sources".into(), "project".into()]);
        if coach {
            args.extend(["--append-system-prompt".into(), crate::prompts::coach_persona::SYSTEM_PROMPT.into()]);
        }
        // Without Paige's hooks nothing would check a governed agent's writes: it gets coach
        // mode's tool limits then.
        if coach || self.server.hook_command.is_none() {
            args.push("--disallowedTools".into());
            args.extend(COACH_DISALLOWED_TOOLS.iter().map(OsString::from));
        }
        let jail = plan.as_ref().and_then(|plan| plan.jail.clone());
        match &self.server.hook_command {
            Some(paige) => {
                let mut settings = claude_settings(&shell_quote(&paige.to_string_lossy()));
                if plan.as_ref().is_some_and(|plan| plan.claude_sandbox) {
                    settings["sandbox"] = crate::sandbox::settings(self.project_dir);
                    // Without the jail DATA_DIR is in reach: no sandboxed command reads the
                    // run file's UI token, the database or the version store.
                    settings["sandbox"]["filesystem"]["denyRead"] =
                        serde_json::json!([format!("/{}", self.data_dir.display())]);
                    // Inside the jail a fresh /proc cannot be mounted in a nested namespace
                    // as root ("Can't mount proc"), which failed every Bash call there. The
                    // /proc the sandbox keeps instead is the jail's own, which shows only the
                    // jail's processes: nothing is weaker. Never outside the jail, where it
                    // would be the machine's.
                    if jail.is_some() {
                        settings["sandbox"]["enableWeakerNestedSandbox"] = serde_json::json!(true);
                    }
                }
                let settings = write_private_json(&run_dir, "settings", &settings)?;
                run_files.push(settings.clone());
                args.extend(["--settings".into(), settings.into_os_string()]);
            }
            None => tracing::warn!("no `paige` command found: Claude Code runs without Paige's hooks"),
        }
        args.extend(self.extra_args.iter().cloned());
        let mut extra = paige_env(self.server);
        extra.push(("CLAUDE_CONFIG_DIR".into(), config_dir.clone().into_os_string()));
        if let Some(view) = view {
            // Which launch and view its hooks come from: Paige asks this launcher to start
            // Claude Code again in another intent's view when it selects one (`paige claude`).
            let launch = uuid::Uuid::new_v4().to_string();
            extra.push((crate::hook_event::LAUNCH_VAR.into(), launch.into()));
            extra.push((crate::hook_event::VIEW_INTENT_VAR.into(), view.intent.clone().into()));
        }
        if let Some(plan) = plan.as_mut().filter(|plan| plan.read_only) {
            extra.extend(scratch_env(&config_dir)?);
            extra.extend(plan.extra_env(&config_dir));
            plan.allow_read(&run_files);
        }
        let env = env::agent_env(self.env, self.origin, extra);
        let confine = plan.as_ref().and_then(|plan| plan.confine.as_ref().zip(self.server.hook_command.as_ref()));
        // The jail's network is its own, with Paige's gate as its only way out (`gate.rs`).
        let gate = match (&jail, confine) {
            (Some(_), Some((_, paige))) => {
                let destinations = gate::Destinations::for_launch(self.server.port, self.env);
                Some((destinations, gate::socket_path(&run_dir)?, paige.clone()))
            }
            _ => None,
        };
        let claude_path = claude.clone();
        let (inner, args) = match confine {
            Some((policy, paige)) => {
                let policy = serde_json::to_string(policy).map_err(std::io::Error::other)?;
                let mut confined: Vec<OsString> = vec!["confine".into()];
                if let Some((destinations, _, _)) = &gate {
                    confined.extend(destinations.relay_args());
                }
                confined.extend(["--policy".into(), policy.into()]);
                confined.push("--".into());
                confined.push(claude.into_os_string());
                confined.extend(args);
                (paige.clone(), confined)
            }
            None => (claude, args),
        };
        let (program, args) = match jail {
            Some((bwrap, userns)) => {
                let mut keep = vec![claude_path];
                keep.extend(self.server.hook_command.iter().cloned());
                keep.extend(self.env.get("HOME").map(PathBuf::from));
                keep.extend(self.path().map(|p| std::env::split_paths(p).collect::<Vec<_>>()).unwrap_or_default());
                let spec = jail::JailSpec {
                    bwrap: bwrap.clone(),
                    userns,
                    project_dir: self.project_dir.to_owned(),
                    data_dir: self.data_dir.to_owned(),
                    claude_config_dir: config_dir,
                    run_files,
                    keep_under_tmp: keep,
                    gate: gate.as_ref().map(|(_, socket, _)| socket.clone()),
                    writable: view.map(|view| view.writable.clone()).unwrap_or_default(),
                };
                let mut jailed = jail::args(&spec);
                jailed.push("--".into());
                jailed.push(inner.into_os_string());
                jailed.extend(args);
                match gate {
                    // `paige gate` runs the jail as its child, for as long as it runs.
                    Some((destinations, socket, paige)) => {
                        let mut gated = destinations.gate_args(&socket);
                        gated.push(bwrap.clone().into_os_string());
                        gated.extend(jailed);
                        (paige.into_os_string(), gated)
                    }
                    None => (bwrap.clone().into_os_string(), jailed),
                }
            }
            None => (inner.into_os_string(), args),
        };
        let warning = plan
            .filter(|plan| !plan.read_only)
            .map(|plan| format!("\x1b[1;31mPaige: {}\x1b[0m\r\n", plan.summary(self.project_dir)));
        // What Paige answered of Claude Code's first screens, in one line (issue 41).
        let prepared = first_run.map(|said| format!("{said}\r\n"));
        let banner = match (warning, prepared) {
            (None, None) => None,
            (warning, prepared) => Some(format!("{}{}", warning.unwrap_or_default(), prepared.unwrap_or_default())),
        };
        Ok(AgentCommand { program, args, cwd, banner, env, accepts_nudges: true, clear_env: true })
    }

    /// The learner's shell instead of Claude Code, with why in red.
    fn refused(&self, why: &str) -> AgentCommand {
        AgentCommand {
            program: self.env.get("SHELL").filter(|s| !s.is_empty()).map_or("/bin/sh".into(), OsString::from),
            args: Vec::new(),
            cwd: self.project_dir.to_owned(),
            banner: Some(format!("\x1b[1;31m{why}\x1b[0m\r\n")),
            env: paige_env(self.server),
            accepts_nudges: false,
            clear_env: false,
        }
    }

    /// Coach mode's layers for this launch ([`layers::Plan`]).
    pub fn plan(&self, config_dir: &Path) -> layers::Plan {
        let sandbox = match self.mode {
            AgentMode::Coach { sandbox: true } => Ok(()),
            AgentMode::Coach { sandbox: false } => Err("it cannot run here (`paige doctor` says why)".to_owned()),
            AgentMode::Governed => Err("governed mode: the intent's view holds its scope".to_owned()),
        };
        layers::Plan::new(layers::Inputs {
            confinement: &self.confinement,
            sandbox,
            hooks: self.server.hook_command.is_some(),
            project_dir: self.project_dir,
            data_dir: self.data_dir,
            config_dir,
            run_files: &[],
            ports: layers::ports(self.server.port, self.env),
            support: layers::kernel_support(&self.confinement, self.env),
            destinations: gate::Destinations::for_launch(self.server.port, self.env),
        })
    }
}

/// Where builds inside the jail write, since the project (its ignored folders too) is
/// read-only there: a scratch dir of Paige's, never run by the learner. The jail can write
/// there, so nothing here follows a link it planted ([`private_dir`]).
fn scratch_env(config_dir: &Path) -> std::io::Result<Vec<(OsString, OsString)>> {
    let mut env = Vec::new();
    for (var, dir) in [
        ("CARGO_TARGET_DIR", "target"),
        ("PYTHONPYCACHEPREFIX", "pycache"),
        ("GOCACHE", "go-build"),
        ("npm_config_cache", "npm"),
        ("XDG_CACHE_HOME", "cache"),
        ("", "tmp"),
    ] {
        let dir = private_dir(config_dir, &Path::new("scratch").join(dir))?;
        if !var.is_empty() {
            env.push((OsString::from(var), dir.into_os_string()));
        }
    }
    Ok(env)
}

/// `base/rel`, each folder made 0700 or entered without following a link: what Claude Code
/// (which can write under `base`) left there is never followed by Paige. A link, or anything
/// not a folder of this user's, where a folder should be is removed and the folder made anew.
pub fn private_dir(base: &Path, rel: &Path) -> std::io::Result<PathBuf> {
    use rustix::fs::{AtFlags, Mode, OFlags};
    let open = |at: &dyn std::os::fd::AsFd, name: &std::ffi::OsStr| {
        rustix::fs::openat(at, name, OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty())
    };
    let mut dir = rustix::fs::open(base, OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty())?;
    // SAFETY: geteuid(2) has no failure mode.
    let me = unsafe { libc::geteuid() };
    for name in rel.components().map(|c| c.as_os_str()) {
        let next = match open(&dir, name) {
            Ok(fd) if rustix::fs::fstat(&fd).is_ok_and(|st| st.st_uid == me) => fd,
            found => {
                if found.is_ok() || rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW).is_ok() {
                    tracing::warn!("removing {:?} in Claude Code's config dir: not a folder of Paige's", name);
                    let removed = rustix::fs::unlinkat(&dir, name, AtFlags::empty())
                        .or_else(|_| rustix::fs::unlinkat(&dir, name, AtFlags::REMOVEDIR));
                    if removed.is_err() {
                        let moved = format!(".planted-{}", std::process::id());
                        rustix::fs::renameat(&dir, name, &dir, moved.as_str())?;
                    }
                }
                match rustix::fs::mkdirat(&dir, name, Mode::RWXU) {
                    Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                    Err(err) => return Err(err.into()),
                }
                open(&dir, name)?
            }
        };
        dir = next;
    }
    Ok(base.join(rel))
}

/// Seeds Paige's Claude Code config dir once from the learner's own (`~/.claude.json`: the
/// onboarding and folder trust; `~/.claude/.credentials.json`: the login), so Claude Code in
/// Paige starts signed in. Never written back: the learner's own stays theirs.
fn seed_config_dir(config_dir: &Path, home: Option<&Path>) {
    use std::os::unix::fs::DirBuilderExt;
    if let Err(err) = std::fs::DirBuilder::new().recursive(true).mode(0o700).create(config_dir) {
        tracing::warn!("cannot create Claude Code's config dir {}: {err}", config_dir.display());
        return;
    }
    let Some(home) = home else { return };
    for (from, to) in
        [(home.join(".claude.json"), ".claude.json"), (home.join(".claude/.credentials.json"), ".credentials.json")]
    {
        let to = config_dir.join(to);
        // Regular files only, never through a symlink; an existing copy is Claude Code's own now.
        let regular = std::fs::symlink_metadata(&from).is_ok_and(|m| m.is_file());
        if !regular || std::fs::symlink_metadata(&to).is_ok() {
            continue;
        }
        let copied = std::fs::read(&from).and_then(|bytes| write_private(&to, &bytes));
        if let Err(err) = copied {
            tracing::warn!("cannot copy {} for Claude Code: {err}", from.display());
        }
    }
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)?;
    file.write_all(bytes)
}

/// How `paige hook` in the terminal finds this Paige: its URL and the agent token.
fn paige_env(server: &AgentServer) -> Vec<(OsString, OsString)> {
    vec![
        ("PAIGE_URL".into(), format!("http://127.0.0.1:{}", server.port).into()),
        ("PAIGE_TOKEN".into(), server.token.expose().into()),
    ]
}

/// Quotes a path for the `sh -c` Claude Code runs hook commands with.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Writes `run_dir/mcp-<pid>.json` (mode 0600): Paige's MCP server with the agent token.
pub fn write_mcp_config(run_dir: &Path, server: &AgentServer) -> std::io::Result<PathBuf> {
    let config = serde_json::json!({"mcpServers": {"paige": {
        "type": "http",
        "url": format!("http://127.0.0.1:{}/mcp", server.port),
        "headers": {"Authorization": format!("Bearer {}", server.token.expose())},
    }}});
    write_private_json(run_dir, "mcp", &config)
}

/// Writes `run_dir/<name>-<pid>.json`, readable by the owner only (`run_dir` is created
/// 0700). The MCP config holds the token, so each is written to a new temp file (0600,
/// O_EXCL) renamed into place: neither a leftover of an earlier process with this pid
/// (whatever its mode) nor a symlink planted at the name is ever written through, and a
/// `claude` starting meanwhile reads a whole file.
fn write_private_json(run_dir: &Path, name: &str, value: &serde_json::Value) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(run_dir)?;
    let path = run_dir.join(format!("{name}-{}.json", std::process::id()));
    // Named so the run dir's start-up sweep (`run_info::write`) removes one a crash left.
    let mut file = tempfile::Builder::new().prefix(&crate::files::data_temp_prefix()).tempfile_in(run_dir)?;
    file.write_all(value.to_string().as_bytes())?;
    file.persist(&path).map_err(|err| err.error)?;
    Ok(path)
}

/// The Claude Code `--settings` JSON that wires every event to `<paige> hook <event>` and
/// allows Paige's own MCP tools (`acceptEdits` does not cover MCP tools).
pub fn claude_settings(paige_command: &str) -> serde_json::Value {
    let mut hooks = serde_json::Map::new();
    for event in crate::hook_event::HookEvent::ALL {
        let command = serde_json::json!({
            "type": "command",
            "command": format!("{paige_command} hook {}", event.slug()),
            "timeout": event.hook_timeout_secs(),
        });
        let entry = match event {
            crate::hook_event::HookEvent::PreToolUse
            | crate::hook_event::HookEvent::PostToolUse
            | crate::hook_event::HookEvent::PostToolUseFailure => {
                serde_json::json!({"matcher": "*", "hooks": [command]})
            }
            _ => serde_json::json!({"hooks": [command]}),
        };
        hooks.insert(event.name().to_owned(), serde_json::json!([entry]));
    }
    serde_json::json!({"hooks": hooks, "permissions": {"allow": ["mcp__paige__*"]}})
}
