// (codec, level) pairs: what quality and profiling runs evaluate, one per level of every codec spec.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "codec/codec.h"

namespace kvstream::codec {

struct CodecLevel {
  std::shared_ptr<const Codec> codec;
  int level = 1;
};

// Every level of every codec spec, in order, kept when `levels` is empty or lists it. Throws
// std::invalid_argument for a bad spec.
std::vector<CodecLevel> codec_levels(const std::vector<std::string>& codecs, const std::vector<int>& levels);

}  // namespace kvstream::codec
