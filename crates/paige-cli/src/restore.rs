//! `paige restore`: the versions of learner files the change detector kept (what a file
//! held before Paige first watched it or the learner changed it, and what a tool call left
//! there before Paige undid it — a new file it made is moved here, never deleted), and
//! bringing one back (its folders too, when they are gone).

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use clap::Args;
use paige_core::db::{Db, VersionKind};
use paige_core::detector::Store;
use paige_core::files::ProjectRoot;

#[derive(Debug, Args)]
pub(crate) struct RestoreArgs {
    /// The version to bring back, by the id `paige restore` lists; without it, list them
    id: Option<i64>,
    /// List only this file's versions (relative to the project)
    #[arg(long, value_name = "PATH")]
    file: Option<String>,
    /// The project [env: PROJECT_DIR] [default: the working directory]
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// Where Paige keeps its database and versions [env: DATA_DIR] [default: ~/.paige/]
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
}

pub(crate) fn run(args: RestoreArgs) -> anyhow::Result<bool> {
    let env: std::collections::HashMap<String, String> = std::env::vars().collect();
    let project = crate::intents::project_dir(args.project)?;
    let data_dir = paige_core::config::data_dir(&env, args.data_dir)?;
    let limits = paige_core::limits::Limits::from_env(&env)?;
    let root = ProjectRoot::with_max_file_bytes(&project, limits.max_file_bytes)
        .with_context(|| format!("cannot open the project {}", project.display()))?;
    let db_path = data_dir.join("paige.db");
    anyhow::ensure!(db_path.exists(), "no Paige database at {}: nothing was kept yet", db_path.display());
    let db = Db::open(&db_path, Arc::new(paige_core::SystemClock))?;
    let Some(id) = args.id else {
        let versions = db.file_versions(root.path(), args.file.as_deref())?;
        if versions.is_empty() {
            println!("no kept versions for {}", root.path().display());
        }
        for v in versions {
            let kind = match v.kind {
                VersionKind::Seen => "before",
                VersionKind::Replaced => "undone",
            };
            // A new file Paige moved out of the project is only here: say so.
            let gone = match root.resolve(&v.path) {
                Ok(file) => !file.abs().exists(),
                Err(_) => false,
            };
            let gone = if gone { "  (not in the project now)" } else { "" };
            println!("{:>6}  {}  {kind:<6}  {:>9}  {}{gone}", v.id, v.created_at, v.size, v.path);
        }
        return Ok(true);
    };
    let store = Store::new(data_dir.join("versions"), limits.max_version_store_bytes);
    let path = paige_core::detector::restore_version(&db, &store, &root, id)?;
    println!("restored {path} to version {id}; what it held is kept too (`paige restore --file {path}`)");
    Ok(true)
}
