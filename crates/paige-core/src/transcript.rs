//! What Paige reads from Claude Code's session transcript (JSON lines): the model in use and
//! the tokens spent, for the ledger and the token budget. The path comes from a hook payload
//! and lies outside the project by design (`~/.claude/`), so it is not held to the project
//! root; it is opened as a regular file only, without blocking, and read up to a cap.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::Value;

/// How much of a transcript the hooks read, from its end. A longer one has its tokens
/// counted from its last this many bytes: an undercount, where reading it whole on every
/// hook would let a huge file exhaust the server.
const MAX_READ_BYTES: u64 = 64 << 20;

/// The last `max` bytes of the transcript at `path`, from the first whole line in them. A
/// FIFO, socket or device there is refused at once, never read or waited on.
pub(crate) fn read_end(path: &Path, max: u64) -> std::io::Result<String> {
    use std::os::unix::fs::OpenOptionsExt;
    let flags = rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY;
    let mut file = std::fs::OpenOptions::new().read(true).custom_flags(flags.bits() as i32).open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        let kind = "a FIFO, socket, device or directory, not a regular file";
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, kind));
    }
    let start = meta.len().saturating_sub(max);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.take(max).read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    Ok(if start > 0 { text.split_once('\n').map(|(_, rest)| rest.to_owned()).unwrap_or_default() } else { text })
}

fn lines(path: &Path) -> Option<Vec<Value>> {
    let text = read_end(path, MAX_READ_BYTES).ok()?;
    Some(text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect())
}

/// The model of the latest assistant message in the transcript.
pub(crate) fn model(path: &Path) -> Option<String> {
    lines(path)?.iter().rev().find_map(|l| l.pointer("/message/model").and_then(Value::as_str).map(str::to_owned))
}

/// How much of the transcript is read for the last turn's text: its end.
const MAX_TURN_READ_BYTES: u64 = 4 << 20;

/// The text Claude Code wrote in the last turn: every assistant text block after the
/// learner's last prompt, in order. `None` when the transcript cannot be read (missing, not a
/// regular file); a turn longer than the read's cap is taken from where the read starts.
pub(crate) fn last_turn_text(path: &Path) -> Option<String> {
    let text = read_end(path, MAX_TURN_READ_BYTES).ok()?;
    let mut blocks: Vec<String> = Vec::new();
    for line in text.lines().rev() {
        let Ok(entry) = serde_json::from_str::<Value>(line) else { continue };
        let content = entry.pointer("/message/content");
        match entry.get("type").and_then(Value::as_str) {
            // A prompt (text), not a tool result: the turn started here.
            Some("user") if is_prompt(content) => break,
            Some("assistant") => {
                let texts = content.and_then(Value::as_array).into_iter().flatten().rev();
                for block in texts.filter(|b| b.get("type").and_then(Value::as_str) == Some("text")) {
                    blocks.extend(block.get("text").and_then(Value::as_str).map(str::to_owned));
                }
            }
            _ => {}
        }
    }
    blocks.reverse();
    Some(blocks.join("\n\n"))
}

/// Whether a user entry's content is the learner's prompt rather than tool results.
fn is_prompt(content: Option<&Value>) -> bool {
    match content {
        Some(Value::String(_)) => true,
        Some(Value::Array(blocks)) => {
            !blocks.iter().any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
        }
        _ => false,
    }
}

/// Tokens used so far in the transcript: input + output of every assistant message.
pub(crate) fn tokens(path: &Path) -> Option<i64> {
    let lines = lines(path)?;
    let total = lines
        .iter()
        .filter_map(|l| l.pointer("/message/usage"))
        .map(|u| {
            ["input_tokens", "output_tokens", "cache_creation_input_tokens"]
                .iter()
                .filter_map(|k| u.get(k).and_then(Value::as_i64))
                .sum::<i64>()
        })
        .sum();
    Some(total)
}

/// How long a PreToolUse waits for its call to appear in the transcript: Claude Code 2.1.330
/// writes the assistant message beside running the hook, 20–70 ms after it starts (measured
/// through real `claude`), and makes the file itself with the session's first lines.
const ON_RECORD_WAIT: std::time::Duration = std::time::Duration::from_secs(2);
const ON_RECORD_POLL: std::time::Duration = std::time::Duration::from_millis(10);

/// Whether Claude Code's transcript at `path` holds the call `id` to `tool`: what opens a
/// watch window, rather than a hook payload alone. A pair of hook payloads forged around a
/// save the learner made in their own editor names no call Claude Code made, so no window
/// opens and nothing of the learner's is undone. `Err` says why not.
pub(crate) fn names_call(path: Option<&Path>, id: Option<&str>, tool: &str) -> Result<(), String> {
    let path = path.ok_or("the hook payload names no transcript")?;
    let id = id.filter(|id| !id.is_empty()).ok_or("the hook payload names no tool_use_id")?;
    let deadline = std::time::Instant::now() + ON_RECORD_WAIT;
    loop {
        let text = match read_end(path, MAX_TURN_READ_BYTES) {
            Ok(text) => text,
            // Not there yet (Claude Code makes it with the session's first line): wait for it.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && std::time::Instant::now() < deadline => {
                std::thread::sleep(ON_RECORD_POLL);
                continue;
            }
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        let found =
            text.lines().rev().filter(|l| l.contains(id)).filter_map(|l| serde_json::from_str::<Value>(l).ok()).any(
                |entry| {
                    entry.get("type").and_then(Value::as_str) == Some("assistant")
                        && entry.pointer("/message/content").and_then(Value::as_array).is_some_and(|blocks| {
                            blocks.iter().any(|b| {
                                b.get("type").and_then(Value::as_str) == Some("tool_use")
                                    && b.get("id").and_then(Value::as_str) == Some(id)
                                    && b.get("name").and_then(Value::as_str) == Some(tool)
                            })
                        })
                },
            );
        if found {
            return Ok(());
        }
        if std::time::Instant::now() >= deadline {
            return Err(format!("no {tool} call {id} in {}", path.display()));
        }
        std::thread::sleep(ON_RECORD_POLL);
    }
}
