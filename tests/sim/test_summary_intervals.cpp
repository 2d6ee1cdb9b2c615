// The 95 % intervals of summary.csv (sim/summary_intervals.h): Wilson's interval at known values, the
// bootstrap deterministic for a seed, degenerate where there is one value or none, and covering the
// true mean about 95 % of the time.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "sim/summary.h"
#include "sim/summary_intervals.h"

namespace kvstream::sim {
namespace {

TEST(WilsonInterval, KnownValues) {
  const Interval none = wilson_interval(0, 10), half = wilson_interval(5, 10), all = wilson_interval(20, 20);
  EXPECT_EQ(none.lo, 0);
  EXPECT_NEAR(none.hi, 0.2775, 1e-4);
  EXPECT_NEAR(half.lo, 0.2366, 1e-4);
  EXPECT_NEAR(half.hi, 0.7634, 1e-4);
  EXPECT_NEAR(all.lo, 0.8389, 1e-4);
  EXPECT_EQ(all.hi, 1);
  EXPECT_TRUE(std::isnan(wilson_interval(0, 0).lo));
  EXPECT_LT(wilson_interval(200, 1000).hi - wilson_interval(200, 1000).lo, half.hi - half.lo);
}

TEST(SummaryIntervals, TheBootstrapIsDeterministicAndDegenerateWhereItMustBe) {
  const std::vector<double> ttfts = {1.2, 0.8, 3.1, 0.9, 1.1, 2.0, 0.7, 1.4};
  const SummaryIntervals a = summary_intervals(ttfts, 10, 3, 42), b = summary_intervals(ttfts, 10, 3, 42);
  EXPECT_EQ(a.mean_ttft_s.lo, b.mean_ttft_s.lo);
  EXPECT_EQ(a.p95_ttft_s.hi, b.p95_ttft_s.hi);
  std::vector<double> sorted = ttfts;
  std::sort(sorted.begin(), sorted.end());
  double mean = 0;
  for (const double t : ttfts) mean += t / double(ttfts.size());
  EXPECT_LE(a.mean_ttft_s.lo, mean);
  EXPECT_GE(a.mean_ttft_s.hi, mean);
  EXPECT_LE(a.p50_ttft_s.lo, percentile(sorted, 50));
  EXPECT_GE(a.p50_ttft_s.hi, percentile(sorted, 50));
  EXPECT_LE(a.p95_ttft_s.hi, sorted.back());  // a resample holds no larger value
  EXPECT_EQ(a.slo_violation_rate.lo, wilson_interval(3, 10).lo);
  const SummaryIntervals one = summary_intervals({2.5}, 1, 0, 7);
  EXPECT_EQ(one.mean_ttft_s.lo, 2.5);
  EXPECT_EQ(one.p95_ttft_s.hi, 2.5);
  const SummaryIntervals empty = summary_intervals({}, 3, 3, 7);  // nothing completed
  EXPECT_TRUE(std::isnan(empty.mean_ttft_s.lo));
  EXPECT_NEAR(empty.slo_violation_rate.lo, 0.4385, 1e-4);
}

// On exponential TTFTs of known mean 1: the mean's interval from 40 requests covers it in about 95 %
// of 400 samples (the bootstrap's percentile interval runs a little short at small n), and the
// width shrinks about as 1/sqrt(n).
TEST(SummaryIntervals, TheMeansIntervalCoversTheTrueMean) {
  std::mt19937_64 random(2026);
  std::exponential_distribution<double> ttft(1.0);
  int covered = 0;
  const int samples = 400;
  for (int s = 0; s < samples; ++s) {
    std::vector<double> ttfts(40);
    for (auto& t : ttfts) t = ttft(random);
    const Interval i = summary_intervals(ttfts, ttfts.size(), 0, uint64_t(s)).mean_ttft_s;
    covered += i.lo <= 1.0 && 1.0 <= i.hi;
  }
  EXPECT_GE(covered, int(0.89 * samples)) << covered << " of " << samples;
  EXPECT_LE(covered, int(0.99 * samples)) << covered << " of " << samples;
  std::vector<double> small(25), large(400);
  for (auto& t : small) t = ttft(random);
  for (auto& t : large) t = ttft(random);
  const Interval narrow = summary_intervals(large, large.size(), 0, 1).mean_ttft_s;
  const Interval wide = summary_intervals(small, small.size(), 0, 1).mean_ttft_s;
  EXPECT_LT(narrow.hi - narrow.lo, 0.5 * (wide.hi - wide.lo));
}

}  // namespace
}  // namespace kvstream::sim
