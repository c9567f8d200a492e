//! `verify`: a learning record read back line by line (the format is in `record/mod.rs`),
//! offline. Memory is bounded whatever the file's size: one line at a time (two when naming
//! a break), each at most [`MAX_LINE_BYTES`]. The first fault ends the check, named by its
//! 1-based line.
//!
//! A hash chain shows *that* something changed after a line, not always *which* line: when a
//! line's `prev` does not match, the line after it decides. If that one chains to the
//! mismatched line, the mismatched line is intact and the line before it was changed (or
//! lines after that were removed); otherwise the mismatched line itself was moved, inserted
//! or changed.

use std::borrow::Cow;
use std::io::BufRead;

use ed25519_dalek::{Signature, VerifyingKey};
use serde::Deserialize;

use super::writer::{GENESIS, MAX_LINE_BYTES, VERSION, signed_message};
use crate::files::sha256_hex;

/// A record that verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// Every line, the header and the signature included.
    pub lines: u64,
    pub sessions: u64,
    /// The key that signed it (hex): compare it with the one the learner gave you, or pin it.
    pub public_key: String,
    pub exported_at: String,
    pub since: Option<String>,
}

/// The first thing wrong with a record: its 1-based line and what is wrong there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {problem}")]
pub struct VerifyError {
    pub line: u64,
    pub problem: String,
}

/// The line types of version 1 between the header and the signature.
const BODY_TYPES: &[&str] = &["session", "comprehension", "kata_attempt", "review", "reliance", "solutions_shown"];

/// What every line has.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    prev: Cow<'a, str>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Header {
    version: u64,
    exported_at: String,
    since: Option<String>,
    public_key: String,
}

#[derive(Deserialize)]
struct SignatureLine {
    lines: u64,
    head: String,
    signature: String,
}

/// Checks a record: every line JSON with a `type` and the right `prev`, a header first, the
/// signature last (nothing after it) over the chain's head and the line count, made by the
/// header's key — which must be `pinned` when given.
pub fn verify(mut input: impl BufRead, pinned: Option<&VerifyingKey>) -> Result<Verified, VerifyError> {
    let mut line = Vec::new();
    let bad = |line: u64, problem: String| VerifyError { line, problem };

    let terminated = match read_line(&mut input, &mut line, 1)? {
        Read::Eof => return Err(bad(1, "the file is empty: a learning record starts with its header line".into())),
        Read::Line { terminated } => terminated,
    };
    let envelope = parse_envelope(&line, 1, terminated)?;
    if envelope.kind != "header" {
        return Err(bad(1, format!("the first line must be the header, not a {:?} line", envelope.kind)));
    }
    if envelope.prev != GENESIS {
        return Err(bad(1, "the header's prev must be 64 zeros".into()));
    }
    let header: Header =
        serde_json::from_slice(&line).map_err(|err| bad(1, format!("not a valid header: {}", json_problem(&err))))?;
    if header.version != u64::from(VERSION) {
        return Err(bad(1, format!("version {} is not one this Paige reads (it reads {VERSION})", header.version)));
    }
    let key = parse_key(&header.public_key).map_err(|problem| bad(1, format!("publicKey {problem}")))?;
    if let Some(pinned) = pinned
        && pinned != &key
    {
        return Err(bad(
            1,
            format!(
                "the record is signed by key {}, not the pinned key {}: it was not exported by the Paige you trust",
                header.public_key,
                hex::encode(pinned.to_bytes())
            ),
        ));
    }

    let mut prev = sha256_hex(&line);
    let mut number = 1u64;
    let mut sessions = 0u64;
    loop {
        let terminated = match read_line(&mut input, &mut line, number + 1)? {
            Read::Eof => {
                return Err(bad(
                    number,
                    "the record ends here without its signature line: the file is truncated".into(),
                ));
            }
            Read::Line { terminated } => terminated,
        };
        number += 1;
        let envelope = parse_envelope(&line, number, terminated)?;
        if envelope.prev != prev {
            return Err(chain_break(&mut input, &line, &envelope, number, &key));
        }
        match envelope.kind.as_ref() {
            "signature" => {
                check_signature(&line, number, &prev, &key)?;
                break;
            }
            "header" => return Err(bad(number, "a second header: only the first line may be one".into())),
            "session" => sessions += 1,
            kind if BODY_TYPES.contains(&kind) => {}
            kind => return Err(bad(number, format!("unknown line type {kind:?}"))),
        }
        prev = sha256_hex(&line);
    }
    match read_line(&mut input, &mut line, number + 1)? {
        Read::Eof => {}
        Read::Line { .. } => return Err(bad(number + 1, "nothing may follow the signature line".into())),
    }
    Ok(Verified {
        lines: number,
        sessions,
        public_key: header.public_key,
        exported_at: header.exported_at,
        since: header.since,
    })
}

/// An Ed25519 public key from 64 hex digits; why not otherwise.
pub(super) fn parse_key(text: &str) -> Result<VerifyingKey, String> {
    let bytes: [u8; 32] = hex::decode(text.trim())
        .ok()
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| "is not 64 hex digits (an Ed25519 public key)".to_owned())?;
    VerifyingKey::from_bytes(&bytes).map_err(|_| "is not a valid Ed25519 public key".to_owned())
}

enum Read {
    Eof,
    /// A line in the buffer, without its `\n`; `terminated` is false for a last line cut short.
    Line {
        terminated: bool,
    },
}

/// Reads line `number` into `buf` (cleared first), refusing one over [`MAX_LINE_BYTES`]
/// before holding more than that.
fn read_line(input: &mut impl BufRead, buf: &mut Vec<u8>, number: u64) -> Result<Read, VerifyError> {
    use std::io::Read as _;
    buf.clear();
    let limit = MAX_LINE_BYTES as u64 + 1;
    let read = input
        .by_ref()
        .take(limit)
        .read_until(b'\n', buf)
        .map_err(|err| VerifyError { line: number, problem: format!("cannot read it: {err}") })?;
    if read == 0 {
        return Ok(Read::Eof);
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
        return Ok(Read::Line { terminated: true });
    }
    if buf.len() > MAX_LINE_BYTES {
        return Err(VerifyError {
            line: number,
            problem: format!(
                "longer than {} MiB, the most a record line may be: this is not a learning record",
                MAX_LINE_BYTES >> 20
            ),
        });
    }
    Ok(Read::Line { terminated: false })
}

fn parse_envelope(line: &[u8], number: u64, terminated: bool) -> Result<Envelope<'_>, VerifyError> {
    if line.is_empty() {
        return Err(VerifyError { line: number, problem: "empty: a record has no blank lines".into() });
    }
    serde_json::from_slice(line).map_err(|err| {
        let cut = if terminated { "" } else { " (the file ends mid-line: it was cut short)" };
        let problem = match err.classify() {
            serde_json::error::Category::Data => format!("not a record line: {}{cut}", json_problem(&err)),
            _ => format!("not JSON: {}{cut}", json_problem(&err)),
        };
        VerifyError { line: number, problem }
    })
}

/// What serde_json says is wrong, its position as a column (a record line is one line).
fn json_problem(err: &serde_json::Error) -> String {
    let text = err.to_string();
    match text.strip_suffix(&format!(" at line {} column {}", err.line(), err.column())) {
        Some(problem) => format!("{problem} at column {}", err.column()),
        None => text,
    }
}

/// Checks the signature line `line` (number `number`), whose `prev` matched `prev`.
fn check_signature(line: &[u8], number: u64, prev: &str, key: &VerifyingKey) -> Result<(), VerifyError> {
    let bad = |problem: String| VerifyError { line: number, problem };
    let signed: SignatureLine = serde_json::from_slice(line)
        .map_err(|err| bad(format!("not a valid signature line: {}", json_problem(&err))))?;
    if signed.lines != number - 1 {
        return Err(bad(format!(
            "the signature counts {} lines before it, but there are {}: lines were added or removed",
            signed.lines,
            number - 1
        )));
    }
    if signed.head != prev {
        return Err(bad(format!("head is not the SHA-256 of line {}", number - 1)));
    }
    let signature = parse_signature(&signed.signature).map_err(bad)?;
    key.verify_strict(signed_message(&signed.head, signed.lines).as_bytes(), &signature).map_err(|_| {
        bad(format!(
            "the signature does not verify with the header's key {}: the record was changed, or signed by another key",
            hex::encode(key.to_bytes())
        ))
    })
}

fn parse_signature(text: &str) -> Result<Signature, String> {
    let bytes: [u8; 64] = hex::decode(text)
        .ok()
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| "the signature is not 128 hex digits".to_owned())?;
    Ok(Signature::from_bytes(&bytes))
}

/// Line `number` (in `line`) does not chain to the line before: which line is at fault.
fn chain_break(
    input: &mut impl BufRead,
    line: &[u8],
    envelope: &Envelope<'_>,
    number: u64,
    key: &VerifyingKey,
) -> VerifyError {
    let previous_changed = VerifyError {
        line: number - 1,
        problem: format!(
            "changed: line {number} chains to a line with another SHA-256 (or lines after this one were removed)"
        ),
    };
    let this_moved = VerifyError {
        line: number,
        problem: format!("moved, inserted or changed: its prev is not the SHA-256 of line {}", number - 1),
    };
    // The signature line is intact when its signature holds for what it names: then the
    // line before it is what changed.
    if envelope.kind == "signature" {
        let intact = serde_json::from_slice::<SignatureLine>(line).ok().is_some_and(|signed| {
            signed.head == envelope.prev
                && parse_signature(&signed.signature).is_ok_and(|signature| {
                    key.verify_strict(signed_message(&signed.head, signed.lines).as_bytes(), &signature).is_ok()
                })
        });
        return if intact { previous_changed } else { this_moved };
    }
    let hash = sha256_hex(line);
    let mut next = Vec::new();
    let next_chains = match read_line(input, &mut next, number + 1) {
        Ok(Read::Line { terminated }) => envelope_prev_is(&next, terminated, &hash),
        _ => false,
    };
    if next_chains { previous_changed } else { this_moved }
}

fn envelope_prev_is(line: &[u8], terminated: bool, hash: &str) -> bool {
    parse_envelope(line, 0, terminated).is_ok_and(|e| e.prev == hash)
}
