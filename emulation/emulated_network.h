// Two network namespaces joined by an emulated link (docs/EMULATION.md): the client (who fetches KV)
// at 10.47.0.1 and the server (who holds it) at 10.47.0.2, each with a TUN device whose packets the
// link moves. Real kernel TCP runs on both ends, with the congestion control and the
// restart-after-idle behaviour the config asks for. Everything belongs to this object: destroying it
// (or the process ending in any way) removes the link thread, the devices and the namespaces.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "emulation/emulated_link.h"
#include "emulation/network_namespace.h"
#include "emulation/tun_device.h"

namespace kvstream::emulation {

struct NetworkConfig {
  EmulatedLinkConfig link;
  std::string congestion_control = "cubic";  // any the kernel offers (net.ipv4.tcp_available_congestion_control)
  bool slow_start_after_idle = true;         // net.ipv4.tcp_slow_start_after_idle, the kernel's default
  int mtu = 1500;
};

inline constexpr const char* kClientAddress = "10.47.0.1";
inline constexpr const char* kServerAddress = "10.47.0.2";

class EmulatedNetwork {
 public:
  // Throws std::runtime_error saying what is missing (root, namespaces, /dev/net/tun) or what failed,
  // and std::invalid_argument for a congestion control the kernel does not offer.
  explicit EmulatedNetwork(const NetworkConfig& config);

  const NetworkNamespace& client() const { return client_ns_; }
  const NetworkNamespace& server() const { return server_ns_; }
  EmulatedLink& link() { return *link_; }
  const NetworkConfig& config() const { return config_; }

 private:
  NetworkConfig config_;
  NetworkNamespace client_ns_, server_ns_;
  std::unique_ptr<TunDevice> client_tun_, server_tun_;
  std::unique_ptr<EmulatedLink> link_;  // last: stops before the devices close
};

// Runs `work` on a new thread inside `ns` and waits for it; an exception it throws is rethrown here.
void run_in(const NetworkNamespace& ns, const std::function<void()>& work);

}  // namespace kvstream::emulation
