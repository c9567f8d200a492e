//! `paige intents init|list|show|reset` and `paige blame`: work on `.orchestration/` files
//! directly, so they run whether or not Paige is running.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use paige_core::governance::intents::{Orchestration, TRACE_FILE};
use paige_core::governance::{IntentStatus, ledger};

use crate::{BlameArgs, IntentsArgs, IntentsCommand};

pub(crate) fn project_dir(flag: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    match flag.or_else(|| std::env::var_os("PROJECT_DIR").map(PathBuf::from)) {
        Some(dir) => Ok(dir),
        None => std::env::current_dir().context("cannot read the working directory"),
    }
}

pub fn run(args: IntentsArgs) -> anyhow::Result<bool> {
    let project = project_dir(args.project)?;
    let orch = Orchestration::new(&project);
    match args.command {
        IntentsCommand::Init => {
            let created = orch.init()?;
            if created.is_empty() {
                println!("{} already has every governance file", orch.dir().display());
            }
            for path in created {
                println!("created {}", path.display());
            }
            println!(
                "edit {} to describe the work; agents must select an intent before acting",
                orch.intents_path().display()
            );
        }
        IntentsCommand::List => {
            let file = orch.load()?;
            if file.active_intents.is_empty() {
                println!("no intents in {}", orch.intents_path().display());
            }
            for intent in &file.active_intents {
                println!(
                    "{}\t{}\t{}\t{}",
                    intent.id,
                    intent.status.as_str(),
                    intent.name,
                    intent.owned_scope.join(", ")
                );
            }
        }
        IntentsCommand::Show { id } => {
            let file = orch.load()?;
            let intent = file.get(&id).with_context(|| format!("unknown intent {id}"))?;
            let entries = ledger::read_all(&orch.trace_path())?;
            println!("{} — {}\nstatus: {}", intent.id, intent.name, intent.status.as_str());
            println!("owned_scope: {}", intent.owned_scope.join(", "));
            println!("constraints: {}", intent.constraints.join("; "));
            println!("acceptance_criteria: {}", intent.acceptance_criteria.join("; "));
            if let Some(budget) = &intent.budget {
                println!("budget: turns {:?}, tokens {:?}", budget.turns, budget.tokens);
            }
            println!("history: {}", ledger::summary(&entries, &intent.id, 10).trim_end());
        }
        IntentsCommand::Reset { id } => {
            let mut file = orch.load()?;
            let intent = file.get_mut(&id).with_context(|| format!("unknown intent {id}"))?;
            if intent.status == IntentStatus::Completed {
                bail!("intent {id} is COMPLETED; edit {} to reopen it", orch.intents_path().display());
            }
            let was = intent.status.as_str();
            intent.status = IntentStatus::InProgress;
            orch.save(&file)?;
            reset_usage(&project, &id)?;
            println!("{id}: {was} -> IN_PROGRESS; its turn count starts again from zero");
        }
    }
    Ok(true)
}

/// `paige ledger verify`.
pub fn ledger(args: crate::LedgerArgs) -> anyhow::Result<bool> {
    let project = project_dir(args.project)?;
    let path = Orchestration::new(&project).trace_path();
    match args.command {
        crate::LedgerCommand::Verify => {
            let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
            match ledger::verify(&text) {
                Ok(lines) => {
                    println!("{}: {lines} lines, the hash chain is intact", path.display());
                    Ok(true)
                }
                Err(broken) => {
                    println!("{}: BROKEN at {broken}; every line from there on is unverified", path.display());
                    Ok(false)
                }
            }
        }
    }
}

/// Clears the intent's turn count in Paige's database, when there is one.
fn reset_usage(project: &Path, id: &str) -> anyhow::Result<()> {
    let data_dir = match std::env::var_os("DATA_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => match std::env::var_os("HOME") {
            Some(home) => PathBuf::from(home).join(".paige"),
            None => return Ok(()),
        },
    };
    let db_path = data_dir.join("paige.db");
    if !db_path.exists() {
        return Ok(());
    }
    let db = paige_core::db::Db::open(&db_path, std::sync::Arc::new(paige_core::SystemClock))?;
    let project = project.canonicalize().unwrap_or_else(|_| project.to_owned());
    db.reset_intent_usage(&project, id)?;
    Ok(())
}

pub fn blame(args: BlameArgs) -> anyhow::Result<bool> {
    let project = project_dir(args.project)?;
    let (file, line) = args
        .target
        .rsplit_once(':')
        .and_then(|(f, l)| l.parse::<usize>().ok().map(|l| (f.to_owned(), l)))
        .with_context(|| format!("expected <file>:<line>, got {:?}", args.target))?;
    let path = if Path::new(&file).is_absolute() { PathBuf::from(&file) } else { project.join(&file) };
    let content = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let orch = Orchestration::new(&project);
    let entries = ledger::read_all(&orch.trace_path())?;
    match ledger::blame(&entries, &content, line) {
        Some(hit) => {
            let e = &hit.entry;
            let how = if hit.exact { "exact content hash" } else { "whitespace-normalized hash" };
            println!(
                "{file}:{line} — intent {} ({} by session {}, model {}, at {}; first recorded in {}; {how})",
                e.intent_id.as_deref().unwrap_or("none"),
                e.tool,
                e.session_id,
                e.model.as_deref().unwrap_or("unknown"),
                e.timestamp.to_rfc3339(),
                e.file.as_deref().unwrap_or("?"),
            );
            Ok(true)
        }
        None => {
            println!("{file}:{line} — no mutation in {TRACE_FILE} produced this line");
            Ok(false)
        }
    }
}
