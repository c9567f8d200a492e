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

/// The envelope as read in one pass: when `type` comes before `payload` (as every client
/// sends it) the payload is deserialized straight into its message type; otherwise it is
/// kept raw and decoded afterwards.
struct Incoming<'a> {
    type_name: String,
    payload: Payload<'a>,
    id: Option<String>,
}

enum Payload<'a> {
    Missing,
    Raw(&'a RawValue),
    Typed(ClientMessage),
}

struct EnvelopeVisitor<'c> {
    payload_failed: &'c std::cell::Cell<bool>,
}

impl<'de> serde::de::Visitor<'de> for EnvelopeVisitor<'_> {
    type Value = Incoming<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(r#"an object {"type": string, "payload": object, "id"?: string}"#)
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Incoming<'de>, A::Error> {
        let mut type_name: Option<String> = None;
        let mut payload = Payload::Missing;
        let mut id = None;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "type" => type_name = Some(map.next_value()?),
                "id" => id = map.next_value()?,
                "payload" if type_name.as_deref().is_some_and(|t| ClientMessage::TYPES.contains(&t)) => {
                    let seed = PayloadSeed {
                        type_name: type_name.as_deref().unwrap_or_default(),
                        failed: self.payload_failed,
                    };
                    payload = Payload::Typed(map.next_value_seed(seed)?);
                }
                "payload" => payload = Payload::Raw(map.next_value()?),
                _ => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        let type_name = type_name.ok_or_else(|| serde::de::Error::missing_field("type"))?;
        Ok(Incoming { type_name, payload, id })
    }
}

struct PayloadSeed<'a> {
    type_name: &'a str,
    failed: &'a std::cell::Cell<bool>,
}

impl<'de> serde::de::DeserializeSeed<'de> for PayloadSeed<'_> {
    type Value = ClientMessage;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<ClientMessage, D::Error> {
        let result = ClientMessage::deserialize_payload(self.type_name, deserializer)
            .unwrap_or_else(|| Err(serde::de::Error::custom("unknown type")));
        self.failed.set(result.is_err());
        result
    }
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
    let payload_failed = std::cell::Cell::new(false);
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let parsed =
        serde::Deserializer::deserialize_map(&mut deserializer, EnvelopeVisitor { payload_failed: &payload_failed })
            .and_then(|incoming| deserializer.end().map(|()| incoming));
    let incoming = match parsed {
        Ok(incoming) => incoming,
        Err(err) if err.is_syntax() || err.is_eof() => {
            return invalid(None, ErrorCode::InvalidJson, format!("message is not valid JSON: {err}"));
        }
        Err(err) if payload_failed.get() => {
            // The type was read before the payload failed; name it in the error.
            let (type_name, id) = head(text);
            return Decoded::Invalid {
                id,
                error: ConnectionError {
                    code: ErrorCode::InvalidPayload,
                    message: format!("invalid payload for {type_name}: {err}"),
                    context: serde_json::json!({ "type": type_name }),
                },
            };
        }
        Err(err) => {
            return invalid(
                None,
                ErrorCode::InvalidMessage,
                format!("message must be an object with a string \"type\": {err}"),
            );
        }
    };
    let message = match incoming.payload {
        Payload::Typed(message) => Ok(message),
        Payload::Raw(raw) => match ClientMessage::from_parts(&incoming.type_name, raw.get()) {
            None => return Decoded::Unknown { type_name: incoming.type_name },
            Some(result) => result,
        },
        Payload::Missing => match ClientMessage::from_parts(&incoming.type_name, "{}") {
            None => return Decoded::Unknown { type_name: incoming.type_name },
            Some(result) => result,
        },
    };
    match message {
        Ok(message) => Decoded::Message { id: incoming.id, message },
        Err(err) => Decoded::Invalid {
            id: incoming.id,
            error: ConnectionError {
                code: ErrorCode::InvalidPayload,
                message: format!("invalid payload for {}: {err}", incoming.type_name),
                context: serde_json::json!({ "type": incoming.type_name }),
            },
        },
    }
}

/// The `type` and `id` of a frame whose payload failed, for the error reply. The frame is
/// valid JSON by then; the payload is skipped.
fn head(text: &str) -> (String, Option<String>) {
    #[derive(Deserialize)]
    struct Head {
        #[serde(rename = "type")]
        type_name: String,
        #[serde(default)]
        id: Option<String>,
    }
    serde_json::from_str::<Head>(text).map(|h| (h.type_name, h.id)).unwrap_or_default()
}

/// Serializes a server message into an envelope.
pub fn encode(message: &ServerMessage, id: Option<&str>, timestamp_ms: i64) -> String {
    // Serializing these plain data types cannot fail (no maps with non-string keys).
    serde_json::to_string(&Outgoing { message, id, timestamp: timestamp_ms })
        .unwrap_or_else(|err| format!(r#"{{"type":"connection:error","payload":{{"code":"INTERNAL","message":"cannot encode {}: {err}","context":{{}}}},"timestamp":{timestamp_ms}}}"#, message.type_name()))
}
