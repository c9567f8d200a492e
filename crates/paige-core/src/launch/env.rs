//! The environment Claude Code gets: only what it needs, never Paige's own secrets.
//!
//! Paige's `ANTHROPIC_API_KEY` pays for Paige's own calls; passed into the terminal it made
//! Claude Code ask "Detected a custom API key … use it?" on its first screen. The UI token
//! (`PAIGE_TOKEN` of `paige serve`) opens `/ws` and `/api`: Claude Code gets the agent token
//! instead, which opens only `/hooks` and `/mcp`. Everything else in the launching
//! environment passes only when it is on the allow-list below — never what leads to the
//! learner's desktop session: `DISPLAY`, `WAYLAND_DISPLAY`, `XDG_RUNTIME_DIR`,
//! `DBUS_SESSION_BUS_ADDRESS`, `SSH_AUTH_SOCK` (from the jail the X display typed into the
//! learner's terminal; `systemd-run --user` over D-Bus runs anything outside it).

use std::collections::HashMap;
use std::ffi::OsString;

/// Variables passed through as they are: what a terminal program, Claude Code and the
/// commands it runs need to work as in the learner's own shell.
const PASSED: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TZ",
    "COLORTERM",
    "NO_COLOR",
    "FORCE_COLOR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "NODE_EXTRA_CA_CERTS",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    // Where Claude Code's model calls go, and which model: the learner's choice.
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_MODEL",
    "ANTHROPIC_SMALL_FAST_MODEL",
    "ANTHROPIC_DEFAULT_OPUS_MODEL",
    "ANTHROPIC_DEFAULT_SONNET_MODEL",
    "ANTHROPIC_DEFAULT_HAIKU_MODEL",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "AWS_REGION",
    "AWS_PROFILE",
    "CLOUD_ML_REGION",
    "ANTHROPIC_VERTEX_PROJECT_ID",
    "DISABLE_AUTOUPDATER",
    "DISABLE_TELEMETRY",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
];

/// Prefixes passed through: the locale (`LC_*`).
const PASSED_PREFIXES: &[&str] = &["LC_"];

/// Where the launch comes from: the app's terminal, or the learner's own shell
/// (`paige claude`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The app's (or a test's) embedded terminal: the app's environment may hold Paige's own
    /// key, which Claude Code must not see.
    App,
    /// `paige claude` in the learner's shell: an `ANTHROPIC_API_KEY` there is the learner's,
    /// which their Claude Code would use anyway.
    Shell,
}

/// The environment for Claude Code from the launching one: the allow-list, the learner's
/// key only from their shell, and `extra` (Paige's URL, the agent token, Claude Code's
/// config dir) over all of it.
pub fn agent_env(
    from: &HashMap<String, String>,
    origin: Origin,
    extra: Vec<(OsString, OsString)>,
) -> Vec<(OsString, OsString)> {
    let passes = |name: &str| {
        PASSED.contains(&name)
            || PASSED_PREFIXES.iter().any(|p| name.starts_with(p))
            || (origin == Origin::Shell && matches!(name, "ANTHROPIC_API_KEY" | "ANTHROPIC_AUTH_TOKEN"))
    };
    let mut env: Vec<(OsString, OsString)> = from
        .iter()
        .filter(|(name, _)| passes(name) && !extra.iter().any(|(k, _)| k.to_str() == Some(name.as_str())))
        .map(|(k, v)| (OsString::from(k), OsString::from(v)))
        .collect();
    env.sort();
    env.extend(extra);
    env.push(("TERM".into(), "xterm-256color".into()));
    env
}
