// The packet mover of an emulated link (Mahimahi's mm-link and mm-delay in one thread): it reads
// the IP packets each namespace sends into its TUN device, passes them through the LinkQueue of
// their direction (drop-tail queue, trace-shaped serialization, one-way delay) and writes each into
// the other namespace's TUN device when the queue says it arrives. "Down" is server to client (the
// KV's direction), "up" client to server (requests and ACKs).
//
// With offloads (tun_device.h) a packet read may be a super-packet of many wire segments
// (gso_packet.h): the queue admits, serializes and drops it segment by segment, and the admitted
// segments are written out in slices, each when its last segment is due, a slice spanning at most
// kSliceSpanS of link time (a receiver's interrupt coalescing and GRO batch about as much).
//
// Link time is seconds since the link started (steady clock). The thread sleeps with epoll_pwait2
// until the next delivery is due (nanosecond timeout, timer slack 1 ns); how late deliveries are is
// measured (stats) and documented in docs/EMULATION.md.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "emulation/link_queue.h"

namespace kvstream::emulation {

struct EmulatedLinkConfig {
  LinkDirectionConfig down, up;
  bool offloads = true;     // the TUN devices were opened with offloads (virtio headers, super-packets)
  bool record_down = false;  // keep every down-link delivery (for accuracy measurements)
  // Link time 0 is this long after the link starts (e.g. when an emulation's first request arrives,
  // once its server listens).
  std::chrono::microseconds head_start{0};
};

inline constexpr double kSliceSpanS = 250e-6;

// One packet (a slice of segments, with offloads) written into the client's TUN device: when the
// queue said its last segment arrives, when it was written, its bytes on the wire.
struct Delivery {
  double scheduled_s = 0, written_s = 0;
  uint32_t bytes = 0;
};

struct EmulatedLinkStats {
  LinkDirectionStats down, up;
  double max_lateness_s = 0;      // written - scheduled, over every delivery
  double mean_lateness_s = 0;
  uint64_t write_errors = 0;      // packets a TUN device refused (counted as lost)
};

class EmulatedLink {
 public:
  // Starts moving packets between the two TUN descriptors (which must stay open until the link is
  // destroyed). Throws std::invalid_argument for a bad direction config.
  EmulatedLink(int client_tun_fd, int server_tun_fd, EmulatedLinkConfig config);
  ~EmulatedLink();  // stops the thread
  EmulatedLink(const EmulatedLink&) = delete;
  EmulatedLink& operator=(const EmulatedLink&) = delete;

  std::chrono::steady_clock::time_point zero() const { return start_; }  // link time 0
  double now_s() const;                                                  // link time
  EmulatedLinkStats stats() const;
  std::vector<Delivery> down_deliveries() const;  // with record_down

 private:
  void run();

  int client_fd_, server_fd_, stop_fd_;
  EmulatedLinkConfig config_;
  std::chrono::steady_clock::time_point start_;
  mutable std::mutex mutex_;  // guards stats_ and deliveries_ against readers on other threads
  EmulatedLinkStats stats_;
  std::vector<Delivery> deliveries_;
  std::thread thread_;
};

}  // namespace kvstream::emulation
