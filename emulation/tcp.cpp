#include "emulation/tcp.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace kvstream::emulation {

namespace {

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what + ": " + std::strerror(errno)); }

sockaddr_in address_of(const std::string& address, uint16_t port) {
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_port = htons(port);
  if (::inet_pton(AF_INET, address.c_str(), &in.sin_addr) != 1) throw std::invalid_argument("not an IPv4 address: " + address);
  return in;
}

}  // namespace

TcpSocket& TcpSocket::operator=(TcpSocket&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

TcpSocket::~TcpSocket() {
  if (fd_ >= 0) ::close(fd_);
}

void TcpSocket::write_all(const void* data, size_t bytes) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (bytes > 0) {
    const ssize_t n = ::send(fd_, p, bytes, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("send");
    p += n;
    bytes -= size_t(n);
  }
}

void TcpSocket::read_exact(void* data, size_t bytes) {
  auto* p = static_cast<uint8_t*>(data);
  while (bytes > 0) {
    const ssize_t n = ::recv(fd_, p, bytes, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("recv");
    if (n == 0) throw std::runtime_error("recv: the peer closed the connection with " + std::to_string(bytes) + " bytes to go");
    p += n;
    bytes -= size_t(n);
  }
}

bool TcpSocket::read_and_discard(size_t bytes, bool eof_ok_at_start) {
  std::vector<uint8_t> sink(std::min<size_t>(bytes, 1 << 20));
  const size_t total = bytes;
  while (bytes > 0) {
    const ssize_t n = ::recv(fd_, sink.data(), std::min(bytes, sink.size()), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("recv");
    if (n == 0) {
      if (eof_ok_at_start && bytes == total) return false;
      throw std::runtime_error("recv: the peer closed the connection with " + std::to_string(bytes) + " bytes to go");
    }
    bytes -= size_t(n);
  }
  return true;
}

namespace {
void set_congestion_control(const TcpSocket& s, const std::string& congestion_control) {
  if (!congestion_control.empty() &&
      ::setsockopt(s.fd(), IPPROTO_TCP, TCP_CONGESTION, congestion_control.data(), socklen_t(congestion_control.size())) != 0)
    fail("setsockopt TCP_CONGESTION " + congestion_control);
}
}  // namespace

std::string congestion_control_of(const TcpSocket& s) {
  char name[32] = {};
  socklen_t length = sizeof name;
  if (::getsockopt(s.fd(), IPPROTO_TCP, TCP_CONGESTION, name, &length) != 0) fail("getsockopt TCP_CONGESTION");
  return std::string(name, strnlen(name, std::min<size_t>(length, sizeof name)));
}

TcpSocket listen_tcp(const std::string& address, uint16_t port, uint16_t* bound_port, const std::string& congestion_control) {
  TcpSocket s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s) fail("socket");
  set_congestion_control(s, congestion_control);
  const int one = 1;
  ::setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in in = address_of(address, port);
  if (::bind(s.fd(), reinterpret_cast<sockaddr*>(&in), sizeof in) != 0) fail("bind " + address);
  if (::listen(s.fd(), 64) != 0) fail("listen");
  socklen_t length = sizeof in;
  if (::getsockname(s.fd(), reinterpret_cast<sockaddr*>(&in), &length) != 0) fail("getsockname");
  if (bound_port) *bound_port = ntohs(in.sin_port);
  return s;
}

TcpSocket accept_tcp(const TcpSocket& listener) {
  while (true) {
    const int fd = ::accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) {
      // A streaming server sends each answer whole: with Nagle's algorithm the last, partial segment
      // of a chunk would wait a round trip for the acknowledgement of the rest (measured: + ~1 RTT
      // per chunk at 80 ms).
      const int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return TcpSocket(fd);
    }
    if (errno != EINTR) fail("accept");
  }
}

TcpSocket connect_tcp(const std::string& address, uint16_t port, const std::string& congestion_control) {
  TcpSocket s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s) fail("socket");
  set_congestion_control(s, congestion_control);
  const int one = 1;
  ::setsockopt(s.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  const sockaddr_in in = address_of(address, port);
  if (::connect(s.fd(), reinterpret_cast<const sockaddr*>(&in), sizeof in) != 0) fail("connect " + address);
  return s;
}

}  // namespace kvstream::emulation
