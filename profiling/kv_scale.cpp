#include "profiling/kv_scale.h"

#include <stdexcept>
#include <vector>

namespace kvstream::profiling {

sim::ContextProfile scale_kv(sim::ContextProfile profile, double factor) {
  if (!(factor > 0)) throw std::invalid_argument("KV scale factor must be > 0");
  for (auto& chunk : profile.chunks)
    for (auto& level : chunk.levels) {
      level.bytes *= factor;
      level.encode_s *= factor;
      level.decode_s *= factor;
    }
  return profile;
}

sim::ContextProfile extrapolate_context(const sim::ContextProfile& profile, int chunks, int64_t chunk_tokens) {
  const double tokens = static_cast<double>(profile.context_tokens());
  std::vector<sim::LevelCost> per_token(profile.levels.size(), sim::LevelCost{0, 0, 0, 0});
  double text_bytes = 0;
  for (const auto& chunk : profile.chunks) {
    text_bytes += chunk.text_bytes;
    for (size_t l = 0; l < per_token.size(); ++l) {
      per_token[l].bytes += chunk.levels[l].bytes / tokens;
      per_token[l].encode_s += chunk.levels[l].encode_s / tokens;
      per_token[l].decode_s += chunk.levels[l].decode_s / tokens;
      per_token[l].quality += chunk.levels[l].quality * static_cast<double>(chunk.tokens) / tokens;
    }
  }
  sim::ContextProfile out = profile;
  out.chunk_tokens = chunk_tokens;
  out.chunks.clear();
  const double n = static_cast<double>(chunk_tokens);
  for (int c = 0; c < chunks; ++c) {
    sim::ChunkProfile chunk;
    chunk.start_token = c * chunk_tokens;
    chunk.tokens = chunk_tokens;
    chunk.text_bytes = text_bytes / tokens * n;
    for (const auto& cost : per_token)
      chunk.levels.push_back({cost.bytes * n, cost.encode_s * n, cost.decode_s * n, cost.quality});
    out.chunks.push_back(std::move(chunk));
  }
  return out;
}

}  // namespace kvstream::profiling
