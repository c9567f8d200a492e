//! How long all-MiniLM-L6-v2 takes per call: a short text (~10 tokens), a 128-token text,
//! and a batch of 16 short texts, each over 200 runs after a warm-up; prints p50 and p99.
//!
//! `cargo bench -p paige-memory --bench embed` with the model at
//! `$PAIGE_MODEL_DIR/all-MiniLM-L6-v2`.

use std::path::PathBuf;
use std::time::Instant;

use paige_core::memory::Embedder;
use paige_memory::MiniLm;
use paige_memory::embed::MODEL_NAME;

const RUNS: usize = 200;

fn main() {
    let Some(parent) = std::env::var_os("PAIGE_MODEL_DIR") else {
        eprintln!("PAIGE_MODEL_DIR is not set: the bench needs $PAIGE_MODEL_DIR/{MODEL_NAME}");
        std::process::exit(1);
    };
    let dir = PathBuf::from(parent).join(MODEL_NAME);
    let started = Instant::now();
    let model = MiniLm::load(&dir).unwrap_or_else(|err| {
        eprintln!("{err}");
        std::process::exit(1);
    });
    println!("load: {:.0} ms ({})", ms(started), model.describe());

    let short = "the OAuth callback races the session refresh";
    let long = "Paige remembers why a test failed and how it was fixed, so the next project learns. ".repeat(8);
    let long = fit_to(&model, &long, 128);
    let batch: Vec<String> = (0..16).map(|i| format!("{short} in service number {i}")).collect();
    let batch: Vec<&str> = batch.iter().map(String::as_str).collect();

    let cases: [(String, Vec<&str>); 3] = [
        (format!("1 short text ({} tokens)", model.token_count(short).unwrap()), vec![short]),
        (format!("1 text of {} tokens", model.token_count(&long).unwrap()), vec![long.as_str()]),
        (format!("16 short texts ({} tokens each)", model.token_count(batch[0]).unwrap()), batch),
    ];
    for (name, texts) in cases {
        for _ in 0..10 {
            model.embed(&texts).unwrap();
        }
        let mut times: Vec<f64> = (0..RUNS)
            .map(|_| {
                let started = Instant::now();
                std::hint::black_box(model.embed(std::hint::black_box(&texts)).unwrap());
                ms(started)
            })
            .collect();
        times.sort_by(f64::total_cmp);
        let p50 = times[RUNS / 2];
        let p99 = times[RUNS * 99 / 100 - 1];
        let per_text = p50 / texts.len() as f64;
        println!("{name:<36} p50 {p50:7.2} ms   p99 {p99:7.2} ms   ({per_text:.2} ms per text at p50)");
    }
}

/// The longest prefix of `text`, in words, that is at most `tokens` tokens.
fn fit_to(model: &MiniLm, text: &str, tokens: usize) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut n = words.len();
    while model.token_count(&words[..n].join(" ")).unwrap() > tokens {
        n -= 1;
    }
    words[..n].join(" ")
}

fn ms(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1e3
}
