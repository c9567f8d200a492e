//! The dashboard (spec Story 12): `dashboard:request` answers `dashboard:state` from SQLite at
//! once (FR-168…FR-170), then runs two flows in parallel in the background (FR-177): the
//! issue assessment (`gh issue list`, memories, Sonnet: `issues.rs`) and the learning
//! materials (the top 5 unaddressed gaps, Sonnet with web search: `materials.rs`). Each
//! broadcasts its answer or its error on its own; `dashboard_loaded` is logged once both have
//! ended (FR-186). `dashboard:refresh_issues` re-runs only the issue assessment (FR-180).
//!
//! `dashboard:state` goes to the UI that asked, ahead of anything the flows send: its stats
//! are for the period that UI chose. Issues and materials go to every UI when a flow runs;
//! a kept answer (`cache.rs`: until a session completes, a refresh, or a day) goes to the UI
//! that asked alone, with no model call. `dashboard:request` with `refresh` runs both flows
//! again. When a session ends, every UI that asked for the dashboard gets its
//! `dashboard:state` again (the session done, its stats and skills); while one is live, as it
//! goes on (`live.rs`).
//!
//! [`Dashboard`] is the feature: it owns its cache and gets the shared context and where
//! `gh` is when `Core::open` builds it. It knows nothing of `Core`.

mod cache;
mod issues;
mod live;
mod materials;

pub use cache::{DashboardCache, max_age};

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use serde_json::json;

use crate::ctx::Ctx;
use crate::db::{ActionType, DashboardRows, DbError, iso};
use crate::event::Event;
use crate::protocol::{
    ConnectionId, DashboardLearning, DashboardState, DashboardStats, DreyfusItem, GradeCounts, InProgressSession,
    KataSummary, Period, RelianceBucket, RelianceGauge, ServerMessage,
};

/// The dashboard: its kept model answers and the UIs showing it.
pub struct Dashboard {
    ctx: Arc<Ctx>,
    cache: DashboardCache,
    /// The GitHub CLI (`PAIGE_GH`, else `gh` on `PATH`) and how long one call may take.
    gh_program: std::path::PathBuf,
    gh_timeout: std::time::Duration,
}

impl Dashboard {
    pub(crate) fn new(
        ctx: Arc<Ctx>,
        gh_program: Option<&std::path::Path>,
        gh_timeout: std::time::Duration,
    ) -> Arc<Dashboard> {
        let gh_program = gh_program.unwrap_or(std::path::Path::new("gh")).to_owned();
        Arc::new(Dashboard { ctx, cache: DashboardCache::default(), gh_program, gh_timeout })
    }

    /// The kept model answers (`cache.rs`).
    pub fn cache(&self) -> &DashboardCache {
        &self.cache
    }

    /// `dashboard:request` (Scenario 12.1): `dashboard:state` to `from` now, then the issue
    /// assessment and learning materials in the background, from the cache when it has them
    /// and `refresh` is not set. Reads SQLite: call it where blocking is allowed.
    pub fn request(self: &Arc<Self>, from: ConnectionId, period: Option<Period>, refresh: bool) -> Result<(), DbError> {
        let period = period.unwrap_or_default();
        let state = self.state(period)?;
        self.cache().note_viewer(from, period);
        if refresh {
            self.cache().invalidate();
        }
        // Before the flows start, so nothing they send can overtake it (SC-087).
        self.ctx.emit(Event::UiTo { connection: from, message: ServerMessage::DashboardState(state) });
        self.spawn(move |dashboard| async move {
            let (issues, materials) = tokio::join!(dashboard.assess_issues(Some(from)), dashboard.find_materials(from));
            let data =
                json!({ "statsPeriod": period_name(period), "issuesLoaded": issues, "materialsLoaded": materials });
            let logger = dashboard.clone();
            blocking(move || logger.ctx.log_action(ActionType::DashboardLoaded, data)).await;
        });
        Ok(())
    }

    /// `dashboard:refresh_issues` (Scenario 12.8): the issue assessment again, nothing else.
    pub fn refresh_issues(self: &Arc<Self>) {
        self.spawn(|dashboard| async move {
            dashboard.assess_issues(None).await;
        });
    }

    /// A session ended: a completed one makes the kept model answers stale (new gaps, new
    /// stages, one more recent session), and every UI that asked for the dashboard gets its
    /// `dashboard:state` again, for the period it chose — and, after a completed one, the
    /// learning materials for the gaps it found, without a reload. Reads SQLite.
    pub(crate) fn session_ended(self: &Arc<Self>, status: crate::db::SessionStatus) {
        if status != crate::db::SessionStatus::Completed {
            return self.push_state();
        }
        self.cache().invalidate();
        self.push_state();
        let viewers = self.cache().viewers(|id| self.ctx.live().connection(id).is_none());
        if viewers.is_empty() {
            return;
        }
        // One research for all of them: the first runs it, the others get what it kept.
        self.spawn(move |dashboard| async move {
            for (viewer, _) in viewers {
                dashboard.find_materials(viewer).await;
            }
        });
    }

    /// Every UI that asked for the dashboard gets its `dashboard:state` again, for the period
    /// it chose. Reads SQLite.
    pub(crate) fn push_state(&self) {
        let viewers = self.cache().viewers(|id| self.ctx.live().connection(id).is_none());
        let mut states: Vec<(Period, DashboardState)> = Vec::new();
        for (connection, period) in viewers {
            let state = match states.iter().find(|(p, _)| *p == period) {
                Some((_, state)) => state.clone(),
                None => match self.state(period) {
                    Ok(state) => {
                        states.push((period, state.clone()));
                        state
                    }
                    Err(err) => {
                        tracing::warn!("the dashboard's state is not sent again: {err}");
                        return;
                    }
                },
            };
            self.ctx.emit(Event::UiTo { connection, message: ServerMessage::DashboardState(state) });
        }
    }

    /// The period's learning signals: prompts per reliance class by day (by week for all
    /// time), solutions shown then typed, and how the comprehension answers came out.
    fn learning(&self, period: Period, since: Option<DateTime<Utc>>) -> Result<DashboardLearning, DbError> {
        let db = self.ctx.db();
        let buckets = db.reliance_buckets(since, period != Period::All)?;
        let tally = db.grade_tally(since)?;
        Ok(DashboardLearning {
            reliance: buckets
                .into_iter()
                .map(|(label, counts)| RelianceBucket { label, counts: RelianceGauge::of(counts) })
                .collect(),
            solutions_shown: db.solutions_shown(since, None)?,
            comprehension: GradeCounts {
                correct: tally.correct,
                partial: tally.partial,
                incorrect: tally.incorrect,
                skipped: tally.skipped,
            },
        })
    }

    /// The dashboard's state now: Dreyfus assessments, the period's stats, the sessions
    /// still active and the katas. An empty database is valid zeros and empty lists (EC-88).
    pub fn state(&self, period: Period) -> Result<DashboardState, DbError> {
        let dreyfus = self
            .ctx
            .db()
            .dreyfus_assessments()?
            .into_iter()
            .map(|a| DreyfusItem {
                skill_area: a.skill_area,
                stage: a.stage.as_str().to_owned(),
                confidence: a.confidence,
                assessed_at: iso(a.assessed_at),
            })
            .collect();
        let since = period_start(period, self.ctx.now());
        let DashboardRows { stats, in_progress, katas } = self.ctx.db().dashboard_rows(since)?;
        let live = self.ctx.active_session().map(|s| s.id);
        let learning = self.learning(period, since)?;
        let (_, reviews_due) = self.ctx.db().due_reviews(self.ctx.now(), 0)?;
        Ok(DashboardState {
            learning,
            reviews_due,
            dreyfus,
            stats: DashboardStats {
                period: period_name(period).to_owned(),
                sessions_completed: stats.sessions_completed,
                total_coaching_minutes: stats.total_coaching_minutes,
                issues_worked_on: stats.issues_worked_on,
                knowledge_gaps_identified: stats.knowledge_gaps_identified,
                knowledge_gaps_addressed: stats.knowledge_gaps_addressed,
                hints_used: stats.hints_used,
                api_cost_total: stats.api_cost_total,
            },
            in_progress_sessions: in_progress
                .into_iter()
                .map(|s| InProgressSession {
                    live: live.as_deref() == Some(s.id.as_str()),
                    id: s.id,
                    issue_number: s.issue_number,
                    issue_title: s.issue_title,
                    started_at: s.started_at,
                    phases_completed: s.phases_completed,
                    phases_total: s.phases_total,
                    cost_so_far: s.cost,
                })
                .collect(),
            katas: katas
                .into_iter()
                .map(|k| KataSummary {
                    id: k.id,
                    title: k.title,
                    topic: k.topic,
                    attempts_count: k.attempts_count,
                    best_level: k.best_level,
                    constraint_count: k.constraint_count,
                })
                .collect(),
        })
    }

    /// Runs `flow` on the core's task tracker until it ends or Paige shuts down. Without a
    /// runtime (Paige shutting down) nothing runs.
    fn spawn<F, Fut>(self: &Arc<Self>, flow: F)
    where
        F: FnOnce(Arc<Dashboard>) -> Fut,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!("no runtime: the dashboard's background flows do not run");
            return;
        };
        let cancel = self.ctx.shutdown_token();
        let work = flow(self.clone());
        self.ctx.tasks().spawn_on(
            async move {
                tokio::select! {
                    _ = cancel.cancelled() => {}
                    () = work => {}
                }
            },
            &runtime,
        );
    }

    /// The learner's stages as the prompts take them ("area: stage, …"; novice when none).
    fn stage_summary(&self) -> String {
        match self.ctx.db().dreyfus_assessments() {
            Ok(assessments) if !assessments.is_empty() => assessments
                .iter()
                .map(|a| format!("{}: {}", a.skill_area, a.stage.as_str()))
                .collect::<Vec<_>>()
                .join(", "),
            Ok(_) => "novice".into(),
            Err(err) => {
                tracing::warn!("cannot read the Dreyfus assessments; assuming novice: {err}");
                "novice".into()
            }
        }
    }
}

/// The spec's names for the periods.
pub fn period_name(period: Period) -> &'static str {
    match period {
        Period::Week => "7d",
        Period::Month => "30d",
        Period::All => "all",
    }
}

/// Where a period starts: 7 or 30 days before `now`; `None` for all time.
pub fn period_start(period: Period, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    match period {
        Period::Week => Some(now - Duration::days(7)),
        Period::Month => Some(now - Duration::days(30)),
        Period::All => None,
    }
}

/// Runs blocking work (SQLite, `gh`, the memory store) on the blocking pool. When the
/// runtime is going away it never returns: the flow's shutdown branch ends it.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    match tokio::task::spawn_blocking(work).await {
        Ok(value) => value,
        Err(err) if err.is_panic() => std::panic::resume_unwind(err.into_panic()),
        Err(_) => std::future::pending().await,
    }
}
