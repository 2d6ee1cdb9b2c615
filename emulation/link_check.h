// How exactly an emulated link delivers its trace (docs/EMULATION.md "Accuracy"): a sender in the
// server namespace keeps the down link's queue from ever running empty with UDP datagrams, paced at
// 1.25 times the trace's capacity after a head start; the link's deliveries into the client are
// counted per window and compared with the trace's integral over the same window (shifted by the
// one-way delay).
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "traces/bandwidth_trace.h"

namespace kvstream::emulation {

struct LinkCheckOptions {
  std::shared_ptr<const traces::BandwidthTrace> trace;
  double seconds = 3;        // measured after a warm-up of 0.5 s
  double window_s = 0.1;
  double one_way_delay_s = 0.005;
  // Must hold the sender's excess (a quarter of the trace's bytes, plus half a second at its mean
  // rate) for the queue never to run empty: 0 = sized for that.
  uint64_t queue_limit_bytes = 0;
  // The devices' offloads (tun_device.h): the sender then writes 44 datagrams at a time with UDP
  // segmentation offload (UDP_SEGMENT), and the link receives them as one super-packet.
  bool offloads = true;
};

struct LinkCheckResult {
  std::string trace;
  double mean_mbps = 0;                  // of the trace over the measured span
  size_t windows = 0;
  double median_abs_error = 0, p95_abs_error = 0, max_abs_error = 0;  // |delivered / integral - 1| per window
  double delivered_vs_integral = 0;      // over the whole span, delivered / integral
  double mean_lateness_s = 0, max_lateness_s = 0;  // written - scheduled
  uint64_t dropped_packets = 0, sent_packets = 0;
  double cpu_s = 0;                      // of this process (every thread, user and system), from link up to down
  double cpu_s_per_gbit = 0;             // cpu_s per Gbit the link delivered
  std::vector<double> window_errors;     // signed, in window order
};

inline constexpr double kMaxLinkCheckS = 3600, kMinLinkCheckWindowS = 1e-3, kMaxLinkCheckWindowS = 10;

// Throws std::invalid_argument, before anything is set up, for options it cannot measure: a trace
// without capacity, seconds outside (0, kMaxLinkCheckS], a window outside [1 ms, 10 s] or longer
// than the span, a queue limit below one packet; and when no window of the span had capacity (an
// outage throughout: nothing was compared). Throws std::runtime_error when emulation is unavailable
// (emulation_unavailable_reason).
LinkCheckResult check_link(const LinkCheckOptions& options);
// Everything but the per-window errors.
nlohmann::json to_json(const LinkCheckResult& result);

}  // namespace kvstream::emulation
