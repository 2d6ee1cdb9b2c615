// What each piece of work costs, from the context profile (bytes, measured decode time, quality),
// the hardware profile (prefill cost model, decoder throughputs) and the config (artifact overrides,
// where decode times come from).
#pragma once
#include <optional>
#include <string>

#include "sim/context_profile.h"
#include "sim/hardware_profile.h"
#include "sim/sim_config.h"

namespace kvstream::sim {

// A choice for one chunk: the index of a profile level, or text (send tokens, recompute).
inline constexpr int kText = -1;

// The decoder throughput in fp16 KV bytes/s of every level of `profile` (in level order) that
// config.decode_time asks for: config.decode_fp16_bytes_per_s for every level (kThroughput), or the
// hardware profile's measured throughput for the level's codec and level number (kHardware; the
// number comes from the level's name, sim/level_name.h). Empty
// when decode times are the profile's decode_s (kProfile) or cost nothing (!decode_costs_time).
// Throws std::invalid_argument when a throughput is needed but unknown: a rate <= 0, no hardware
// profile or no decode section in it, a level without an entry (naming the level, its codec and
// level, and what the section holds), or a profile without fp16_bytes_per_token.
std::vector<double> level_decode_fp16_bytes_per_s(const ContextProfile& profile, const SimConfig& config,
                                                  const std::optional<HardwareProfile>& hardware);

class CostModel {
 public:
  // Throws std::invalid_argument when a cost cannot be known: a query prefill without a hardware
  // profile, or a decode throughput (level_decode_fp16_bytes_per_s). A text recompute with neither
  // a hardware profile, a measured recompute_s nor fixed_recompute_s throws only when asked for.
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
  std::vector<double> level_fp16_bytes_per_s_;  // empty: decode_s is the profile's (or 0)
  std::vector<double> recompute_s_;
  double query_prefill_s_ = 0;
};

}  // namespace kvstream::sim
