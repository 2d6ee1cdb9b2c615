#include "sim/tcp_connection_link.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kvstream::sim {

TcpConnectionLink::TcpConnectionLink(EventQueue& events, Link& shared, const TcpModel& model,
                                     const traces::BandwidthTrace& trace, double trace_offset_s)
    : events_(events),
      shared_(shared),
      model_(model),
      trace_(trace),
      trace_offset_s_(trace_offset_s),
      control_(make_congestion_control(model)) {}

double TcpConnectionLink::bits_between(double t0_s, double t1_s) const {
  return trace_.bits_between(trace_offset_s_ + t0_s, trace_offset_s_ + t1_s);
}

void TcpConnectionLink::send(double bits, size_t chunk, int choice, EventQueue::Handler on_delivered) {
  const double now_s = events_.now_s();
  if (idle_since_s_ >= 0) control_->on_restart(now_s - idle_since_s_, model_.rtt_s + model_.min_rto_s);
  remaining_bits_ = bits * model_.packet_bytes / model_.mss_bytes;  // the headers travel too
  overrun_s_ = 0;
  first_round_ = true;
  choice_ = choice;
  on_delivered_ = std::move(on_delivered);
  round(chunk);
}

void TcpConnectionLink::round(size_t chunk) {
  round_start_s_ = events_.now_s();
  const double packet_bits = 8 * model_.packet_bytes;
  if (model_.rtt_s <= 0) {  // no round trip to wait for: the window never limits
    const double bits = remaining_bits_;
    shared_.send(bits, chunk, choice_, [this] {
      remaining_bits_ = 0;
      idle_since_s_ = events_.now_s();
      const EventQueue::Handler done = std::move(on_delivered_);
      done();
    });
    return;
  }
  const double sent_bits = std::min(control_->window_packets() * packet_bits, remaining_bits_);
  // The first packet waits for the trace to deliver it beyond its serialization at the mean rate:
  // a gap in a bursty trace's capacity is a delay that the sender sees in its round trips.
  const double trace_now_s = trace_offset_s_ + round_start_s_;
  first_packet_wait_s_ = std::max(0.0, trace_.arrival_s(trace_now_s, packet_bits) - trace_now_s -
                                           packet_bits / trace_.mean_bps());
  // Drop-tail: an ACK-clocked (or paced) round reaches the bottleneck spread over the round trip,
  // so the path holds capacity · rtt in flight and the queue its limit; the unpaced first round of
  // a transfer arrives as one burst, which only the queue holds. The rest is lost.
  const bool burst = first_round_ && !control_->paced();
  first_round_ = false;
  const double pipe_bits = burst ? 0 : bits_between(round_start_s_, round_start_s_ + model_.rtt_s);
  const double queue_bits =
      model_.queue_bytes > 0 ? 8.0 * double(model_.queue_bytes) : std::numeric_limits<double>::infinity();
  const double lost_bits = std::max(0.0, sent_bits - pipe_bits - queue_bits);
  const double through_bits = sent_bits - lost_bits;
  // A round that sent all that was left and lost its tail (drop-tail loses the end of a round) has
  // no later packet whose acknowledgement reveals the loss: the sender waits for its tail loss
  // probe, two smoothed round trips (the queue's delay included) after the round, before recovery.
  const bool tail_loss = lost_bits > 0 && sent_bits >= remaining_bits_;
  const double capacity_bps = std::max(1.0, pipe_bits > 0 ? pipe_bits / model_.rtt_s : trace_.mean_bps());
  const double srtt_s = model_.rtt_s + std::min(through_bits, queue_bits) / capacity_bps;
  const double probe_s = tail_loss ? 2 * srtt_s : 0;
  shared_.send(through_bits, chunk, choice_, [this, chunk, sent_bits, through_bits, lost_bits, packet_bits, probe_s] {
    const double now_s = events_.now_s();
    remaining_bits_ = std::max(0.0, remaining_bits_ - through_bits);
    lost_bits_ += lost_bits;
    RoundSample sample;
    sample.now_s = now_s;
    sample.round_s = std::max(now_s - round_start_s_, model_.rtt_s);
    sample.sent_packets = sent_bits / packet_bits;
    sample.delivered_packets = through_bits / packet_bits;
    sample.lost_packets = lost_bits / packet_bits;
    sample.capacity_bps = now_s > round_start_s_ ? bits_between(round_start_s_, now_s) / (now_s - round_start_s_)
                                                  : bits_between(round_start_s_, round_start_s_ + model_.rtt_s) /
                                                        model_.rtt_s;
    sample.rtt_s = model_.rtt_s;
    sample.queue_delay_s = overrun_s_ + first_packet_wait_s_;
    overrun_s_ = std::max(0.0, now_s - round_start_s_ - model_.rtt_s);
    control_->on_round(sample);
    if (remaining_bits_ <= 1e-9) {
      remaining_bits_ = 0;
      idle_since_s_ = now_s;
      const EventQueue::Handler done = std::move(on_delivered_);
      done();
      return;
    }
    // The next round starts as this round's first acknowledgements return (after a tail loss, as
    // the probe's do).
    const double next_s = std::max(now_s, round_start_s_ + model_.rtt_s + first_packet_wait_s_) + probe_s;
    events_.schedule(next_s, [this, chunk] { round(chunk); });
  });
}

}  // namespace kvstream::sim
