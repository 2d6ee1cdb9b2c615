// Bridge between the model's KV (per-layer torch tensors, models/llama_model.h) and the codec's
// canonical KvCache [L][2][T][C] (codec/kv_cache.h): channel c = head * head_dim + dim.
// One of the few experiment files that include torch.
#pragma once
#include "codec/kv_cache.h"
#include "codec/transform/rope.h"
#include "models/llama_model.h"

namespace kvstream::eval {

codec::KvCache to_kv_cache(const models::KvState& state, const models::LlamaConfig& config);
// Throws std::invalid_argument when the cache's L/H/D differ from the model's.
// How the model turned its keys (RoPE layout and theta), for codecs that undo it.
codec::RopeSpec rope_spec(const models::LlamaConfig& config);
models::KvState to_kv_state(const codec::KvCache& cache, const models::LlamaConfig& config, torch::Device device);

}  // namespace kvstream::eval
