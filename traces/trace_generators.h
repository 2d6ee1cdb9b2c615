// Seeded synthetic bandwidth traces. Deterministic across platforms and standard libraries: the
// random numbers come from std::mt19937_64 (fully specified by the standard) through this module's
// own uniform and exponential transforms, never std:: distributions. Every generated trace is named
// by its canonical spec (below), so the name regenerates it.
//
// Generator spec grammar (command lines, configs):
//   spec  := name ':' key '=' value (',' key '=' value)*
//   constant:gbps=G[,duration_s=D]            G Gbps forever (period D, default 1 s)
//   uniform:seed=S,chunks=N[,lo_gbps=0.1,hi_gbps=10]
//                                             chunk-indexed, chunk c ~ i.i.d. Uniform[lo, hi) Gbps
//                                             (CacheGen's generated traces)
//   markov:seed=S,good_gbps=G,bad_gbps=B,good_s=MG,bad_s=MB,duration_s=D
//                                             two-state on/off link, exponential sojourns
//   step:high_gbps=H,low_gbps=L,at_s=A,duration_s=D
//                                             H until A seconds, then L until D
// Values are decimal numbers (seed and chunks: non-negative integers); bandwidths are >= 0,
// durations > 0. Unknown generators or keys, repeated or missing keys and bad values are
// std::invalid_argument naming the spec and the key.
#pragma once
#include <cstdint>
#include <string>

#include "traces/bandwidth_trace.h"

namespace kvstream::traces {

// `bps` (>= 0) constantly; period duration_s (> 0).
BandwidthTrace constant(double bps, double duration_s = 1.0);

// Chunk-indexed, n_chunks >= 1 chunks, chunk c ~ Uniform[lo_gbps, hi_gbps) Gbps i.i.d.; 0 <= lo <= hi.
BandwidthTrace cachegen_uniform(uint64_t seed, int64_t n_chunks, double lo_gbps = 0.1, double hi_gbps = 10.0);

// Two-state Markov link over [0, duration_s): starts good at good_bps; each sojourn is exponential
// with mean mean_good_s (good) or mean_bad_s (bad), then the state flips. The last sojourn is cut at
// duration_s.
BandwidthTrace markov(uint64_t seed, double good_bps, double bad_bps, double mean_good_s, double mean_bad_s,
                      double duration_s);

// high_bps over [0, drop_at_s), low_bps over [drop_at_s, duration_s); 0 < drop_at_s < duration_s.
BandwidthTrace step_drop(double high_bps, double low_bps, double drop_at_s, double duration_s);

// True when `text` names a generator before its ':' (tells a spec from a file path).
bool is_generator_spec(const std::string& text);

// The trace a spec describes (grammar above).
BandwidthTrace make_generated_trace(const std::string& spec);

}  // namespace kvstream::traces
