//! The element-wise steps of the forward pass: LayerNorm, softmax and GELU.
//!
//! `exp` and `erf` are written here, branch-free, so the compiler vectorises the loops
//! that call them (the standard library's `exp` is a call per element, and it has no
//! `erf`). Their error, ~1e-7, is far below f32 BERT's own rounding.

/// `exp(x)` to ~2 ulp: `2ⁿ · eʳ` with `n = round(x / ln 2)` and a degree-6 polynomial for
/// `eʳ`, `|r| ≤ ln 2 / 2`. Inputs are clamped to where `2ⁿ` is a normal f32.
#[inline(always)]
pub(crate) fn exp(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    // Adding and subtracting 1.5 · 2²³ rounds to the nearest integer with plain SSE2.
    const ROUNDER: f32 = 12_582_912.0;
    let x = x.clamp(-87.0, 88.0);
    let n = (x * LOG2E + ROUNDER) - ROUNDER;
    let r = x - n * LN2_HI - n * LN2_LO;
    let p = 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0))))));
    // SAFETY: |n| ≤ 127 after the clamp: it fits an i32 (and converts without `as`'s
    // saturation checks, which would keep the loop from vectorising).
    let n = unsafe { n.to_int_unchecked::<i32>() };
    p * f32::from_bits(((n + 127) as u32) << 23)
}

/// `erf(x)` to 1.5e-7 absolute (Abramowitz & Stegun 7.1.26).
#[inline(always)]
pub(crate) fn erf(x: f32) -> f32 {
    const P: f32 = 0.327_591_1;
    const A: [f32; 5] = [0.254_829_6, -0.284_496_74, 1.421_413_7, -1.453_152, 1.061_405_4];
    let ax = x.abs();
    let t = 1.0 / (1.0 + P * ax);
    let poly = t * (A[0] + t * (A[1] + t * (A[2] + t * (A[3] + t * A[4]))));
    let y = 1.0 - poly * exp(-ax * ax);
    y.copysign(x)
}

/// The sum of `values`, in 16 lanes so that it vectorises.
#[inline(always)]
pub(crate) fn sum(values: &[f32]) -> f32 {
    let mut lanes = [0f32; 16];
    let mut chunks = values.chunks_exact(16);
    for chunk in &mut chunks {
        for (lane, v) in lanes.iter_mut().zip(chunk) {
            *lane += v;
        }
    }
    lanes.iter().sum::<f32>() + chunks.remainder().iter().sum::<f32>()
}

/// GELU, the exact (erf) form BERT uses: `x · Φ(x) = x/2 · (1 + erf(x/√2))`.
#[inline(always)]
pub(crate) fn gelu_in_place(values: &mut [f32]) {
    for v in values {
        let x = *v;
        *v = 0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2));
    }
}

/// Softmax of one row, in place.
#[inline(always)]
pub(crate) fn softmax_in_place(row: &mut [f32]) {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    for v in row.iter_mut() {
        *v = exp(*v - max);
    }
    let inv = 1.0 / sum(row);
    for v in row.iter_mut() {
        *v *= inv;
    }
}

/// LayerNorm of each row of `width` values: `(x − mean) / √(var + eps) · gamma + beta`.
#[inline(always)]
pub(crate) fn layer_norm_in_place(values: &mut [f32], width: usize, gamma: &[f32], beta: &[f32], eps: f32) {
    let (gamma, beta) = (&gamma[..width], &beta[..width]);
    for row in values.chunks_exact_mut(width) {
        let mean = sum(row) / width as f32;
        let mut lanes = [0f32; 16];
        let mut chunks = row.chunks_exact(16);
        for chunk in &mut chunks {
            for (lane, x) in lanes.iter_mut().zip(chunk) {
                *lane += (x - mean) * (x - mean);
            }
        }
        let rest: f32 = chunks.remainder().iter().map(|x| (x - mean) * (x - mean)).sum();
        let var = (lanes.iter().sum::<f32>() + rest) / width as f32;
        let inv = 1.0 / (var + eps).sqrt();
        for ((x, g), b) in row.iter_mut().zip(gamma).zip(beta) {
            *x = (*x - mean) * inv * g + b;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_matches_the_standard_library_to_a_few_ulp() {
        for i in -8700..=8800 {
            let x = i as f32 * 0.01;
            let (got, want) = (exp(x), x.exp());
            assert!(((got - want) / want).abs() < 4e-7, "exp({x}) = {got}, want {want}");
        }
    }

    #[test]
    fn erf_matches_known_values() {
        // erf at 0, ±0.5, 1, 2, 3 (Abramowitz & Stegun, table 7.1).
        for (x, want) in [
            (0.0f32, 0.0f32),
            (0.5, 0.520_499_9),
            (-0.5, -0.520_499_9),
            (1.0, 0.842_700_8),
            (2.0, 0.995_322_3),
            (3.0, 0.999_977_9),
        ] {
            assert!((erf(x) - want).abs() < 3e-7, "erf({x}) = {}, want {want}", erf(x));
        }
    }
}
