// BandwidthTrace: exact integrals against hand computation, looping, zero-capacity gaps,
// time_to_send as the inverse of bits_between on random queries, and search hints that never
// change an answer.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>

#include "traces/bandwidth_trace.h"

namespace kvstream::traces {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// 10 Mbit/s for 1 s, then 2 Mbit/s for 1 s: 12 Mbit per 2 s period.
BandwidthTrace step() { return BandwidthTrace({{1.0, 10e6}, {1.0, 2e6}}, "step"); }

// 4 Mbit/s, a 2 s outage, 4 Mbit/s again: 8 Mbit per 4 s period.
BandwidthTrace gap() { return BandwidthTrace({{1.0, 4e6}, {2.0, 0.0}, {1.0, 4e6}}, "gap"); }

// Uniform in [0, 1) (not a std:: distribution, so the queries are the same everywhere).
double uniform(std::mt19937_64& rng) { return double(rng() >> 11) * 0x1.0p-53; }

TEST(BandwidthTrace, ConstantIntegrals) {
  const BandwidthTrace t({{2.0, 8e6}}, "c");
  EXPECT_EQ(t.name(), "c");
  EXPECT_FALSE(t.chunk_indexed());
  EXPECT_DOUBLE_EQ(t.duration_s(), 2.0);
  EXPECT_DOUBLE_EQ(t.mean_bps(), 8e6);
  EXPECT_DOUBLE_EQ(t.bits_between(0.5, 1.5), 8e6);
  EXPECT_DOUBLE_EQ(t.bits_between(1.0, 11.0), 80e6);  // five periods
  EXPECT_DOUBLE_EQ(t.bits_between(3.0, 3.0), 0);
  EXPECT_DOUBLE_EQ(t.time_to_send(0.3, 4e6), 0.5);
  EXPECT_DOUBLE_EQ(t.time_to_send(1.9, 16e6), 2.0);
  EXPECT_EQ(t.time_to_send(1.0, 0), 0);
  EXPECT_EQ(t.time_to_send(1.0, -5), 0);
}

TEST(BandwidthTrace, StepDropMidInterval) {
  const BandwidthTrace t = step();
  EXPECT_DOUBLE_EQ(t.mean_bps(), 6e6);
  EXPECT_DOUBLE_EQ(t.bits_between(0.5, 1.5), 5e6 + 1e6);
  EXPECT_DOUBLE_EQ(t.time_to_send(0.5, 6e6), 1.0);   // 5 Mbit by t = 1, then 1 Mbit at 2 Mbit/s
  EXPECT_DOUBLE_EQ(t.time_to_send(0.5, 5e6), 0.5);
  EXPECT_DOUBLE_EQ(t.capacity_bps(0.5), 10e6);
  EXPECT_DOUBLE_EQ(t.capacity_bps(1.0), 2e6);
  EXPECT_DOUBLE_EQ(t.capacity_bps(2.0), 10e6);
  EXPECT_DOUBLE_EQ(t.capacity_bps(3.99), 2e6);
  EXPECT_DOUBLE_EQ(t.next_change_s(0.0), 1.0);
  EXPECT_DOUBLE_EQ(t.next_change_s(0.5), 1.0);
  EXPECT_DOUBLE_EQ(t.next_change_s(1.0), 2.0);
  EXPECT_DOUBLE_EQ(t.next_change_s(2.2), 3.0);
  EXPECT_DOUBLE_EQ(t.next_change_s(3.5), 4.0);
}

TEST(BandwidthTrace, LoopsOverManyPeriods) {
  const BandwidthTrace t = step();
  // [0.5,1) 5 + [1,2) 2 + [2,4) 12 + [4,5) 10 + [5,5.5) 1 Mbit
  EXPECT_DOUBLE_EQ(t.bits_between(0.5, 5.5), 30e6);
  // A million periods later the pattern is the same.
  EXPECT_NEAR(t.bits_between(2e6 + 0.5, 2e6 + 5.5), 30e6, 1e-3);
  EXPECT_NEAR(t.bits_between(0.25, 2e6 + 0.25), 12e12, 1e-2);
  EXPECT_NEAR(t.time_to_send(0.25, 12e12), 2e6, 1e-9 * 2e6);
  EXPECT_NEAR(t.time_to_send(2e6 + 0.5, 6e6), 1.0, 1e-9);
  EXPECT_DOUBLE_EQ(t.capacity_bps(2e6 + 1.5), 2e6);
}

TEST(BandwidthTrace, ZeroCapacityGap) {
  const BandwidthTrace t = gap();
  EXPECT_DOUBLE_EQ(t.bits_between(0.5, 3.5), 2e6 + 0 + 2e6);
  EXPECT_DOUBLE_EQ(t.bits_between(1.2, 2.8), 0);
  // Exactly the bits before the outage: done when it starts, not when it ends.
  EXPECT_DOUBLE_EQ(t.time_to_send(0.5, 2e6), 0.5);
  // One bit more waits out the outage.
  EXPECT_NEAR(t.time_to_send(0.5, 2e6 + 1), 2.5 + 1 / 4e6, 1e-12);
  // From inside the outage: wait until t = 3, then 0.25 s.
  EXPECT_DOUBLE_EQ(t.time_to_send(1.5, 1e6), 1.75);
  // Across the wrap: [3,4) 4 Mbit, then [4,5) 4 Mbit.
  EXPECT_DOUBLE_EQ(t.time_to_send(3.0, 8e6), 2.0);
  EXPECT_DOUBLE_EQ(t.capacity_bps(2.0), 0);
  EXPECT_DOUBLE_EQ(t.next_change_s(1.5), 3.0);
}

TEST(BandwidthTrace, ZeroCapacityAtTheEnd) {
  const BandwidthTrace t({{1.0, 4e6}, {1.0, 0.0}});
  EXPECT_DOUBLE_EQ(t.time_to_send(0, 4e6), 1.0);  // not 2.0: the trailing outage is not needed
  EXPECT_DOUBLE_EQ(t.time_to_send(0, 8e6), 3.0);
  EXPECT_DOUBLE_EQ(t.time_to_send(1.5, 4e6), 1.5);
  EXPECT_DOUBLE_EQ(t.time_to_send(10.0, 2e6), 0.5);
}

TEST(BandwidthTrace, AllZeroNeverDelivers) {
  const BandwidthTrace t({{1.0, 0.0}, {3.0, 0.0}});
  EXPECT_EQ(t.bits_between(0, 100), 0);
  EXPECT_EQ(t.time_to_send(2.0, 1), kInf);
  EXPECT_EQ(t.time_to_send(2.0, 0), 0);
  EXPECT_EQ(t.mean_bps(), 0);
}

TEST(BandwidthTrace, ChunkIndexedFlag) {
  const BandwidthTrace t({{1.0, 1e9}, {1.0, 2e9}}, "bw.jsonl#0", true);
  EXPECT_TRUE(t.chunk_indexed());
  EXPECT_DOUBLE_EQ(t.capacity_bps(1.5), 2e9);
}

TEST(BandwidthTrace, RejectsInvalidSegmentsAndTimes) {
  EXPECT_THROW(BandwidthTrace(std::vector<TraceSegment>{}), std::invalid_argument);
  EXPECT_THROW(BandwidthTrace({{0.0, 1.0}}), std::invalid_argument);
  EXPECT_THROW(BandwidthTrace({{-1.0, 1.0}}), std::invalid_argument);
  EXPECT_THROW(BandwidthTrace({{kInf, 1.0}}), std::invalid_argument);
  EXPECT_THROW(BandwidthTrace({{1.0, -1.0}}), std::invalid_argument);
  EXPECT_THROW(BandwidthTrace({{1.0, std::nan("")}}), std::invalid_argument);
  EXPECT_THROW(BandwidthTrace({{1.0, kInf}}), std::invalid_argument);
  try {
    BandwidthTrace({{1.0, 1.0}, {1.0, -2.0}}, "named");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("named"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("segment 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(step().capacity_bps(-1), std::invalid_argument);
  EXPECT_THROW(step().bits_between(-1, 2), std::invalid_argument);
  EXPECT_THROW(step().time_to_send(kInf, 2), std::invalid_argument);
}

// A random trace: n segments of 1 ms to 3 s, capacities up to 100 Mbit/s, a third of them zero
// when `zeros`.
BandwidthTrace random_trace(std::mt19937_64& rng, int n, bool zeros) {
  std::vector<TraceSegment> segments;
  for (int k = 0; k < n; ++k) {
    const double capacity = zeros && uniform(rng) < 1.0 / 3 ? 0.0 : 1e5 + 1e8 * uniform(rng);
    segments.push_back({0.001 + 3 * uniform(rng), capacity});
  }
  return BandwidthTrace(std::move(segments));
}

TEST(BandwidthTrace, TimeToSendInvertsBitsBetween) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    const BandwidthTrace t = random_trace(rng, 50, false);
    const double period = t.duration_s();
    for (int q = 0; q < 200; ++q) {
      const double t0 = 10 * period * uniform(rng);
      const double t1 = t0 + 5 * period * uniform(rng);
      const double bits = t.bits_between(t0, t1);
      EXPECT_NEAR(t.time_to_send(t0, bits), t1 - t0, 1e-9 * std::max(1.0, t1 - t0)) << "t0 " << t0 << " t1 " << t1;
    }
  }
}

TEST(BandwidthTrace, TimeToSendIsTheSmallestTimeAcrossZeroGaps) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 20; ++trial) {
    const BandwidthTrace t = random_trace(rng, 30, true);
    if (t.mean_bps() == 0) continue;
    const double period = t.duration_s();
    for (int q = 0; q < 200; ++q) {
      const double t0 = 10 * period * uniform(rng);
      const double t1 = t0 + 5 * period * uniform(rng);
      const double bits = t.bits_between(t0, t1);
      const double d = t.time_to_send(t0, bits);
      const double tol = 1e-9 * std::max(1.0, t1 - t0);
      EXPECT_LE(d, t1 - t0 + tol);
      EXPECT_NEAR(t.bits_between(t0, t0 + d), bits, 1e-9 * std::max(1.0, bits));
      // Whatever is left of [t0, t1) after d carries (almost) nothing.
      EXPECT_NEAR(t.bits_between(t0 + d, std::max(t0 + d, t1)), 0, 1e-9 * std::max(1.0, bits));
    }
  }
}

// A hint only says where a search starts: every hinted answer equals the unhinted one, bit for
// bit, whether the queries walk forward (a transfer's rounds), jump anywhere, or loop.
TEST(BandwidthTrace, SearchHintsNeverChangeAnAnswer) {
  std::mt19937_64 rng(13);
  for (int trial = 0; trial < 30; ++trial) {
    const BandwidthTrace t = random_trace(rng, trial % 2 ? 3 : 400, trial % 3 == 0);
    const double period = t.duration_s();
    BandwidthTrace::SearchHint hint;
    double now_s = 0;
    for (int q = 0; q < 400; ++q) {
      now_s = q % 50 == 0 ? 3 * period * uniform(rng) : now_s + 0.02 * period * uniform(rng);
      const double later_s = now_s + (q % 7 == 0 ? 2 * period : 0.05 * period) * uniform(rng);
      const double bits = t.bits_between(now_s, later_s) * (0.5 + uniform(rng));
      EXPECT_EQ(t.bits_between(now_s, later_s, &hint), t.bits_between(now_s, later_s)) << "trial " << trial << " q " << q;
      EXPECT_EQ(t.arrival_s(now_s, bits, &hint), t.arrival_s(now_s, bits)) << "trial " << trial << " q " << q;
      if (q % 11 == 0) hint.segment = size_t(rng() % 1000);  // a stale or out-of-range hint is only slow
    }
  }
}

}  // namespace
}  // namespace kvstream::traces
