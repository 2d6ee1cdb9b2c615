#include "sim/tcp/tcp_connection_link.h"

namespace kvstream::sim {

TcpConnectionLink::TcpConnectionLink(EventQueue& events, SharedLink& shared, const TcpModel& model,
                                     const traces::BandwidthTrace& trace, double trace_offset_s)
    : events_(events), shared_(shared), capacity_(trace, trace_offset_s), connection_(model) {}

void TcpConnectionLink::send(double bits, size_t chunk, int choice, EventQueue::Handler on_delivered) {
  connection_.begin_transfer(events_.now_s(), bits);
  choice_ = choice;
  on_delivered_ = std::move(on_delivered);
  round(chunk);
}

void TcpConnectionLink::round(size_t chunk) {
  // Between its rounds a connection has nothing on the link: what is in flight is the others'.
  const TcpConnection::Round sent = connection_.begin_round(events_.now_s(), capacity_, shared_.bits_in_flight());
  const auto send = [this, chunk, sent] {
    shared_.send(sent.through_bits, chunk, choice_, [this, chunk, sent] {
      const std::optional<double> next_s = connection_.end_round(sent, events_.now_s(), capacity_);
      if (!next_s) {
        const EventQueue::Handler done = std::move(on_delivered_);
        done();
        return;
      }
      events_.schedule(*next_s, [this, chunk] { round(chunk); });
    });
  };
  if (connection_.model().rtt_s <= 0 && sent.shared_queue_wait_s > 0)
    events_.schedule(events_.now_s() + sent.shared_queue_wait_s, send);
  else
    send();
}

}  // namespace kvstream::sim
