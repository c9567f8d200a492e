//! Spec Story 8's scenarios with the real model (`PAIGE_MODEL_DIR`), run the same way against
//! the embedded store and a real ChromaDB: both stores must answer alike.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use chrono::{TimeZone, Utc};
use paige_core::memory::{Embedder, Importance, Memory, MemoryInput, MemoryStore, Origin, ProjectName};
use paige_memory::{ChromaStore, EmbeddedStore};

use crate::server::Chroma;

/// The model, loaded once for the whole binary.
fn model() -> Arc<dyn Embedder> {
    static MODEL: OnceLock<Arc<dyn Embedder>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            let dir = std::env::var("PAIGE_MODEL_DIR").expect(
                "PAIGE_MODEL_DIR is not set: run scripts/test.sh, or fetch the model with scripts/lib.sh's \
                 ensure_embedding_model",
            );
            let model = paige_memory::find_model(&[PathBuf::from(dir)], paige_memory::DEFAULT_IDLE)
                .expect("the model is installed");
            model.embed(&["load it now"]).expect("the model loads and embeds");
            model
        })
        .clone()
}

fn input(content: &str, tags: &[&str], importance: Importance) -> MemoryInput {
    MemoryInput { content: content.into(), tags: tags.iter().map(|t| t.to_string()).collect(), importance }
}

fn project(name: &str) -> ProjectName {
    ProjectName::of(&PathBuf::from("/home/learner/code").join(name))
}

fn contents(results: &[paige_core::memory::MemoryResult]) -> Vec<&str> {
    results.iter().map(|r| r.content.as_str()).collect()
}

/// Every scenario, in order, on one freshly connected memory.
fn story_8(memory: &Memory) {
    assert!(memory.is_available(), "8.5: connected at start");
    let now = Utc.with_ymd_and_hms(2026, 11, 22, 9, 30, 0).unwrap();
    // 8.1: two memories with metadata, ids mem_{session}_{index}.
    let added = memory.add_memories(
        &[
            input(
                "OAuth callback race condition: the token arrived after the redirect",
                &["auth", "oauth"],
                Importance::High,
            ),
            input("CSS grid layout for the settings page", &["css"], Importance::Low),
        ],
        &Origin::Session("sess-1".into()),
        &project("app-alpha"),
        now,
    );
    assert_eq!(added.added, 2);
    // 8.2: the OAuth memory is nearer to the query than the CSS one.
    let results = memory.query_memories("race condition in auth flow", None, None);
    assert_eq!(results.len(), 2);
    assert_eq!(results[0].id, "mem_sess-1_0");
    assert!(results[0].distance < results[1].distance, "{results:?}");
    assert!((0.0..=2.0).contains(&results[0].distance));
    let meta = &results[0].metadata;
    assert_eq!((meta.session_id.as_str(), meta.project.as_str()), ("sess-1", "app-alpha"));
    assert_eq!((meta.importance.as_str(), meta.tags.as_str()), ("high", "auth,oauth"));
    assert_eq!(meta.created_at, "2026-11-22T09:30:00.000Z");
    assert_eq!(meta.project_path, "/home/learner/code/app-alpha");
    // 8.3 and 8.4: cross-project recall, and a project-scoped query.
    memory.add_memories(
        &[input("useEffect cleanup must cancel the fetch when the component unmounts", &["react"], Importance::Medium)],
        &Origin::Session("sess-2".into()),
        &project("app-beta"),
        now,
    );
    memory.add_memories(
        &[input("forgot the useEffect cleanup for the interval timer", &["react"], Importance::High)],
        &Origin::Session("sess-3".into()),
        &project("app-alpha"),
        now,
    );
    let everywhere = memory.query_memories("useEffect cleanup", Some(2), None);
    let projects: Vec<&str> = everywhere.iter().map(|r| r.metadata.project.as_str()).collect();
    assert!(projects.contains(&"app-alpha") && projects.contains(&"app-beta"), "{everywhere:?}");
    let scoped = memory.query_memories("useEffect cleanup", None, Some("app-alpha"));
    assert!(scoped.iter().all(|r| r.metadata.project == "app-alpha"), "{scoped:?}");
    assert_eq!(scoped[0].content, "forgot the useEffect cleanup for the interval timer");
    // 8.10 and 8.11: ten results by default, or as many as asked; EC-51: 60 in one add.
    let many: Vec<MemoryInput> =
        (0..60).map(|i| input(&format!("note {i}: a small lesson about loops"), &[], Importance::Low)).collect();
    assert_eq!(memory.add_memories(&many, &Origin::Session("bulk".into()), &project("app-gamma"), now).added, 60);
    assert_eq!(memory.query_memories("loops", None, None).len(), 10);
    assert_eq!(memory.query_memories("loops", Some(5), None).len(), 5);
    // EC-52: fewer than asked when there are fewer.
    assert_eq!(memory.query_memories("useEffect", Some(50), Some("app-beta")).len(), 1);
    // EC-49: an empty query is passed through and answers.
    assert_eq!(memory.query_memories("", Some(3), None).len(), 3);
    // Text past the model's 256 tokens is stored whole and embedded from its start.
    let long = format!("OAuth token refresh race. {}", "filler words about nothing in particular ".repeat(200));
    assert_eq!(
        memory.add_memories(&[input(&long, &[], Importance::Low)], &Origin::Cli, &project("app-alpha"), now).added,
        1
    );
    let found = memory.query_memories("OAuth token refresh race", Some(3), Some("app-alpha"));
    assert!(contents(&found).contains(&long.as_str()), "{:?}", contents(&found));
    // Upsert: the same session index again replaces the memory.
    memory.add_memories(
        &[input("OAuth callback race condition, fixed by awaiting the token", &["auth"], Importance::High)],
        &Origin::Session("sess-1".into()),
        &project("app-alpha"),
        now,
    );
    let stats = memory.stats().expect("stats");
    assert_eq!(stats.total, 2 + 2 + 60 + 1);
    assert_eq!(stats.projects[0], ("app-gamma".to_owned(), 60));
    let top = memory.query_memories("race condition in auth flow", Some(1), None);
    assert_eq!(top[0].content, "OAuth callback race condition, fixed by awaiting the token");
}

fn connected(store: Box<dyn MemoryStore>) -> Memory {
    let memory = Memory::new(store, Ok(model()));
    assert!(memory.connect());
    memory
}

#[test]
fn story_8_scenarios_hold_for_the_embedded_store() {
    let dir = tempfile::tempdir().expect("tempdir");
    story_8(&connected(Box::new(EmbeddedStore::new(&dir.path().join("paige.db")))));
}

#[test]
fn story_8_scenarios_hold_for_chromadb() {
    let chroma = Chroma::start();
    story_8(&connected(Box::new(ChromaStore::new(&chroma.url()))));
}

#[test]
fn both_stores_rank_the_same_memories_in_the_same_order_with_the_same_distances() {
    let dir = tempfile::tempdir().expect("tempdir");
    let chroma = Chroma::start();
    let embedded = connected(Box::new(EmbeddedStore::new(&dir.path().join("paige.db"))));
    let server = connected(Box::new(ChromaStore::new(&chroma.url())));
    let texts = [
        "the borrow checker rejected two mutable references",
        "async function forgot to await the promise",
        "off-by-one error in the loop bounds",
        "SQL injection through string concatenation",
        "race condition between two threads writing a counter",
    ];
    let inputs: Vec<MemoryInput> = texts.iter().map(|t| input(t, &[], Importance::Medium)).collect();
    let now = Utc::now();
    for memory in [&embedded, &server] {
        assert_eq!(memory.add_memories(&inputs, &Origin::Session("s".into()), &project("p"), now).added, 5);
    }
    for query in ["data race", "missing await", "index out of range", ""] {
        let a = embedded.query_memories(query, None, None);
        let b = server.query_memories(query, None, None);
        assert_eq!(contents(&a), contents(&b), "ranking for {query:?}");
        for (x, y) in a.iter().zip(&b) {
            assert!((x.distance - y.distance).abs() < 1e-4, "{query:?}: {} vs {}", x.distance, y.distance);
        }
    }
}
