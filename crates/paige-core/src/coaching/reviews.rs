//! Spaced review's entry points (issue 31): the due list, and a review's question and grade
//! as owned background work answering the UI that asked. The review itself lives in
//! `review/`.

use std::sync::Arc;

use super::Coaching;
use crate::event::Event;
use crate::protocol::{ConnectionId, ReviewDue, ReviewErrorView, ServerMessage};

impl Coaching {
    /// `reviews:list`: review items made of what is new, then what is due.
    pub fn reviews_due(&self) -> Result<ReviewDue, crate::db::DbError> {
        self.reviews().sync()?;
        self.reviews().due()
    }

    /// `reviews:start`: the question (a model call) follows to `from`, or why not.
    pub fn start_spaced_review(self: &Arc<Self>, from: ConnectionId, item_id: String) {
        let core = self.clone();
        let cancel = self.shutdown_token();
        self.tasks().spawn(async move {
            let message = tokio::select! {
                _ = cancel.cancelled() => return,
                asked = core.reviews().start(&item_id) => match asked {
                    Ok(question) => ServerMessage::ReviewsQuestion(question),
                    Err(err) => ServerMessage::ReviewsError(ReviewErrorView { item_id: Some(item_id), error: err.to_string() }),
                },
            };
            core.ctx().emit(Event::UiTo { connection: from, message });
        });
    }

    /// `reviews:answer`: the grade and the next date follow to `from`, then what is due now.
    pub fn answer_spaced_review(self: &Arc<Self>, from: ConnectionId, item_id: String, answer: String) {
        let core = self.clone();
        let cancel = self.shutdown_token();
        self.tasks().spawn(async move {
            let graded = tokio::select! {
                _ = cancel.cancelled() => return,
                graded = core.reviews().answer(&item_id, &answer) => graded,
            };
            let message = match graded {
                Ok(graded) => ServerMessage::ReviewsGraded(graded),
                Err(err) => {
                    let error = ReviewErrorView { item_id: Some(item_id), error: err.to_string() };
                    return core
                        .ctx()
                        .emit(Event::UiTo { connection: from, message: ServerMessage::ReviewsError(error) });
                }
            };
            core.ctx().emit(Event::UiTo { connection: from, message });
            match core.reviews().due() {
                Ok(due) => core.ctx().emit(Event::UiTo { connection: from, message: ServerMessage::ReviewsDue(due) }),
                Err(err) => tracing::warn!("cannot list the reviews due: {err}"),
            }
        });
    }

    /// `record:export`: the signed learning record as text, for the browser UI to download.
    /// `since` is a day (`YYYY-MM-DD`, UTC). The key is made on first export (`DATA_DIR`, 0600).
    pub fn export_record_text(&self, since: Option<&str>) -> Result<crate::protocol::RecordExported, String> {
        let since = parse_day(since)?;
        let key = crate::record::load_or_create_key(&self.config().data_dir).map_err(|err| err.to_string())?;
        let mut content = Vec::new();
        let summary =
            crate::record::export(self.db(), &key, since, self.now(), &mut content).map_err(|err| err.to_string())?;
        let content = String::from_utf8(content).map_err(|err| format!("the record is not text: {err}"))?;
        Ok(crate::protocol::RecordExported {
            file_name: format!("paige-learning-record-{}.jsonl", self.now().format("%Y-%m-%d")),
            content,
            lines: summary.lines,
            sessions: summary.sessions,
            public_key: summary.public_key,
        })
    }

    /// The signed learning record written to `path` (the desktop app's save dialog chose it):
    /// written beside it first, then renamed over it, so a failure leaves no half record.
    pub fn export_record_to(
        &self,
        path: &std::path::Path,
        since: Option<&str>,
    ) -> Result<crate::record::ExportSummary, String> {
        let since = parse_day(since)?;
        let key = crate::record::load_or_create_key(&self.config().data_dir).map_err(|err| err.to_string())?;
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
        let mut tmp =
            tempfile::NamedTempFile::new_in(dir).map_err(|err| format!("cannot write in {}: {err}", dir.display()))?;
        let summary = crate::record::export(self.db(), &key, since, self.now(), tmp.as_file_mut())
            .map_err(|err| err.to_string())?;
        tmp.persist(path).map_err(|err| format!("cannot save {}: {}", path.display(), err.error))?;
        Ok(summary)
    }
}

/// A `YYYY-MM-DD` day as its first instant (UTC).
fn parse_day(day: Option<&str>) -> Result<Option<chrono::DateTime<chrono::Utc>>, String> {
    let Some(day) = day.map(str::trim).filter(|d| !d.is_empty()) else { return Ok(None) };
    let date = chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d")
        .map_err(|_| format!("\"{day}\" is not a day: write it as YYYY-MM-DD"))?;
    Ok(Some(date.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc()))
}
