// One direction of an emulated link as arithmetic: FIFO serialization at the trace's capacity, no
// banked capacity after idle time, drop-tail by bytes, a constant one-way delay.
#include <gtest/gtest.h>

#include <memory>

#include "emulation/link_queue.h"

namespace kvstream::emulation {
namespace {

std::shared_ptr<const traces::BandwidthTrace> trace(const std::vector<std::pair<double, double>>& pieces_s_bps) {
  std::vector<traces::TraceSegment> segments;
  for (const auto& [duration_s, bps] : pieces_s_bps) segments.push_back({duration_s, bps});
  return std::make_shared<traces::BandwidthTrace>(segments, "test");
}

TEST(LinkQueue, SerializesBackToBackAtTheTraceRate) {
  LinkQueue q({trace({{10, 12e6}}), 0, 0.005});  // 12 Mbit/s: a 1,500-byte packet takes 1 ms
  EXPECT_DOUBLE_EQ(*q.admit(0, 1500), 0.001 + 0.005);
  EXPECT_DOUBLE_EQ(*q.admit(0, 1500), 0.002 + 0.005);  // waits for the first
  EXPECT_DOUBLE_EQ(*q.admit(0.0005, 750), 0.0025 + 0.005);
  EXPECT_EQ(q.queued_bytes(0.0015), 2250u);  // the second is being serialized, the third waits
  EXPECT_EQ(q.stats().packets, 3u);
  EXPECT_EQ(q.stats().bytes, 3750u);
}

TEST(LinkQueue, FollowsRateChangesInsideAPacket) {
  LinkQueue q({trace({{0.0005, 12e6}, {1, 6e6}}), 0, 0});
  // 750 bytes in the first 0.5 ms at 12 Mbit/s, the other 750 at 6 Mbit/s: 1 ms more.
  EXPECT_NEAR(*q.admit(0, 1500), 0.0015, 1e-12);
}

TEST(LinkQueue, AnIdleLinkBanksNoCapacity) {
  LinkQueue q({trace({{10, 12e6}}), 0, 0});
  EXPECT_DOUBLE_EQ(*q.admit(0, 1500), 0.001);
  // 5 s idle: the next packets still leave one per ms from their arrival, not at once.
  EXPECT_DOUBLE_EQ(*q.admit(5, 1500), 5.001);
  EXPECT_DOUBLE_EQ(*q.admit(5, 1500), 5.002);
}

TEST(LinkQueue, TheTraceOffsetShiftsLinkTimeIntoTheTrace) {
  LinkQueue q({trace({{1, 12e6}, {1, 1.2e6}}), 1.0, 0});  // link time 0 is trace time 1: 1.2 Mbit/s
  EXPECT_NEAR(*q.admit(0, 1500), 0.01, 1e-12);
}

TEST(LinkQueue, DropTailBoundsTheBytesQueued) {
  LinkQueue q({trace({{10, 12e6}}), 0, 0, 3000});
  EXPECT_TRUE(q.admit(0, 1500));
  EXPECT_TRUE(q.admit(0, 1500));
  EXPECT_FALSE(q.admit(0, 1));        // 3,000 bytes queued: full
  EXPECT_TRUE(q.admit(0.001, 1500));  // the first has left
  EXPECT_EQ(q.stats().dropped_packets, 1u);
  EXPECT_EQ(q.stats().dropped_bytes, 1u);
  EXPECT_EQ(q.stats().max_queued_bytes, 3000u);
}

TEST(LinkQueue, WithoutATraceOnlyTheDelayApplies) {
  LinkQueue q({nullptr, 0, 0.02});
  EXPECT_DOUBLE_EQ(*q.admit(1, 9000), 1.02);
  EXPECT_DOUBLE_EQ(*q.admit(1, 9000), 1.02);
}

TEST(LinkQueue, BadConfigsAreRefused) {
  EXPECT_THROW(LinkQueue({nullptr, 0, -1}), std::invalid_argument);
  EXPECT_THROW(LinkQueue({nullptr, -1, 0}), std::invalid_argument);
  EXPECT_THROW(LinkQueue({nullptr, 0, 0, 0}), std::invalid_argument);
  auto chunky = std::make_shared<traces::BandwidthTrace>(std::vector<traces::TraceSegment>{{1, 1e9}}, "bw", true);
  EXPECT_THROW(LinkQueue({chunky, 0, 0}), std::invalid_argument);
}

}  // namespace
}  // namespace kvstream::emulation
