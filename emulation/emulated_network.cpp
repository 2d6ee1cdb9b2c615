#include "emulation/emulated_network.h"

#include <exception>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace kvstream::emulation {

namespace {

constexpr uint64_t kSocketBufferMaxBytes = 256ull << 20;

void check_congestion_control(const std::string& name) {
  std::ifstream in("/proc/sys/net/ipv4/tcp_available_congestion_control");
  std::string available, word;
  std::getline(in, available);
  std::istringstream words(available);
  while (words >> word)
    if (word == name) return;
  throw std::invalid_argument("congestion control \"" + name + "\" is not available in this kernel (available: " +
                              available + ")");
}

// The kernel TCP settings of one end. The congestion control is set per socket (tcp.h), where root
// may choose any the kernel offers; a namespace's default may be limited to the host's allowed list.
void configure_tcp(const NetworkNamespace& ns, const NetworkConfig& config) {
  write_net_sysctl(ns, "net/ipv4/tcp_slow_start_after_idle", config.slow_start_after_idle ? "1" : "0");
  // Every connection starts from the kernel's initial window, not from what an earlier one learnt.
  write_net_sysctl(ns, "net/ipv4/tcp_no_metrics_save", "1");
  // Socket buffers that never bound a window (the tcp link model has none): at 5 Gbit/s and 20 ms a
  // window is 12.5 MB, three times Linux's default cap on a send buffer (4 MiB). The minimum and
  // initial sizes stay Linux's.
  write_net_sysctl(ns, "net/ipv4/tcp_wmem", "4096 16384 " + std::to_string(kSocketBufferMaxBytes));
  write_net_sysctl(ns, "net/ipv4/tcp_rmem", "4096 131072 " + std::to_string(kSocketBufferMaxBytes));
}

}  // namespace

void run_in(const NetworkNamespace& ns, const std::function<void()>& work) {
  std::exception_ptr error;
  std::thread thread([&] {
    try {
      ScopedNamespace inside(ns);
      work();
    } catch (...) {
      error = std::current_exception();
    }
  });
  thread.join();
  if (error) std::rethrow_exception(error);
}

EmulatedNetwork::EmulatedNetwork(const NetworkConfig& config)
    : config_(config), client_ns_(NetworkNamespace::create()), server_ns_(NetworkNamespace::create()) {
  check_congestion_control(config.congestion_control);
  const auto tun = [&](const char* name, const char* local, const char* peer) {
    return std::make_unique<TunDevice>(name, local, peer, config.mtu, config.link.offloads);
  };
  run_in(client_ns_, [&] { client_tun_ = tun("kvs-client", kClientAddress, kServerAddress); });
  run_in(server_ns_, [&] { server_tun_ = tun("kvs-server", kServerAddress, kClientAddress); });
  configure_tcp(client_ns_, config);
  configure_tcp(server_ns_, config);
  link_ = std::make_unique<EmulatedLink>(client_tun_->fd(), server_tun_->fd(), config.link);
}

}  // namespace kvstream::emulation
