// The small pieces every codec stands on: CRC32C, fp16/bf16 conversion, KvCache views, codec specs,
// and safetensors I/O (round trips in every dtype, and clear errors for malformed files).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "codec/codec.h"
#include "codec/format/crc32c.h"
#include "codec/format/kv_dump.h"
#include "codec/kv_cache.h"
#include "common/half.h"
#include "tests/test_support.h"

namespace kvstream::codec {
namespace {

namespace fs = std::filesystem;

TEST(Crc32c, KnownVectors) {
  const std::string digits = "123456789";
  EXPECT_EQ(crc32c(std::span(reinterpret_cast<const uint8_t*>(digits.data()), digits.size())), 0xE3069283u);
  std::vector<uint8_t> zeros(32, 0);
  EXPECT_EQ(crc32c(zeros), 0x8A9136AAu);  // RFC 3720 B.4
  std::vector<uint8_t> ones(32, 0xFF);
  EXPECT_EQ(crc32c(ones), 0x62A8AB43u);
}

// The instruction's path (where the CPU has SSE4.2) and the tables agree on every length, alignment
// and seed.
TEST(Crc32c, TheFastPathEqualsTheTables) {
  std::vector<uint8_t> bytes(1000);
  uint32_t state = 12345;
  for (auto& b : bytes) b = static_cast<uint8_t>((state = state * 1664525u + 1013904223u) >> 24);
  for (size_t start : {0, 1, 3, 7})
    for (size_t length : {0, 1, 7, 8, 9, 15, 16, 63, 64, 65, 500, 993})
      for (uint32_t seed : {0u, 0x9E3779B9u}) {
        const auto part = std::span<const uint8_t>(bytes).subspan(start, length);
        ASSERT_EQ(crc32c(part, seed), crc32c_portable(part, seed)) << start << " " << length << " " << seed;
      }
}

TEST(Half, EveryFiniteHalfRoundTripsExactly) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7C00u) == 0x7C00u) continue;  // inf / NaN
    const float f = common::half_to_float(static_cast<uint16_t>(h));
    ASSERT_EQ(common::float_to_half(f), h == 0x8000u ? 0x8000u : h) << std::hex << h;
  }
}

TEST(Half, RoundsToNearestEvenAndDirectedRoundingBracketsTheValue) {
  EXPECT_EQ(common::float_to_half(1.0f + 1.0f / 2048), 0x3C00u);      // halfway between 1 and 1+2^-10: even (1)
  EXPECT_EQ(common::float_to_half(1.0f + 3.0f / 2048), 0x3C02u);      // halfway, rounds up to the even mantissa
  EXPECT_EQ(common::float_to_half(65520.0f), 0x7C00u);                // rounds past 65504: inf
  EXPECT_EQ(common::float_to_half(5.9604645e-08f), 0x0001u);          // smallest subnormal
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-60000.0f, 60000.0f);
  for (int i = 0; i < 100000; ++i) {
    const float x = dist(rng) * (i % 3 == 0 ? 1e-6f : 1.0f);
    const float up = common::half_to_float(common::float_to_half_up(x));
    const float down = common::half_to_float(common::float_to_half_down(x));
    ASSERT_GE(up, std::fabs(x));
    ASSERT_LE(down, x);
    ASSERT_LE(std::fabs(common::half_to_float(common::float_to_half(x)) - x), std::max(up - std::fabs(x), x - down) + 1e-12f);
  }
}

TEST(Half, Bf16RoundsToNearestEven) {
  EXPECT_EQ(common::float_to_bf16(1.0f), 0x3F80u);
  EXPECT_EQ(common::bf16_to_float(common::float_to_bf16(3.140625f)), 3.140625f);
  EXPECT_EQ(common::float_to_bf16(std::bit_cast<float>(0x3F808000u)), 0x3F80u);  // tie to even
  EXPECT_EQ(common::float_to_bf16(std::bit_cast<float>(0x3F818000u)), 0x3F82u);
}

KvCache ramp_cache(KvShape shape) {
  KvCache kv(shape);
  // Multiples of 1/2 in [-16, 15.5]: exact in fp16, bf16 and fp32.
  for (size_t i = 0; i < kv.values().size(); ++i) kv.values()[i] = static_cast<float>(i % 64) * 0.5f - 16.0f;
  return kv;
}

TEST(KvCache, ChunkViewsAndConcatenationRebuildTheCache) {
  const KvCache kv = ramp_cache({3, 2, 4, 37});
  std::vector<KvCache> parts;
  for (const auto& [t0, t1] : chunk_ranges(37, 10)) parts.push_back(KvCache::from_view(kv.chunk(t0, t1)));
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts.back().shape().tokens, 7);
  const KvCache joined = KvCache::concat_tokens(parts);
  EXPECT_EQ(joined.shape(), kv.shape());
  EXPECT_EQ(joined.values(), kv.values());
  // CacheGen row order: row r < L is K of layer r, row L + l is V of layer l.
  const auto view = kv.chunk(5, 9);
  EXPECT_EQ(view.token(1, 2), kv.token(1, KvPart::kKey, 7));
  EXPECT_EQ(view.token(3 + 2, 0), kv.token(2, KvPart::kValue, 5));
  EXPECT_THROW(kv.chunk(5, 5), std::out_of_range);
  EXPECT_THROW(kv.chunk(0, 38), std::out_of_range);
}

TEST(CodecSpecs, UnknownCodecsAndBadOptionsAreRefused) {
  EXPECT_EQ(make_codec("cachegen:ladder=generic,delta")->spec(), "cachegen:delta,ladder=generic");
  EXPECT_THROW(make_codec("nosuch"), std::invalid_argument);
  EXPECT_THROW(make_codec("cachegen:delta=1"), std::invalid_argument);
  EXPECT_THROW(make_codec("cachegen:cdf=offline"), std::invalid_argument);  // no table
  EXPECT_THROW(make_codec("cachegen:ladder=/no/such/ladder.json"), std::invalid_argument);
}

class SafetensorsTest : public ::testing::Test {
 protected:
  fs::path dir_ = fs::temp_directory_path() / ("kvstream_st_" + std::to_string(::getpid()));
  void SetUp() override { fs::create_directories(dir_); }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write_raw(const std::string& name, const std::string& header, size_t data_bytes) {
    std::ofstream out(dir_ / name, std::ios::binary);
    const uint64_t len = header.size();
    out.write(reinterpret_cast<const char*>(&len), 8);
    out << header << std::string(data_bytes, '\0');
    return dir_ / name;
  }
};

TEST_F(SafetensorsTest, KvRoundTripsInEveryDtypeWithMetadataAndTokens) {
  const KvCache kv = ramp_cache({2, 3, 4, 9});
  const std::vector<int32_t> tokens = {1, 5, 9, 13, 17, 21, 25, 29, 33};
  for (auto dtype : {SourceDtype::kFp16, SourceDtype::kBf16, SourceDtype::kFp32}) {
    const auto path = dir_ / "kv.safetensors";
    save_kv(path, kv, dtype, {{"model", "test"}}, tokens);
    const KvFile back = load_kv(path);
    ASSERT_EQ(back.contexts.size(), 1u);
    EXPECT_EQ(back.dtype, dtype);
    EXPECT_EQ(back.contexts[0].shape(), kv.shape());  // H and D come back from the metadata
      EXPECT_EQ(back.contexts[0].values(), kv.values());
    EXPECT_EQ(back.tokens.at(0), tokens);
    EXPECT_EQ(back.metadata.at("model"), "test");
    EXPECT_FALSE(test_support::temporary_left(path));
  }
}

TEST_F(SafetensorsTest, MalformedFilesGiveErrorsNamingTheProblem) {
  auto expect_error = [](const fs::path& p, const std::string& needle) {
    try {
      load_kv(p);
      FAIL() << "no error for " << p;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(p.filename().string()), std::string::npos) << e.what();
    }
  };
  expect_error(write_raw("json.st", "{not json", 0), "header: invalid JSON");
  expect_error(write_raw("offsets.st", R"({"kv":{"dtype":"F16","shape":[1,2,1,4],"data_offsets":[0,64]}})", 16),
               "outside");
  expect_error(write_raw("count.st", R"({"kv":{"dtype":"F16","shape":[1,2,1,4],"data_offsets":[0,8]}})", 8), "bytes for");
  expect_error(write_raw("dtype.st", R"({"kv":{"dtype":"I32","shape":[1,2,1,4],"data_offsets":[0,32]}})", 32), "dtype");
  expect_error(write_raw("rank.st", R"({"kv":{"dtype":"F16","shape":[2,1,4],"data_offsets":[0,16]}})", 16), "[L,2,T,C]");
  expect_error(write_raw("nokv.st", R"({"x":{"dtype":"F16","shape":[1],"data_offsets":[0,2]}})", 2), "no tensor");
  expect_error(write_raw("hd.st",
                         R"({"__metadata__":{"H":"3","D":"3"},"kv":{"dtype":"F16","shape":[1,2,1,4],"data_offsets":[0,16]}})",
                         16),
               "H*D");
  // The tensors must tile the data block: no overlap, no byte that no tensor owns.
  expect_error(write_raw("overlap.st",
                         R"({"kv":{"dtype":"F16","shape":[1,2,1,4],"data_offsets":[0,16]},)"
                         R"("x":{"dtype":"U8","shape":[8],"data_offsets":[8,16]}})",
                         16),
               "tensors \"kv\" and \"x\" overlap in the data block at byte 8");
  expect_error(write_raw("trailing.st", R"({"kv":{"dtype":"F16","shape":[1,2,1,4],"data_offsets":[0,16]}})", 24),
               "bytes [16, 24) of the data block belong to no tensor");
  expect_error(write_raw("hole.st",
                         R"({"kv":{"dtype":"F16","shape":[1,2,1,4],"data_offsets":[8,24]},)"
                         R"("x":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})",
                         24),
               "bytes [4, 8) of the data block belong to no tensor");
  expect_error(write_raw("twice.st",
                         R"({"kv":{"dtype":"F16","shape":[1,2,1,4],"data_offsets":[0,16]},)"
                         R"("kv":{"dtype":"F16","shape":[1,2,1,4],"data_offsets":[0,16]}})",
                         16),
               "duplicate key \"kv\"");
  // 2^62 + 4: as a wrapping product it would have matched C = 4.
  expect_error(write_raw("overflow.st",
                         R"({"__metadata__":{"H":"4611686018427387908","D":"1"},)"
                         R"("kv":{"dtype":"F16","shape":[1,2,1,4],"data_offsets":[0,16]}})",
                         16),
               "metadata H = \"4611686018427387908\": expected an integer in 1..65536");
  std::ofstream(dir_ / "short.st") << "abc";
  expect_error(dir_ / "short.st", "too short");
  {
    std::ofstream out(dir_ / "huge.st", std::ios::binary);
    const uint64_t len = 1ull << 40;
    out.write(reinterpret_cast<const char*>(&len), 8);
  }
  expect_error(dir_ / "huge.st", "exceeds the file");
  EXPECT_THROW(load_kv(dir_ / "missing.st"), std::runtime_error);
}

TEST_F(SafetensorsTest, ReadsTheSharedFixtureLayout) {
  // [N, L, 2, T, C] with N contexts, as kv/stories260K_tinystories_4x512.safetensors.
  const std::string header = R"({"__metadata__":{"H":"2","D":"2"},"kv":{"dtype":"F16","shape":[3,1,2,2,4],"data_offsets":[0,96]}})";
  const KvFile kv = load_kv(write_raw("multi.st", header, 96));
  ASSERT_EQ(kv.contexts.size(), 3u);
  EXPECT_EQ(kv.contexts[2].shape(), (KvShape{1, 2, 2, 2}));
}

}  // namespace
}  // namespace kvstream::codec
