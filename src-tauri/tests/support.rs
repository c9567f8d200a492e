//! What the shell's test binaries share: invoking a command as the UI does.

use serde_json::{Value, json};
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{INVOKE_KEY, MockRuntime, get_ipc_response};
use tauri::webview::InvokeRequest;

/// Invokes command `cmd` with `args` the way the UI does: its value, or the error it rejects with.
pub fn invoke(webview: &tauri::WebviewWindow<MockRuntime>, cmd: &str, args: Value) -> Result<Value, Value> {
    let request = InvokeRequest {
        cmd: cmd.into(),
        callback: CallbackFn(0),
        error: CallbackFn(1),
        url: "tauri://localhost".parse().expect("url"),
        body: InvokeBody::Json(args),
        headers: Default::default(),
        invoke_key: INVOKE_KEY.to_string(),
    };
    get_ipc_response(webview, request).map(|response| response.deserialize().expect("a JSON reply"))
}

/// The UI's first frame.
pub fn hello() -> Value {
    json!({"type": "connection:hello", "id": "h", "timestamp": 0,
        "payload": {"version": "0.1.0", "platform": "linux", "windowSize": {"width": 800, "height": 600}}})
}
