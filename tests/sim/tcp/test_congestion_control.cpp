// The congestion controls of the tcp link model (sim/tcp/congestion_control.h), one round at a time.
#include <gtest/gtest.h>

#include <limits>

#include "sim/tcp/bbr_control.h"
#include "sim/tcp/cubic_control.h"
#include "sim/tcp/reno_control.h"

namespace kvstream::sim {
namespace {

constexpr double kPacketBits = 8 * 1500.0;

// A round of `sent` packets, all delivered (or `lost` of them lost), on a path of `mbps` and `rtt_s`.
RoundSample round(double now_s, double sent, double mbps, double rtt_s, double lost = 0) {
  RoundSample s;
  s.now_s = now_s;
  s.rtt_s = rtt_s;
  s.capacity_bps = mbps * 1e6;
  s.sent_packets = sent;
  s.lost_packets = lost;
  s.delivered_packets = sent - lost;
  s.round_s = std::max(rtt_s, sent * kPacketBits / s.capacity_bps);
  return s;
}

TEST(CongestionControl, TheRegistryNamesWhatItModels) {
  for (const auto& name : modelled_congestion_controls())
    EXPECT_NE(make_congestion_control(tcp_model_for(0.01, name, true, 0)), nullptr) << name;
  try {
    make_congestion_control(tcp_model_for(0.01, "vegas", true, 0));
    FAIL() << "vegas has no model";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("\"vegas\" (modelled: cubic, reno, bbr)"), std::string::npos) << e.what();
  }
}

TEST(RenoControl, SlowStartThenOnePacketPerRoundAndHalvingOnLoss) {
  RenoControl reno(tcp_model_for(0.01, "reno", true, 0));
  EXPECT_EQ(reno.window_packets(), 10);
  reno.on_round(round(0.01, 10, 1000, 0.01));
  EXPECT_EQ(reno.window_packets(), 20);
  // A chunk's last round, short of the window: it still grows by what it delivered, as the round
  // before filled the window (Linux's is_cwnd_limited holds for a round trip).
  reno.on_round(round(0.02, 5, 1000, 0.01));
  EXPECT_EQ(reno.window_packets(), 25);
  reno.on_round(round(0.03, 5, 1000, 0.01));  // a second short round: up to twice what was sent
  EXPECT_EQ(reno.window_packets(), 25);
  reno.on_round(round(0.04, 25, 1000, 0.01, 4));
  EXPECT_EQ(reno.window_packets(), 12.5);
  EXPECT_EQ(reno.ssthresh_packets(), 12.5);
  reno.on_round(round(0.05, 12.5, 1000, 0.01));
  EXPECT_EQ(reno.window_packets(), 13.5);
}

TEST(CubicControl, HystartLeavesSlowStartWhenTheAckTrainSpansHalfTheRoundTrip) {
  // 100 Mbit/s x 40 ms: a BDP of 333 packets; the train of a round of w packets takes w x 0.12 ms.
  CubicControl cubic(tcp_model_for(0.04, "cubic", true, 0));
  double now = 0;
  for (double w = 10; w < 160; w *= 2) cubic.on_round(round(now += 0.04, w, 100, 0.04));
  EXPECT_EQ(cubic.window_packets(), 160);  // 160 x 0.12 ms = 19.2 ms < 20 ms: still slow start
  cubic.on_round(round(now += 0.04, 160, 100, 0.04));  // 19.2 ms < 20 ms
  EXPECT_EQ(cubic.window_packets(), 320);
  cubic.on_round(round(now += 0.04, 320, 100, 0.04));  // 38.4 ms > 20 ms: the train passed the mark
  const double at_exit = 320 + 0.02 * 100e6 / kPacketBits;  // grown by the ACKs of the first 20 ms
  EXPECT_NEAR(cubic.window_packets(), at_exit, 1e-9);
  EXPECT_NEAR(cubic.ssthresh_packets(), at_exit, 1e-9);
  // Congestion avoidance without a loss yet: about 5 % per round (tcp_cubic's cnt = 20).
  const double before = cubic.window_packets();
  cubic.on_round(round(now += 0.04, before, 100, 0.04));
  EXPECT_NEAR(cubic.window_packets(), before * 1.05, 1e-9);
}

TEST(CubicControl, WithoutHystartSlowStartRunsToTheFirstLoss) {
  TcpModel model = tcp_model_for(0.04, "cubic", true, 0);
  model.hystart = false;
  CubicControl cubic(model);
  double now = 0;
  for (double w = 10; w <= 640; w *= 2) cubic.on_round(round(now += 0.04, w, 100, 0.04));
  EXPECT_EQ(cubic.window_packets(), 1280);
  cubic.on_round(round(now += 0.04, 1280, 100, 0.04, 500));
  EXPECT_NEAR(cubic.window_packets(), 1280 * CubicControl::kBeta, 1e-9);
  // After the loss the window grows back along the cubic toward W_max = 1280, concave at first.
  double last = cubic.window_packets();
  double first_step = -1;
  for (int r = 0; r < 20; ++r) {
    cubic.on_round(round(now += 0.04, cubic.window_packets(), 100, 0.04));
    const double step = cubic.window_packets() - last;
    EXPECT_GT(step, 0);
    if (first_step < 0) first_step = step;
    last = cubic.window_packets();
  }
  EXPECT_LT(last, 1280);
}

TEST(LossBasedControl, RestartAfterIdleHalvesPerTimeoutDownToTheInitialWindow) {
  RenoControl reno(tcp_model_for(0.01, "reno", true, 0));
  for (int r = 0; r < 5; ++r) reno.on_round(round(0.01 * r, reno.window_packets(), 1000, 0.01));
  EXPECT_EQ(reno.window_packets(), 320);
  reno.on_restart(0.2, 0.21);  // within one timeout: kept
  EXPECT_EQ(reno.window_packets(), 320);
  reno.on_restart(0.21 * 3.5, 0.21);  // 2.5 timeouts past the first: halved 3 times
  EXPECT_EQ(reno.window_packets(), 40);
  // ssthresh keeps the larger of itself and 3/4 of the window: still unbounded before any loss.
  EXPECT_EQ(reno.ssthresh_packets(), std::numeric_limits<double>::infinity());
  reno.on_restart(100, 0.21);
  EXPECT_EQ(reno.window_packets(), 10);
  RenoControl kept(tcp_model_for(0.01, "reno", false, 0));  // tcp_slow_start_after_idle=0
  kept.on_round(round(0.01, 10, 1000, 0.01));
  kept.on_restart(100, 0.21);
  EXPECT_EQ(kept.window_packets(), 20);
}

TEST(BbrControl, StartupFindsThePipeThenDrainsAndCyclesAtTwiceTheBdp) {
  // 100 Mbit/s x 20 ms: a BDP of 166.7 packets.
  BbrControl bbr(tcp_model_for(0.02, "bbr", true, 0));
  const double bdp = 100e6 * 0.02 / kPacketBits;
  double now = 0;
  int rounds = 0;
  while (bbr.mode() == BbrControl::Mode::kStartup && rounds++ < 30) {
    const double sent = bbr.window_packets();
    // What a round delivers: at most the link's rate over the round.
    RoundSample s = round(now += 0.02, sent, 100, 0.02);
    bbr.on_round(s);
  }
  ASSERT_LT(rounds, 30) << "startup never ended";
  EXPECT_NEAR(bbr.bandwidth_bps(), 100e6, 1e-6 * 100e6);
  EXPECT_EQ(bbr.mode(), BbrControl::Mode::kDrain);
  EXPECT_NEAR(bbr.window_packets(), bdp / BbrControl::kHighGain, 1e-9);
  bbr.on_round(round(now += 0.02, bbr.window_packets(), 100, 0.02));
  EXPECT_EQ(bbr.mode(), BbrControl::Mode::kProbeBw);
  EXPECT_NEAR(bbr.window_packets(), bdp, 1e-9);  // gain 1 in the cycle's third phase
  // Idleness changes nothing: BBR paces on from its estimate.
  bbr.on_restart(100, 0.22);
  EXPECT_NEAR(bbr.window_packets(), bdp, 1e-9);
}

TEST(BbrControl, AnApplicationLimitedRoundDoesNotEndStartup) {
  BbrControl bbr(tcp_model_for(0.02, "bbr", true, 0));
  for (int r = 0; r < 5; ++r) bbr.on_round(round(0.02 * (r + 1), 3, 100, 0.02));  // 3 of 10+ packets
  EXPECT_EQ(bbr.mode(), BbrControl::Mode::kStartup);
}

}  // namespace
}  // namespace kvstream::sim
