#include "emulation/tun_device.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace kvstream::emulation {

namespace {

// TUN_F_USO4 | TUN_F_USO6 (linux/if_tun.h since Linux 6.2; the kernel takes both or neither). Only
// IPv4 ever crosses the link.
constexpr unsigned kTunUso = 0x20 | 0x40;

sockaddr ipv4(const std::string& address) {
  sockaddr_in in{};
  in.sin_family = AF_INET;
  if (::inet_pton(AF_INET, address.c_str(), &in.sin_addr) != 1) throw std::invalid_argument("not an IPv4 address: " + address);
  sockaddr out{};
  std::memcpy(&out, &in, sizeof in);
  return out;
}

}  // namespace

TunDevice::TunDevice(const std::string& name, const std::string& local, const std::string& peer, int mtu, bool offloads)
    : name_(name) {
  if (name.empty() || name.size() >= IFNAMSIZ) throw std::invalid_argument("bad TUN device name \"" + name + "\"");
  fd_ = ::open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK);
  if (fd_ < 0) throw std::runtime_error("cannot open /dev/net/tun: " + std::string(std::strerror(errno)));
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
  ifr.ifr_flags = short(IFF_TUN | IFF_NO_PI | (offloads ? IFF_VNET_HDR : 0));
  const int sock = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  const auto step = [&](bool ok, const char* what) {
    if (ok) return;
    const std::string error = std::strerror(errno);
    if (sock >= 0) ::close(sock);
    ::close(fd_);
    fd_ = -1;
    throw std::runtime_error("TUN device " + name + ": " + what + ": " + error);
  };
  step(::ioctl(fd_, TUNSETIFF, &ifr) == 0, "TUNSETIFF");
  // TSO needs checksum offload. USO (UDP segmentation, which link-check's sender uses) needs Linux
  // 6.2; an older kernel segments UDP before the device, which costs CPU but changes no result.
  step(!offloads || ::ioctl(fd_, TUNSETOFFLOAD, TUN_F_CSUM | TUN_F_TSO4 | kTunUso) == 0 ||
           ::ioctl(fd_, TUNSETOFFLOAD, TUN_F_CSUM | TUN_F_TSO4) == 0,
       "TUNSETOFFLOAD (checksum and TSO over IPv4)");
  step(sock >= 0, "socket");
  ifr.ifr_addr = ipv4(local);
  step(::ioctl(sock, SIOCSIFADDR, &ifr) == 0, "set the address");
  ifr.ifr_dstaddr = ipv4(peer);
  step(::ioctl(sock, SIOCSIFDSTADDR, &ifr) == 0, "set the peer address");
  ifr.ifr_netmask = ipv4("255.255.255.255");
  step(::ioctl(sock, SIOCSIFNETMASK, &ifr) == 0, "set the netmask");
  ifr.ifr_mtu = mtu;
  step(::ioctl(sock, SIOCSIFMTU, &ifr) == 0, "set the MTU");
  // The device's own ring must never drop: a sender's burst of a whole window (thousands of
  // packets) waits there for the link thread, whose queue is the only one that may drop.
  ifr.ifr_qlen = kTxQueuePackets;
  step(::ioctl(sock, SIOCSIFTXQLEN, &ifr) == 0, "set the transmit queue length");
  step(::ioctl(sock, SIOCGIFFLAGS, &ifr) == 0, "read the flags");
  ifr.ifr_flags = short(ifr.ifr_flags | IFF_UP | IFF_RUNNING);
  step(::ioctl(sock, SIOCSIFFLAGS, &ifr) == 0, "bring it up");
  ::close(sock);
}

TunDevice::~TunDevice() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace kvstream::emulation
