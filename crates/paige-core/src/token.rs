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
