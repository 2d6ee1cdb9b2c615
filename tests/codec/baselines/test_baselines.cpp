// The baseline codecs quant, kivi and zstd, and bit packing: round trips on synthetic KV with error
// bounds computed from the data and the stored parameters, section sizes against their formulas,
// and typed errors for malformed bitstreams and bad options.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>

#include "codec/baselines/bit_packing.h"
#include "codec/codec.h"
#include "codec/format/bitstream_error.h"
#include "codec/format/byte_io.h"
#include "common/half.h"

namespace kvstream::codec {
namespace {

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Normal values with a few outlier channels, plus the edge cases the codecs must handle exactly:
// K of layer 0, channel 0 is constant (0.75) over the first 32 tokens, V of layer 0 token 0 is
// constant (-1.25) and V of the last layer token T/2 is all zero.
KvCache synthetic_kv(KvShape shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  KvCache kv(shape);
  const int C = shape.channels();
  for (int row = 0; row < shape.rows(); ++row)
    for (int64_t t = 0; t < shape.tokens; ++t) {
      float* x = kv.row_token(row, t);
      for (int c = 0; c < C; ++c) x[c] = normal(rng) * (c % 7 == 3 ? 12.0f : 1.0f);
    }
  for (int64_t t = 0; t < std::min<int64_t>(shape.tokens, 32); ++t) kv.row_token(0, t)[0] = 0.75f;
  std::fill_n(kv.row_token(shape.layers, 0), C, -1.25f);
  std::fill_n(kv.row_token(shape.rows() - 1, shape.tokens / 2), C, 0.0f);
  return kv;
}

// Shapes with T and C multiples of 32 and not, T below a group, and a single value.
const std::vector<KvShape> kShapes = {
    {2, 2, 16, 64}, {1, 3, 10, 45}, {3, 1, 40, 7}, {2, 4, 9, 100}, {1, 1, 1, 1},
};

uint16_t u16_at(std::span<const uint8_t> bytes, uint64_t index) { return load_u16(bytes.data() + 2 * index); }

std::span<const uint8_t> section_named(const ParsedBitstream& parsed, const std::string& name) {
  for (const auto& s : parsed.sections)
    if (s.name() == name) return s.bytes;
  ADD_FAILURE() << "no section " << name;
  return {};
}

std::vector<uint8_t> section_copy(const std::vector<uint8_t>& bytes, const std::string& name) {
  const auto s = section_named(parse_bitstream(bytes), name);
  return {s.begin(), s.end()};
}

// Encodes tokens [t0, t1) of kv and checks the quant error bound |x - x̂| <= m / (2Q) per element.
void check_quant(const KvCache& kv, int64_t t0, int64_t t1, int bits) {
  SCOPED_TRACE("quant bits=" + std::to_string(bits) + " " + kv.shape().to_string());
  const auto view = kv.chunk(t0, t1);
  const KvShape s = view.shape();
  const auto bytes = make_codec("quant:bits=" + std::to_string(bits))->encode(view, 1, t0);
  const ParsedBitstream parsed = parse_bitstream(bytes);
  ASSERT_EQ(parsed.section("PARM").size(), 1u);
  ASSERT_EQ(parsed.section("SCAL").size(), 2 * uint64_t(s.rows()) * uint64_t(s.tokens));
  ASSERT_EQ(parsed.section("QDAT").size(), ceil_div(uint64_t(s.elements()) * uint64_t(bits), 8));
  DecodedChunk decoded = decode_bitstream(bytes);
  ASSERT_EQ(decoded.header.shape, s);
  ASSERT_EQ(decoded.header.t0, t0);
  ASSERT_EQ(decoded.header.codec, CodecId::kQuant);

  const float Q = static_cast<float>((1 << (bits - 1)) - 1);
  const auto scal = parsed.section("SCAL");
  for (int row = 0; row < s.rows(); ++row)
    for (int64_t t = 0; t < s.tokens; ++t) {
      const float* x = view.token(row, t);
      const float* y = decoded.kv.row_token(row, t);
      float max_abs = 0.0f;
      for (int c = 0; c < s.channels(); ++c) max_abs = std::max(max_abs, std::fabs(x[c]));
      const uint16_t scale = u16_at(scal, uint64_t(row) * uint64_t(s.tokens) + uint64_t(t));
      ASSERT_EQ(scale, common::float_to_half_up(max_abs)) << "row " << row << " token " << t;
      const float m = common::half_to_float(scale);
      const float bound = m / (2.0f * Q) + m * 1e-6f;  // 0 for an all-zero token: exact
      for (int c = 0; c < s.channels(); ++c)
        ASSERT_LE(std::fabs(x[c] - y[c]), bound) << "row " << row << " token " << t << " channel " << c;
    }
}

// Encodes tokens [t0, t1) of kv and checks the kivi invariants min16 <= x <= min16 + levels·scale16 and
// |x - x̂| <= scale16 / 2 per element, with the parameters read back from the sections. With
// `constant_runs`, kv comes from synthetic_kv and its constant groups must get scale 0.
void check_kivi(const KvCache& kv, int64_t t0, int64_t t1, int bits, int group, bool constant_runs) {
  SCOPED_TRACE("kivi bits=" + std::to_string(bits) + " group=" + std::to_string(group) + " " + kv.shape().to_string());
  const auto view = kv.chunk(t0, t1);
  const KvShape s = view.shape();
  const auto codec = make_codec("kivi:bits=" + std::to_string(bits) + ",group=" + std::to_string(group));
  const auto bytes = codec->encode(view, 1, t0);
  const ParsedBitstream parsed = parse_bitstream(bytes);
  const uint64_t L = uint64_t(s.layers), T = uint64_t(s.tokens), C = uint64_t(s.channels()), G = uint64_t(group);
  const uint64_t k_groups = ceil_div(T, G), v_groups = ceil_div(C, G);
  ASSERT_EQ(parsed.section("PARM").size(), 3u);
  for (const char* tag : {"KMIN", "KSCL"}) ASSERT_EQ(section_named(parsed, tag).size(), 2 * L * k_groups * C) << tag;
  for (const char* tag : {"VMIN", "VSCL"}) ASSERT_EQ(section_named(parsed, tag).size(), 2 * L * T * v_groups) << tag;
  ASSERT_EQ(parsed.section("QDAT").size(), ceil_div(uint64_t(s.elements()) * uint64_t(bits), 8));
  DecodedChunk decoded = decode_bitstream(bytes);
  ASSERT_EQ(decoded.header.shape, s);
  ASSERT_EQ(decoded.header.codec, CodecId::kKivi);

  const float levels = static_cast<float>((1 << bits) - 1);
  const auto kmin = parsed.section("KMIN"), kscl = parsed.section("KSCL");
  const auto vmin = parsed.section("VMIN"), vscl = parsed.section("VSCL");
  auto check = [&](float x, float y, uint16_t min_bits, uint16_t scale_bits, const std::string& where) {
    const float lo = common::half_to_float(min_bits), scale = common::half_to_float(scale_bits);
    ASSERT_LE(lo, x) << where;
    ASSERT_GE(lo + levels * scale, x) << where;
    const float eps = 1e-6f * (std::fabs(lo) + levels * scale);  // float32 rounding of x - min, q·scale
    ASSERT_LE(std::fabs(x - y), scale / 2 + eps) << where;
    if (scale == 0.0f) {
      ASSERT_EQ(x, y) << where;  // a constant group is exact
    }
  };
  for (uint64_t layer = 0; layer < L; ++layer)
    for (uint64_t t = 0; t < T; ++t)
      for (uint64_t c = 0; c < C; ++c) {
        const std::string where = "layer " + std::to_string(layer) + " token " + std::to_string(t) + " channel " +
                                  std::to_string(c);
        const uint64_t k = (layer * k_groups + t / G) * C + c;
        check(view.token(int(layer), int64_t(t))[c], decoded.kv.token(int(layer), KvPart::kKey, int64_t(t))[c],
              u16_at(kmin, k), u16_at(kscl, k), "K " + where);
        const uint64_t v = (layer * T + t) * v_groups + c / G;
        check(view.token(int(L + layer), int64_t(t))[c], decoded.kv.token(int(layer), KvPart::kValue, int64_t(t))[c],
              u16_at(vmin, v), u16_at(vscl, v), "V " + where);
        if (::testing::Test::HasFatalFailure()) return;
      }
  // The synthetic constant runs (see synthetic_kv) have scale 0 when the chunk starts at token 0.
  if (constant_runs && t0 == 0) {
    EXPECT_EQ(u16_at(kscl, 0), 0u);  // K layer 0, token group 0, channel 0
    for (uint64_t g = 0; g < v_groups; ++g) EXPECT_EQ(u16_at(vscl, g), 0u);  // V layer 0 token 0
  }
}

void check_zstd(const KvCache& kv, int64_t t0, int64_t t1, int level) {
  SCOPED_TRACE("zstd level=" + std::to_string(level) + " " + kv.shape().to_string());
  const auto view = kv.chunk(t0, t1);
  const auto bytes = make_codec("zstd:level=" + std::to_string(level))->encode(view, 1, t0);
  DecodedChunk decoded = decode_bitstream(bytes);
  ASSERT_EQ(decoded.header.shape, view.shape());
  ASSERT_EQ(decoded.header.codec, CodecId::kZstd);
  for (int row = 0; row < view.shape().rows(); ++row)
    for (int64_t t = 0; t < view.shape().tokens; ++t)
      for (int c = 0; c < view.shape().channels(); ++c)
        ASSERT_EQ(decoded.kv.row_token(row, t)[c], common::round_to_half(view.token(row, t)[c]))
            << "row " << row << " token " << t << " channel " << c;
}

TEST(BitPacking, RoundTripsEveryWidth) {
  std::mt19937 rng(7);
  for (int bits = 1; bits <= 8; ++bits)
    for (size_t count : std::vector<size_t>{0, 1, 2, 3, 7, 8, 9, 31, 100, 1001}) {
      std::uniform_int_distribution<int> value(0, (1 << bits) - 1);
      std::vector<uint8_t> values(count);
      for (auto& v : values) v = static_cast<uint8_t>(value(rng));
      const auto packed = pack_bits(values, bits);
      ASSERT_EQ(packed.size(), (count * size_t(bits) + 7) / 8) << bits << " bits, " << count;
      ASSERT_EQ(packed.size(), packed_bytes(count, bits));
      std::vector<uint8_t> back(count);
      unpack_bits(packed, bits, back);
      ASSERT_EQ(back, values) << bits << " bits, " << count;
    }
}

TEST(BitPacking, IsLsbFirst) {
  const std::vector<uint8_t> values = {1, 2, 3};
  EXPECT_EQ(pack_bits(values, 2), std::vector<uint8_t>({0x39}));  // 0b00'11'10'01
  const std::vector<uint8_t> three = {5, 6, 7};                   // 101 110 111 -> 0b11'110'101, 0b0000000'1
  EXPECT_EQ(pack_bits(three, 3), std::vector<uint8_t>({0xF5, 0x01}));
}

TEST(BitPacking, RejectsBadInput) {
  const std::vector<uint8_t> too_wide = {4};
  EXPECT_THROW(pack_bits(too_wide, 2), std::invalid_argument);
  EXPECT_THROW(pack_bits(too_wide, 9), std::invalid_argument);
  std::vector<uint8_t> out(9);
  const std::vector<uint8_t> short_input(2), long_input(4);
  EXPECT_THROW(unpack_bits(short_input, 3, out), std::invalid_argument);  // needs ceil(27 / 8) = 4 bytes
  EXPECT_THROW(unpack_bits(long_input, 2, out), std::invalid_argument);   // needs 3 bytes
  EXPECT_NO_THROW(unpack_bits(long_input, 3, out));
}

TEST(QuantCodec, RoundTripWithinHalfAStep) {
  uint32_t seed = 1;
  for (const KvShape& shape : kShapes) {
    const KvCache kv = synthetic_kv(shape, seed++);
    for (int bits = 2; bits <= 8; ++bits) {
      check_quant(kv, 0, shape.tokens, bits);
      if (shape.tokens > 5) check_quant(kv, 5, shape.tokens, bits);  // a chunk that starts inside the context
      if (HasFatalFailure()) return;
    }
  }
}

TEST(QuantCodec, EightBitsIsThePaperBaseline) {
  // q = round(x·127/m), ties to even, stored as q + 127; decode q / 127 · m.
  const KvShape shape{1, 1, 4, 1};
  const KvCache kv(shape, {1.0f, -0.5f, 0.25f, 0.0f, 2.0f, -2.0f, 1.0f, 0.5f});
  const auto bytes = make_codec("quant")->encode(kv.all(), 1, 0);
  const ParsedBitstream parsed = parse_bitstream(bytes);
  EXPECT_EQ(parsed.section("PARM")[0], 8);
  const auto qdat = parsed.section("QDAT");
  EXPECT_EQ(std::vector<uint8_t>(qdat.begin(), qdat.end()),
            std::vector<uint8_t>({254, 63, 159, 127, 254, 0, 191, 159}));  // -63.5 -> -64; 31.75 -> 32; 63.5 -> 64
  const DecodedChunk decoded = decode_bitstream(bytes);
  EXPECT_EQ(decoded.kv.values()[1], -64.0f / 127.0f);
  EXPECT_EQ(decoded.kv.values()[2], 32.0f / 127.0f);
  EXPECT_EQ(decoded.kv.values()[3], 0.0f);
  EXPECT_EQ(decoded.kv.values()[6], 64.0f / 127.0f * 2.0f);
}

TEST(KiviCodec, RoundTripWithinHalfAStep) {
  uint32_t seed = 100;
  for (const KvShape& shape : kShapes) {
    const KvCache kv = synthetic_kv(shape, seed++);
    for (int bits : {2, 4})
      for (int group : {32, 9, 8}) {
        check_kivi(kv, 0, shape.tokens, bits, group, true);
        if (shape.tokens > 5) check_kivi(kv, 3, shape.tokens, bits, group, true);
        if (HasFatalFailure()) return;
      }
  }
}

TEST(ZstdCodec, LosslessForFp16) {
  uint32_t seed = 200;
  for (const KvShape& shape : kShapes) {
    const KvCache kv = synthetic_kv(shape, seed++);
    for (int level : {1, 3, 19}) check_zstd(kv, 0, shape.tokens, level);
    if (shape.tokens > 5) check_zstd(kv, 2, shape.tokens - 1, 3);
  }
}

TEST(Baselines, ExtremeValues) {
  // fp16 extremes, subnormals and values that fp16 cannot represent, mixed in every group.
  const float pool[] = {common::kHalfMax, -common::kHalfMax, 6e-8f, -3e-8f, 1e-30f, 0.0f, -0.0f, 1.0f / 3.0f, 1000.1f, -2e-5f};
  const KvShape shape{2, 2, 12, 40};
  std::mt19937 rng(5);
  std::uniform_int_distribution<size_t> pick(0, std::size(pool) - 1);
  std::vector<float> values(static_cast<size_t>(shape.elements()));
  for (auto& v : values) v = pool[pick(rng)];
  const KvCache kv(shape, values);
  for (int bits = 2; bits <= 8; ++bits) check_quant(kv, 0, shape.tokens, bits);
  for (int bits : {2, 4}) check_kivi(kv, 0, shape.tokens, bits, 8, false);
  check_zstd(kv, 0, shape.tokens, 3);
}

TEST(Baselines, RejectNonFp16Values) {
  for (float bad : {NAN, INFINITY, 70000.0f}) {
    KvCache kv(KvShape{1, 1, 8, 4});
    kv.values()[5] = bad;
    for (const char* spec : {"quant", "kivi", "zstd"})
      EXPECT_THROW(make_codec(spec)->encode(kv.all(), 1, 0), std::invalid_argument) << spec << " " << bad;
  }
}

TEST(Baselines, SpecsOptionsAndLevels) {
  EXPECT_EQ(make_codec("quant")->spec(), "quant:bits=8");
  EXPECT_EQ(make_codec("quant:bits=3")->spec(), "quant:bits=3");
  EXPECT_EQ(make_codec("kivi")->spec(), "kivi:bits=2,group=32");
  EXPECT_EQ(make_codec("kivi:group=64,bits=4")->spec(), "kivi:bits=4,group=64");
  EXPECT_EQ(make_codec("zstd")->spec(), "zstd:level=3");
  for (const char* spec : {"quant", "kivi", "zstd"}) EXPECT_EQ(make_codec(spec)->levels(), std::vector<int>({1}));
  for (const char* bad : {"quant:bits=9", "quant:bits=1", "quant:bits=x", "quant:foo=1", "kivi:bits=3", "kivi:bits=8",
                          "kivi:group=7", "kivi:group=1025", "kivi:level=1", "zstd:level=0", "zstd:level=20",
                          "zstd:bits=8"})
    EXPECT_THROW(make_codec(bad), std::invalid_argument) << bad;
  const KvCache kv(KvShape{1, 1, 8, 4});
  for (const char* spec : {"quant", "kivi", "zstd"})
    EXPECT_THROW(make_codec(spec)->encode(kv.all(), 2, 0), std::invalid_argument) << spec;
}

// The bitstream with section `tag` replaced (or, for an empty tag, unchanged), with a valid CRC.
std::vector<uint8_t> rewrite(const std::vector<uint8_t>& bytes, const std::string& tag, std::vector<uint8_t> content,
                             const BitstreamHeader* header = nullptr) {
  const ParsedBitstream parsed = parse_bitstream(bytes);
  std::vector<Section> sections;
  for (const auto& s : parsed.sections)
    sections.push_back({s.tag, s.name() == tag ? content : std::vector<uint8_t>(s.bytes.begin(), s.bytes.end())});
  return write_bitstream(header ? *header : parsed.header, sections);
}

void expect_error(const std::vector<uint8_t>& bytes, BitstreamErrorKind kind, const std::string& section) {
  try {
    decode_bitstream(bytes);
    ADD_FAILURE() << "decoded without error, expected " << to_string(kind) << " in " << section;
  } catch (const BitstreamError& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_EQ(e.section(), section) << e.what();
  }
}

TEST(QuantCodec, RejectsMalformedSections) {
  using K = BitstreamErrorKind;
  const KvCache kv = synthetic_kv({2, 2, 8, 20}, 9);
  const auto bytes = make_codec("quant:bits=2")->encode(kv.all(), 1, 0);
  ASSERT_NO_THROW(decode_bitstream(rewrite(bytes, "", {})));
  for (int bits : {0, 1, 9, 255})
    expect_error(rewrite(bytes, "PARM", {static_cast<uint8_t>(bits)}), K::kBadLevelSpec, "PARM");
  expect_error(rewrite(bytes, "PARM", {2, 0}), K::kBadSection, "PARM");
  auto scal = section_copy(bytes, "SCAL");
  expect_error(rewrite(bytes, "SCAL", std::vector<uint8_t>(scal.begin(), scal.end() - 2)), K::kBadSection, "SCAL");
  scal[0] = 0x00, scal[1] = 0x7E;  // NaN
  expect_error(rewrite(bytes, "SCAL", scal), K::kCorruptPayload, "SCAL");
  scal[0] = 0x00, scal[1] = 0xBC;  // -1.0
  expect_error(rewrite(bytes, "SCAL", scal), K::kCorruptPayload, "SCAL");
  auto qdat = section_copy(bytes, "QDAT");
  qdat.push_back(0);
  expect_error(rewrite(bytes, "QDAT", qdat), K::kBadSection, "QDAT");
  qdat.pop_back();
  qdat[0] = 0xFF;  // symbol 3 > 2Q = 2 at bits=2
  expect_error(rewrite(bytes, "QDAT", qdat), K::kCorruptPayload, "QDAT");
  // A PARM that claims 3 bits makes the QDAT size wrong.
  expect_error(rewrite(bytes, "PARM", {3}), K::kBadSection, "QDAT");
}

TEST(KiviCodec, RejectsMalformedSections) {
  using K = BitstreamErrorKind;
  const KvCache kv = synthetic_kv({2, 2, 8, 20}, 10);
  const auto bytes = make_codec("kivi:bits=4,group=8")->encode(kv.all(), 1, 0);
  ASSERT_NO_THROW(decode_bitstream(rewrite(bytes, "", {})));
  expect_error(rewrite(bytes, "PARM", {3, 8, 0}), K::kBadLevelSpec, "PARM");
  expect_error(rewrite(bytes, "PARM", {4, 7, 0}), K::kBadLevelSpec, "PARM");
  expect_error(rewrite(bytes, "PARM", {4, 0x01, 0x04}), K::kBadLevelSpec, "PARM");  // group 1025
  expect_error(rewrite(bytes, "PARM", {4, 8}), K::kBadSection, "PARM");
  expect_error(rewrite(bytes, "PARM", {4, 16, 0}), K::kBadSection, "KMIN");  // group 16 implies fewer K groups
  for (const std::string tag : {"KMIN", "KSCL", "VMIN", "VSCL", "QDAT"}) {
    const auto original = section_copy(bytes, tag);
    expect_error(rewrite(bytes, tag, std::vector<uint8_t>(original.begin(), original.end() - 1)), K::kBadSection, tag);
  }
  auto vmin = section_copy(bytes, "VMIN");
  vmin[2] = 0x00, vmin[3] = 0x7C;  // +inf
  expect_error(rewrite(bytes, "VMIN", vmin), K::kCorruptPayload, "VMIN");
  auto kscl = section_copy(bytes, "KSCL");
  kscl[0] = 0x00, kscl[1] = 0xC0;  // -2.0
  expect_error(rewrite(bytes, "KSCL", kscl), K::kCorruptPayload, "KSCL");
}

TEST(ZstdCodec, RejectsMalformedFrames) {
  using K = BitstreamErrorKind;
  const KvShape shape{1, 2, 8, 30};
  const KvCache kv = synthetic_kv(shape, 11);
  const auto codec = make_codec("zstd");
  const auto bytes = codec->encode(kv.all(), 1, 0);
  // A frame of 29 tokens under a header that says 30: the declared content size is wrong.
  const auto shorter = section_copy(codec->encode(kv.chunk(0, 29), 1, 0), "ZSTD");
  expect_error(rewrite(bytes, "ZSTD", shorter), K::kCorruptPayload, "ZSTD");
  expect_error(rewrite(bytes, "ZSTD", {1, 2, 3, 4, 5, 6, 7, 8, 9}), K::kCorruptPayload, "ZSTD");
  auto frame = section_copy(bytes, "ZSTD");
  auto two_frames = frame;
  two_frames.insert(two_frames.end(), frame.begin(), frame.end());
  expect_error(rewrite(bytes, "ZSTD", two_frames), K::kCorruptPayload, "ZSTD");
  expect_error(rewrite(bytes, "ZSTD", std::vector<uint8_t>(frame.begin(), frame.end() - 3)), K::kCorruptPayload,
               "ZSTD");
}

}  // namespace
}  // namespace kvstream::codec
