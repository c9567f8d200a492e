//! The learning record (issue 31): what the learner did with Paige, as a file anyone can
//! check offline — hash-chained like the audit ledger and signed with an Ed25519 key that
//! never leaves `DATA_DIR`. Nothing leaves the machine unless the learner exports.
//!
//! # Format, version 1
//!
//! JSON Lines, UTF-8, each line one JSON object ending in `\n`, no blank lines. Every line
//! has a `type` and a `prev`: the lowercase hex SHA-256 of the previous line's exact bytes
//! (without its `\n`); the first line's `prev` is 64 zeros.
//!
//! 1. `{"type":"header","version":1,"exportedAt":…,"since":…|null,"publicKey":"<hex>","prev":"000…"}`
//!    — the Ed25519 public key (32 bytes, hex) that signed the record.
//! 2. Oldest first, since `since` when given:
//!    - `session`: `id`, `issueNumber`, `issueTitle`, `status`, `startedAt`, `endedAt`,
//!      `phases`: [{`plan`, `number`, `title`, `skillArea`, `status`, `hintLevel` (the level
//!      it ended at), `completedAt`}];
//!    - `comprehension`: per settled question, `session`, `phase`, `skillArea`, `kind`,
//!      `concept`, `status` (`graded`, `skipped`, `expired`), `grade`, `answeredAt` — never the
//!      answer or the quoted code;
//!    - `kata_attempt`: `session`, `kata` (its title), `topic`, `attempt` (1-based), `level`,
//!      `passed`, `madeUnder` and `unlocked` (constraint titles: unlocked by the best level
//!      reached so far);
//!    - `review`: `topic`, `kind`, `skillArea`, `grade`, `rating`, `scheduledDays`, `reviewedAt`;
//!    - `reliance` (exactly one): `author` (`learner`), `prompts` and `classes` (the
//!      learner's own prompts to Claude Code per reliance class over the period, never their
//!      text; what Paige typed into Claude Code — kickoff, phase-done notes, nudges — is not
//!      counted);
//!    - `solutions_shown`: per block typed, `session`, `phase`, `path`, `overlap`,
//!      `blockLines`, `createdAt`.
//! 3. `{"type":"signature","lines":<lines before it>,"head":"<sha256 of the line before>","prev":…,"signature":"<hex>"}`
//!    — the Ed25519 signature over the bytes of `paige-learning-record-v1:<head>:<lines>`.
//!    Nothing may follow it.
//!
//! Timestamps are ISO 8601 UTC (`2026-11-22T04:16:24.123Z`). Verifying checks every line's
//! chain, the count, and the signature with the header's key — or, pinned, a key the reader
//! already trusts (`paige record pubkey` prints it). Readers must ignore fields they do not
//! know; a line type they do not know is an error.
//!
//! `writer.rs` chains and signs lines; `export.rs` writes the database's rows through it;
//! `verify.rs` streams a file back; `key.rs` keeps the key (`DATA_DIR/record-key`, 0600).

mod export;
mod key;
mod verify;
mod writer;

use std::path::PathBuf;

pub use ed25519_dalek::{SigningKey, VerifyingKey};
pub use export::{ExportSummary, export};
pub use key::{KEY_FILE, load_key, load_or_create_key, parse_public_key};
pub use verify::{Verified, VerifyError, verify};
pub use writer::{GENESIS, MAX_LINE_BYTES, SIGNATURE_CONTEXT, VERSION, Writer, Written, signed_message};

use crate::db::DbError;

/// Why a record could not be written, or its key not used.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The key file is missing where it must exist, unsafe, or unreadable.
    #[error("the learning record's signing key {}: {problem}", path.display())]
    Key { path: PathBuf, problem: String },
    /// A public key given by hand (`--key`) is not one.
    #[error("not an Ed25519 public key: {0}")]
    PublicKey(String),
    #[error("cannot read the learning history: {0}")]
    Db(#[from] DbError),
    #[error("cannot write the record: {0}")]
    Write(#[source] std::io::Error),
    #[error("cannot write the record: {0}")]
    Line(String),
}

impl From<serde_json::Error> for RecordError {
    fn from(err: serde_json::Error) -> RecordError {
        RecordError::Line(format!("a line does not encode as JSON: {err}"))
    }
}
