// Transforms of bandwidth traces. Each returns a new trace (the input is unchanged) keeping the
// input's chunk_indexed flag, named after the input and the transform, e.g. "norway_bus_1|scale=0.5".
// Invalid arguments throw std::invalid_argument.
#pragma once
#include <vector>

#include "traces/bandwidth_trace.h"

namespace kvstream::traces {

// Every capacity times `factor` (finite, >= 0).
BandwidthTrace scale(const BandwidthTrace& trace, double factor);

// Every capacity plus `add_bps` (finite, may be negative), clamped at 0.
BandwidthTrace offset(const BandwidthTrace& trace, double add_bps);

// Every capacity clamped to [min_bps, max_bps]; 0 <= min_bps <= max_bps, max_bps may be +infinity.
BandwidthTrace clip(const BandwidthTrace& trace, double min_bps, double max_bps);

// [t0_s, t1_s) of the looped trace as a trace of period t1_s - t0_s; 0 <= t0_s < t1_s, finite. A
// window longer than the period repeats its segments.
BandwidthTrace window(const BandwidthTrace& trace, double t0_s, double t1_s);

// The traces one after another (one period each), as one trace looping over all of them. Non-empty,
// all chunk-indexed or none.
BandwidthTrace concatenate(const std::vector<BandwidthTrace>& traces);

}  // namespace kvstream::traces
