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

/// The tokens a Paige answers to, kept in `DATA_DIR/tokens.json` (0600) so that they survive
/// restarts (issue 40): a browser tab reconnects, a running Claude Code's MCP config and
/// hooks keep working, and `paige claude` keeps claiming deliveries. `paige token rotate`
/// replaces both. `PAIGE_TOKEN`, when set, wins over the kept UI token.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    /// Opens every private route.
    pub ui: Token,
    /// Opens only `POST /hooks/*` and `/mcp`: what Claude Code's environment holds.
    pub agent: Token,
}

impl Tokens {
    /// Two fresh random tokens.
    pub fn generate() -> anyhow::Result<Tokens> {
        Ok(Tokens { ui: generate()?, agent: generate()? })
    }
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
/// token others could read is no longer a secret.
pub fn load_or_create(data_dir: &std::path::Path) -> anyhow::Result<Tokens> {
    match read(data_dir) {
        Ok(Some(tokens)) => Ok(tokens),
        Ok(None) => rotate(data_dir),
        Err(reason) => {
            tracing::warn!("{}: {reason}; Paige makes new tokens", path(data_dir).display());
            rotate(data_dir)
        }
    }
}

/// Replaces the kept tokens with fresh ones and returns them.
pub fn rotate(data_dir: &std::path::Path) -> anyhow::Result<Tokens> {
    use anyhow::Context;
    use std::io::Write;
    let tokens = Tokens::generate()?;
    // A new temp file (0600, O_EXCL, a random name: nothing planted is followed), then renamed.
    let mut file = tempfile::Builder::new()
        .prefix(&crate::files::data_temp_prefix())
        .tempfile_in(data_dir)
        .with_context(|| format!("cannot write a temp file in {}", data_dir.display()))?;
    file.write_all(&serde_json::to_vec_pretty(&tokens)?)?;
    file.as_file().sync_all()?;
    let target = path(data_dir);
    file.persist(&target).map_err(|err| err.error).with_context(|| format!("cannot write {}", target.display()))?;
    Ok(tokens)
}

/// The kept tokens: `Ok(None)` when there are none yet, `Err` (why) when the file cannot be
/// trusted or read.
fn read(data_dir: &std::path::Path) -> Result<Option<Tokens>, String> {
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
    let tokens: Tokens = serde_json::from_str(&text).map_err(|err| format!("it is not valid ({err})"))?;
    let valid = |t: &Token| t.0.len() >= 32 && t.0.bytes().all(|b| b.is_ascii_alphanumeric());
    if !valid(&tokens.ui) || !valid(&tokens.agent) || tokens.ui == tokens.agent {
        return Err("it holds no valid pair of tokens".into());
    }
    Ok(Some(tokens))
}
