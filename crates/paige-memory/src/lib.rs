//! Paige's memory, behind the core's `MemoryStore` and `Embedder` interfaces: the embedded
//! store (SQLite tables in `paige.db`), ChromaDB over its v2 HTTP API, and the
//! all-MiniLM-L6-v2 embedder, computed in Rust for both stores.

pub mod chroma;
pub mod embed;
pub mod embedded;
mod index;

pub use chroma::ChromaStore;
pub use embed::MiniLm;
pub use embedded::EmbeddedStore;
mod open;

pub use open::{MODEL_NAME, find_model, open};
