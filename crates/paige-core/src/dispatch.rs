//! One dispatcher from UI client message to handler (spec Story 5), as `impl Core`: handlers
//! either reply to the sender (returned) or broadcast through the core's event bus. The
//! message types it dispatches are in `protocol/`.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::json;

use crate::buffers::BufferError;
use crate::core::Core;
use crate::db::ActionType;
use crate::files::{FileError, PathError};
use crate::project::ProjectError;
use crate::protocol::*;

/// Client messages every UI may send (handled fully, or as the spec's deliberate no-ops);
/// `terminal:input` is added for a UI that has a terminal ([`TERMINAL_INPUT`]).
const HANDLED: &[&str] = &[
    "connection:hello",
    "file:open",
    "file:save",
    "file:close",
    "buffer:update",
    "editor:tab_switch",
    "editor:selection",
    "explorer:expand_dir",
    "explorer:collapse_dir",
    "fs:list",
    "hints:level_change",
    "user:idle_start",
    "user:idle_end",
    "terminal:resize",
    "session:start",
    "session:resume",
    "session:end",
    "session:list",
    "coaching:show_me",
    "observer:mute",
    "user:explain",
    "dashboard:request",
    "dashboard:refresh_issues",
    "user:review",
    "practice:submit_solution",
    "practice:list",
    "practice:kata_request",
    "intake:start",
    "intake:typing",
    "intake:answer",
    "learning:answer",
    "learning:skip",
    "learning:retry",
    "reviews:list",
    "reviews:start",
    "reviews:answer",
    "record:export",
];

/// Only a UI with a terminal (a desktop window and its PTY) may send this.
const TERMINAL_INPUT: &str = "terminal:input";

impl Core {
    /// Registers a UI connection.
    pub fn connect(&self) -> ConnectionId {
        let now = self.now();
        self.live().connect(now)
    }

    /// Forgets a UI connection (EC-03: nothing else changes).
    pub fn disconnect(&self, id: ConnectionId) {
        self.close_terminal(id);
        self.live().disconnect(id);
    }

    pub fn connection(&self, id: ConnectionId) -> Option<ConnectionMeta> {
        self.live().connection(id).cloned()
    }

    pub fn connection_count(&self) -> usize {
        self.live().connection_count()
    }

    /// The terminal size the UI last reported.
    pub fn terminal_size(&self) -> Option<TerminalSize> {
        self.live().terminal_size()
    }

    /// Handles one raw text frame from a UI; returns the reply frame for the sender, if any.
    /// Never panics, whatever `text` holds.
    pub fn handle_text(self: &Arc<Self>, from: ConnectionId, text: &str) -> Option<String> {
        self.handle_decoded(from, decode(text))
    }

    /// [`Core::handle_text`] for a frame already decoded, so an adapter can look at
    /// [`Decoded::may_block`] first and choose where to run it.
    pub fn handle_decoded(self: &Arc<Self>, from: ConnectionId, decoded: Decoded) -> Option<String> {
        let (id, reply) = match decoded {
            Decoded::Message { id, message } => (id, self.handle_message(from, message)),
            Decoded::Unknown { type_name } => {
                tracing::warn!(%type_name, "unknown message type; ignored");
                return None;
            }
            Decoded::Invalid { id, error } => {
                tracing::warn!(code = ?error.code, "rejected message: {}", error.message);
                (id, Some(ServerMessage::ConnectionError(error)))
            }
        };
        reply.map(|message| encode(&message, id.as_deref(), self.now().timestamp_millis()))
    }

    /// Handles one typed message; returns the reply for the sender, if any.
    pub fn handle_message(self: &Arc<Self>, from: ConnectionId, message: ClientMessage) -> Option<ServerMessage> {
        match message {
            ClientMessage::Hello(hello) => Some(self.hello(from, hello)),
            ClientMessage::FileOpen(PathPayload { path }) => {
                self.file_open(&path).err().map(ServerMessage::ConnectionError)
            }
            ClientMessage::FileSave(save) => self.file_save(save).err().map(ServerMessage::ConnectionError),
            ClientMessage::FileClose(PathPayload { path }) => {
                self.file_close(&path).err().map(ServerMessage::ConnectionError)
            }
            ClientMessage::BufferUpdate(update) => self.buffer_update(update).err().map(ServerMessage::ConnectionError),
            ClientMessage::EditorTabSwitch(t) => {
                self.log_action(ActionType::TabSwitch, json!({ "fromPath": t.from_path, "toPath": t.to_path }));
                None
            }
            ClientMessage::EditorSelection(s) => {
                self.log_action(
                    ActionType::Selection,
                    json!({ "path": s.path, "range": s.range, "textLength": s.text_length }),
                );
                None
            }
            ClientMessage::ExplorerExpandDir(_) | ClientMessage::ExplorerCollapseDir(_) => None,
            // Reads one folder (or its kept listing): a blocking frame (`may_block`).
            ClientMessage::FsList(FsList { path, offset }) => {
                Some(match self.list_folder(&path, offset.unwrap_or(0)) {
                    Ok(page) => ServerMessage::FsChildren(page),
                    Err(err) => {
                        tracing::warn!(path, "cannot list the folder: {err}");
                        ServerMessage::FsListError(crate::protocol::PathError { path, error: err.to_string() })
                    }
                })
            }
            ClientMessage::HintsLevelChange(h) => {
                self.log_action(
                    ActionType::HintLevelChange,
                    json!({ "level": h.level, "previousLevel": h.previous_level }),
                );
                self.coaching().change_hint_level(h.level);
                None
            }
            ClientMessage::UserIdleStart(i) => {
                self.log_action(ActionType::IdleStart, json!({ "lastActionTimestamp": i.last_action_timestamp }));
                None
            }
            ClientMessage::UserIdleEnd(_) => {
                self.log_action(ActionType::IdleEnd, json!({}));
                None
            }
            ClientMessage::TerminalResize(size) => {
                self.live().set_terminal_size(size);
                self.terminal_resize(from, size);
                None
            }
            ClientMessage::TerminalInput(TerminalInput { input }) if self.has_terminal(from) => {
                self.terminal_input(from, &input).err().map(|message| {
                    ServerMessage::ConnectionError(error(
                        ErrorCode::Internal,
                        message,
                        json!({ "type": "terminal:input" }),
                    ))
                })
            }
            // The wrap-up runs in the background; `session:completed` follows.
            ClientMessage::SessionEnd(_) => self.coaching().end_session_from_ui().err().map(|err| {
                let code = match err {
                    crate::coaching::WrapUpError::NoActiveSession => ErrorCode::InvalidMessage,
                    _ => ErrorCode::Internal,
                };
                ServerMessage::ConnectionError(error(code, err.to_string(), json!({ "type": "session:end" })))
            }),
            // `session:started` goes to every UI; only a refusal answers the sender. Another
            // active session is set aside: its wrap-up runs in the background.
            ClientMessage::SessionStart(start) => {
                let request = crate::coaching::StartRequest {
                    issue_number: start.issue_number,
                    title: start.title,
                    description: start.description,
                };
                match self.coaching().begin_coaching_session(request) {
                    Ok(_) => {
                        self.coaching().intake().for_new_session(from);
                        None
                    }
                    Err(err) => Some(session_error(err, "session:start")),
                }
            }
            ClientMessage::SessionResume(resume) => {
                self.coaching().resume_session(&resume.session_id).err().map(|err| session_error(err, "session:resume"))
            }
            // EC-70: without a session there is no Observer; ignored with a warning.
            ClientMessage::ObserverMute(mute) => {
                self.mute_observer(mute.muted);
                None
            }
            // The answer (or its error) follows for every UI; only an immediate refusal here.
            ClientMessage::UserExplain(request) => self.explain(request).err().map(ServerMessage::ExplainError),
            // The review (or its error) follows for every UI; only an immediate refusal here.
            ClientMessage::UserReview(review) => self.review_kata(review.into()).err().map(ServerMessage::ReviewError),
            ClientMessage::PracticeSubmitSolution(submit) => {
                self.review_kata(submit.into()).err().map(ServerMessage::ReviewError)
            }
            ClientMessage::PracticeList(_) => Some(match self.practice_katas() {
                Ok(katas) => ServerMessage::PracticeKatas(katas),
                Err(err) => ServerMessage::ConnectionError(error(
                    ErrorCode::Internal,
                    format!("Cannot list the katas: {err}"),
                    json!({ "type": "practice:list" }),
                )),
            }),
            ClientMessage::PracticeKataRequest(request) => Some(match self.load_kata(&request.kata_id) {
                Ok(kata) => ServerMessage::PracticeKataLoad(kata),
                Err(err) => ServerMessage::PracticeKataError(err),
            }),
            // `dashboard:state` to this UI at once; issues and materials follow for every UI.
            ClientMessage::DashboardRequest(request) => {
                self.dashboard_request(from, request.stats_period, request.refresh.unwrap_or(false)).err().map(|err| {
                    let message = format!("Cannot read the dashboard: {err}");
                    ServerMessage::ConnectionError(error(
                        ErrorCode::Internal,
                        message,
                        json!({ "type": "dashboard:request" }),
                    ))
                })
            }
            ClientMessage::DashboardRefreshIssues(_) => {
                self.refresh_dashboard_issues();
                None
            }
            ClientMessage::SessionList(_) => Some(ServerMessage::SessionOptions(self.coaching().session_options())),
            ClientMessage::CoachingShowMe(_) => {
                self.coaching().show_me().err().map(ServerMessage::CoachingWorkedExampleError)
            }
            // `coaching:phase_update` follows for every UI; only a refusal answers the sender.
            ClientMessage::CoachingPhaseDone(done) => {
                self.coaching().learner_completes_phase(done.phase).err().map(|err| {
                    let code = match err {
                        crate::agent::AgentError::Project(_) | crate::agent::AgentError::Db(_) => ErrorCode::Internal,
                        _ => ErrorCode::InvalidMessage,
                    };
                    ServerMessage::ConnectionError(error(
                        code,
                        err.to_string(),
                        json!({ "type": "coaching:phase_done" }),
                    ))
                })
            }
            ClientMessage::CoachingReplan(_) => self.coaching().request_replan().err().map(|err| {
                ServerMessage::ConnectionError(error(
                    ErrorCode::InvalidMessage,
                    err.to_string(),
                    json!({ "type": "coaching:replan" }),
                ))
            }),
            // The interview's state answers the sender; its questions and scores follow for every UI.
            ClientMessage::IntakeStart(_) => self.coaching().intake().start(from).err().map(ServerMessage::IntakeError),
            ClientMessage::IntakeTyping(typing) => {
                self.coaching().intake().typing(typing.typing);
                None
            }
            ClientMessage::IntakeSkip(_) => self.coaching().intake().skip().err().map(ServerMessage::IntakeError),
            ClientMessage::IntakeAnswer(answer) => {
                self.coaching().intake().answer(answer.text).err().map(ServerMessage::IntakeError)
            }
            // The check follows for every UI (`learning:check`); only a refusal answers the sender.
            ClientMessage::LearningAnswer(answer) => {
                self.coaching().answer_comprehension(&answer.question_id, &answer.answer).err().map(|err| {
                    ServerMessage::LearningError(LearningErrorView {
                        question_id: Some(answer.question_id),
                        phase: None,
                        error: err.to_string(),
                    })
                })
            }
            ClientMessage::LearningSkip(LearningPhase { phase }) => {
                self.coaching().skip_comprehension(phase).err().map(|err| {
                    ServerMessage::LearningError(LearningErrorView {
                        question_id: None,
                        phase: Some(phase),
                        error: err.to_string(),
                    })
                })
            }
            ClientMessage::LearningRetry(LearningPhase { phase }) => {
                self.coaching().retry_comprehension(phase).err().map(|err| {
                    ServerMessage::LearningError(LearningErrorView {
                        question_id: None,
                        phase: Some(phase),
                        error: err.to_string(),
                    })
                })
            }
            ClientMessage::ReviewsList(_) => Some(match self.coaching().reviews_due() {
                Ok(due) => ServerMessage::ReviewsDue(due),
                Err(err) => ServerMessage::ReviewsError(ReviewErrorView { item_id: None, error: err.to_string() }),
            }),
            // The question and the grade are model calls: they follow, to the sender.
            ClientMessage::ReviewsStart(start) => {
                self.coaching().start_spaced_review(from, start.item_id);
                None
            }
            ClientMessage::ReviewsAnswer(answer) => {
                self.coaching().answer_spaced_review(from, answer.item_id, answer.answer);
                None
            }
            // Reads the whole history and signs it: a blocking frame (`may_block`).
            ClientMessage::RecordExport(export) => {
                Some(match self.coaching().export_record_text(export.since.as_deref()) {
                    Ok(exported) => ServerMessage::RecordExported(exported),
                    Err(error) => ServerMessage::RecordError(RecordError { error }),
                })
            }
            // A UI without a terminal (the browser UI of `paige serve` never sends it): the
            // sender's mistake, not a missing feature.
            ClientMessage::TerminalInput(_) => Some(ServerMessage::ConnectionError(error(
                ErrorCode::InvalidMessage,
                "this UI has no terminal: terminal:input goes to a desktop window's PTY".into(),
                json!({ "type": TERMINAL_INPUT }),
            ))),
        }
    }

    fn hello(&self, from: ConnectionId, hello: Hello) -> ServerMessage {
        if let Some(meta) = self.live().connection_mut(from) {
            meta.version = Some(hello.version);
            meta.platform = Some(hello.platform);
            meta.window_size = Some(hello.window_size);
        }
        // True exactly when the feature is available to this UI: the terminal in a desktop
        // window (which gets its PTY when it connects), memory while its store answers, the
        // others always.
        let terminal = self.has_terminal(from);
        let memory = self.memory().is_available();
        let feature_flags: BTreeMap<String, bool> =
            ["dashboard", "explain", "intake", "memory", "observer", "practice", "review", "sessions", "terminal"]
                .into_iter()
                .map(|f| {
                    let built = matches!(
                        f,
                        "sessions" | "observer" | "explain" | "dashboard" | "practice" | "review" | "intake"
                    );
                    (f.to_owned(), (f == "terminal" && terminal) || (f == "memory" && memory) || built)
                })
                .collect();
        // The explorer needs the tree as soon as a UI connects, not only at session start;
        // only the UI that said hello needs it (N connecting UIs must not cost N² frames).
        // Its first level only: folders are listed as the UI opens them (`fs:list`).
        self.emit(crate::event::Event::UiTo { connection: from, message: self.first_tree() });
        for notice in self.notices() {
            self.emit(crate::event::Event::UiTo { connection: from, message: notice });
        }
        // A UI that connects mid-session (a reload, a second window) gets the session as it
        // stands, for itself only: nothing is resumed, logged or reopened elsewhere.
        if let Some(state) = self.coaching().live_session_state() {
            self.emit(crate::event::Event::UiTo { connection: from, message: ServerMessage::SessionStarted(state) });
        }
        for message in self.coaching().intake().rejoin() {
            self.emit(crate::event::Event::UiTo { connection: from, message });
        }
        if let Some(check) = self.checks().current_step_check() {
            self.emit(crate::event::Event::UiTo { connection: from, message: ServerMessage::CoachingStepCheck(check) });
        }
        for message in self.coaching().learning_rejoin() {
            self.emit(crate::event::Event::UiTo { connection: from, message });
        }
        // The Observer's state as the backend holds it (the mute toggle shows this, not a guess).
        let status = ServerMessage::ObserverStatus(self.observer_status());
        self.emit(crate::event::Event::UiTo { connection: from, message: status });
        ServerMessage::ConnectionInit(ConnectionInit {
            session_id: self.active_session().map(|s| s.id),
            capabilities: HANDLED.iter().chain(terminal.then_some(&TERMINAL_INPUT)).map(|s| s.to_string()).collect(),
            feature_flags,
            agent_command: self.config().agent_command.clone(),
        })
    }

    fn file_open(&self, path: &str) -> Result<(), ConnectionError> {
        let content = self.read_file(path).map_err(|err| project_error(path, err))?;
        self.live().opened(&content.path, (!content.binary).then_some(content.content.as_str()));
        self.log_action(ActionType::FileOpen, json!({ "path": content.path }));
        self.broadcast(ServerMessage::FsContent(content));
        Ok(())
    }

    fn file_save(&self, save: FileSave) -> Result<(), ConnectionError> {
        let char_count = save.content.chars().count();
        match self.write_file(&save.path, save.content) {
            Ok(path) => {
                self.log_action(ActionType::FileSave, json!({ "path": path.rel(), "charCount": char_count }));
                self.broadcast(ServerMessage::FsSaveAck(SaveAck {
                    path: path.rel().to_owned(),
                    success: true,
                    timestamp: self.now().timestamp_millis(),
                }));
                Ok(())
            }
            Err(ProjectError::Path(err)) => Err(path_rejected(&save.path, &err)),
            Err(ProjectError::Buffer(err)) => Err(project_error(&save.path, err.into())),
            Err(ProjectError::File(err)) => {
                tracing::warn!(path = %save.path, "save failed: {err}");
                self.broadcast(ServerMessage::FsSaveError(crate::protocol::PathError {
                    path: save.path,
                    error: err.to_string(),
                }));
                Ok(())
            }
        }
    }

    fn file_close(&self, path: &str) -> Result<(), ConnectionError> {
        let resolved = self.resolve_path(path).map_err(|err| path_rejected(path, &err))?;
        self.live().closed(resolved.rel());
        self.log_action(ActionType::FileClose, json!({ "path": resolved.rel() }));
        Ok(())
    }

    fn buffer_update(&self, update: BufferUpdate) -> Result<(), ConnectionError> {
        let path = self.resolve_path(&update.path).map_err(|err| path_rejected(&update.path, &err))?;
        let change = self
            .update_buffer(&path, update.content, update.cursor_position)
            .map_err(|err| project_error(&update.path, err))?;
        if let Some(c) = change {
            self.log_action(
                ActionType::BufferSignificantChange,
                json!({ "path": path.rel(), "previousCharCount": c.previous_char_count, "newCharCount": c.new_char_count, "delta": c.delta }),
            );
        }
        self.emit(crate::event::Event::BufferEdited { path: path.rel().to_owned() });
        Ok(())
    }
}

impl Decoded {
    /// Whether handling this frame may read files, walk the project, spawn or write to a
    /// terminal, or do more than a small SQLite write: adapters run such frames where blocking
    /// is allowed, and the rest — the frequent, memory-only ones like `buffer:update` —
    /// inline, without a thread handoff.
    pub fn may_block(&self) -> bool {
        match self {
            Decoded::Message { message, .. } => !matches!(
                message,
                ClientMessage::BufferUpdate(_)
                    | ClientMessage::FileClose(_)
                    | ClientMessage::EditorTabSwitch(_)
                    | ClientMessage::EditorSelection(_)
                    | ClientMessage::ExplorerExpandDir(_)
                    | ClientMessage::ExplorerCollapseDir(_)
                    | ClientMessage::UserIdleStart(_)
                    | ClientMessage::UserIdleEnd(_)
                    | ClientMessage::TerminalResize(_)
            ),
            Decoded::Unknown { .. } | Decoded::Invalid { .. } => false,
        }
    }
}

/// A session message refused: the learner's mistake (`INVALID_MESSAGE`: nothing to work on,
/// no such session, not resumable) or Paige's (`INTERNAL`).
fn session_error(err: crate::SessionError, type_name: &str) -> ServerMessage {
    use crate::SessionError::*;
    let code = match err {
        AlreadyActive(_) | NothingToWorkOn | NotFound(_) | NotResumable(..) | WrappingUp(_) => {
            ErrorCode::InvalidMessage
        }
        NoActiveSession | NoRuntime | Db(_) => ErrorCode::Internal,
    };
    ServerMessage::ConnectionError(error(code, err.to_string(), json!({ "type": type_name })))
}

fn path_rejected(path: &str, err: &PathError) -> ConnectionError {
    tracing::warn!(path, "path rejected: {err}");
    error(ErrorCode::PathRejected, err.to_string(), json!({ "path": path }))
}

fn project_error(path: &str, err: ProjectError) -> ConnectionError {
    match err {
        ProjectError::Path(err) => path_rejected(path, &err),
        ProjectError::File(FileError::NotFound(_)) => {
            error(ErrorCode::FileNotFound, err.to_string(), json!({ "path": path }))
        }
        ProjectError::File(FileError::Binary(_)) => {
            error(ErrorCode::BinaryFile, err.to_string(), json!({ "path": path }))
        }
        ProjectError::File(FileError::TooLarge { limit, .. }) => error(
            ErrorCode::TooLarge,
            err.to_string(),
            json!({ "path": path, "limit": limit, "cap": "PAIGE_MAX_FILE_BYTES" }),
        ),
        ProjectError::File(FileError::NotRegular { .. }) => {
            error(ErrorCode::NotRegularFile, err.to_string(), json!({ "path": path }))
        }
        ProjectError::Buffer(ref buffer) => {
            let (cap, limit) = match buffer {
                BufferError::TooLarge { limit, .. } => ("PAIGE_MAX_BUFFER_BYTES", limit),
                BufferError::Full { limit, .. } => ("PAIGE_MAX_BUFFERS_BYTES", limit),
            };
            error(ErrorCode::TooLarge, err.to_string(), json!({ "path": path, "limit": limit, "cap": cap }))
        }
        ProjectError::File(err) => error(ErrorCode::FileError, err.to_string(), json!({ "path": path })),
    }
}

fn error(code: ErrorCode, message: String, context: serde_json::Value) -> ConnectionError {
    ConnectionError { code, message, context }
}
