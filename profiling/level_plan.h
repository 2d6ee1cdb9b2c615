// What a context profile measures, and its levels planned before anything is measured, so that a
// config's codecs and levels are checked before the first model runs.
//
// Level names (sim/level_name.h): a single-level codec (fp16, quant:bits=8, kivi:bits=2, zstd, ...)
// gives one level named by its spec exactly as written in ProfilingOptions::codecs (the simulator's
// `quant8` policy looks for "quant:bits=8"). A ladder codec (cachegen and its variants, e.g.
// "cachegen:delta") gives one level per ladder level, named "<spec>:<level>" ("cachegen:2",
// "cachegen:delta:2"), even when the filter keeps one level. LevelInfo::codec is the spec as written,
// so a policy's ladder=<spec> picks that codec's levels. Names must be unique.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "codec/codec.h"
#include "sim/context_profile.h"

namespace kvstream::profiling {

struct ProfilingOptions {
  int64_t chunk_tokens = 256;
  std::vector<std::string> codecs = {"cachegen"};  // codec specs (codec/codec.h), in ladder order of the profile
  // Ladder levels to keep for ladder codecs (cachegen); empty = all. Single-level codecs are always kept.
  std::vector<int> levels;
  // The spec a codec of `codecs` is run as where that differs from the spec that names its levels:
  // a `transform` spec without cal= runs with the calibration fitted for the model
  // (profiling/fitted_transform.h). Without an entry such a spec cannot be planned.
  std::map<std::string, std::string> runs_as = {};

  // The spec `spec` of `codecs` is encoded with: its runs_as entry, else itself.
  const std::string& runnable(const std::string& spec) const {
    const auto entry = runs_as.find(spec);
    return entry == runs_as.end() ? spec : entry->second;
  }
};

// One level of the profile: its name and codec, the codec object and ladder level that encode it,
// and what decoding its bitstreams needs (the offline CDF table of cachegen:cdf=offline,table=PATH).
struct PlannedLevel {
  sim::LevelInfo info;
  std::shared_ptr<const codec::Codec> codec;
  int level = 1;
  codec::DecodeContext decode_context;
};

// Throws std::invalid_argument for chunk_tokens < 1, no codecs, an unknown or malformed codec spec,
// a levels filter that leaves a ladder codec without levels, and duplicate level names.
std::vector<PlannedLevel> plan_levels(const ProfilingOptions& options);
// The profile's level list of plan_levels(options).
std::vector<sim::LevelInfo> profile_levels(const ProfilingOptions& options);

}  // namespace kvstream::profiling
