//! Diff time for a 5,000-line file with 50 changed lines (target ≤ 2 ms).
//! `cargo bench -p paige-core --bench diff`

use std::time::{Duration, Instant};

use paige_core::files::unified_diff;

fn main() {
    let saved: String = (0..5000).map(|i| format!("    let value_{i} = compute({i}, \"line {i}\");\n")).collect();
    let current: String = saved
        .lines()
        .enumerate()
        .map(|(i, line)| if i % 100 == 7 { format!("{line} // edited\n") } else { format!("{line}\n") })
        .collect();
    let diff = unified_diff("src/big.rs", &saved, &current);
    let changed = diff.lines().filter(|l| l.starts_with('+') && !l.starts_with("+++")).count();
    assert_eq!(changed, 50, "50 changed lines");

    let mut samples: Vec<Duration> = (0..200)
        .map(|_| {
            let started = Instant::now();
            std::hint::black_box(unified_diff(
                "src/big.rs",
                std::hint::black_box(&saved),
                std::hint::black_box(&current),
            ));
            started.elapsed()
        })
        .collect();
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!("unified diff, 5,000 lines with 50 changed ({} KiB), 200 runs", saved.len() / 1024);
    println!(
        "  median {:.3} ms   p90 {:.3} ms   max {:.3} ms   (target ≤ 2 ms)",
        ms(samples[100]),
        ms(samples[180]),
        ms(samples[199])
    );
}
