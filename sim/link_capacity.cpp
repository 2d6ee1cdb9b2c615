#include "sim/link_capacity.h"

#include "sim/link.h"

namespace kvstream::sim {

template <class Query>
double TraceCapacity::with_hint(Query query) const {
  traces::BandwidthTrace::SearchHint hint{hint_segment_.load(std::memory_order_relaxed)};
  const double answer = query(&hint);
  hint_segment_.store(hint.segment, std::memory_order_relaxed);
  return answer;
}

double TraceCapacity::bits_between(double t0_s, double t1_s) const {
  return with_hint([&](auto* hint) { return trace_.bits_between(offset_s_ + t0_s, offset_s_ + t1_s, hint); });
}

double TraceCapacity::delivery_s(double start_s, double bits) const {
  const double trace_s = offset_s_ + start_s;
  return with_hint([&](auto* hint) { return trace_.arrival_s(trace_s, bits, hint); }) - trace_s;
}

double TraceCapacity::arrival_s(double start_s, double bits) const {
  return with_hint([&](auto* hint) { return solo_transfer_end_s(trace_, offset_s_, start_s, bits, 0, hint); });
}

}  // namespace kvstream::sim
