// How a context profile names its levels (sim/README.md "Context profile JSON"). Level N of a ladder
// codec (CacheGen and its variants: codec::Codec::ladder()) is "<codec spec>:N" ("cachegen:2",
// "cachegen:delta=10:3"), even when the ladder has one level; the one level of a single-level codec is
// its spec ("quant:bits=8", "zstd:level=3"). The profiler names levels with format(); the simulator
// finds a level's codec and number again with parse(), to look up the throughput a decoder measured
// for it (sim/cost_model.h), which codec-bench and profile-decode key by (codec, level) as well.
#pragma once
#include <optional>
#include <string>

namespace kvstream::sim {

struct LevelName {
  std::string codec;    // the codec spec as written (a profile's LevelInfo::codec)
  int level = 1;        // the ladder level; 1 for a single-level codec
  bool ladder = false;  // whether the codec's levels form a ladder

  std::string format() const;
  // The LevelName whose format() is `name` for a level of `codec`; std::nullopt for a name that is
  // neither `codec` nor `codec` + ":" + a level number (1 to 9 digits).
  static std::optional<LevelName> parse(const std::string& name, const std::string& codec);
};

}  // namespace kvstream::sim
