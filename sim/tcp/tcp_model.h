// The parameters of the `tcp` link model's connection (sim/tcp/tcp_connection_link.h), and how a path
// and a congestion control set them.
#pragma once
#include <cstdint>
#include <string>

namespace kvstream::sim {

struct TcpModel {
  double rtt_s = 0;                      // the path's round trip (no queueing)
  std::string congestion_control = "cubic";  // sim/tcp/congestion_control.h: cubic, reno, bbr
  bool slow_start_after_idle = true;     // net.ipv4.tcp_slow_start_after_idle (cubic, reno)
  bool hystart = true;                   // cubic's HyStart (tcp_cubic's hystart parameter)
  uint64_t queue_bytes = 0;              // the bottleneck's drop-tail queue; 0: unbounded (no loss)
  int initial_window_packets = 10;       // Linux's initial window
  double mss_bytes = 1448, packet_bytes = 1500;  // TCP with timestamps over IPv4, 1,500-byte MTU
  double min_rto_s = 0.2;                // Linux's tcp_rto_min: the timeout is about rtt + this
};

// The model of a connection over a path of round trip `rtt_s` and a drop-tail queue of
// `queue_bytes` (0: unbounded) under `congestion_control`, with net.ipv4.tcp_slow_start_after_idle
// as given.
TcpModel tcp_model_for(double rtt_s, const std::string& congestion_control, bool slow_start_after_idle,
                       uint64_t queue_bytes);

// A drop-tail queue of `queue_ms` milliseconds at `mean_bps`, in bytes (at least one packet).
uint64_t queue_bytes_for_ms(double queue_ms, double mean_bps);

}  // namespace kvstream::sim
