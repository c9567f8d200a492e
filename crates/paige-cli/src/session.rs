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
    /// Start a coaching session on an issue or on typed work (an active one is wrapped up in
    /// the background)
    #[command(group(clap::ArgGroup::new("work").required(true).multiple(true).args(["issue", "title"])))]
    Start {
        /// The GitHub issue number being worked on (title and body from `gh` when it works)
        #[arg(long, value_name = "N")]
        issue: Option<i64>,
        /// The issue's title, or what you are working on without an issue
        #[arg(long, value_name = "TEXT")]
        title: Option<String>,
        /// More about the work, without an issue
        #[arg(long, value_name = "TEXT")]
        description: Option<String>,
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

pub(crate) fn run(args: SessionArgs) -> anyhow::Result<()> {
    let env: HashMap<String, String> = std::env::vars().collect();
    let target = paige_core::run_info::locate(&env, args.data_dir)?;
    let (method, path, body) = match args.action {
        SessionAction::Start { issue, title, description } => (
            "POST",
            "/api/session/start",
            json!({ "issueNumber": issue, "issueTitle": title, "description": description }),
        ),
        SessionAction::End { status } => {
            let status = match status {
                EndStatus::Completed => "completed",
                EndStatus::Abandoned => "abandoned",
            };
            ("POST", "/api/session/end", json!({ "status": status }))
        }
        SessionAction::Show => ("GET", "/api/session", Value::Null),
    };
    let reply = request_now(&target, method, path, &body)?;
    match reply.get("session") {
        Some(Value::Null) | None => println!("no active session"),
        Some(session) => println!("{}", describe(session)),
    }
    Ok(())
}

/// [`request_now`], for async callers.
pub(crate) async fn request(
    target: &paige_core::run_info::Located,
    method: &str,
    path: &str,
    body: Value,
) -> anyhow::Result<Value> {
    request_now(target, method, path, &body)
}

/// One request to the running Paige over plain HTTP on loopback (`local_http.rs`: no TLS
/// client is built); its JSON answer, or what it refused with.
pub(crate) fn request_now(
    target: &paige_core::run_info::Located,
    method: &str,
    path: &str,
    body: &Value,
) -> anyhow::Result<Value> {
    let body = (method == "POST").then(|| body.to_string());
    let request = crate::local_http::Request {
        method,
        path,
        token: target.token.expose(),
        body: body.as_deref().map(str::as_bytes),
        timeout: Duration::from_secs(10),
        answer_within: false,
    };
    let response = crate::local_http::send(&target.base_url, &request)
        .with_context(|| format!("cannot reach Paige at {} (is `paige serve` still running?)", target.base_url))?;
    let status = response.status;
    let reply: Value =
        serde_json::from_slice(&response.body).with_context(|| format!("Paige answered {status} without JSON"))?;
    if !(200..300).contains(&status) {
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
