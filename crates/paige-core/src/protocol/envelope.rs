//! The wire envelope: `{type, payload, id?, timestamp}` (timestamp in Unix ms).

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::{ClientMessage, ConnectionError, ErrorCode, ServerMessage};

/// What an incoming text frame turned out to be.
#[derive(Debug)]
pub enum Decoded {
    Message {
        id: Option<String>,
        message: ClientMessage,
    },
    /// A well-formed envelope of a type this server does not know: logged and ignored.
    Unknown {
        type_name: String,
    },
    /// Not JSON, not an envelope, or a payload that does not fit its type.
    Invalid {
        id: Option<String>,
        error: ConnectionError,
    },
}

#[derive(Deserialize)]
struct Incoming<'a> {
    #[serde(rename = "type")]
    type_name: String,
    #[serde(borrow, default)]
    payload: Option<&'a RawValue>,
    #[serde(default)]
    id: Option<String>,
}

#[derive(Serialize)]
struct Outgoing<'a> {
    #[serde(flatten)]
    message: &'a ServerMessage,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    timestamp: i64,
}

/// Parses one text frame. Never panics, whatever the input.
pub fn decode(text: &str) -> Decoded {
    let invalid = |id, code, message: String| Decoded::Invalid {
        id,
        error: ConnectionError { code, message, context: serde_json::json!({}) },
    };
    let incoming: Incoming<'_> = match serde_json::from_str(text) {
        Ok(incoming) => incoming,
        Err(err) if err.is_data() => {
            return invalid(
                None,
                ErrorCode::InvalidMessage,
                format!("message must be an object with a string \"type\": {err}"),
            );
        }
        Err(err) => return invalid(None, ErrorCode::InvalidJson, format!("message is not valid JSON: {err}")),
    };
    let payload = incoming.payload.map(RawValue::get).unwrap_or("{}");
    match ClientMessage::from_parts(&incoming.type_name, payload) {
        None => Decoded::Unknown { type_name: incoming.type_name },
        Some(Ok(message)) => Decoded::Message { id: incoming.id, message },
        Some(Err(err)) => Decoded::Invalid {
            id: incoming.id,
            error: ConnectionError {
                code: ErrorCode::InvalidPayload,
                message: format!("invalid payload for {}: {err}", incoming.type_name),
                context: serde_json::json!({ "type": incoming.type_name }),
            },
        },
    }
}

/// Serializes a server message into an envelope.
pub fn encode(message: &ServerMessage, id: Option<&str>, timestamp_ms: i64) -> String {
    // Serializing these plain data types cannot fail (no maps with non-string keys).
    serde_json::to_string(&Outgoing { message, id, timestamp: timestamp_ms })
        .unwrap_or_else(|err| format!(r#"{{"type":"connection:error","payload":{{"code":"INTERNAL","message":"cannot encode {}: {err}","context":{{}}}},"timestamp":{timestamp_ms}}}"#, message.type_name()))
}
