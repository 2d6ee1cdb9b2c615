#include "sim/tcp/tcp_model.h"

#include <algorithm>

namespace kvstream::sim {

TcpModel tcp_model_for(double rtt_s, const std::string& congestion_control, bool slow_start_after_idle,
                       uint64_t queue_bytes) {
  TcpModel model;
  model.rtt_s = rtt_s;
  model.congestion_control = congestion_control;
  model.slow_start_after_idle = slow_start_after_idle;
  model.queue_bytes = queue_bytes;
  return model;
}

uint64_t queue_bytes_for_ms(double queue_ms, double mean_bps) {
  const TcpModel packet;
  return std::max(uint64_t(packet.packet_bytes), uint64_t(queue_ms / 1e3 * mean_bps / 8));
}

}  // namespace kvstream::sim
