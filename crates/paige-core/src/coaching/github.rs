//! The project's issues through the GitHub CLI (`gh issue view`, `gh issue list`), run in the
//! project directory with a deadline. `gh` missing, not logged in, or the project not a
//! GitHub repository: an error that says so, and sessions start from what the UI typed.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;

use crate::protocol::IssueOption;

/// How long one `gh` call may take (it talks to GitHub).
pub const GH_DEADLINE: Duration = Duration::from_secs(8);
/// The most issues the coaching panel lists.
pub const MAX_ISSUES: usize = 30;
/// How much of an issue's body the coaching panel shows.
const MAX_BODY_CHARS: usize = 2000;

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
        let body = self.body.trim();
        match body.char_indices().nth(MAX_BODY_CHARS) {
            Some((cut, _)) => format!("{}…", &body[..cut]),
            None => body.to_owned(),
        }
    }
}

/// The GitHub CLI, run in `dir`.
pub struct Gh<'a> {
    pub program: &'a Path,
    pub dir: &'a Path,
}

impl Gh<'_> {
    pub fn view(&self, number: i64) -> Result<IssueDetails, String> {
        let out = self.run(&["issue", "view", &number.to_string(), "--json", "number,title,body,labels,url"])?;
        serde_json::from_slice(&out).map_err(|err| format!("gh answered something that is not an issue: {err}"))
    }

    pub fn list(&self) -> Result<Vec<IssueOption>, String> {
        let limit = MAX_ISSUES.to_string();
        let out =
            self.run(&["issue", "list", "--state", "open", "--limit", &limit, "--json", "number,title,labels"])?;
        let issues: Vec<IssueDetails> = serde_json::from_slice(&out)
            .map_err(|err| format!("gh answered something that is not a list of issues: {err}"))?;
        Ok(issues.into_iter().map(|i| IssueOption { number: i.number, title: i.title, labels: i.labels }).collect())
    }

    /// Runs `gh args…`; its stdout when it exits 0 within [`GH_DEADLINE`], else why not.
    fn run(&self, args: &[&str]) -> Result<Vec<u8>, String> {
        let mut child = Command::new(self.program)
            .args(args)
            .current_dir(self.dir)
            .env("GH_PROMPT_DISABLED", "1")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|err| match err.kind() {
                std::io::ErrorKind::NotFound => "the GitHub CLI (gh) is not installed".to_owned(),
                _ => format!("cannot run {}: {err}", self.program.display()),
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
        let deadline = Instant::now() + GH_DEADLINE;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
                Ok(None) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!("gh did not answer within {} s", GH_DEADLINE.as_secs()));
                }
                Err(err) => return Err(format!("cannot wait for gh: {err}")),
            }
        };
        let (out, err) = (out.join().unwrap_or_default(), err.join().unwrap_or_default());
        if status.success() {
            Ok(out)
        } else {
            let why = err.lines().find(|l| !l.trim().is_empty()).unwrap_or("no message").trim().to_owned();
            Err(format!("gh failed: {why}"))
        }
    }
}
