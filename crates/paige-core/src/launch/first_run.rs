//! Claude Code's first screens under Paige (issue 41): its folder-trust dialog — which
//! defaults to "No, exit" and says Claude Code will "read, edit, and execute files here",
//! untrue in coach mode — and "Detected a custom API key … use it?", which the key the
//! learner exported for `paige serve` brings up. Paige launches Claude Code on the project
//! the learner opened, so it records both answers in its own Claude Code config dir (never
//! the learner's `~/.claude.json`):
//!
//! - the project is trusted (Paige's launch is that decision, and the jail keeps it read-only);
//! - a key in the environment that the learner never gave Claude Code itself (one exported
//!   for `paige serve`) is declined — Claude Code's own recommended answer — so Paige offers
//!   it no key and it uses its own sign-in. An answer the learner gave before stays theirs.
//!
//! What was recorded is said in one line where Claude Code starts (the terminal's banner).
//!
//! The file is read without following a link (the jail may write the config dir) and
//! replaced atomically; one Paige cannot parse is left alone.

use std::io::{Read, Write};
use std::path::Path;

use serde_json::{Value, json};

/// What Claude Code keeps of an API key it was asked about: its last 20 characters.
const KEY_TAIL: usize = 20;

/// Records the answers in `config_dir/.claude.json` for `project_dir` and `key` (the
/// `ANTHROPIC_API_KEY` Claude Code gets, if any); one line saying what was recorded, when
/// anything was.
pub fn answer_first_screens(config_dir: &Path, project_dir: &Path, key: Option<&str>) -> Option<String> {
    let path = config_dir.join(".claude.json");
    let mut state = match read(&path) {
        Ok(Some(state)) => state,
        Ok(None) => json!({}),
        Err(why) => {
            tracing::warn!("{}: {why}; Claude Code may ask its first questions", path.display());
            return None;
        }
    };
    let signed_in = config_dir.join(".credentials.json").is_file();
    let said = settle(&mut state, project_dir, key, signed_in)?;
    match write(config_dir, &path, &state) {
        Ok(()) => Some(said),
        Err(err) => {
            tracing::warn!("cannot record Claude Code's first answers in {}: {err}", path.display());
            None
        }
    }
}

/// Sets the answers in `state`; what was set, in a sentence, when anything changed.
pub fn settle(state: &mut Value, project_dir: &Path, key: Option<&str>, signed_in: bool) -> Option<String> {
    let before = state.clone();
    let mut said = Vec::new();
    let root = state.as_object_mut()?;
    let projects = root.entry("projects").or_insert_with(|| json!({}));
    if let Some(projects) = projects.as_object_mut() {
        let project = projects.entry(project_dir.display().to_string()).or_insert_with(|| json!({}));
        if let Some(project) = project.as_object_mut()
            && project.get("hasTrustDialogAccepted") != Some(&json!(true))
        {
            project.insert("hasTrustDialogAccepted".into(), json!(true));
            project.insert("hasCompletedProjectOnboarding".into(), json!(true));
            said.push("trusted this folder for Claude Code (Paige's view of it is read-only)".to_owned());
        }
    }
    // The environment's text: a tail that would split a character is not a key's.
    if let Some(tail) = key.and_then(|k| k.get(k.len().checked_sub(KEY_TAIL)?..)) {
        let responses = root.entry("customApiKeyResponses").or_insert_with(|| json!({"approved": [], "rejected": []}));
        let known = ["approved", "rejected"]
            .iter()
            .any(|list| responses[*list].as_array().is_some_and(|l| l.iter().any(|v| v == tail)));
        if !known && let Some(responses) = responses.as_object_mut() {
            let entry = responses.entry("rejected").or_insert_with(|| json!([]));
            if let Some(entry) = entry.as_array_mut() {
                entry.push(json!(tail));
                said.push(format!(
                    "kept this shell's ANTHROPIC_API_KEY from Claude Code ({})",
                    if signed_in { "it uses your sign-in" } else { "sign in to Claude Code, or approve the key in it" }
                ));
            }
        }
    }
    // Past the onboarding's theme screen once Claude Code is signed in.
    if signed_in {
        root.entry("hasCompletedOnboarding").or_insert(json!(true));
    }
    if *state == before {
        return None;
    }
    Some(if said.is_empty() {
        "Paige prepared Claude Code's first run".to_owned()
    } else {
        format!("Paige {}.", said.join(" and "))
    })
}

/// The file's JSON object; `None` when there is none yet.
fn read(path: &Path) -> Result<Option<Value>, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path);
    let file = match file {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(format!("cannot read it ({err})")),
    };
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Err("it is not a file".into());
    }
    let mut text = String::new();
    file.take(16 * 1024 * 1024).read_to_string(&mut text).map_err(|err| format!("cannot read it ({err})"))?;
    match serde_json::from_str::<Value>(&text) {
        Ok(value) if value.is_object() => Ok(Some(value)),
        _ => Err("it is not a JSON object Paige can add to".into()),
    }
}

fn write(dir: &Path, path: &Path, state: &Value) -> std::io::Result<()> {
    let mut file = tempfile::Builder::new().prefix(&crate::files::data_temp_prefix()).tempfile_in(dir)?;
    file.write_all(serde_json::to_string_pretty(state)?.as_bytes())?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|err| err.error)?;
    Ok(())
}
