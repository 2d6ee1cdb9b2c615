// Network namespaces the emulator makes for itself: anonymous (never bind-mounted under
// /run/netns), each held by a file descriptor of this process. Nothing outlives the process: when
// it exits, however it exits (even killed), the descriptors close, the namespaces and the devices in
// them disappear, and no other process ever ran in them. Namespaces are per thread in Linux: a
// thread enters one with ScopedNamespace and leaves it when the scope ends.
#pragma once
#include <string>

namespace kvstream::emulation {

// Why this process cannot emulate ("" when it can): it needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN),
// namespace support, and /dev/net/tun.
std::string emulation_unavailable_reason();

class NetworkNamespace {
 public:
  // A new, empty network namespace (its loopback is brought up). Throws std::runtime_error saying
  // what is missing when the process may not create one.
  static NetworkNamespace create();

  NetworkNamespace(NetworkNamespace&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  NetworkNamespace& operator=(NetworkNamespace&&) = delete;
  NetworkNamespace(const NetworkNamespace&) = delete;
  ~NetworkNamespace();

  int fd() const { return fd_; }

 private:
  explicit NetworkNamespace(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// The calling thread inside `ns` for the scope's lifetime; sockets and devices it makes belong there.
class ScopedNamespace {
 public:
  explicit ScopedNamespace(const NetworkNamespace& ns);
  ~ScopedNamespace();
  ScopedNamespace(const ScopedNamespace&) = delete;
  ScopedNamespace& operator=(const ScopedNamespace&) = delete;

 private:
  int previous_fd_ = -1;
};

// Writes a sysctl of `ns`, e.g. ("net/ipv4/tcp_slow_start_after_idle", "0"). /proc/sys/net follows
// the namespace of the process, not of a thread, so a short-lived child process enters `ns` and
// writes it. Throws std::runtime_error when it cannot.
void write_net_sysctl(const NetworkNamespace& ns, const std::string& key, const std::string& value);

}  // namespace kvstream::emulation
