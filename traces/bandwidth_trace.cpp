#include "traces/bandwidth_trace.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace kvstream::traces {
namespace {

// Neumaier's compensated summation: prefix sums over many segments (a Mahimahi trace has ~10^5)
// stay within about one rounding of the exact sum instead of drifting by one per term.
class CompensatedSum {
 public:
  void add(double x) {
    const double t = sum_ + x;
    compensation_ += std::fabs(sum_) >= std::fabs(x) ? (sum_ - t) + x : (x - t) + sum_;
    sum_ = t;
  }
  double value() const { return sum_ + compensation_; }

 private:
  double sum_ = 0;
  double compensation_ = 0;
};

// The first index i in [1, v.size()) with below(v[i]) false, where `below` is true on a prefix of
// the range (a sorted array searched as std::partition_point does), v.size() when there is none.
// With a hint (an index) the search starts there and gallops: steps 1, 2, 4, ... away from it
// bracket the answer and a binary search inside the bracket finds it, so the answer never depends
// on the hint. Without one it is a binary search over the range.
template <class Below>
size_t gallop_partition_point(const std::vector<double>& v, const size_t* hint, Below below) {
  const size_t n = v.size();
  size_t lo = 1, hi = n;  // the answer is in [lo, hi]
  if (hint) {
    const size_t from = std::clamp<size_t>(*hint, 1, n - 1);
    if (below(v[from])) {  // the answer is after `from`
      lo = from + 1;
      for (size_t step = 1; lo < n; step *= 2) {
        const size_t probe = std::min(n - 1, from + step);
        if (!below(v[probe])) {
          hi = probe;
          break;
        }
        lo = probe + 1;
      }
    } else {  // the answer is `from` or before it
      hi = from;
      for (size_t step = 1; hi > 1; step *= 2) {
        const size_t probe = from > step + 1 ? from - step : 1;
        if (below(v[probe])) {
          lo = probe + 1;
          break;
        }
        hi = probe;
      }
    }
  }
  return size_t(std::partition_point(v.begin() + lo, v.begin() + hi, below) - v.begin());
}

}  // namespace

BandwidthTrace::BandwidthTrace(std::vector<TraceSegment> segments, std::string name, bool chunk_indexed)
    : segments_(std::move(segments)), name_(std::move(name)), chunk_indexed_(chunk_indexed) {
  const std::string who = "BandwidthTrace '" + name_ + "': ";
  if (segments_.empty()) throw std::invalid_argument(who + "no segments");
  start_s_.reserve(segments_.size() + 1);
  cum_bits_.reserve(segments_.size() + 1);
  start_s_.push_back(0);
  cum_bits_.push_back(0);
  CompensatedSum time_sum, bits_sum;
  for (size_t k = 0; k < segments_.size(); ++k) {
    const TraceSegment& s = segments_[k];
    if (!(s.duration_s > 0) || !std::isfinite(s.duration_s))
      throw std::invalid_argument(who + "segment " + std::to_string(k) + " has duration " + std::to_string(s.duration_s) +
                                  " s; durations must be finite and > 0");
    if (!(s.capacity_bps >= 0) || !std::isfinite(s.capacity_bps))
      throw std::invalid_argument(who + "segment " + std::to_string(k) + " has capacity " +
                                  std::to_string(s.capacity_bps) + " bit/s; capacities must be finite and >= 0");
    time_sum.add(s.duration_s);
    bits_sum.add(s.duration_s * s.capacity_bps);
    start_s_.push_back(time_sum.value());
    cum_bits_.push_back(bits_sum.value());
  }
  if (!std::isfinite(start_s_.back()) || !std::isfinite(cum_bits_.back()))
    throw std::invalid_argument(who + "the period or the bits per period overflow");
}

double BandwidthTrace::duration_s() const { return start_s_.back(); }

double BandwidthTrace::mean_bps() const { return cum_bits_.back() / start_s_.back(); }

BandwidthTrace::Position BandwidthTrace::locate(double t_s, SearchHint* hint) const {
  if (!(t_s >= 0) || !std::isfinite(t_s))
    throw std::invalid_argument("BandwidthTrace '" + name_ + "': time " + std::to_string(t_s) +
                                " s; times must be finite and >= 0");
  const double period = start_s_.back();
  // fmod is exact, so the offset is in [0, period) with no rounding; the period count is then an
  // integer up to rounding of the division.
  // Within the first period (most queries) fmod would return t itself: skip it.
  Position p;
  p.offset_s = t_s < period ? t_s : std::fmod(t_s, period);
  p.periods = t_s < period ? 0.0 : std::round((t_s - p.offset_s) / period);
  // The segment whose start is the last one <= the offset (start_s_[0] = 0 <= every offset).
  const size_t after_hint = hint ? hint->segment + 1 : 0;
  const size_t after = gallop_partition_point(start_s_, hint ? &after_hint : nullptr,
                                              [offset_s = p.offset_s](double start_s) { return start_s <= offset_s; });
  p.segment = std::min(after - 1, segments_.size() - 1);
  if (hint) hint->segment = p.segment;
  return p;
}

double BandwidthTrace::bits_before(const Position& p) const {
  return cum_bits_[p.segment] + (p.offset_s - start_s_[p.segment]) * segments_[p.segment].capacity_bps;
}

double BandwidthTrace::offset_of_bits(double bits, double slack_bits, SearchHint* hint) const {
  // First k with cum_bits_[k + 1] >= bits - slack; cum_bits_[k] < bits - slack, so segment k has
  // positive capacity. A target within the slack of a plateau's start (a zero-capacity stretch)
  // stops at that start instead of crossing the stretch.
  const size_t at_hint = hint ? hint->segment + 1 : 0;
  const size_t at = gallop_partition_point(cum_bits_, hint ? &at_hint : nullptr,
                                           [goal = bits - slack_bits](double cum) { return cum < goal; });
  if (at == cum_bits_.size()) return start_s_.back();
  const size_t k = at - 1;
  if (hint) hint->segment = k;
  const double into_s = (bits - cum_bits_[k]) / segments_[k].capacity_bps;
  return std::min(start_s_[k] + into_s, start_s_[k + 1]);
}

double BandwidthTrace::capacity_bps(double t_s) const { return segments_[locate(t_s).segment].capacity_bps; }

double BandwidthTrace::next_change_s(double t_s) const {
  const Position p = locate(t_s);
  const double next = t_s + (start_s_[p.segment + 1] - p.offset_s);
  return next > t_s ? next : std::nextafter(t_s, std::numeric_limits<double>::infinity());
}

double BandwidthTrace::bits_between(double t0_s, double t1_s, SearchHint* hint) const {
  if (!(t1_s > t0_s)) return 0;
  const Position p0 = locate(t0_s, hint);
  const Position p1 = locate(t1_s, hint);
  // Whole periods between the two period starts, plus the difference of the in-period prefixes.
  return (p1.periods - p0.periods) * cum_bits_.back() + bits_before(p1) - bits_before(p0);
}

double BandwidthTrace::time_to_send(double t0_s, double bits) const {
  return std::max(arrival_s(t0_s, bits) - t0_s, 0.0);
}

double BandwidthTrace::arrival_s(double t0_s, double bits, SearchHint* hint) const {
  if (!(bits > 0)) return t0_s;
  const double per_period = cum_bits_.back();
  if (per_period <= 0) return std::numeric_limits<double>::infinity();
  const Position p0 = locate(t0_s, hint);
  // The target, in bits since the start of t0's period (bits_before clamped to its segment's end,
  // so that it is monotone in t0 across segment boundaries too): reached `whole` periods later
  // plus `rest` bits into that period, with rest in (0, per_period] so that a target on a period
  // boundary lands at the end of the last segment with capacity (before any trailing zeros).
  // `slack` covers the rounding of the target (a few ulps), so that bits computed by
  // bits_between(t0, t1) with t1 in a zero-capacity stretch give the stretch's start, the
  // smallest time at which they are delivered.
  const double target = std::min(bits_before(p0), cum_bits_[p0.segment + 1]) + bits;
  const double slack = 8 * std::numeric_limits<double>::epsilon() * target;
  double rest = target < per_period ? target : std::fmod(target, per_period);
  double whole = target < per_period ? 0.0 : std::round((target - rest) / per_period);
  if (rest <= slack) {
    rest += per_period;
    whole -= 1;
  }
  // Absolute (period count x period + offset), never start + a duration computed from the start:
  // this keeps arrival_s non-decreasing in t0 in floating point, which planners rely on.
  return std::max(t0_s, (p0.periods + whole) * start_s_.back() + offset_of_bits(rest, slack, hint));
}

}  // namespace kvstream::traces
