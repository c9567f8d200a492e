//! Both stores against real servers and the real model: the ChromaDB store on its own
//! (`chroma`), and spec Story 8's scenarios run alike against the embedded store and ChromaDB
//! with all-MiniLM-L6-v2 (`scenarios`). `server` starts and stops a real `chroma run`.

mod chroma;
mod scenarios;
mod server;
