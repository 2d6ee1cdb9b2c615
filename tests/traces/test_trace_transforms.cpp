// Transforms: scale, offset, clip, window, concatenate, each against hand-computed segments.
#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <stdexcept>

#include "traces/trace_transforms.h"

namespace kvstream::traces {
namespace {

BandwidthTrace step() { return BandwidthTrace({{1.0, 10e6}, {1.0, 2e6}}, "step"); }

std::vector<double> capacities(const BandwidthTrace& t) {
  std::vector<double> values;
  for (const auto& s : t.segments()) values.push_back(s.capacity_bps);
  return values;
}

TEST(TraceTransforms, ScaleOffsetClip) {
  const BandwidthTrace s = scale(step(), 0.5);
  EXPECT_EQ(capacities(s), (std::vector<double>{5e6, 1e6}));
  EXPECT_EQ(s.name(), "step|scale=0.5");
  EXPECT_DOUBLE_EQ(s.duration_s(), 2.0);
  EXPECT_EQ(capacities(offset(step(), -5e6)), (std::vector<double>{5e6, 0}));
  EXPECT_EQ(capacities(offset(step(), 1e6)), (std::vector<double>{11e6, 3e6}));
  EXPECT_EQ(offset(step(), 1e6).name(), "step|offset_bps=1e+06");
  EXPECT_EQ(capacities(clip(step(), 3e6, 8e6)), (std::vector<double>{8e6, 3e6}));
  EXPECT_EQ(capacities(clip(step(), 0, std::numeric_limits<double>::infinity())), capacities(step()));
  EXPECT_EQ(clip(step(), 3e6, 8e6).name(), "step|clip_bps=3e+06..8e+06");
  const BandwidthTrace chunks({{1.0, 1e9}}, "c", true);
  EXPECT_TRUE(scale(chunks, 2).chunk_indexed());
  EXPECT_THROW(scale(step(), -1), std::invalid_argument);
  EXPECT_THROW(scale(step(), std::numeric_limits<double>::infinity()), std::invalid_argument);
  EXPECT_THROW(offset(step(), std::nan("")), std::invalid_argument);
  EXPECT_THROW(clip(step(), 5, 4), std::invalid_argument);
  EXPECT_THROW(clip(step(), -1, 4), std::invalid_argument);
}

TEST(TraceTransforms, WindowOfTheLoopedTrace) {
  const BandwidthTrace w = window(step(), 0.5, 3.25);
  EXPECT_EQ(w.name(), "step|window_s=0.5..3.25");
  ASSERT_EQ(w.segments().size(), 4u);
  const std::vector<std::pair<double, double>> expected = {{0.5, 10e6}, {1.0, 2e6}, {1.0, 10e6}, {0.25, 2e6}};
  for (size_t k = 0; k < expected.size(); ++k) {
    EXPECT_DOUBLE_EQ(w.segments()[k].duration_s, expected[k].first) << k;
    EXPECT_DOUBLE_EQ(w.segments()[k].capacity_bps, expected[k].second) << k;
  }
  EXPECT_DOUBLE_EQ(w.duration_s(), 2.75);
  EXPECT_DOUBLE_EQ(w.bits_between(0, 2.75), step().bits_between(0.5, 3.25));
  // Inside one segment, and starting on a boundary.
  EXPECT_EQ(window(step(), 4.25, 4.75).segments().size(), 1u);
  EXPECT_EQ(capacities(window(step(), 1.0, 2.0)), (std::vector<double>{2e6}));
  EXPECT_THROW(window(step(), 1.0, 1.0), std::invalid_argument);
  EXPECT_THROW(window(step(), -1.0, 1.0), std::invalid_argument);
}

TEST(TraceTransforms, WindowKeepsTheIntegralOnRandomQueries) {
  std::mt19937_64 rng(3);
  const auto uniform = [&rng] { return double(rng() >> 11) * 0x1.0p-53; };
  std::vector<TraceSegment> segments;
  for (int k = 0; k < 40; ++k) segments.push_back({0.001 + uniform(), uniform() < 0.2 ? 0 : 1e8 * uniform()});
  const BandwidthTrace t(segments, "r");
  for (int q = 0; q < 100; ++q) {
    const double t0 = 5 * t.duration_s() * uniform();
    const double t1 = t0 + 0.001 + 3 * t.duration_s() * uniform();
    const BandwidthTrace w = window(t, t0, t1);
    EXPECT_NEAR(w.duration_s(), t1 - t0, 1e-9);
    EXPECT_NEAR(w.mean_bps() * w.duration_s(), t.bits_between(t0, t1), 1e-6 * std::max(1.0, t.bits_between(t0, t1)));
  }
}

TEST(TraceTransforms, Concatenate) {
  const BandwidthTrace a({{1.0, 1e6}}, "a");
  const BandwidthTrace b({{2.0, 4e6}, {1.0, 0}}, "b");
  const BandwidthTrace ab = concatenate({a, b});
  EXPECT_EQ(ab.name(), "a+b");
  EXPECT_DOUBLE_EQ(ab.duration_s(), 4.0);
  EXPECT_EQ(capacities(ab), (std::vector<double>{1e6, 4e6, 0}));
  EXPECT_DOUBLE_EQ(ab.bits_between(0, 8), 18e6);
  EXPECT_THROW(concatenate({}), std::invalid_argument);
  EXPECT_THROW(concatenate({a, BandwidthTrace({{1.0, 1e9}}, "c", true)}), std::invalid_argument);
}

}  // namespace
}  // namespace kvstream::traces
