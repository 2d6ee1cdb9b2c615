// Baseline "quant": N-bit per-token vector-wise quantization (docs/CACHEGEN.md §12 "Baselines"); at bits=8
// it is the paper's 8-bit baseline, q = round(x·127/m). Every (row, token) has its own absmax scale m
// (vector_quantizer.h, round then offset) with Q = 2^(bits-1) - 1; symbols q + Q lie in [0, 2Q] and are
// bit-packed without entropy coding. Invariant: |x - x̂| <= m / (2Q) up to float32 rounding.
//
// Sections: PARM  bits u8
//           SCAL  fp16 scales [2L][T], CacheGen row order, little-endian
//           QDAT  packed symbols in (row, token, channel) order, bits each
#include <cmath>

#include "codec/baselines/bit_packing.h"
#include "codec/baselines/fp16_payload.h"
#include "codec/codec.h"
#include "codec/format/byte_io.h"
#include "codec/vector_quantizer.h"

namespace kvstream::codec {
namespace {

constexpr int kMinBits = 2, kMaxBits = 8;

int q_for_bits(int bits) { return (1 << (bits - 1)) - 1; }

class QuantCodec final : public SingleLevelCodec {
 public:
  explicit QuantCodec(int bits) : SingleLevelCodec("quant:bits=" + std::to_string(bits)), bits_(bits) {}

 protected:
  std::vector<uint8_t> encode_chunk(const KvChunkView& chunk, int64_t t0, SourceDtype source_dtype) const override {
    const KvShape s = chunk.shape();
    const size_t channels = static_cast<size_t>(s.channels());
    const int q = q_for_bits(bits_);
    std::vector<uint8_t> symbols(static_cast<size_t>(s.elements()));
    std::vector<uint16_t> scales;
    scales.reserve(static_cast<size_t>(s.rows() * s.tokens));
    for (int row = 0; row < s.rows(); ++row)
      for (int64_t t = 0; t < s.tokens; ++t) {
        uint8_t* out = symbols.data() + scales.size() * channels;  // (row, token) index == scales.size()
        scales.push_back(quantize_token(chunk.token(row, t), s.channels(), q, RoundingOrder::kRoundThenOffset, out, 1));
      }
    std::vector<uint8_t> scal;
    ByteWriter(scal).u16_array(scales);
    BitstreamHeader header{CodecId::kQuant, s, t0, source_dtype};
    return write_bitstream(header, {Section{section_tag("PARM"), {static_cast<uint8_t>(bits_)}},
                                    Section{section_tag("SCAL"), std::move(scal)},
                                    Section{section_tag("QDAT"), pack_bits(symbols, bits_)}});
  }

 private:
  int bits_;
};

KvCache decode(const ParsedBitstream& parsed, const DecodeContext&) {
  using K = BitstreamErrorKind;
  const KvShape& s = parsed.header.shape;
  const int bits = parsed.section_of_size("PARM", 1)[0];
  if (bits < kMinBits || bits > kMaxBits)
    throw BitstreamError(K::kBadLevelSpec, "PARM", "bits " + std::to_string(bits) + " not in [2, 8]");
  const int q = q_for_bits(bits);
  const uint64_t n_scales = uint64_t(s.rows()) * uint64_t(s.tokens);
  // Every size is checked against the header's (already bounded) shape before anything is allocated.
  const auto scal = parsed.section_of_size("SCAL", 2 * n_scales);
  const auto qdat = parsed.section_of_size("QDAT", packed_bytes(uint64_t(s.elements()), bits));

  std::vector<uint8_t> symbols(static_cast<size_t>(s.elements()));
  unpack_bits(qdat, bits, symbols);
  for (size_t i = 0; i < symbols.size(); ++i)
    if (symbols[i] > 2 * q)
      throw BitstreamError(K::kCorruptPayload, "QDAT",
                           "symbol " + std::to_string(symbols[i]) + " at " + std::to_string(i) + " exceeds 2Q = " +
                               std::to_string(2 * q));
  KvCache kv(s);
  const size_t channels = static_cast<size_t>(s.channels());
  for (int row = 0; row < s.rows(); ++row)
    for (int64_t t = 0; t < s.tokens; ++t) {
      const size_t index = size_t(row) * size_t(s.tokens) + size_t(t);
      const uint16_t scale = load_u16(scal.data() + 2 * index);
      const float m = common::half_to_float(scale);
      if (!(m >= 0.0f && m <= common::kHalfMax))
        throw BitstreamError(K::kCorruptPayload, "SCAL", "scale " + std::to_string(index) + " is negative, inf or NaN");
      dequantize_token(symbols.data() + index * channels, s.channels(), q, scale, kv.row_token(row, t));
    }
  return kv;
}

}  // namespace

CodecEntry quant_codec_entry() {
  return {"quant", CodecId::kQuant, "N-bit per-token absmax quantization, bits=2..8 (8 = the paper's baseline)",
          [](const common::Spec& spec) {
            spec.only({"bits"});
            return std::unique_ptr<Codec>(new QuantCodec(spec.integer("bits", 8, kMinBits, kMaxBits)));
          },
          decode, RateKnob{"bits", {"2", "3", "4", "5", "6", "7", "8"}}};
}

}  // namespace kvstream::codec
