#include "codec/codec_levels.h"

#include <algorithm>

namespace kvstream::codec {

std::vector<CodecLevel> codec_levels(const std::vector<std::string>& codecs, const std::vector<int>& levels) {
  std::vector<CodecLevel> out;
  for (const auto& spec : codecs) {
    const std::shared_ptr<const Codec> codec = make_codec(spec);
    for (int level : codec->levels())
      if (levels.empty() || std::find(levels.begin(), levels.end(), level) != levels.end()) out.push_back({codec, level});
  }
  return out;
}

}  // namespace kvstream::codec
