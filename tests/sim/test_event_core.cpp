// The event queue, the links and the executor on their own.
#include <gtest/gtest.h>

#include <chrono>
#include <limits>

#include "sim/event_queue.h"
#include "sim/executor.h"
#include "sim/link.h"
#include "tests/sim/sim_test_support.h"

namespace kvstream::sim {
namespace {

TEST(EventQueue, RunsInTimeOrderWithSchedulingOrderBreakingTies) {
  EventQueue events;
  std::vector<int> order;
  events.schedule(2.0, [&] { order.push_back(3); });
  events.schedule(1.0, [&] { order.push_back(1); });
  events.schedule(1.0, [&] {
    order.push_back(2);
    events.schedule(1.0, [&] { order.push_back(4); });  // at t = 1 still: before the t = 2 event
  });
  events.run();
  EXPECT_EQ(order, (std::vector<int>{1, 2, 4, 3}));
  EXPECT_EQ(events.events_run(), 4u);
  EXPECT_DOUBLE_EQ(events.now_s(), 2.0);
  EXPECT_THROW(events.schedule(1.0, [] {}), std::logic_error);
}

// In real time a posted handler runs at the clock's time, so a time computed before it ran can be
// past by the time it schedules: that event runs at once (late), not as a logic error.
TEST(EventQueue, InRealTimeAPastTimeRunsNow) {
  EventQueue events;
  events.use_real_time(std::chrono::steady_clock::now());
  double ran_at_s = -1, posted_at_s = -1;
  events.post([&] {
    posted_at_s = events.now_s();
    events.schedule(posted_at_s / 2, [&] { ran_at_s = events.now_s(); });  // already past
  });
  events.run();
  EXPECT_GE(ran_at_s, posted_at_s);
  EXPECT_THROW(events.schedule(std::numeric_limits<double>::infinity(), [] {}), std::logic_error);
}

// A real-time loop waiting on something outside (a transfer over a link that delivers nothing) ends
// at its deadline with an error instead of waiting for ever; one whose work ends before it does not.
TEST(EventQueue, InRealTimeTheDeadlineEndsAWaitWithWorkLeft) {
  EventQueue held;
  held.use_real_time(std::chrono::steady_clock::now(), 0.05);
  held.hold();  // never released: nothing will ever be posted
  EXPECT_THROW(held.run(), RealTimeDeadlinePassed);
  EXPECT_GE(held.clock_s(), 0.05);

  EventQueue late;
  late.use_real_time(std::chrono::steady_clock::now(), 0.05);
  bool ran = false;
  late.schedule(10, [&] { ran = true; });  // due after the deadline
  EXPECT_THROW(late.run(), RealTimeDeadlinePassed);
  EXPECT_FALSE(ran);
  EXPECT_LT(late.clock_s(), 5);

  EventQueue done;
  done.use_real_time(std::chrono::steady_clock::now(), 5);
  done.schedule(0.01, [&] { ran = true; });
  EXPECT_NO_THROW(done.run());
  EXPECT_TRUE(ran);
}

TEST(SharedLink, ConcurrentTransfersShareCapacityFairly) {
  EventQueue events;
  const auto trace = test::gbps_trace({{1, 1.0}});  // 1 Gbps
  SharedLink link(events, trace, 0);
  double a_done = -1, b_done = -1;
  link.send(1e9, 0, 0, [&] { a_done = events.now_s(); });  // 1 Gbit alone would take 1 s
  events.schedule(0.5, [&] { link.send(0.25e9, 0, 0, [&] { b_done = events.now_s(); }); });
  events.run();
  // From 0.5 s both get 0.5 Gbps: b's 0.25 Gbit takes 0.5 s; a has 0.25 Gbit left at 1.0 s, alone again.
  EXPECT_NEAR(b_done, 1.0, 1e-12);
  EXPECT_NEAR(a_done, 1.25, 1e-12);
}

TEST(SharedLink, ZeroCapacityTraceNeverDelivers) {
  EventQueue events;
  const traces::BandwidthTrace dead({{1, 0}}, "dead");
  SharedLink link(events, dead, 0);
  bool delivered = false;
  link.send(1, 0, 0, [&] { delivered = true; });
  events.run();
  EXPECT_FALSE(delivered);
}

TEST(ChunkIndexedLink, ChunkCTravelsAtTheCthRate) {
  EventQueue events;
  const traces::BandwidthTrace per_chunk({{1, 1e9}, {1, 2e9}}, "chunks", /*chunk_indexed=*/true);
  ChunkIndexedLink link(events, per_chunk);
  std::vector<double> done;
  link.send(1e9, 0, 0, [&] {
    done.push_back(events.now_s());
    link.send(1e9, 1, 0, [&] {
      done.push_back(events.now_s());
      link.send(1e9, 2, 0, [&] { done.push_back(events.now_s()); });  // loops: rate of chunk 0
    });
  });
  events.run();
  EXPECT_EQ(done, (std::vector<double>{1.0, 1.5, 2.5}));
  EXPECT_THROW(SharedLink(events, per_chunk, 0), std::invalid_argument);
}

TEST(Executor, RunsJobsFifoAndReportsStartTimes) {
  EventQueue events;
  Executor gpu(events);
  auto job = [](double duration_s) { return GpuJob{GpuJob::Kind::kDecode, 0, 0, 0, duration_s}; };
  std::vector<std::pair<double, double>> runs;  // (start, end)
  gpu.submit(job(1.0), [&](double start_s) { runs.push_back({start_s, events.now_s()}); });
  gpu.submit(job(0.5), [&](double start_s) { runs.push_back({start_s, events.now_s()}); });
  events.schedule(3.0, [&] { gpu.submit(job(0.25), [&](double start_s) { runs.push_back({start_s, events.now_s()}); }); });
  events.run();
  EXPECT_EQ(runs, (std::vector<std::pair<double, double>>{{0, 1}, {1, 1.5}, {3, 3.25}}));
  EXPECT_DOUBLE_EQ(gpu.busy_s(), 1.75);
}

}  // namespace
}  // namespace kvstream::sim
