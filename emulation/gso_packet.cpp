#include "emulation/gso_packet.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace kvstream::emulation {

namespace {

// virtio_net_hdr fields (host byte order) and the GSO types this link's devices offer.
constexpr size_t kGsoTypeAt = 1, kGsoSizeAt = 4;
constexpr uint8_t kGsoTcpV4 = 1, kGsoUdpL4 = 5, kGsoEcnBit = 0x80;
constexpr uint8_t kProtocolTcp = 6, kProtocolUdp = 17;
constexpr uint8_t kTcpFin = 0x01, kTcpPsh = 0x08, kTcpCwr = 0x80;

uint16_t read_be16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }
void write_be16(uint8_t* p, uint16_t v) {
  p[0] = uint8_t(v >> 8);
  p[1] = uint8_t(v);
}
uint16_t read_host16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
void write_host16(uint8_t* p, uint16_t v) { std::memcpy(p, &v, 2); }

// The ones' complement sum of big-endian 16-bit words, folded to 16 bits (RFC 1071).
uint16_t folded_sum(uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return uint16_t(sum);
}

uint32_t sum_words(const uint8_t* p, size_t bytes) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < bytes; i += 2) sum += read_be16(p + i);
  if (bytes % 2) sum += uint32_t(p[bytes - 1]) << 8;
  return sum;
}

}  // namespace

GsoPacket GsoPacket::parse(std::span<const uint8_t> packet) {
  GsoPacket g;
  g.ip_bytes_ = uint32_t(packet.size() > kVirtioNetHeaderBytes ? packet.size() - kVirtioNetHeaderBytes : 0);
  const uint8_t gso_type = packet.size() > kGsoTypeAt ? uint8_t(packet[kGsoTypeAt] & ~kGsoEcnBit) : 0;
  if (gso_type != kGsoTcpV4 && gso_type != kGsoUdpL4) return g;
  const uint8_t* ip = packet.data() + kVirtioNetHeaderBytes;
  if (g.ip_bytes_ < 20 || ip[0] >> 4 != 4) return g;
  const uint32_t ip_header = uint32_t(ip[0] & 0x0f) * 4;
  const bool udp = gso_type == kGsoUdpL4;
  if (ip_header < 20 || read_be16(ip + 2) != g.ip_bytes_ || ip[9] != (udp ? kProtocolUdp : kProtocolTcp)) return g;
  if (g.ip_bytes_ < ip_header + (udp ? 8 : 20)) return g;
  const uint32_t transport_header = udp ? 8 : uint32_t(ip[ip_header + 12] >> 4) * 4;
  const uint32_t header_bytes = ip_header + transport_header;
  const uint32_t segment_payload = read_host16(packet.data() + kGsoSizeAt);
  if (transport_header < (udp ? 8u : 20u) || header_bytes >= g.ip_bytes_ || segment_payload == 0) return g;
  g.header_bytes_ = header_bytes;
  g.segment_payload_ = segment_payload;
  g.udp_ = udp;
  const uint32_t payload = g.ip_bytes_ - header_bytes;
  g.segments_ = (payload + segment_payload - 1) / segment_payload;
  return g;
}

uint32_t GsoPacket::segment_wire_bytes(uint32_t i) const {
  if (header_bytes_ == 0) return ip_bytes_;
  const uint32_t payload = ip_bytes_ - header_bytes_;
  return header_bytes_ + std::min(segment_payload_, payload - i * segment_payload_);
}

uint32_t GsoPacket::wire_bytes() const { return ip_bytes_ + header_bytes_ * (segments_ - 1); }

GsoPacket GsoPacket::plain(uint32_t ip_bytes) {
  GsoPacket g;
  g.ip_bytes_ = ip_bytes;
  return g;
}

size_t GsoPacket::slice(std::span<const uint8_t> packet, uint32_t first, uint32_t count, std::span<uint8_t> out) const {
  if (count == 0 || first + count > segments_) throw std::invalid_argument("GsoPacket::slice: segments out of range");
  if (out.size() < packet.size()) throw std::invalid_argument("GsoPacket::slice: the output cannot hold the packet");
  if (count == segments_) {
    std::copy(packet.begin(), packet.end(), out.begin());
    return packet.size();
  }
  const uint32_t payload = ip_bytes_ - header_bytes_;
  const uint32_t payload_from = first * segment_payload_;
  const uint32_t slice_payload = std::min(count * segment_payload_, payload - payload_from);
  const size_t headers_end = kVirtioNetHeaderBytes + header_bytes_;
  std::memcpy(out.data(), packet.data(), headers_end);
  std::memcpy(out.data() + headers_end, packet.data() + headers_end + payload_from, slice_payload);

  if (count == 1) {  // one segment: an ordinary packet (its checksum still partial)
    out[kGsoTypeAt] = 0;
    write_host16(out.data() + kGsoSizeAt, 0);
  }
  uint8_t* ip = out.data() + kVirtioNetHeaderBytes;
  const uint32_t ip_header = uint32_t(ip[0] & 0x0f) * 4;
  write_be16(ip + 2, uint16_t(header_bytes_ + slice_payload));
  write_be16(ip + 4, uint16_t(read_be16(ip + 4) + first));  // one IP id per segment
  write_be16(ip + 10, 0);
  write_be16(ip + 10, uint16_t(~folded_sum(sum_words(ip, ip_header))));

  uint8_t* transport = ip + ip_header;
  const uint32_t transport_bytes = header_bytes_ - ip_header + slice_payload;
  size_t checksum_at;
  if (udp_) {
    write_be16(transport + 4, uint16_t(transport_bytes));
    checksum_at = 6;
  } else {
    uint32_t seq;
    std::memcpy(&seq, transport + 4, 4);
    seq = __builtin_bswap32(__builtin_bswap32(seq) + payload_from);
    std::memcpy(transport + 4, &seq, 4);
    if (first > 0) transport[13] &= uint8_t(~kTcpCwr);
    if (first + count < segments_) transport[13] &= uint8_t(~(kTcpFin | kTcpPsh));
    checksum_at = 16;
  }
  // The partial checksum (CHECKSUM_PARTIAL): the pseudo-header's sum, for the slice's length.
  const uint32_t pseudo = sum_words(ip + 12, 8) + ip[9] + transport_bytes;
  write_be16(transport + checksum_at, folded_sum(pseudo));
  return headers_end + slice_payload;
}

}  // namespace kvstream::emulation
