// The TCP sockets of an emulation, made in the calling thread's network namespace: a listener on the
// server, and connections with a named congestion control. Errors are std::runtime_error naming the
// call; a peer that closes early is an error too.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace kvstream::emulation {

class TcpSocket {
 public:
  TcpSocket() = default;
  explicit TcpSocket(int fd) : fd_(fd) {}
  TcpSocket(TcpSocket&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  TcpSocket& operator=(TcpSocket&& other) noexcept;
  TcpSocket(const TcpSocket&) = delete;
  TcpSocket& operator=(const TcpSocket&) = delete;
  ~TcpSocket();

  int fd() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }

  void write_all(const void* data, size_t bytes);
  void read_exact(void* data, size_t bytes);
  // Reads and discards `bytes`; returns false when the peer closed before the first byte.
  bool read_and_discard(size_t bytes, bool eof_ok_at_start = false);

 private:
  int fd_ = -1;
};

// A listener on `address:port` (port 0: any); `bound_port` gets the port chosen. Its connections use
// `congestion_control` (set on the listener, which accepted sockets inherit; "" = the namespace's
// default). Per socket, not per namespace: a host may allow a namespace only some of the congestion
// controls it offers (net.ipv4.tcp_allowed_congestion_control), while a root socket may take any.
TcpSocket listen_tcp(const std::string& address, uint16_t port, uint16_t* bound_port, const std::string& congestion_control);
// The congestion control `socket` uses.
std::string congestion_control_of(const TcpSocket& socket);
TcpSocket accept_tcp(const TcpSocket& listener);  // TCP_NODELAY set
// A connection using `congestion_control` ("" = the namespace's default), TCP_NODELAY set.
TcpSocket connect_tcp(const std::string& address, uint16_t port, const std::string& congestion_control);

}  // namespace kvstream::emulation
