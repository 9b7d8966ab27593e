//! JSON-RPC 2.0 messages as the LSP base protocol uses them: request ids, requests, responses,
//! notifications and response errors.
//!
//! Incoming bytes are classified by which members are present (`method` and `id` → request,
//! `method` alone → notification, `id` with `result` or `error` → response), which tolerates peers
//! that add or omit optional members.
//!
//! Architecture invariant: nothing here knows a particular method; payloads stay `serde_json::Value`
//! until the client decodes them into `lsp-types` types.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A request id: JSON-RPC allows numbers and strings. Ours are numbers; servers may use either.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    Number(i64),
    String(String),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "\"{s}\""),
        }
    }
}

/// JSON-RPC and LSP error codes used here.
pub mod codes {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
    pub const REQUEST_CANCELLED: i64 = -32800;
}

/// The `error` member of a response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseError {
    pub code: i64,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ResponseError {
    pub fn new(code: i64, message: impl Into<String>) -> ResponseError {
        ResponseError { code, message: message.into(), data: None }
    }
}

impl fmt::Display for ResponseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

/// One message in either direction.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    Request { id: RequestId, method: String, params: Value },
    Response { id: RequestId, result: Result<Value, ResponseError> },
    Notification { method: String, params: Value },
}

/// Why a message body could not be understood.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    #[error("the message is not JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("the message is neither a request, a response nor a notification")]
    Shape,
}

/// Every member a JSON-RPC message may have.
#[derive(Deserialize)]
struct Raw {
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    method: Option<String>,
    #[serde(default)]
    params: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    result: Option<Value>,
    #[serde(default)]
    error: Option<ResponseError>,
}

/// Keeps `null` as `Some(Value::Null)` so that `"result": null` counts as present.
fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

impl Message {
    /// Decodes one message body.
    pub fn decode(body: &[u8]) -> Result<Message, DecodeError> {
        let raw: Raw = serde_json::from_slice(body)?;
        let id = match raw.id {
            None | Some(Value::Null) => None,
            Some(value) => Some(serde_json::from_value::<RequestId>(value).map_err(|_| DecodeError::Shape)?),
        };
        match (id, raw.method) {
            (Some(id), Some(method)) => Ok(Message::Request { id, method, params: raw.params.unwrap_or(Value::Null) }),
            (None, Some(method)) => Ok(Message::Notification { method, params: raw.params.unwrap_or(Value::Null) }),
            (Some(id), None) => match (raw.result, raw.error) {
                (_, Some(error)) => Ok(Message::Response { id, result: Err(error) }),
                (Some(result), None) => Ok(Message::Response { id, result: Ok(result) }),
                (None, None) => Err(DecodeError::Shape),
            },
            (None, None) => Err(DecodeError::Shape),
        }
    }

    /// The message as JSON text (the frame body).
    pub fn encode(&self) -> Vec<u8> {
        let value = match self {
            Message::Request { id, method, params } => {
                let mut value = json!({ "jsonrpc": "2.0", "id": id, "method": method });
                if !params.is_null() {
                    value["params"] = params.clone();
                }
                value
            }
            Message::Notification { method, params } => {
                let mut value = json!({ "jsonrpc": "2.0", "method": method });
                if !params.is_null() {
                    value["params"] = params.clone();
                }
                value
            }
            Message::Response { id, result: Ok(result) } => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
            Message::Response { id, result: Err(error) } => json!({ "jsonrpc": "2.0", "id": id, "error": error }),
        };
        serde_json::to_vec(&value).expect("a JSON value always serializes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(text: &str) -> Message {
        Message::decode(text.as_bytes()).unwrap()
    }

    #[test]
    fn messages_are_classified_by_their_members() {
        assert_eq!(
            decode(r#"{"jsonrpc":"2.0","id":3,"method":"workspace/configuration","params":{"items":[]}}"#),
            Message::Request {
                id: RequestId::Number(3),
                method: "workspace/configuration".into(),
                params: json!({"items": []})
            }
        );
        assert_eq!(
            decode(r#"{"jsonrpc":"2.0","method":"$/progress","params":{"token":"t"}}"#),
            Message::Notification { method: "$/progress".into(), params: json!({"token": "t"}) }
        );
        assert_eq!(
            decode(r#"{"jsonrpc":"2.0","id":"abc","result":null}"#),
            Message::Response { id: RequestId::String("abc".into()), result: Ok(Value::Null) }
        );
        assert_eq!(
            decode(r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32800,"message":"cancelled"}}"#),
            Message::Response {
                id: RequestId::Number(7),
                result: Err(ResponseError::new(codes::REQUEST_CANCELLED, "cancelled"))
            }
        );
    }

    #[test]
    fn shapeless_messages_are_refused() {
        assert!(matches!(Message::decode(br#"{"jsonrpc":"2.0","id":1}"#), Err(DecodeError::Shape)));
        assert!(matches!(Message::decode(br#"{"jsonrpc":"2.0"}"#), Err(DecodeError::Shape)));
        assert!(matches!(Message::decode(br#"{"id":[1],"method":"x"}"#), Err(DecodeError::Shape)));
        assert!(matches!(Message::decode(b"not json"), Err(DecodeError::Json(_))));
    }

    #[test]
    fn encoding_round_trips() {
        let messages = [
            Message::Request { id: RequestId::Number(1), method: "shutdown".into(), params: Value::Null },
            Message::Notification { method: "exit".into(), params: Value::Null },
            Message::Response { id: RequestId::String("x".into()), result: Ok(json!([1, 2])) },
            Message::Response {
                id: RequestId::Number(2),
                result: Err(ResponseError::new(codes::METHOD_NOT_FOUND, "no such method")),
            },
        ];
        for message in messages {
            assert_eq!(Message::decode(&message.encode()).unwrap(), message);
        }
        let shutdown = Message::Request { id: RequestId::Number(1), method: "shutdown".into(), params: Value::Null };
        let value: Value = serde_json::from_slice(&shutdown.encode()).unwrap();
        assert_eq!(value, json!({"jsonrpc": "2.0", "id": 1, "method": "shutdown"}), "no `params` member when null");
    }
}
