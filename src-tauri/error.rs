//! The one error every shell command rejects with: `{code, message}`, typed in the generated
//! bindings (`CommandError`), so the UI can tell a refused folder from a missing project
//! without parsing text.

use serde::Serialize;

/// What went wrong, for the UI to act on; `message` says it for a person.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CommandErrorCode {
    /// The window has no project open (first run, or it failed to open).
    NoProject,
    /// The folder cannot be opened as a project (missing, not a folder, unreadable).
    ProjectRefused,
    /// The settings file cannot be written.
    Settings,
    /// The native folder dialog is not available or gave an unusable path.
    Dialog,
    /// A link refused by `open_external`: not an absolute `https:` URL.
    UrlRefused,
    /// The system could not open the link (no browser, `xdg-open` missing).
    Opener,
    /// The learning record could not be exported (the key, the database, the file).
    Record,
    /// The app failed while handling the request (its work panicked): a bug to report.
    Internal,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommandError {
    pub code: CommandErrorCode,
    pub message: String,
}

impl CommandError {
    pub fn new(code: CommandErrorCode, message: impl Into<String>) -> CommandError {
        CommandError { code, message: message.into() }
    }

    pub(crate) fn with(code: CommandErrorCode) -> impl FnOnce(String) -> CommandError {
        move |message| CommandError::new(code, message)
    }
}
