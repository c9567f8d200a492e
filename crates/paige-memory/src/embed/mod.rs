//! all-MiniLM-L6-v2, the sentence embedder both memory stores use, computed in Rust.
//!
//! It gives what sentence-transformers gives for this model: the HuggingFace tokenizer
//! from `tokenizer.json`, the 6-layer BERT encoder ([`bert`]), mean pooling over the
//! tokens, then L2 normalisation — 384-d unit vectors, so a dot product is the cosine.
//! The model files stay on disk (`model.safetensors`, `tokenizer.json`, `config.json`);
//! the forward pass and pooling are written here, with the products of the linear layers
//! on weights packed once at load ([`kernel`]): a short text takes ~3 ms on one core.

mod bert;
mod kernel;
mod math;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use paige_core::memory::{Embedder, MemoryError};
use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

use bert::{Bert, Config, Workspace};

/// The model's directory name, as installed under the models directory.
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2";
/// The vectors' dimension.
pub const DIMENSION: usize = 384;
/// The most tokens of a text the model reads, `[CLS]` and `[SEP]` included:
/// sentence-transformers' `max_seq_length` for this model. Longer texts are truncated.
pub const MAX_TOKENS: usize = 256;
/// The most tokens run through the encoder at once: bounds the buffers of a large batch.
const TOKENS_PER_PASS: usize = 4096;

/// The all-MiniLM-L6-v2 sentence embedder.
///
/// A text longer than [`MAX_TOKENS`] word pieces (with `[CLS]` and `[SEP]`) is truncated to
/// its first 254 word pieces, as sentence-transformers does: the rest does not count.
/// Several texts in one [`Embedder::embed`] call run as one batch, each attending only to
/// its own tokens (what padding plus an attention mask computes).
pub struct MiniLm {
    bert: Bert,
    tokenizer: Tokenizer,
    dir: PathBuf,
    /// Buffers reused across calls; a call that finds them busy uses its own.
    workspace: Mutex<Workspace>,
}

impl std::fmt::Debug for MiniLm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MiniLm").field("dir", &self.dir).finish_non_exhaustive()
    }
}

impl MiniLm {
    /// Loads the model from `dir`: `config.json`, `tokenizer.json` and `model.safetensors`.
    /// The error names the file that is missing or not what it should be.
    pub fn load(dir: &Path) -> Result<MiniLm, String> {
        if !dir.is_dir() {
            return Err(format!("the {MODEL_NAME} model directory {} does not exist", dir.display()));
        }
        let config_path = dir.join("config.json");
        let config = Config::load(&config_path)?;
        if config.hidden_size != DIMENSION {
            return Err(format!(
                "{}: hidden_size {}, but {MODEL_NAME} is {DIMENSION}-d",
                config_path.display(),
                config.hidden_size
            ));
        }
        let tokenizer = load_tokenizer(&dir.join("tokenizer.json"))?;
        let bert = Bert::load(&dir.join("model.safetensors"), config)?;
        Ok(MiniLm { bert, tokenizer, dir: dir.to_owned(), workspace: Mutex::new(Workspace::default()) })
    }

    /// How many tokens of `text` the model reads: its word pieces plus `[CLS]` and `[SEP]`,
    /// at most [`MAX_TOKENS`].
    pub fn token_count(&self, text: &str) -> Result<usize, MemoryError> {
        Ok(self.tokenize(text)?.len())
    }

    fn tokenize(&self, text: &str) -> Result<Vec<u32>, MemoryError> {
        let encoding = self
            .tokenizer
            .encode_fast(text, true)
            .map_err(|err| MemoryError::Embedding(format!("cannot tokenize a text: {err}")))?;
        Ok(encoding.get_ids().to_vec())
    }

    /// Embeds texts whose tokens are `ids` (`lengths` each, in order) into `out`.
    fn embed_pass(
        &self,
        ids: &[u32],
        lengths: &[usize],
        ws: &mut Workspace,
        out: &mut Vec<Vec<f32>>,
    ) -> Result<(), MemoryError> {
        self.bert.forward(ids, lengths, ws).map_err(MemoryError::Embedding)?;
        let h = DIMENSION;
        let mut start = 0;
        for &len in lengths {
            // Mean over the text's tokens (all of them are attended: the mask is all ones).
            let mut pooled = vec![0f32; h];
            for row in ws.hidden[start * h..(start + len) * h].chunks_exact(h) {
                for (p, x) in pooled.iter_mut().zip(row) {
                    *p += x;
                }
            }
            let inv_len = 1.0 / len as f32;
            pooled.iter_mut().for_each(|p| *p *= inv_len);
            // L2 normalisation, with torch's floor on the norm.
            let norm = pooled.iter().map(|p| p * p).sum::<f32>().sqrt().max(1e-12);
            pooled.iter_mut().for_each(|p| *p /= norm);
            out.push(pooled);
            start += len;
        }
        Ok(())
    }
}

/// Loads `tokenizer.json` and sets it as sentence-transformers runs it: truncation to
/// [`MAX_TOKENS`] (the file's own says 128), no padding (batches are not padded here).
fn load_tokenizer(path: &Path) -> Result<Tokenizer, String> {
    if !path.is_file() {
        return Err(format!("{} is missing", path.display()));
    }
    let mut tokenizer =
        Tokenizer::from_file(path).map_err(|err| format!("{} is not a valid tokenizer: {err}", path.display()))?;
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: MAX_TOKENS,
            strategy: TruncationStrategy::LongestFirst,
            stride: 0,
            direction: TruncationDirection::Right,
        }))
        .map_err(|err| format!("{}: cannot set truncation: {err}", path.display()))?;
    tokenizer.with_padding(None);
    Ok(tokenizer)
}

impl Embedder for MiniLm {
    fn describe(&self) -> String {
        format!("{MODEL_NAME} ({DIMENSION}-d) from {}", self.dir.display())
    }

    fn dimension(&self) -> usize {
        DIMENSION
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, MemoryError> {
        let mut out = Vec::with_capacity(texts.len());
        if texts.is_empty() {
            return Ok(out);
        }
        let mut own = None;
        let mut guard = self.workspace.try_lock().ok();
        let ws = match guard.as_deref_mut() {
            Some(ws) => ws,
            None => own.insert(Workspace::default()),
        };
        let (mut ids, mut lengths) = (Vec::new(), Vec::new());
        for text in texts {
            let tokens = self.tokenize(text)?;
            if !ids.is_empty() && ids.len() + tokens.len() > TOKENS_PER_PASS {
                self.embed_pass(&ids, &lengths, ws, &mut out)?;
                ids.clear();
                lengths.clear();
            }
            lengths.push(tokens.len());
            ids.extend(tokens);
        }
        self.embed_pass(&ids, &lengths, ws, &mut out)?;
        Ok(out)
    }
}
