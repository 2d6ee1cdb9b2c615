// Small builders shared by the sim tests and the CLI tests of decode sections: hand-made
// profiles, traces and hardware profiles.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/context_profile.h"
#include "sim/hardware_profile.h"
#include "traces/bandwidth_trace.h"

namespace kvstream::sim::test {

// `n_chunks` chunks of `chunk_tokens`, one level per entry of `level_bytes` (same bytes every chunk),
// decode_s per level, quality per level; codec "cachegen", names "cachegen:1", ...
inline ContextProfile hand_profile(int n_chunks, int64_t chunk_tokens, const std::vector<double>& level_bytes,
                                   const std::vector<double>& decode_s, const std::vector<double>& quality,
                                   double text_bytes = 0) {
  ContextProfile profile;
  profile.name = "hand";
  profile.chunk_tokens = chunk_tokens;
  for (size_t l = 0; l < level_bytes.size(); ++l) profile.levels.push_back({"cachegen:" + std::to_string(l + 1), "cachegen"});
  for (int c = 0; c < n_chunks; ++c) {
    ChunkProfile chunk{c * chunk_tokens, chunk_tokens, text_bytes, std::nullopt, {}};
    for (size_t l = 0; l < level_bytes.size(); ++l) chunk.levels.push_back({level_bytes[l], 0, decode_s[l], quality[l]});
    profile.chunks.push_back(chunk);
  }
  return profile;
}

// Piecewise-constant trace from (duration_s, Gbps) pairs; the last piece lasts long enough that
// no test loops around.
inline traces::BandwidthTrace gbps_trace(const std::vector<std::pair<double, double>>& pieces) {
  std::vector<traces::TraceSegment> segments;
  for (const auto& [duration_s, gbps] : pieces) segments.push_back({duration_s, gbps * 1e9});
  segments.push_back({1000, pieces.back().second * 1e9});
  return traces::BandwidthTrace(segments, "hand");
}

// A hardware profile's "decode" section (sim/hardware_profile.h): cachegen levels 1, 2, 3 at
// cachegen_l1, 2x and 4x that many fp16 bytes/s, and quant:bits=8 at quant8.
inline nlohmann::json decode_section(const std::string& source, const std::string& device, double cachegen_l1,
                                     double quant8) {
  nlohmann::json throughputs = nlohmann::json::array();
  for (int level = 1; level <= 3; ++level)
    throughputs.push_back({{"codec", "cachegen"}, {"level", level}, {"fp16_bytes_per_s", cachegen_l1 * (1 << (level - 1))}});
  throughputs.push_back({{"codec", "quant:bits=8"}, {"level", 1}, {"fp16_bytes_per_s", quant8}});
  return {{"source", source}, {"device", device}, {"throughputs", throughputs}};
}

inline HardwareProfile linear_prefill(double seconds_per_token) {
  HardwareProfile hw;
  hw.device = "test";
  hw.kind = "analytic";
  hw.prefill.b = seconds_per_token;
  return hw;
}

}  // namespace kvstream::sim::test
