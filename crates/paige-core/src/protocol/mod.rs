//! The UI protocol (spec Story 5): the message types and the JSON envelope — types only; the
//! dispatcher is `crate::dispatch`. The same catalog travels over Tauri IPC and `/ws`.

/// What the TypeScript bindings need of a message enum: its payload types and, per message,
/// the type name with its payload's TypeScript name (both catalogs expand this).
macro_rules! payload_bindings {
    ($message:ident; $($payload:ty = $name:literal,)+) => {
        #[cfg(feature = "ts")]
        impl $message {
            /// Visits every payload type (for the TypeScript bindings).
            pub(crate) fn visit_payload_types(visitor: &mut impl ts_rs::TypeVisitor) {
                $(visitor.visit::<$payload>();)+
            }

            /// `(type, payload type's TypeScript name)` of every message, in catalog order.
            pub(crate) fn payload_type_names(cfg: &ts_rs::Config) -> Vec<(&'static str, String)> {
                vec![$(($name, <$payload as ts_rs::TS>::name(cfg)),)+]
            }
        }
    };
}

#[cfg(feature = "ts")]
pub mod bindings;
mod client;
mod coaching;
mod connection;
mod dashboard;
mod envelope;
mod intake;
mod learning;
mod practice;
mod review;
mod server;

pub use client::*;
pub use coaching::*;
pub use connection::{ConnectionId, ConnectionMeta};
pub use dashboard::*;
pub use envelope::{Decoded, decode, encode};
pub use intake::*;
pub use learning::*;
pub use practice::*;
pub use review::*;
pub use server::*;

/// An error text as every error payload carries it (`explain:error`, `review:error`,
/// `dashboard:*_error`, …): its first line says what is wrong and what to do, in one
/// sentence; the lines after it, when there are any, are the details (the raw error chain),
/// which the UI shows folded.
pub fn error_text(sentence: &str, details: &str) -> String {
    let sentence = sentence.replace('\n', " ");
    if details.trim().is_empty() { sentence } else { format!("{sentence}\n{details}") }
}
