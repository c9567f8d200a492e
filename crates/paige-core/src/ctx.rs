//! What every feature may use (issue 29): the database, the model client, the clock, the
//! event bus, the task tracker and its shutdown token, the project root, the live state and
//! memory, with the action log and the active session on top. It names no feature: `Core::open`
//! builds it once and hands an `Arc` of it to each feature object it builds (the Observer),
//! and `Core`'s own accessors read from it.

use std::sync::{Arc, Mutex, MutexGuard};

use chrono::{DateTime, Utc};
use serde_json::Value;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::api::ApiClient;
use crate::clock::Clock;
use crate::db::{ActionEntry, ActionType, Db, Session};
use crate::event::Event;
use crate::files::ProjectRoot;
use crate::live::Live;
use crate::protocol::ServerMessage;
use crate::sync::Locked;

/// The shared pieces; see the module docs.
pub struct Ctx {
    pub(crate) db: Db,
    pub(crate) api: ApiClient,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) events: broadcast::Sender<Event>,
    pub(crate) cancel: CancellationToken,
    pub(crate) tasks: TaskTracker,
    pub(crate) root: ProjectRoot,
    pub(crate) live: Mutex<Live>,
    /// Cross-session memory: disabled until the binary gives the core one (`with_memory`).
    pub(crate) memory: std::sync::RwLock<Arc<crate::memory::Memory>>,
}

/// The actions the spec logs even without a session: Explain This, practice reviews and the
/// dashboard belong to the learner, not to a coaching session.
fn logged_without_session(action: ActionType) -> bool {
    use ActionType::*;
    matches!(action, ExplainRequested | ExplainCompleted | ReviewRequested | ReviewCompleted | DashboardLoaded)
}

impl Ctx {
    pub fn db(&self) -> &Db {
        &self.db
    }

    pub fn api(&self) -> &ApiClient {
        &self.api
    }

    pub fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    pub fn root(&self) -> &ProjectRoot {
        &self.root
    }

    /// Cross-session memory (spec Story 8). Its methods block: call them off the runtime.
    pub fn memory(&self) -> Arc<crate::memory::Memory> {
        self.memory.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// A receiver of every [`Event`] pushed from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.events.subscribe()
    }

    /// Pushes an event to every subscriber; having none is fine.
    pub fn emit(&self, event: Event) {
        let _ = self.events.send(event);
    }

    /// Sends a message to every connected UI.
    /// Tells the core's features that `what` happened.
    pub fn publish(&self, what: crate::event::Domain) {
        self.emit(Event::Domain(what));
    }

    pub fn broadcast(&self, message: ServerMessage) {
        self.emit(Event::Ui(message));
    }

    /// A token cancelled at shutdown: background loops take a child of it.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// Every background loop and task is spawned here, and waited for at shutdown.
    pub fn tasks(&self) -> &TaskTracker {
        &self.tasks
    }

    /// The live state: one short-held lock, never across I/O or `.await`. It is plain data
    /// updated in small steps; a panic elsewhere cannot leave it half-written in a way later
    /// calls would trip over.
    pub(crate) fn live(&self) -> MutexGuard<'_, Live> {
        self.live.locked()
    }

    /// The active session, if any.
    pub fn active_session(&self) -> Option<Session> {
        self.live().session().map(|s| s.session.clone())
    }

    /// Appends to the active session's timeline and tells subscribers. With no active session
    /// the action is discarded with a warning (EC-17), but for the few the spec logs outside a
    /// session (then with none); a database error is logged, not raised: losing one timeline
    /// row must never fail the user's action.
    pub fn log_action(&self, action_type: ActionType, data: Value) -> Option<ActionEntry> {
        let session_id = self.live().session().map(|s| s.session.id.clone());
        let logged = match session_id {
            Some(session_id) => self.db.log_action(&session_id, action_type, Some(data)),
            // The spec logs these outside a session too (FR-165, FR-186): with none.
            None if logged_without_session(action_type) => self.db.log_action_without_session(action_type, Some(data)),
            None => {
                tracing::warn!(action = %action_type, "no active session; action not logged");
                return None;
            }
        };
        match logged {
            Ok(entry) => {
                self.emit(Event::ActionLogged(entry.clone()));
                Some(entry)
            }
            Err(err) => {
                tracing::error!(action = %action_type, "cannot log action: {err}");
                None
            }
        }
    }
}
