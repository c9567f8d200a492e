//! The per-launch bearer tokens (the UI's and Claude Code's): a secret that never prints.

use serde::{Deserialize, Serialize};

/// The per-launch bearer token. Its `Debug` is redacted, so no log line, error or panic
/// prints it; [`Token::expose`] is for the few places that must send or store it.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Token(String);

impl Token {
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

impl From<String> for Token {
    fn from(token: String) -> Token {
        Token(token)
    }
}

impl From<&str> for Token {
    fn from(token: &str) -> Token {
        Token(token.to_owned())
    }
}

/// The tokens a Paige answers to. The agent token and the local tools' token are kept in
/// `DATA_DIR/tokens.json` (0600) so that they survive restarts (issue 40): a running Claude
/// Code's MCP config and hooks keep working, `paige claude` keeps claiming deliveries, and
/// `paige session` finds Paige. The UI token is kept there too — so a browser tab reconnects
/// after a restart — only where an OS layer (the jail, or Landlock) hides `DATA_DIR` from
/// Claude Code; with none, a file there is one `cat` away from the agent, so the UI token
/// lives in memory only and is new at each start ([`UiTokenKept::InMemoryOnly`], issue 39).
/// `paige token rotate` replaces all three. `PAIGE_TOKEN`, when set, wins over the UI token.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    /// Opens every private route.
    pub ui: Token,
    /// Opens only `POST /hooks/*`, `/mcp` and `paige claude`'s routes: what Claude Code's
    /// environment holds.
    pub agent: Token,
    /// Opens only the routes local tools call (`paige session`, `paige memory`): never `/ws`,
    /// which saves files, nor the rotation, which hands out the UI token.
    pub local: Token,
}

impl Tokens {
    /// Three fresh random tokens.
    pub fn generate() -> anyhow::Result<Tokens> {
        Ok(Tokens { ui: generate()?, agent: generate()?, local: generate()? })
    }
}

/// Whether the UI token may be written to `DATA_DIR` (the tokens file and the run file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UiTokenKept {
    /// An OS layer hides `DATA_DIR` from Claude Code: kept, so it survives restarts.
    OnDisk,
    /// Nothing hides `DATA_DIR` from Claude Code: never written; a new one at each start.
    InMemoryOnly,
}

/// What `tokens.json` holds: the agent and local tokens, and the UI token when it may be kept.
/// (A file an older Paige wrote has no local token: one is made.)
#[derive(Serialize, Deserialize)]
struct Kept {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ui: Option<Token>,
    agent: Token,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    local: Option<Token>,
}

/// A fresh random token: 32 bytes from the OS, hex-encoded.
pub fn generate() -> anyhow::Result<Token> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|err| anyhow::anyhow!("cannot get random bytes: {err}"))?;
    Ok(Token::from(hex::encode(bytes)))
}

pub fn path(data_dir: &std::path::Path) -> std::path::PathBuf {
    data_dir.join("tokens.json")
}

/// The kept tokens, or new ones kept from now on. A file that is not the owner's alone (a
/// link, another owner, readable by others) or not valid is replaced, with a warning: a
/// token others could read is no longer a secret. With [`UiTokenKept::InMemoryOnly`] the UI
/// token is a new one, and a UI token an earlier start kept is removed from the file.
pub fn load_or_create(data_dir: &std::path::Path, kept: UiTokenKept) -> anyhow::Result<Tokens> {
    let found = match read(data_dir) {
        Ok(found) => found,
        Err(reason) => {
            tracing::warn!("{}: {reason}; Paige makes new tokens", path(data_dir).display());
            None
        }
    };
    let Some(found) = found else { return rotate(data_dir, kept) };
    let had_ui = found.ui.is_some();
    if had_ui && kept == UiTokenKept::InMemoryOnly {
        tracing::info!(
            "{}: the UI token an earlier start kept is removed: nothing keeps Claude Code out of this folder",
            path(data_dir).display()
        );
    }
    // The file changes when the UI token goes (or comes) and when an older file lacks the local one.
    let changed = had_ui != (kept == UiTokenKept::OnDisk) || found.local.is_none();
    let ui = found.ui.filter(|_| kept == UiTokenKept::OnDisk);
    let tokens =
        Tokens { ui: ui.map_or_else(generate, Ok)?, agent: found.agent, local: found.local.map_or_else(generate, Ok)? };
    if changed {
        store(data_dir, &tokens, kept)?;
    }
    Ok(tokens)
}

/// Replaces the kept tokens with fresh ones and returns them (the UI token written only when
/// `kept` allows).
pub fn rotate(data_dir: &std::path::Path, kept: UiTokenKept) -> anyhow::Result<Tokens> {
    let tokens = Tokens::generate()?;
    store(data_dir, &tokens, kept)?;
    Ok(tokens)
}

fn store(data_dir: &std::path::Path, tokens: &Tokens, kept: UiTokenKept) -> anyhow::Result<()> {
    use anyhow::Context;
    use std::io::Write;
    let on_disk = Kept {
        ui: (kept == UiTokenKept::OnDisk).then(|| tokens.ui.clone()),
        agent: tokens.agent.clone(),
        local: Some(tokens.local.clone()),
    };
    // A new temp file (0600, O_EXCL, a random name: nothing planted is followed), then renamed.
    let mut file = tempfile::Builder::new()
        .prefix(&crate::files::data_temp_prefix())
        .tempfile_in(data_dir)
        .with_context(|| format!("cannot write a temp file in {}", data_dir.display()))?;
    file.write_all(&serde_json::to_vec_pretty(&on_disk)?)?;
    file.as_file().sync_all()?;
    let target = path(data_dir);
    file.persist(&target).map_err(|err| err.error).with_context(|| format!("cannot write {}", target.display()))?;
    Ok(())
}

/// The kept tokens: `Ok(None)` when there are none yet, `Err` (why) when the file cannot be
/// trusted or read.
fn read(data_dir: &std::path::Path) -> Result<Option<Kept>, String> {
    use std::io::Read;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
    let target = path(data_dir);
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(&target)
    {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) if err.raw_os_error() == Some(libc::ELOOP) => return Err("it is a link".into()),
        Err(err) => return Err(format!("cannot read it ({err})")),
    };
    let meta = file.metadata().map_err(|err| format!("cannot read it ({err})"))?;
    // SAFETY: geteuid(2) cannot fail.
    let me = unsafe { libc::geteuid() };
    if !meta.is_file() {
        return Err("it is not a file".into());
    }
    if meta.uid() != me {
        return Err(format!("it belongs to uid {}, not to this user", meta.uid()));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(format!("others may read it (mode {:o})", meta.permissions().mode() & 0o777));
    }
    let mut text = String::new();
    file.take(64 * 1024).read_to_string(&mut text).map_err(|err| format!("cannot read it ({err})"))?;
    let kept: Kept = serde_json::from_str(&text).map_err(|err| format!("it is not valid ({err})"))?;
    let valid = |t: &Token| t.0.len() >= 32 && t.0.bytes().all(|b| b.is_ascii_alphanumeric());
    let others = [Some(&kept.agent), kept.ui.as_ref(), kept.local.as_ref()];
    let tokens: Vec<&Token> = others.into_iter().flatten().collect();
    let distinct = tokens.iter().enumerate().all(|(i, a)| tokens[i + 1..].iter().all(|b| a != b));
    if !tokens.iter().all(|t| valid(t)) || !distinct {
        return Err("it holds no valid tokens".into());
    }
    Ok(Some(kept))
}
