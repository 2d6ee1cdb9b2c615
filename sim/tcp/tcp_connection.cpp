#include "sim/tcp/tcp_connection.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kvstream::sim {

TcpConnection::TcpConnection(const TcpModel& model) : model_(model), control_(make_congestion_control(model)) {}

TcpConnection::TcpConnection(const TcpConnection& other)
    : model_(other.model_),
      control_(other.control_->clone()),
      idle_since_s_(other.idle_since_s_),
      lost_bits_(other.lost_bits_),
      remaining_bits_(other.remaining_bits_),
      first_round_(other.first_round_),
      overrun_s_(other.overrun_s_) {}

TcpConnection& TcpConnection::operator=(const TcpConnection& other) {
  if (this != &other) *this = TcpConnection(other);
  return *this;
}

void TcpConnection::begin_transfer(double now_s, double payload_bits) {
  if (idle_since_s_ >= 0) control_->on_restart(now_s - idle_since_s_, model_.rtt_s + model_.min_rto_s);
  remaining_bits_ = payload_bits * model_.packet_bytes / model_.mss_bytes;  // the headers travel too
  overrun_s_ = 0;
  first_round_ = true;
}

TcpConnection::Round TcpConnection::begin_round(double now_s, const LinkCapacity& capacity,
                                                double others_in_flight_bits) {
  Round round;
  round.start_s = now_s;
  const double queue_bits =
      model_.queue_bytes > 0 ? 8.0 * double(model_.queue_bytes) : std::numeric_limits<double>::infinity();
  // How long the bits others keep queued ahead of this round take to drain.
  const auto drain_s = [&](double queued_bits) {
    return queued_bits > 0 ? capacity.arrival_s(now_s, queued_bits) - now_s : 0.0;
  };
  if (model_.rtt_s <= 0) {  // no round trip to wait for: the window never limits
    round.sent_bits = round.through_bits = remaining_bits_;
    // With no pipe, whatever the others have in flight is queued (up to the limit): the bits flow
    // once that has drained.
    round.shared_queue_wait_s = drain_s(std::min(queue_bits, others_in_flight_bits));
    return round;
  }
  const double packet_bits = 8 * model_.packet_bytes;
  round.sent_bits = std::min(control_->window_packets() * packet_bits, remaining_bits_);
  // The first packet waits for the trace to deliver it beyond its serialization at the mean rate:
  // a gap in a bursty trace's capacity is a delay that the sender sees in its round trips.
  round.first_packet_wait_s =
      std::max(0.0, capacity.delivery_s(now_s, packet_bits) - packet_bits / capacity.mean_bps());
  // Drop-tail: an ACK-clocked (or paced) round reaches the bottleneck spread over the round trip,
  // so the path holds capacity · rtt in flight and the queue its limit; the unpaced first round of
  // a transfer arrives as one burst, which only the queue holds. The rest is lost.
  const bool burst = first_round_ && !control_->paced();
  first_round_ = false;
  const double pipe_bits = burst ? 0 : capacity.bits_between(now_s, now_s + model_.rtt_s);
  // Other connections' packets beyond the path's bandwidth-delay product stand in the same queue:
  // they take its room (a loss is the aggregate's overflow), and this round's packets wait behind
  // them. At least one packet gets in, as one does whenever the queue sends one on. (Alone, the
  // trace is read no more often than before: sweeps of single requests cost what they did.)
  double others_queued_bits = 0;
  if (others_in_flight_bits > 0) {
    const double path_pipe_bits = burst ? capacity.bits_between(now_s, now_s + model_.rtt_s) : pipe_bits;
    others_queued_bits = std::min(queue_bits, std::max(0.0, others_in_flight_bits - path_pipe_bits));
  }
  round.lost_bits = std::min(std::max(0.0, round.sent_bits - pipe_bits - (queue_bits - others_queued_bits)),
                             std::max(0.0, round.sent_bits - packet_bits));
  round.through_bits = round.sent_bits - round.lost_bits;
  // A round that sent all that was left and lost its tail (drop-tail loses the end of a round) has
  // no later packet whose acknowledgement reveals the loss: the sender waits for its tail loss
  // probe, two smoothed round trips (the queue's delay included) after the round, before recovery.
  const bool tail_loss = round.lost_bits > 0 && round.sent_bits >= remaining_bits_;
  const double capacity_bps = std::max(1.0, pipe_bits > 0 ? pipe_bits / model_.rtt_s : capacity.mean_bps());
  const double srtt_s = model_.rtt_s + std::min(round.through_bits, queue_bits) / capacity_bps;
  round.probe_s = tail_loss ? 2 * srtt_s : 0;
  round.shared_queue_wait_s = drain_s(others_queued_bits);
  return round;
}

std::optional<double> TcpConnection::end_round(const Round& round, double now_s, const LinkCapacity& capacity) {
  if (model_.rtt_s <= 0) {
    remaining_bits_ = 0;
    idle_since_s_ = now_s;
    return std::nullopt;
  }
  const double packet_bits = 8 * model_.packet_bytes;
  remaining_bits_ = std::max(0.0, remaining_bits_ - round.through_bits);
  lost_bits_ += round.lost_bits;
  RoundSample sample;
  sample.now_s = now_s;
  sample.round_s = std::max(now_s - round.start_s, model_.rtt_s + round.shared_queue_wait_s);
  sample.sent_packets = round.sent_bits / packet_bits;
  sample.delivered_packets = round.through_bits / packet_bits;
  sample.lost_packets = round.lost_bits / packet_bits;
  sample.capacity_bps = now_s > round.start_s
                            ? capacity.bits_between(round.start_s, now_s) / (now_s - round.start_s)
                            : capacity.bits_between(round.start_s, round.start_s + model_.rtt_s) / model_.rtt_s;
  sample.rtt_s = model_.rtt_s;
  sample.queue_delay_s = overrun_s_ + round.first_packet_wait_s;
  overrun_s_ = std::max(0.0, now_s - round.start_s - model_.rtt_s);
  control_->on_round(sample);
  if (remaining_bits_ <= 1e-9) {
    remaining_bits_ = 0;
    idle_since_s_ = now_s;
    return std::nullopt;
  }
  // The next round starts as this round's first acknowledgements return (after a tail loss, as
  // the probe's do).
  return std::max(now_s, round.start_s + model_.rtt_s + round.first_packet_wait_s + round.shared_queue_wait_s) +
         round.probe_s;
}

double TcpConnection::transfer_end_s(double start_s, double payload_bits, const LinkCapacity& capacity) {
  begin_transfer(start_s, payload_bits);
  for (double now_s = start_s;;) {
    const Round round = begin_round(now_s, capacity);
    const double through_s = capacity.arrival_s(now_s, round.through_bits);
    if (!std::isfinite(through_s)) return std::numeric_limits<double>::infinity();
    const std::optional<double> next_s = end_round(round, through_s, capacity);
    if (!next_s) return through_s;
    now_s = *next_s;
  }
}

}  // namespace kvstream::sim
