//! `paige session start|end|show`: drive the running Paige's coaching session without a UI.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Subcommand, ValueEnum};
use serde_json::{Value, json};

#[derive(Debug, Args)]
pub(crate) struct SessionArgs {
    #[command(subcommand)]
    action: SessionAction,
    /// Where the running Paige keeps its run file [env: DATA_DIR] [default: ~/.paige/]
    #[arg(long, value_name = "DIR", global = true)]
    data_dir: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum SessionAction {
    /// Start a coaching session (fails if one is already active)
    Start {
        /// The GitHub issue number being worked on
        #[arg(long, value_name = "N")]
        issue: Option<i64>,
        /// The issue's title
        #[arg(long, value_name = "TEXT")]
        title: Option<String>,
    },
    /// End the active session
    End {
        #[arg(long, value_enum, default_value_t = EndStatus::Completed)]
        status: EndStatus,
    },
    /// Show the active session, if any
    Show,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum EndStatus {
    Completed,
    Abandoned,
}

/// Where the running Paige listens and the token it wants.
struct Target {
    base: String,
    token: String,
}

pub(crate) fn run(args: SessionArgs) -> anyhow::Result<()> {
    let env: HashMap<String, String> = std::env::vars().collect();
    let target = find_paige(&env, args.data_dir)?;
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().context("cannot start the async runtime")?;
    let (method, path, body) = match args.action {
        SessionAction::Start { issue, title } => {
            ("POST", "/api/session/start", json!({ "issueNumber": issue, "issueTitle": title }))
        }
        SessionAction::End { status } => {
            let status = match status {
                EndStatus::Completed => "completed",
                EndStatus::Abandoned => "abandoned",
            };
            ("POST", "/api/session/end", json!({ "status": status }))
        }
        SessionAction::Show => ("GET", "/api/session", Value::Null),
    };
    let reply = runtime.block_on(request(&target, method, path, body))?;
    match reply.get("session") {
        Some(Value::Null) | None => println!("no active session"),
        Some(session) => println!("{}", describe(session)),
    }
    Ok(())
}

fn find_paige(env: &HashMap<String, String>, data_dir: Option<PathBuf>) -> anyhow::Result<Target> {
    if let (Some(url), Some(token)) = (env.get("PAIGE_URL"), env.get("PAIGE_TOKEN")) {
        return Ok(Target { base: url.trim_end_matches('/').to_owned(), token: token.clone() });
    }
    let data_dir = paige_core::config::data_dir(env, data_dir)?;
    match paige_core::run_info::read(&data_dir)? {
        Some(info) => Ok(Target { base: format!("http://127.0.0.1:{}", info.port), token: info.token }),
        None => bail!(
            "no running Paige found ({} does not exist); start one with `paige serve`",
            paige_core::run_info::path(&data_dir).display()
        ),
    }
}

async fn request(target: &Target, method: &str, path: &str, body: Value) -> anyhow::Result<Value> {
    let client = reqwest::Client::builder().timeout(Duration::from_secs(10)).build()?;
    let url = format!("{}{path}", target.base);
    let builder = match method {
        "POST" => client.post(&url).json(&body),
        _ => client.get(&url),
    };
    let response = builder
        .bearer_auth(&target.token)
        .send()
        .await
        .with_context(|| format!("cannot reach Paige at {} (is `paige serve` still running?)", target.base))?;
    let status = response.status();
    let reply: Value = response.json().await.with_context(|| format!("Paige answered {status} without JSON"))?;
    if !status.is_success() {
        bail!("{}", reply.get("error").and_then(Value::as_str).unwrap_or("request failed"));
    }
    Ok(reply)
}

fn describe(session: &Value) -> String {
    let field = |k: &str| session.get(k).and_then(Value::as_str).unwrap_or("?").to_owned();
    let issue =
        match (session.get("issue_number").and_then(Value::as_i64), session.get("issue_title").and_then(Value::as_str))
        {
            (Some(n), Some(t)) => format!(" — issue #{n}: {t}"),
            (Some(n), None) => format!(" — issue #{n}"),
            (None, Some(t)) => format!(" — {t}"),
            (None, None) => String::new(),
        };
    format!("session {} {}{issue} (started {})", field("id"), field("status"), field("started_at"))
}
