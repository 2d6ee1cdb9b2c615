// A packet as a TUN device with offloads hands it over (IFF_VNET_HDR, tun_device.h): a virtio-net
// header, then one IPv4 packet that may stand for many packets on the wire. With TSO/USO the
// sending kernel does not cut a large write into MTU-sized segments; it hands the device one
// "super-packet" (generic segmentation offload, GSO): the IP and TCP/UDP headers once, then up to
// 64 KiB of payload, and in the virtio header the segment payload size (gso_size). On a real wire
// that is ceil(payload / gso_size) packets, each with its own copy of the headers.
//
// The emulated link (emulated_link.h) queues, serializes and drops such a packet segment by segment,
// exactly as it would the MTU packets, and delivers the segments it admitted in slices: a slice is a
// valid packet of consecutive segments, with the headers the kernel's own segmentation would give it
// (tcp_gso_segment, __udp_gso_segment): sequence number advanced by the segments before it, IP id
// advanced by one per segment, lengths and IP header checksum recomputed, CWR only in the first
// segment, FIN and PSH only in the last. Its transport checksum stays partial (the virtio header's
// NEEDS_CSUM: the field holds the pseudo-header sum for the slice's length), as the kernel's was.
//
// Pure byte arithmetic, tested without a network. Invariants:
//   - sum over i of segment_wire_bytes(i) = headers × segments + payload, and every segment but the
//     last carries exactly gso_size bytes of payload;
//   - slice(0, segments()) is the packet itself; slices of a partition carry the payload once, in order.
#pragma once
#include <cstdint>
#include <span>

namespace kvstream::emulation {

// struct virtio_net_hdr (linux/virtio_net.h), in the host's byte order (a TUN device's default on a
// little-endian host).
inline constexpr size_t kVirtioNetHeaderBytes = 10;

class GsoPacket {
 public:
  // The layout of `packet` (virtio header + IPv4). A packet that is not a TCP or UDP super-packet
  // over IPv4, or whose headers do not add up (nothing this link's kernels send), is one segment of
  // its IP size, forwarded as it is.
  static GsoPacket parse(std::span<const uint8_t> packet);
  // A packet read from a device without offloads (no virtio header): one segment.
  static GsoPacket plain(uint32_t ip_bytes);

  uint32_t segments() const { return segments_; }
  uint32_t segment_wire_bytes(uint32_t i) const;  // IP bytes of segment i on the wire (headers included)
  uint32_t wire_bytes() const;                    // of all segments

  // Writes into `out` a packet (virtio header + IPv4) carrying segments [first, first + count) of
  // `packet`, which parse() described, and returns its size (at most packet.size(), which `out` must
  // hold). count >= 1 and first + count <= segments().
  size_t slice(std::span<const uint8_t> packet, uint32_t first, uint32_t count, std::span<uint8_t> out) const;

 private:
  uint32_t segments_ = 1;
  uint32_t ip_bytes_ = 0;         // the whole IP packet (headers once)
  uint32_t header_bytes_ = 0;     // IP + TCP/UDP headers; 0 when not a super-packet
  uint32_t segment_payload_ = 0;  // gso_size
  bool udp_ = false;
};

}  // namespace kvstream::emulation
