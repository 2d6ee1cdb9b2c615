#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "sim/policies/policies.h"

namespace kvstream::sim::policies {

std::string default_ladder(const ContextProfile& profile) {
  for (const auto& level : profile.levels)
    if (level.codec == "cachegen") return "cachegen";
  return "";
}

std::vector<int> ladder_best_first(const ContextProfile& profile, const std::string& ladder) {
  struct Rank {
    int level;
    double mean_quality, bytes;
  };
  std::vector<Rank> ranks;
  for (size_t l = 0; l < profile.levels.size(); ++l) {
    if (!ladder.empty() && profile.levels[l].codec != ladder) continue;
    double quality = 0, bytes = 0;
    for (const auto& chunk : profile.chunks) {
      quality += chunk.levels[l].quality * static_cast<double>(chunk.tokens);
      bytes += chunk.levels[l].bytes;
    }
    ranks.push_back({static_cast<int>(l), quality / static_cast<double>(profile.context_tokens()), bytes});
  }
  if (ranks.empty()) throw std::invalid_argument("profile \"" + profile.name + "\" has no levels of codec \"" + ladder + "\"");
  std::stable_sort(ranks.begin(), ranks.end(), [](const Rank& a, const Rank& b) {
    return a.mean_quality != b.mean_quality ? a.mean_quality > b.mean_quality : a.bytes > b.bytes;
  });
  std::vector<int> levels;
  for (const auto& rank : ranks) levels.push_back(rank.level);
  return levels;
}

}  // namespace kvstream::sim::policies
