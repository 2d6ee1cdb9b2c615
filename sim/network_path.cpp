#include "sim/network_path.h"

#include <algorithm>

namespace kvstream::sim {

uint64_t QueueSize::bytes_at(double trace_mean_bps) const {
  return ms > 0 ? queue_bytes_for_ms(ms, trace_mean_bps) : bytes;
}

void apply_network_path(const NetworkPath& path, double trace_mean_bps, SimConfig& config) {
  config.link_model = path.link_model;
  config.request_rtt_s = path.request_rtt_s;
  config.chunk_rtt_s = path.chunk_rtt_s;
  config.tcp = tcp_model_for(std::max(path.request_rtt_s, path.chunk_rtt_s), path.congestion_control,
                             path.slow_start_after_idle, path.queue.bytes_at(trace_mean_bps));
}

}  // namespace kvstream::sim
