//! TypeScript bindings of the UI protocol, generated from the Rust types with ts-rs (feature
//! `ts`). The UI checks in the result as `ui/src/bindings/protocol.ts`; a test in
//! `tests/it/bindings.rs` fails while file and types differ.
//!
//! The output is a list of [`Declaration`]s rendered into one file, so more declarations (the
//! desktop shell's command and events, say) are one more entry in the list.
//!
//! A protocol type derives `TS` with `#[cfg_attr(feature = "ts", derive(ts_rs::TS))]`. An
//! `Option` field serde skips when `None` also needs `#[cfg_attr(feature = "ts", ts(optional))]`
//! (`field?: T`); without it ts-rs writes `field: T | null`, which serde never sends.

use std::any::TypeId;
use std::collections::HashSet;

use ts_rs::{Config, TS, TypeVisitor};

use super::{ClientMessage, ServerMessage};

/// The command that rewrites the checked-in bindings.
pub const REGENERATE: &str = "PAIGE_BLESS=1 cargo test -p paige-core --test it bindings";

/// One top-level TypeScript declaration: its name, and its text (JSDoc, then `export ...`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declaration {
    pub name: String,
    pub text: String,
}

impl Declaration {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Declaration {
        Declaration { name: name.into(), text: text.into() }
    }

    /// The declaration ts-rs derives for `T` (`export type T = ...;`).
    pub fn of<T: TS + ?Sized>(cfg: &Config) -> Declaration {
        let mut text = T::docs().unwrap_or_default();
        text.push_str("export ");
        text.push_str(&T::decl(cfg));
        Declaration::new(T::ident(cfg), text)
    }
}

/// How the protocol's Rust types map to TypeScript: serde_json writes every integer, `i64`
/// and `u64` included, as a plain JSON number, which JavaScript parses into a `number`.
pub fn config() -> Config {
    Config::new().with_large_int("number")
}

/// The UI protocol: `ClientPayloads` and `ServerPayloads` (message type → payload type, in
/// catalog order), then every type they refer to, by name.
///
/// Panics if two Rust types would share a TypeScript name.
pub fn protocol_declarations() -> Vec<Declaration> {
    let cfg = config();
    let mut types = Collect { cfg: &cfg, seen: HashSet::new(), declarations: Vec::new() };
    ClientMessage::visit_payload_types(&mut types);
    ServerMessage::visit_payload_types(&mut types);
    let mut payload_types = types.declarations;
    payload_types.sort_by(|a, b| a.name.cmp(&b.name));
    if let Some(pair) = payload_types.windows(2).find(|pair| pair[0].name == pair[1].name) {
        panic!("two Rust types are both named {} in TypeScript; rename one with #[ts(rename)]", pair[0].name);
    }
    let mut declarations = vec![
        payload_map(
            "ClientPayloads",
            "Every client → core message type and its payload.",
            ClientMessage::payload_type_names(&cfg),
        ),
        payload_map(
            "ServerPayloads",
            "Every core → client message type and its payload.",
            ServerMessage::payload_type_names(&cfg),
        ),
    ];
    declarations.extend(payload_types);
    declarations
}

/// One file of `declarations`, each separated by a blank line, under a "generated" header.
pub fn render(declarations: &[Declaration]) -> String {
    render_file("paige-core's Rust types", "crates/paige-core/src/protocol/bindings.rs", REGENERATE, declarations)
}

/// One file of `declarations` generated from `types` by the code in `generator`, under a
/// header naming the command that regenerates it.
pub fn render_file(types: &str, generator: &str, regenerate: &str, declarations: &[Declaration]) -> String {
    let mut out =
        format!("// Generated from {types} by ts-rs ({generator}).\n// Do not edit; regenerate with `{regenerate}`.\n");
    for declaration in declarations {
        out.push('\n');
        out.push_str(declaration.text.trim_end());
        out.push('\n');
    }
    out
}

/// `export interface NAME { "type": Payload; ... }`.
fn payload_map(name: &str, doc: &str, entries: Vec<(&'static str, String)>) -> Declaration {
    let mut text = format!("/** {doc} */\nexport interface {name} {{\n");
    for (type_name, payload) in entries {
        text.push_str(&format!("  {type_name:?}: {payload};\n"));
    }
    text.push('}');
    Declaration::new(name, text)
}

/// Declares every exportable type visited, then the types it refers to, once each.
struct Collect<'a> {
    cfg: &'a Config,
    seen: HashSet<TypeId>,
    declarations: Vec<Declaration>,
}

impl TypeVisitor for Collect<'_> {
    fn visit<T: TS + 'static + ?Sized>(&mut self) {
        // Primitives, `Option`, `Vec` and maps have no output path: nothing to declare.
        if T::output_path().is_none() || !self.seen.insert(TypeId::of::<T>()) {
            return;
        }
        self.declarations.push(Declaration::of::<T>(self.cfg));
        T::visit_dependencies(self);
    }
}
