// Baseline "kivi": KIVI-style asymmetric 2/4-bit quantization (docs/CACHEGEN.md §14 item 3). K is quantized
// per channel (for each layer and channel, `group` consecutive tokens share a min and a scale), V per
// token (for each layer and token, `group` consecutive channels share them); the last group may be
// partial. Unlike KIVI itself there is no full-precision residual window of recent tokens: every token
// of the chunk is quantized, so a chunk decodes on its own.
//
// Per group with values in [lo, hi] and levels = 2^bits - 1:
//   min16   = fp16 rounded down of lo                     (min16 <= every x)
//   scale16 = fp16 rounded up of (hi - min16) / levels    (min16 + levels·scale16 >= every x)
//   q = clamp(rint((x - min16) / scale16), 0, levels)      (q = 0 when scale16 == 0, i.e. all x == min16)
//   x̂ = min16 + q·scale16, so |x - x̂| <= scale16 / 2 up to float32 rounding.
//
// Sections: PARM       bits u8, group u16
//           KMIN/KSCL  fp16 [L][ceil(T/group)][C]
//           VMIN/VSCL  fp16 [L][T][ceil(C/group)]
//           QDAT       packed codes: all K rows then all V rows, each in (token, channel) order
#include <algorithm>
#include <cmath>

#include "codec/baselines/bit_packing.h"
#include "codec/baselines/fp16_payload.h"
#include "codec/codec.h"
#include "codec/format/byte_io.h"
#include "common/half.h"

namespace kvstream::codec {
namespace {

constexpr int kMinGroup = 8, kMaxGroup = 1024;

struct Group {
  uint16_t min_bits = 0, scale_bits = 0;
  float min = 0.0f, scale = 0.0f;
};

// lo <= hi, both within [-65504, 65504] (checked by the caller), so every step below stays finite.
Group fit_group(float lo, float hi, int levels) {
  Group g;
  g.min_bits = common::float_to_half_down(lo);
  g.min = common::half_to_float(g.min_bits);
  g.scale_bits = common::float_to_half_up((hi - g.min) / static_cast<float>(levels));
  g.scale = common::half_to_float(g.scale_bits);
  // Guard the float rounding of (hi - min) / levels so that min + levels·scale >= hi holds as computed.
  while (g.min + static_cast<float>(levels) * g.scale < hi) g.scale = common::half_to_float(++g.scale_bits);
  return g;
}

uint8_t quantize(float x, const Group& g, int levels) {
  if (g.scale == 0.0f) return 0;
  const float q = std::nearbyint((x - g.min) / g.scale);
  return static_cast<uint8_t>(std::clamp(q, 0.0f, static_cast<float>(levels)));
}

void check_finite(float x) {
  if (!(std::fabs(x) <= common::kHalfMax))
    throw std::invalid_argument("KV value " + std::to_string(x) + " is not a finite fp16 number");
}

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

class KiviCodec final : public SingleLevelCodec {
 public:
  KiviCodec(int bits, int group)
      : SingleLevelCodec("kivi:bits=" + std::to_string(bits) + ",group=" + std::to_string(group)), bits_(bits), group_(group) {}

 protected:
  std::vector<uint8_t> encode_chunk(const KvChunkView& chunk, int64_t t0, SourceDtype source_dtype) const override;

 private:
  int bits_, group_;
};

std::vector<uint8_t> KiviCodec::encode_chunk(const KvChunkView& chunk, int64_t t0, SourceDtype source_dtype) const {
  const KvShape s = chunk.shape();
  const int levels = (1 << bits_) - 1;
  const int64_t C = s.channels(), T = s.tokens, G = group_;
  std::vector<uint8_t> codes(static_cast<size_t>(s.elements()));  // (row, token, channel)
  auto code_at = [&](int row, int64_t t) { return codes.data() + (int64_t(row) * T + t) * C; };
  std::vector<uint16_t> kmin, kscl, vmin, vscl;

  // K rows: per channel, over groups of G tokens.
  std::vector<float> lo(static_cast<size_t>(C)), hi(static_cast<size_t>(C));
  std::vector<Group> params(static_cast<size_t>(C));
  for (int layer = 0; layer < s.layers; ++layer)
    for (int64_t t_begin = 0; t_begin < T; t_begin += G) {
      const int64_t t_end = std::min(T, t_begin + G);
      std::fill(lo.begin(), lo.end(), common::kHalfMax);
      std::fill(hi.begin(), hi.end(), -common::kHalfMax);
      for (int64_t t = t_begin; t < t_end; ++t) {
        const float* x = chunk.token(layer, t);
        for (int64_t c = 0; c < C; ++c) {
          check_finite(x[c]);
          lo[c] = std::min(lo[c], x[c]);
          hi[c] = std::max(hi[c], x[c]);
        }
      }
      for (int64_t c = 0; c < C; ++c) {
        params[c] = fit_group(lo[c], hi[c], levels);
        kmin.push_back(params[c].min_bits);
        kscl.push_back(params[c].scale_bits);
      }
      for (int64_t t = t_begin; t < t_end; ++t) {
        const float* x = chunk.token(layer, t);
        uint8_t* out = code_at(layer, t);
        for (int64_t c = 0; c < C; ++c) out[c] = quantize(x[c], params[c], levels);
      }
    }

  // V rows: per token, over groups of G channels.
  for (int layer = 0; layer < s.layers; ++layer)
    for (int64_t t = 0; t < T; ++t) {
      const float* x = chunk.token(s.layers + layer, t);
      uint8_t* out = code_at(s.layers + layer, t);
      for (int64_t c_begin = 0; c_begin < C; c_begin += G) {
        const int64_t c_end = std::min(C, c_begin + G);
        float group_lo = common::kHalfMax, group_hi = -common::kHalfMax;
        for (int64_t c = c_begin; c < c_end; ++c) {
          check_finite(x[c]);
          group_lo = std::min(group_lo, x[c]);
          group_hi = std::max(group_hi, x[c]);
        }
        const Group g = fit_group(group_lo, group_hi, levels);
        vmin.push_back(g.min_bits);
        vscl.push_back(g.scale_bits);
        for (int64_t c = c_begin; c < c_end; ++c) out[c] = quantize(x[c], g, levels);
      }
    }

  auto fp16_section = [](const char(&tag)[5], const std::vector<uint16_t>& values) {
    Section section{section_tag(tag), {}};
    ByteWriter(section.bytes).u16_array(values);
    return section;
  };
  Section parm{section_tag("PARM"), {}};
  ByteWriter parm_writer(parm.bytes);
  parm_writer.put<uint8_t>(static_cast<uint8_t>(bits_));
  parm_writer.put<uint16_t>(static_cast<uint16_t>(group_));
  BitstreamHeader header{CodecId::kKivi, s, t0, source_dtype};
  return write_bitstream(header, {parm, fp16_section("KMIN", kmin), fp16_section("KSCL", kscl),
                                  fp16_section("VMIN", vmin), fp16_section("VSCL", vscl),
                                  Section{section_tag("QDAT"), pack_bits(codes, bits_)}});
}

// Reads a section of fp16 group parameters; min values must be finite, scales finite and >= 0.
std::vector<float> read_params(std::span<const uint8_t> bytes, const char* section, bool is_scale) {
  std::vector<float> out(bytes.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = common::half_to_float(load_u16(bytes.data() + 2 * i));
    if (!(std::fabs(out[i]) <= common::kHalfMax) || (is_scale && !(out[i] >= 0.0f)))
      throw BitstreamError(BitstreamErrorKind::kCorruptPayload, section,
                           "value " + std::to_string(i) + (is_scale ? " is negative, inf or NaN" : " is inf or NaN"));
  }
  return out;
}

KvCache decode(const ParsedBitstream& parsed, const DecodeContext&) {
  using K = BitstreamErrorKind;
  const KvShape& s = parsed.header.shape;
  ByteReader parm(parsed.section_of_size("PARM", 3), "PARM");
  const int bits = parm.get<uint8_t>();
  const int G = parm.get<uint16_t>();
  if (bits != 2 && bits != 4) throw BitstreamError(K::kBadLevelSpec, "PARM", "bits " + std::to_string(bits) + " not 2 or 4");
  if (G < kMinGroup || G > kMaxGroup)
    throw BitstreamError(K::kBadLevelSpec, "PARM", "group " + std::to_string(G) + " not in [8, 1024]");
  const uint64_t L = uint64_t(s.layers), T = uint64_t(s.tokens), C = uint64_t(s.channels());
  const uint64_t k_groups = ceil_div(T, G), v_groups = ceil_div(C, G);  // groups per K channel, per V token
  const uint64_t k_params = L * k_groups * C, v_params = L * T * v_groups;
  // All sizes are checked against the header's (already bounded) shape before anything is allocated.
  const auto qdat = parsed.section_of_size("QDAT", packed_bytes(uint64_t(s.elements()), bits));
  const auto kmin = read_params(parsed.section_of_size("KMIN", 2 * k_params), "KMIN", false);
  const auto kscl = read_params(parsed.section_of_size("KSCL", 2 * k_params), "KSCL", true);
  const auto vmin = read_params(parsed.section_of_size("VMIN", 2 * v_params), "VMIN", false);
  const auto vscl = read_params(parsed.section_of_size("VSCL", 2 * v_params), "VSCL", true);
  std::vector<uint8_t> codes(static_cast<size_t>(s.elements()));
  unpack_bits(qdat, bits, codes);  // every bits-wide code is in [0, levels]: nothing to range-check

  KvCache kv(s);
  for (uint64_t layer = 0; layer < L; ++layer)
    for (uint64_t t = 0; t < T; ++t) {
      const uint8_t* k_code = codes.data() + (layer * T + t) * C;
      const uint8_t* v_code = codes.data() + ((L + layer) * T + t) * C;
      float* k_out = kv.token(int(layer), KvPart::kKey, int64_t(t));
      float* v_out = kv.token(int(layer), KvPart::kValue, int64_t(t));
      const uint64_t k_base = (layer * k_groups + t / uint64_t(G)) * C;  // KMIN index of (layer, group, 0)
      const uint64_t v_base = (layer * T + t) * v_groups;                // VMIN index of (layer, t, 0)
      for (uint64_t c = 0; c < C; ++c) {
        k_out[c] = kmin[k_base + c] + static_cast<float>(k_code[c]) * kscl[k_base + c];
        const uint64_t v = v_base + c / uint64_t(G);
        v_out[c] = vmin[v] + static_cast<float>(v_code[c]) * vscl[v];
      }
    }
  return kv;
}

}  // namespace

CodecEntry kivi_codec_entry() {
  return {"kivi", CodecId::kKivi, "KIVI-style asymmetric quantization: K per channel, V per token; bits=2|4, group=8..1024",
          [](const common::Spec& spec) {
            spec.only({"bits", "group"});
            const int bits = spec.integer("bits", 2, 2, 4);
            if (bits == 3) spec.fail("option bits=3: expected 2 or 4");
            return std::unique_ptr<Codec>(new KiviCodec(bits, spec.integer("group", 32, kMinGroup, kMaxGroup)));
          },
          decode, RateKnob{"bits", {"2", "4"}}};
}

}  // namespace kvstream::codec
