// The transform codec's rANS groups (codec/FORMAT.md §3a): a row's coded tokens in sub-chunks, by
// default the fewest tokens that give each state 2,048 symbols, or sub=N; any layout decodes to the
// same values, the shuffled stage launchers agree with the CPU codec on it, and a version-2 bitstream
// (one group per row), a chunk of sinks only included, still decodes.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "codec/codec.h"
#include "codec/format/bitstream.h"
#include "codec/format/bitstream_error.h"
#include "codec/transform/transform_payload.h"
#include "common/half.h"
#include "tests/codec/transform/transform_stage_launcher.h"

namespace kvstream::codec {
namespace {

using test_support_transform::as_version_2;
using test_support_transform::launch_transform_encode_stages;
using test_support_transform::launch_transform_stages;
using test_support_transform::stories_calibration;

TEST(TransformGroups, TheDefaultSubChunkGivesEachStateTwoThousandSymbols) {
  EXPECT_EQ(transform_default_sub_tokens(1024), 16);   // Mistral-7B at full rank: 64 groups per 1,024 tokens
  EXPECT_EQ(transform_default_sub_tokens(192), 128);   // SmolLM2-135M at full rank
  EXPECT_EQ(transform_default_sub_tokens(32), 512);    // stories260K at full rank
  EXPECT_EQ(transform_default_sub_tokens(1), 16384);
  EXPECT_EQ(transform_default_sub_tokens(0), 65536);   // a row that keeps nothing
}

TEST(TransformGroups, RowsSplitIntoSubChunksAndRowsThatKeepNothingHaveNone) {
  const TransformCalibration cal = stories_calibration(RopePairs::kInterleaved);
  std::vector<TransformRowPlan> plans;
  for (int r = 0; r < cal.layers() * 2; ++r) plans.emplace_back(cal, r, cal.level_distortions().back(), 16);
  plans[3].classes.clear();  // keeps nothing
  const int64_t coded = 100;
  const TransformGroups groups = transform_groups(plans, coded, /*one_per_row=*/false);
  ASSERT_EQ(groups.size(), size_t(2 * cal.layers() - 1) * 7);  // ceil(100 / 16) per row that keeps anything
  uint64_t symbols = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    EXPECT_NE(groups.row[g], 3);
    EXPECT_EQ(groups.symbol_start[g], symbols);
    EXPECT_EQ(groups.symbols(g), uint32_t(g % 7 == 6 ? 4 : 16) * uint32_t(plans[size_t(groups.row[g])].kept()));
    symbols += groups.symbols(g);
  }
  EXPECT_EQ(groups.symbol_start.back(), symbols);
  const TransformGroups version_2 = transform_groups(plans, coded, /*one_per_row=*/true);
  ASSERT_EQ(version_2.size(), plans.size());  // the row that keeps nothing too, with no symbols
  EXPECT_EQ(version_2.symbols(3), 0u);
  EXPECT_EQ(version_2.symbol_start.back(), symbols);
  EXPECT_EQ(transform_groups(plans, 0, false).size(), 0u);  // a chunk of sinks only
  EXPECT_EQ(transform_groups(plans, 0, true).size(), plans.size());
}

class TransformGroupsTest : public test_support::TempDirTest {
 protected:
  TransformGroupsTest() : cal_(stories_calibration(RopePairs::kInterleaved)) {}
  void SetUp() override {
    TempDirTest::SetUp();
    cal_.save(path());
  }
  std::string path() const { return (dir_ / "stories.kvcal").string(); }
  std::unique_ptr<Codec> codec(const std::string& options = "") const { return make_codec("transform:cal=" + path() + options); }
  TransformCalibration cal_;
};

// Same symbols, other groups: the values are equal whatever the sub-chunk, and every group of a state
// costs a 4-byte flush.
TEST_F(TransformGroupsTest, EverySubChunkDecodesToTheSameValues) {
  const auto chunk = test_support::kv_fixture().contexts[3].chunk(0, 300);  // sinks, then 300 - S coded tokens
  for (const int level : {1, 6, 12}) {
    SCOPED_TRACE("level " + std::to_string(level));
    const auto base = codec();
    const auto reference = decode_bitstream(base->encode(chunk, level, 0), base->decode_context()).kv.values();
    size_t previous_bytes = 0;
    for (const int sub : {65536, 64, 16, 1}) {
      const auto with_sub = codec(",sub=" + std::to_string(sub));
      const auto bytes = with_sub->encode(chunk, level, 0);
      const TransformPayload p = parse_transform_payload(parse_bitstream(bytes), with_sub->decode_context());
      size_t expected_groups = 0;
      for (const TransformRowPlan& plan : p.rows) {
        EXPECT_EQ(plan.sub_tokens, sub);
        expected_groups += plan.kept() > 0 ? size_t((p.coded_tokens() + sub - 1) / sub) : 0;
      }
      EXPECT_EQ(p.groups.size(), expected_groups) << "sub " << sub;
      EXPECT_EQ(decode_bitstream(bytes, with_sub->decode_context()).kv.values(), reference) << "sub " << sub;
      EXPECT_GT(bytes.size(), previous_bytes) << "sub " << sub;
      previous_bytes = bytes.size();
    }
  }
}

// The CPU decoder batches groups across rows (and reuses a row's lookups for its groups): the
// shuffled stages, which decode each group on its own, must agree with it, and the encoder's stages
// must write the CPU encoder's bytes.
TEST_F(TransformGroupsTest, TheStageLaunchersAgreeWithTheCpuCodecOnSubChunks) {
  std::mt19937 rng(21);
  const auto& context = test_support::kv_fixture().contexts[3];
  for (const int sub : {16, 48 /* refused */, 128})
    for (const int level : {2, 12}) {
      if (sub == 48) {
        EXPECT_THROW(codec(",sub=48"), std::invalid_argument);
        continue;
      }
      SCOPED_TRACE("sub " + std::to_string(sub) + " level " + std::to_string(level));
      const auto c = codec(",sub=" + std::to_string(sub));
      const auto bytes = c->encode(context.chunk(0, 300), level, 0);
      EXPECT_EQ(launch_transform_stages(bytes, c->decode_context(), rng).values,
                decode_bitstream(bytes, c->decode_context()).kv.values());
      EXPECT_EQ(launch_transform_encode_stages(cal_, cal_.level_distortions()[size_t(level - 1)], sub, context.chunk(0, 300), 0, rng),
                bytes);
    }
}

TEST_F(TransformGroupsTest, VersionTwoBitstreamsStillDecode) {
  const auto c = codec(",sub=65536");
  for (const int level : {1, 12}) {
    const auto bytes = c->encode(test_support::kv_fixture().contexts[3].chunk(0, 300), level, 0);
    const auto old = as_version_2(bytes, c->decode_context());
    ASSERT_EQ(parse_bitstream(old).version, 2);
    EXPECT_EQ(decode_bitstream(old, c->decode_context()).kv.values(), decode_bitstream(bytes, c->decode_context()).kv.values());
    std::mt19937 rng(22);
    EXPECT_EQ(launch_transform_stages(old, c->decode_context(), rng).values, decode_bitstream(bytes, c->decode_context()).kv.values());
  }
}

// A chunk of sink tokens only codes no symbol: no group in version 3; in version 2 every row that
// keeps anything had a group of no symbols (its 8 states' flush).
TEST_F(TransformGroupsTest, AChunkOfSinksOnlyHasNoGroups) {
  const auto c = codec();
  const auto chunk = test_support::kv_fixture().contexts[3].chunk(0, cal_.sink_tokens());
  const auto bytes = c->encode(chunk, 6, 0);
  const ParsedBitstream parsed = parse_bitstream(bytes);
  EXPECT_EQ(parsed.section("GRPS").size(), 0u);
  EXPECT_EQ(parsed.section("RANS").size(), 0u);
  const auto decoded = decode_bitstream(bytes, c->decode_context()).kv;
  for (int r = 0; r < decoded.shape().rows(); ++r)
    for (int t = 0; t < cal_.sink_tokens(); ++t)
      EXPECT_EQ(decoded.row_token(r, t)[0], common::half_to_float(common::float_to_half(chunk.token(r, t)[0])));
  const auto old = as_version_2(bytes, c->decode_context());
  EXPECT_GT(parse_bitstream(old).section("RANS").size(), 0u);  // the rows' empty groups
  EXPECT_EQ(decode_bitstream(old, c->decode_context()).kv.values(), decoded.values());
}

TEST_F(TransformGroupsTest, ASubChunkBeyondTheFormatIsRefusedInTprm) {
  const auto c = codec();
  auto bytes = c->encode(test_support::kv_fixture().contexts[3].chunk(0, 64), 3, 0);
  const ParsedBitstream parsed = parse_bitstream(bytes);
  const size_t tprm_at = size_t(parsed.section("TPRM").data() - bytes.data());
  bytes[tprm_at + 20 + 1] = 17;  // row 1: 2^17 tokens
  test_support::repair_crc(bytes);
  try {
    decode_bitstream(bytes, c->decode_context());
    FAIL() << "decoded a sub-chunk of 2^17 tokens";
  } catch (const BitstreamError& e) {
    EXPECT_EQ(e.kind(), BitstreamErrorKind::kBadLevelSpec);
    EXPECT_EQ(e.section(), "TPRM");
    EXPECT_NE(std::string(e.what()).find("row 1's sub-chunk of 2^17 tokens"), std::string::npos) << e.what();
  }
}

TEST_F(TransformGroupsTest, SubMustBeAPowerOfTwoUpToTheChunkLimit) {
  for (const char* bad : {",sub=3", ",sub=0", ",sub=131072"}) EXPECT_THROW(codec(bad), std::invalid_argument) << bad;
  try {
    codec(",sub=96");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("sub=96 is not a power of two"), std::string::npos) << e.what();
  }
  EXPECT_NE(codec(",sub=16")->content_id(), codec()->content_id());  // a layout is part of what a cache keys
}

}  // namespace
}  // namespace kvstream::codec
