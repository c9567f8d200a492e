//! The ChromaDB store against a real ChromaDB 1.5.9 server (`PAIGE_TEST_CHROMA`: the `chroma`
//! CLI, installed by scripts/test.sh), one fresh server per test. Vectors are made by hand
//! (unit vectors from a few hot coordinates) or by a tiny word-hashing embedder, so nothing
//! here needs the embedding model.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;

use crate::server::{Chroma, free_port, url_of};
use chrono::{TimeZone, Utc};
use paige_core::memory::{
    Embedder, Importance, Memory, MemoryError, MemoryInput, MemoryMetadata, MemoryQuery, MemoryRecord, MemoryStore,
    Origin, ProjectName,
};
use paige_memory::ChromaStore;
use serde_json::json;

const DIM: usize = 384;

/// A unit vector of `DIM` dimensions from a few `(coordinate, weight)` pairs.
fn unit(hot: &[(usize, f32)]) -> Vec<f32> {
    let mut vector = vec![0.0; DIM];
    for &(index, weight) in hot {
        vector[index] += weight;
    }
    normalise(vector)
}

fn normalise(mut vector: Vec<f32>) -> Vec<f32> {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        vector.iter_mut().for_each(|x| *x /= norm);
    }
    vector
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn metadata(project: &str, tags: &str) -> MemoryMetadata {
    MemoryMetadata {
        session_id: "sess-1".into(),
        project: project.into(),
        project_path: format!("/home/dev/{project}"),
        created_at: "2026-03-01T10:00:00.000Z".into(),
        importance: "high".into(),
        tags: tags.into(),
    }
}

fn record(id: &str, content: &str, project: &str, embedding: Vec<f32>) -> MemoryRecord {
    MemoryRecord {
        id: id.into(),
        content: content.into(),
        metadata: metadata(project, "auth,race"),
        embedding: Some(embedding),
    }
}

fn search<'a>(embedding: &'a [f32], n_results: usize, project: Option<&'a str>) -> MemoryQuery<'a> {
    MemoryQuery { text: "a query", embedding: Some(embedding), n_results, project }
}

/// A connected store over a fresh server.
fn connected(chroma: &Chroma) -> ChromaStore {
    let store = ChromaStore::new(&chroma.url());
    store.connect().expect("connect to chroma");
    store
}

#[test]
fn add_then_query_returns_ids_documents_and_metadata() {
    let chroma = Chroma::start();
    let store = connected(&chroma);
    assert_eq!(store.name(), "ChromaDB");
    assert_eq!(store.location(), chroma.url());
    assert!(!store.ranks_without_vectors());
    let records = vec![
        record("mem_sess-1_0", "OAuth callback race condition", "app-alpha", unit(&[(0, 1.0)])),
        record("mem_sess-1_1", "CSS grid layout", "app-alpha", unit(&[(1, 1.0)])),
    ];
    assert_eq!(store.add(&records).unwrap(), 2);
    let results = store.query(&search(&unit(&[(0, 1.0)]), 10, None)).unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0].id, "mem_sess-1_0");
    assert_eq!(results[0].content, "OAuth callback race condition");
    assert_eq!(results[0].metadata, metadata("app-alpha", "auth,race"));
    assert_eq!(results[1].id, "mem_sess-1_1");
    assert_eq!(results[1].content, "CSS grid layout");
}

#[test]
fn the_collection_is_cosine_and_nearest_comes_first_with_distance_one_minus_cosine() {
    let chroma = Chroma::start();
    let store = connected(&chroma);
    assert_eq!(chroma.collection("paige_memories")["configuration_json"]["hnsw"]["space"], "cosine");
    let vectors = [
        unit(&[(0, 1.0)]),
        unit(&[(0, 0.8), (1, 0.6)]),
        unit(&[(0, 0.3), (2, 0.9)]),
        unit(&[(3, 1.0)]),
        unit(&[(0, -1.0)]),
    ];
    let records: Vec<MemoryRecord> = vectors
        .iter()
        .enumerate()
        .rev()
        .map(|(index, vector)| record(&format!("m{index}"), &format!("memory {index}"), "p", vector.clone()))
        .collect();
    store.add(&records).unwrap();
    let probe = unit(&[(0, 0.9), (1, 0.2), (5, 0.1)]);
    let results = store.query(&search(&probe, 5, None)).unwrap();
    let mut expected: Vec<(String, f32)> =
        vectors.iter().enumerate().map(|(index, vector)| (format!("m{index}"), 1.0 - cosine(&probe, vector))).collect();
    expected.sort_by(|a, b| a.1.total_cmp(&b.1));
    assert_eq!(
        results.iter().map(|result| result.id.clone()).collect::<Vec<_>>(),
        expected.iter().map(|e| e.0.clone()).collect::<Vec<_>>()
    );
    for (result, (_, distance)) in results.iter().zip(&expected) {
        assert!(
            (result.distance - distance).abs() < 1e-3,
            "{}: {} vs 1 − cosine {distance}",
            result.id,
            result.distance
        );
    }
    assert!((results.last().unwrap().distance - 1.9).abs() < 0.1, "opposite vectors are ~2 apart");
}

#[test]
fn an_l2_collection_made_elsewhere_still_reports_one_minus_cosine() {
    let chroma = Chroma::start();
    // Created by someone else with ChromaDB's defaults: the l2 space.
    chroma.create_collection("paige_memories", None);
    assert_eq!(chroma.collection("paige_memories")["configuration_json"]["hnsw"]["space"], "l2");
    let store = connected(&chroma);
    store.add(&[record("a", "a", "p", unit(&[(0, 1.0)])), record("b", "b", "p", unit(&[(0, 0.6), (1, 0.8)]))]).unwrap();
    let results = store.query(&search(&unit(&[(0, 1.0)]), 2, None)).unwrap();
    assert_eq!(results[0].id, "a");
    assert!(results[0].distance.abs() < 1e-4);
    assert!((results[1].distance - 0.4).abs() < 1e-3, "{}", results[1].distance);
}

#[test]
fn project_filter_returns_only_that_projects_memories() {
    let chroma = Chroma::start();
    let store = connected(&chroma);
    store
        .add(&[
            record("alpha-1", "useEffect cleanup in alpha", "app-alpha", unit(&[(0, 1.0)])),
            record("beta-1", "useEffect cleanup in beta", "app-beta", unit(&[(0, 1.0), (1, 0.1)])),
            record("alpha-2", "another alpha memory", "app-alpha", unit(&[(2, 1.0)])),
        ])
        .unwrap();
    let probe = unit(&[(0, 1.0)]);
    let alpha = store.query(&search(&probe, 10, Some("app-alpha"))).unwrap();
    assert_eq!(alpha.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["alpha-1", "alpha-2"]);
    assert!(alpha.iter().all(|result| result.metadata.project == "app-alpha"));
    let all = store.query(&search(&probe, 10, None)).unwrap();
    assert_eq!(all.len(), 3, "without a filter both projects are recalled");
    assert!(store.query(&search(&probe, 10, Some("app-gamma"))).unwrap().is_empty());
}

#[test]
fn n_results_is_honoured_and_fewer_come_back_when_fewer_exist() {
    let chroma = Chroma::start();
    let store = connected(&chroma);
    let records: Vec<MemoryRecord> =
        (0..12).map(|index| record(&format!("m{index}"), "text", "p", unit(&[(index, 1.0), (100, 0.5)]))).collect();
    store.add(&records).unwrap();
    let probe = unit(&[(100, 1.0)]);
    assert_eq!(store.query(&search(&probe, 5, None)).unwrap().len(), 5);
    assert_eq!(store.query(&search(&probe, 10, None)).unwrap().len(), 10);
    assert_eq!(store.query(&search(&probe, 50, None)).unwrap().len(), 12, "EC-52: no padding");
    assert!(store.query(&search(&probe, 0, None)).unwrap().is_empty());
}

#[test]
fn upsert_of_an_existing_id_replaces_it_and_the_count_is_unchanged() {
    let chroma = Chroma::start();
    let store = connected(&chroma);
    store
        .add(&[record("m0", "first text", "p", unit(&[(0, 1.0)])), record("m1", "other", "p", unit(&[(1, 1.0)]))])
        .unwrap();
    let mut replacement = record("m0", "replaced text", "q", unit(&[(2, 1.0)]));
    replacement.metadata.tags = "new".into();
    assert_eq!(store.add(&[replacement]).unwrap(), 1);
    assert_eq!(store.stats().unwrap().total, 2);
    let results = store.query(&search(&unit(&[(2, 1.0)]), 1, None)).unwrap();
    assert_eq!(results[0].id, "m0");
    assert_eq!(results[0].content, "replaced text");
    assert_eq!(results[0].metadata.project, "q");
    assert_eq!(results[0].metadata.tags, "new");
    assert!(results[0].distance.abs() < 1e-4, "the vector was replaced too");
}

#[test]
fn sixty_records_are_added_in_one_call() {
    let chroma = Chroma::start();
    let store = connected(&chroma);
    let records: Vec<MemoryRecord> = (0..60)
        .map(|index| record(&format!("m{index}"), &format!("memory {index}"), "p", unit(&[(index, 1.0)])))
        .collect();
    assert_eq!(store.add(&records).unwrap(), 60);
    let id = chroma.collection("paige_memories")["id"].as_str().unwrap().to_owned();
    assert_eq!(chroma.count(&id), 60);
    let results = store.query(&search(&unit(&[(42, 1.0)]), 1, None)).unwrap();
    assert_eq!(results[0].id, "m42");
}

#[test]
fn tags_come_back_as_stored() {
    let chroma = Chroma::start();
    let store = connected(&chroma);
    let mut tagged = record("m0", "text", "p", unit(&[(0, 1.0)]));
    tagged.metadata.tags = "react,useEffect,memory leak".into();
    let mut untagged = record("m1", "text", "p", unit(&[(1, 1.0)]));
    untagged.metadata.tags = String::new();
    store.add(&[tagged, untagged]).unwrap();
    let results = store.query(&search(&unit(&[(0, 1.0)]), 2, None)).unwrap();
    assert_eq!(results[0].metadata.tags, "react,useEffect,memory leak");
    assert_eq!(results[1].metadata.tags, "");
}

#[test]
fn a_collection_of_another_dimension_is_a_clear_store_error() {
    let chroma = Chroma::start();
    // Someone else's paige_memories, with 768-d vectors, before Paige connects.
    let id = chroma.create_collection("paige_memories", Some(json!({ "hnsw": { "space": "cosine" } })));
    let mut wide = vec![0.0; 768];
    wide[0] = 1.0;
    chroma.upsert(&id, &["theirs"], &[wide], "p");
    let store = connected(&chroma);
    let expect_dimensions = |err: MemoryError| match err {
        MemoryError::Store(message) => {
            assert!(message.contains("paige_memories"), "{message}");
            assert!(message.contains("768") && message.contains("384"), "{message}");
        }
        other => panic!("expected a store error, got {other:?}"),
    };
    expect_dimensions(store.add(&[record("m0", "text", "p", unit(&[(0, 1.0)]))]).unwrap_err());
    expect_dimensions(store.query(&search(&unit(&[(0, 1.0)]), 5, None)).unwrap_err());
    assert_eq!(chroma.count(&id), 1, "nothing of Paige's was stored");

    // The collection was empty when Paige connected; 768-d vectors arrived after: ChromaDB's
    // own refusal is reported the same way.
    chroma.delete_collection("paige_memories");
    let store = connected(&chroma);
    let id = chroma.collection("paige_memories")["id"].as_str().unwrap().to_owned();
    let mut wide = vec![0.0; 768];
    wide[1] = 1.0;
    chroma.upsert(&id, &["theirs"], &[wide], "p");
    expect_dimensions(store.add(&[record("m0", "text", "p", unit(&[(0, 1.0)]))]).unwrap_err());
    store.connect().unwrap();
    expect_dimensions(store.query(&search(&unit(&[(0, 1.0)]), 5, None)).unwrap_err());
}

#[test]
fn a_collection_deleted_externally_fails_the_next_call_and_connect_recreates_it() {
    let chroma = Chroma::start();
    let store = connected(&chroma);
    store.add(&[record("m0", "text", "p", unit(&[(0, 1.0)]))]).unwrap();
    let old_id = chroma.collection("paige_memories")["id"].as_str().unwrap().to_owned();
    chroma.delete_collection("paige_memories");
    match store.query(&search(&unit(&[(0, 1.0)]), 5, None)) {
        Err(MemoryError::Store(message)) => assert!(message.contains("paige_memories"), "{message}"),
        other => panic!("expected a store error, got {other:?}"),
    }
    store.connect().unwrap();
    let new_id = chroma.collection("paige_memories")["id"].as_str().unwrap().to_owned();
    assert_ne!(old_id, new_id, "a new collection");
    assert!(store.query(&search(&unit(&[(0, 1.0)]), 5, None)).unwrap().is_empty());
    assert_eq!(store.add(&[record("m1", "again", "p", unit(&[(1, 1.0)]))]).unwrap(), 1);
    assert_eq!(store.query(&search(&unit(&[(1, 1.0)]), 5, None)).unwrap()[0].id, "m1");
    assert_eq!(chroma.count(&new_id), 1);
}

#[test]
fn a_server_killed_mid_run_is_unavailable_without_panicking() {
    let chroma = Chroma::start();
    let store = connected(&chroma);
    store.add(&[record("m0", "text", "p", unit(&[(0, 1.0)]))]).unwrap();
    chroma.kill();
    let unavailable = |result: Result<(), MemoryError>| match result {
        Err(MemoryError::Unavailable(message)) => assert!(message.contains(&chroma.url()), "{message}"),
        other => panic!("expected unavailable, got {other:?}"),
    };
    unavailable(store.query(&search(&unit(&[(0, 1.0)]), 5, None)).map(|_| ()));
    unavailable(store.add(&[record("m1", "text", "p", unit(&[(1, 1.0)]))]).map(|_| ()));
    unavailable(store.stats().map(|_| ()));
    unavailable(store.connect());
}

#[test]
fn connect_to_a_server_that_is_not_running_is_unavailable() {
    let store = ChromaStore::new(&url_of(free_port()));
    assert!(matches!(store.connect(), Err(MemoryError::Unavailable(_))));
    assert!(matches!(store.add(&[record("m0", "t", "p", unit(&[(0, 1.0)]))]), Err(MemoryError::Unavailable(_))));
}

#[test]
fn memories_without_vectors_are_embedding_errors_before_any_call() {
    // No server: the store refuses before talking to one.
    let store = ChromaStore::new(&url_of(free_port()));
    let mut plain = record("m0", "text", "p", unit(&[(0, 1.0)]));
    plain.embedding = None;
    assert!(matches!(store.add(&[plain]), Err(MemoryError::Embedding(_))));
    let query = MemoryQuery { text: "text", embedding: None, n_results: 5, project: None };
    assert!(matches!(store.query(&query), Err(MemoryError::Embedding(_))));
    assert_eq!(store.add(&[]).unwrap(), 0);
    assert!(store.query(&search(&unit(&[(0, 1.0)]), 0, None)).unwrap().is_empty());
}

#[test]
fn stats_count_memories_per_project_most_first() {
    let chroma = Chroma::start();
    let store = connected(&chroma);
    assert_eq!(store.stats().unwrap().total, 0);
    let mut records = Vec::new();
    for (project, count) in [("app-beta", 2), ("app-alpha", 5), ("app-gamma", 2)] {
        for index in 0..count {
            records.push(record(&format!("{project}-{index}"), "text", project, unit(&[(index, 1.0)])));
        }
    }
    store.add(&records).unwrap();
    let stats = store.stats().unwrap();
    assert_eq!(stats.total, 9);
    assert_eq!(stats.projects, vec![("app-alpha".into(), 5), ("app-beta".into(), 2), ("app-gamma".into(), 2)]);
    assert_eq!(stats.without_vectors, 0);
}

/// A server that answers every request with one canned HTTP response.
fn canned(response: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = url_of(listener.local_addr().unwrap().port());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = Vec::new();
            let mut buffer = [0; 4096];
            // Read the head and the body its Content-Length announces.
            while let Ok(read) = stream.read(&mut buffer) {
                if read == 0 {
                    break;
                }
                request.extend_from_slice(&buffer[..read]);
                let text = String::from_utf8_lossy(&request);
                if let Some(end) = text.find("\r\n\r\n") {
                    let length = text[..end]
                        .lines()
                        .find_map(|line| {
                            line.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_owned())
                        })
                        .and_then(|v| v.parse::<usize>().ok())
                        .unwrap_or(0);
                    if request.len() >= end + 4 + length {
                        break;
                    }
                }
            }
            let _ = stream.write_all(response.as_bytes());
        }
    });
    url
}

/// An HTTP response with `status` and `body`, for [`canned`].
fn respond(status: &str, body: &str) -> &'static str {
    Box::leak(
        format!("HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len())
            .into_boxed_str(),
    )
}

#[test]
fn odd_answers_from_the_server_are_store_errors_never_panics() {
    let ok = |body: &str| respond("200 OK", body);
    let cases = [
        ("not JSON", ok("<html>hello</html>")),
        ("no id", ok(r#"{"name":"paige_memories"}"#)),
        ("id not a string", ok(r#"{"id":5}"#)),
        ("an array", ok("[1,2,3]")),
        (
            "an error status",
            respond("500 Internal Server Error", r#"{"error":"InternalError","message":"the disk is on fire"}"#),
        ),
        ("an error status without a body", respond("503 Service Unavailable", "")),
    ];
    for (what, response) in cases {
        let store = ChromaStore::new(&canned(response));
        match store.connect() {
            Err(MemoryError::Store(message)) => {
                if what == "an error status" {
                    assert!(message.contains("InternalError: the disk is on fire"), "{message}");
                }
            }
            other => panic!("{what}: expected a store error, got {other:?}"),
        }
    }
    // A collection that exists, then record answers of the wrong shape.
    for body in [
        r#"{"id":"c1","ids":5}"#,
        r#"{"id":"c1"}"#,
        r#"{"id":"c1","ids":[["a"]],"distances":[["x"]]}"#,
        r#"{"id":"c1","ids":[[7]],"distances":[[0.1]]}"#,
        r#"{"id":"c1","ids":[["a"]]}"#,
    ] {
        let store = ChromaStore::new(&canned(ok(body)));
        store.connect().unwrap();
        assert!(matches!(store.query(&search(&unit(&[(0, 1.0)]), 5, None)), Err(MemoryError::Store(_))), "{body}");
    }
    for body in [r#"{"id":"c1","ids":5}"#, r#"{"id":"c1"}"#] {
        let store = ChromaStore::new(&canned(ok(body)));
        assert!(matches!(store.stats(), Err(MemoryError::Store(_))), "{body}");
    }
    // Results whose lists are shorter than the ids: the missing parts are empty.
    let body = r#"{"id":"c1","ids":[["a","b"]],"documents":[["doc a"]],"metadatas":[[{"project":"p","importance":3}]],"distances":[[0.1,0.2]]}"#;
    let store = ChromaStore::new(&canned(ok(body)));
    let results = store.query(&search(&unit(&[(0, 1.0)]), 5, None)).unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0].metadata.importance, "3");
    assert_eq!(results[1].content, "");
    assert_eq!(results[1].metadata.project, "");
}

// Through the core's Memory service (spec scenarios 8.1, 8.5–8.9, EC-47, EC-53).

/// Deterministic word hashing into unit vectors: texts sharing words are near.
struct FakeEmbedder;

impl Embedder for FakeEmbedder {
    fn describe(&self) -> String {
        "word hashing (test)".into()
    }

    fn dimension(&self) -> usize {
        DIM
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, MemoryError> {
        Ok(texts
            .iter()
            .map(|text| {
                let mut vector = vec![0.0; DIM];
                for word in text.split(|c: char| !c.is_alphanumeric()).filter(|word| !word.is_empty()) {
                    let hash = word.to_lowercase().bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
                        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
                    });
                    vector[(hash % DIM as u64) as usize] += 1.0;
                }
                vector[DIM - 1] += 0.01;
                normalise(vector)
            })
            .collect())
    }
}

fn memory_over(url: &str) -> Memory {
    Memory::new(Box::new(ChromaStore::new(url)), Ok(Arc::new(FakeEmbedder)))
}

fn inputs() -> Vec<MemoryInput> {
    vec![
        MemoryInput {
            content: "OAuth callback race condition in the auth flow".into(),
            tags: vec!["auth".into(), "race, condition".into()],
            importance: Importance::High,
        },
        MemoryInput {
            content: "CSS grid layout collapses on narrow screens".into(),
            tags: vec![],
            importance: Importance::Low,
        },
    ]
}

fn project() -> ProjectName {
    ProjectName { name: "app-alpha".into(), path: "/home/dev/app-alpha".into() }
}

fn now() -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 10, 0, 0).unwrap()
}

#[test]
fn memory_over_running_chroma_connects_and_stores_session_memories() {
    let chroma = Chroma::start();
    let memory = memory_over(&chroma.url());
    assert!(memory.connect());
    assert!(memory.is_available());
    let added = memory.add_memories(&inputs(), &Origin::Session("s42".into()), &project(), now());
    assert_eq!(added.added, 2);
    let results = memory.query_memories("race condition in auth flow", None, None);
    assert_eq!(results.len(), 2);
    assert_eq!(results[0].id, "mem_s42_0");
    assert!(results[0].distance < results[1].distance);
    assert_eq!(results[1].id, "mem_s42_1");
    let meta = &results[0].metadata;
    assert_eq!(meta.session_id, "s42");
    assert_eq!(meta.project, "app-alpha");
    assert_eq!(meta.project_path, "/home/dev/app-alpha");
    assert_eq!(meta.created_at, "2026-03-01T10:00:00.000Z");
    assert_eq!(meta.importance, "high");
    assert_eq!(meta.tags, "auth,race condition");
    assert_eq!(memory.query_memories("race condition", Some(1), Some("app-alpha")).len(), 1);
    assert!(memory.query_memories("race condition", None, Some("app-beta")).is_empty());
    let stats = memory.stats().unwrap();
    assert_eq!((stats.total, stats.projects), (2, vec![("app-alpha".into(), 2)]));
}

#[test]
fn memory_started_with_chroma_down_degrades_then_reconnects_when_it_starts() {
    let port = free_port();
    let memory = memory_over(&url_of(port));
    assert!(!memory.connect(), "8.6: connecting fails, nothing panics");
    assert!(!memory.is_available());
    assert_eq!(memory.add_memories(&inputs(), &Origin::Cli, &project(), now()).added, 0, "8.7");
    assert!(memory.query_memories("race condition", None, None).is_empty(), "8.8");
    assert!(!memory.is_available());
    let chroma = Chroma::start_on(port);
    assert_eq!(memory.add_memories(&inputs(), &Origin::Session("s1".into()), &project(), now()).added, 2, "8.9");
    assert!(memory.is_available());
    assert_eq!(memory.query_memories("CSS grid layout", None, None)[0].id, "mem_s1_1");
    drop(chroma);
}

#[test]
fn memory_over_chroma_whose_server_dies_degrades_and_recovers_when_it_returns() {
    let chroma = Chroma::start();
    let port = chroma.port;
    let memory = memory_over(&chroma.url());
    assert!(memory.connect());
    assert_eq!(memory.add_memories(&inputs(), &Origin::Session("s1".into()), &project(), now()).added, 2);
    drop(chroma);
    assert!(memory.query_memories("race condition", None, None).is_empty(), "EC-47");
    assert!(!memory.is_available());
    assert_eq!(memory.add_memories(&inputs(), &Origin::Session("s2".into()), &project(), now()).added, 0);
    let _chroma = Chroma::start_on(port);
    assert_eq!(memory.add_memories(&inputs(), &Origin::Session("s3".into()), &project(), now()).added, 2);
    assert!(memory.is_available());
}

#[test]
fn memory_recovers_after_the_collection_is_deleted_externally() {
    let chroma = Chroma::start();
    let memory = memory_over(&chroma.url());
    assert!(memory.connect());
    assert_eq!(memory.add_memories(&inputs(), &Origin::Session("s1".into()), &project(), now()).added, 2);
    chroma.delete_collection("paige_memories");
    assert!(memory.query_memories("race condition", None, None).is_empty(), "EC-53: the call fails, degraded");
    assert!(!memory.is_available());
    assert_eq!(
        memory.add_memories(&inputs(), &Origin::Session("s2".into()), &project(), now()).added,
        2,
        "reconnected"
    );
    assert!(memory.is_available());
    let results = memory.query_memories("race condition", None, None);
    assert_eq!(results.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["mem_s2_0", "mem_s2_1"]);
}

#[test]
fn memory_without_the_model_is_unavailable_over_chroma() {
    let chroma = Chroma::start();
    let memory = Memory::new(Box::new(ChromaStore::new(&chroma.url())), Err("no model".into()));
    assert!(!memory.connect());
    assert!(!memory.is_available());
    assert_eq!(memory.add_memories(&inputs(), &Origin::Cli, &project(), now()).added, 0);
    assert!(memory.query_memories("race condition", None, None).is_empty());
    assert!(!memory.status().available);
    // Nothing reached ChromaDB: not even the collection was created.
    let response = reqwest::blocking::get(format!("{}/paige_memories", chroma.collections())).unwrap();
    assert_eq!(response.status().as_u16(), 404);
}
