//! Flow A, the issue assessment (Scenarios 12.2, 12.4–12.6, 12.8): up to 50 open issues from
//! `gh` in the project, memories about them (none when the store is away), Sonnet ranking
//! them against the learner's stages, recent sessions and gaps → the top 10 as
//! `dashboard:issues`, or why not as `dashboard:issues_error`.

use std::sync::Arc;

use serde_json::{Value, json};

use super::blocking;
use super::cache::{Claim, joined};
use crate::api::CallOptions;
use crate::db::iso;
use crate::event::Event;
use crate::github::{Gh, GhError, ListedIssue, truncate_chars};
use crate::prompts::issue_assessment::{
    self as prompt, AssessedIssue, GapSummary, IssueAssessmentResponse, RecentSession, RelatedMemory,
};
use crate::protocol::{ConnectionId, DashboardIssue, DashboardIssues, ErrorText, ServerMessage};

/// The issues the dashboard shows (FR-173).
pub const TOP_ISSUES: usize = 10;
/// Memories asked for about the issues (FR-172).
const MEMORIES: usize = 10;
const RECENT_SESSIONS: usize = 10;
const GAPS: usize = 20;
/// The memory query: the issues' titles, cut to this many characters.
const MAX_QUERY_CHARS: usize = 2000;
/// Ten assessed issues with their reasons need more than the default 4,096 tokens.
const MAX_TOKENS: u32 = 8192;

/// The issues listed and the user message that asks about them.
struct Assessment {
    listed: Vec<ListedIssue>,
    message: String,
}

impl super::Dashboard {
    /// The issue assessment for a load by `to` (a fresh kept answer goes to `to` alone), or
    /// for a refresh (`to: None`: always run). A run broadcasts its outcome; whether issues
    /// were sent.
    pub(super) async fn assess_issues(self: &Arc<Self>, to: Option<ConnectionId>) -> bool {
        let claim = self.cache().lock().issues.claim(self.ctx.now(), 0, to.is_none());
        let ticket = match claim {
            Claim::Kept(issues) => {
                if let Some(connection) = to {
                    let message = ServerMessage::DashboardIssues(DashboardIssues { issues });
                    self.ctx.emit(Event::UiTo { connection, message });
                }
                return true;
            }
            Claim::Joined(done) => return joined(done).await,
            Claim::Run(ticket) => ticket,
        };
        let outcome = self.run_issue_assessment().await;
        let answer = outcome.as_ref().ok().cloned();
        self.cache().lock().issues.finish(ticket, self.ctx.now(), answer);
        match outcome {
            Ok(issues) => {
                self.ctx.broadcast(ServerMessage::DashboardIssues(DashboardIssues { issues }));
                true
            }
            Err(error) => {
                tracing::warn!("dashboard issues: {error}");
                self.ctx.broadcast(ServerMessage::DashboardIssuesError(ErrorText { error }));
                false
            }
        }
    }

    /// `gh`, then (with open issues) the model's ranking.
    async fn run_issue_assessment(self: &Arc<Self>) -> Result<Vec<DashboardIssue>, String> {
        let dashboard = self.clone();
        match blocking(move || dashboard.issue_assessment_input()).await {
            // Nothing to assess: no model call (Scenario 12.5).
            Err(err) => Err(format!("Cannot list this project's GitHub issues: {err}")),
            // No open issues (EC-84): the answer is an empty list, no model call needed.
            Ok(None) => Ok(Vec::new()),
            Ok(Some(assessment)) => self.rank_issues(assessment).await,
        }
    }

    /// `gh issue list`, then the memories, stages, sessions and gaps the model is given
    /// (FR-174). Blocking. `None` when there is no open issue.
    fn issue_assessment_input(&self) -> Result<Option<Assessment>, GhError> {
        let gh = Gh { program: &self.gh_program, dir: self.ctx.root().path() };
        let listed = gh.open_issues(self.gh_timeout)?;
        if listed.is_empty() {
            return Ok(None);
        }
        let titles = listed.iter().map(|i| i.title.as_str()).collect::<Vec<_>>().join("\n");
        // Degrades to none when the store is unavailable (Scenario 12.4).
        let memories: Vec<RelatedMemory> = self
            .ctx
            .memory()
            .query_memories(&truncate_chars(&titles, MAX_QUERY_CHARS), Some(MEMORIES), None)
            .into_iter()
            .map(|m| RelatedMemory { content: m.content, connection: None })
            .collect();
        let db = self.ctx.db();
        let stages: Vec<Value> = db
            .dreyfus_assessments()
            .unwrap_or_default()
            .into_iter()
            .map(|a| json!({ "skill_area": a.skill_area, "stage": a.stage, "confidence": a.confidence, "assessed_at": iso(a.assessed_at) }))
            .collect();
        let recent: Vec<RecentSession> = db
            .recently_completed(RECENT_SESSIONS)
            .unwrap_or_default()
            .into_iter()
            .map(|s| RecentSession { issue_title: s.issue_title, completed_at: s.completed_at })
            .collect();
        let gaps: Vec<GapSummary> = db
            .unaddressed_gaps(GAPS)
            .unwrap_or_default()
            .into_iter()
            .map(|g| GapSummary { topic: g.topic, severity: g.severity.as_str().to_owned() })
            .collect();
        let issues: Vec<Value> = listed.iter().filter_map(|i| serde_json::to_value(i).ok()).collect();
        let message = prompt::assemble_user_message(&issues, &stages, &recent, &gaps, &memories);
        Ok(Some(Assessment { listed, message }))
    }

    /// Sonnet's ranking, with one more try on a transient failure (FR-178).
    async fn rank_issues(&self, assessment: Assessment) -> Result<Vec<DashboardIssue>, String> {
        let session = self.ctx.active_session().map(|s| s.id);
        let options = CallOptions {
            session_id: session.as_deref(),
            max_tokens: Some(MAX_TOKENS),
            ..CallOptions::new(prompt::CALL_TYPE, prompt::MODEL, prompt::SYSTEM_PROMPT, &assessment.message)
        };
        let answer = self
            .ctx
            .api()
            .call_with_retry::<IssueAssessmentResponse>(self.ctx.db(), &options)
            .await
            .map_err(|err| err.readable("Paige could not assess this project's issues"))?;
        Ok(top_issues(answer.issues, &assessment.listed))
    }
}

/// The model's picks that name an issue `gh` listed (once each, with its real title), best
/// priority first, at most [`TOP_ISSUES`].
pub fn top_issues(assessed: Vec<AssessedIssue>, listed: &[ListedIssue]) -> Vec<DashboardIssue> {
    let mut seen = std::collections::HashSet::new();
    let mut issues: Vec<DashboardIssue> = assessed
        .into_iter()
        .filter_map(|a| {
            let real = listed.iter().find(|l| l.number == a.number)?;
            seen.insert(a.number).then(|| DashboardIssue {
                number: a.number,
                title: real.title.clone(),
                summary: a.summary,
                suitability: a.suitability,
                suitability_reason: a.suitability_reason,
                estimated_difficulty: a.estimated_difficulty,
                relevant_skills: a.relevant_skills,
                priority_score: if a.priority_score.is_finite() { a.priority_score.clamp(0.0, 1.0) } else { 0.0 },
                priority_factors: a.priority_factors.into(),
                learning_opportunities: a.learning_opportunities,
                url: Some(real.url.clone()).filter(|u| u.starts_with("https://")),
            })
        })
        .collect();
    issues.sort_by(|a, b| b.priority_score.total_cmp(&a.priority_score));
    issues.truncate(TOP_ISSUES);
    issues
}
