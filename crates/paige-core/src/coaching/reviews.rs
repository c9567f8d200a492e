//! Spaced review's entry points (issue 31): the due list, and a review's question and grade
//! as owned background work answering the UI that asked. The review itself lives in
//! `review/`.

use std::sync::Arc;

use crate::core::Core;
use crate::event::Event;
use crate::protocol::{ConnectionId, ReviewDue, ReviewErrorView, ServerMessage};

impl Core {
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
            core.emit(Event::UiTo { connection: from, message });
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
                    return core.emit(Event::UiTo { connection: from, message: ServerMessage::ReviewsError(error) });
                }
            };
            core.emit(Event::UiTo { connection: from, message });
            match core.reviews().due() {
                Ok(due) => core.emit(Event::UiTo { connection: from, message: ServerMessage::ReviewsDue(due) }),
                Err(err) => tracing::warn!("cannot list the reviews due: {err}"),
            }
        });
    }

    /// `record:export`: the signed learning record as text, for the browser UI to download.
    pub fn export_record_text(&self, since: Option<&str>) -> Result<crate::protocol::RecordExported, String> {
        let _ = since;
        Err("exporting the learning record is not built yet".into())
    }
}
