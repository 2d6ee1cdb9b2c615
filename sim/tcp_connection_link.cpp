#include "sim/tcp_connection_link.h"

#include <algorithm>
#include <cmath>

namespace kvstream::sim {

TcpConnectionLink::TcpConnectionLink(EventQueue& events, Link& shared, const TcpModel& model,
                                     std::function<double(double now_s)> capacity_bps)
    : events_(events),
      shared_(shared),
      model_(model),
      capacity_bps_(std::move(capacity_bps)),
      cwnd_bytes_(model.initial_window_packets * model.mss_bytes) {}

void TcpConnectionLink::send(double bits, size_t chunk, EventQueue::Handler on_delivered) {
  const double now_s = events_.now_s();
  const double initial_bytes = model_.initial_window_packets * model_.mss_bytes;
  if (model_.restart_after_idle && idle_since_s_ >= 0) {
    // Linux's tcp_cwnd_restart: halve per retransmission timeout of idleness, down to the initial window.
    const double rto_s = model_.rtt_s + model_.min_rto_s;
    for (double idle_s = now_s - idle_since_s_ - rto_s; idle_s > 0 && cwnd_bytes_ > initial_bytes; idle_s -= rto_s)
      cwnd_bytes_ = std::max(initial_bytes, cwnd_bytes_ / 2);
  }
  remaining_bits_ = bits * model_.packet_bytes / model_.mss_bytes;  // the headers travel too
  on_delivered_ = std::move(on_delivered);
  round(chunk);
}

void TcpConnectionLink::round(size_t chunk) {
  round_start_s_ = events_.now_s();
  const double window_bits = 8 * cwnd_bytes_ * model_.packet_bytes / model_.mss_bytes;
  const bool covers_bdp = window_bits >= capacity_bps_(round_start_s_) * model_.rtt_s;
  const double bits = covers_bdp ? remaining_bits_ : std::min(window_bits, remaining_bits_);
  shared_.send(bits, chunk, [this, bits, chunk, covers_bdp] {
    remaining_bits_ -= bits;
    // Slow start: the window grows by what was acknowledged (it doubles after a full window).
    if (!covers_bdp) cwnd_bytes_ += bits / 8 * model_.mss_bytes / model_.packet_bytes;
    if (remaining_bits_ <= 1e-9) {
      remaining_bits_ = 0;
      idle_since_s_ = events_.now_s();
      const EventQueue::Handler done = std::move(on_delivered_);
      done();
      return;
    }
    const double next_s = std::max(events_.now_s(), round_start_s_ + model_.rtt_s);
    events_.schedule(next_s, [this, chunk] { round(chunk); });
  });
}

}  // namespace kvstream::sim
