// The transform codec on the GPU (codec/transform/gpu_transform_decode.h, codec/transform/gpu_transform_encode.h). With a
// GPU: decoded values equal the stage launcher's (tests/codec/transform/transform_stage_launcher.h) bit for
// bit and the CPU decoder's to float rounding, and encoded bitstreams equal the launcher's byte for
// byte, on held-out stories260K chunks with sinks, both RoPE layouts and escapes, sub-chunk groups,
// version-2 bitstreams and keys weighed by a metric (a synthesis basis); corrupt groups and sections
// are errors. Without one the comparisons are skipped saying why, and what a caller sees is
// checked instead: the error, and the checks that come before any kernel.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "codec/codec.h"
#include "codec/cuda/device_info.h"
#include "codec/format/bitstream.h"
#include "codec/format/bitstream_error.h"
#include "codec/transform/gpu_transform_decode.h"
#include "codec/transform/gpu_transform_encode.h"
#include "tests/codec/transform/transform_stage_launcher.h"

namespace kvstream::codec {
namespace {

using test_support_transform::launch_transform_stages;
using test_support_transform::stories_calibration;

bool have_gpu() { return cuda_device_info().device_count > 0; }

class GpuTransformTest : public test_support::TempDirTest {
 protected:
  std::unique_ptr<Codec> codec_for(RopePairs pairs, const std::string& options = "", bool weighed_keys = false) {
    const auto path = dir_ / ("stories_" + std::to_string(int(pairs)) + (weighed_keys ? "_weighed" : "") + ".kvcal");
    stories_calibration(pairs, weighed_keys).save(path);
    return make_codec("transform:cal=" + path.string() + options);
  }
  std::vector<uint8_t> chunk_bytes(const Codec& codec, int level, int64_t t0, int64_t t1) {
    return codec.encode(test_support::kv_fixture().contexts[3].chunk(t0, t1), level, t0);
  }
};

TEST_F(GpuTransformTest, WithoutAGpuTheErrorSaysWhy) {
  if (have_gpu()) GTEST_SKIP() << "a GPU is present: " << cuda_device_info().description;
  const auto codec = codec_for(RopePairs::kInterleaved);
  try {
    gpu_decode_transform(chunk_bytes(*codec, 3, 0, 200), codec->decode_context());
    ADD_FAILURE() << "decoding without a GPU must fail";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_TRUE(message.find("no GPU") != std::string::npos || message.find("built without CUDA") != std::string::npos)
        << message;
  }
}

TEST_F(GpuTransformTest, OtherCodecsAndAMissingCalibrationAreRefusedBeforeAnyKernel) {
  const auto cachegen = make_codec("cachegen:entropy=rans");
  EXPECT_THROW(gpu_decode_transform(cachegen->encode(test_support::kv_fixture().contexts[3].chunk(0, 64), 2, 0), {}),
               std::runtime_error);
  const auto codec = codec_for(RopePairs::kInterleaved);
  EXPECT_THROW(gpu_decode_transform(chunk_bytes(*codec, 3, 0, 200), {}), BitstreamError);
}

TEST_F(GpuTransformTest, EqualsTheStageLauncherBitForBit) {
  if (!have_gpu()) GTEST_SKIP() << "needs a GPU (" << cuda_device_info().description << "); scripts/gpu-check.sh runs it";
  std::mt19937 rng(21);
  for (const RopePairs pairs : {RopePairs::kInterleaved, RopePairs::kRotateHalf, RopePairs::kNone}) {
    const auto codec = codec_for(pairs);
    for (int level : {1, 4, 8, 12})
      for (const auto& [t0, t1] : chunk_ranges(test_support::kv_fixture().contexts[3].shape().tokens, 200)) {
        SCOPED_TRACE("pairs " + std::to_string(int(pairs)) + " level " + std::to_string(level) + " t0 " + std::to_string(t0));
        const auto bytes = chunk_bytes(*codec, level, t0, t1);
        const auto launched = launch_transform_stages(bytes, codec->decode_context(), rng).values;
        const auto gpu = gpu_decode_transform(bytes, codec->decode_context()).kv.values();
        const auto cpu = decode_bitstream(bytes, codec->decode_context()).kv.values();
        ASSERT_EQ(gpu.size(), launched.size());
        ASSERT_EQ(std::memcmp(gpu.data(), launched.data(), gpu.size() * sizeof(float)), 0);
        for (size_t i = 0; i < cpu.size(); ++i) ASSERT_NEAR(gpu[i], cpu[i], 1e-5 * std::max(1.0f, std::abs(cpu[i])));
      }
  }
}

TEST_F(GpuTransformTest, EscapesDecodeAsTheLauncherDoes) {
  if (!have_gpu()) GTEST_SKIP() << "needs a GPU (" << cuda_device_info().description << ")";
  const auto codec = codec_for(RopePairs::kInterleaved);
  KvCache kv = KvCache::from_view(test_support::kv_fixture().contexts[3].chunk(100, 164));
  for (int64_t t = 0; t < 64; t += 3) kv.row_token(int(t % kv.shape().rows()), t)[t % kv.shape().channels()] = 3000.0f;
  const auto bytes = codec->encode(kv.all(), 12, 100);
  std::mt19937 rng(22);
  const auto launched = launch_transform_stages(bytes, codec->decode_context(), rng);
  ASSERT_GT(launched.escapes, 0u);
  const auto gpu = gpu_decode_transform(bytes, codec->decode_context()).kv.values();
  ASSERT_EQ(std::memcmp(gpu.data(), launched.values.data(), gpu.size() * sizeof(float)), 0);
}

TEST_F(GpuTransformTest, CorruptGroupsAndSectionsAreErrors) {
  if (!have_gpu()) GTEST_SKIP() << "needs a GPU (" << cuda_device_info().description << ")";
  const auto codec = codec_for(RopePairs::kInterleaved);
  const auto bytes = chunk_bytes(*codec, 3, 100, 300);
  const auto parsed = parse_bitstream(bytes);
  for (const std::string name : {"RANS", "LOWB"}) {
    std::vector<Section> sections;
    for (const auto& section : parsed.sections) {
      sections.push_back({section.tag, std::vector<uint8_t>(section.bytes.begin(), section.bytes.end())});
      if (section.name() == "RANS" && name == "RANS") sections.back().bytes[40] ^= 0x5A;  // inside the first group's words
      if (section.name() == "LOWB" && name == "LOWB") sections.back().bytes.push_back(0);  // a byte no symbol uses
    }
    const auto corrupt = write_bitstream(parsed.header, sections);  // a valid checksum over corrupt data
    SCOPED_TRACE(name);
    EXPECT_THROW(decode_bitstream(corrupt, codec->decode_context()), BitstreamError);
    EXPECT_THROW(gpu_decode_transform(corrupt, codec->decode_context()), BitstreamError);
  }
}

TEST_F(GpuTransformTest, EncodingWithoutAGpuSaysWhyAfterTheCpuEncodersChecks) {
  const TransformCalibration cal = stories_calibration(RopePairs::kInterleaved);
  const auto& context = test_support::kv_fixture().contexts[3];
  KvCache bad = KvCache::from_view(context.chunk(100, 164));
  bad.row_token(7, 5)[3] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(gpu_encode_transform(cal, 0.01, /*sub_tokens=*/0, bad.all(), 100), std::invalid_argument);  // before any kernel
  EXPECT_THROW(gpu_encode_transform(cal, 2.0, /*sub_tokens=*/0, context.chunk(0, 64), 0), std::invalid_argument);
  if (have_gpu()) GTEST_SKIP() << "a GPU is present: " << cuda_device_info().description;
  try {
    gpu_encode_transform(cal, 0.01, /*sub_tokens=*/0, context.chunk(0, 64), 0);
    ADD_FAILURE() << "encoding without a GPU must fail";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_TRUE(message.find("no GPU") != std::string::npos || message.find("built without CUDA") != std::string::npos)
        << message;
  }
}

TEST_F(GpuTransformTest, EncodingEqualsTheStageLauncherByteForByte) {
  if (!have_gpu()) GTEST_SKIP() << "needs a GPU (" << cuda_device_info().description << "); scripts/gpu-check.sh runs it";
  std::mt19937 rng(23);
  const auto& context = test_support::kv_fixture().contexts[3];
  for (const RopePairs pairs : {RopePairs::kInterleaved, RopePairs::kRotateHalf, RopePairs::kNone}) {
    const auto codec = codec_for(pairs);
    const TransformCalibration& cal = *codec->decode_context().transform_calibrations.at(0);
    for (int level : {1, 4, 8, 12})
      for (const auto& [t0, t1] : chunk_ranges(context.shape().tokens, 200)) {
        SCOPED_TRACE("pairs " + std::to_string(int(pairs)) + " level " + std::to_string(level) + " t0 " + std::to_string(t0));
        const double d = cal.level_distortions()[size_t(level - 1)];
        const auto gpu = gpu_encode_transform(cal, d, /*sub_tokens=*/0, context.chunk(t0, t1), t0).bitstream;
        ASSERT_EQ(gpu, test_support_transform::launch_transform_encode_stages(cal, d, /*sub_tokens=*/0, context.chunk(t0, t1), t0, rng));
        EXPECT_NO_THROW(decode_bitstream(gpu, codec->decode_context()));
      }
    KvCache outliers = KvCache::from_view(context.chunk(100, 164));  // escapes
    for (int64_t t = 0; t < 64; t += 3) outliers.row_token(int(t % outliers.shape().rows()), t)[t % outliers.shape().channels()] = 3000.0f;
    const double d = cal.level_distortions().back();
    ASSERT_EQ(gpu_encode_transform(cal, d, /*sub_tokens=*/0, outliers.all(), 100).bitstream,
              test_support_transform::launch_transform_encode_stages(cal, d, /*sub_tokens=*/0, outliers.all(), 100, rng));
  }
}

// Keys weighed by the queries: the GPU encodes with the analysis and decodes with the synthesis.
TEST_F(GpuTransformTest, WeighedKeysEqualTheLauncher) {
  if (!have_gpu()) GTEST_SKIP() << "needs a GPU (" << cuda_device_info().description << "); scripts/gpu-check.sh runs it";
  std::mt19937 rng(25);
  const auto& context = test_support::kv_fixture().contexts[3];
  const auto codec = codec_for(RopePairs::kInterleaved, "", /*weighed_keys=*/true);
  const TransformCalibration& cal = *codec->decode_context().transform_calibrations.at(0);
  ASSERT_FALSE(cal.row(0).synthesis.empty());
  for (int level : {1, 8, 12})
    for (const auto& [t0, t1] : chunk_ranges(context.shape().tokens, 200)) {
      SCOPED_TRACE("level " + std::to_string(level) + " t0 " + std::to_string(t0));
      const double d = cal.level_distortions()[size_t(level - 1)];
      const auto bytes = gpu_encode_transform(cal, d, /*sub_tokens=*/0, context.chunk(t0, t1), t0).bitstream;
      ASSERT_EQ(bytes, test_support_transform::launch_transform_encode_stages(cal, d, 0, context.chunk(t0, t1), t0, rng));
      const auto gpu = gpu_decode_transform(bytes, codec->decode_context()).kv.values();
      const auto launched = launch_transform_stages(bytes, codec->decode_context(), rng).values;
      ASSERT_EQ(gpu.size(), launched.size());
      ASSERT_EQ(std::memcmp(gpu.data(), launched.data(), gpu.size() * sizeof(float)), 0);
    }
}

// Many groups per row (sub=16: 16-token sub-chunks), and a version-2 bitstream (one group per row).
TEST_F(GpuTransformTest, SubChunksAndVersionTwoEqualTheLauncher) {
  if (!have_gpu()) GTEST_SKIP() << "needs a GPU (" << cuda_device_info().description << "); scripts/gpu-check.sh runs it";
  std::mt19937 rng(24);
  const auto chunk = test_support::kv_fixture().contexts[3].chunk(0, 300);
  const auto codec = codec_for(RopePairs::kInterleaved, ",sub=16");
  const auto one_group_per_row = codec_for(RopePairs::kInterleaved, ",sub=65536");
  const TransformCalibration& cal = *codec->decode_context().transform_calibrations.at(0);
  for (int level : {2, 12}) {
    SCOPED_TRACE("level " + std::to_string(level));
    const auto bytes = codec->encode(chunk, level, 0);
    const auto launched = launch_transform_stages(bytes, codec->decode_context(), rng).values;
    const auto gpu = gpu_decode_transform(bytes, codec->decode_context()).kv.values();
    ASSERT_EQ(std::memcmp(gpu.data(), launched.data(), gpu.size() * sizeof(float)), 0);
    ASSERT_EQ(gpu_encode_transform(cal, cal.level_distortions()[size_t(level - 1)], 16, chunk, 0).bitstream, bytes);
    const auto old = test_support_transform::as_version_2(one_group_per_row->encode(chunk, level, 0), codec->decode_context());
    const auto gpu_old = gpu_decode_transform(old, codec->decode_context()).kv.values();
    ASSERT_EQ(std::memcmp(gpu_old.data(), launched.data(), gpu.size() * sizeof(float)), 0);
  }
}

}  // namespace
}  // namespace kvstream::codec
