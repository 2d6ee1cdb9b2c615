#include "profiling/kv_scale.h"

#include <stdexcept>
#include <utility>
#include <vector>

namespace kvstream::profiling {

namespace {
const std::vector<std::pair<std::string, double>>& architectures() {
  static const std::vector<std::pair<std::string, double>> table = {{"mistral-7b", 2.0 * 32 * 1024 * 2},
                                                                    {"llama-3.1-8b", 2.0 * 32 * 1024 * 2},
                                                                    {"llama-34b", 2.0 * 48 * 1024 * 2},
                                                                    {"llama-70b", 2.0 * 80 * 1024 * 2},
                                                                    {"longchat-7b", 2.0 * 32 * 4096 * 2}};
  return table;
}
}  // namespace

std::optional<double> architecture_fp16_bytes_per_token(const std::string& name) {
  for (const auto& [known, bytes] : architectures())
    if (known == name) return bytes;
  return std::nullopt;
}

std::string architecture_names() {
  std::string names;
  for (const auto& entry : architectures()) names += (names.empty() ? "" : ", ") + entry.first;
  return names;
}

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
