//! `GET /ws`: the UI protocol over a WebSocket, for the browser UI and black-box tests.
//! Each socket is one core connection: frames in go to the dispatcher (on the blocking pool
//! when `Decoded::may_block`), the dispatcher's reply goes back to this socket, every
//! What every UI is shown (`Event::into_ui_message`) goes to every socket, an `Event::UiTo`
//! to its own.

use axum::extract::State;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::response::Response;
use paige_core::Event;
use paige_core::protocol::{ConnectionError, ErrorCode, ServerMessage, decode, encode};
use tokio::sync::broadcast::error::RecvError;

use crate::AppState;

pub(crate) async fn upgrade(State(state): State<AppState>, ws: WebSocketUpgrade) -> Response {
    // `PAIGE_MAX_WS_FRAME_BYTES` (16 MiB): room for the largest buffer update; a bigger
    // message closes the socket.
    let max = state.core.config().limits.max_ws_frame_bytes;
    ws.max_message_size(max).max_frame_size(max).on_upgrade(move |socket| connection(state, socket))
}

async fn connection(state: AppState, mut socket: WebSocket) {
    let core = state.core;
    // Subscribed before the connection counts: a broadcast made once it does reaches it.
    let mut events = core.subscribe();
    let id = core.connect();
    let shutdown = core.shutdown_token();
    tracing::info!(connection = id.0, "UI connected over /ws");
    loop {
        tokio::select! {
            incoming = socket.recv() => match incoming {
                Some(Ok(Message::Text(text))) => {
                    // Frequent, memory-only frames (buffer:update) inline; the rest on the
                    // blocking pool (files, the project walk, the terminal), in order.
                    let decoded = decode(text.as_str());
                    let reply = if decoded.may_block() {
                        let core = core.clone();
                        match crate::blocking::run(move || core.handle_decoded(id, decoded)).await {
                            Some(reply) => reply,
                            None => continue,
                        }
                    } else {
                        core.handle_decoded(id, decoded)
                    };
                    if let Some(reply) = reply
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
                Ok(Event::UiTo { connection, message }) if connection == id => {
                    let frame = encode(&message, None, core.now().timestamp_millis());
                    if socket.send(Message::Text(frame.into())).await.is_err() {
                        break;
                    }
                }
                Ok(Event::ShuttingDown) | Err(RecvError::Closed) => break,
                // What every UI is shown: UI messages, and the domain events that are frames.
                Ok(event) => {
                    if let Some(message) = event.into_ui_message() {
                        let frame = encode(&message, None, core.now().timestamp_millis());
                        if socket.send(Message::Text(frame.into())).await.is_err() {
                            break;
                        }
                    }
                }
                Err(RecvError::Lagged(missed)) => {
                    tracing::warn!(connection = id.0, missed, "UI client too slow; messages dropped");
                }
            },
            _ = shutdown.cancelled() => break,
        }
    }
    // Completes the closing handshake: answers the client's Close (tungstenite queues that
    // reply and only a flush sends it), or starts ours and flushes it. Without it every clean
    // close from a browser ended as an abnormal closure (1006).
    let _ = futures_util::SinkExt::close(&mut socket).await;
    core.disconnect(id);
    tracing::info!(connection = id.0, "UI disconnected");
}
