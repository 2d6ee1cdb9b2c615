// KV bytes and context lengths of the paper's setting for profiles measured on small models: the models we can
// run here (stories260K: 640 B of fp16 KV per token, SmolLM2-135M: 23 KiB) are far smaller than the
// paper's, so a sweep may scale every level's bytes (and its encode/decode time, both linear in the
// KV) by target / profiled fp16 bytes per token. Quality stays the measured one; text bytes and
// recompute times are not scaled (recompute comes from the target's hardware profile).
#pragma once
#include <optional>
#include <string>

#include "sim/context_profile.h"

namespace kvstream::profiling {

// `profile` with every level's bytes, encode_s and decode_s multiplied by `factor` (> 0).
sim::ContextProfile scale_kv(sim::ContextProfile profile, double factor);

// `profile`'s per-token costs on a context of `chunks` x `chunk_tokens` tokens: each level's bytes,
// encode_s and decode_s per token (totals over the measured chunks / tokens) times the chunk's
// tokens, its quality (token-weighted) unchanged, text at the measured text bytes per token; no
// measured recompute_s (text costs come from a hardware profile).
sim::ContextProfile extrapolate_context(const sim::ContextProfile& profile, int chunks, int64_t chunk_tokens);

}  // namespace kvstream::profiling
