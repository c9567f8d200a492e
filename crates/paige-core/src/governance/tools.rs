//! Every tool call, parsed once into a [`ToolCall`]: the engine, coach mode, the change
//! detector and `paige hook` itself (which must fail closed for calls that may change files
//! when Paige cannot answer) all read this one type.

use serde::Deserialize;
use serde_json::Value;

use super::bash::{self, BashCommand};

/// Claude Code's file-writing tools (`MultiEdit` is gone from Claude Code 2.1.330; kept so an
/// older Claude Code's is still denied).
pub const WRITE_TOOLS: [&str; 4] = ["Write", "Edit", "MultiEdit", "NotebookEdit"];

/// Claude Code's tools that run a shell command (`tool_input.command`), classified as Bash.
/// `Monitor` streams a long-running command's output: it always leaves it running.
pub const SHELL_TOOLS: [&str; 2] = ["Bash", "Monitor"];

/// Claude Code's tools known to change no file and run nothing (Claude Code 2.1.330's list,
/// read from the tools it offers the model, and older names). `Agent`/`Task` start a subagent
/// whose own tool calls fire the same hooks (its payloads carry `agent_id`).
#[rustfmt::skip]
pub const READ_TOOLS: &[&str] = &[
    "Read", "Glob", "Grep", "LS", "WebFetch", "WebSearch", "ToolSearch", "AskUserQuestion", "EnterPlanMode",
    "ExitPlanMode", "TodoWrite", "TaskCreate", "TaskGet", "TaskList", "TaskUpdate", "TaskOutput", "TaskStop",
    "BashOutput", "KillShell", "KillBash", "ListMcpResourcesTool", "ReadMcpResourceTool", "LSP", "CronList",
    "ListAgents", "ReportFindings", "Agent", "Task",
];

/// Claude Code's tools Paige knows and refuses in coach mode: they schedule work for later,
/// write outside the write tools, or run commands the hooks do not see.
#[rustfmt::skip]
pub const REFUSED_TOOLS: &[(&str, &str)] = &[
    ("CronCreate", "schedules a prompt to run later (a durable one is written into .claude/)"),
    ("CronDelete", "changes the scheduled prompts in .claude/"),
    ("ScheduleWakeup", "schedules the agent to start again later on its own"),
    ("EnterWorktree", "creates a git worktree, writing under .git/ and .claude/"),
    ("ExitWorktree", "can discard a worktree's changes"),
    ("Workflow", "runs a script that starts many agents"),
    ("Skill", "loads a skill, which can run shell commands the hooks never see"),
    ("SendMessage", "sends instructions to other agents and Claude sessions, outside this session's hooks"),
    ("DesignSync", "writes design files into the project"),
    ("PowerShell", "runs shell commands Paige cannot read"),
];

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
    /// Bash, or another tool that runs a shell command (`Monitor`).
    Bash {
        tool: String,
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
    /// Claude Code's tools known to change no file ([`READ_TOOLS`] but Read).
    Other {
        tool: String,
    },
    /// Claude Code's tools Paige knows and refuses in coach mode ([`REFUSED_TOOLS`]), and a
    /// subagent in its own worktree.
    Refused {
        tool: String,
        why: &'static str,
    },
    /// A tool Paige does not know (a new Claude Code tool): it may do anything.
    Unknown {
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
struct AgentInput {
    isolation: Option<String>,
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
            _ if SHELL_TOOLS.contains(&tool) => {
                let i: BashInput = input(tool_input);
                let parsed = bash::classify(&i.command);
                let run_in_background = i.run_in_background || tool == "Monitor";
                ToolCall::Bash { tool: tool.to_owned(), command: i.command, run_in_background, parsed }
            }
            SELECT_TOOL => ToolCall::SelectIntent { intent_id: input::<SelectInput>(tool_input).intent_id },
            _ if tool.starts_with(PAIGE_MCP_PREFIX) => ToolCall::PaigeMcp { tool: tool.to_owned() },
            _ if tool.starts_with("mcp__") => ToolCall::OtherMcp { tool: tool.to_owned() },
            "Agent" | "Task"
                if input::<AgentInput>(tool_input).isolation.is_some_and(|i| !i.is_empty() && i != "none") =>
            {
                ToolCall::Refused { tool: tool.to_owned(), why: "starts a subagent in its own git worktree" }
            }
            _ if READ_TOOLS.contains(&tool) => ToolCall::Other { tool: tool.to_owned() },
            _ => match REFUSED_TOOLS.iter().find(|(name, _)| *name == tool) {
                Some((_, why)) => ToolCall::Refused { tool: tool.to_owned(), why },
                None => ToolCall::Unknown { tool: tool.to_owned() },
            },
        }
    }

    /// Claude Code's name of the tool.
    pub fn tool(&self) -> &str {
        match self {
            ToolCall::Write { tool, .. }
            | ToolCall::Bash { tool, .. }
            | ToolCall::PaigeMcp { tool }
            | ToolCall::OtherMcp { tool }
            | ToolCall::Other { tool }
            | ToolCall::Refused { tool, .. }
            | ToolCall::Unknown { tool } => tool,
            ToolCall::Read { .. } => "Read",
            ToolCall::SelectIntent { .. } => SELECT_TOOL,
        }
    }

    /// May change files: the write tools, Bash not known to be read-only, other servers' MCP
    /// tools, tools refused in coach mode and tools Paige does not know.
    pub fn may_mutate(&self) -> bool {
        match self {
            ToolCall::Write { .. }
            | ToolCall::OtherMcp { .. }
            | ToolCall::Refused { .. }
            | ToolCall::Unknown { .. } => true,
            ToolCall::Bash { parsed, .. } => !parsed.is_read_only(),
            _ => false,
        }
    }

    /// What `paige hook` lets through when Paige cannot answer: reads, and Paige's own MCP
    /// tools (which reach nothing but Paige). Every shell command needs Paige: without it no
    /// detector watches, and a flood or a busy detector must not open a door.
    pub fn passes_without_paige(&self) -> bool {
        matches!(
            self,
            ToolCall::Read { .. } | ToolCall::Other { .. } | ToolCall::PaigeMcp { .. } | ToolCall::SelectIntent { .. }
        )
    }

    /// Calls the change detector watches: whatever may change files other than through a
    /// write tool (whose target the hooks check and record exactly).
    pub fn is_watched(&self) -> bool {
        matches!(
            self,
            ToolCall::Bash { .. } | ToolCall::OtherMcp { .. } | ToolCall::Refused { .. } | ToolCall::Unknown { .. }
        )
    }

    /// Leaves something running after the call (`run_in_background`, `&`, `nohup`): its
    /// watch lasts until the session's next Stop.
    pub fn backgrounds(&self) -> bool {
        match self {
            ToolCall::Bash { run_in_background, parsed, .. } => *run_in_background || parsed.backgrounds,
            // What a tool Paige does not know leaves running, it cannot tell.
            ToolCall::Unknown { .. } | ToolCall::Refused { .. } => true,
            _ => false,
        }
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
