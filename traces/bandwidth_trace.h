// A link's capacity over time: piecewise constant, in bits/s, looping at the end like Mahimahi.
//
// Segment k covers [start_k, start_k + duration_k) of one period; the trace repeats with period
// duration_s(). Queries integrate exactly over segments (prefix sums + binary search), so the
// simulator never steps time in small increments.
//
// A chunk-indexed trace (CacheGen's per-chunk JSONL, docs/CACHEGEN.md §11.3) gives one capacity per
// chunk instead of per time: segment c is the capacity while chunk c is sent (durations are 1 s
// placeholders). `chunk_indexed()` says which kind a trace is; the simulator treats them apart.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace kvstream::traces {

struct TraceSegment {
  double duration_s = 0;    // > 0
  double capacity_bps = 0;  // >= 0; zero-capacity intervals are legal
};

class BandwidthTrace {
 public:
  // Throws std::invalid_argument when segments is empty, a duration is not > 0 and finite, or a
  // capacity is negative or not finite.
  BandwidthTrace(std::vector<TraceSegment> segments, std::string name = "", bool chunk_indexed = false);

  const std::string& name() const { return name_; }
  bool chunk_indexed() const { return chunk_indexed_; }
  const std::vector<TraceSegment>& segments() const { return segments_; }

  double duration_s() const;      // one period
  double mean_bps() const;        // time-weighted mean over one period
  double capacity_bps(double t_s) const;  // capacity at time t >= 0 (looped)
  // Time > t of the next capacity change (segment boundary, looped).
  double next_change_s(double t_s) const;

  // Where a sequence of nearby queries (a transfer's rounds) left off: queries that pass one start
  // their segment searches there and gallop, so each costs O(log distance) instead of
  // O(log segments) (a Mahimahi trace has ~10^5 segments). The answers never depend on it.
  struct SearchHint {
    size_t segment = 0;
  };

  // Exact bits deliverable in [t0, t1), 0 <= t0 <= t1, looping.
  double bits_between(double t0_s, double t1_s, SearchHint* hint = nullptr) const;
  // Seconds needed to deliver `bits` starting at t0: the smallest d with bits_between(t0, t0 + d) >= bits.
  // 0 for bits <= 0; +infinity when the whole period carries no bits.
  double time_to_send(double t0_s, double bits) const;
  // Absolute time by which `bits` sent from t0 have arrived (t0 + time_to_send, computed so that it
  // is non-decreasing in t0 in floating point); +infinity when the period carries no bits.
  double arrival_s(double t0_s, double bits, SearchHint* hint = nullptr) const;

 private:
  // Where absolute time t falls: `periods` whole periods, then `offset_s` in [0, period) into
  // segment `segment`.
  struct Position {
    double periods = 0;
    double offset_s = 0;
    size_t segment = 0;
  };
  // Throws std::invalid_argument unless t_s is finite and >= 0.
  Position locate(double t_s, SearchHint* hint = nullptr) const;
  // Bits delivered from the start of p's period up to p.
  double bits_before(const Position& p) const;
  // The smallest offset into a period by which `bits` in (0, bits per period] have been delivered,
  // counting a target within `slack_bits` above a zero-capacity stretch's start as reached there.
  double offset_of_bits(double bits, double slack_bits, SearchHint* hint) const;

  std::vector<TraceSegment> segments_;
  std::vector<double> start_s_;     // start_s_[k] = sum of durations before k; size n + 1
  std::vector<double> cum_bits_;    // cum_bits_[k] = bits delivered in [0, start_s_[k]); size n + 1
  std::string name_;
  bool chunk_indexed_ = false;
};

}  // namespace kvstream::traces
