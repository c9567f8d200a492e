//! Chains and signs a learning record's lines as they are pushed (the format is in
//! `record/mod.rs`): the header on creation, each object with `"prev"` appended as its last
//! field, the signature line on [`Writer::finish`]. One line in memory at a time.

use std::io::Write;

use chrono::{DateTime, Utc};
use ed25519_dalek::{Signer, SigningKey};
use serde::Serialize;

use super::RecordError;
use crate::db::iso;
use crate::files::sha256_hex;

/// The `prev` of the first line (the header).
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The longest line a reader accepts (16 MiB); the writer refuses to write a longer one.
pub const MAX_LINE_BYTES: usize = 16 << 20;

/// The format version in the header.
pub const VERSION: u32 = 1;

/// What the signed message starts with: a signature over a record can be mistaken for no
/// other use of the key.
pub const SIGNATURE_CONTEXT: &str = "paige-learning-record-v1";

/// The bytes the signature covers: `paige-learning-record-v1:<head>:<lines>`.
pub fn signed_message(head: &str, lines: u64) -> String {
    format!("{SIGNATURE_CONTEXT}:{head}:{lines}")
}

/// Writes a record line by line: [`Writer::new`] writes the header, [`Writer::push`] each
/// object, [`Writer::finish`] the signature. A record not finished has no signature line, and
/// does not verify.
pub struct Writer<W: Write> {
    out: W,
    key: SigningKey,
    /// The SHA-256 (hex) of the last line written.
    prev: String,
    lines: u64,
    bytes: u64,
    line: Vec<u8>,
}

/// What a finished record holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// Every line, the header and the signature included.
    pub lines: u64,
    pub bytes: u64,
    /// The SHA-256 of the line the signature signs.
    pub head: String,
    pub public_key: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Header<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    version: u32,
    exported_at: String,
    since: Option<String>,
    public_key: &'a str,
}

impl<W: Write> Writer<W> {
    /// Starts a record signed by `key`, exported at `exported_at`, covering what happened
    /// since `since` (all time when `None`): writes its header.
    pub fn new(
        out: W,
        key: &SigningKey,
        exported_at: DateTime<Utc>,
        since: Option<DateTime<Utc>>,
    ) -> Result<Writer<W>, RecordError> {
        let mut writer = Writer {
            out,
            key: key.clone(),
            prev: GENESIS.to_owned(),
            lines: 0,
            bytes: 0,
            line: Vec::with_capacity(512),
        };
        let public_key = writer.public_key();
        writer.push(&Header {
            kind: "header",
            version: VERSION,
            exported_at: iso(exported_at),
            since: since.map(iso),
            public_key: &public_key,
        })?;
        Ok(writer)
    }

    /// Appends one line: `value` must serialize to a JSON object with a `type` and no `prev`
    /// of its own (the writer adds it).
    pub fn push(&mut self, value: &impl Serialize) -> Result<(), RecordError> {
        self.line.clear();
        serde_json::to_writer(&mut self.line, value)?;
        if self.line.first() != Some(&b'{') || self.line.last() != Some(&b'}') {
            return Err(RecordError::Line("a record line must be a JSON object".into()));
        }
        self.line.pop();
        if self.line.len() > 1 {
            self.line.push(b',');
        }
        self.line.extend_from_slice(b"\"prev\":\"");
        self.line.extend_from_slice(self.prev.as_bytes());
        self.line.extend_from_slice(b"\"}");
        self.emit()
    }

    /// Lines written so far, the header included.
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// Signs what was written, writes the signature line and flushes.
    pub fn finish(mut self) -> Result<(W, Written), RecordError> {
        let head = self.prev.clone();
        let lines = self.lines;
        let signature = self.key.sign(signed_message(&head, lines).as_bytes());
        self.line.clear();
        write!(
            self.line,
            r#"{{"type":"signature","lines":{lines},"head":"{head}","prev":"{head}","signature":"{}"}}"#,
            hex::encode(signature.to_bytes())
        )
        .map_err(RecordError::Write)?;
        self.emit()?;
        self.out.flush().map_err(RecordError::Write)?;
        let public_key = self.public_key();
        Ok((self.out, Written { lines: self.lines, bytes: self.bytes, head, public_key }))
    }

    fn public_key(&self) -> String {
        hex::encode(self.key.verifying_key().to_bytes())
    }

    /// Writes the line in `self.line` and its newline; it becomes `prev`.
    fn emit(&mut self) -> Result<(), RecordError> {
        if self.line.len() > MAX_LINE_BYTES {
            return Err(RecordError::Line(format!(
                "line {} would be {} bytes, more than the {} MiB a reader accepts",
                self.lines + 1,
                self.line.len(),
                MAX_LINE_BYTES >> 20
            )));
        }
        self.prev = sha256_hex(&self.line);
        self.line.push(b'\n');
        self.out.write_all(&self.line).map_err(RecordError::Write)?;
        self.lines += 1;
        self.bytes += self.line.len() as u64;
        Ok(())
    }
}
