#!/usr/bin/env python3
"""What a step per (row, token) would save the transform codec, measured in KL: each coded token's
step scaled by 2^(e/4), e = 0..15 from how much attention the token gets, against one step per row
(today's format), at equal KL of the continuation's next-token distributions
(docs/RATE_DISTORTION.md "A step per token").

DEV-ONLY: NumPy and llama.cpp's `gguf` reader (transform_headroom.py's set-up, the same files):

    /tmp/hv/bin/python scripts/dev/token_steps_estimate.py smollm2.kvcal kv.safetensors \\
        "$(build/kvstream data which models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf)" [--contexts 3]

Per dumped window: the first 768 tokens are the context, the next 64 the continuation. A float64
forward pass of the GGUF's weights gives the context's keys and values and the attention; the codec
is emulated in float64 (RoPE undone, y = basis (x - mean), q = rint(y / step), x' = mean + synthesis^T q
step, RoPE redone; the 4 sink tokens exact) and its bits are the empirical entropy of q per (part,
class), the class shifted by -e as a token's step grows (a class is a quarter octave of sigma/step),
plus 4 bits of e per (row, token). The continuation then runs on the decoded context.

A token's importance in row r (layer, K or V) is, over query positions t and the query heads of the
row: V: sum a_ts^2; K: sum a_ts^2 |v_s - o_t|^2 |q_t|^2 / D (what an error moves the head's output
by, as eval/key_sensitivity.h, isotropic in the key's direction). e = clamp(round(slope log2(p90 /
p_s)), 0, max) with p90 the row's 90th percentile: the 10 % most important tokens keep the row's
step; with --slope 2 (default) the rest get distortions proportional to 1 / importance, with 1 to
its square root (less to lose where the importance mispredicts); --max-exponent (default 15) caps e.
The queries t: "future" the continuation's own (an oracle: no encoder has them), "last 64" / "last
256" the context's last queries (an encoder that ran the prefill has them), "all" every context
query, each key's sum divided by the queries that see it.
"""
import argparse

import numpy as np

from transform_headroom import Model, read_calibration, read_kv_dump, rotate

CONTEXT, CONTINUATION, SINKS = 768, 64, 4
DISTORTIONS = [3e-3, 1e-3, 3e-4, 1e-4, 3e-5]


def continuation_log_probs(model, rope, keys, values, tokens):
    """log-softmax of the next-token logits at every continuation position, on the given context K
    (RoPE'd) and V per layer."""
    for _ in model.layers(tokens, rope, past=list(zip(keys, values))):
        pass
    logits = model.norm(model.hidden, "output_norm.weight") @ model.weight("token_embd.weight").T  # tied embeddings
    logits -= logits.max(1, keepdims=True)
    return logits - np.log(np.exp(logits).sum(1, keepdims=True))


def importance(q, v, attention, outputs, heads, queries):
    """(K, V) importance of the coded context tokens for one layer, from the query positions given."""
    query_heads, head_dim = q.shape[1], q.shape[2]
    coded = np.arange(SINKS, CONTEXT)
    keys, values = np.zeros(len(coded)), np.zeros(len(coded))
    seen = np.maximum((queries[:, None] >= coded[None, :]).sum(0), 1)  # queries that see each key
    for qh in range(query_heads):
        kh = qh * heads // query_heads
        a2 = attention[qh][queries][:, coded] ** 2
        values += a2.sum(0)
        spread = ((v[coded, kh][None] - outputs[qh][queries][:, None]) ** 2).sum(-1)
        keys += (a2 * spread * (q[queries, qh] ** 2).sum(-1)[:, None] / head_dim).sum(0)
    return keys / seen + 1e-30, values / seen + 1e-30


def entropy_bits(q):
    _, counts = np.unique(q, return_counts=True)
    p = counts / counts.sum()
    return -(counts * np.log2(p)).sum()


def emulate(cal, keys, values, d, exponents):
    """Decoded K and V per layer and the bits per coded token, one step per row or per (row, token)."""
    L, heads, head_dim = cal["layers"], cal["heads"], cal["head_dim"]
    frequencies = cal["theta"] ** (-np.arange(head_dim // 2) * 2.0 / head_dim)
    angles = np.arange(CONTEXT)[:, None, None] * frequencies
    decoded = {0: [], 1: []}
    symbols = {}
    side_bits = 0
    for part in (0, 1):
        for layer in range(L):
            row = cal["rows"][part * L + layer]
            x = keys[layer] if part == 0 else values[layer]
            if part == 0:
                x = rotate(x, -angles, cal["rope"])
            x = x.reshape(CONTEXT, -1)
            step = np.sqrt(12 * d * row["weight"] * row["variance"].mean())
            kept = int((row["variance"] > step * step / 12).sum())
            kept = min(x.shape[1], (kept + 7) // 8 * 8) if kept else 0
            e = np.zeros(CONTEXT - SINKS, int) if exponents is None else exponents[part][layer]
            if exponents is not None:
                side_bits += 4 * len(e)
            steps = step * 2.0 ** (e / 4)
            y = (x[SINKS:] - row["mean"]) @ row["basis"].T
            q = np.rint(y[:, :kept] / steps[:, None])
            classes = np.clip(np.round(8 + 4 * np.log2(np.sqrt(row["variance"][:kept]) / step)), 0, 63).astype(int)
            token_classes = np.clip(classes[None, :] - e[:, None], 0, 63)
            for c in np.unique(token_classes):
                symbols.setdefault((part, c), []).append(q[token_classes == c])
            out = x.copy()
            out[SINKS:] = row["mean"] + (q * steps[:, None]) @ row["synthesis"][:kept]
            out = out.reshape(CONTEXT, heads, head_dim)
            decoded[part].append(rotate(out, angles, cal["rope"]) if part == 0 else out)
    bits = sum(entropy_bits(np.concatenate(s)) for s in symbols.values()) + side_bits
    return decoded[0], decoded[1], bits / (CONTEXT - SINKS)


def bits_at(curve, kl):
    """log-log interpolation of (kl, bits) points at kl, or None outside them."""
    ks, bs = np.log([k for k, _ in curve]), np.log([b for _, b in curve])
    order = np.argsort(ks)
    if not ks.min() <= np.log(kl) <= ks.max():
        return None
    return float(np.exp(np.interp(np.log(kl), ks[order], bs[order])))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("calibration")
    parser.add_argument("kv_dump")
    parser.add_argument("gguf")
    parser.add_argument("--contexts", type=int, default=3)
    parser.add_argument("--slope", type=float, default=2.0, help="e per octave of importance below the 90th percentile")
    parser.add_argument("--max-exponent", type=int, default=15,
                        help="the largest e (steps up to 2^(e/4) times the row's)")
    args = parser.parse_args()

    cal = read_calibration(args.calibration)
    _, tokens = read_kv_dump(args.kv_dump)
    model = Model(args.gguf)
    query_sets = {"future": np.arange(CONTEXT, CONTEXT + CONTINUATION),
                  "last 64": np.arange(CONTEXT - 64, CONTEXT),
                  "last 256": np.arange(CONTEXT - 256, CONTEXT),
                  "all": np.arange(SINKS + 1, CONTEXT)}
    savings = {name: [] for name in query_sets}
    for context in range(args.contexts):
        window = tokens[context][:CONTEXT + CONTINUATION]
        keys, values, exponents = [], [], {name: ([], []) for name in query_sets}
        for q, k, v, attention, outputs, _ in model.layers(window, cal["rope"]):
            keys.append(k[:CONTEXT])
            values.append(v[:CONTEXT])
            for name, queries in query_sets.items():
                for part, p in enumerate(importance(q, v, attention, outputs, cal["heads"], queries)):
                    e = np.round(args.slope * np.log2(np.quantile(p, 0.9) / p))
                    exponents[name][part].append(np.clip(e, 0, args.max_exponent).astype(int))
        reference = continuation_log_probs(model, cal["rope"], keys, values, window[CONTEXT:])

        def curve(e):
            points = []
            for d in DISTORTIONS:
                k, v, bits = emulate(cal, keys, values, d, e)
                lp = continuation_log_probs(model, cal["rope"], k, v, window[CONTEXT:])
                points.append(((np.exp(reference) * (reference - lp)).sum(1).mean(), bits))
            return points
        rows = curve(None)
        print(f"context {context}: one step per row " + ", ".join(f"KL {k:.2g} at {b:.0f} bits/token" for k, b in rows))
        for name in query_sets:
            tokens_curve = curve(exponents[name])
            line = []
            for kl in (1e-4, 3e-4, 1e-3):
                base, steps = bits_at(rows, kl), bits_at(tokens_curve, kl)
                if base and steps:
                    savings[name].append(steps / base - 1)
                    line.append(f"KL {kl:g}: {100 * (steps / base - 1):+.1f} %")
            print(f"  steps per token from {name:8s}: " + (" | ".join(line) or "no common KL"), flush=True)
    for name, s in savings.items():
        if s:
            print(f"{name:8s}: mean {100 * np.mean(s):+.1f} % bits at equal KL "
                  f"(min {100 * min(s):+.1f}, max {100 * max(s):+.1f})")


if __name__ == "__main__":
    main()
