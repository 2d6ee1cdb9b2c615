#include "sim/tcp_connection_link.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kvstream::sim {

TcpConnectionLink::TcpConnectionLink(EventQueue& events, Link& shared, const TcpModel& model,
                                     std::function<double(double, double)> bits_between)
    : events_(events),
      shared_(shared),
      model_(model),
      bits_between_(std::move(bits_between)),
      control_(make_congestion_control(model)) {}

void TcpConnectionLink::send(double bits, size_t chunk, EventQueue::Handler on_delivered) {
  const double now_s = events_.now_s();
  if (idle_since_s_ >= 0) control_->on_restart(now_s - idle_since_s_, model_.rtt_s + model_.min_rto_s);
  remaining_bits_ = bits * model_.packet_bytes / model_.mss_bytes;  // the headers travel too
  on_delivered_ = std::move(on_delivered);
  round(chunk);
}

void TcpConnectionLink::round(size_t chunk) {
  round_start_s_ = events_.now_s();
  const double packet_bits = 8 * model_.packet_bytes;
  if (model_.rtt_s <= 0) {  // no round trip to wait for: the window never limits
    const double bits = remaining_bits_;
    shared_.send(bits, chunk, [this] {
      remaining_bits_ = 0;
      idle_since_s_ = events_.now_s();
      const EventQueue::Handler done = std::move(on_delivered_);
      done();
    });
    return;
  }
  const double sent_bits = std::min(control_->window_packets() * packet_bits, remaining_bits_);
  // Drop-tail: the path holds capacity · rtt in flight and the queue its limit; the rest is lost.
  const double pipe_bits = bits_between_(round_start_s_, round_start_s_ + model_.rtt_s);
  const double queue_bits =
      model_.queue_bytes > 0 ? 8.0 * double(model_.queue_bytes) : std::numeric_limits<double>::infinity();
  const double lost_bits = std::max(0.0, sent_bits - pipe_bits - queue_bits);
  const double through_bits = sent_bits - lost_bits;
  shared_.send(through_bits, chunk, [this, chunk, sent_bits, through_bits, lost_bits, packet_bits] {
    const double now_s = events_.now_s();
    remaining_bits_ = std::max(0.0, remaining_bits_ - through_bits);
    lost_bits_ += lost_bits;
    RoundSample sample;
    sample.now_s = now_s;
    sample.round_s = std::max(now_s - round_start_s_, model_.rtt_s);
    sample.sent_packets = sent_bits / packet_bits;
    sample.delivered_packets = through_bits / packet_bits;
    sample.lost_packets = lost_bits / packet_bits;
    sample.capacity_bps = now_s > round_start_s_ ? bits_between_(round_start_s_, now_s) / (now_s - round_start_s_)
                                                  : bits_between_(round_start_s_, round_start_s_ + model_.rtt_s) /
                                                        model_.rtt_s;
    sample.rtt_s = model_.rtt_s;
    control_->on_round(sample);
    if (remaining_bits_ <= 1e-9) {
      remaining_bits_ = 0;
      idle_since_s_ = now_s;
      const EventQueue::Handler done = std::move(on_delivered_);
      done();
      return;
    }
    const double next_s = std::max(now_s, round_start_s_ + model_.rtt_s);
    events_.schedule(next_s, [this, chunk] { round(chunk); });
  });
}

}  // namespace kvstream::sim
