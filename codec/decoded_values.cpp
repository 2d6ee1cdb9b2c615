#include "codec/decoded_values.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>

#include "codec/bitstream_error.h"

namespace kvstream::codec {

double largest_finite_rounding(SourceDtype dtype) {
  // Below max + half an ulp of max a value rounds to max; at it, ties-to-even go to infinity.
  switch (dtype) {
    case SourceDtype::kFp16: return 65504.0 + 16.0;                          // max 65504, ulp 32
    case SourceDtype::kBf16: return 0x1.FEp127 + 0x1p119;                    // max (2 - 2^-7)·2^127, ulp 2^120
    case SourceDtype::kFp32: return std::numeric_limits<float>::max();       // fp32 values are kept as they are
  }
  return std::numeric_limits<float>::max();
}

void check_decoded_values(const KvCache& kv, SourceDtype dtype) {
  const double limit = largest_finite_rounding(dtype);
  const bool inclusive = dtype == SourceDtype::kFp32;
  const std::vector<float>& values = kv.values();
  // One branch-free pass finds whether anything is wrong; the slow search below only names it.
  bool bad = false;
  for (const float v : values) bad |= !(std::fabs(double(v)) < limit || (inclusive && std::fabs(double(v)) <= limit));
  if (!bad) return;
  const KvShape& s = kv.shape();
  for (int layer = 0; layer < s.layers; ++layer)
    for (const KvPart part : {KvPart::kKey, KvPart::kValue})
      for (int64_t t = 0; t < s.tokens; ++t) {
        const float* row = kv.token(layer, part, t);
        for (int c = 0; c < s.channels(); ++c) {
          const double v = std::fabs(double(row[c]));
          if (v < limit || (inclusive && v <= limit)) continue;
          std::ostringstream what;
          what << "decoded value " << row[c] << " at layer " << layer << (part == KvPart::kKey ? " K" : " V")
               << ", token " << t << " of the chunk, channel " << c << " is "
               << (std::isnan(row[c]) ? "NaN" : std::isinf(row[c]) ? "infinite" : "beyond the source dtype's range")
               << ": no encoder writes it, so the bitstream is corrupt though its CRC matches";
          throw BitstreamError(BitstreamErrorKind::kImplausibleValue, "DATA", what.str());
        }
      }
}

}  // namespace kvstream::codec
