//! `paige record export|verify|pubkey`: the learning record (issue 31; the format is in
//! paige-core's `record/`), offline. Export reads `DATA_DIR/paige.db` directly (SQLite in WAL
//! mode: a running Paige may hold it open) and signs with `DATA_DIR/record-key`, made on first
//! use; verify needs nothing but the file (and, pinned, the learner's public key).

use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use chrono::{DateTime, NaiveDate, Utc};
use clap::{Args, Subcommand};
use paige_core::Clock;
use paige_core::db::Db;
use paige_core::record;

#[derive(Debug, Args)]
pub(crate) struct RecordArgs {
    #[command(subcommand)]
    command: RecordCommand,
}

#[derive(Debug, Subcommand)]
enum RecordCommand {
    /// Write the signed learning record (JSON Lines) to FILE, or to standard output; a
    /// one-line summary goes to standard error.
    Export {
        /// Only what happened since this day (UTC), YYYY-MM-DD [default: everything]
        #[arg(long, value_name = "YYYY-MM-DD", value_parser = parse_day)]
        since: Option<DateTime<Utc>>,
        /// Where to write it [default: standard output]
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Where Paige keeps its database and key [env: DATA_DIR] [default: ~/.paige/]
        #[arg(long, value_name = "DIR")]
        data_dir: Option<PathBuf>,
    },
    /// Check a learning record offline: its hash chain and its signature. Exits 0 when valid,
    /// 1 naming the first bad line.
    Verify {
        /// The record to check
        file: PathBuf,
        /// The public key (64 hex digits) it must be signed with: the one `paige record
        /// pubkey` printed on the learner's machine [default: the key in its header]
        #[arg(long, value_name = "HEX")]
        key: Option<String>,
        /// When the record is valid, print only the key that signed it (64 hex digits): the
        /// key a mentor pins for the learner's later records
        #[arg(long)]
        pubkey: bool,
    },
    /// Print this machine's public key, to give to whoever checks your records (they pin it
    /// with `verify --key`); creates the key if there is none.
    Pubkey {
        /// Where Paige keeps its key [env: DATA_DIR] [default: ~/.paige/]
        #[arg(long, value_name = "DIR")]
        data_dir: Option<PathBuf>,
    },
}

pub(crate) fn run(args: RecordArgs) -> anyhow::Result<bool> {
    match args.command {
        RecordCommand::Export { since, out, data_dir } => export(since, out.as_deref(), data_dir),
        RecordCommand::Verify { file, key, pubkey } => verify(&file, key.as_deref(), pubkey),
        RecordCommand::Pubkey { data_dir } => {
            let key = record::load_or_create_key(&data_dir_of(data_dir)?)?;
            println!("{}", hex_key(&key.verifying_key()));
            Ok(true)
        }
    }
}

fn export(since: Option<DateTime<Utc>>, out: Option<&Path>, data_dir: Option<PathBuf>) -> anyhow::Result<bool> {
    let data_dir = data_dir_of(data_dir)?;
    let db_path = data_dir.join("paige.db");
    anyhow::ensure!(db_path.exists(), "no Paige database at {}: nothing recorded yet", db_path.display());
    let clock = Arc::new(paige_core::SystemClock);
    let db =
        Db::open(&db_path, clock.clone()).with_context(|| format!("cannot read the database {}", db_path.display()))?;
    let key = record::load_or_create_key(&data_dir)?;
    let now = clock.now();
    let (summary, written_to) = match out {
        None => {
            let mut stdout = std::io::stdout().lock();
            (record::export(&db, &key, since, now, &mut stdout)?, "standard output".to_owned())
        }
        Some(path) => {
            // Written beside the target and renamed into place: a failed export leaves no
            // half-written record behind.
            let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            let mut tmp = tempfile::NamedTempFile::new_in(dir)
                .with_context(|| format!("cannot create a file in {}", dir.display()))?;
            let summary = record::export(&db, &key, since, now, tmp.as_file_mut())?;
            tmp.as_file_mut().sync_all().with_context(|| format!("cannot write {}", path.display()))?;
            tmp.persist(path).with_context(|| format!("cannot write {}", path.display()))?;
            (summary, path.display().to_string())
        }
    };
    eprintln!(
        "learning record: {} lines, {} sessions, written to {written_to}, signed by key {}",
        summary.lines, summary.sessions, summary.public_key
    );
    std::io::stderr().flush().ok();
    Ok(true)
}

fn verify(path: &Path, key: Option<&str>, only_key: bool) -> anyhow::Result<bool> {
    let pinned = key.map(record::parse_public_key).transpose()?;
    let file = std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    match record::verify(BufReader::with_capacity(256 << 10, file), pinned.as_ref()) {
        Ok(verified) if only_key => {
            println!("{}", verified.public_key);
            Ok(true)
        }
        Ok(verified) => {
            let signer = if pinned.is_some() { "the pinned key" } else { "key" };
            println!(
                "{}: valid learning record, {} lines, {} sessions, exported {}{}, signed by {signer} {}",
                path.display(),
                verified.lines,
                verified.sessions,
                verified.exported_at,
                verified.since.map(|s| format!(" (since {s})")).unwrap_or_default(),
                verified.public_key,
            );
            if pinned.is_none() {
                println!(
                    "check that key is the learner's (`paige record pubkey` on their machine), or pin it with --key"
                );
            }
            Ok(true)
        }
        Err(err) => {
            println!("{}: NOT a valid learning record: {err}", path.display());
            Ok(false)
        }
    }
}

fn data_dir_of(flag: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    let env: std::collections::HashMap<String, String> = std::env::vars().collect();
    Ok(paige_core::config::data_dir(&env, flag)?)
}

fn parse_day(text: &str) -> Result<DateTime<Utc>, String> {
    NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .ok()
        .and_then(|day| day.and_hms_opt(0, 0, 0))
        .map(|midnight| midnight.and_utc())
        .ok_or_else(|| format!("{text:?} is not a day as YYYY-MM-DD"))
}

fn hex_key(key: &record::VerifyingKey) -> String {
    key.to_bytes().iter().map(|b| format!("{b:02x}")).collect()
}
