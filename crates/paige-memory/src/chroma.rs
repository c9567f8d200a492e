//! The ChromaDB store: the `paige_memories` collection of a ChromaDB server (1.x), over its
//! v2 HTTP API.
//!
//! Paige embeds every text itself and hands ChromaDB the vectors (`embeddings`,
//! `query_embeddings`); ChromaDB never embeds (its own embedding would download a model).
//! The collection is created in the cosine space, so ChromaDB's distances are `1 − cosine`
//! as [`MemoryResult::distance`] says. A `paige_memories` collection someone else created in
//! ChromaDB's default `l2` space is used as it is: its squared-L2 distances between unit
//! vectors are `2 − 2·cosine`, halved here into the same `1 − cosine`.
//!
//! Blocking (`reqwest::blocking`): call every method off the async runtime — from a blocking
//! thread (`spawn_blocking`), never inside an async task, where reqwest's blocking client
//! panics. [`ChromaStore::new`] itself makes no client and may be called anywhere; the
//! client is made on the first call that talks to ChromaDB.

use std::sync::Mutex;
use std::time::Duration;

use paige_core::memory::{
    COLLECTION, MemoryError, MemoryMetadata, MemoryQuery, MemoryRecord, MemoryResult, MemoryStats, MemoryStore,
};
use reqwest::Method;
use reqwest::blocking::Client;
use serde_json::{Value, json};

/// The collections of ChromaDB's default tenant and database.
const COLLECTIONS: &str = "/api/v2/tenants/default_tenant/databases/default_database/collections";
/// How long to wait for ChromaDB to accept a connection: it runs on this machine or nearby.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);
/// How long one request may take (an upsert of many memories included).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Memories per page when `stats` reads every memory's metadata.
const STATS_PAGE: usize = 1000;

/// ChromaDB at a URL (`http://localhost:8000`), holding Paige's memories in the
/// `paige_memories` collection. See the module's notes: call it off the async runtime.
pub struct ChromaStore {
    /// The URL as given, for logs.
    url: String,
    /// `{url}/api/v2/…/collections`.
    collections: String,
    /// Made on first use, on the blocking thread that first needs it.
    client: Mutex<Option<Client>>,
    /// The collection found or created by the last `connect`.
    collection: Mutex<Option<Collection>>,
}

/// What `connect` learned about the collection.
#[derive(Debug, Clone)]
struct Collection {
    /// Its UUID: every record operation names the collection by it.
    id: String,
    /// The length of its vectors, once it holds any.
    dimension: Option<usize>,
    /// Its distance space is `l2` (squared L2): distances are halved into `1 − cosine`.
    halve_distances: bool,
}

impl ChromaStore {
    /// The store for the ChromaDB server at `url`. Does not connect: [`MemoryStore::connect`]
    /// does (and every operation connects first when nothing has yet).
    pub fn new(url: &str) -> ChromaStore {
        ChromaStore {
            url: url.to_owned(),
            collections: format!("{}{COLLECTIONS}", url.trim().trim_end_matches('/')),
            client: Mutex::new(None),
            collection: Mutex::new(None),
        }
    }

    fn client(&self) -> Result<Client, MemoryError> {
        let mut client = self.client.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(client) = client.as_ref() {
            return Ok(client.clone());
        }
        let mut builder = Client::builder().connect_timeout(CONNECT_TIMEOUT).timeout(REQUEST_TIMEOUT);
        if is_loopback(&self.url) {
            // A proxy (HTTP_PROXY…) cannot reach this machine's ChromaDB.
            builder = builder.no_proxy();
        }
        let made = builder
            .build()
            .map_err(|err| MemoryError::Store(format!("cannot make an HTTP client for ChromaDB: {}", chain(&err))))?;
        *client = Some(made.clone());
        Ok(made)
    }

    fn cached(&self) -> Option<Collection> {
        self.collection.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }

    fn remember(&self, collection: Option<Collection>) {
        *self.collection.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = collection;
    }

    /// The collection, connecting first when no `connect` has succeeded yet.
    fn collection(&self) -> Result<Collection, MemoryError> {
        match self.cached() {
            Some(collection) => Ok(collection),
            None => self.open(),
        }
    }

    /// Gets or creates the collection (cosine space) and remembers its UUID.
    fn open(&self) -> Result<Collection, MemoryError> {
        let body = json!({
            "name": COLLECTION,
            "configuration": { "hnsw": { "space": "cosine" } },
            "get_or_create": true,
        });
        let answer = self.call(Method::POST, &self.collections, Some(&body), "get-or-create collection")?;
        let id = answer
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty())
            .ok_or_else(|| self.malformed("get-or-create collection", "no collection id"))?;
        let collection = Collection {
            id: id.to_owned(),
            dimension: answer.get("dimension").and_then(Value::as_u64).map(|dimension| dimension as usize),
            halve_distances: space_of(&answer).as_deref() == Some("l2"),
        };
        self.remember(Some(collection.clone()));
        Ok(collection)
    }

    /// One request to ChromaDB, answered with JSON. Cannot reach it → `Unavailable`; an error
    /// status or malformed JSON → `Store` with what ChromaDB said.
    fn call(&self, method: Method, url: &str, body: Option<&Value>, operation: &str) -> Result<Value, MemoryError> {
        let client = self.client()?;
        let mut request = client.request(method, url);
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().map_err(|err| self.transport(operation, &err))?;
        let status = response.status();
        let text = response.text().map_err(|err| self.transport(operation, &err))?;
        if !status.is_success() {
            return Err(MemoryError::Store(format!(
                "ChromaDB at {} refused {operation} ({status}): {}",
                self.url,
                error_message(&text)
            )));
        }
        serde_json::from_str(&text).map_err(|err| self.malformed(operation, &err.to_string()))
    }

    fn transport(&self, operation: &str, err: &reqwest::Error) -> MemoryError {
        if err.is_builder() {
            MemoryError::Store(format!("cannot send {operation} to ChromaDB at {}: {}", self.url, chain(err)))
        } else {
            MemoryError::Unavailable(format!(
                "ChromaDB at {} cannot be reached ({operation}): {}",
                self.url,
                chain(err)
            ))
        }
    }

    fn malformed(&self, operation: &str, what: &str) -> MemoryError {
        MemoryError::Store(format!("ChromaDB at {} answered {operation} with malformed JSON: {what}", self.url))
    }

    /// A record operation on the collection. A collection that is gone (deleted while Paige
    /// ran, EC-53) is forgotten, so the next `connect` (or operation) creates it again.
    fn on_collection(
        &self,
        collection: &Collection,
        action: &str,
        body: Option<&Value>,
        operation: &str,
    ) -> Result<Value, MemoryError> {
        let url = format!("{}/{}/{action}", self.collections, collection.id);
        let method = if body.is_some() { Method::POST } else { Method::GET };
        match self.call(method, &url, body, operation) {
            Err(MemoryError::Store(message)) if message.contains("NotFoundError") => {
                self.remember(None);
                Err(MemoryError::Store(format!(
                    "the collection {COLLECTION} is gone from ChromaDB (deleted while Paige ran?); \
                     the next connection creates it again — {message}"
                )))
            }
            Err(MemoryError::Store(message)) if message.contains("with dimension") => {
                self.remember(None);
                Err(MemoryError::Store(format!(
                    "the collection {COLLECTION} in ChromaDB holds vectors of another dimension than Paige's \
                     (delete it, or point Paige at another ChromaDB) — {message}"
                )))
            }
            other => other,
        }
    }

    /// Refuses vectors whose length differs from the collection's, naming both.
    fn check_dimension(&self, collection: &Collection, dimension: usize) -> Result<(), MemoryError> {
        match collection.dimension {
            Some(expected) if expected != dimension => Err(MemoryError::Store(format!(
                "the collection {COLLECTION} in ChromaDB at {} holds {expected}-dimensional vectors, \
                 but Paige's are {dimension}-dimensional (delete the collection, or point Paige at another ChromaDB)",
                self.url
            ))),
            _ => Ok(()),
        }
    }
}

impl MemoryStore for ChromaStore {
    fn name(&self) -> &str {
        "ChromaDB"
    }

    fn location(&self) -> String {
        self.url.clone()
    }

    fn ranks_without_vectors(&self) -> bool {
        false
    }

    fn connect(&self) -> Result<(), MemoryError> {
        self.open().map(|_| ())
    }

    fn add(&self, records: &[MemoryRecord]) -> Result<usize, MemoryError> {
        if records.is_empty() {
            return Ok(0);
        }
        let mut embeddings = Vec::with_capacity(records.len());
        for record in records {
            let embedding = record.embedding.as_deref().ok_or_else(|| {
                MemoryError::Embedding(format!("ChromaDB needs a vector for every memory; {} has none", record.id))
            })?;
            embeddings.push(embedding);
        }
        let dimension = embeddings[0].len();
        if let Some(odd) = embeddings.iter().position(|embedding| embedding.len() != dimension) {
            return Err(MemoryError::Embedding(format!(
                "the vectors differ in length: {} has {}, {} has {dimension}",
                records[odd].id,
                embeddings[odd].len(),
                records[0].id
            )));
        }
        let collection = self.collection()?;
        self.check_dimension(&collection, dimension)?;
        // One upsert for every record (EC-51): ChromaDB batches internally.
        let body = json!({
            "ids": records.iter().map(|record| record.id.as_str()).collect::<Vec<_>>(),
            "documents": records.iter().map(|record| record.content.as_str()).collect::<Vec<_>>(),
            "embeddings": embeddings,
            "metadatas": records.iter().map(|record| metadata_json(&record.metadata)).collect::<Vec<_>>(),
        });
        self.on_collection(&collection, "upsert", Some(&body), "upsert")?;
        if collection.dimension.is_none() {
            let mut cached = self.collection.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            if let Some(cached) = cached.as_mut().filter(|cached| cached.id == collection.id) {
                cached.dimension = Some(dimension);
            }
        }
        Ok(records.len())
    }

    fn query(&self, query: &MemoryQuery<'_>) -> Result<Vec<MemoryResult>, MemoryError> {
        let embedding = query.embedding.ok_or_else(|| {
            MemoryError::Embedding(
                "ChromaDB searches by vector; the query has none (is the embedding model missing?)".into(),
            )
        })?;
        if query.n_results == 0 {
            return Ok(Vec::new());
        }
        let collection = self.collection()?;
        self.check_dimension(&collection, embedding.len())?;
        let mut body = json!({
            "query_embeddings": [embedding],
            "n_results": query.n_results,
            "include": ["documents", "metadatas", "distances"],
        });
        if let Some(project) = query.project {
            body["where"] = json!({ "project": project });
        }
        let answer = self.on_collection(&collection, "query", Some(&body), "query")?;
        // Each field is one list per query embedding; there is one.
        let first = |field: &str| answer.get(field).and_then(Value::as_array).and_then(|lists| lists.first());
        let Some(ids) = first("ids").and_then(Value::as_array) else {
            return Err(self.malformed("query", "no ids"));
        };
        let documents = first("documents").and_then(Value::as_array);
        let metadatas = first("metadatas").and_then(Value::as_array);
        let Some(distances) = first("distances").and_then(Value::as_array) else {
            return Err(self.malformed("query", "no distances"));
        };
        let mut results = Vec::with_capacity(ids.len());
        for (index, id) in ids.iter().enumerate() {
            let id = id.as_str().ok_or_else(|| self.malformed("query", "an id that is not a string"))?;
            let distance = distances
                .get(index)
                .and_then(Value::as_f64)
                .ok_or_else(|| self.malformed("query", &format!("no distance for {id}")))?;
            let distance = if collection.halve_distances { distance / 2.0 } else { distance };
            results.push(MemoryResult {
                id: id.to_owned(),
                content: documents.and_then(|documents| documents.get(index)).map(text_of).unwrap_or_default(),
                metadata: metadata_of(metadatas.and_then(|metadatas| metadatas.get(index))),
                distance: distance as f32,
            });
        }
        // ChromaDB answers nearest first; sorting again costs nothing and guarantees it.
        results.sort_by(|a, b| a.distance.total_cmp(&b.distance));
        Ok(results)
    }

    fn stats(&self) -> Result<MemoryStats, MemoryError> {
        let collection = self.collection()?;
        let mut total = 0;
        let mut projects: Vec<(String, usize)> = Vec::new();
        let mut offset = 0;
        loop {
            let body = json!({ "limit": STATS_PAGE, "offset": offset, "include": ["metadatas"] });
            let answer = self.on_collection(&collection, "get", Some(&body), "get")?;
            let ids = answer.get("ids").and_then(Value::as_array).ok_or_else(|| self.malformed("get", "no ids"))?;
            let metadatas = answer.get("metadatas").and_then(Value::as_array);
            for index in 0..ids.len() {
                total += 1;
                let project = metadata_of(metadatas.and_then(|metadatas| metadatas.get(index))).project;
                match projects.iter_mut().find(|(name, _)| *name == project) {
                    Some((_, count)) => *count += 1,
                    None => projects.push((project, 1)),
                }
            }
            if ids.len() < STATS_PAGE {
                break;
            }
            offset += ids.len();
        }
        projects.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        Ok(MemoryStats { total, projects, without_vectors: 0 })
    }
}

/// A memory's metadata as ChromaDB stores it: strings only.
fn metadata_json(metadata: &MemoryMetadata) -> Value {
    json!({
        "session_id": metadata.session_id,
        "project": metadata.project,
        "project_path": metadata.project_path,
        "created_at": metadata.created_at,
        "importance": metadata.importance,
        "tags": metadata.tags,
    })
}

/// Metadata read back; a field that is missing (a memory stored by something else) is empty,
/// one that is a number or a boolean is its text.
fn metadata_of(value: Option<&Value>) -> MemoryMetadata {
    let field = |name: &str| value.and_then(|value| value.get(name)).map(text_of).unwrap_or_default();
    MemoryMetadata {
        session_id: field("session_id"),
        project: field("project"),
        project_path: field("project_path"),
        created_at: field("created_at"),
        importance: field("importance"),
        tags: field("tags"),
    }
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The collection's distance space, from its configuration or (ChromaDB 1.5) its schema.
fn space_of(collection: &Value) -> Option<String> {
    let config = collection.get("configuration_json");
    [
        config.and_then(|config| config.pointer("/hnsw/space")),
        config.and_then(|config| config.pointer("/spann/space")),
        collection.pointer("/schema/keys/#embedding/float_list/vector_index/config/space"),
        collection.pointer("/metadata/hnsw:space"),
    ]
    .into_iter()
    .flatten()
    .find_map(|space| space.as_str().map(str::to_owned))
}

/// ChromaDB's error (`{"error": "NotFoundError", "message": "…"}`), or the body as it came.
fn error_message(body: &str) -> String {
    if let Ok(Value::Object(error)) = serde_json::from_str::<Value>(body) {
        let kind = error.get("error").map(text_of).unwrap_or_default();
        let message = error.get("message").map(text_of).unwrap_or_default();
        match (kind.is_empty(), message.is_empty()) {
            (false, false) => return format!("{kind}: {message}"),
            (true, false) => return message,
            (false, true) => return kind,
            (true, true) => {}
        }
    }
    let body = body.trim();
    if body.is_empty() { "no message".into() } else { body.chars().take(500).collect() }
}

/// Whether `url` names this machine (`localhost`, `127.0.0.1`, `[::1]`).
fn is_loopback(url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(url.trim()) else { return false };
    match url.host_str() {
        Some(host) if host.eq_ignore_ascii_case("localhost") => true,
        Some(host) => host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback()),
        None => false,
    }
}

/// An error and its causes (`reqwest`'s own message names only the URL).
fn chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_urls_are_told_apart_from_others() {
        for url in [
            "http://localhost:8000",
            "http://LOCALHOST:8000/",
            "http://127.0.0.1:8000",
            "http://127.1.2.3",
            "http://[::1]:8000",
        ] {
            assert!(is_loopback(url), "{url}");
        }
        for url in ["http://chroma.internal:8000", "http://10.0.0.5:8000", "http://[2001:db8::1]:8000", "not a url"] {
            assert!(!is_loopback(url), "{url}");
        }
    }

    #[test]
    fn chroma_error_bodies_are_read_whatever_their_shape() {
        assert_eq!(
            error_message(r#"{"error":"NotFoundError","message":"Collection [x] does not exist"}"#),
            "NotFoundError: Collection [x] does not exist"
        );
        assert_eq!(error_message(r#"{"message":"only a message"}"#), "only a message");
        assert_eq!(error_message(r#"{"error":"OnlyAKind"}"#), "OnlyAKind");
        assert_eq!(error_message("<html>bad gateway</html>"), "<html>bad gateway</html>");
        assert_eq!(error_message("  "), "no message");
        assert_eq!(error_message(&"é".repeat(1000)).chars().count(), 500);
    }

    #[test]
    fn the_distance_space_is_found_in_the_configuration_or_the_schema() {
        assert_eq!(space_of(&json!({"configuration_json": {"hnsw": {"space": "l2"}}})).as_deref(), Some("l2"));
        assert_eq!(
            space_of(&json!({"configuration_json": {"hnsw": null, "spann": {"space": "ip"}}})).as_deref(),
            Some("ip")
        );
        let schema = json!({"schema": {"keys": {"#embedding": {"float_list": {"vector_index": {"config": {"space": "cosine"}}}}}}});
        assert_eq!(space_of(&schema).as_deref(), Some("cosine"));
        assert_eq!(space_of(&json!({"metadata": {"hnsw:space": "l2"}})).as_deref(), Some("l2"));
        assert_eq!(space_of(&json!({"id": "x"})), None);
    }
}
