#include "profiling/level_plan.h"

#include <set>
#include <stdexcept>

#include "codec/codec_levels.h"
#include "sim/level_name.h"

namespace kvstream::profiling {

std::vector<PlannedLevel> plan_levels(const ProfilingOptions& o) {
  if (o.chunk_tokens < 1) throw std::invalid_argument("chunk_tokens must be at least 1, got " + std::to_string(o.chunk_tokens));
  if (o.codecs.empty()) throw std::invalid_argument("no codecs to profile");
  std::vector<PlannedLevel> out;
  std::set<std::string> names;
  for (const auto& spec : o.codecs) {
    const std::string& runnable = o.runnable(spec);
    const std::shared_ptr<const codec::Codec> probe = codec::make_codec(runnable);  // throws for a bad spec
    const bool ladder = probe->ladder();
    const auto kept = codec::codec_levels({runnable}, ladder ? o.levels : std::vector<int>{});
    if (kept.empty()) {
      std::string list;
      for (int l : probe->levels()) list += (list.empty() ? "" : ", ") + std::to_string(l);
      throw std::invalid_argument("codec " + spec + " has none of the requested levels (its levels: " + list + ")");
    }
    for (const auto& [codec, level] : kept) {
      PlannedLevel p{{sim::LevelName{spec, level, ladder}.format(), spec}, codec, level, codec->decode_context()};
      if (!names.insert(p.info.name).second)
        throw std::invalid_argument("level name \"" + p.info.name + "\" occurs twice (codec specs must be distinct)");
      out.push_back(std::move(p));
    }
  }
  return out;
}

std::vector<sim::LevelInfo> profile_levels(const ProfilingOptions& options) {
  std::vector<sim::LevelInfo> out;
  for (const auto& p : plan_levels(options)) out.push_back(p.info);
  return out;
}

}  // namespace kvstream::profiling
