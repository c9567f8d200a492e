//! `paige memory add|query|stats`: what Paige remembers, for the configured project. Asks the
//! running Paige (`/api/memory`) when there is one, so its store and model serve the answer;
//! otherwise opens the store itself (the embedded store in DATA_DIR/paige.db, or ChromaDB at
//! CHROMADB_URL).

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, Subcommand};
use paige_core::memory::{
    Importance, Memory, MemoryInput, MemoryResult, MemoryStats, MemoryStatus, Origin, ProjectName,
};
use serde_json::{Value, json};

#[derive(Debug, Args)]
pub(crate) struct MemoryArgs {
    #[command(subcommand)]
    command: MemoryCommand,
    /// The project the memories belong to [env: PROJECT_DIR] [default: the working directory]
    #[arg(long, value_name = "DIR", global = true)]
    project: Option<PathBuf>,
    /// Where Paige keeps its database and run file [env: DATA_DIR] [default: ~/.paige/]
    #[arg(long, value_name = "DIR", global = true)]
    data_dir: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum MemoryCommand {
    /// Remember TEXT for this project
    Add {
        text: String,
        /// Comma-separated tags, e.g. auth,oauth
        #[arg(long, value_delimiter = ',')]
        tags: Vec<String>,
        /// low, medium or high
        #[arg(long, default_value = "medium", value_parser = parse_importance)]
        importance: Importance,
    },
    /// The memories nearest to TEXT, best first, one per line with its distance
    Query {
        text: String,
        /// How many results
        #[arg(short = 'n', long, default_value_t = paige_core::memory::DEFAULT_RESULTS)]
        n: usize,
        /// Search every project's memories, not only this project's
        #[arg(long)]
        all_projects: bool,
    },
    /// Which store and model are in use, and how many memories each project has
    Stats,
}

fn parse_importance(text: &str) -> Result<Importance, String> {
    text.parse()
}

pub(crate) fn run(args: MemoryArgs) -> anyhow::Result<bool> {
    let env: HashMap<String, String> = std::env::vars().collect();
    let project = ProjectName::of(&crate::intents::project_dir(args.project)?);
    let paige = paige_core::run_info::locate(&env, args.data_dir.clone()).ok();
    let reply = match &paige {
        Some(target) => match ask(target, &args.command, &project) {
            Ok(reply) => Some(reply),
            Err(Unreachable(err)) => {
                eprintln!("note: the running Paige did not answer ({err:#}); opening the store directly");
                None
            }
        },
        None => None,
    };
    let reply = match reply {
        Some(reply) => reply?,
        None => locally(&env, args.data_dir, &args.command, &project)?,
    };
    Ok(print(&args.command, &project, reply))
}

/// What a command answered, from the running Paige or the store itself.
enum Reply {
    Added(usize),
    Found { results: Vec<MemoryResult>, available: bool },
    Stats { status: MemoryStatus, stats: Option<MemoryStats> },
}

struct Unreachable(anyhow::Error);

/// Paige's answer, over plain HTTP on loopback (`local_http.rs`: no TLS client is built).
fn ask(
    target: &paige_core::run_info::Located,
    command: &MemoryCommand,
    project: &ProjectName,
) -> Result<anyhow::Result<Reply>, Unreachable> {
    let (method, path, body) = match command {
        MemoryCommand::Add { text, tags, importance } => (
            "POST",
            "/api/memory/add",
            Some(
                json!({ "memories": [{ "content": text, "tags": tags, "importance": importance }], "project": project }),
            ),
        ),
        MemoryCommand::Query { text, n, all_projects } => {
            let project = (!all_projects).then_some(&project.name);
            ("POST", "/api/memory/query", Some(json!({ "queryText": text, "nResults": n, "project": project })))
        }
        MemoryCommand::Stats => ("GET", "/api/memory/stats", None),
    };
    let body = body.map(|body| body.to_string());
    let request = crate::local_http::Request {
        method,
        path,
        token: target.token.expose(),
        body: body.as_deref().map(str::as_bytes),
        timeout: Duration::from_secs(60),
        answer_within: false,
    };
    let response = crate::local_http::send(&target.base_url, &request).map_err(Unreachable)?;
    let status = response.status;
    let body: Value = match serde_json::from_slice(&response.body) {
        Ok(body) => body,
        Err(err) => return Ok(Err(anyhow::anyhow!("Paige answered {status} without JSON: {err}"))),
    };
    if !(200..300).contains(&status) {
        let message = body.get("error").and_then(Value::as_str).unwrap_or("request failed");
        return Ok(Err(anyhow::anyhow!("Paige refused: {message}")));
    }
    Ok(decode(command, body))
}

fn decode(command: &MemoryCommand, body: Value) -> anyhow::Result<Reply> {
    let field = |name: &str| body.get(name).cloned().unwrap_or(Value::Null);
    Ok(match command {
        MemoryCommand::Add { .. } => Reply::Added(serde_json::from_value(field("added"))?),
        MemoryCommand::Query { .. } => Reply::Found {
            results: serde_json::from_value(field("results"))?,
            available: field("available").as_bool().unwrap_or(false),
        },
        MemoryCommand::Stats => Reply::Stats {
            status: serde_json::from_value(field("status"))?,
            stats: serde_json::from_value(field("stats"))?,
        },
    })
}

/// No running Paige: the store for this DATA_DIR (and CHROMADB_URL, PAIGE_MODEL_DIR), opened here.
fn locally(
    env: &HashMap<String, String>,
    data_dir: Option<PathBuf>,
    command: &MemoryCommand,
    project: &ProjectName,
) -> anyhow::Result<Reply> {
    let _ = tracing_subscriber::fmt().with_writer(std::io::stderr).with_env_filter("warn").without_time().try_init();
    let data_dir = paige_core::config::data_dir(env, data_dir)?;
    let mut config = paige_core::Config::new(PathBuf::from(&project.path), data_dir, "");
    let var = |name: &str| env.get(name).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
    config.chromadb_url = var("CHROMADB_URL");
    config.model_dir = var("PAIGE_MODEL_DIR").map(PathBuf::from);
    std::fs::create_dir_all(&config.data_dir)
        .with_context(|| format!("cannot create {}", config.data_dir.display()))?;
    let memory: Memory = paige_memory::open(&config, &[]);
    memory.connect();
    Ok(match command {
        MemoryCommand::Add { text, tags, importance } => {
            let input = MemoryInput { content: text.clone(), tags: tags.clone(), importance: *importance };
            Reply::Added(memory.add_memories(&[input], &Origin::Cli, project, chrono_now()).added)
        }
        MemoryCommand::Query { text, n, all_projects } => {
            let scope = (!all_projects).then_some(project.name.as_str());
            let results = memory.query_memories(text, Some(*n), scope);
            Reply::Found { results, available: memory.is_available() }
        }
        MemoryCommand::Stats => Reply::Stats { stats: memory.stats(), status: memory.status() },
    })
}

fn chrono_now() -> chrono::DateTime<chrono::Utc> {
    chrono::Utc::now()
}

/// Prints the reply; false (exit 1) when memory could not do what was asked.
fn print(command: &MemoryCommand, project: &ProjectName, reply: Reply) -> bool {
    match reply {
        Reply::Added(0) => {
            eprintln!(
                "error: nothing was remembered: memory is unavailable (see the warnings above, or `paige doctor`)"
            );
            false
        }
        Reply::Added(n) => {
            println!("remembered {n} for {}", project.name);
            true
        }
        Reply::Found { results, available } => {
            if !available {
                eprintln!("error: memory is unavailable (see the warnings above, or `paige doctor`)");
                return false;
            }
            if results.is_empty() {
                let scope = match command {
                    MemoryCommand::Query { all_projects: true, .. } => "any project".to_owned(),
                    _ => project.name.clone(),
                };
                println!("no memories for {scope}");
            }
            for result in results {
                let tags = if result.metadata.tags.is_empty() {
                    String::new()
                } else {
                    format!(" [{}]", result.metadata.tags)
                };
                println!(
                    "{:.3}  {}  {}{tags}",
                    result.distance,
                    result.metadata.project,
                    result.content.replace('\n', " ")
                );
            }
            true
        }
        Reply::Stats { status, stats } => {
            println!("store: {} ({})", status.store, status.location);
            match (&status.model, &status.model_problem) {
                (Some(model), _) => println!("model: {model}"),
                (None, Some(problem)) => println!("model: none — {problem}"),
                (None, None) => println!("model: none"),
            }
            let Some(stats) = stats.filter(|_| status.available) else {
                println!("memory: unavailable");
                return false;
            };
            println!("memories: {} ({} without a vector, found by keywords only)", stats.total, stats.without_vectors);
            for (name, count) in stats.projects {
                println!("  {count:>6}  {name}");
            }
            true
        }
    }
}
