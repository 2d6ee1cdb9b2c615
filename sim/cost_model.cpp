#include "cost_model.h"

#include <limits>
#include <stdexcept>

namespace kvstream::sim {

CostModel::CostModel(const ContextProfile& profile, const SimConfig& config, const std::optional<HardwareProfile>& hardware)
    : profile_(profile), config_(config) {
  if (hardware) prefill_ = hardware->prefill;
  // Recompute of chunk c: the artifact's constant, else the hardware cost model with the earlier
  // chunks as prefix, else the profile's measured time. Unknown stays NaN and fails only if used.
  for (const auto& chunk : profile.chunks) {
    double seconds = std::numeric_limits<double>::quiet_NaN();
    if (config.fixed_recompute_s)
      seconds = *config.fixed_recompute_s;
    else if (prefill_)
      seconds = prefill_->seconds(static_cast<double>(chunk.start_token), static_cast<double>(chunk.tokens));
    else if (chunk.recompute_s)
      seconds = *chunk.recompute_s;
    recompute_s_.push_back(seconds);
  }
  if (config.query_tokens > 0) {
    if (!prefill_)
      throw std::invalid_argument("a query of " + std::to_string(config.query_tokens) +
                                  " tokens needs a hardware profile (prefill cost model) to time its prefill");
    query_prefill_s_ =
        prefill_->seconds(static_cast<double>(profile.context_tokens()), static_cast<double>(config.query_tokens));
  }
}

double CostModel::bits(size_t chunk, int choice) const {
  const auto& c = profile_.chunks[chunk];
  if (choice != kText) return 8 * c.levels[choice].bytes;
  return config_.fixed_recompute_s ? 0.0 : 8 * c.text_bytes;  // the artifact charges text its constant only
}

double CostModel::decode_s(size_t chunk, int level) const {
  return config_.decode_costs_time ? profile_.chunks[chunk].levels[level].decode_s : 0.0;
}

double CostModel::recompute_s(size_t chunk) const {
  const double seconds = recompute_s_[chunk];
  if (seconds != seconds)
    throw std::invalid_argument("profile \"" + profile_.name + "\" chunk " + std::to_string(chunk) +
                                " is sent as text but its recompute time is unknown: give a hardware profile, "
                                "measured recompute_s in the profile, or a fixed recompute time (or forbid text: "
                                "policy option text=0)");
  return seconds;
}

double CostModel::quality(size_t chunk, int choice) const {
  return choice == kText ? 1.0 : profile_.chunks[chunk].levels[choice].quality;
}

}  // namespace kvstream::sim
