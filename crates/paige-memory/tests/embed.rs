//! The all-MiniLM-L6-v2 embedder: parity with a NumPy reference of sentence-transformers'
//! computation (tests/reference/), its vectors' shape, truncation at 256 tokens, batching,
//! and the clear errors of `MiniLm::load` on a missing or broken model.
//!
//! The model is found at `$PAIGE_MODEL_DIR/all-MiniLM-L6-v2` (scripts/test.sh sets
//! PAIGE_MODEL_DIR); a test that needs it fails, saying so, when it is not there.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use paige_core::memory::Embedder;
use paige_memory::MiniLm;
use paige_memory::embed::{DIMENSION, MAX_TOKENS, MODEL_NAME};
use serde_json::Value;

const MODEL_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// The installed model's directory; panics (failing the test) when it is not there.
fn model_dir() -> PathBuf {
    let parent = std::env::var_os("PAIGE_MODEL_DIR").unwrap_or_else(|| {
        panic!(
            "PAIGE_MODEL_DIR is not set: these tests need the {MODEL_NAME} model at \
             $PAIGE_MODEL_DIR/{MODEL_NAME} (scripts/test.sh sets it up)"
        )
    });
    let dir = PathBuf::from(parent).join(MODEL_NAME);
    for file in MODEL_FILES {
        assert!(
            dir.join(file).is_file(),
            "{} is missing: these tests need the {MODEL_NAME} model (PAIGE_MODEL_DIR={})",
            dir.join(file).display(),
            dir.parent().unwrap().display()
        );
    }
    dir
}

/// The model, loaded once for every test of this binary.
fn model() -> &'static MiniLm {
    static MODEL: OnceLock<MiniLm> = OnceLock::new();
    MODEL.get_or_init(|| MiniLm::load(&model_dir()).expect("the model loads"))
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum();
    let norm = |v: &[f32]| v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    dot / (norm(a) * norm(b))
}

fn embed_one(text: &str) -> Vec<f32> {
    let mut vectors = model().embed(&[text]).expect("the text embeds");
    assert_eq!(vectors.len(), 1);
    vectors.pop().unwrap()
}

/// The reference texts and vectors of tests/reference/vectors.json.
fn reference() -> Vec<(String, usize, Vec<f32>)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference/vectors.json");
    let document: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    document["texts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            let text = entry["text"].as_str().unwrap().to_owned();
            let tokens = entry["ids"].as_array().unwrap().len();
            let vector = entry["vector"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap() as f32).collect();
            (text, tokens, vector)
        })
        .collect()
}

#[test]
fn vectors_match_the_numpy_reference_for_every_reference_text() {
    let reference = reference();
    assert!(reference.len() >= 6, "vectors.json holds {} texts", reference.len());
    assert!(reference.iter().any(|(text, ..)| text.is_empty()), "the empty text is checked");
    assert!(reference.iter().any(|(_, tokens, _)| *tokens == MAX_TOKENS), "a truncated text is checked");
    for (text, tokens, want) in &reference {
        assert_eq!(model().token_count(text).unwrap(), *tokens, "token count of {text:?}");
        let got = embed_one(text);
        let similarity = cosine(&got, want);
        assert!(similarity >= 0.999, "cosine {similarity} with the reference for {text:?}");
    }
    // All at once, as a batch of texts of different lengths: the same vectors.
    let texts: Vec<&str> = reference.iter().map(|(text, ..)| text.as_str()).collect();
    let batch = model().embed(&texts).unwrap();
    assert_eq!(batch.len(), texts.len());
    for ((text, _, want), got) in reference.iter().zip(&batch) {
        let similarity = cosine(got, want);
        assert!(similarity >= 0.999, "cosine {similarity} in a batch for {text:?}");
    }
}

#[test]
fn every_vector_has_384_dimensions_and_unit_norm() {
    assert_eq!(model().dimension(), DIMENSION);
    assert_eq!(DIMENSION, 384);
    let mut texts: Vec<String> = reference().into_iter().map(|(text, ..)| text).collect();
    texts.push("x".into());
    texts.push("   \n\t ".into());
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    for (text, vector) in texts.iter().zip(model().embed(&texts).unwrap()) {
        assert_eq!(vector.len(), 384, "dimension for {text:?}");
        let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() <= 1e-4, "norm {norm} for {text:?}");
        assert!(vector.iter().all(|x| x.is_finite()), "finite values for {text:?}");
    }
}

#[test]
fn a_race_condition_query_is_closer_to_an_oauth_race_than_to_css_grid() {
    let query = embed_one("race condition in auth flow");
    let oauth = embed_one("OAuth callback race condition");
    let css = embed_one("CSS grid layout");
    let (near, far) = (cosine(&query, &oauth), cosine(&query, &css));
    assert!(near > far + 0.2, "cosine to the OAuth race {near}, to CSS grid {far}");
}

#[test]
fn a_2000_word_text_is_truncated_to_its_first_254_word_pieces() {
    // Common words that are one word piece each, so the first 254 words are the first 254
    // word pieces (the token count below proves it).
    let words = [
        "the", "cat", "sat", "on", "a", "mat", "and", "dog", "ran", "to", "house", "big", "red", "old", "man", "saw",
        "sun", "in", "sky", "we",
    ];
    let text: Vec<&str> = (0..2000).map(|i| words[(i * 7 + i / 20) % words.len()]).collect();
    let long = text.join(" ");
    let prefix = text[..254].join(" ");
    assert_eq!(model().token_count(&prefix).unwrap(), 256, "254 word pieces + [CLS] + [SEP]");
    assert_eq!(model().token_count(&long).unwrap(), MAX_TOKENS);
    let (got, want) = (embed_one(&long), embed_one(&prefix));
    let diff = got.iter().zip(&want).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
    assert!(diff <= 1e-6, "the long text's vector differs from its prefix's by {diff}");
    // And the words past the cut do count when they are inside it.
    let shorter = embed_one(&text[..200].join(" "));
    assert!(cosine(&shorter, &want) < 0.99999, "a shorter prefix gives another vector");
}

#[test]
fn a_batch_gives_each_text_the_vector_it_gets_alone() {
    let texts = [
        "short",
        "a somewhat longer sentence about databases, indexes and query plans",
        "",
        "fn add(a: i32, b: i32) -> i32 { a + b }",
    ];
    let batch = model().embed(&texts).unwrap();
    for (text, got) in texts.iter().zip(&batch) {
        let alone = embed_one(text);
        let diff = got.iter().zip(&alone).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
        assert!(diff <= 1e-5, "{text:?} differs by {diff} in a batch");
    }
    // A batch larger than one pass of the encoder (4,096 tokens) keeps its order.
    let long = "word ".repeat(300);
    let many: Vec<&str> = (0..40).map(|i| if i % 2 == 0 { long.as_str() } else { "short" }).collect();
    let vectors = model().embed(&many).unwrap();
    assert_eq!(vectors.len(), 40);
    assert!(cosine(&vectors[38], &embed_one(&long)) > 0.999999);
    assert!(cosine(&vectors[39], &batch[0]) > 0.999999);
}

#[test]
fn an_empty_list_of_texts_embeds_to_an_empty_list() {
    assert_eq!(model().embed(&[]).unwrap(), Vec::<Vec<f32>>::new());
}

#[test]
fn describe_names_the_model_its_dimension_and_its_directory() {
    let description = model().describe();
    assert!(description.contains("all-MiniLM-L6-v2"), "{description}");
    assert!(description.contains("384"), "{description}");
    assert!(description.contains(&model_dir().display().to_string()), "{description}");
}

/// A temporary model directory with the real model's `files` linked in.
fn model_dir_with(files: &[&str]) -> tempfile::TempDir {
    let source = model_dir();
    let dir = tempfile::tempdir().unwrap();
    for file in files {
        link(&source.join(file), &dir.path().join(file));
    }
    dir
}

fn link(from: &Path, to: &Path) {
    #[cfg(unix)]
    std::os::unix::fs::symlink(from, to).unwrap();
    #[cfg(not(unix))]
    std::fs::copy(from, to).map(drop).unwrap();
}

fn load_error(dir: &Path) -> String {
    match MiniLm::load(dir) {
        Ok(_) => panic!("{} loaded", dir.display()),
        Err(err) => err,
    }
}

#[test]
fn load_fails_clearly_for_a_missing_directory() {
    let parent = tempfile::tempdir().unwrap();
    let dir = parent.path().join("all-MiniLM-L6-v2");
    let err = load_error(&dir);
    assert!(err.contains(&dir.display().to_string()) && err.contains("does not exist"), "{err}");
}

#[test]
fn load_fails_clearly_for_each_missing_file() {
    for missing in MODEL_FILES {
        let present: Vec<&str> = MODEL_FILES.into_iter().filter(|f| *f != missing).collect();
        let dir = model_dir_with(&present);
        let err = load_error(dir.path());
        assert!(err.contains(missing) && err.contains("missing"), "without {missing}: {err}");
    }
}

#[test]
fn load_fails_clearly_for_a_truncated_safetensors_file() {
    let dir = model_dir_with(&["config.json", "tokenizer.json"]);
    let whole = std::fs::read(model_dir().join("model.safetensors")).unwrap();
    for cut in [4, 1 << 20, whole.len() - 1] {
        std::fs::write(dir.path().join("model.safetensors"), &whole[..cut]).unwrap();
        let err = load_error(dir.path());
        assert!(
            err.contains("model.safetensors") && err.contains("not a valid safetensors file"),
            "cut at {cut}: {err}"
        );
    }
}

#[test]
fn load_fails_clearly_for_a_config_with_another_hidden_size() {
    let dir = model_dir_with(&["tokenizer.json", "model.safetensors"]);
    let mut config: Value = serde_json::from_slice(&std::fs::read(model_dir().join("config.json")).unwrap()).unwrap();
    config["hidden_size"] = 768.into();
    std::fs::write(dir.path().join("config.json"), config.to_string()).unwrap();
    let err = load_error(dir.path());
    assert!(err.contains("config.json") && err.contains("hidden_size 768"), "{err}");
}

#[test]
fn load_fails_clearly_for_a_config_that_is_not_json() {
    let dir = model_dir_with(&["tokenizer.json", "model.safetensors"]);
    std::fs::write(dir.path().join("config.json"), "{ not json").unwrap();
    let err = load_error(dir.path());
    assert!(err.contains("config.json") && err.contains("not a BERT config"), "{err}");
}

/// Waits (up to 20 s) for `model`'s release timer to drop its weights.
fn wait_released(model: &paige_memory::LazyModel) {
    let started = std::time::Instant::now();
    while model.loaded() {
        assert!(started.elapsed() < std::time::Duration::from_secs(20), "the idle weights were never released");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

#[test]
fn an_idle_model_releases_its_weights_and_the_next_embed_reloads_them_giving_the_same_vector() {
    let model = paige_memory::LazyModel::new(&model_dir(), std::time::Duration::from_millis(200));
    assert!(!model.loaded(), "nothing is loaded before the first embed");
    let text = "the OAuth callback races the session refresh";
    let first = model.embed(&[text]).expect("embeds");
    assert!(model.loaded());
    wait_released(&model);
    let again = model.embed(&[text]).expect("reloads and embeds");
    assert!(model.loaded());
    assert_eq!(first, again);
    assert_eq!(again[0], embed_one(text), "the same vector as a model that was never released");
    // Released again: the timer runs for each load.
    wait_released(&model);
}

#[test]
fn a_model_used_within_its_idle_period_keeps_its_weights() {
    use std::time::{Duration, Instant};
    let model = paige_memory::LazyModel::new(&model_dir(), Duration::from_secs(3600));
    assert!(!model.release_idle(Instant::now()), "nothing to release before a load");
    model.embed(&["kept"]).expect("embeds");
    assert!(!model.release_idle(Instant::now() + Duration::from_secs(3599)));
    assert!(model.loaded());
    assert!(model.release_idle(Instant::now() + Duration::from_secs(3600)));
    assert!(!model.loaded());
    // Dropping a model whose timer waits an hour stops the timer: this returns.
    model.embed(&["loaded again"]).expect("embeds");
    drop(model);
}

#[test]
fn a_model_that_cannot_load_fails_every_embed_with_the_same_reason() {
    let dir = model_dir_with(&["config.json", "tokenizer.json"]);
    let model = paige_memory::LazyModel::new(dir.path(), std::time::Duration::from_millis(1));
    let first = model.embed(&["x"]).expect_err("no weights").to_string();
    assert!(first.contains("model.safetensors"), "{first}");
    assert_eq!(model.embed(&["x"]).expect_err("still no weights").to_string(), first);
    assert!(!model.loaded());
}
