//! Paige's memory, behind the core's `MemoryStore` and `Embedder` interfaces: the embedded
//! store (SQLite tables in `paige.db`), ChromaDB over its v2 HTTP API, and the
//! all-MiniLM-L6-v2 embedder, computed in Rust for both stores. [`open`] picks the store and
//! finds the model for a configuration; [`LazyModel`] loads it on first use and releases its
//! weights when idle.

pub mod chroma;
pub mod embed;
pub mod embedded;
mod index;
mod lazy;
mod open;

pub use chroma::ChromaStore;
pub use embed::{MODEL_NAME, MiniLm};
pub use embedded::EmbeddedStore;
pub use lazy::{DEFAULT_IDLE, LazyModel};
pub use open::{find_model, open};
