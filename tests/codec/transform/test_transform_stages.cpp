// The transform decoder's per-thread stages (codec/transform/transform_decode_stages.h), which the CUDA decoder
// launches: run in a random order by tests/codec/transform/transform_stage_launcher.h, they decode every chunk
// of the held-out stories260K context as the CPU decoder does, bit for bit (its projections sum in
// the stages' order: codec/transform/projection.h), with RoPE in both pair layouts and without, sinks, escapes, and every level; and the low-bit reader
// at every alignment.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <tuple>
#include <vector>

#include "codec/codec.h"
#include "codec/format/bitstream.h"
#include "codec/format/bitstream_error.h"
#include "codec/transform/projection.h"
#include "codec/transform/transform_decode_stages.h"
#include "codec/transform/transform_encode_stages.h"
#include "tests/codec/transform/transform_stage_launcher.h"

namespace kvstream::codec {
namespace {

using test_support_transform::launch_transform_stages;
using test_support_transform::stories_calibration;

TEST(TransformStages, LowBitsReadBackAtEveryAlignment) {
  std::mt19937 rng(5);
  std::vector<std::pair<uint32_t, int>> fields;
  std::vector<uint8_t> bytes;
  uint64_t buffer = 0, at = 0;
  int filled = 0;
  for (int i = 0; i < 2000; ++i) {  // written LSB first, as the encoder's BitWriter does
    const int bits = int(rng() % 25);
    const uint32_t value = bits == 0 ? 0 : static_cast<uint32_t>(rng()) & ((1u << bits) - 1);
    fields.emplace_back(value, bits);
    buffer |= uint64_t(value) << filled;
    filled += bits;
    for (; filled >= 8; filled -= 8, buffer >>= 8) bytes.push_back(uint8_t(buffer));
  }
  if (filled > 0) bytes.push_back(uint8_t(buffer));
  for (const auto& [value, bits] : fields) {
    ASSERT_EQ(read_low_bits(bytes.data(), at, bits), value) << "at bit " << at;
    at += uint64_t(bits);
  }
}

// The codec's projections are the stages' per-thread sums bit for bit, at block-aligned and ragged
// shapes (and none kept): the decoder's y W_r against transform_value, the encoder's
// (x - mu) W_r^T against transform_component.
TEST(TransformStages, ProjectionsSumInTheStagesOrder) {
  std::mt19937 rng(9);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (const auto& [rows, kept, channels] : std::vector<std::tuple<int, int, int>>{{8, 16, 32}, {7, 5, 37}, {5, 0, 24}, {1, 3, 3}}) {
    std::vector<float> y(size_t(rows) * kept), basis(size_t(kept) * channels), x(size_t(rows) * channels),
        mean(static_cast<size_t>(channels));
    for (auto* v : {&y, &basis, &x, &mean})
      for (float& value : *v) value = normal(rng);
    std::vector<float> sums(size_t(rows) * channels, -1.0f);
    matrix_product(y.data(), rows, kept, kept, basis.data(), channels, channels, sums.data(), channels);
    for (int t = 0; t < rows; ++t)
      for (int c = 0; c < channels; ++c)
        ASSERT_EQ(sums[size_t(t) * channels + c] + mean[size_t(c)],
                  transform_value(y.data() + size_t(t) * kept, kept, basis.data(), channels, c, mean[size_t(c)]))
            << rows << "x" << kept << "x" << channels << " at " << t << ", " << c;
    std::vector<float> centred(x.size()), basis_t(size_t(channels) * kept), components(size_t(rows) * kept);
    for (size_t i = 0; i < x.size(); ++i) centred[i] = x[i] - mean[i % size_t(channels)];
    for (int i = 0; i < kept; ++i)
      for (int c = 0; c < channels; ++c) basis_t[size_t(c) * kept + i] = basis[size_t(i) * channels + c];
    matrix_product(centred.data(), rows, channels, channels, basis_t.data(), kept, kept, components.data(), kept);
    for (int t = 0; t < rows; ++t)
      for (int i = 0; i < kept; ++i)
        ASSERT_EQ(components[size_t(t) * kept + i],
                  transform_component(x.data() + size_t(t) * channels, mean.data(), basis.data() + size_t(i) * channels,
                                      channels))
            << rows << "x" << kept << "x" << channels << " at " << t << ", " << i;
  }
}

class TransformStagesTest : public test_support::TempDirTest {
 protected:
  // A codec over the calibration of `pairs`, saved to a file as the spec needs.
  std::unique_ptr<Codec> codec_for(RopePairs pairs, const std::string& options = "", bool weighed_keys = false) {
    const auto path = dir_ / ("stories_" + std::to_string(int(pairs)) + (weighed_keys ? "_weighed" : "") + ".kvcal");
    stories_calibration(pairs, weighed_keys).save(path);
    return make_codec("transform:cal=" + path.string() + options);
  }
};

// Largest |launched - cpu| relative to max(1, |cpu|), and the escapes seen.
struct Comparison {
  double worst = 0;
  uint64_t escapes = 0;
};

Comparison compare(const Codec& codec, const KvChunkView& chunk, int level, int64_t t0, std::mt19937& rng) {
  const auto bytes = codec.encode(chunk, level, t0);
  const auto cpu = decode_bitstream(bytes, codec.decode_context()).kv.values();
  const auto launched = launch_transform_stages(bytes, codec.decode_context(), rng);
  EXPECT_EQ(launched.values.size(), cpu.size());
  Comparison out{0, launched.escapes};
  for (size_t i = 0; i < cpu.size() && i < launched.values.size(); ++i)
    out.worst = std::max(out.worst, std::abs(double(launched.values[i]) - cpu[i]) / std::max(1.0, std::abs(double(cpu[i]))));
  return out;
}

TEST_F(TransformStagesTest, AShuffledLaunchDecodesAsTheCpuDecoder) {
  std::mt19937 rng(11);
  const auto& context = test_support::kv_fixture().contexts[3];
  for (const RopePairs pairs : {RopePairs::kInterleaved, RopePairs::kRotateHalf, RopePairs::kNone}) {
    const auto codec = codec_for(pairs);
    for (int level : {1, 4, 8, 12})
      for (const auto& [t0, t1] : chunk_ranges(context.shape().tokens, 200)) {  // sinks in the first chunk only
        SCOPED_TRACE("pairs " + std::to_string(int(pairs)) + " level " + std::to_string(level) + " t0 " + std::to_string(t0));
        EXPECT_EQ(compare(*codec, context.chunk(t0, t1), level, t0, rng).worst, 0.0);
      }
  }
}

// Keys weighed by the queries: the analysis encodes, its synthesis decodes (Row::synthesis), on the
// GPU's stages as on the CPU.
TEST_F(TransformStagesTest, WeighedKeysLaunchAsTheCpuCodec) {
  std::mt19937 rng(15);
  const auto& context = test_support::kv_fixture().contexts[3];
  const auto codec = codec_for(RopePairs::kInterleaved, "", /*weighed_keys=*/true);
  const TransformCalibration& cal = *codec->decode_context().transform_calibrations.at(0);
  ASSERT_FALSE(cal.row(0).synthesis.empty());
  for (const int level : {1, 6, 12})
    for (const auto& [t0, t1] : chunk_ranges(context.shape().tokens, 200)) {
      SCOPED_TRACE("level " + std::to_string(level) + " t0 " + std::to_string(t0));
      EXPECT_EQ(compare(*codec, context.chunk(t0, t1), level, t0, rng).worst, 0.0);
      const double d = cal.level_distortions()[size_t(level - 1)];
      EXPECT_EQ(test_support_transform::launch_transform_encode_stages(cal, d, 0, context.chunk(t0, t1), t0, rng),
                codec->encode(context.chunk(t0, t1), level, t0));
    }
}

TEST_F(TransformStagesTest, EscapedCoefficientsDecodeAsTheCpuDecoder) {
  const auto codec = codec_for(RopePairs::kInterleaved);
  KvCache kv = KvCache::from_view(test_support::kv_fixture().contexts[3].chunk(100, 164));
  for (int64_t t = 0; t < 64; t += 3) kv.row_token(int(t % kv.shape().rows()), t)[t % kv.shape().channels()] = 3000.0f;  // far outside the basis' range
  std::mt19937 rng(12);
  const Comparison c = compare(*codec, kv.all(), 12, 100, rng);
  EXPECT_GT(c.escapes, 0u);
  EXPECT_EQ(c.worst, 0.0);
}

TEST_F(TransformStagesTest, ACorruptChunkIsRefusedByTheLauncherAsByTheDecoder) {
  const auto codec = codec_for(RopePairs::kInterleaved);
  const auto bytes = codec->encode(test_support::kv_fixture().contexts[3].chunk(100, 300), 3, 100);
  const auto parsed = parse_bitstream(bytes);
  std::vector<Section> sections;
  for (const auto& section : parsed.sections) {
    sections.push_back({section.tag, std::vector<uint8_t>(section.bytes.begin(), section.bytes.end())});
    if (section.name() == "LOWB") sections.back().bytes.push_back(0);  // a byte the symbols do not use
  }
  const auto corrupt = write_bitstream(parsed.header, sections);
  std::mt19937 rng(13);
  EXPECT_THROW(decode_bitstream(corrupt, codec->decode_context()), BitstreamError);
  EXPECT_THROW(launch_transform_stages(corrupt, codec->decode_context(), rng), BitstreamError);
}

// The encoder's stages, shuffled, against the CPU encoder: the same bitstream except where a
// coefficient lies within float rounding of a quantizer boundary (the CPU projects by GEMM).
TEST_F(TransformStagesTest, AShuffledEncodeLaunchWritesTheCpuEncodersBitstream) {
  std::mt19937 rng(14);
  const auto& context = test_support::kv_fixture().contexts[3];
  for (const RopePairs pairs : {RopePairs::kInterleaved, RopePairs::kRotateHalf}) {
    const auto codec = codec_for(pairs);
    const TransformCalibration& cal = *codec->decode_context().transform_calibrations.at(0);
    for (const int level : {1, 6, 12})
      for (const auto& [t0, t1] : chunk_ranges(context.shape().tokens, 200)) {
        SCOPED_TRACE("pairs " + std::to_string(int(pairs)) + " level " + std::to_string(level) + " t0 " + std::to_string(t0));
        const double d = cal.level_distortions()[size_t(level - 1)];
        const auto launched = test_support_transform::launch_transform_encode_stages(cal, d, /*sub_tokens=*/0, context.chunk(t0, t1), t0, rng);
        EXPECT_EQ(launched, codec->encode(context.chunk(t0, t1), level, t0));
      }
    KvCache outliers = KvCache::from_view(context.chunk(100, 164));  // escapes
    for (int64_t t = 0; t < 64; t += 3) outliers.row_token(int(t % outliers.shape().rows()), t)[t % outliers.shape().channels()] = 3000.0f;
    EXPECT_EQ(test_support_transform::launch_transform_encode_stages(cal, cal.level_distortions().back(), /*sub_tokens=*/0, outliers.all(), 100, rng),
              codec->encode(outliers.all(), int(cal.level_distortions().size()), 100));
  }
}

}  // namespace
}  // namespace kvstream::codec
