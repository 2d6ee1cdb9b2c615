#include "sim/link.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace kvstream::sim {

namespace {
double chunk_rate_bps(const traces::BandwidthTrace& trace, size_t chunk) {
  const auto& segments = trace.segments();
  return segments[chunk % segments.size()].capacity_bps;
}
}  // namespace

double solo_transfer_end_s(const traces::BandwidthTrace& trace, double trace_offset_s, double start_s, double bits,
                           size_t chunk, traces::BandwidthTrace::SearchHint* hint) {
  if (bits <= 0 || std::isinf(start_s)) return start_s;
  if (trace.chunk_indexed()) {
    const double rate_bps = chunk_rate_bps(trace, chunk);
    return rate_bps > 0 ? start_s + bits / rate_bps : std::numeric_limits<double>::infinity();
  }
  return std::max(start_s, trace.arrival_s(start_s + trace_offset_s, bits, hint) - trace_offset_s);
}

SharedLink::SharedLink(EventQueue& events, const traces::BandwidthTrace& trace, double trace_offset_s)
    : events_(events), trace_(trace), trace_offset_s_(trace_offset_s) {
  if (trace.chunk_indexed())
    throw std::invalid_argument("trace \"" + trace.name() + "\" is chunk-indexed; a shared link needs a time-indexed trace");
}

double SharedLink::served_per_flow_bits(double now_s) const {
  if (flows_.empty() || now_s <= updated_s_) return 0;
  return trace_.bits_between(updated_s_ + trace_offset_s_, now_s + trace_offset_s_) / static_cast<double>(flows_.size());
}

void SharedLink::catch_up() {
  const double now_s = events_.now_s();
  const double per_flow_bits = served_per_flow_bits(now_s);
  for (auto& flow : flows_) flow.remaining_bits -= per_flow_bits;
  updated_s_ = now_s;
}

double SharedLink::bits_in_flight() const {
  const double served_bits = served_per_flow_bits(events_.now_s());
  double bits = 0;
  for (const auto& flow : flows_) bits += std::max(0.0, flow.remaining_bits - served_bits);
  return bits;
}

void SharedLink::send(double bits, size_t, int, EventQueue::Handler on_delivered) {
  catch_up();
  flows_.push_back({bits, std::move(on_delivered)});
  schedule_next_completion();
}

void SharedLink::schedule_next_completion() {
  ++generation_;
  if (flows_.empty()) return;
  double least_bits = flows_.front().remaining_bits;
  for (const auto& flow : flows_) least_bits = std::min(least_bits, flow.remaining_bits);
  const double now_s = events_.now_s();
  // With one flow this is exactly solo_transfer_end_s, which the timeline model uses.
  const double at_s = std::max(
      now_s, trace_.arrival_s(now_s + trace_offset_s_, std::max(0.0, least_bits) * static_cast<double>(flows_.size())) -
                 trace_offset_s_);
  if (std::isinf(at_s)) return;  // a trace without capacity: the transfers never finish
  events_.schedule(at_s, [this, generation = generation_] { on_completion_event(generation); });
}

void SharedLink::on_completion_event(uint64_t generation) {
  if (generation != generation_) return;
  catch_up();
  // The flow(s) with the least remaining bits are done; the rest keep what is left. Flows within
  // 1e-6 bit (plus a relative 1e-9) of the least finish too: the rounding of the two integrals.
  double least_bits = flows_.front().remaining_bits;
  for (const auto& flow : flows_) least_bits = std::min(least_bits, flow.remaining_bits);
  const double done_below = least_bits + 1e-6 + 1e-9 * std::abs(least_bits);
  finished_.clear();
  size_t kept = 0;
  for (auto& flow : flows_) {
    if (flow.remaining_bits <= done_below)
      finished_.push_back(std::move(flow.on_delivered));
    else
      flows_[kept++] = std::move(flow);
  }
  flows_.resize(kept);
  schedule_next_completion();
  for (auto& handler : finished_) handler();  // may send(), never re-enters this function
}

void ChunkIndexedLink::send(double bits, size_t chunk, int, EventQueue::Handler on_delivered) {
  const double now_s = events_.now_s();
  if (now_s < busy_until_s_)
    throw std::logic_error("chunk-indexed trace \"" + trace_.name() +
                           "\": two transfers at once (chunk-indexed traces support one request at a time)");
  busy_until_s_ = solo_transfer_end_s(trace_, 0, now_s, bits, chunk);
  if (std::isinf(busy_until_s_)) return;
  events_.schedule(busy_until_s_, std::move(on_delivered));
}

}  // namespace kvstream::sim
