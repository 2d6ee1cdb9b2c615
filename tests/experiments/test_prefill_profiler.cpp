// The prefill cost model: the fit recovers known coefficients, the analytic profile follows its
// FLOP formula, and a measured profile of stories260K is complete and positive.
#include <gtest/gtest.h>

#include "architectures.h"
#include "model_catalog.h"
#include "prefill_profiler.h"

namespace kvstream::experiments {
namespace {

TEST(PrefillProfiler, FitRecoversKnownCoefficients) {
  const PrefillCostModel truth{0.002, 3e-4, 5e-8, 0};
  std::vector<PrefillPoint> points;
  for (int64_t p : {0, 500, 2000})
    for (int64_t n : {10, 100, 1000}) points.push_back({p, n, truth.seconds(double(p), double(n))});
  const auto fit = fit_prefill_cost(points);
  EXPECT_NEAR(fit.a, truth.a, 1e-9);
  EXPECT_NEAR(fit.b, truth.b, 1e-11);
  EXPECT_NEAR(fit.c, truth.c, 1e-14);
  EXPECT_LT(fit.rms_relative_error, 1e-9);
  EXPECT_THROW(fit_prefill_cost({points[0], points[1]}), std::invalid_argument);
}

TEST(PrefillProfiler, AnalyticProfileFollowsTheFlopCount) {
  const auto config = models::architecture("mistral-7b");
  const GpuSpec gpu{"test", 100e12, 0.5};
  ProfileGrid grid;
  grid.prefix_tokens = {0, 1000};
  grid.chunk_tokens = {100};
  const auto points = analytic_prefill(config, gpu, grid);
  ASSERT_EQ(points.size(), 2u);
  // 32 layers x 2 x 100 tokens x ~218M weights per layer / 50 TFLOP/s ~ 28 ms without a prefix.
  EXPECT_NEAR(points[0].seconds, 0.028, 0.002);
  // The prefix adds 32 x 4 x 100 x 1000 x 4096 FLOPs of attention.
  EXPECT_NEAR(points[1].seconds - points[0].seconds, 32 * 4.0 * 100 * 1000 * 4096 / 50e12, 1e-6);
  EXPECT_THROW(models::architecture("gpt-5"), std::invalid_argument);
}

TEST(PrefillProfiler, MeasuredProfileOfStories260K) {
  const auto model = load_model("stories260K");
  ProfileGrid grid;
  grid.prefix_tokens = {0, 128, 480};
  grid.chunk_tokens = {8, 64};
  grid.repetitions = 1;
  const auto points = measure_prefill(*model.model, grid, model.model->config().n_layers);
  EXPECT_EQ(points.size(), 5u);  // 480 + 64 > 512 is skipped
  for (const auto& p : points) EXPECT_GT(p.seconds, 0);
  const auto json = prefill_profile_json("measured", "cpu", model.model->config(), 5, points, "test");
  EXPECT_EQ(json["points"].size(), 5u);
  EXPECT_TRUE(json["prefill_cost_model"].contains("c"));
}

}  // namespace
}  // namespace kvstream::experiments
