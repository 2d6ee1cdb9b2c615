#include "emulation/emulated_link.h"

#include "emulation/gso_packet.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <deque>
#include <optional>
#include <span>
#include <stdexcept>

namespace kvstream::emulation {

namespace {

constexpr size_t kMaxPacketBytes = 1 << 17;  // a super-packet's 64 KiB of IP and its virtio header, with room
constexpr int kReadBatch = 32;

struct Packet {
  double deliver_s;
  uint32_t wire_bytes;
  std::vector<uint8_t> data;
};

// One direction's pending packets (in delivery order: FIFO with a constant delay) and the
// buffers of delivered ones, reused.
struct Direction {
  LinkQueue queue;
  int from_fd, to_fd;
  bool record;
  std::deque<Packet> pending;
  std::vector<std::vector<uint8_t>> spare;

  // A copy of `bytes` in a buffer of a delivered packet, when there is one.
  std::vector<uint8_t> copy(const uint8_t* bytes, size_t size) {
    std::vector<uint8_t> packet;
    if (!spare.empty()) {
      packet = std::move(spare.back());
      spare.pop_back();
    }
    packet.assign(bytes, bytes + size);
    return packet;
  }
};

}  // namespace

EmulatedLink::EmulatedLink(int client_tun_fd, int server_tun_fd, EmulatedLinkConfig config)
    : client_fd_(client_tun_fd), server_fd_(server_tun_fd), config_(std::move(config)) {
  LinkQueue check_down(config_.down), check_up(config_.up);  // bad configs fail here, on the caller's thread
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (stop_fd_ < 0) throw std::runtime_error("eventfd: " + std::string(std::strerror(errno)));
  start_ = std::chrono::steady_clock::now() + config_.head_start;
  thread_ = std::thread([this] { run(); });
}

EmulatedLink::~EmulatedLink() {
  const uint64_t one = 1;
  if (::write(stop_fd_, &one, sizeof one) < 0) {}  // the thread also ends when the descriptor closes
  thread_.join();
  ::close(stop_fd_);
}

double EmulatedLink::now_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

EmulatedLinkStats EmulatedLink::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

std::vector<Delivery> EmulatedLink::down_deliveries() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return deliveries_;
}

void EmulatedLink::run() {
  ::prctl(PR_SET_TIMERSLACK, 1UL);  // wake up on time, not up to 50 µs late
  Direction down{LinkQueue(config_.down), server_fd_, client_fd_, config_.record_down, {}, {}};
  Direction up{LinkQueue(config_.up), client_fd_, server_fd_, false, {}, {}};
  const int epoll = ::epoll_create1(EPOLL_CLOEXEC);
  for (const int fd : {client_fd_, server_fd_, stop_fd_}) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = fd;
    ::epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
  }
  double lateness_sum_s = 0;
  uint64_t delivered = 0;
  const auto deliver_due = [&](Direction& d) {
    while (!d.pending.empty()) {
      const double now = now_s();
      Packet& p = d.pending.front();
      if (p.deliver_s > now) return;
      const bool written = ::write(d.to_fd, p.data.data(), p.data.size()) == static_cast<ssize_t>(p.data.size());
      const double lateness = now - p.deliver_s;
      std::lock_guard<std::mutex> lock(mutex_);
      if (!written) ++stats_.write_errors;
      if (d.record) deliveries_.push_back({p.deliver_s, now, p.wire_bytes});
      stats_.max_lateness_s = std::max(stats_.max_lateness_s, lateness);
      lateness_sum_s += lateness;
      stats_.mean_lateness_s = lateness_sum_s / double(++delivered);
      d.spare.push_back(std::move(p.data));
      d.pending.pop_front();
    }
  };
  // Reads at most kReadBatch packets, so that deliveries keep their turn when packets come in as
  // fast as they are read. A packet's segments go through the queue one by one; the admitted ones
  // leave in slices of consecutive segments spanning at most kSliceSpanS.
  std::vector<uint8_t> incoming(kMaxPacketBytes), sliced(kMaxPacketBytes);
  std::vector<std::optional<double>> segment_deliver_s;
  const auto read_some = [&](Direction& d) {
    for (int i = 0; i < kReadBatch; ++i) {
      const ssize_t n = ::read(d.from_fd, incoming.data(), incoming.size());
      if (n <= 0) return;
      const std::span<const uint8_t> packet(incoming.data(), size_t(n));
      const GsoPacket g = config_.offloads ? GsoPacket::parse(packet) : GsoPacket::plain(uint32_t(n));
      const double now = now_s();
      segment_deliver_s.clear();
      for (uint32_t k = 0; k < g.segments(); ++k)
        segment_deliver_s.push_back(d.queue.admit(now, g.segment_wire_bytes(k)));  // nothing: dropped
      for (uint32_t first = 0; first < g.segments();) {
        if (!segment_deliver_s[first]) {
          ++first;
          continue;
        }
        uint32_t end = first + 1, wire_bytes = g.segment_wire_bytes(first);
        while (end < g.segments() && segment_deliver_s[end] &&
               *segment_deliver_s[end] - *segment_deliver_s[first] <= kSliceSpanS)
          wire_bytes += g.segment_wire_bytes(end++);
        const bool whole = first == 0 && end == g.segments();
        const size_t bytes = whole ? packet.size() : g.slice(packet, first, end - first, sliced);
        d.pending.push_back(
            {*segment_deliver_s[end - 1], wire_bytes, d.copy(whole ? packet.data() : sliced.data(), bytes)});
        first = end;
      }
    }
  };
  epoll_event events[4];
  while (true) {
    deliver_due(down);
    deliver_due(up);
    double next_s = now_s() + 0.1;
    for (const Direction* d : {&down, &up})
      if (!d->pending.empty()) next_s = std::min(next_s, d->pending.front().deliver_s);
    const double wait_s = std::max(0.0, next_s - now_s());
    const timespec timeout{time_t(wait_s), long(std::fmod(wait_s, 1.0) * 1e9)};
    const int n = ::epoll_pwait2(epoll, events, 4, &timeout, nullptr);
    bool stop = false;
    for (int i = 0; i < n; ++i) {
      if (events[i].data.fd == stop_fd_) stop = true;
      else read_some(events[i].data.fd == server_fd_ ? down : up);
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stats_.down = down.queue.stats();
      stats_.up = up.queue.stats();
    }
    if (stop) break;
  }
  ::close(epoll);
}

}  // namespace kvstream::emulation
