#include "codec/rate_sweep.h"

#include <algorithm>
#include <memory>

namespace kvstream::codec {

std::vector<RatePoint> rate_sweep(const std::string& spec) {
  const common::Spec parsed = parse_codec_spec(spec);
  const auto& registry = codec_registry();
  const auto entry = std::find_if(registry.begin(), registry.end(), [&](const CodecEntry& e) { return e.name == parsed.name(); });
  std::vector<RatePoint> points;
  if (entry != registry.end() && entry->rate_knob && !parsed.has(entry->rate_knob->key)) {
    const std::string base = parsed.canonical();
    const char separator = base.find(':') == std::string::npos ? ':' : ',';
    for (const auto& value : entry->rate_knob->values) {
      const std::string setting = entry->rate_knob->key + "=" + value;
      points.push_back({setting, {std::shared_ptr<const Codec>(make_codec(base + separator + setting)), 1}});
    }
    return points;
  }
  const std::shared_ptr<const Codec> codec = make_codec(spec);  // an unknown name fails here, naming the known ones
  for (const int level : codec->levels()) points.push_back({"level=" + std::to_string(level), {codec, level}});
  return points;
}

}  // namespace kvstream::codec
