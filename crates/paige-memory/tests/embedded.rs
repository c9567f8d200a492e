//! The embedded store (SQLite in paige.db) on its own and under the core's `Memory`
//! service, with hand-made vectors: what it stores, how it ranks, and what it does with bad
//! rows and a missing model.

use std::sync::Arc;

use chrono::{TimeZone, Utc};
use paige_core::memory::{
    Embedder, Importance, Memory, MemoryError, MemoryInput, MemoryMetadata, MemoryQuery, MemoryRecord, MemoryStore,
    Origin, ProjectName,
};
use paige_memory::EmbeddedStore;

fn unit(hot: &[usize]) -> Vec<f32> {
    let mut v = vec![0.0f32; 8];
    for &i in hot {
        v[i] = 1.0;
    }
    let norm = (hot.len() as f32).sqrt();
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

fn record(id: &str, content: &str, project: &str, vector: Option<Vec<f32>>) -> MemoryRecord {
    MemoryRecord {
        id: id.into(),
        content: content.into(),
        metadata: MemoryMetadata {
            session_id: "s1".into(),
            project: project.into(),
            project_path: format!("/home/me/{project}"),
            created_at: "2026-11-22T10:00:00.000Z".into(),
            importance: "high".into(),
            tags: "auth,oauth".into(),
        },
        embedding: vector,
    }
}

fn store() -> (tempfile::TempDir, EmbeddedStore) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = EmbeddedStore::new(&dir.path().join("paige.db"));
    store.connect().expect("connect");
    (dir, store)
}

fn query<'a>(text: &'a str, embedding: Option<&'a [f32]>, n: usize, project: Option<&'a str>) -> MemoryQuery<'a> {
    MemoryQuery { text, embedding, n_results: n, project }
}

#[test]
fn stored_memories_come_back_with_their_metadata_nearest_first_with_distance_one_minus_cosine() {
    let (_dir, store) = store();
    let added = store
        .add(&[
            record("mem_s1_0", "OAuth callback race", "alpha", Some(unit(&[0]))),
            record("mem_s1_1", "CSS grid", "alpha", Some(unit(&[1]))),
            record("mem_s1_2", "both", "beta", Some(unit(&[0, 1]))),
        ])
        .expect("add");
    assert_eq!(added, 3);
    let results = store.query(&query("x", Some(&unit(&[0])), 10, None)).expect("query");
    let ids: Vec<&str> = results.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["mem_s1_0", "mem_s1_2", "mem_s1_1"]);
    assert!(results[0].distance.abs() < 1e-6);
    assert!((results[1].distance - (1.0 - 1.0 / 2f32.sqrt())).abs() < 1e-6);
    assert!((results[2].distance - 1.0).abs() < 1e-6);
    assert_eq!(results[0].content, "OAuth callback race");
    assert_eq!(results[0].metadata, record("", "", "alpha", None).metadata);
}

#[test]
fn a_project_filter_returns_only_that_projects_memories_and_n_results_caps_the_list() {
    let (_dir, store) = store();
    let records: Vec<MemoryRecord> = (0..12)
        .map(|i| record(&format!("m{i}"), "text", if i % 2 == 0 { "alpha" } else { "beta" }, Some(unit(&[i % 8]))))
        .collect();
    store.add(&records).expect("add");
    let alpha = store.query(&query("x", Some(&unit(&[0])), 10, Some("alpha"))).expect("query");
    assert_eq!(alpha.len(), 6);
    assert!(alpha.iter().all(|r| r.metadata.project == "alpha"));
    assert_eq!(store.query(&query("x", Some(&unit(&[0])), 5, None)).expect("query").len(), 5);
    assert_eq!(store.query(&query("x", Some(&unit(&[0])), 100, None)).expect("query").len(), 12);
    assert!(store.query(&query("x", Some(&unit(&[0])), 10, Some("gamma"))).expect("query").is_empty());
}

#[test]
fn adding_an_existing_id_replaces_it() {
    let (_dir, store) = store();
    store.add(&[record("m", "old text", "alpha", Some(unit(&[0])))]).expect("add");
    store.add(&[record("m", "new text", "alpha", Some(unit(&[3])))]).expect("add");
    let stats = store.stats().expect("stats");
    assert_eq!(stats.total, 1);
    let results = store.query(&query("x", Some(&unit(&[3])), 10, None)).expect("query");
    assert_eq!((results[0].content.as_str(), results[0].distance.abs() < 1e-6), ("new text", true));
    // The keyword index follows the new text too.
    assert!(store.query(&query("old", None, 10, None)).expect("query").is_empty());
    assert_eq!(store.query(&query("new", None, 10, None)).expect("query").len(), 1);
}

#[test]
fn without_vectors_memories_are_ranked_by_keywords_and_a_word_match_is_never_missed() {
    let (_dir, store) = store();
    store
        .add(&[
            record("a", "OAuth callback race condition in the login flow", "alpha", None),
            record("b", "CSS grid layout for the dashboard", "alpha", None),
            record("c", "race to the finish", "beta", None),
        ])
        .expect("add");
    let results = store.query(&query("race condition: auth flow?", None, 10, None)).expect("query");
    let ids: Vec<&str> = results.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["a", "c"]);
    assert!(results[0].distance < results[1].distance && results[1].distance <= 1.0);
    let scoped = store.query(&query("race", None, 10, Some("beta"))).expect("query");
    assert_eq!(scoped.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["c"]);
    // FTS5 syntax in a query is just words.
    assert_eq!(store.query(&query("\"grid\" AND NOT (", None, 10, None)).expect("query")[0].id, "b");
    // No words at all: the newest memories.
    assert_eq!(store.query(&query("", None, 2, None)).expect("query").len(), 2);
    assert_eq!(store.stats().expect("stats").without_vectors, 3);
}

#[test]
fn a_corrupt_vector_row_is_left_out_of_semantic_search_and_the_rest_still_work() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("paige.db");
    {
        let store = EmbeddedStore::new(&path);
        store.connect().expect("connect");
        store
            .add(&[
                record("good", "fine", "alpha", Some(unit(&[0]))),
                record("bad", "broken", "alpha", Some(unit(&[1]))),
            ])
            .expect("add");
    }
    let conn = rusqlite::Connection::open(&path).expect("open");
    conn.execute("UPDATE memory_vectors SET vector = x'00ff' WHERE id = 'bad'", []).expect("corrupt");
    let store = EmbeddedStore::new(&path);
    store.connect().expect("a corrupt row does not stop the store");
    let results = store.query(&query("x", Some(&unit(&[1])), 10, None)).expect("query");
    assert_eq!(results.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["good"]);
    assert_eq!(store.query(&query("broken", None, 10, None)).expect("query")[0].id, "bad");
}

#[test]
fn a_write_by_another_connection_is_seen_by_the_next_query() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("paige.db");
    let running = EmbeddedStore::new(&path);
    running.connect().expect("connect");
    assert!(running.query(&query("x", Some(&unit(&[2])), 10, None)).expect("query").is_empty());
    let cli = EmbeddedStore::new(&path);
    cli.add(&[record("from-cli", "added elsewhere", "alpha", Some(unit(&[2])))]).expect("add");
    let results = running.query(&query("x", Some(&unit(&[2])), 10, None)).expect("query");
    assert_eq!(results.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["from-cli"]);
}

#[test]
fn a_database_that_cannot_be_opened_is_unavailable_not_a_panic() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("paige.db"), b"this is not a database, just some text").expect("write");
    let store = EmbeddedStore::new(&dir.path().join("paige.db"));
    assert!(matches!(store.connect(), Err(MemoryError::Unavailable(_))), "{:?}", store.connect());
    let missing = EmbeddedStore::new(&dir.path().join("no/such/dir/paige.db"));
    assert!(matches!(missing.connect(), Err(MemoryError::Unavailable(_))));
}

/// Vectors from the position of a few keywords: deterministic, no model needed.
struct KeywordEmbedder;

impl Embedder for KeywordEmbedder {
    fn describe(&self) -> String {
        "keywords (test)".into()
    }
    fn dimension(&self) -> usize {
        8
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, MemoryError> {
        const WORDS: [&str; 7] = ["auth", "race", "css", "grid", "effect", "cleanup", "test"];
        Ok(texts
            .iter()
            .map(|text| {
                let lower = text.to_lowercase();
                let hot: Vec<usize> =
                    WORDS.iter().enumerate().filter(|(_, w)| lower.contains(*w)).map(|(i, _)| i).collect();
                if hot.is_empty() { unit(&[7]) } else { unit(&hot) }
            })
            .collect())
    }
}

struct FailingEmbedder;

impl Embedder for FailingEmbedder {
    fn describe(&self) -> String {
        "failing (test)".into()
    }
    fn dimension(&self) -> usize {
        8
    }
    fn embed(&self, _: &[&str]) -> Result<Vec<Vec<f32>>, MemoryError> {
        Err(MemoryError::Embedding("the model crashed".into()))
    }
}

fn memory(dir: &tempfile::TempDir, embedder: Result<Arc<dyn Embedder>, String>) -> Memory {
    let memory = Memory::new(Box::new(EmbeddedStore::new(&dir.path().join("paige.db"))), embedder);
    assert!(memory.connect());
    memory
}

fn input(content: &str, tags: &[&str]) -> MemoryInput {
    MemoryInput {
        content: content.into(),
        tags: tags.iter().map(|t| t.to_string()).collect(),
        importance: Importance::High,
    }
}

fn alpha() -> ProjectName {
    ProjectName::of(std::path::Path::new("/home/me/app-alpha"))
}

#[test]
fn add_memories_numbers_ids_per_session_and_files_them_under_the_project_directory_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let memory = memory(&dir, Ok(Arc::new(KeywordEmbedder)));
    let now = Utc.with_ymd_and_hms(2026, 11, 22, 10, 0, 0).unwrap();
    let added = memory.add_memories(
        &[input("OAuth race", &["auth", "a,b"]), input("CSS grid", &[])],
        &Origin::Session("sess-9".into()),
        &alpha(),
        now,
    );
    assert_eq!(added.added, 2);
    let results = memory.query_memories("auth race", None, Some("app-alpha"));
    assert_eq!(results[0].id, "mem_sess-9_0");
    let meta = &results[0].metadata;
    assert_eq!(
        (meta.session_id.as_str(), meta.project.as_str(), meta.project_path.as_str()),
        ("sess-9", "app-alpha", "/home/me/app-alpha")
    );
    assert_eq!((meta.created_at.as_str(), meta.importance.as_str()), ("2026-11-22T10:00:00.000Z", "high"));
    assert_eq!(meta.tags, "auth,ab", "commas inside a tag are dropped (EC-50)");
    let cli = memory.add_memories(&[input("from the command line", &[])], &Origin::Cli, &alpha(), now);
    assert_eq!(cli.added, 1);
    let all = memory.query_memories("", Some(10), None);
    assert!(all.iter().any(|r| r.id.starts_with("mem_cli_") && r.metadata.session_id == "cli"), "{all:?}");
}

#[test]
fn an_empty_add_is_zero_and_touches_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Not even connected: an empty add returns before any store call (EC-48).
    let memory = Memory::new(Box::new(EmbeddedStore::new(&dir.path().join("paige.db"))), Ok(Arc::new(KeywordEmbedder)));
    assert_eq!(memory.add_memories(&[], &Origin::Cli, &alpha(), Utc::now()).added, 0);
    assert!(!dir.path().join("paige.db").exists());
}

#[test]
fn without_the_model_memory_still_works_by_keywords() {
    let dir = tempfile::tempdir().expect("tempdir");
    let memory = memory(&dir, Err("no model at /nowhere".into()));
    assert!(memory.is_available());
    assert_eq!((memory.status().model, memory.status().model_problem), (None, Some("no model at /nowhere".into())));
    let added = memory.add_memories(
        &[input("OAuth callback race condition", &[]), input("CSS grid layout", &[])],
        &Origin::Session("s".into()),
        &alpha(),
        Utc::now(),
    );
    assert_eq!(added.added, 2);
    let results = memory.query_memories("race condition in auth flow", None, None);
    assert_eq!(results.first().map(|r| r.content.as_str()), Some("OAuth callback race condition"));
}

#[test]
fn a_failing_model_stores_the_memory_for_keyword_search_instead_of_losing_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let memory = memory(&dir, Ok(Arc::new(FailingEmbedder)));
    let added = memory.add_memories(&[input("useEffect cleanup", &[])], &Origin::Cli, &alpha(), Utc::now());
    assert_eq!(added.added, 1);
    assert!(memory.is_available());
    assert_eq!(memory.query_memories("cleanup", None, None).len(), 1);
}

#[test]
fn memories_stored_while_the_model_was_missing_get_their_vectors_once_it_is_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let without = memory(&dir, Err("no model yet".into()));
    let project = alpha();
    let inputs: Vec<MemoryInput> = (0..40).map(|i| input(&format!("note {i} about css"), &[])).collect();
    assert_eq!(without.add_memories(&inputs, &Origin::Cli, &project, Utc::now()).added, 40);
    assert_eq!(without.add_memories(&[input("auth race", &[])], &Origin::Cli, &project, Utc::now()).added, 1);
    drop(without);
    let with = memory(&dir, Ok(Arc::new(KeywordEmbedder)));
    // Found by its vector: the test embedder maps "race + auth" to the very same vector.
    let results = with.query_memories("race, then auth", Some(1), None);
    assert_eq!(results.first().map(|r| r.content.as_str()), Some("auth race"));
    assert!(results[0].distance < 1e-6, "found by its vector: {results:?}");
    assert_eq!(with.stats().expect("stats").without_vectors, 0);
}
