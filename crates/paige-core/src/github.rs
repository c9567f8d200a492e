//! The project's issues through the GitHub CLI (`gh issue view`, `gh issue list`), run in the
//! project directory with a deadline. `gh` missing, not logged in, or the project not a
//! GitHub repository: an error that says so ([`GhError`]), and sessions start from what the
//! UI typed. The dashboard lists up to 50 open issues with their bodies and comments
//! ([`Gh::open_issues`]).

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::protocol::IssueOption;

/// How long one of the coaching panel's `gh` calls may take (it talks to GitHub), unless
/// `PAIGE_GH_TIMEOUT_MS` is shorter.
pub const GH_DEADLINE: Duration = Duration::from_secs(8);
/// The most issues the coaching panel lists.
pub const MAX_ISSUES: usize = 30;
/// How much of an issue's body the coaching panel shows, and the dashboard sends the model
/// (EC-89).
pub const MAX_BODY_CHARS: usize = 2000;
/// The most open issues the dashboard assesses (FR-171).
pub const DASHBOARD_ISSUES: usize = 50;
/// The latest comments of an issue the dashboard sends the model, each cut to
/// [`MAX_COMMENT_CHARS`]: 50 issues with long threads would not fit a request.
pub const MAX_COMMENTS: usize = 5;
pub const MAX_COMMENT_CHARS: usize = 500;

/// Why `gh` gave no answer, in words the learner can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GhError {
    #[error("the GitHub CLI (gh) is not installed")]
    NotInstalled,
    #[error("the GitHub CLI (gh) is not logged in: run `gh auth login`")]
    NotAuthenticated,
    #[error("no GitHub remote found: this project is not a GitHub repository")]
    NoRemote,
    #[error("gh did not answer within {} s", .0.as_secs_f64())]
    TimedOut(Duration),
    #[error("gh failed: {0}")]
    Failed(String),
    #[error("gh answered something that is not {0}")]
    Unreadable(String),
}

impl From<GhError> for String {
    fn from(err: GhError) -> String {
        err.to_string()
    }
}

/// One open issue as the dashboard hands it to the model: labels and assignees by name, the
/// body cut to [`MAX_BODY_CHARS`], the latest comments cut too.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct ListedIssue {
    pub number: i64,
    pub title: String,
    #[serde(default)]
    pub body: String,
    #[serde(default, deserialize_with = "label_names")]
    pub labels: Vec<String>,
    #[serde(default, deserialize_with = "logins")]
    pub assignees: Vec<String>,
    #[serde(default)]
    pub comments: Vec<IssueComment>,
    /// The issue's page (for the dashboard's link; the model does not need it).
    #[serde(default, skip_serializing)]
    pub url: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct IssueComment {
    #[serde(default, deserialize_with = "login", skip_serializing_if = "String::is_empty")]
    pub author: String,
    #[serde(default)]
    pub body: String,
}

#[derive(Deserialize)]
struct Login {
    #[serde(default)]
    login: String,
}

fn logins<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    Ok(Vec::<Login>::deserialize(deserializer)?.into_iter().map(|l| l.login).collect())
}

fn login<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    Ok(Option::<Login>::deserialize(deserializer)?.map(|l| l.login).unwrap_or_default())
}

/// `text` cut to `max` characters (not bytes), with `…` when cut.
pub fn truncate_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// One issue as `gh issue view --json` gives it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct IssueDetails {
    pub number: i64,
    pub title: String,
    #[serde(default)]
    pub body: String,
    #[serde(default, deserialize_with = "label_names")]
    pub labels: Vec<String>,
    #[serde(default)]
    pub url: String,
}

#[derive(Deserialize)]
struct Label {
    name: String,
}

fn label_names<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    Ok(Vec::<Label>::deserialize(deserializer)?.into_iter().map(|l| l.name).collect())
}

impl IssueDetails {
    /// The body as the panel's summary: trimmed and cut to a readable length.
    pub fn summary(&self) -> String {
        truncate_chars(self.body.trim(), MAX_BODY_CHARS)
    }
}

/// The GitHub CLI, run in `dir`.
pub struct Gh<'a> {
    pub program: &'a Path,
    pub dir: &'a Path,
}

impl Gh<'_> {
    pub fn view(&self, number: i64, deadline: Duration) -> Result<IssueDetails, String> {
        let out =
            self.run(&["issue", "view", &number.to_string(), "--json", "number,title,body,labels,url"], deadline)?;
        serde_json::from_slice(&out).map_err(|err| format!("gh answered something that is not an issue: {err}"))
    }

    pub fn list(&self, deadline: Duration) -> Result<Vec<IssueOption>, String> {
        let limit = MAX_ISSUES.to_string();
        let out = self
            .run(&["issue", "list", "--state", "open", "--limit", &limit, "--json", "number,title,labels"], deadline)?;
        let issues: Vec<IssueDetails> = serde_json::from_slice(&out)
            .map_err(|err| format!("gh answered something that is not a list of issues: {err}"))?;
        Ok(issues.into_iter().map(|i| IssueOption { number: i.number, title: i.title, labels: i.labels }).collect())
    }

    /// The dashboard's list (FR-171, EC-89): up to [`DASHBOARD_ISSUES`] open issues with
    /// bodies, labels, assignees and comments, each cut to size, within `deadline`.
    pub fn open_issues(&self, deadline: Duration) -> Result<Vec<ListedIssue>, GhError> {
        let limit = DASHBOARD_ISSUES.to_string();
        let fields = "number,title,body,labels,assignees,comments,url";
        let out = self.run(&["issue", "list", "--state", "open", "--json", fields, "--limit", &limit], deadline)?;
        let mut issues: Vec<ListedIssue> =
            serde_json::from_slice(&out).map_err(|err| GhError::Unreadable(format!("a list of issues: {err}")))?;
        issues.truncate(DASHBOARD_ISSUES);
        for issue in &mut issues {
            issue.body = truncate_chars(&issue.body, MAX_BODY_CHARS);
            let skip = issue.comments.len().saturating_sub(MAX_COMMENTS);
            issue.comments.drain(..skip);
            for comment in &mut issue.comments {
                comment.body = truncate_chars(&comment.body, MAX_COMMENT_CHARS);
            }
        }
        Ok(issues)
    }

    /// Runs `gh args…` in its own process group; its stdout when it exits 0 within
    /// `deadline`, else why not (the group killed when it takes longer).
    fn run(&self, args: &[&str], deadline: Duration) -> Result<Vec<u8>, GhError> {
        let mut child = Command::new(self.program)
            .args(args)
            .current_dir(self.dir)
            .env("GH_PROMPT_DISABLED", "1")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .map_err(|err| match err.kind() {
                std::io::ErrorKind::NotFound => GhError::NotInstalled,
                _ => GhError::Failed(format!("cannot run {}: {err}", self.program.display())),
            })?;
        // Read both pipes on threads so a chatty gh cannot block on a full pipe.
        let mut stdout = child.stdout.take().expect("piped");
        let mut stderr = child.stderr.take().expect("piped");
        let out = std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = stdout.read_to_end(&mut buf);
            buf
        });
        let err = std::thread::spawn(move || {
            let mut buf = String::new();
            let _ = stderr.read_to_string(&mut buf);
            buf
        });
        let started = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if started.elapsed() < deadline => std::thread::sleep(Duration::from_millis(10)),
                Ok(None) => {
                    // The whole group: a wrapper script's children must not keep running.
                    if let Ok(pgid) = i32::try_from(child.id()) {
                        // SAFETY: killpg only sends a signal to the group this child leads.
                        unsafe { libc::killpg(pgid, libc::SIGKILL) };
                    }
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(GhError::TimedOut(deadline));
                }
                Err(err) => return Err(GhError::Failed(format!("cannot wait for gh: {err}"))),
            }
        };
        let (out, err) = (out.join().unwrap_or_default(), err.join().unwrap_or_default());
        if status.success() { Ok(out) } else { Err(failure(status.code(), &err)) }
    }
}

/// What a failed `gh` said, as a [`GhError`]: exit status 4 and "gh auth login" mean not
/// logged in; the messages gh prints without a (GitHub) remote mean no remote.
fn failure(code: Option<i32>, stderr: &str) -> GhError {
    let lower = stderr.to_lowercase();
    if code == Some(4) || ["gh auth login", "authentication", "bad credentials"].iter().any(|m| lower.contains(m)) {
        return GhError::NotAuthenticated;
    }
    const NO_REMOTE: [&str; 4] =
        ["no git remotes found", "not a git repository", "none of the git remotes", "could not determine base repo"];
    if NO_REMOTE.iter().any(|m| lower.contains(m)) {
        return GhError::NoRemote;
    }
    let why = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("no message").trim();
    GhError::Failed(why.to_owned())
}
