// KV bytes and context lengths of the paper's setting for profiles measured on small models (issue 5): the models we can
// run here (stories260K: 640 B of fp16 KV per token, SmolLM2-135M: 23 KiB) are far smaller than the
// paper's, so a sweep may scale every level's bytes (and its encode/decode time, both linear in the
// KV) by target / profiled fp16 bytes per token. Quality stays the measured one; text bytes and
// recompute times are not scaled (recompute comes from the target's hardware profile).
#pragma once
#include <optional>
#include <string>

#include "sim/context_profile.h"

namespace kvstream::profiling {

// fp16 KV bytes per token = 2 (K, V) x layers x KV heads x head dim x 2 bytes (CACHEGEN.md §2), of
// the architectures CacheGen evaluates: mistral-7b and llama-3.1-8b (131072), llama-34b (196608),
// llama-70b (327680), longchat-7b (524288, no GQA).
std::optional<double> architecture_fp16_bytes_per_token(const std::string& name);
std::string architecture_names();  // comma-separated, for error messages

// `profile` with every level's bytes, encode_s and decode_s multiplied by `factor` (> 0).
sim::ContextProfile scale_kv(sim::ContextProfile profile, double factor);

// `profile`'s per-token costs on a context of `chunks` x `chunk_tokens` tokens: each level's bytes,
// encode_s and decode_s per token (totals over the measured chunks / tokens) times the chunk's
// tokens, its quality (token-weighted) unchanged, text at the measured text bytes per token; no
// measured recompute_s (text costs come from a hardware profile).
sim::ContextProfile extrapolate_context(const sim::ContextProfile& profile, int chunks, int64_t chunk_tokens);

}  // namespace kvstream::profiling
