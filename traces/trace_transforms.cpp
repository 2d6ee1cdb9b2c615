#include "traces/trace_transforms.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "traces/format_number.h"

namespace kvstream::traces {
namespace {

// A copy of `trace` with every capacity mapped through `f`, named name + suffix.
template <typename F>
BandwidthTrace map_capacity(const BandwidthTrace& trace, const std::string& suffix, F f) {
  std::vector<TraceSegment> segments = trace.segments();
  for (TraceSegment& s : segments) s.capacity_bps = f(s.capacity_bps);
  return BandwidthTrace(std::move(segments), trace.name() + suffix, trace.chunk_indexed());
}

}  // namespace

BandwidthTrace scale(const BandwidthTrace& trace, double factor) {
  if (!(factor >= 0) || !std::isfinite(factor))
    throw std::invalid_argument("scale: factor must be finite and >= 0, got " + format_number(factor));
  return map_capacity(trace, "|scale=" + format_number(factor), [factor](double bps) { return bps * factor; });
}

BandwidthTrace offset(const BandwidthTrace& trace, double add_bps) {
  if (!std::isfinite(add_bps)) throw std::invalid_argument("offset: add_bps must be finite, got " + format_number(add_bps));
  return map_capacity(trace, "|offset_bps=" + format_number(add_bps),
                      [add_bps](double bps) { return std::max(0.0, bps + add_bps); });
}

BandwidthTrace clip(const BandwidthTrace& trace, double min_bps, double max_bps) {
  if (!(min_bps >= 0) || !std::isfinite(min_bps) || !(max_bps >= min_bps))
    throw std::invalid_argument("clip: need finite 0 <= min_bps <= max_bps, got " + format_number(min_bps) + " and " +
                                format_number(max_bps));
  return map_capacity(trace, "|clip_bps=" + format_number(min_bps) + ".." + format_number(max_bps),
                      [min_bps, max_bps](double bps) { return std::clamp(bps, min_bps, max_bps); });
}

BandwidthTrace window(const BandwidthTrace& trace, double t0_s, double t1_s) {
  if (!(t0_s >= 0) || !(t1_s > t0_s) || !std::isfinite(t1_s))
    throw std::invalid_argument("window: need finite 0 <= t0_s < t1_s, got " + format_number(t0_s) + " and " +
                                format_number(t1_s));
  const std::vector<TraceSegment>& in = trace.segments();
  // The segment holding t0 and how far into it t0 lies.
  const double offset_s = std::fmod(t0_s, trace.duration_s());
  size_t k = 0;
  double start_s = 0;
  while (k + 1 < in.size() && offset_s >= start_s + in[k].duration_s) start_s += in[k++].duration_s;
  const double length_s = t1_s - t0_s;
  // A remainder this small is rounding: the last piece absorbs it rather than becoming a sliver.
  const double sliver_s = length_s * 1e-12;
  std::vector<TraceSegment> out;
  double left_s = length_s;
  double piece_s = std::max(start_s + in[k].duration_s - offset_s, sliver_s);
  for (;;) {
    if (left_s - piece_s <= sliver_s) {
      out.push_back({left_s, in[k].capacity_bps});
      break;
    }
    out.push_back({piece_s, in[k].capacity_bps});
    left_s -= piece_s;
    k = (k + 1) % in.size();
    piece_s = in[k].duration_s;
  }
  return BandwidthTrace(std::move(out), trace.name() + "|window_s=" + format_number(t0_s) + ".." + format_number(t1_s),
                        trace.chunk_indexed());
}

BandwidthTrace concatenate(const std::vector<BandwidthTrace>& traces) {
  if (traces.empty()) throw std::invalid_argument("concatenate: no traces");
  std::vector<TraceSegment> segments;
  std::string name;
  for (const BandwidthTrace& t : traces) {
    if (t.chunk_indexed() != traces.front().chunk_indexed())
      throw std::invalid_argument("concatenate: '" + t.name() + "' and '" + traces.front().name() +
                                  "' differ in chunk_indexed; cannot mix chunk-indexed and timed traces");
    segments.insert(segments.end(), t.segments().begin(), t.segments().end());
    name += (name.empty() ? "" : "+") + t.name();
  }
  return BandwidthTrace(std::move(segments), name, traces.front().chunk_indexed());
}

}  // namespace kvstream::traces
