#include "codec/baselines/fp16_payload.h"

#include <cmath>

#include "codec/format/byte_io.h"
#include "common/half.h"

namespace kvstream::codec {

std::vector<uint8_t> pack_fp16(const KvChunkView& chunk) {
  const KvShape s = chunk.shape();
  std::vector<uint8_t> out;
  out.reserve(static_cast<size_t>(s.fp16_bytes()));
  ByteWriter w(out);
  for (int layer = 0; layer < s.layers; ++layer)
    for (int part = 0; part < 2; ++part)
      for (int64_t t = 0; t < s.tokens; ++t) {
        const float* x = chunk.token(part * s.layers + layer, t);
        for (int c = 0; c < s.channels(); ++c) {
          if (!(std::fabs(x[c]) <= common::kHalfMax))
            throw std::invalid_argument("KV value " + std::to_string(x[c]) + " (layer " + std::to_string(layer) +
                                        ", token " + std::to_string(t) + ") is not a finite fp16 number");
          w.put<uint16_t>(common::float_to_half(x[c]));
        }
      }
  return out;
}

KvCache unpack_fp16(std::span<const uint8_t> bytes, const KvShape& shape, const std::string& section) {
  KvCache kv(shape);
  auto& values = kv.values();
  for (size_t i = 0; i < values.size(); ++i) {
    const uint16_t h = load_u16(bytes.data() + 2 * i);
    if ((h & 0x7C00u) == 0x7C00u)
      throw BitstreamError(BitstreamErrorKind::kCorruptPayload, section,
                           "value " + std::to_string(i) + " is inf or NaN");
    values[i] = common::half_to_float(h);
  }
  return kv;
}

}  // namespace kvstream::codec
