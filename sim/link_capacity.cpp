#include "sim/link_capacity.h"

#include "sim/link.h"

namespace kvstream::sim {

double TraceCapacity::bits_between(double t0_s, double t1_s) const {
  return trace_.bits_between(offset_s_ + t0_s, offset_s_ + t1_s);
}

double TraceCapacity::delivery_s(double start_s, double bits) const {
  const double trace_s = offset_s_ + start_s;
  return trace_.arrival_s(trace_s, bits) - trace_s;
}

double TraceCapacity::arrival_s(double start_s, double bits) const {
  return solo_transfer_end_s(trace_, offset_s_, start_s, bits, 0);
}

}  // namespace kvstream::sim
