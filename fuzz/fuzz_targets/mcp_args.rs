//! MCP tool arguments through the tool handler Claude Code reaches at `/mcp`
//! (`ServerHandler::call_tool`: rmcp's `Parameters` decode, then the tool), in process: no
//! HTTP, a request context like the one the transport builds. The first byte picks the tool
//! (of the sorted tool list), the rest is the `arguments` JSON (absent when empty).
//! Invariants (as `tests/it/fuzz_mcp.rs`): no panic; every call is answered, with a result or
//! a JSON-RPC error; nothing in or beside the project changes (the MCP surface has no write path).

#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use paige_core::db::{HintLevel, NewPhase};
use paige_fuzz::{Mode, World, snapshot};
use paige_server::PaigeMcp;
use rmcp::ServerHandler;
use rmcp::model::{CallToolRequestParams, CallToolResponse, NumberOrString};
use rmcp::service::{Peer, RequestContext, RoleServer, RunningService, serve_directly};
use serde_json::Value;

/// The world, the handler, the tools' names (sorted) and a peer for request contexts. The
/// peer's service runs over an in-memory pipe whose far end stays open and silent.
struct Mcp {
    world: World,
    handler: PaigeMcp,
    tools: Vec<String>,
    peer: Peer<RoleServer>,
    _service: RunningService<RoleServer, PaigeMcp>,
    _far_end: tokio::io::DuplexStream,
}

static MCP: LazyLock<Mcp> = LazyLock::new(|| {
    // Governed, so select_active_intent reads real intents.
    let world = World::new(Mode::Governed);
    let handler = PaigeMcp::new(world.core.clone());
    let (near, far_end) = tokio::io::duplex(64 * 1024);
    let service = {
        let _entered = world.runtime.enter();
        serve_directly(handler.clone(), near, None)
    };
    let peer = service.peer().clone();
    let list = world.runtime.block_on(handler.list_tools(None, context(&peer))).expect("tools/list");
    let mut tools: Vec<String> = list.tools.iter().map(|t| t.name.to_string()).collect();
    tools.sort();
    // The context is complete: a valid call reaches its tool, a call without its arguments
    // is refused in the decoding. Otherwise every input would stop before the code under test.
    let call = |arguments: serde_json::Map<String, Value>| {
        let mut request = CallToolRequestParams::new("paige_get_buffer");
        request.arguments = Some(arguments);
        world.runtime.block_on(handler.call_tool(request, context(&peer)))
    };
    let path = serde_json::Map::from_iter([("path".to_owned(), Value::from("src/main.rs"))]);
    match call(path) {
        Ok(CallToolResponse::Complete(result)) => assert_ne!(result.is_error, Some(true), "{result:?}"),
        other => panic!("paige_get_buffer did not answer: {other:?}"),
    }
    // rmcp answers arguments that do not decode with an error result the model can read.
    match call(serde_json::Map::new()) {
        Ok(CallToolResponse::Complete(result)) => assert_eq!(result.is_error, Some(true), "{result:?}"),
        Ok(other) => panic!("a call without its arguments got {other:?}"),
        Err(_) => {}
    }
    Mcp { world, handler, tools, peer, _service: service, _far_end: far_end }
});

/// What the transport hands a tool: an id, the peer, and the HTTP request's parts.
fn context(peer: &Peer<RoleServer>) -> RequestContext<RoleServer> {
    let mut context = RequestContext::new(NumberOrString::Number(1), peer.clone());
    let request = http::Request::builder().method("POST").uri("/mcp").body(()).expect("request");
    context.extensions.insert(request.into_parts().0);
    context
}

/// An active session with a two-phase plan, so the session tools get past "No active session".
fn start_session_with_a_plan(world: &World) {
    let core = &world.core;
    let session = core.coaching().start_session(Some(42), Some("Fuzz".into())).expect("session");
    let plan = core.db().create_plan(&session.id, "1. a\n2. b").expect("plan");
    for number in 1..=2 {
        let phase = NewPhase {
            plan_id: plan.id.clone(),
            number,
            title: format!("Phase {number}"),
            description: format!("do {number}"),
            hint_level: HintLevel::File,
            expected_files: vec!["src/main.rs".into()],
            skill_area: None,
            hint_reason: None,
            test_filter: None,
        };
        core.db().create_phase(phase).expect("phase");
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else { return };
    let mcp = &*MCP;
    let w = &mcp.world;
    let _entered = w.runtime.enter();
    let arguments = match serde_json::from_slice::<Value>(rest) {
        _ if rest.is_empty() => None,
        Ok(Value::Object(map)) => Some(map),
        // JSON-RPC rejects a request whose arguments are not an object before any tool runs.
        _ => return,
    };
    if w.core.active_session().is_none() {
        start_session_with_a_plan(w);
    }
    let name = mcp.tools[pick as usize % mcp.tools.len()].clone();
    let mut request = CallToolRequestParams::new(name);
    request.arguments = arguments;
    let before = snapshot(w.outer());
    // Both a result (maybe a tool error) and a JSON-RPC error are answers.
    let _answer = w.runtime.block_on(mcp.handler.call_tool(request.clone(), context(&mcp.peer)));
    assert!(snapshot(w.outer()) == before, "{request:?} changed a file");
});
