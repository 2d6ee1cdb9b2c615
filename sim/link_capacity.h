// A path's capacity over time, as a connection's rounds read it (sim/tcp/tcp_connection.h): the true
// trace (what the simulator's links carry, and what oracle-dp plans on) or a constant rate (what a
// sender's throughput estimate predicts, and what mpc plans on).
#pragma once
#include <atomic>
#include <cstddef>
#include <limits>

#include "traces/bandwidth_trace.h"

namespace kvstream::sim {

class LinkCapacity {
 public:
  virtual ~LinkCapacity() = default;
  // Bits the path can carry in [t0_s, t1_s].
  virtual double bits_between(double t0_s, double t1_s) const = 0;
  // How long `bits` take from start_s on the otherwise idle path (+infinity: never).
  virtual double delivery_s(double start_s, double bits) const = 0;
  // When `bits` sent alone from start_s have arrived (solo_transfer_end_s on a trace).
  virtual double arrival_s(double start_s, double bits) const = 0;
  virtual double mean_bps() const = 0;
};

// The trace from trace_offset_s on (time 0 of the run reads the trace at trace_offset_s). A
// connection's rounds read it at nearby times, so each query starts its search in the trace where
// the last one ended (BandwidthTrace::SearchHint; relaxed atomic, so threads may share one).
class TraceCapacity final : public LinkCapacity {
 public:
  TraceCapacity(const traces::BandwidthTrace& trace, double trace_offset_s) : trace_(trace), offset_s_(trace_offset_s) {}
  double bits_between(double t0_s, double t1_s) const override;
  double delivery_s(double start_s, double bits) const override;
  double arrival_s(double start_s, double bits) const override;
  double mean_bps() const override { return trace_.mean_bps(); }

 private:
  // query(&hint) with the last query's hint, which it then updates.
  template <class Query>
  double with_hint(Query query) const;

  const traces::BandwidthTrace& trace_;
  double offset_s_;
  mutable std::atomic<size_t> hint_segment_{0};
};

// A constant rate (0: nothing ever arrives).
class ConstantCapacity final : public LinkCapacity {
 public:
  explicit ConstantCapacity(double rate_bps) : rate_bps_(rate_bps) {}
  double bits_between(double t0_s, double t1_s) const override { return rate_bps_ * (t1_s - t0_s); }
  double delivery_s(double, double bits) const override {
    return bits <= 0 ? 0 : rate_bps_ > 0 ? bits / rate_bps_ : std::numeric_limits<double>::infinity();
  }
  double arrival_s(double start_s, double bits) const override { return start_s + delivery_s(start_s, bits); }
  double mean_bps() const override { return rate_bps_; }

 private:
  double rate_bps_;
};

}  // namespace kvstream::sim
