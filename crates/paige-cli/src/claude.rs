//! `paige claude [ARGS…]`: runs Claude Code for the running Paige exactly as the app's
//! terminal does — one launcher (`paige_core::launch`) for both: the same arguments,
//! settings, jail, tokens and environment, with ARGS passed on to `claude`. For `paige serve`
//! (the browser UI has no terminal) and for a learner who prefers their own terminal.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;
use paige_core::launch::{AgentMode, AgentServer, Launch, Origin};
use paige_core::terminal::AgentCommand;

use crate::claude_pty;
use serde_json::Value;

#[derive(Debug, Args)]
pub(crate) struct ClaudeArgs {
    /// Where the running Paige keeps its run file [env: DATA_DIR] [default: ~/.paige/]
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Print the command instead of running it
    #[arg(long)]
    dry_run: bool,
    /// Start with Paige's kickoff (plan the active session) also when ARGS are given; with
    /// no ARGS it is passed whenever the active session has no plan yet
    #[arg(long)]
    kickoff: bool,
    /// Start coach mode even where no operating-system layer keeps the project read-only
    /// (no bubblewrap, no Landlock): only Paige's hooks and change detector then guard it, and
    /// Paige says so in red [env: PAIGE_UNGUARDED=1]
    #[arg(long)]
    unguarded: bool,
    /// Governed mode: start Claude Code for this intent, in a view of the project where only
    /// the intent's folders are writable (the jail, or Landlock). Without it governed mode
    /// runs with Paige's hooks alone. To switch intents, start it again (`--continue`)
    #[arg(long, value_name = "ID")]
    intent: Option<String>,
    /// Passed on to `claude` (e.g. `-p "explain src/main.rs"`, `--continue`)
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "ARGS")]
    args: Vec<OsString>,
}

/// Where `paige claude` reaches Paige, with the agent token (an older Paige's run file has
/// none: its UI token then); `None` when the run file holds neither (nothing to ask with).
fn launcher(info: &paige_core::run_info::RunInfo) -> Option<paige_core::run_info::Located> {
    let token = info.agent_token.clone().or_else(|| info.token.clone())?;
    Some(paige_core::run_info::Located { base_url: format!("http://127.0.0.1:{}", info.port), token })
}

/// Builds the launch and, unless `--dry-run`, runs it: in a terminal, in a PTY of its own
/// until it exits (`claude_pty.rs`: Paige can type into it); else by replacing this process.
/// Returns only on an error.
pub(crate) fn run(args: ClaudeArgs) -> anyhow::Result<bool> {
    let mut env: HashMap<String, String> = std::env::vars().collect();
    if args.unguarded {
        env.insert(paige_core::launch::layers::UNGUARDED_VAR.to_owned(), "1".to_owned());
    }
    let data_dir = paige_core::config::data_dir(&env, args.data_dir)?;
    // A session without a plan: Claude Code's first prompt is Paige's kickoff (issue 28), so
    // coaching starts without the learner having to know what to type.
    let mut extra_args = args.args;
    if (args.kickoff || extra_args.is_empty())
        && let Some(info) = paige_core::run_info::read(&data_dir)?
    {
        // The agent token: all `paige claude` asks of Paige is open to it (the run file holds
        // no UI token where Claude Code could read it).
        let located = launcher(&info).ok_or_else(|| anyhow::anyhow!("the run file holds no token"));
        match located.and_then(|located| kickoff(&located)) {
            Ok(Some(text)) => {
                eprintln!("paige: the session has no plan yet — Claude Code starts by planning it");
                extra_args.insert(0, text.into());
            }
            Ok(None) => {}
            Err(err) => eprintln!("paige: cannot ask for the session's kickoff ({err:#}); starting without it"),
        }
    }
    let prepared = prepare(&data_dir, &env, extra_args, args.intent.as_deref())?;
    eprintln!("paige: {}", prepared.layers);
    let scoped = prepared.scoped;
    let command = prepared.command;
    // What Paige answered of Claude Code's first screens (and a red warning, if any).
    if let Some(banner) = &command.banner {
        eprint!("{}", banner.replace("\r\n", "\n"));
    }
    if args.dry_run {
        let words: Vec<String> =
            std::iter::once(&command.program).chain(&command.args).map(|w| w.to_string_lossy().into_owned()).collect();
        println!("{}", words.join(" "));
        return Ok(true);
    }
    // In a terminal: Claude Code in a PTY of paige claude's own, so Paige can type into it.
    if claude_pty::interactive() {
        let run_dir = data_dir.clone();
        let paige = move || paige_core::run_info::running(&run_dir).ok().flatten().and_then(|info| launcher(&info));
        // Governed mode for an intent: started again in another intent's view when its
        // Claude Code selects one, the conversation going on (`--continue`).
        let relaunch = scoped.then(|| -> claude_pty::Relaunch {
            let (data_dir, env) = (data_dir.clone(), env.clone());
            Box::new(move |intent: &str| {
                let again = prepare(&data_dir, &env, vec!["--continue".into()], Some(intent))?;
                Ok((again.command, paige_core::launch::scope::go_on_note(intent)))
            })
        });
        let code = claude_pty::run(&command, paige, relaunch)?;
        std::process::exit(code);
    }
    let mut child = std::process::Command::new(&command.program);
    child.args(&command.args).current_dir(&command.cwd).env_clear().envs(command.env.iter().cloned());
    use std::os::unix::process::CommandExt;
    let err = child.exec();
    bail!("cannot start {}: {err}", command.program.to_string_lossy())
}

/// What `paige claude` runs, and what guards it.
pub(crate) struct Prepared {
    pub command: AgentCommand,
    /// Claude Code runs in the read-only view (bubblewrap).
    pub jailed: bool,
    /// The project is read-only to Claude Code by construction (the jail or Landlock).
    pub read_only: bool,
    /// Each layer of coach mode, on or off (none in governed mode).
    pub plan: Option<paige_core::launch::layers::Plan>,
    /// One sentence on the layers, for the learner.
    pub layers: String,
    /// Governed mode in an intent's view (`--intent`, with an OS layer to make it).
    pub scoped: bool,
}

/// The one launch `paige claude` and `paige doctor --guard` share: Claude Code for the Paige
/// whose run file is in `data_dir`, from the launching environment `env` (origin: the
/// learner's shell), with `extra_args` passed on to `claude`; in governed mode for `intent`
/// when given.
pub(crate) fn prepare(
    data_dir: &std::path::Path,
    env: &HashMap<String, String>,
    extra_args: Vec<OsString>,
    intent: Option<&str>,
) -> anyhow::Result<Prepared> {
    let Some(info) = paige_core::run_info::read(data_dir)? else {
        bail!(
            "no running Paige found in {} — start one with `paige serve` (or the desktop app) first",
            data_dir.display()
        );
    };
    let project_dir = info.project_dir.clone();
    let path = env.get("PATH").map(std::ffi::OsStr::new);
    let governed = project_dir.join(".orchestration").exists();
    // The running Paige decided at its start how coach mode confines Claude Code; its change
    // detector stands down when the project is read-only, so this launch must not run Claude
    // Code any other way.
    use paige_core::launch::jail::Confinement;
    let why_not = || info.no_jail_because.clone().unwrap_or_else(|| "the running Paige has none".into());
    let confinement = || -> anyhow::Result<Confinement> {
        Ok(match (info.jail, info.landlock) {
            (Some(true), _) => match paige_core::launch::jail::probe(path) {
                Ok(probed) => Confinement::Jail { bwrap: probed.bwrap, userns: probed.userns },
                Err(why) => bail!(
                    "the running Paige runs Claude Code in a read-only view of the project, which cannot be made \
                     from here ({why}); run `paige claude` where Paige runs, or restart Paige with PAIGE_JAIL=0"
                ),
            },
            (Some(false), Some(true)) => match paige_core::launch::jail::landlock_usable() {
                Ok(()) => Confinement::Landlock(why_not()),
                Err(why) => bail!("the running Paige confines Claude Code with Landlock, which {why} here"),
            },
            (Some(false), _) => Confinement::Off(why_not()),
            (None, _) => bail!(
                "the running Paige is older than this paige claude (its run file does not say how Claude \
                 Code is confined): restart it"
            ),
        })
    };
    let (mode, confinement, scope) = match (governed, intent) {
        (true, Some(id)) => {
            let view = paige_core::governance::intents::view_of_intent(&project_dir, id).map_err(anyhow::Error::msg)?;
            (AgentMode::Governed, confinement()?, Some(view))
        }
        (true, None) => (AgentMode::Governed, Confinement::Off("governed mode".into()), None),
        (false, Some(_)) => bail!("--intent is for governed mode: this project has no .orchestration/"),
        (false, None) => {
            let sandbox = paige_core::sandbox::probe(path);
            (AgentMode::Coach { sandbox: sandbox.is_ok() }, confinement()?, None)
        }
    };
    let paige = std::env::current_exe().context("cannot find the paige binary for Claude Code's hooks")?;
    let Some(agent_token) = info.agent_token.clone() else {
        bail!("the running Paige is older than this paige claude (its run file has no agent token): restart it");
    };
    let server = AgentServer { port: info.port, token: agent_token, hook_command: Some(paige) };
    let launch = Launch {
        project_dir: &project_dir,
        data_dir,
        server: &server,
        mode,
        env,
        origin: Origin::Shell,
        agent_override: None,
        confinement,
        extra_args,
        scope,
    };
    let plan = match mode {
        AgentMode::Coach { .. } => Some(launch.plan(&launch.claude_config_dir())),
        AgentMode::Governed => launch.scope.as_ref().filter(|_| launch.confinement.read_only()).map(|view| {
            let mut plan = launch.plan(&launch.claude_config_dir());
            plan.allow_write(view, &project_dir);
            plan
        }),
    };
    if let Some(plan) = &plan
        && plan.unguarded()
        && !paige_core::launch::layers::unguarded_asked(env)
    {
        bail!("{}", paige_core::launch::layers::refusal(launch.confinement.why_off().unwrap_or_default()));
    }
    let command = launch.command()?;
    if !command.accepts_nudges {
        bail!(
            "Claude Code is not installed: run `npm install -g @anthropic-ai/claude-code`, then `paige claude` again"
        );
    }
    let jailed = plan.as_ref().is_some_and(|plan| plan.jail.is_some());
    let layers = match &plan {
        Some(plan) => plan.summary(&project_dir),
        None if launch.scope.is_some() => format!(
            "governed mode WITHOUT an operating-system layer ({}): Paige's hooks hold the scope",
            launch.confinement.why_off().unwrap_or_default()
        ),
        None => "governed mode: Paige's hooks check every call (`paige claude --intent ID` makes only that intent's \
                 folders writable, by construction)"
            .to_owned(),
    };
    let read_only = plan.as_ref().is_some_and(|plan| plan.read_only);
    let scoped = matches!(mode, AgentMode::Governed) && plan.is_some();
    Ok(Prepared { command, jailed, read_only, plan, layers, scoped })
}

/// The running Paige's kickoff for its active session, if it has one to give.
fn kickoff(located: &paige_core::run_info::Located) -> anyhow::Result<Option<String>> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let reply = runtime.block_on(crate::session::request(located, "GET", "/api/session/kickoff", Value::Null))?;
    Ok(reply.get("kickoff").and_then(Value::as_str).map(str::to_owned))
}
