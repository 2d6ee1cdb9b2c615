#include "eval/kv_bridge.h"

#include <stdexcept>

namespace kvstream::eval {

codec::KvCache to_kv_cache(const models::KvState& state, const models::LlamaConfig& config) {
  const codec::KvShape shape{config.n_layers, config.n_kv_heads, config.head_dim(), state.tokens()};
  codec::KvCache cache(shape);
  for (int l = 0; l < config.n_layers; ++l)
    for (int part = 0; part < 2; ++part) {
      const auto& t = part == 0 ? state.keys[static_cast<size_t>(l)] : state.values[static_cast<size_t>(l)];
      // [heads, T, head_dim] -> [T, heads * head_dim], contiguous float32 on the CPU
      const auto rows = t.transpose(0, 1).reshape({shape.tokens, shape.channels()}).to(torch::kCPU, torch::kFloat32).contiguous();
      std::copy_n(rows.data_ptr<float>(), rows.numel(), cache.token(l, static_cast<codec::KvPart>(part), 0));
    }
  return cache;
}

models::KvState to_kv_state(const codec::KvCache& cache, const models::LlamaConfig& config, torch::Device device) {
  const codec::KvShape& s = cache.shape();
  if (s.layers != config.n_layers || s.kv_heads != config.n_kv_heads || s.head_dim != config.head_dim())
    throw std::invalid_argument("KV of shape " + s.to_string() + " does not fit model " + config.name + " (L=" +
                                std::to_string(config.n_layers) + " H=" + std::to_string(config.n_kv_heads) +
                                " D=" + std::to_string(config.head_dim()) + ")");
  models::KvState state;
  for (int l = 0; l < s.layers; ++l)
    for (int part = 0; part < 2; ++part) {
      const float* rows = cache.token(l, static_cast<codec::KvPart>(part), 0);
      // clone, not contiguous(): with one KV head the transpose is already contiguous, and the
      // state would alias `cache`'s memory.
      auto t = torch::from_blob(const_cast<float*>(rows), {s.tokens, s.kv_heads, s.head_dim}, torch::kFloat32)
                   .transpose(0, 1)
                   .clone(torch::MemoryFormat::Contiguous)
                   .to(device);
      (part == 0 ? state.keys : state.values).push_back(std::move(t));
    }
  return state;
}

codec::RopeSpec rope_spec(const models::LlamaConfig& config) {
  return {config.rope_layout == models::RopeLayout::kInterleavedPairs ? codec::RopePairs::kInterleaved
                                                                      : codec::RopePairs::kRotateHalf,
          double(config.rope_theta)};
}

}  // namespace kvstream::eval
