#include "sim/cost_model.h"

#include <limits>
#include <stdexcept>

namespace kvstream::sim {

namespace {

// The hardware profile's measured throughput of `level`'s codec and level.
double hardware_fp16_bytes_per_s(const LevelInfo& level, const HardwareProfile& hardware, const std::string& context) {
  const std::string what = "level \"" + level.name + "\" of context \"" + context + "\"";
  const auto name = LevelName::parse(level.name, level.codec);
  if (!name)
    throw std::invalid_argument(what + ": its name is neither its codec \"" + level.codec + "\" nor \"" + level.codec +
                                ":<level>\", so its decode throughput cannot be looked up");
  if (const DecodeThroughput* found = hardware.decode->find(level.codec, name->level)) return found->fp16_bytes_per_s;
  std::string measured;
  for (const auto& t : hardware.decode->throughputs)
    measured += (measured.empty() ? "" : ", ") + t.codec + " level " + std::to_string(t.level);
  throw std::invalid_argument("hardware profile \"" + hardware.device + "\" has no decode throughput for " + what +
                              " (codec \"" + level.codec + "\", level " + std::to_string(name->level) +
                              "); its decode section (" + hardware.decode->device + ") has: " + measured +
                              ". Measure it: kvstream profile-decode --codecs " + level.codec + " --hardware ...");
}

}  // namespace

std::vector<double> level_decode_fp16_bytes_per_s(const ContextProfile& profile, const SimConfig& config,
                                                  const std::optional<HardwareProfile>& hardware) {
  if (!config.decode_costs_time || config.decode_time == DecodeTime::kProfile) return {};
  if (!profile.fp16_bytes_per_token)
    throw std::invalid_argument("context \"" + profile.name + "\" has no fp16_bytes_per_token, which timing its "
                                "decode from a throughput needs");
  if (config.decode_time == DecodeTime::kThroughput) {
    if (!(config.decode_fp16_bytes_per_s > 0))
      throw std::invalid_argument("a decode throughput must be > 0 fp16 bytes/s, got " +
                                  std::to_string(config.decode_fp16_bytes_per_s));
    return std::vector<double>(profile.levels.size(), config.decode_fp16_bytes_per_s);
  }
  if (!hardware) throw std::invalid_argument("decode times from the hardware profile need a hardware profile");
  if (!hardware->decode)
    throw std::invalid_argument("hardware profile \"" + hardware->device + "\" has no decode section (measure one: "
                                "kvstream profile-decode --hardware ...)");
  std::vector<double> rates;
  for (const auto& level : profile.levels) rates.push_back(hardware_fp16_bytes_per_s(level, *hardware, profile.name));
  return rates;
}

CostModel::CostModel(const ContextProfile& profile, const SimConfig& config, const std::optional<HardwareProfile>& hardware)
    : profile_(profile), config_(config), level_fp16_bytes_per_s_(level_decode_fp16_bytes_per_s(profile, config, hardware)) {
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
  if (!config_.decode_costs_time) return 0.0;
  if (level_fp16_bytes_per_s_.empty()) return profile_.chunks[chunk].levels[level].decode_s;
  return tokens(chunk) * *profile_.fp16_bytes_per_token / level_fp16_bytes_per_s_[level];
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
