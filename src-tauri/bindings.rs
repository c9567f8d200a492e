//! TypeScript bindings of the shell's commands and events (feature `ts`), checked in as
//! `ui/src/bindings/shell.ts`; `tests/shell.rs` fails while file and code differ.
//!
//! `Commands` lists every command of `wire`'s `generate_handler!` with its arguments and
//! what it resolves to; a test invokes each one by these names.

use paige_core::protocol::bindings::{Declaration, config, render_file};
use ts_rs::TS;

use crate::{AppState, TERMINAL_EVENT, UI_EVENT};

/// The command that rewrites the checked-in file.
pub const REGENERATE: &str = "PAIGE_BLESS=1 cargo test -p paige-app --test shell bindings";

/// `ui/src/bindings/shell.ts`.
pub fn render() -> String {
    render_file("the desktop shell's Rust types", "src-tauri/bindings.rs", REGENERATE, &declarations())
}

/// A command: name, what it does, its arguments (name, TypeScript type), what it resolves to.
type Command = (&'static str, &'static str, Vec<(&'static str, String)>, String);

/// `Commands`, `Events`, and the types they carry.
pub fn declarations() -> Vec<Declaration> {
    let cfg = config();
    let string = || String::name(&cfg);
    let state = || AppState::name(&cfg);
    let commands: [Command; 9] = [
        (
            "ui_message",
            "One UI catalog frame to the core; the reply frame, if any.",
            vec![("frame", string())],
            Option::<String>::name(&cfg),
        ),
        ("app_state", "What the welcome and settings screens show.", vec![], state()),
        (
            "open_project",
            "Opens a project folder, replacing the open one (then reload).",
            vec![("path", string())],
            state(),
        ),
        (
            "choose_project",
            "The native folder dialog, then open_project; null when cancelled.",
            vec![],
            Option::<AppState>::name(&cfg),
        ),
        ("save_api_key", "Saves the Anthropic API key; an empty key removes it.", vec![("key", string())], state()),
        (
            "save_allowed_mcp_tools",
            "Saves the other MCP servers' tools coach mode allows (mcp__server__tool or mcp__server__*).",
            vec![("tools", Vec::<String>::name(&cfg))],
            state(),
        ),
        ("forget_project", "Removes a folder from the recent projects.", vec![("path", string())], state()),
        (
            "export_learning_record",
            "The native save dialog, then the signed learning record written there; null when cancelled.",
            vec![("since", Option::<String>::name(&cfg))],
            Option::<crate::SavedRecord>::name(&cfg),
        ),
        (
            "open_external",
            "Opens an https: link in the system browser; any other link is refused (url_refused).",
            vec![("url", string())],
            "null".to_owned(),
        ),
    ];
    let mut text = String::from(
        "/** Every command of the desktop shell: its arguments and what it resolves to; a failed one rejects with a `CommandError`. */\nexport interface Commands {\n",
    );
    for (name, doc, args, returns) in commands {
        let args: Vec<String> = args.iter().map(|(arg, ty)| format!("{arg}: {ty}")).collect();
        let args =
            if args.is_empty() { "Record<string, never>".to_owned() } else { format!("{{ {} }}", args.join("; ")) };
        text.push_str(&format!("  /** {doc} */\n  {name}: {{ args: {args}; returns: {returns} }};\n"));
    }
    text.push('}');
    let mut declarations = vec![
        Declaration::new("Commands", text),
        Declaration::new(
            "Events",
            format!(
                "/** Every event the shell emits, and its payload: UI catalog frames (JSON text) and terminal output. */\n\
                 export interface Events {{\n  {UI_EVENT:?}: string;\n  {TERMINAL_EVENT:?}: string;\n}}"
            ),
        ),
    ];
    let mut types = vec![
        Declaration::of::<crate::ApiKeyState>(&cfg),
        Declaration::of::<AppState>(&cfg),
        Declaration::of::<crate::CommandError>(&cfg),
        Declaration::of::<crate::CommandErrorCode>(&cfg),
        Declaration::of::<crate::KeySource>(&cfg),
        Declaration::of::<crate::ProjectEntry>(&cfg),
        Declaration::of::<crate::RecentEntry>(&cfg),
        Declaration::of::<crate::SavedRecord>(&cfg),
    ];
    types.sort_by(|a, b| a.name.cmp(&b.name));
    declarations.extend(types);
    declarations
}
