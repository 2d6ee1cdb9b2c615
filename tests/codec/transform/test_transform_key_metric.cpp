// Keys weighed by the queries (TransformCalibration::Options::key_metrics): the fitted analysis and
// synthesis, the .kvcal version 2 that carries them, what reading such a file refuses, and the point
// of it: less error where the metric looks, for the same bytes, on a held-out context.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <tuple>

#include "codec/codec.h"
#include "codec/transform/transform_distortion.h"
#include "tests/codec/transform/calibration_bytes.h"
#include "tests/codec/transform/transform_stage_launcher.h"

namespace kvstream::codec {
namespace {

using test_support_transform::random_key_metrics;
using test_support_transform::stories_calibration;

constexpr int kC = 32;  // the fixture's channels: 2 heads x 16

TEST(KeyMetric, TheSynthesisInvertsTheAnalysisAndIsOrthonormalInTheMetric) {
  const auto cal = stories_calibration(RopePairs::kInterleaved, /*weighed_keys=*/true);
  const auto metrics = random_key_metrics(cal.layers(), cal.kv_heads(), cal.head_dim(), 5);
  const double floor = TransformCalibration::Options{}.key_metric_floor;
  for (int r = 0; r < 2 * cal.layers(); ++r) {
    const auto& row = cal.row(r);
    ASSERT_EQ(row.synthesis.empty(), r >= cal.layers()) << "row " << r;  // K rows only
    if (row.synthesis.empty()) continue;
    const auto& w = row.basis;
    const auto& s = row.synthesis;
    const auto& m = metrics[size_t(r)];
    // M' as the calibration documents it: M scaled to mean eigenvalue 1, the floor added, rescaled.
    double mean_eigenvalue = 0;
    for (int c = 0; c < kC; ++c) mean_eigenvalue += m[size_t(c * kC + c)] / kC;
    const auto scaled = [&](int i, int j) { return (m[size_t(i * kC + j)] / mean_eigenvalue + (i == j ? floor : 0)) / (1 + floor); };
    double inverse_error = 0, metric_error = 0;
    for (int j = 0; j < kC; ++j)
      for (int k = 0; k < kC; ++k) {
        double st_w = 0, s_m_s = 0;  // (S^T W)_jk, (S M' S^T)_jk
        for (int i = 0; i < kC; ++i) st_w += double(s[size_t(i * kC + j)]) * w[size_t(i * kC + k)];
        for (int a = 0; a < kC; ++a)
          for (int b = 0; b < kC; ++b) s_m_s += double(s[size_t(j * kC + a)]) * scaled(a, b) * s[size_t(k * kC + b)];
        inverse_error = std::max(inverse_error, std::abs(st_w - (j == k)));
        metric_error = std::max(metric_error, std::abs(s_m_s - (j == k)));
      }
    EXPECT_LT(inverse_error, 1e-4) << "row " << r;  // the synthesis inverts the analysis
    EXPECT_LT(metric_error, 1e-4) << "row " << r;   // and its components are orthonormal in M'
    for (int i = 1; i < kC; ++i) EXPECT_LE(row.variance[size_t(i)], row.variance[size_t(i - 1)]);
  }
}

TEST(KeyMetric, AFileWithSynthesesIsVersionTwoAndRoundTrips) {
  const auto plain = stories_calibration(RopePairs::kInterleaved).serialize();
  EXPECT_EQ(load_u16(plain.data() + 4), 1);  // no synthesis: the version-1 layout, unchanged
  const auto cal = stories_calibration(RopePairs::kInterleaved, /*weighed_keys=*/true);
  const auto bytes = cal.serialize();
  EXPECT_EQ(load_u16(bytes.data() + 4), 2);
  const auto read = TransformCalibration::parse(bytes, "x.kvcal");
  EXPECT_EQ(read.id(), cal.id());
  EXPECT_NE(read.id(), TransformCalibration::parse(plain, "y.kvcal").id());
  EXPECT_EQ(read.serialize(), bytes);
  EXPECT_EQ(read.row(0).synthesis, cal.row(0).synthesis);
  EXPECT_TRUE(read.row(cal.layers()).synthesis.empty());
}

TEST(KeyMetric, ASynthesisThatDoesNotInvertTheBasisOrABadFlagIsRefused) {
  test_support_transform::CalibrationBytes good{stories_calibration(RopePairs::kInterleaved, /*weighed_keys=*/true).serialize()};
  ASSERT_EQ(good.error(), "no error");
  // Row 0 starts after the header (name "stories260K", 12 levels); its flag follows weight, mean,
  // variance and basis.
  const size_t row0 = 8 + 11 + 6 + 1 + 8 + 4 + 1 + 12 * 8, flag = row0 + 8 + 4 * (2 * kC + kC * kC);
  ASSERT_EQ(good.bytes[flag], 1);
  auto bent = good;
  const size_t value = flag + 1 + 4 * (3 * kC + 5);  // component 3, channel 5 of the synthesis
  bent.put_f32(value, bent.get_f32(value) + 0.5f);
  EXPECT_NE(bent.error().find("x.kvcal: row 0: the synthesis does not invert the basis"), std::string::npos)
      << bent.error();
  auto flagged = good;
  flagged.bytes[flag] = 2;
  EXPECT_NE(flagged.error().find("row 0: synthesis flag 2, 0 or 1 expected"), std::string::npos) << flagged.error();
}

TEST(KeyMetric, BadMetricsAreRefused) {
  const auto& kv = test_support::kv_fixture();
  TransformCalibration::Options options;
  options.model = "stories260K";
  const auto refused = [&](const std::vector<std::vector<double>>& metrics, double floor, const std::string& expected) {
    options.key_metrics = metrics;
    options.key_metric_floor = floor;
    try {
      TransformCalibration::build({kv.contexts[0].all()}, options);
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
      return;
    }
    ADD_FAILURE() << "no error, expected " << expected;
  };
  const auto good = random_key_metrics(5, 2, 16, 1);
  refused({good.begin(), good.begin() + 4}, 0.01, "4 key metrics for 5 layers");
  auto small = good;
  small[2].pop_back();
  refused(small, 0.01, "layer 2's key metric has 1023 entries, C^2 = 1024 needed");
  auto nan = good;
  nan[1][7] = std::numeric_limits<double>::quiet_NaN();
  refused(nan, 0.01, "layer 1's key metric is not finite with a positive trace");
  auto zero = good;
  std::fill(zero[4].begin(), zero[4].end(), 0.0);
  refused(zero, 0.01, "layer 4's key metric is not finite with a positive trace");
  refused(good, 0.0, "key_metric_floor must be in (0, 1]");
  refused(good, 1.5, "key_metric_floor must be in (0, 1]");
}

// The metric-weighted error e^T M e of the keys of `decoded` (RoPE undone) against `original`,
// summed over coded tokens and layers.
double weighted_key_error(const TransformCalibration& cal, const std::vector<std::vector<double>>& metrics,
                          const KvChunkView& original, const KvCache& decoded, int64_t t0) {
  const KvShape s = original.shape();
  const RopeAngles angles(cal.rope(), s.head_dim, t0, s.tokens);
  double total = 0;
  for (int layer = 0; layer < s.layers; ++layer)
    for (int64_t t = cal.sink_tokens(); t < s.tokens; ++t) {
      std::vector<float> a(original.token(layer, t), original.token(layer, t) + kC);
      std::vector<float> b(decoded.token(layer, KvPart::kKey, t), decoded.token(layer, KvPart::kKey, t) + kC);
      angles.rotate(a.data(), s.kv_heads, t, true);
      angles.rotate(b.data(), s.kv_heads, t, true);
      for (int i = 0; i < kC; ++i)
        for (int j = 0; j < kC; ++j)
          total += (double(a[size_t(i)]) - b[size_t(i)]) * metrics[size_t(layer)][size_t(i * kC + j)] *
                   (double(a[size_t(j)]) - b[size_t(j)]);
    }
  return total;
}

class KeyMetricTest : public test_support::TempDirTest {};

TEST_F(KeyMetricTest, WeighedKeysHaveLessWeightedErrorForTheirBytesOnHeldOutText) {
  const auto plain = stories_calibration(RopePairs::kInterleaved);
  const auto weighed = stories_calibration(RopePairs::kInterleaved, /*weighed_keys=*/true);
  plain.save(dir_ / "plain.kvcal");
  weighed.save(dir_ / "weighed.kvcal");
  const auto metrics = random_key_metrics(plain.layers(), plain.kv_heads(), plain.head_dim(), 5);
  const auto chunk = test_support::kv_fixture().contexts[3].all();
  const auto measure = [&](const TransformCalibration& cal, double d) {
    const auto file = dir_ / (&cal == &plain ? "plain.kvcal" : "weighed.kvcal");
    const auto codec = make_codec("transform:cal=" + file.string() + ",d=" + distortion_text(d));
    const auto bytes = codec->encode(chunk, 1, 0);
    return std::pair{double(bytes.size()), weighted_key_error(cal, metrics, chunk,
                                                              decode_bitstream(bytes, codec->decode_context()).kv, 0)};
  };
  // At each distortion of the plain codec, the weighed codec at a distortion that spends no more bytes
  // has less metric-weighted key error: the search steps d by 2^(1/4) from 4x above.
  for (const double d : {0.05, 0.01, 0.001}) {
    const auto [plain_bytes, plain_error] = measure(plain, d);
    double weighed_d = 4 * d;
    auto [bytes, error] = measure(weighed, weighed_d);
    while (true) {
      const auto next = measure(weighed, weighed_d / std::sqrt(std::sqrt(2.0)));
      if (next.first > plain_bytes) break;
      weighed_d /= std::sqrt(std::sqrt(2.0));
      std::tie(bytes, error) = next;
    }
    EXPECT_LE(bytes, plain_bytes) << "d " << d;
    EXPECT_LT(error, 0.8 * plain_error) << "d " << d << ": " << bytes << " bytes against " << plain_bytes;
  }
}

}  // namespace
}  // namespace kvstream::codec
