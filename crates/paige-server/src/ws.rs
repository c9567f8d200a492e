//! `GET /ws`: the UI protocol over a WebSocket, for the browser UI and black-box tests.
//! Each socket is one core connection: frames in go to the dispatcher, the dispatcher's
//! reply goes back to this socket, and every `Event::Ui` goes to every socket.

use axum::extract::State;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::response::Response;
use paige_core::Event;
use paige_core::protocol::{ConnectionError, ErrorCode, ServerMessage, encode};
use tokio::sync::broadcast::error::RecvError;

use crate::AppState;

pub(crate) async fn upgrade(State(state): State<AppState>, ws: WebSocketUpgrade) -> Response {
    ws.max_message_size(MAX_MESSAGE_BYTES).on_upgrade(move |socket| connection(state, socket))
}

/// Big enough for a large buffer update; bigger frames close the socket.
const MAX_MESSAGE_BYTES: usize = 32 << 20;

async fn connection(state: AppState, mut socket: WebSocket) {
    let core = state.core;
    let id = core.connect();
    let mut events = core.subscribe();
    let shutdown = core.shutdown_token();
    tracing::info!(connection = id.0, "UI connected over /ws");
    loop {
        tokio::select! {
            incoming = socket.recv() => match incoming {
                Some(Ok(Message::Text(text))) => {
                    if let Some(reply) = core.handle_text(id, text.as_str())
                        && socket.send(Message::Text(reply.into())).await.is_err() {
                        break;
                    }
                }
                Some(Ok(Message::Binary(_))) => {
                    let error = ServerMessage::ConnectionError(ConnectionError {
                        code: ErrorCode::InvalidMessage,
                        message: "binary frames are not supported; send JSON text".into(),
                        context: serde_json::json!({}),
                    });
                    let frame = encode(&error, None, core.now().timestamp_millis());
                    if socket.send(Message::Text(frame.into())).await.is_err() {
                        break;
                    }
                }
                Some(Ok(Message::Close(_))) | None => break,
                Some(Ok(_)) => {}
                Some(Err(err)) => {
                    tracing::debug!(connection = id.0, "socket error: {err}");
                    break;
                }
            },
            event = events.recv() => match event {
                Ok(Event::Ui(message)) => {
                    let frame = encode(&message, None, core.now().timestamp_millis());
                    if socket.send(Message::Text(frame.into())).await.is_err() {
                        break;
                    }
                }
                Ok(Event::ActionLogged(_) | Event::TerminalOutput { .. }) => {}
                Ok(Event::ShuttingDown) | Err(RecvError::Closed) => break,
                Err(RecvError::Lagged(missed)) => {
                    tracing::warn!(connection = id.0, missed, "UI client too slow; messages dropped");
                }
            },
            _ = shutdown.cancelled() => break,
        }
    }
    let _ = socket.send(Message::Close(None)).await;
    core.disconnect(id);
    tracing::info!(connection = id.0, "UI disconnected");
}
