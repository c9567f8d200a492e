//! The audit ledger, `.orchestration/agent_trace.jsonl`: one JSON line per mutation, denial
//! or breaker trip, each carrying the SHA-256 of the previous line's hash so an edit or a
//! deletion anywhere breaks the chain. Appends are one `write` plus `fsync`, so a crash
//! never leaves a torn line.

use crate::sync::Locked;
use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::GovernanceError;

/// The hash the first line chains to.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceKind {
    Mutation,
    Denial,
    Breaker,
}

/// One block of lines a mutation wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Block {
    pub start_line: i64,
    pub end_line: i64,
    /// SHA-256 of the block's exact text as written.
    pub content_hash: String,
    /// SHA-256 of the block with every whitespace run collapsed to one space.
    pub normalized_hash: String,
    /// SHA-256 of the block with all whitespace removed: the same after a formatter reflowed
    /// it (line breaks and indentation). Absent in entries older than it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compact_hash: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceEntry {
    pub id: String,
    pub timestamp: DateTime<Utc>,
    pub kind: TraceKind,
    pub intent_id: Option<String>,
    pub session_id: String,
    pub model: Option<String>,
    pub tool: String,
    pub file: Option<String>,
    #[serde(default)]
    pub blocks: Vec<Block>,
    /// SHA-256 of the whole file after the mutation.
    pub file_hash: Option<String>,
    pub command: Option<String>,
    pub reason: Option<String>,
    pub prev_hash: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
}

/// What a caller supplies; the ledger adds id-free chain fields.
#[derive(Debug, Clone)]
pub struct NewTrace {
    pub id: String,
    pub timestamp: DateTime<Utc>,
    pub kind: TraceKind,
    pub intent_id: Option<String>,
    pub session_id: String,
    pub model: Option<String>,
    pub tool: String,
    pub file: Option<String>,
    pub blocks: Vec<Block>,
    pub file_hash: Option<String>,
    pub command: Option<String>,
    pub reason: Option<String>,
}

pub use crate::files::sha256_hex;

pub fn normalize_ws(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The text without any whitespace.
pub fn compact(text: &str) -> String {
    text.split_whitespace().collect()
}

/// The block `text` as found in `file_content` (first occurrence), with its hashes.
/// The blocks a change wrote: each run of lines of `after` that `before` did not have
/// (inserted or replaced), hashed as [`locate_block`] hashes a write tool's text. What a
/// Bash command or another server's tool changed is ledgered with these (US3's re-linking
/// follows them).
pub fn changed_blocks(before: &str, after: &str) -> Vec<Block> {
    let diff = similar::TextDiff::from_lines(before, after);
    let lines: Vec<&str> = after.split_inclusive('\n').collect();
    let mut blocks = Vec::new();
    for op in diff.ops() {
        let range = op.new_range();
        if matches!(op.tag(), similar::DiffTag::Equal | similar::DiffTag::Delete) || range.is_empty() {
            continue;
        }
        let text: String = lines.get(range.start..range.end.min(lines.len())).unwrap_or_default().concat();
        if text.trim().is_empty() {
            continue;
        }
        blocks.push(Block {
            start_line: range.start as i64 + 1,
            end_line: range.end as i64,
            content_hash: sha256_hex(text.as_bytes()),
            normalized_hash: sha256_hex(normalize_ws(&text).as_bytes()),
            compact_hash: Some(sha256_hex(compact(&text).as_bytes())),
        });
    }
    blocks
}

pub fn locate_block(file_content: &str, text: &str) -> Option<Block> {
    if text.trim().is_empty() {
        return None;
    }
    let offset = file_content.find(text)?;
    let start_line = file_content[..offset].matches('\n').count() as i64 + 1;
    let lines_in_block = text.trim_end_matches('\n').matches('\n').count() as i64 + 1;
    Some(Block {
        start_line,
        end_line: start_line + lines_in_block - 1,
        content_hash: sha256_hex(text.as_bytes()),
        normalized_hash: sha256_hex(normalize_ws(text).as_bytes()),
        compact_hash: Some(sha256_hex(compact(text).as_bytes())),
    })
}

impl TraceEntry {
    fn chain_hash(&self) -> Result<String, serde_json::Error> {
        let mut unhashed = self.clone();
        unhashed.hash = None;
        Ok(sha256_hex(serde_json::to_string(&unhashed)?.as_bytes()))
    }
}

/// One process appends at a time; reading the last hash and writing the line are one step.
static APPEND_LOCK: Mutex<()> = Mutex::new(());

/// Appends one line chained to the last parseable one, in one `write`, then `fsync`s.
pub fn append(path: &Path, new: NewTrace) -> Result<TraceEntry, GovernanceError> {
    let io = |source| GovernanceError::Io { path: path.to_owned(), source };
    let _guard = APPEND_LOCK.locked();
    let mut file = super::open_sidecar(path, true).map_err(io)?;
    let prev_hash = last_hash(&mut file).map_err(io)?.unwrap_or_else(|| GENESIS.to_owned());
    let mut entry = TraceEntry {
        id: new.id,
        timestamp: new.timestamp,
        kind: new.kind,
        intent_id: new.intent_id,
        session_id: new.session_id,
        model: new.model,
        tool: new.tool,
        file: new.file,
        blocks: new.blocks,
        file_hash: new.file_hash,
        command: new.command,
        reason: new.reason,
        prev_hash,
        hash: None,
    };
    let json_err = |err: serde_json::Error| GovernanceError::Io { path: path.to_owned(), source: err.into() };
    entry.hash = Some(entry.chain_hash().map_err(json_err)?);
    let mut line = serde_json::to_vec(&entry).map_err(json_err)?;
    line.push(b'\n');
    file.write_all(&line).map_err(io)?;
    file.sync_data().map_err(io)?;
    Ok(entry)
}

/// The `hash` of the last parseable line, reading backwards from the end.
fn last_hash(file: &mut std::fs::File) -> std::io::Result<Option<String>> {
    let len = file.seek(SeekFrom::End(0))?;
    let mut window = 4096u64;
    loop {
        let start = len.saturating_sub(window);
        file.seek(SeekFrom::Start(start))?;
        let mut buf = Vec::with_capacity((len - start) as usize);
        file.read_to_end(&mut buf)?;
        let text = String::from_utf8_lossy(&buf);
        let mut lines: Vec<&str> = text.split('\n').collect();
        if start > 0 {
            lines.remove(0); // may be a partial line
        }
        for line in lines.iter().rev() {
            if let Ok(entry) = serde_json::from_str::<TraceEntry>(line) {
                return Ok(entry.hash);
            }
        }
        if start == 0 {
            return Ok(None);
        }
        window *= 4;
    }
}

/// The ledger's size and the `hash` of its last parseable line (reading from the end only).
pub(crate) fn tail(path: &Path) -> std::io::Result<(u64, Option<String>)> {
    let mut file = match super::open_sidecar(path, false) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok((0, None)),
        Err(err) => return Err(err),
    };
    let size = file.metadata()?.len();
    Ok((size, last_hash(&mut file)?))
}

/// The entries after byte `offset` (a line boundary), and whether every line there parsed.
pub(crate) fn read_from(path: &Path, offset: u64) -> std::io::Result<(Vec<TraceEntry>, bool)> {
    let mut file = super::open_sidecar(path, false)?;
    file.seek(SeekFrom::Start(offset))?;
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    let mut entries = Vec::new();
    for line in text.lines().filter(|l| !l.is_empty()) {
        match serde_json::from_str(line) {
            Ok(entry) => entries.push(entry),
            Err(_) => return Ok((entries, false)),
        }
    }
    Ok((entries, true))
}

/// Every parseable entry, in order; unparseable lines are reported by [`verify`].
pub fn read_all(path: &Path) -> Result<Vec<TraceEntry>, GovernanceError> {
    let mut text = String::new();
    match super::open_sidecar(path, false).and_then(|mut f| f.read_to_string(&mut text)) {
        Ok(_) => {}
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(GovernanceError::Io { path: path.to_owned(), source }),
    }
    Ok(text.lines().filter_map(|line| serde_json::from_str(line).ok()).collect())
}

/// Why a ledger does not verify: the first bad line (1-based) and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("agent_trace.jsonl line {line}: {problem}")]
pub struct ChainBreak {
    pub line: usize,
    pub problem: String,
}

/// Checks every line parses, hashes to its `hash`, and chains to the line before.
impl TraceEntry {
    /// What a mutation entry lacks that the spec requires of every one (SC-002): an intent, a
    /// reason and, for a file, its SHA-256 (a deletion's: of what was deleted).
    fn hole(&self) -> Option<String> {
        if self.kind != TraceKind::Mutation {
            return None;
        }
        let missing: Vec<&str> = [
            (self.intent_id.is_none(), "an intent"),
            (self.reason.as_deref().is_none_or(|r| r.trim().is_empty()), "a reason"),
            (self.file.is_some() && self.file_hash.is_none(), "the file's SHA-256"),
        ]
        .into_iter()
        .filter_map(|(missing, what)| missing.then_some(what))
        .collect();
        (!missing.is_empty()).then(|| format!("a mutation without {}", missing.join(", ")))
    }
}

/// Checks the chain line by line, and that every mutation is complete; the count of entries.
pub fn verify(text: &str) -> Result<usize, ChainBreak> {
    let mut prev = GENESIS.to_owned();
    let mut count = 0;
    for (i, line) in text.lines().enumerate() {
        let broken = |problem: String| ChainBreak { line: i + 1, problem };
        let entry: TraceEntry =
            serde_json::from_str(line).map_err(|err| broken(format!("not a trace entry: {err}")))?;
        if entry.prev_hash != prev {
            return Err(broken("does not chain to the line before".into()));
        }
        let expected = entry.chain_hash().map_err(|err| broken(err.to_string()))?;
        if entry.hash.as_deref() != Some(expected.as_str()) {
            return Err(broken("its hash does not match its content".into()));
        }
        if let Some(hole) = entry.hole() {
            return Err(broken(hole));
        }
        prev = expected;
        count += 1;
    }
    Ok(count)
}

/// A few lines about the intent's most recent mutations, newest last.
pub fn summary(entries: &[TraceEntry], intent_id: &str, limit: usize) -> String {
    let mine: Vec<&TraceEntry> = entries.iter().filter(|e| e.intent_id.as_deref() == Some(intent_id)).collect();
    if mine.is_empty() {
        return "no recorded actions yet".into();
    }
    let skip = mine.len().saturating_sub(limit);
    let mut out = format!("{} recorded action(s); the latest:\n", mine.len());
    for e in &mine[skip..] {
        let what = match (&e.file, &e.command) {
            (Some(file), _) => {
                let ranges: Vec<String> = e.blocks.iter().map(|b| format!("{}-{}", b.start_line, b.end_line)).collect();
                if ranges.is_empty() { file.clone() } else { format!("{file} lines {}", ranges.join(", ")) }
            }
            (None, Some(cmd)) => format!("`{cmd}`"),
            (None, None) => String::new(),
        };
        let kind = match e.kind {
            TraceKind::Mutation => "",
            TraceKind::Denial => " DENIED",
            TraceKind::Breaker => " BREAKER",
        };
        let reason = e.reason.as_deref().map(|r| format!(" — {r}")).unwrap_or_default();
        out.push_str(&format!("- {} {}{kind} {what}{reason}\n", e.timestamp.format("%Y-%m-%d %H:%M"), e.tool));
    }
    out
}

/// Who wrote a line: the newest mutation whose block, hashed exactly or whitespace-normalized,
/// equals a run of lines around `line` (1-based) in `content` — wherever the block now is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlameHit {
    pub entry: TraceEntry,
    pub exact: bool,
}

pub fn blame(entries: &[TraceEntry], content: &str, line: usize) -> Option<BlameHit> {
    let lines: Vec<&str> = content.split_inclusive('\n').collect();
    if line == 0 || line > lines.len() {
        return None;
    }
    let mut exact: HashMap<&str, (usize, i64)> = HashMap::new();
    let mut normalized: HashMap<&str, (usize, i64)> = HashMap::new();
    let mut compacted: HashMap<&str, usize> = HashMap::new();
    for (i, entry) in entries.iter().enumerate() {
        if entry.kind != TraceKind::Mutation {
            continue;
        }
        for block in &entry.blocks {
            // The ledger is a file anyone can edit: a range of any size must not overflow.
            let n = block.end_line.saturating_sub(block.start_line).saturating_add(1);
            exact.insert(block.content_hash.as_str(), (i, n));
            normalized.insert(block.normalized_hash.as_str(), (i, n));
            if let Some(hash) = &block.compact_hash {
                compacted.insert(hash.as_str(), i);
            }
        }
    }
    let mut sizes: Vec<i64> = exact.values().map(|(_, n)| *n).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut best: Option<(usize, bool)> = None;
    let target = line - 1;
    for n in sizes {
        let n = n.max(1) as usize;
        if n > lines.len() {
            continue;
        }
        let first = target.saturating_sub(n - 1);
        let last = target.min(lines.len() - n);
        for start in first..=last {
            let text: String = lines[start..start + n].concat();
            let trimmed = text.strip_suffix('\n').unwrap_or(&text);
            for candidate in [text.as_str(), trimmed] {
                if let Some((i, _)) = exact.get(sha256_hex(candidate.as_bytes()).as_str())
                    && best.is_none_or(|(b, was_exact)| !was_exact || *i > b)
                {
                    best = Some((*i, true));
                }
            }
            if let Some((i, _)) = normalized.get(sha256_hex(normalize_ws(&text).as_bytes()).as_str())
                && best.is_none()
            {
                best = Some((*i, false));
            }
        }
    }
    if best.is_none() {
        best = reflowed(&compacted, &lines, target).map(|i| (i, false));
    }
    best.map(|(i, exact)| BlameHit { entry: entries[i].clone(), exact })
}

/// A formatter may have split or joined the block's lines: the newest mutation whose block,
/// all whitespace removed, equals a run of lines covering `target` (any length up to
/// [`MAX_REFLOWED_LINES`]).
fn reflowed(compacted: &HashMap<&str, usize>, lines: &[&str], target: usize) -> Option<usize> {
    if compacted.is_empty() {
        return None;
    }
    let mut best: Option<usize> = None;
    for start in target.saturating_sub(MAX_REFLOWED_LINES - 1)..=target {
        let mut text = String::new();
        for (end, line) in lines.iter().enumerate().skip(start).take(MAX_REFLOWED_LINES) {
            text.push_str(&compact(line));
            if end < target || text.is_empty() {
                continue;
            }
            if let Some(i) = compacted.get(sha256_hex(text.as_bytes()).as_str())
                && best.is_none_or(|b| *i > b)
            {
                best = Some(*i);
            }
        }
    }
    best
}

/// The longest run of lines a reflowed block is looked for in.
const MAX_REFLOWED_LINES: usize = 120;

/// Regenerates `intent_map.md` (file → intents that changed them) from the ledger's index.
pub(crate) fn write_intent_map(
    orch: &super::Orchestration,
    file: &super::IntentsFile,
    files: &[(String, Vec<String>)],
) -> Result<(), GovernanceError> {
    let mut text =
        String::from("# Intent map\n\nFiles and the intents that changed them (generated from agent_trace.jsonl).\n\n");
    for (path, ids) in files {
        let named: Vec<String> = ids
            .iter()
            .map(|id| match file.get(id) {
                Some(i) => format!("{id} ({}, {})", i.name, i.status.as_str()),
                None => id.clone(),
            })
            .collect();
        text.push_str(&format!("- `{path}`: {}\n", named.join("; ")));
    }
    super::intents::write_atomic(&orch.map_path(), text.as_bytes())
}
