#!/usr/bin/env python3
"""Where the transform codec's bytes could still shrink at high quality: a high-rate estimate on
held-out KV, per idea, before building any of them (docs/RATE_DISTORTION.md "What limits the 8-bit
end").

DEV-ONLY: NumPy and llama.cpp's `gguf` reader, neither a kvstream dependency. For SmolLM2:

    python3 -m venv /tmp/hv && /tmp/hv/bin/pip install numpy gguf
    build/kvstream calibrate --model smollm2 --out smollm2.kvcal
    build/kvstream kv-export --model smollm2 --text text/wikitext2/wiki.test.raw --contexts 3 \\
        --context-tokens 1024 --window-chars 8000 --stride-chars 100000 --out kv.safetensors
    /tmp/hv/bin/python scripts/dev/transform_headroom.py smollm2.kvcal kv.safetensors \\
        "$(build/kvstream data which models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf)" [--level 11] [--queries 256]

At level l (distortion d) row r's step is Delta_r^2 / 12 = d * w_r * mean variance (FORMAT.md §3a),
and a kept component of variance var_i costs about 1/2 log2(var_i / (Delta_r^2 / 12)) bits per token
(high rate: the top levels, where 8-bit's KL lies). The total of that over rows is the baseline; each
line reports the bits per token an idea would save and their share of the baseline:

  temporal     each coefficient predicted from the previous token's (lag-1, per component);
  row shapes   a table shape per row instead of per part (K or V): the cross-entropy of the last
               context's normalised coefficients under shapes fitted on the others (grid of 0.05 sigma);
  band shapes  the same per band of components (0-3, 4-15, 16-47, 48-95, 96+);
  values       per-component distortion on V rows, weighted by what the output projection makes of
               it: s_i = sum over the group's query heads q of |W_o,q u_i,h|^2; the saving of
               distortions proportional to 1/s_i at equal weighted error is 1/2 sum log2(mean s / s_i);
  keys         the same on K rows, weighted by the queries (a float64 forward pass of the GGUF's
               weights on the dump's tokens, its keys checked against the dump's): the error of key s
               in direction u moves query t's logit by R(t - s) q_t . u / sqrt(D) and the head's output
               by a_ts (v_s - o_t), so s_i = sum over sampled t, s of a_ts^2 |v_s - o_t|^2 (R(t - s) q_t . u_i)^2;
  keys basis   the further saving of a key basis that whitens that sensitivity instead of the PCA
               basis (with M the sensitivity matrix, Hadamard's gap 1/2 (sum log2 u_i'M u_i - log2 det M)),
               on rows that keep every component.

Only estimates: high-rate formulas, a proxy of the KL (the attention output's error), and for keys
the query positions sampled from the first context (--queries). "keys basis" is biased up by a
small sample (log det of an estimated M): on SmolLM2 it gave 15.7 / 10.1 / 8.3 % with 16 / 64 / 256
positions, while "keys" stayed at 5.2 / 5.1 / 5.0 %.
"""
import argparse
import json
import struct

import numpy as np
from gguf import GGUFReader
from gguf.quants import dequantize

BANDS = [(0, 4), (4, 16), (16, 48), (48, 96), (96, None)]


def read_calibration(path):
    """The .kvcal fields (codec/FORMAT.md §7) this estimate needs."""
    data = open(path, "rb").read()
    version, = struct.unpack_from("<H", data, 4)
    at = 6  # magic, version
    name_length, = struct.unpack_from("<H", data, at)
    at += 2 + name_length
    layers, heads, head_dim = struct.unpack_from("<HHH", data, at)
    at += 6
    rope, theta, sinks, levels = struct.unpack_from("<BdIB", data, at)
    at += 14
    distortions = struct.unpack_from(f"<{levels}d", data, at)
    at += 8 * levels
    channels = heads * head_dim
    rows = []
    for _ in range(2 * layers):
        weight, = struct.unpack_from("<d", data, at)
        at += 8
        mean = np.frombuffer(data, np.float32, channels, at).astype(np.float64)
        variance = np.frombuffer(data, np.float32, channels, at + 4 * channels).astype(np.float64)
        basis = np.frombuffer(data, np.float32, channels * channels, at + 8 * channels).astype(np.float64)
        at += 8 * channels + 4 * channels * channels
        basis = basis.reshape(channels, channels)
        synthesis = basis  # the decoder's rows: the basis itself unless the row has a synthesis (version 2)
        if version == 2:
            has_synthesis = data[at]
            at += 1
            if has_synthesis:
                synthesis = np.frombuffer(data, np.float32, channels * channels, at).astype(np.float64)
                synthesis = synthesis.reshape(channels, channels)
                at += 4 * channels * channels
        rows.append({"weight": weight, "mean": mean, "variance": variance, "basis": basis, "synthesis": synthesis})
    return {"layers": layers, "heads": heads, "head_dim": head_dim, "rope": rope, "theta": theta, "sinks": sinks,
            "distortions": distortions, "rows": rows}


def read_kv_dump(path):
    """kv [N][L][2][T][C] and tokens [N][T] of a kvstream kv-export file."""
    data = open(path, "rb").read()
    header_length, = struct.unpack_from("<Q", data, 0)
    header = json.loads(data[8:8 + header_length])

    def tensor(name, dtype):
        begin, end = header[name]["data_offsets"]
        return np.frombuffer(data, dtype, (end - begin) // np.dtype(dtype).itemsize,
                             8 + header_length + begin).reshape(header[name]["shape"])
    return tensor("kv", np.float16).astype(np.float64), tensor("tokens", np.int32)


def rotate(x, angles, layout):
    """x [..., D] turned by angles [..., D/2]: pairs (2j, 2j + 1) (layout 1) or (j, j + D/2) (layout 2)."""
    half = x.shape[-1] // 2
    first, second = (slice(0, None, 2), slice(1, None, 2)) if layout == 1 else (slice(0, half), slice(half, None))
    cos, sin = np.cos(angles), np.sin(angles)
    out = x.copy()
    out[..., first] = x[..., first] * cos - x[..., second] * sin
    out[..., second] = x[..., first] * sin + x[..., second] * cos
    return out


def coefficients(cal, kv):
    """Per row, per context: the coded tokens' PCA coefficients [T - sinks][C] (keys with RoPE undone)."""
    heads, head_dim, sinks = cal["heads"], cal["head_dim"], cal["sinks"]
    frequencies = cal["theta"] ** (-np.arange(head_dim // 2) * 2.0 / head_dim)
    out = []
    for r, row in enumerate(cal["rows"]):
        layer, part = r % cal["layers"], r // cal["layers"]
        per_context = []
        for context in kv:
            x = context[layer, part, sinks:]
            if part == 0 and cal["rope"]:
                angles = np.arange(sinks, x.shape[0] + sinks)[:, None, None] * frequencies
                x = rotate(x.reshape(-1, heads, head_dim), -angles, cal["rope"]).reshape(x.shape)
            per_context.append((x - row["mean"]) @ row["basis"].T)
        out.append(per_context)
    return out


def high_rate_bits(variance, step_error):
    return 0.5 * np.log2(np.maximum(variance / step_error, 1.0))


def weighting_gain(sensitivity):
    """Bits per token saved by distortions proportional to 1/s_i instead of equal ones, at equal sum s_i D_i."""
    return 0.5 * sensitivity.size * np.log2(sensitivity.mean() / np.exp(np.log(sensitivity).mean()))


def cross_entropy(counts, model):
    p = model + 0.5
    return -(counts * np.log2(p / p.sum())).sum() / counts.sum()


def histogram(z):
    return np.histogram(np.clip(z, -7.99, 7.99), np.linspace(-8, 8, 321))[0].astype(np.float64)


class Model:
    """A float64 forward pass of a Llama GGUF, enough to see its queries, attention and values."""

    def __init__(self, path):
        reader = GGUFReader(path)
        self.fields = {k: reader.fields[k].contents() for k in reader.fields if k.startswith("llama.")}
        self.tensors = {t.name: t for t in reader.tensors}
        self.dequantized = {}
        self.hidden = None

    def weight(self, name):
        if name not in self.dequantized:
            t = self.tensors[name]
            shape = [int(d) for d in reversed(t.shape)]
            self.dequantized[name] = dequantize(t.data, t.tensor_type).astype(np.float64).reshape(shape)
        return self.dequantized[name]

    def norm(self, x, name):
        eps = float(self.fields["llama.attention.layer_norm_rms_epsilon"])
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * self.weight(name)

    def layers(self, tokens, rope_layout, past=None):
        """Yields per layer: queries [T][Hq][D] (no RoPE), keys with RoPE [P+T][H][D], values [P+T][H][D],
        attention [Hq][T][P+T] and the heads' outputs [Hq][T][D], for `tokens` at positions P.. after
        `past`, per layer (keys with RoPE, values) [P][H][D] of the P tokens before (none: P = 0).
        Afterwards self.hidden holds the last layer's hidden states [T][n_embd]."""
        f = self.fields
        query_heads, heads = int(f["llama.attention.head_count"]), int(f["llama.attention.head_count_kv"])
        h = self.weight("token_embd.weight")[tokens]
        T, head_dim = len(tokens), h.shape[1] // query_heads
        P = 0 if past is None else past[0][0].shape[0]
        frequencies = float(f["llama.rope.freq_base"]) ** (-np.arange(head_dim // 2) * 2.0 / head_dim)
        angles = np.arange(P, P + T)[:, None, None] * frequencies
        future = np.concatenate([np.zeros((T, P), bool), np.triu(np.ones((T, T), bool), 1)], 1)
        for layer in range(int(f["llama.block_count"])):
            w = lambda n: self.weight(f"blk.{layer}.{n}.weight")  # noqa: E731
            x = self.norm(h, f"blk.{layer}.attn_norm.weight")
            q = (x @ w("attn_q").T).reshape(T, query_heads, head_dim)
            k = rotate((x @ w("attn_k").T).reshape(T, heads, head_dim), angles, rope_layout)
            v = (x @ w("attn_v").T).reshape(T, heads, head_dim)
            if past is not None:
                k, v = np.concatenate([past[layer][0], k]), np.concatenate([past[layer][1], v])
            q_turned = rotate(q, angles, rope_layout)
            attention = np.empty((query_heads, T, P + T))
            outputs = np.empty((query_heads, T, head_dim))
            for qh in range(query_heads):
                kh = qh * heads // query_heads
                logits = q_turned[:, qh] @ k[:, kh].T / np.sqrt(head_dim)
                logits[future] = -np.inf
                a = np.exp(logits - logits.max(1, keepdims=True))
                attention[qh] = a / a.sum(1, keepdims=True)
                outputs[qh] = attention[qh] @ v[:, kh]
            yield q, k, v, attention, outputs, w("attn_output")
            h = h + outputs.transpose(1, 0, 2).reshape(T, -1) @ w("attn_output").T
            x = self.norm(h, f"blk.{layer}.ffn_norm.weight")
            gate = x @ w("ffn_gate").T
            h = h + (gate / (1 + np.exp(-gate)) * (x @ w("ffn_up").T)) @ w("ffn_down").T
        self.hidden = h


def key_sensitivity(q, v, attention, outputs, basis, heads, sinks, frequencies, rope_layout, positions):
    """s_i of every component and the sensitivity matrix M [C][C] of one K row (module docstring)."""
    query_heads, head_dim = q.shape[1], q.shape[2]
    channels = heads * head_dim
    components = basis.reshape(channels, heads, head_dim)
    s = np.zeros(channels)
    m = np.zeros((channels, channels))
    for t in positions:
        keys = np.arange(sinks, t + 1)
        turn = (t - keys)[:, None] * frequencies
        for qh in range(query_heads):
            kh = qh * heads // query_heads
            weight = attention[qh, t, keys] ** 2 * ((v[keys, kh] - outputs[qh, t]) ** 2).sum(1)
            directions = rotate(np.broadcast_to(q[t, qh], (len(keys), head_dim)), turn, rope_layout) / np.sqrt(head_dim)
            s += (weight[:, None] * (directions @ components[:, kh].T) ** 2).sum(0)
            block = slice(kh * head_dim, (kh + 1) * head_dim)
            m[block, block] += (directions * weight[:, None]).T @ directions
    return s, m


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("calibration")
    parser.add_argument("kv_dump")
    parser.add_argument("gguf")
    parser.add_argument("--level", type=int, default=11, help="the calibration's level (1 = lowest quality)")
    parser.add_argument("--queries", type=int, default=256, help="query positions sampled for the keys")
    args = parser.parse_args()

    cal = read_calibration(args.calibration)
    kv, tokens = read_kv_dump(args.kv_dump)
    d = cal["distortions"][args.level - 1]
    L, heads, head_dim, sinks = cal["layers"], cal["heads"], cal["head_dim"], cal["sinks"]
    y = coefficients(cal, kv)
    step_error = [d * row["weight"] * row["variance"].mean() for row in cal["rows"]]
    kept = [row["variance"] > e for row, e in zip(cal["rows"], step_error)]
    baseline = sum(high_rate_bits(row["variance"][k], e).sum() for row, k, e in zip(cal["rows"], kept, step_error))
    savings = {}

    temporal = 0.0
    for r, row in enumerate(cal["rows"]):
        now = np.concatenate([c[1:] for c in y[r]])
        before = np.concatenate([c[:-1] for c in y[r]])
        rho = (now * before).mean(0) / np.maximum((before * before).mean(0), 1e-30)
        residual = np.minimum(((now - rho * before) ** 2).mean(0), now.var(0))
        temporal += (high_rate_bits(now.var(0), step_error[r]) - high_rate_bits(residual, step_error[r]))[kept[r]].sum()
    savings["temporal"] = temporal

    for label, bands in (("row shapes", [(0, None)]), ("band shapes", BANDS)):
        fitted, scored, pooled = {}, {}, {0: 0.0, 1: 0.0}
        for r, row in enumerate(cal["rows"]):
            z = [c / np.sqrt(np.maximum(row["variance"], 1e-30)) for c in y[r]]
            for b, (first, last) in enumerate(bands):
                fit = histogram(np.concatenate([c[:, first:last] for c in z[:-1]]))
                fitted[r, b] = fit
                scored[r, b] = histogram(z[-1][:, first:last])
                pooled[r // L] = pooled[r // L] + fit
        saved = sum((cross_entropy(scored[key], pooled[key[0] // L]) - cross_entropy(scored[key], fitted[key]))
                    * scored[key].sum() for key in fitted)
        savings[label] = saved / y[0][-1].shape[0]  # per coded token of the last context

    model = Model(args.gguf)
    frequencies = cal["theta"] ** (-np.arange(head_dim // 2) * 2.0 / head_dim)
    positions = np.sort(np.random.default_rng(0).choice(np.arange(64, kv.shape[3]), args.queries, replace=False))
    values = keys = keys_basis = 0.0
    worst_key_error = 0.0
    for layer, (q, k, v, attention, outputs, w_o) in enumerate(model.layers(tokens[0], cal["rope"])):
        dumped = kv[0, layer, 0].reshape(k.shape)
        worst_key_error = max(worst_key_error, np.abs(k - dumped).max() / np.abs(dumped).max())
        key_row, value_row = cal["rows"][layer], cal["rows"][L + layer]
        components = value_row["basis"].reshape(-1, heads, head_dim)
        query_heads = q.shape[1]
        s_values = sum(((components[:, qh * heads // query_heads] @ w_o[:, qh * head_dim:(qh + 1) * head_dim].T) ** 2).sum(1)
                       for qh in range(query_heads))
        values += weighting_gain(s_values[kept[L + layer]])
        s_keys, m = key_sensitivity(q, v, attention, outputs, key_row["basis"], heads, sinks, frequencies, cal["rope"],
                                    positions)
        keys += weighting_gain(s_keys[kept[layer]])
        if kept[layer].all():
            keys_basis += 0.5 * (np.log2(s_keys).sum() - np.linalg.slogdet(m)[1] / np.log(2))
    savings["values"], savings["keys"], savings["keys basis"] = values, keys, keys_basis

    print(f"level {args.level} (d = {d:g}): {baseline:.0f} bits per token over {2 * L} rows "
          f"(the model's keys match the dump's to {worst_key_error:.1e} of their largest)")
    for label, bits in savings.items():
        print(f"  {label:12s} {bits:8.0f} bits per token  {100 * bits / baseline:5.1f} %")


if __name__ == "__main__":
    main()
