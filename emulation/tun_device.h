// A TUN device (layer 3: each read or write is one IP packet) in the calling thread's network
// namespace, configured as one end of a point-to-point link. The device exists while the object
// holds its descriptor (it is not persistent).
//
// With offloads, each read or write starts with a virtio-net header (IFF_VNET_HDR) and the device
// offers checksum, TCP and UDP segmentation offload (TSO/USO over IPv4): the kernel hands over
// super-packets of up to 64 KiB (gso_packet.h) instead of one read per MTU packet, which is what lets
// the link thread move Gbit/s on two cores (docs/EMULATION.md).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace kvstream::emulation {

class TunDevice {
 public:
  // Creates `name` in the calling thread's namespace with `local` as its IPv4 address and `peer` as
  // the other end (dotted quads), `mtu` bytes, up, and the descriptor non-blocking. Throws
  // std::runtime_error naming the step that failed.
  TunDevice(const std::string& name, const std::string& local, const std::string& peer, int mtu, bool offloads);
  static constexpr int kTxQueuePackets = 65536;  // txqueuelen: the device's ring of packets to read
  TunDevice(TunDevice&& other) noexcept : fd_(other.fd_), name_(std::move(other.name_)) { other.fd_ = -1; }
  TunDevice(const TunDevice&) = delete;
  TunDevice& operator=(const TunDevice&) = delete;
  ~TunDevice();

  int fd() const { return fd_; }
  const std::string& name() const { return name_; }

 private:
  int fd_ = -1;
  std::string name_;
};

}  // namespace kvstream::emulation
