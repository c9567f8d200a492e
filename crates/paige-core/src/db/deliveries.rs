//! What Paige itself typed into Claude Code (issue 40): the kickoff, a phase-done note, an
//! Observer nudge. Claude Code's UserPromptSubmit reports those as it reports the learner's
//! prompts; each is kept by the SHA-256 of its normalised text, so a prompt that matches one
//! is known to be Paige's and never counted as the learner's.

use rusqlite::params;
use sha2::{Digest, Sha256};

use super::{Db, DbError, new_id, ts};

/// Who wrote a prompt Claude Code was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Author {
    Learner,
    /// Paige typed it (a delivery).
    Paige,
}

impl Author {
    pub fn as_str(self) -> &'static str {
        match self {
            Author::Learner => "learner",
            Author::Paige => "paige",
        }
    }
}

/// The hash a text is known by: line ends as `\n`, trailing blanks of each line and blank
/// lines around it dropped — what a terminal or Claude Code's prompt box may change.
pub fn text_hash(text: &str) -> String {
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    let normal = lines.join("\n");
    let digest = Sha256::digest(normal.trim().as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

impl Db {
    /// Keeps that Paige typed `text` (of `kind`) into Claude Code in `session_id`.
    pub fn record_delivery(&self, session_id: Option<&str>, kind: &str, text: &str) -> Result<(), DbError> {
        self.conn().execute(
            "INSERT INTO paige_deliveries (id, session_id, kind, sha256, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![new_id(), session_id, kind, text_hash(text), ts(self.now())],
        )?;
        Ok(())
    }

    /// The kind of the delivery `prompt` matches (`kickoff`, `phase_done`…), if Paige typed it.
    pub fn delivery_kind(&self, prompt: &str) -> Result<Option<String>, DbError> {
        let kind = self.conn().query_row(
            "SELECT kind FROM paige_deliveries WHERE sha256 = ?1 ORDER BY created_at DESC LIMIT 1",
            [text_hash(prompt)],
            |r| r.get(0),
        );
        match kind {
            Ok(kind) => Ok(Some(kind)),
            Err(rusqlite::Error::QueryReturnedNoRows) => Ok(None),
            Err(err) => Err(err.into()),
        }
    }

    /// Who wrote `prompt`: Paige when it matches a text Paige typed into Claude Code.
    pub fn prompt_author(&self, prompt: &str) -> Result<Author, DbError> {
        let known: bool = self.conn().query_row(
            "SELECT EXISTS (SELECT 1 FROM paige_deliveries WHERE sha256 = ?1)",
            [text_hash(prompt)],
            |r| r.get(0),
        )?;
        Ok(if known { Author::Paige } else { Author::Learner })
    }
}
