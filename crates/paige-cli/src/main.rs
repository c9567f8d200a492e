//! `paige`: the command-line face of Paige.

mod claude;
mod claude_pty;
mod confine;
mod doctor;
mod gate;
mod guard;
mod hook;
mod intake;
mod intents;
mod local_http;
mod memory;
mod record;
mod restore;
mod serve;
mod session;
mod token;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "paige", version, about = "Paige, a coding coach that never writes your code for you")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run Paige without a window: the core plus its localhost server (/health, /mcp, /ws).
    ///
    /// Settings come from the environment, then `.env` in the working directory; flags win
    /// over both. Required: PROJECT_DIR (or --project) and ANTHROPIC_API_KEY. Optional:
    /// PORT (3000), DATA_DIR (~/.paige/), CHROMADB_URL, PAIGE_TOKEN (else the UI token kept in
    /// DATA_DIR/tokens.json behind an OS layer, or a new one at each start without one).
    Serve(ServeArgs),
    /// Run Claude Code for the running Paige, exactly as the app's terminal does: Paige's MCP
    /// server and hooks, the coach persona and, in coach mode, a read-only view of the
    /// project (bubblewrap). Arguments after it go to `claude` (`paige claude -p "…"`).
    ///
    /// Finds Paige through DATA_DIR/run/server.json. The way to coach with `paige serve`
    /// and the browser UI: run it in a terminal beside them.
    Claude(claude::ClaudeArgs),
    /// Check that Paige can run here: configuration, DATA_DIR, the database, and the
    /// Anthropic API key; with --guard, that coach mode keeps the learner's files theirs.
    ///
    /// The key is checked with the cheapest authenticated request (listing one model; no
    /// model runs) against ANTHROPIC_BASE_URL (default https://api.anthropic.com). Prints one
    /// line per check and exits 1 if any check fails.
    ///
    /// --guard drives the installed `claude` (exactly as `paige claude` runs it) with a
    /// scripted model on loopback through a fixed attack script against a scratch copy of a
    /// sample project: no key, no tokens. One line per attempt, HELD or ESCAPED with what
    /// changed; exits 1 if any escaped.
    Doctor(DoctorArgs),
    /// Start, end or show the coaching session of the running Paige, without a UI.
    ///
    /// Finds Paige through PAIGE_URL and PAIGE_TOKEN, else DATA_DIR/run/server.json.
    Session(session::SessionArgs),
    /// Run by Claude Code for a hook event: reads the event JSON on stdin, asks the running
    /// Paige, prints the decision in Claude Code's format.
    ///
    /// Events: session-start, user-prompt-submit, pre-tool-use, post-tool-use,
    /// post-tool-use-failure, stop, pre-compact, session-end. Finds Paige through PAIGE_URL and
    /// PAIGE_TOKEN, else DATA_DIR/run/server.json. Prints nothing when Paige has no objection.
    /// A PreToolUse of a mutating tool that cannot be checked (Paige down, slow, broken) is
    /// denied: exit 2 with the reason on stderr. PAIGE_HOOK_TIMEOUT_MS sets the wait (3000).
    Hook(HookArgs),
    /// The tokens of the Paige in DATA_DIR, kept across restarts in DATA_DIR/tokens.json:
    /// `paige token rotate` replaces them (at once in a running Paige) and prints the new
    /// `ui:` address.
    Token(token::TokenArgs),
    /// Create and manage the governance intents in .orchestration/active_intents.yaml.
    Intents(IntentsArgs),
    /// Check the audit ledger, .orchestration/agent_trace.jsonl: `paige ledger verify` checks
    /// every line's hash and its chain to the line before, and exits 1 naming the first
    /// broken line.
    Ledger(LedgerArgs),
    /// List the versions of your files Paige kept, or bring one back: `paige restore` lists
    /// (id, time, before/undone, size, path), `paige restore <id>` restores that version.
    ///
    /// Paige keeps what a file held before a tool call changed it and what the call left
    /// there before Paige undid it, in DATA_DIR/versions/.
    Restore(restore::RestoreArgs),
    /// What Paige remembers across sessions: `paige memory add TEXT [--tags a,b]
    /// [--importance low|medium|high]`, `paige memory query TEXT [-n N] [--all-projects]`
    /// (best first, with distances), `paige memory stats`.
    ///
    /// For the project in PROJECT_DIR or --project (default: the working directory). Asks the
    /// running Paige when there is one; else opens the store itself: ChromaDB at CHROMADB_URL,
    /// or the embedded store in DATA_DIR/paige.db, with the model from PAIGE_MODEL_DIR (default
    /// DATA_DIR/models).
    Memory(memory::MemoryArgs),
    /// Which intent produced a line: `paige blame src/app.rs:42`, matched by content hash in
    /// .orchestration/agent_trace.jsonl, also after the block moved.
    Blame(BlameArgs),
    /// The intake interview: `paige intake replay [SESSION] [--json]` re-runs a recorded
    /// interview (default: the newest) on its own clock and prints each guard action and the
    /// final state, from DATA_DIR/paige.db.
    Intake(intake::IntakeArgs),
    /// Your learning record, signed, for a mentor, course or employer: `paige record export
    /// [--since YYYY-MM-DD] [--out FILE]`, `paige record verify FILE [--key HEX]` (exits 1
    /// naming the first bad line), `paige record pubkey` (the key to pin).
    ///
    /// The record is JSON Lines, each line chained to the one before by its SHA-256, signed
    /// with an Ed25519 key kept in DATA_DIR/record-key (0600, made on first export). Export
    /// reads DATA_DIR/paige.db; verify works offline on the file alone.
    Record(record::RecordArgs),
    /// Apply a confinement policy (Landlock, seccomp, capabilities; JSON) to this process and
    /// exec the program after `--`: how the launcher confines Claude Code without a user
    /// namespace. Exits 126 naming what could not be applied.
    #[command(hide = true)]
    Confine(confine::ConfineArgs),
    /// Run the program after `--` (the jail) with Paige's gate on a UNIX socket: its only way
    /// out, to the destinations allowed (`paige_core::launch::gate`).
    #[command(hide = true)]
    Gate(gate::GateArgs),
    /// Inside the jail: pass loopback ports and an HTTPS proxy on to Paige's gate.
    #[command(hide = true)]
    Relay(gate::RelayArgs),
}

#[derive(Debug, Args)]
struct HookArgs {
    /// The hook event, e.g. pre-tool-use (Claude Code's PreToolUse is accepted too)
    event: String,
}

#[derive(Debug, Args)]
pub(crate) struct IntentsArgs {
    /// The project [env: PROJECT_DIR] [default: the working directory]
    #[arg(long, value_name = "DIR", global = true)]
    project: Option<PathBuf>,
    #[command(subcommand)]
    command: IntentsCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum IntentsCommand {
    /// Create .orchestration/ with an example intent, an empty ledger and intent map.
    Init,
    /// One line per intent: id, status, name, scope.
    List,
    /// An intent's scope, constraints, criteria, budget and recent history.
    Show {
        /// The intent id, e.g. INT-001
        id: String,
    },
    /// Set a BLOCKED (or PENDING) intent back to IN_PROGRESS and clear its turn count: the
    /// human's way out of a circuit breaker or budget trip.
    Reset {
        /// The intent id, e.g. INT-001
        id: String,
    },
}

#[derive(Debug, Args)]
pub(crate) struct BlameArgs {
    /// <file>:<line>, the file relative to the project
    target: String,
    /// The project [env: PROJECT_DIR] [default: the working directory]
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct LedgerArgs {
    /// The project [env: PROJECT_DIR] [default: the working directory]
    #[arg(long, value_name = "DIR", global = true)]
    project: Option<PathBuf>,
    #[command(subcommand)]
    command: LedgerCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum LedgerCommand {
    /// Check every line's hash and chain; exit 1 naming the first broken line.
    Verify,
}

#[derive(Debug, Args)]
struct DoctorArgs {
    /// The project to check with [env: PROJECT_DIR]
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// Where Paige keeps its database and run files [env: DATA_DIR] [default: ~/.paige/]
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    #[command(flatten)]
    guard: doctor::GuardArgs,
}

#[derive(Debug, Args)]
struct ServeArgs {
    /// The project to coach on [env: PROJECT_DIR]
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// Port on 127.0.0.1; 0 picks a free one [env: PORT] [default: 3000]
    #[arg(long, value_name = "N")]
    port: Option<u16>,
    /// Where Paige keeps its database and run files [env: DATA_DIR] [default: ~/.paige/]
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// The built web UI to serve at / (a Vite `dist` folder) [env: PAIGE_UI_DIR]
    /// [default: ./ui/dist, else the checkout's ui/dist]
    #[arg(long, value_name = "DIR", env = "PAIGE_UI_DIR")]
    ui_dir: Option<PathBuf>,
}

fn main() -> ExitCode {
    paige_core::limits::cap_malloc_arenas();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Serve(args) => serve::run(args).map(|()| true),
        Command::Claude(args) => claude::run(args),
        Command::Doctor(args) => doctor::run(args),
        Command::Session(args) => session::run(args).map(|()| true),
        Command::Token(args) => token::run(args).map(|()| true),
        Command::Hook(args) => return hook::run(&args.event),
        Command::Confine(args) => return confine::run(args),
        Command::Gate(args) => return gate::run_gate(args),
        Command::Relay(args) => return gate::run_relay(args),
        Command::Intents(args) => intents::run(args),
        Command::Blame(args) => intents::blame(args),
        Command::Restore(args) => restore::run(args),
        Command::Memory(args) => memory::run(args),
        Command::Ledger(args) => intents::ledger(args),
        Command::Intake(args) => intake::run(args),
        Command::Record(args) => record::run(args),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
