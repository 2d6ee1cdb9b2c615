#include "kv_scale.h"

#include <stdexcept>
#include <utility>
#include <vector>

namespace kvstream::experiments {

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

}  // namespace kvstream::experiments
