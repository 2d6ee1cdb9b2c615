// What each piece of work costs, from the context profile (bytes, measured decode time, quality),
// the hardware profile (prefill cost model) and the config (artifact overrides).
#pragma once
#include <optional>
#include <string>

#include "context_profile.h"
#include "hardware_profile.h"
#include "sim_config.h"

namespace kvstream::sim {

// A choice for one chunk: the index of a profile level, or text (send tokens, recompute).
inline constexpr int kText = -1;

class CostModel {
 public:
  // Throws std::invalid_argument when a cost cannot be known: a text recompute or a query prefill
  // with neither a hardware profile, a measured recompute_s nor fixed_recompute_s.
  CostModel(const ContextProfile& profile, const SimConfig& config, const std::optional<HardwareProfile>& hardware);

  const ContextProfile& profile() const { return profile_; }
  size_t chunks() const { return profile_.chunks.size(); }

  double bits(size_t chunk, int choice) const;
  // Work on the GPU once the chunk has arrived: decode (a level) or recompute (text).
  double gpu_s(size_t chunk, int choice) const { return choice == kText ? recompute_s(chunk) : decode_s(chunk, choice); }
  double decode_s(size_t chunk, int level) const;
  double recompute_s(size_t chunk) const;
  double query_prefill_s() const { return query_prefill_s_; }
  double quality(size_t chunk, int choice) const;
  double tokens(size_t chunk) const { return static_cast<double>(profile_.chunks[chunk].tokens); }
  std::string choice_name(int choice) const { return choice == kText ? "text" : profile_.levels[choice].name; }

 private:
  const ContextProfile& profile_;
  const SimConfig& config_;
  std::optional<PrefillCostModel> prefill_;
  std::vector<double> recompute_s_;
  double query_prefill_s_ = 0;
};

}  // namespace kvstream::sim
