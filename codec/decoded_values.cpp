#include "codec/decoded_values.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "codec/format/bitstream_error.h"

namespace kvstream::codec {

double largest_finite(SourceDtype dtype) {
  switch (dtype) {
    case SourceDtype::kFp16: return 65504.0;
    case SourceDtype::kBf16: return 0x1.FEp127;  // (2 - 2^-7) x 2^127
    case SourceDtype::kFp32: return std::numeric_limits<float>::max();
  }
  return std::numeric_limits<float>::max();
}

void check_decoded_values(KvCache& kv, SourceDtype dtype) {
  const double largest = largest_finite(dtype);
  const double limit = dtype == SourceDtype::kFp32 ? largest : kOvershoot * largest;
  // One branch-free pass finds whether anything is beyond the largest value; the slow search below
  // clamps the overshoots and names the first value beyond the limit.
  // Every largest_finite is a float, so the pass compares floats (and vectorises).
  const auto largest_float = static_cast<float>(largest);
  uint32_t beyond = 0;
  for (const float v : kv.values()) beyond |= uint32_t(!(std::fabs(v) <= largest_float));
  if (!beyond) return;
  const KvShape& s = kv.shape();
  for (int layer = 0; layer < s.layers; ++layer)
    for (const KvPart part : {KvPart::kKey, KvPart::kValue})
      for (int64_t t = 0; t < s.tokens; ++t) {
        float* row = kv.token(layer, part, t);
        for (int c = 0; c < s.channels(); ++c) {
          const double v = std::fabs(double(row[c]));
          if (v <= largest) continue;
          if (v <= limit) {
            row[c] = static_cast<float>(std::copysign(largest, double(row[c])));
            continue;
          }
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
