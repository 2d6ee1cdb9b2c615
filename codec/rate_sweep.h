// The points of a codec's rate–distortion curve, as `kvstream rd` measures them: one (codec, level)
// per point, fewest bytes first.
//   - a ladder codec (CacheGen): every level of its ladder ("level=1", "level=2", ...);
//   - a codec whose registry entry names a rate knob (quant's and KIVI's bits, codec.h RateKnob),
//     when the spec leaves the knob out: every value of the knob ("bits=2", ..., "bits=8"), the
//     spec's other options kept;
//   - otherwise the spec's one setting ("level=1"): a knob given in the spec, or a lossless codec.
#pragma once
#include <string>
#include <vector>

#include "codec/codec_levels.h"

namespace kvstream::codec {

struct RatePoint {
  std::string label;  // what varies along the curve: "level=2", "bits=4"
  CodecLevel codec_level;
};

// Throws std::invalid_argument for a bad spec.
std::vector<RatePoint> rate_sweep(const std::string& spec);

}  // namespace kvstream::codec
