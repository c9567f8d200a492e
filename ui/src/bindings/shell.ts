// Generated from the desktop shell's Rust types by ts-rs (src-tauri/bindings.rs).
// Do not edit; regenerate with `PAIGE_BLESS=1 cargo test -p paige-app --test shell bindings`.

/** Every command of the desktop shell: its arguments and what it resolves to; a failed one rejects with a `CommandError`. */
export interface Commands {
  /** One UI catalog frame to the core; the reply frame, if any. */
  ui_message: { args: { frame: string }; returns: string | null };
  /** What the welcome and settings screens show. */
  app_state: { args: Record<string, never>; returns: AppState };
  /** Opens a project folder, replacing the open one (then reload). */
  open_project: { args: { path: string }; returns: AppState };
  /** The native folder dialog, then open_project; null when cancelled. */
  choose_project: { args: Record<string, never>; returns: AppState | null };
  /** Saves the Anthropic API key; an empty key removes it. */
  save_api_key: { args: { key: string }; returns: AppState };
  /** Saves the other MCP servers' tools coach mode allows (mcp__server__tool or mcp__server__*). */
  save_allowed_mcp_tools: { args: { tools: Array<string> }; returns: AppState };
  /** Removes a folder from the recent projects. */
  forget_project: { args: { path: string }; returns: AppState };
  /** The native save dialog, then the signed learning record written there; null when cancelled. */
  export_learning_record: { args: { since: string | null }; returns: SavedRecord | null };
  /** Opens an https: link in the system browser; any other link is refused (url_refused). */
  open_external: { args: { url: string }; returns: null };
}

/** Every event the shell emits, and its payload: UI catalog frames (JSON text) and terminal output. */
export interface Events {
  "paige://ui": string;
  "paige://terminal": string;
}

export type ApiKeyState = { configured: boolean, source: KeySource, 
/**
 * The key's last four characters, to recognise it by.
 */
lastFour: string | null, };

/**
 * What the welcome and settings screens show (`app_state` and the commands that change it).
 */
export type AppState = { project: ProjectEntry | null, recentProjects: Array<RecentEntry>, apiKey: ApiKeyState, 
/**
 * Where the key and the recent projects are kept.
 */
settingsPath: string, 
/**
 * A problem to show: a project that did not open at launch, unreadable settings.
 */
notice: string | null, 
/**
 * Other MCP servers' tools coach mode lets Claude Code call (`mcp__server__tool` or
 * `mcp__server__*`); all others are denied.
 */
allowedMcpTools: Array<string>, };

export type CommandError = { code: CommandErrorCode, message: string, };

/**
 * What went wrong, for the UI to act on; `message` says it for a person.
 */
export type CommandErrorCode = "no_project" | "project_refused" | "settings" | "dialog" | "url_refused" | "opener" | "record" | "internal";

/**
 * Where the key in use comes from.
 */
export type KeySource = "environment" | "settings" | "none";

export type ProjectEntry = { path: string, name: string, };

export type RecentEntry = { path: string, name: string, 
/**
 * ISO 8601.
 */
openedAt: string, 
/**
 * Whether the directory still exists.
 */
available: boolean, };

/**
 * Where `export_learning_record` saved the record.
 */
export type SavedRecord = { path: string, lines: number, sessions: number, 
/**
 * The key a mentor can pin (`paige record verify FILE --key …`).
 */
publicKey: string, };
