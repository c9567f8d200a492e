//! `paige token rotate`: new tokens for the Paige of `DATA_DIR`. They are kept across
//! restarts (`DATA_DIR/tokens.json`, issue 40); rotating is how a learner who showed the
//! `ui:` address to someone, or suspects a leak, makes the old ones worthless. A running
//! Paige rotates and uses the new ones at once; else the next start does.

use std::collections::HashMap;
use std::path::PathBuf;

use clap::{Args, Subcommand};
use serde_json::Value;

#[derive(Debug, Args)]
pub(crate) struct TokenArgs {
    /// Where Paige keeps its data [env: DATA_DIR] [default: ~/.paige/]
    #[arg(long, value_name = "DIR", global = true)]
    data_dir: Option<PathBuf>,
    #[command(subcommand)]
    action: TokenAction,
}

#[derive(Debug, Subcommand)]
enum TokenAction {
    /// Replace the UI and agent tokens; prints the new `ui:` address
    Rotate,
}

pub(crate) fn run(args: TokenArgs) -> anyhow::Result<()> {
    let TokenAction::Rotate = args.action;
    let env: HashMap<String, String> = std::env::vars().collect();
    let data_dir = paige_core::config::data_dir(&env, args.data_dir)?;
    match paige_core::run_info::running(&data_dir)? {
        Some(info) => {
            // The run file's UI token, else (kept in memory only: no OS layer) PAIGE_TOKEN.
            let target = paige_core::run_info::locate_ui(&env, Some(data_dir.clone()))?;
            let reply = crate::session::request_now(&target, "POST", "/api/token/rotate", &Value::Null)?;
            let token = reply.get("token").and_then(Value::as_str).unwrap_or_default();
            println!("ui: http://127.0.0.1:{}/?token={token}", info.port);
            println!(
                "The running Paige (pid {}) uses the new tokens now. Open the address above in the browser; quit Claude Code and start it again with `paige claude`.",
                info.pid
            );
        }
        None => {
            // Kept as the next start will keep them (no UI token on disk without an OS layer).
            let kept = paige_core::launch::jail::Confinement::from_env(&env).ui_token_kept();
            paige_core::token::rotate(&data_dir, kept)?;
            println!(
                "New tokens kept in {}; Paige uses them when it starts.",
                paige_core::token::path(&data_dir).display()
            );
        }
    }
    Ok(())
}
