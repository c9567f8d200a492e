//! Which tool calls mutate. Used by the engine and by `paige hook` itself, which must fail
//! closed for these when Paige cannot answer.

use serde_json::Value;

/// Claude Code's file-writing tools.
pub const WRITE_TOOLS: [&str; 4] = ["Write", "Edit", "MultiEdit", "NotebookEdit"];

/// Paige's own MCP tools; none writes files (`select_active_intent` only changes governance
/// state, which the engine tracks).
pub const PAIGE_MCP_PREFIX: &str = "mcp__paige__";

pub fn is_write_tool(tool: &str) -> bool {
    WRITE_TOOLS.contains(&tool)
}

/// True for calls that may change the project: the write tools, Bash that is not read-only,
/// and MCP tools of other servers (Paige cannot know what they do).
pub fn is_mutating(tool: &str, input: Option<&Value>) -> bool {
    if is_write_tool(tool) {
        return true;
    }
    if tool == "Bash" {
        let command = input.and_then(|i| i.get("command")).and_then(Value::as_str).unwrap_or("");
        return !is_read_only_command(command);
    }
    tool.starts_with("mcp__") && !tool.starts_with(PAIGE_MCP_PREFIX)
}

/// The file a write tool targets.
pub fn target_file(input: Option<&Value>) -> Option<&str> {
    let input = input?;
    input.get("file_path").or_else(|| input.get("notebook_path")).and_then(Value::as_str)
}

const READ_ONLY: &[&str] = &[
    "ls", "cat", "head", "tail", "grep", "rg", "pwd", "echo", "wc", "which", "file", "stat", "tree", "sort", "uniq",
    "diff", "du", "df", "env", "printenv", "date", "whoami", "uname", "ps", "type", "true", "less", "more", "cut",
    "basename", "dirname", "realpath", "readlink", "jq", "test", "[",
];
const GIT_READ_ONLY: &[&str] =
    &["status", "log", "diff", "show", "blame", "rev-parse", "ls-files", "grep", "describe", "shortlog"];
const CARGO_READ_ONLY: &[&str] = &["check", "test", "clippy", "tree", "metadata", "build", "doc", "bench"];

/// A conservative allow-list: every segment of the command (split on `|`, `;`, `&&`, `||`)
/// starts with a known read-only program, and nothing redirects into a file.
pub fn is_read_only_command(command: &str) -> bool {
    let command = command.trim();
    if command.is_empty() {
        return false;
    }
    if command.contains('>') || command.contains('`') || command.contains("$(") {
        return false;
    }
    command.split(['|', ';', '&', '\n']).map(str::trim).filter(|s| !s.is_empty()).all(read_only_segment)
}

fn read_only_segment(segment: &str) -> bool {
    let words: Vec<&str> = segment.split_whitespace().collect();
    let Some(program) = words.first() else { return true };
    let arg = |i: usize| words.get(i).copied().unwrap_or("");
    match *program {
        "git" => GIT_READ_ONLY.contains(&arg(1)),
        "cargo" => CARGO_READ_ONLY.contains(&arg(1)),
        "sed" => !words.iter().any(|w| w.starts_with("-i") || *w == "--in-place"),
        "find" => !words.iter().any(|w| matches!(*w, "-delete" | "-exec" | "-execdir" | "-ok" | "-fprint")),
        "tee" => false,
        program => READ_ONLY.contains(&program),
    }
}
