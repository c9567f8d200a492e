//! Every tool call, parsed once into a [`ToolCall`]: the engine, coach mode, the change
//! detector and `paige hook` itself (which must fail closed for calls that may change files
//! when Paige cannot answer) all read this one type.

use serde::Deserialize;
use serde_json::Value;

use super::bash::{self, BashCommand};

/// Claude Code's file-writing tools.
pub const WRITE_TOOLS: [&str; 4] = ["Write", "Edit", "MultiEdit", "NotebookEdit"];

/// Paige's own MCP tools; none writes files (`select_active_intent` only changes governance
/// state, which the engine tracks).
pub const PAIGE_MCP_PREFIX: &str = "mcp__paige__";
/// Paige's handshake tool as Claude Code names it.
pub const SELECT_TOOL: &str = "mcp__paige__select_active_intent";

/// A tool call as Paige understands it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolCall {
    /// Write, Edit, MultiEdit, NotebookEdit: the file and the text blocks put into it.
    Write {
        tool: String,
        file: Option<String>,
        blocks: Vec<String>,
    },
    Read {
        file: Option<String>,
    },
    Bash {
        command: String,
        run_in_background: bool,
        parsed: BashCommand,
    },
    SelectIntent {
        intent_id: String,
    },
    /// Paige's own MCP tools: they read, or steer Paige's UI.
    PaigeMcp {
        tool: String,
    },
    /// Another MCP server's tool: Paige cannot know what it does.
    OtherMcp {
        tool: String,
    },
    /// Everything else Claude Code runs (Glob, Grep, WebFetch, Task, TodoWrite, ...): no
    /// file changes.
    Other {
        tool: String,
    },
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WriteInput {
    file_path: Option<String>,
    notebook_path: Option<String>,
    content: Option<String>,
    new_string: Option<String>,
    new_source: Option<String>,
    edits: Vec<EditInput>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct EditInput {
    new_string: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct BashInput {
    command: String,
    run_in_background: bool,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct SelectInput {
    intent_id: String,
}

/// The typed input, or its default when it is missing or of another shape.
fn input<T: for<'de> Deserialize<'de> + Default>(input: Option<&Value>) -> T {
    input.and_then(|v| T::deserialize(v).ok()).unwrap_or_default()
}

impl ToolCall {
    pub fn parse(tool: &str, tool_input: Option<&Value>) -> ToolCall {
        match tool {
            _ if WRITE_TOOLS.contains(&tool) => {
                let i: WriteInput = input(tool_input);
                let blocks = match tool {
                    "Write" => i.content.into_iter().collect(),
                    "Edit" => i.new_string.into_iter().collect(),
                    "MultiEdit" => i.edits.into_iter().filter_map(|e| e.new_string).collect(),
                    _ => i.new_source.into_iter().collect(),
                };
                ToolCall::Write { tool: tool.to_owned(), file: i.file_path.or(i.notebook_path), blocks }
            }
            "Read" => ToolCall::Read { file: input::<WriteInput>(tool_input).file_path },
            "Bash" => {
                let i: BashInput = input(tool_input);
                let parsed = bash::classify(&i.command);
                ToolCall::Bash { command: i.command, run_in_background: i.run_in_background, parsed }
            }
            SELECT_TOOL => ToolCall::SelectIntent { intent_id: input::<SelectInput>(tool_input).intent_id },
            _ if tool.starts_with(PAIGE_MCP_PREFIX) => ToolCall::PaigeMcp { tool: tool.to_owned() },
            _ if tool.starts_with("mcp__") => ToolCall::OtherMcp { tool: tool.to_owned() },
            _ => ToolCall::Other { tool: tool.to_owned() },
        }
    }

    /// Claude Code's name of the tool.
    pub fn tool(&self) -> &str {
        match self {
            ToolCall::Write { tool, .. }
            | ToolCall::PaigeMcp { tool }
            | ToolCall::OtherMcp { tool }
            | ToolCall::Other { tool } => tool,
            ToolCall::Read { .. } => "Read",
            ToolCall::Bash { .. } => "Bash",
            ToolCall::SelectIntent { .. } => SELECT_TOOL,
        }
    }

    /// May change files: the write tools, Bash not known to be read-only, other servers'
    /// MCP tools. What `paige hook` denies when it cannot reach Paige.
    pub fn may_mutate(&self) -> bool {
        match self {
            ToolCall::Write { .. } | ToolCall::OtherMcp { .. } => true,
            ToolCall::Bash { parsed, .. } => !parsed.is_read_only(),
            _ => false,
        }
    }

    /// Calls the change detector watches: whatever may change files other than through a
    /// write tool (whose target the hooks check and record exactly).
    pub fn is_watched(&self) -> bool {
        matches!(self, ToolCall::Bash { .. } | ToolCall::OtherMcp { .. })
    }

    /// Leaves something running after the call (`run_in_background`, `&`, `nohup`): its
    /// watch lasts until the session's next Stop.
    pub fn backgrounds(&self) -> bool {
        matches!(self, ToolCall::Bash { run_in_background, parsed, .. } if *run_in_background || parsed.backgrounds)
    }

    /// The file a write tool or Read targets.
    pub fn file(&self) -> Option<&str> {
        match self {
            ToolCall::Write { file, .. } | ToolCall::Read { file } => file.as_deref(),
            _ => None,
        }
    }

    pub fn command(&self) -> Option<&str> {
        match self {
            ToolCall::Bash { command, .. } => Some(command),
            _ => None,
        }
    }
}
