#include "emulation/link_check.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <stdexcept>
#include <thread>

#include "emulation/emulated_network.h"

namespace kvstream::emulation {

namespace {

constexpr uint16_t kPort = 9;            // the client's sink
constexpr size_t kDatagramBytes = 1472;  // + 28 bytes of IP and UDP headers = 1,500
constexpr size_t kDatagramsPerSend = 44; // with UDP_SEGMENT: 64,768 bytes, under UDP's 65,507

int udp_socket() {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket(UDP) failed");
  return fd;
}

sockaddr_in address(const char* ip, uint16_t port) {
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_port = htons(port);
  ::inet_pton(AF_INET, ip, &in.sin_addr);
  return in;
}

double process_cpu_s() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(q * double(v.size() - 1) + 0.5))];
}

}  // namespace

LinkCheckResult check_link(const LinkCheckOptions& o) {
  if (!o.trace) throw std::invalid_argument("link check: no trace");
  if (!(o.trace->mean_bps() > 0))
    throw std::invalid_argument("link check: trace \"" + o.trace->name() + "\" has no capacity: nothing to measure");
  if (!(o.seconds > 0 && o.seconds <= kMaxLinkCheckS))
    throw std::invalid_argument("link check: the measured span must be in (0, " + std::to_string(int(kMaxLinkCheckS)) +
                                "] s, got " + std::to_string(o.seconds));
  if (!(o.window_s >= kMinLinkCheckWindowS && o.window_s <= kMaxLinkCheckWindowS))
    throw std::invalid_argument("link check: a window must be 1 ms to 10 s, got " + std::to_string(o.window_s * 1e3) + " ms");
  if (o.window_s > o.seconds)
    throw std::invalid_argument("link check: a window of " + std::to_string(o.window_s) + " s is longer than the " +
                                std::to_string(o.seconds) + " s measured: no window to compare");
  if (o.queue_limit_bytes != 0 && o.queue_limit_bytes < 1500)
    throw std::invalid_argument("link check: the queue must hold a packet (1,500 bytes)");
  if (const std::string why = emulation_unavailable_reason(); !why.empty()) throw std::runtime_error(why);
  NetworkConfig config;
  const double span_s = 0.5 + o.seconds + 0.2;
  const uint64_t excess_bytes = uint64_t((0.25 * o.trace->bits_between(0, span_s) + 0.5 * o.trace->mean_bps()) / 8);
  config.link.down = {o.trace, 0, o.one_way_delay_s, o.queue_limit_bytes ? o.queue_limit_bytes : 2 * excess_bytes};
  config.link.up = {nullptr, 0, o.one_way_delay_s};
  config.link.record_down = true;
  config.link.offloads = o.offloads;
  const double cpu_before_s = process_cpu_s();
  EmulatedNetwork net(config);
  const double warmup_s = 0.5, end_s = warmup_s + o.seconds;

  std::atomic<bool> done{false};
  int sink = -1;
  run_in(net.client(), [&] {
    sink = udp_socket();
    const sockaddr_in in = address(kClientAddress, kPort);
    if (::bind(sink, reinterpret_cast<const sockaddr*>(&in), sizeof in) != 0) throw std::runtime_error("bind the UDP sink");
    const int one = 1;  // take super-packets whole rather than have the kernel cut them up for us
    if (o.offloads) ::setsockopt(sink, IPPROTO_UDP, UDP_GRO, &one, sizeof one);
  });
  std::thread drain([&] {  // keeps the client's socket buffer from filling (and the kernel from answering with ICMP)
    std::vector<uint8_t> buffer(65536);
    timeval timeout{0, 100000};
    ::setsockopt(sink, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    while (!done) ::recv(sink, buffer.data(), buffer.size(), 0);
  });
  uint64_t sent = 0;
  run_in(net.server(), [&] {
    const int source = udp_socket();
    const sockaddr_in to = address(kClientAddress, kPort);
    ::connect(source, reinterpret_cast<const sockaddr*>(&to), sizeof to);
    const size_t datagrams_per_send = o.offloads ? kDatagramsPerSend : 1;
    const int segment = kDatagramBytes;
    if (o.offloads && ::setsockopt(source, IPPROTO_UDP, UDP_SEGMENT, &segment, sizeof segment) != 0)
      throw std::runtime_error("setsockopt(UDP_SEGMENT) failed");
    const std::vector<uint8_t> payload(kDatagramBytes * datagrams_per_send, 0xa5);
    double sent_bits = 0;
    // Paced at 1.25 x the capacity integrated so far plus a head start of half a second at the mean
    // rate, so the link's queue never runs empty (its limit must hold the excess) and the sender
    // does not take the CPU the link needs.
    const double head_start_bits = 0.5 * o.trace->mean_bps();
    for (double now = net.link().now_s(); now < end_s + 0.2; now = net.link().now_s()) {
      const double budget_bits = 1.25 * o.trace->bits_between(0, now) + head_start_bits;
      while (sent_bits < budget_bits) {
        if (::send(source, payload.data(), payload.size(), 0) < 0) break;
        sent_bits += 8.0 * 1500 * double(datagrams_per_send);
        sent += datagrams_per_send;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    ::close(source);
  });
  done = true;
  drain.join();
  ::close(sink);

  const auto deliveries = net.link().down_deliveries();
  const auto stats = net.link().stats();
  LinkCheckResult r;
  r.cpu_s = process_cpu_s() - cpu_before_s;
  r.trace = o.trace->name();
  r.sent_packets = sent;
  r.dropped_packets = stats.down.dropped_packets;
  r.mean_lateness_s = stats.mean_lateness_s;
  r.max_lateness_s = stats.max_lateness_s;
  const size_t windows = size_t(o.seconds / o.window_s);
  std::vector<double> delivered(windows, 0);
  for (const auto& d : deliveries) {
    const double w = (d.written_s - warmup_s) / o.window_s;
    if (w >= 0 && w < double(windows)) delivered[size_t(w)] += d.bytes;
  }
  double total_delivered = 0, total_integral = 0;
  std::vector<double> abs_errors;
  for (size_t w = 0; w < windows; ++w) {
    const double a = warmup_s + double(w) * o.window_s - o.one_way_delay_s;
    const double integral = o.trace->bits_between(a, a + o.window_s) / 8;
    total_delivered += delivered[w];
    total_integral += integral;
    if (integral <= 0) continue;  // an outage: nothing to compare
    r.window_errors.push_back(delivered[w] / integral - 1);
    abs_errors.push_back(std::fabs(r.window_errors.back()));
  }
  r.windows = abs_errors.size();
  if (r.windows == 0)
    throw std::invalid_argument("link check: trace \"" + o.trace->name() + "\" has no capacity in any window of the " +
                                std::to_string(o.seconds) + " s measured (from " + std::to_string(warmup_s) +
                                " s): nothing was compared");
  r.median_abs_error = quantile(abs_errors, 0.5);
  r.p95_abs_error = quantile(abs_errors, 0.95);
  r.max_abs_error = abs_errors.empty() ? 0 : *std::max_element(abs_errors.begin(), abs_errors.end());
  r.delivered_vs_integral = total_integral > 0 ? total_delivered / total_integral : 0;
  r.mean_mbps = total_integral * 8 / o.seconds / 1e6;
  double all_delivered_bytes = 0;
  for (const auto& d : deliveries) all_delivered_bytes += d.bytes;
  r.cpu_s_per_gbit = all_delivered_bytes > 0 ? r.cpu_s / (all_delivered_bytes * 8 / 1e9) : 0;
  return r;
}

nlohmann::json to_json(const LinkCheckResult& r) {
  return {{"trace", r.trace},
          {"mean_mbps", r.mean_mbps},
          {"windows", r.windows},
          {"median_abs_error", r.median_abs_error},
          {"p95_abs_error", r.p95_abs_error},
          {"max_abs_error", r.max_abs_error},
          {"delivered_vs_integral", r.delivered_vs_integral},
          {"mean_lateness_s", r.mean_lateness_s},
          {"max_lateness_s", r.max_lateness_s},
          {"sent_packets", r.sent_packets},
          {"dropped_packets", r.dropped_packets},
          {"cpu_s", r.cpu_s},
          {"cpu_s_per_gbit", r.cpu_s_per_gbit}};
}

}  // namespace kvstream::emulation
