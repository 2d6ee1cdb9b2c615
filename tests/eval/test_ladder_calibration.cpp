// `kvstream calibrate-ladder` on stories260K (eval/ladder_calibration.h): each level lands near its
// target KL on the calibration windows, the ladder file written is one the codec reads back and
// measures the same on, CacheGen's bins follow the layers' sensitivity, and bad requests are refused
// before the model runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "codec/codec.h"
#include "codec/ladder.h"
#include "codec/transform/transform_calibration.h"
#include "eval/kv_bridge.h"
#include "eval/kv_sensitivity.h"
#include "eval/ladder_calibration.h"
#include "eval/text_windows.h"
#include "tests/test_support.h"

namespace kvstream::eval {
namespace {

class LadderCalibrationTest : public test_support::TempDirTest {
 protected:
  static const models::LoadedModel& model() {
    static const auto m = models::load_model("stories260K");
    return m;
  }
  // The calibration text of `kvstream calibrate`, 16 windows of 256 tokens.
  static LadderCalibrationOptions options(const std::string& codec) {
    LadderCalibrationOptions o;
    const TextWindows text = calibration_windows("stories260K");
    o.windows = quality_defaults("stories260K");
    o.windows.text_path = text.text_path;
    o.windows.first_char = text.first_char;
    o.windows.contexts = 16;
    o.windows.context_tokens = 256;
    o.codec = codec;
    o.target_kl = {0.01, 0.06};
    o.name = "test";
    return o;
  }
  std::string write_ladder(const nlohmann::json& ladder) const {
    const auto path = (dir_ / "ladder.json").string();
    std::ofstream(path) << ladder.dump();
    return path;
  }
};

TEST_F(LadderCalibrationTest, CacheGenLevelsLandOnTheirTargetsAndTheFileReproducesThem) {
  const auto o = options("cachegen");
  const auto result = calibrate_ladder(model(), o);
  ASSERT_EQ(result.levels.size(), 2u);
  EXPECT_EQ(result.levels[0].target_kl, 0.06);  // level 1: the largest KL
  for (const auto& level : result.levels) {
    SCOPED_TRACE("level " + std::to_string(level.level));
    EXPECT_NEAR(level.measured.kl_mean / level.target_kl, 1.0, 0.3);
    EXPECT_LE(level.probes, o.max_probes);
  }
  // Fewer bytes at the larger KL.
  EXPECT_LT(result.levels[0].measured.bytes, result.levels[1].measured.bytes);

  const auto path = write_ladder(result.ladder);
  const auto ladder = codec::Ladder::load(path);
  EXPECT_EQ(ladder.levels(), std::vector<int>({1, 2}));
  const QualityProbe probe(model(), o.windows);
  const std::shared_ptr<const codec::Codec> codec = codec::make_codec("cachegen:ladder=" + path);
  for (const auto& level : result.levels) {
    EXPECT_EQ(ladder.level_spec(level.level, 5), level.bins);
    const auto again = probe.measure({codec, level.level}, false);
    EXPECT_EQ(again.bytes, level.measured.bytes);
    EXPECT_DOUBLE_EQ(again.kl_mean, level.measured.kl_mean);
  }
  // More KL allowed: no layer gets more bins.
  for (int l = 0; l < 5; ++l) {
    EXPECT_LE(result.levels[0].bins.key_bins[size_t(l)], result.levels[1].bins.key_bins[size_t(l)]);
    EXPECT_LE(result.levels[0].bins.value_bins[size_t(l)], result.levels[1].bins.value_bins[size_t(l)]);
  }
  EXPECT_EQ(result.ladder["calibration"]["levels"].size(), 2u);
}

TEST_F(LadderCalibrationTest, TransformLevelsAreDistortionsInOrder) {
  const auto windows = window_kv(model(), {calibration_windows("stories260K").text_path, 8, 256, 2400, 3000, 240000});
  std::vector<codec::KvChunkView> views;
  for (const auto& kv : windows.kv) views.push_back(kv.all());
  codec::TransformCalibration::Options cal_options;
  cal_options.model = "stories260K";
  cal_options.rope = rope_spec(model().model->config());
  const auto cal_path = (dir_ / "stories.kvcal").string();
  codec::TransformCalibration::build(views, cal_options).save(cal_path);

  const auto o = options("transform:cal=" + cal_path);
  const auto result = calibrate_ladder(model(), o);
  ASSERT_EQ(result.levels.size(), 2u);
  for (const auto& level : result.levels) EXPECT_NEAR(level.measured.kl_mean / level.target_kl, 1.0, 0.3);
  const auto ladder = codec::Ladder::load(write_ladder(result.ladder));
  EXPECT_EQ(ladder.codec(), "transform");
  const auto d = ladder.distortions();
  ASSERT_EQ(d.size(), 2u);
  EXPECT_GT(d[0], d[1]);
  EXPECT_EQ(d[0], result.levels[0].knob);
}

// The sensitivity behind CacheGen's bins: a row's "decode error" moves only that row's KL, and no
// error is no KL.
TEST_F(LadderCalibrationTest, RowDecodeErrorKlIsThatRowsAlone) {
  const TextWindows text{calibration_windows("stories260K").text_path, 2, 128, 4000, 3000, 0};
  const WindowKv windows = window_kv(model(), text);
  std::vector<codec::KvCache> decoded = windows.kv;
  const auto unchanged = row_decode_error_kl(*model().model, windows.kv, decoded, windows.tokens, 16);
  for (double kl : unchanged) EXPECT_NEAR(kl, 0.0, 1e-9);
  const int row = 3;
  for (auto& kv : decoded)
    for (int64_t t = 0; t < kv.shape().tokens; ++t)
      for (int c = 0; c < kv.shape().channels(); ++c) kv.row_token(row, t)[c] *= 0.5f;
  const auto kl = row_decode_error_kl(*model().model, windows.kv, decoded, windows.tokens, 16);
  ASSERT_EQ(kl.size(), size_t(windows.kv.front().shape().rows()));
  for (size_t r = 0; r < kl.size(); ++r) {
    if (int(r) == row) EXPECT_GT(kl[r], 1e-4);
    else EXPECT_NEAR(kl[r], 0.0, 1e-9) << "row " << r;
  }
  decoded.pop_back();
  EXPECT_THROW(row_decode_error_kl(*model().model, windows.kv, decoded, windows.tokens, 16), std::invalid_argument);
}

TEST_F(LadderCalibrationTest, BadRequestsAreRefusedBeforeTheModelRuns) {
  auto o = options("cachegen:ladder=generic");
  EXPECT_THROW(calibrate_ladder(model(), o), std::invalid_argument);
  o.codec = "quant:bits=4";
  EXPECT_THROW(calibrate_ladder(model(), o), std::invalid_argument);
  o.codec = "cachegen:cdf=offline";
  EXPECT_THROW(calibrate_ladder(model(), o), std::invalid_argument);
  o.codec = "cachegen";
  o.target_kl = {0.01, -1};
  EXPECT_THROW(calibrate_ladder(model(), o), std::invalid_argument);
  o.target_kl = {0.01, 0.01};
  EXPECT_THROW(calibrate_ladder(model(), o), std::invalid_argument);
}

}  // namespace
}  // namespace kvstream::eval
