//! What the bench binaries share: percentiles over milliseconds.

/// The `p` quantile (0–1) of `samples`, which it sorts.
pub fn percentile(samples: &mut [f64], p: f64) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[((samples.len() - 1) as f64 * p).round() as usize]
}
