//! The BERT encoder of all-MiniLM-L6-v2, forward pass only: embeddings, then per layer
//! self-attention and a GELU feed-forward block, each followed by a residual LayerNorm
//! (post-norm, as `transformers`' `BertModel`). Weights come from `model.safetensors`,
//! sizes from `config.json`.
//!
//! A batch runs as one matrix of all its texts' tokens, one row per token, with no padding
//! rows: the linear layers treat rows independently, and attention runs per text over that
//! text's own tokens. That is what padding to the longest text and masking the padding
//! computes (a masked key gets weight exactly 0 after the softmax), without the padding's
//! work.

use std::path::Path;

use safetensors::{Dtype, SafeTensors};
use serde::Deserialize;

use super::kernel::Linear;
use super::math::{gelu_in_place, layer_norm_in_place, softmax_in_place};

/// The fields of `config.json` the forward pass needs.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Config {
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub layer_norm_eps: f32,
    pub vocab_size: usize,
    pub max_position_embeddings: usize,
    pub type_vocab_size: usize,
    pub hidden_act: String,
    #[serde(default)]
    pub position_embedding_type: Option<String>,
}

impl Config {
    /// Reads and checks `config.json`: a BERT with GELU and absolute positions.
    pub fn load(path: &Path) -> Result<Config, String> {
        let text = read_file(path)?;
        let config: Config =
            serde_json::from_slice(&text).map_err(|err| format!("{} is not a BERT config: {err}", path.display()))?;
        let bad = |what: String| Err(format!("{}: {what}", path.display()));
        if config.hidden_act != "gelu" {
            return bad(format!("hidden_act {:?}, want \"gelu\"", config.hidden_act));
        }
        if let Some(kind) = config.position_embedding_type.as_deref()
            && kind != "absolute"
        {
            return bad(format!("position_embedding_type {kind:?}, want \"absolute\""));
        }
        if config.num_attention_heads == 0 || !config.hidden_size.is_multiple_of(config.num_attention_heads) {
            return bad(format!(
                "hidden_size {} does not split into {} attention heads",
                config.hidden_size, config.num_attention_heads
            ));
        }
        if config.type_vocab_size == 0 {
            return bad("type_vocab_size 0".into());
        }
        Ok(config)
    }
}

/// Reads a whole file, naming it in the error.
pub(crate) fn read_file(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|err| match err.kind() {
        std::io::ErrorKind::NotFound => format!("{} is missing", path.display()),
        _ => format!("cannot read {}: {err}", path.display()),
    })
}

struct Layer {
    /// Query, key and value in one product: `[3 × hidden][hidden]`.
    qkv: Linear,
    attention_out: Linear,
    attention_norm: (Vec<f32>, Vec<f32>),
    intermediate: Linear,
    output: Linear,
    output_norm: (Vec<f32>, Vec<f32>),
}

/// The encoder's weights.
pub(crate) struct Bert {
    pub config: Config,
    word: Vec<f32>,
    position: Vec<f32>,
    token_type: Vec<f32>,
    embedding_norm: (Vec<f32>, Vec<f32>),
    layers: Vec<Layer>,
}

/// The buffers of one forward pass, kept between calls so a call allocates nothing once
/// they have grown to its size.
#[derive(Default)]
pub(crate) struct Workspace {
    /// The hidden states, `[tokens][hidden]`: the encoder's output after [`Bert::forward`].
    pub hidden: Vec<f32>,
    qkv: Vec<f32>,
    context: Vec<f32>,
    projected: Vec<f32>,
    intermediate: Vec<f32>,
    scores: Vec<f32>,
}

/// Grows `buffer` to `len` values (never shrinks it, never clears what it keeps).
fn ensure(buffer: &mut Vec<f32>, len: usize) {
    if buffer.len() < len {
        buffer.resize(len, 0.0);
    }
}

impl Bert {
    /// Loads the weights in `path` for `config`, checking every tensor's type and shape.
    pub fn load(path: &Path, config: Config) -> Result<Bert, String> {
        let bytes = read_file(path)?;
        let tensors = SafeTensors::deserialize(&bytes)
            .map_err(|err| format!("{} is not a valid safetensors file: {err}", path.display()))?;
        let get = |name: &str, shape: &[usize]| -> Result<Vec<f32>, String> {
            let view = tensors.tensor(name).map_err(|_| format!("{} has no tensor {name}", path.display()))?;
            if view.dtype() != Dtype::F32 || view.shape() != shape {
                return Err(format!(
                    "{}: {name} is {:?} {:?}, config.json wants F32 {shape:?}",
                    path.display(),
                    view.dtype(),
                    view.shape()
                ));
            }
            Ok(view.data().chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
        };
        let (h, i) = (config.hidden_size, config.intermediate_size);
        let norm = |prefix: &str| -> Result<(Vec<f32>, Vec<f32>), String> {
            Ok((get(&format!("{prefix}.weight"), &[h])?, get(&format!("{prefix}.bias"), &[h])?))
        };
        let linear = |prefix: &str, n: usize, k: usize| -> Result<Linear, String> {
            let weight = get(&format!("{prefix}.weight"), &[n, k])?;
            let bias = get(&format!("{prefix}.bias"), &[n])?;
            Linear::new(&weight, bias, n, k).map_err(|err| format!("{prefix}: {err}"))
        };
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for l in 0..config.num_hidden_layers {
            let p = format!("encoder.layer.{l}");
            let mut qkv_weight = Vec::with_capacity(3 * h * h);
            let mut qkv_bias = Vec::with_capacity(3 * h);
            for part in ["query", "key", "value"] {
                qkv_weight.extend(get(&format!("{p}.attention.self.{part}.weight"), &[h, h])?);
                qkv_bias.extend(get(&format!("{p}.attention.self.{part}.bias"), &[h])?);
            }
            layers.push(Layer {
                qkv: Linear::new(&qkv_weight, qkv_bias, 3 * h, h)
                    .map_err(|err| format!("{p}.attention.self: {err}"))?,
                attention_out: linear(&format!("{p}.attention.output.dense"), h, h)?,
                attention_norm: norm(&format!("{p}.attention.output.LayerNorm"))?,
                intermediate: linear(&format!("{p}.intermediate.dense"), i, h)?,
                output: linear(&format!("{p}.output.dense"), h, i)?,
                output_norm: norm(&format!("{p}.output.LayerNorm"))?,
            });
        }
        Ok(Bert {
            word: get("embeddings.word_embeddings.weight", &[config.vocab_size, h])?,
            position: get("embeddings.position_embeddings.weight", &[config.max_position_embeddings, h])?,
            token_type: get("embeddings.token_type_embeddings.weight", &[config.type_vocab_size, h])?,
            embedding_norm: norm("embeddings.LayerNorm")?,
            layers,
            config,
        })
    }

    /// Runs the encoder over `texts` (token ids, each text's tokens contiguous in `ids`,
    /// `lengths` tokens each), leaving the last layer's hidden states in `ws.hidden`.
    pub fn forward(&self, ids: &[u32], lengths: &[usize], ws: &mut Workspace) -> Result<(), String> {
        #[cfg(target_arch = "x86_64")]
        if is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512.
            return unsafe { self.forward_avx512(ids, lengths, ws) };
        }
        self.forward_inlined(ids, lengths, ws)
    }

    /// [`Bert::forward`] with the element-wise steps (LayerNorm, GELU, softmax) compiled for
    /// AVX-512: 16 lanes instead of baseline x86-64's 4.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx2,fma")]
    unsafe fn forward_avx512(&self, ids: &[u32], lengths: &[usize], ws: &mut Workspace) -> Result<(), String> {
        self.forward_inlined(ids, lengths, ws)
    }

    #[inline(always)]
    fn forward_inlined(&self, ids: &[u32], lengths: &[usize], ws: &mut Workspace) -> Result<(), String> {
        let c = &self.config;
        let (h, tokens) = (c.hidden_size, ids.len());
        debug_assert_eq!(lengths.iter().sum::<usize>(), tokens);
        let longest = lengths.iter().copied().max().unwrap_or(0);
        if longest > c.max_position_embeddings {
            return Err(format!(
                "a text of {longest} tokens, past the model's {} positions",
                c.max_position_embeddings
            ));
        }
        ensure(&mut ws.hidden, tokens * h);
        ensure(&mut ws.qkv, tokens * 3 * h);
        ensure(&mut ws.context, tokens * h);
        ensure(&mut ws.projected, tokens * h);
        ensure(&mut ws.intermediate, tokens * c.intermediate_size);
        ensure(&mut ws.scores, longest * longest);

        // Embeddings: word + position + token type 0, then LayerNorm.
        let mut row = 0;
        for &len in lengths {
            for position in 0..len {
                let id = ids[row] as usize;
                if id >= c.vocab_size {
                    return Err(format!("token id {id} is past the vocabulary ({})", c.vocab_size));
                }
                let out = &mut ws.hidden[row * h..][..h];
                let word = &self.word[id * h..][..h];
                let pos = &self.position[position * h..][..h];
                let typ = &self.token_type[..h];
                for j in 0..h {
                    out[j] = word[j] + pos[j] + typ[j];
                }
                row += 1;
            }
        }
        let (gamma, beta) = &self.embedding_norm;
        layer_norm_in_place(&mut ws.hidden[..tokens * h], h, gamma, beta, c.layer_norm_eps);

        for layer in &self.layers {
            layer.qkv.forward(&ws.hidden, tokens, &mut ws.qkv);
            self.attention(lengths, ws);
            layer.attention_out.forward(&ws.context, tokens, &mut ws.projected);
            residual_norm(&mut ws.hidden, &ws.projected, tokens * h, h, &layer.attention_norm, c);
            layer.intermediate.forward(&ws.hidden, tokens, &mut ws.intermediate);
            gelu_in_place(&mut ws.intermediate[..tokens * c.intermediate_size]);
            layer.output.forward(&ws.intermediate, tokens, &mut ws.projected);
            residual_norm(&mut ws.hidden, &ws.projected, tokens * h, h, &layer.output_norm, c);
        }
        Ok(())
    }

    /// Multi-head self-attention of each text over its own tokens: `ws.qkv` → `ws.context`.
    #[inline(always)]
    fn attention(&self, lengths: &[usize], ws: &mut Workspace) {
        let h = self.config.hidden_size;
        let heads = self.config.num_attention_heads;
        let d = h / heads;
        let scale = 1.0 / (d as f32).sqrt();
        let stride = 3 * h as isize;
        let mut start = 0;
        for &len in lengths {
            let scores = &mut ws.scores[..len * len];
            for head in 0..heads {
                let q = ws.qkv[start * 3 * h + head * d..].as_ptr();
                let k = ws.qkv[start * 3 * h + h + head * d..].as_ptr();
                let v = ws.qkv[start * 3 * h + 2 * h + head * d..].as_ptr();
                let out = ws.context[start * h + head * d..].as_mut_ptr();
                // SAFETY: q, k and v address `len` rows of `d` values, `stride` apart, inside
                // qkv (len × 3h from `start`); scores holds len × len; out addresses `len`
                // rows of `d` values, `h` apart, inside context.
                unsafe {
                    // scores = q · kᵀ / √d
                    matrixmultiply::sgemm(
                        len,
                        d,
                        len,
                        scale,
                        q,
                        stride,
                        1,
                        k,
                        1,
                        stride,
                        0.0,
                        scores.as_mut_ptr(),
                        len as isize,
                        1,
                    );
                }
                for row in scores.chunks_exact_mut(len) {
                    softmax_in_place(row);
                }
                // SAFETY: as above.
                unsafe {
                    // context = softmax(scores) · v
                    matrixmultiply::sgemm(
                        len,
                        len,
                        d,
                        1.0,
                        scores.as_ptr(),
                        len as isize,
                        1,
                        v,
                        stride,
                        1,
                        0.0,
                        out,
                        h as isize,
                        1,
                    );
                }
            }
            start += len;
        }
    }
}

/// `hidden = LayerNorm(hidden + projected)`.
#[inline(always)]
fn residual_norm(
    hidden: &mut [f32],
    projected: &[f32],
    len: usize,
    h: usize,
    (gamma, beta): &(Vec<f32>, Vec<f32>),
    config: &Config,
) {
    let hidden = &mut hidden[..len];
    for (x, p) in hidden.iter_mut().zip(&projected[..len]) {
        *x += p;
    }
    layer_norm_in_place(hidden, h, gamma, beta, config.layer_norm_eps);
}
