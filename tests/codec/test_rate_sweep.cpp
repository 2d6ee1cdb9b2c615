// The points `kvstream rd` measures per codec spec: a ladder's levels, every value of a rate knob
// the spec leaves out (other options kept), or the spec's one setting.
#include <gtest/gtest.h>

#include "codec/rate_sweep.h"

namespace kvstream::codec {
namespace {

std::vector<std::string> labels_and_specs(const std::string& spec) {
  std::vector<std::string> out;
  for (const auto& p : rate_sweep(spec)) out.push_back(p.label + " " + p.codec_level.codec->spec() + "@" + std::to_string(p.codec_level.level));
  return out;
}

TEST(RateSweep, ALadderCodecSweepsItsLevels) {
  const auto points = rate_sweep("cachegen");
  const auto levels = make_codec("cachegen")->levels();
  ASSERT_EQ(points.size(), levels.size());
  for (size_t i = 0; i < points.size(); ++i) {
    EXPECT_EQ(points[i].label, "level=" + std::to_string(levels[i]));
    EXPECT_EQ(points[i].codec_level.level, levels[i]);
  }
}

TEST(RateSweep, AKnobTheSpecLeavesOutIsSweptWithTheOtherOptionsKept) {
  EXPECT_EQ(labels_and_specs("quant"),
            (std::vector<std::string>{"bits=2 quant:bits=2@1", "bits=3 quant:bits=3@1", "bits=4 quant:bits=4@1",
                                      "bits=5 quant:bits=5@1", "bits=6 quant:bits=6@1", "bits=7 quant:bits=7@1",
                                      "bits=8 quant:bits=8@1"}));
  const auto kivi = labels_and_specs("kivi:group=64");
  ASSERT_EQ(kivi.size(), 2u);
  EXPECT_EQ(kivi[0].substr(0, 7), "bits=2 ");
  EXPECT_NE(kivi[0].find("group=64"), std::string::npos) << kivi[0];
  EXPECT_NE(kivi[1].find("bits=4"), std::string::npos) << kivi[1];
}

TEST(RateSweep, AKnobGivenOrALosslessCodecIsOnePoint) {
  EXPECT_EQ(labels_and_specs("quant:bits=8"), std::vector<std::string>{"level=1 quant:bits=8@1"});
  EXPECT_EQ(labels_and_specs("fp16"), std::vector<std::string>{"level=1 fp16@1"});
  EXPECT_EQ(rate_sweep("zstd").size(), 1u);
}

TEST(RateSweep, ABadSpecIsAnError) {
  EXPECT_THROW(rate_sweep("nope"), std::invalid_argument);
  EXPECT_THROW(rate_sweep("quant:bogus=1"), std::invalid_argument);
  EXPECT_THROW(rate_sweep("kivi:bits=3"), std::invalid_argument);
}

}  // namespace
}  // namespace kvstream::codec
