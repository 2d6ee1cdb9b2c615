// `kvstream rd` on stories260K: each spec becomes its curve's points, every point is measured as
// `kvstream quality` measures the same (codec, level), the reference curve is always there, and a
// lossless curve says why it has no BD-rate.
#include <gtest/gtest.h>

#include <algorithm>

#include "codec/codec.h"
#include "eval/rate_distortion.h"
#include "eval/text_windows.h"

namespace kvstream::eval {
namespace {

QualityOptions two_windows() {
  QualityOptions o = quality_defaults("stories260K");
  o.contexts = 2;
  o.context_tokens = 128;
  o.continuation_tokens = 16;
  o.greedy_tokens = 2;
  return o;
}

std::vector<const RdMeasurement*> points_of(const RdResult& r, const std::string& curve) {
  std::vector<const RdMeasurement*> out;
  for (const auto& p : r.points)
    if (p.curve == curve) out.push_back(&p);
  return out;
}

const RdCurve& curve_of(const RdResult& r, const std::string& curve) {
  const auto it = std::find_if(r.curves.begin(), r.curves.end(), [&](const RdCurve& c) { return c.curve == curve; });
  if (it == r.curves.end()) throw std::runtime_error("no curve " + curve);
  return *it;
}

TEST(RateDistortion, SweepsEachCurveAndScoresItAsQualityDoes) {
  const auto model = models::load_model("stories260K");
  RdOptions options;
  options.windows = two_windows();
  options.codecs = {"quant", "fp16"};
  const RdResult result = run_rd(model, options);

  const auto quant = points_of(result, "quant");
  ASSERT_EQ(quant.size(), 7u);
  for (size_t i = 0; i < quant.size(); ++i) {
    EXPECT_EQ(quant[i]->point, "bits=" + std::to_string(i + 2));
    EXPECT_EQ(quant[i]->quality.codec, "quant:bits=" + std::to_string(i + 2));
    if (i > 0) {
      EXPECT_GT(quant[i]->quality.bytes, quant[i - 1]->quality.bytes);
    }
  }
  EXPECT_LT(quant.back()->quality.kl_mean, quant.front()->quality.kl_mean);
  EXPECT_EQ(points_of(result, "cachegen").size(), codec::make_codec("cachegen")->levels().size());

  QualityOptions same = options.windows;
  same.codecs = {"quant:bits=4"};
  const auto row = run_quality(model, same).at(0);
  EXPECT_EQ(quant[2]->quality.bytes, row.bytes);
  EXPECT_DOUBLE_EQ(quant[2]->quality.kl_mean, row.kl_mean);
  EXPECT_DOUBLE_EQ(quant[2]->quality.top1_agree, row.top1_agree);

  const auto& quant_curve = curve_of(result, "quant");
  ASSERT_TRUE(quant_curve.bd.has_value()) << quant_curve.no_bd_reason;
  EXPECT_TRUE(std::isfinite(quant_curve.bd->bd_rate));
  EXPECT_GT(quant_curve.bd->kl_hi, quant_curve.bd->kl_lo);
  const auto& reference = curve_of(result, "cachegen");
  ASSERT_TRUE(reference.bd.has_value()) << reference.no_bd_reason;
  EXPECT_NEAR(reference.bd->bd_rate, 0, 1e-12);
  const auto& fp16 = curve_of(result, "fp16");
  EXPECT_FALSE(fp16.bd.has_value());
  EXPECT_NE(fp16.no_bd_reason.find("lossless"), std::string::npos) << fp16.no_bd_reason;
  EXPECT_TRUE(fp16.to_json()["bd_rate_vs_cachegen"].is_null());

  const nlohmann::json point = quant[2]->to_json();
  for (const char* key : {"codec", "point", "spec", "level", "bytes", "ratio_vs_fp16", "kl_mean", "top1_agree", "ppl_delta"})
    EXPECT_TRUE(point.contains(key)) << key;
  EXPECT_EQ(point["codec"], "quant");
  EXPECT_EQ(point["point"], "bits=4");
}

TEST(RateDistortion, AKlRangeNoCurveCoversIsAReasonNotACrash) {
  RdOptions options;
  options.windows = two_windows();
  options.codecs = {"quant:bits=8", "kivi"};
  options.kl_range = std::pair{10.0, 20.0};
  const RdResult result = run_rd(models::load_model("stories260K"), options);
  const auto& one_point = curve_of(result, "quant:bits=8");
  EXPECT_FALSE(one_point.bd.has_value());
  EXPECT_NE(one_point.no_bd_reason.find("at least two points"), std::string::npos) << one_point.no_bd_reason;
  const auto& kivi = curve_of(result, "kivi");
  EXPECT_FALSE(kivi.bd.has_value());
  EXPECT_NE(kivi.no_bd_reason.find("share no KL range within [10"), std::string::npos) << kivi.no_bd_reason;
}

// A transform spec without cal= is fitted on the calibration text inside run_rd (and refused without
// one): the same points as a calibration fitted beforehand on the same windows.
TEST(RateDistortion, ATransformSpecWithoutCalibrationIsFittedOnTheCalibrationText) {
  const auto model = models::load_model("stories260K");
  RdOptions options;
  options.windows = two_windows();
  options.codecs = {"transform:d=0.01"};
  EXPECT_TRUE(codec::transform_needs_calibration("transform:d=0.01"));
  EXPECT_FALSE(codec::transform_needs_calibration("transform:cal=x.kvcal"));
  EXPECT_THROW(run_rd(model, options), std::invalid_argument);

  TextWindows calibration = calibration_windows("stories260K");
  calibration.contexts = 4;
  options.calibration = calibration;
  const RdResult result = run_rd(model, options);
  const auto points = points_of(result, "transform:d=0.01");
  ASSERT_EQ(points.size(), 1u);
  EXPECT_GT(points[0]->quality.kl_mean, 0);
  EXPECT_EQ(points[0]->quality.codec.rfind("transform:", 0), 0u);
  EXPECT_NE(points[0]->quality.codec.find("d=0.01"), std::string::npos);
  EXPECT_LT(points[0]->quality.bytes * 3, points[0]->quality.fp16_bytes);
}

}  // namespace
}  // namespace kvstream::eval
