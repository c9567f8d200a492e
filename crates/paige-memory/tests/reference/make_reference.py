"""Reference vectors for paige-memory's all-MiniLM-L6-v2 (tests/embed.rs checks against them).

A NumPy implementation of what sentence-transformers computes for all-MiniLM-L6-v2,
independent of the Rust one: the HuggingFace `tokenizers` package on tokenizer.json (the
tokenizer sentence-transformers runs), truncation to 256 tokens (its max_seq_length), the
BERT encoder in float64 on the float32 weights from model.safetensors, mean pooling over
the attention mask, L2 normalisation. It needs neither torch nor sentence-transformers.

    python3 -m venv /var/tmp/paige-test-tools/refvenv
    /var/tmp/paige-test-tools/refvenv/bin/pip install tokenizers safetensors numpy
    /var/tmp/paige-test-tools/refvenv/bin/python make_reference.py \
        /var/tmp/paige-test-tools/models/all-MiniLM-L6-v2

writes vectors.json beside this script.
"""

import json
import math
import pathlib
import sys

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

MAX_TOKENS = 256

LONG = " ".join(
    [
        "Paige watches a developer work and remembers what they learned along the way.",
        "When a test fails because of a race between the OAuth callback and the session",
        "refresh, the fix and the reason for it are stored as a memory, tagged and ranked,",
        "so that the next time the same symptom appears in another project the coach can",
        "recall it, explain the cause, and point at the commit that solved it before.",
    ]
    * 6
)

TEXTS = [
    "race condition in auth flow",
    "The user prefers tabs over spaces and wants the tests written before any refactor.",
    LONG,
    "Café naïve — déjà vu! ¿Qué tal? 東京で寿司を食べた 🍣🚀 Ünïcödé… (ok?) [x] {y} <z> #1 @me",
    'fn main() {\n    let xs = vec![1, 2, 3];\n    println!("{:?}", xs.iter().map(|v| v * 2).collect::<Vec<_>>());\n}',
    "",
]


def layer_norm(x, gamma, beta, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def gelu(x):
    erf = np.vectorize(math.erf)
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def embed(ids, w, config):
    """One text's vector: the BERT encoder, then mean pooling and L2 normalisation."""
    h = config["hidden_size"]
    heads = config["num_attention_heads"]
    d = h // heads
    eps = config["layer_norm_eps"]
    n = len(ids)
    x = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.position_embeddings.weight"][:n]
        + w["embeddings.token_type_embeddings.weight"][0]
    )
    x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
    for layer in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{layer}."

        def dense(v, name):
            return v @ w[p + name + ".weight"].T + w[p + name + ".bias"]

        q = dense(x, "attention.self.query").reshape(n, heads, d).transpose(1, 0, 2)
        k = dense(x, "attention.self.key").reshape(n, heads, d).transpose(1, 0, 2)
        v = dense(x, "attention.self.value").reshape(n, heads, d).transpose(1, 0, 2)
        scores = softmax(q @ k.transpose(0, 2, 1) / math.sqrt(d))
        context = (scores @ v).transpose(1, 0, 2).reshape(n, h)
        x = layer_norm(
            x + dense(context, "attention.output.dense"),
            w[p + "attention.output.LayerNorm.weight"],
            w[p + "attention.output.LayerNorm.bias"],
            eps,
        )
        inner = gelu(dense(x, "intermediate.dense"))
        x = layer_norm(
            x + dense(inner, "output.dense"),
            w[p + "output.LayerNorm.weight"],
            w[p + "output.LayerNorm.bias"],
            eps,
        )
    # Every token of a lone text is attended: the mask is all ones, the mean is plain.
    pooled = x.mean(axis=0)
    return pooled / max(np.linalg.norm(pooled), 1e-12)


def main():
    model_dir = pathlib.Path(sys.argv[1])
    config = json.loads((model_dir / "config.json").read_text())
    weights = {
        name: t.astype(np.float64)
        for name, t in load_file(str(model_dir / "model.safetensors")).items()
        if t.dtype == np.float32
    }
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    # sentence-transformers: truncation to max_seq_length, padding only within a batch.
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.no_padding()
    out = []
    for text in TEXTS:
        ids = tokenizer.encode(text).ids
        vector = embed(np.array(ids), weights, config)
        out.append({"text": text, "ids": ids, "vector": [float(f"{v:.8g}") for v in vector]})
        print(f"{len(ids):4} tokens  {text[:50]!r}")
    path = pathlib.Path(__file__).with_name("vectors.json")
    document = {
        "model": "all-MiniLM-L6-v2",
        "made_by": "make_reference.py (NumPy float64 BERT, HuggingFace tokenizers)",
        "max_tokens": MAX_TOKENS,
        "texts": out,
    }
    path.write_text(json.dumps(document, ensure_ascii=False, indent=1) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
