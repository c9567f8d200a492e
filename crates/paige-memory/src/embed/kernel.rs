//! The linear layers' matrix product, `out = x · Wᵀ + b`, with `W` packed once at load.
//!
//! Why not a general sgemm crate here: a memory's text is ~10 tokens, so these products are
//! 10 × 384 by 384 × 1536 — the weights are read once and each weight is used only ~10
//! times. General sgemm (the `gemm` and `matrixmultiply` crates, measured on this machine)
//! repacks the whole weight matrix on every call and ran at ~35 GFLOPS on these shapes;
//! packing the weights once, at load, into panels of [`NR`] output columns and keeping
//! all of a block's rows in registers streams each weight exactly once and ran 2.5–3×
//! faster. The inputs are packed too, per chunk of rows, so a block reads one stream.
//! The attention products (activations by activations, nothing to pre-pack) use
//! `matrixmultiply`.

/// Output columns per packed panel: two AVX-512 vectors, four AVX2 vectors.
pub(crate) const NR: usize = 32;
/// Rows per cache chunk: the chunk's inputs stay in L2 while every panel streams past.
const ROW_CHUNK: usize = 112;

#[cfg(target_arch = "x86_64")]
use x86::{block_avx2, block_avx512};

/// Calls `$block::<rows>` for a run-time `rows` ≤ `$mr`, so the block's accumulators are
/// a fixed number of registers.
macro_rules! dispatch {
    ($rows:expr, $mr:literal, $block:ident, $args:tt) => {
        dispatch!(@arms $rows, $mr, $block, $args, 1 2 3 4 5 6 7 8 9 10 11 12 13 14)
    };
    (@arms $rows:expr, $mr:literal, $block:ident, $args:tt, $($r:literal)*) => {
        match $rows {
            $($r if $r <= $mr => $block::<$r> $args,)*
            rows => unreachable!("a block of {rows} rows"),
        }
    };
}

/// A dense layer with its weight packed into panels `[n / NR][k][NR]`.
pub(crate) struct Linear {
    /// Input features.
    pub k: usize,
    /// Output features (a multiple of [`NR`]).
    pub n: usize,
    packed: Vec<f32>,
    bias: Vec<f32>,
}

impl Linear {
    /// Packs `weight` (`[n][k]` row-major, PyTorch's `nn.Linear` layout) and its `bias`.
    pub fn new(weight: &[f32], bias: Vec<f32>, n: usize, k: usize) -> Result<Linear, String> {
        if !n.is_multiple_of(NR) || weight.len() != n * k || bias.len() != n {
            return Err(format!(
                "a {n}×{k} layer with {} weights and {} biases (want a multiple of {NR} outputs)",
                weight.len(),
                bias.len()
            ));
        }
        let mut packed = vec![0f32; n * k];
        for panel in 0..n / NR {
            for kk in 0..k {
                let dst = &mut packed[(panel * k + kk) * NR..][..NR];
                for (j, d) in dst.iter_mut().enumerate() {
                    *d = weight[(panel * NR + j) * k + kk];
                }
            }
        }
        Ok(Linear { k, n, packed, bias })
    }

    /// `out[m][n] = x[m][k] · Wᵀ + b`.
    pub fn forward(&self, x: &[f32], m: usize, out: &mut [f32]) {
        assert!(x.len() >= m * self.k && out.len() >= m * self.n);
        #[cfg(target_arch = "x86_64")]
        {
            if is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("fma") {
                // SAFETY: the CPU has the features; the sizes were checked above.
                return unsafe { forward_avx512(self, x, m, out) };
            }
            if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
                // SAFETY: as above.
                return unsafe { forward_avx2(self, x, m, out) };
            }
        }
        // SAFETY: the sizes were checked above.
        unsafe { forward_portable(self, x, m, out) }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn forward_avx512(layer: &Linear, x: &[f32], m: usize, out: &mut [f32]) {
    // 14 rows × 2 vectors = 28 of the 32 zmm registers hold the accumulators.
    let block = |rows, a, k, w, bias, c, ldc| {
        // SAFETY: as `forward_rows` promises; the CPU has AVX-512 (checked by the caller).
        unsafe { dispatch!(rows, 14, block_avx512, (a, k, w, bias, c, ldc)) }
    };
    // SAFETY: the caller checked the sizes.
    unsafe { forward_rows(layer, x, m, out, 14, block) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn forward_avx2(layer: &Linear, x: &[f32], m: usize, out: &mut [f32]) {
    // 3 rows × 4 vectors = 12 of the 16 ymm registers.
    let block = |rows, a, k, w, bias, c, ldc| {
        // SAFETY: as `forward_rows` promises; the CPU has AVX2 and FMA (checked by the caller).
        unsafe { dispatch!(rows, 3, block_avx2, (a, k, w, bias, c, ldc)) }
    };
    // SAFETY: the caller checked the sizes.
    unsafe { forward_rows(layer, x, m, out, 3, block) }
}

/// The portable path: plain loops the compiler vectorises as it can.
unsafe fn forward_portable(layer: &Linear, x: &[f32], m: usize, out: &mut [f32]) {
    let block = |rows, a, k, w, bias, c, ldc| {
        // SAFETY: as `forward_rows` promises.
        unsafe { dispatch!(rows, 4, block_portable, (a, k, w, bias, c, ldc)) }
    };
    // SAFETY: the caller checked the sizes.
    unsafe { forward_rows(layer, x, m, out, 4, block) }
}

/// Walks row chunks, then panels, then blocks of at most `mr` rows, of even sizes (17 rows
/// are blocks of 9 and 8, not 14 and 3: fewer rows per block leave the FMA units idle). A block gets `rows`
/// rows of `x` from `a` (`k` values each), the panel `w` (`k × NR`), its `NR` biases, and
/// `c`, where its output goes (row stride `ldc`). The rows are packed column by column.
///
/// # Safety
/// `x` holds `m × k` and `out` `m × n` values; `block` is safe to call on this CPU for
/// blocks of up to `mr` rows inside them.
#[inline(always)]
unsafe fn forward_rows(
    layer: &Linear,
    x: &[f32],
    m: usize,
    out: &mut [f32],
    mr: usize,
    block: impl Fn(usize, *const f32, usize, *const f32, *const f32, *mut f32, usize),
) {
    let (k, n) = (layer.k, layer.n);
    PACKED_ROWS.with_borrow_mut(|packed| {
        let mut chunk = 0;
        while chunk < m {
            let chunk_end = (chunk + ROW_CHUNK).min(m);
            let blocks = (chunk_end - chunk).div_ceil(mr);
            let per_block = (chunk_end - chunk).div_ceil(blocks);
            // The chunk's rows, block by block, column-major within a block: a block reads
            // one contiguous stream instead of one per row.
            packed.clear();
            let mut starts = [0usize; ROW_CHUNK + 1];
            let mut row = chunk;
            let mut count = 0;
            while row < chunk_end {
                let rows = (chunk_end - row).min(per_block);
                starts[count] = row;
                count += 1;
                for kk in 0..k {
                    packed.extend((row..row + rows).map(|r| x[r * k + kk]));
                }
                row += rows;
            }
            starts[count] = chunk_end;
            for panel in 0..n / NR {
                let weights = layer.packed[panel * k * NR..].as_ptr();
                let bias = layer.bias[panel * NR..].as_ptr();
                for b in 0..count {
                    let (row, rows) = (starts[b], starts[b + 1] - starts[b]);
                    let a = packed[(row - chunk) * k..].as_ptr();
                    let c = out[row * n + panel * NR..].as_mut_ptr();
                    block(rows, a, k, weights, bias, c, n);
                }
            }
            chunk = chunk_end;
        }
    });
}

thread_local! {
    /// The rows of the chunk in progress, packed per block (see [`forward_rows`]).
    static PACKED_ROWS: std::cell::RefCell<Vec<f32>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `MR` rows × [`NR`] columns of the output, accumulated over the whole `k`.
///
/// # Safety
/// `a` holds `MR` rows of `k` values, column by column (`a[kk * MR + r]`), `w` a panel of
/// `k × NR`, `bias` `NR` values, and `c` `MR` rows of `NR` values with stride `ldc`.
#[inline(always)]
unsafe fn block_portable<const MR: usize>(
    a: *const f32,
    k: usize,
    w: *const f32,
    bias: *const f32,
    c: *mut f32,
    ldc: usize,
) {
    unsafe {
        let bias = &*(bias as *const [f32; NR]);
        let mut acc = [*bias; MR];
        for kk in 0..k {
            let b = &*(w.add(kk * NR) as *const [f32; NR]);
            for (r, acc) in acc.iter_mut().enumerate() {
                let av = *a.add(kk * MR + r);
                for j in 0..NR {
                    acc[j] += av * b[j];
                }
            }
        }
        for (r, acc) in acc.iter().enumerate() {
            std::ptr::copy_nonoverlapping(acc.as_ptr(), c.add(r * ldc), NR);
        }
    }
}

/// The same block with explicit AVX-512 and AVX2 fused multiply-adds: the accumulators
/// are registers, not an array the optimiser may or may not keep in them.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::NR;

    /// See [`super::block_portable`]; two 16-lane accumulators per row.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn block_avx512<const MR: usize>(
        a: *const f32,
        k: usize,
        w: *const f32,
        bias: *const f32,
        c: *mut f32,
        ldc: usize,
    ) {
        unsafe {
            let mut lo = [_mm512_loadu_ps(bias); MR];
            let mut hi = [_mm512_loadu_ps(bias.add(16)); MR];
            for kk in 0..k {
                let w_lo = _mm512_loadu_ps(w.add(kk * NR));
                let w_hi = _mm512_loadu_ps(w.add(kk * NR + 16));
                for r in 0..MR {
                    let av = _mm512_set1_ps(*a.add(kk * MR + r));
                    lo[r] = _mm512_fmadd_ps(av, w_lo, lo[r]);
                    hi[r] = _mm512_fmadd_ps(av, w_hi, hi[r]);
                }
            }
            for r in 0..MR {
                _mm512_storeu_ps(c.add(r * ldc), lo[r]);
                _mm512_storeu_ps(c.add(r * ldc + 16), hi[r]);
            }
        }
    }

    /// See [`super::block_portable`]; four 8-lane accumulators per row.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn block_avx2<const MR: usize>(
        a: *const f32,
        k: usize,
        w: *const f32,
        bias: *const f32,
        c: *mut f32,
        ldc: usize,
    ) {
        unsafe {
            let mut acc = [[_mm256_setzero_ps(); 4]; MR];
            for row in acc.iter_mut() {
                for (q, v) in row.iter_mut().enumerate() {
                    *v = _mm256_loadu_ps(bias.add(8 * q));
                }
            }
            for kk in 0..k {
                let wp = w.add(kk * NR);
                let ws = [
                    _mm256_loadu_ps(wp),
                    _mm256_loadu_ps(wp.add(8)),
                    _mm256_loadu_ps(wp.add(16)),
                    _mm256_loadu_ps(wp.add(24)),
                ];
                for (r, row) in acc.iter_mut().enumerate() {
                    let av = _mm256_set1_ps(*a.add(kk * MR + r));
                    for (v, w) in row.iter_mut().zip(ws) {
                        *v = _mm256_fmadd_ps(av, w, *v);
                    }
                }
            }
            for (r, row) in acc.iter().enumerate() {
                for (q, v) in row.iter().enumerate() {
                    _mm256_storeu_ps(c.add(r * ldc + 8 * q), *v);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_product_equals_the_naive_product_for_every_row_count() {
        let (n, k) = (64, 37);
        let w: Vec<f32> = (0..n * k).map(|i| ((i * 31) % 17) as f32 * 0.1 - 0.8).collect();
        let b: Vec<f32> = (0..n).map(|i| i as f32 * 0.01).collect();
        let layer = Linear::new(&w, b.clone(), n, k).unwrap();
        for m in [1, 2, 5, 11, 12, 13, 30, 200] {
            let x: Vec<f32> = (0..m * k).map(|i| ((i * 7) % 13) as f32 * 0.1 - 0.6).collect();
            let mut out = vec![0f32; m * n];
            layer.forward(&x, m, &mut out);
            for r in 0..m {
                for j in 0..n {
                    let want: f32 = b[j] + (0..k).map(|i| x[r * k + i] * w[j * k + i]).sum::<f32>();
                    assert!((out[r * n + j] - want).abs() < 1e-4, "m={m} r={r} j={j}");
                }
            }
        }
    }
}
