//! `paige intake replay [SESSION]`: a recorded intake interview re-run on its own clock. The
//! guard is a pure fold over the stored events, so replaying them with the stored constants
//! shows exactly what the live interview decided and why, without a model or a running Paige.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use clap::{Args, Subcommand};
use paige_core::db::Db;
use paige_core::intake::guard::{self, GuardConfig, GuardState, Timed, Trait};
use serde_json::json;

#[derive(Debug, Args)]
pub(crate) struct IntakeArgs {
    #[command(subcommand)]
    command: IntakeCommand,
}

#[derive(Debug, Subcommand)]
enum IntakeCommand {
    /// Re-run a recorded interview on its own clock: one line per guard action, then the final
    /// state (phase, elapsed, zeroRuns, projectsUsed, stopCheck, conf vs tau, the reasons).
    Replay {
        /// The session whose interview to replay [default: the newest interview]
        session: Option<String>,
        /// Print the actions and the final state as JSON
        #[arg(long)]
        json: bool,
        /// Where Paige keeps its database [env: DATA_DIR] [default: ~/.paige/]
        #[arg(long, value_name = "DIR")]
        data_dir: Option<PathBuf>,
    },
}

pub(crate) fn run(args: IntakeArgs) -> anyhow::Result<bool> {
    let IntakeCommand::Replay { session, json, data_dir } = args.command;
    let recorded = load(data_dir, session)?;
    let (state, actions) = guard::replay(&recorded.config, &recorded.events);
    if json {
        println!("{}", serde_json::to_string_pretty(&as_json(&recorded, &state, &actions))?);
    } else {
        print_text(&recorded, &state);
    }
    Ok(true)
}

/// An interview as stored: its session, constants and events.
struct Recorded {
    session_id: String,
    config: GuardConfig,
    events: Vec<Timed>,
}

/// Reads the interview from `DATA_DIR/paige.db`, as the other offline commands do (SQLite in
/// WAL mode: a running Paige may hold it open).
fn load(data_dir: Option<PathBuf>, session: Option<String>) -> anyhow::Result<Recorded> {
    let env: std::collections::HashMap<String, String> = std::env::vars().collect();
    let data_dir = paige_core::config::data_dir(&env, data_dir)?;
    let db_path = data_dir.join("paige.db");
    anyhow::ensure!(db_path.exists(), "no Paige database at {}: no interviews recorded", db_path.display());
    let db = Db::open(&db_path, Arc::new(paige_core::SystemClock))
        .with_context(|| format!("cannot read the database {}", db_path.display()))?;
    let session_id = match session {
        Some(id) => id,
        None => db.latest_intake_session()?.context("no interviews recorded")?,
    };
    let interview =
        db.intake(&session_id)?.with_context(|| format!("no interview recorded for session {session_id}"))?;
    let config: GuardConfig = serde_json::from_value(interview.config)
        .with_context(|| format!("the interview of session {session_id} has unreadable guard constants"))?;
    let events = db
        .intake_events(&session_id)?
        .into_iter()
        .enumerate()
        .map(|(seq, (at_ms, event))| {
            serde_json::from_value(event)
                .map(|event| Timed { at_ms, event })
                .with_context(|| format!("stored event {seq} of session {session_id} does not parse"))
        })
        .collect::<anyhow::Result<_>>()?;
    Ok(Recorded { session_id, config, events })
}

fn print_text(recorded: &Recorded, state: &GuardState) {
    println!("interview of session {} ({} events)", recorded.session_id, recorded.events.len());
    for line in guard::transcript(&recorded.config, &recorded.events) {
        println!("{line}");
    }
    let phase = serde_json::to_value(state.phase).ok().and_then(|v| v.as_str().map(str::to_owned));
    println!("phase: {}", phase.unwrap_or_default());
    println!("elapsed: {} of {}", guard::mm_ss(state.elapsed_ms), guard::mm_ss(recorded.config.timebox_ms));
    println!("zeroRuns: {}", state.zero_runs);
    println!("projectsUsed: {}", state.projects_used);
    println!("stopCheck: {}", state.stop_check);
    for t in Trait::ALL {
        let name = serde_json::to_value(t).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
        println!("conf {name}: {:.2} vs tau {:.2}", state.confidence.get(t), recorded.config.tau.get(t));
    }
    let all: Vec<&str> = state.reasons.iter().map(|r| r.as_str()).collect();
    println!("reason: {}", state.reason.map_or("none (no transition yet)", |r| r.as_str()));
    println!("reasons: {}", if all.is_empty() { "-".to_owned() } else { all.join(", ") });
}

fn as_json(recorded: &Recorded, state: &GuardState, actions: &[(i64, guard::GuardAction)]) -> serde_json::Value {
    let start = state.started_at_ms.unwrap_or(0);
    let actions: Vec<serde_json::Value> = actions
        .iter()
        .map(|(at, action)| {
            json!({
                "atMs": at,
                "elapsedMs": at.saturating_sub(start),
                "line": guard::describe(at.saturating_sub(start), action),
                "action": action,
            })
        })
        .collect();
    json!({
        "sessionId": recorded.session_id,
        "events": recorded.events.len(),
        "config": recorded.config,
        "actions": actions,
        "state": state,
    })
}
