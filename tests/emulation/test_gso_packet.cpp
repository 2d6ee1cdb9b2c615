// Super-packets (GSO) cut into wire segments and slices as the kernel's own segmentation would:
// sizes per segment, sequence numbers, IP ids, lengths, checksums and the flags of the first and
// last segment; anything else is one segment, whatever its bytes.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "emulation/gso_packet.h"

namespace kvstream::emulation {
namespace {

constexpr uint8_t kAck = 0x10, kPsh = 0x08, kFin = 0x01, kCwr = 0x80;

uint16_t be16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }
uint32_t be32(const uint8_t* p) { return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3]; }

// A super-packet as the kernel hands it to a TUN device: virtio header, IPv4 header (20 bytes), a
// TCP header of 32 bytes (options) or a UDP header, `payload` bytes counting 0, 1, 2, ...
std::vector<uint8_t> super_packet(bool udp, uint32_t payload, uint16_t gso_size, uint8_t tcp_flags = 0) {
  const uint32_t transport = udp ? 8 : 32, ip_bytes = 20 + transport + payload;
  std::vector<uint8_t> p(kVirtioNetHeaderBytes + ip_bytes, 0);
  p[0] = 1;               // NEEDS_CSUM
  p[1] = udp ? 5 : 1;     // GSO_UDP_L4 or GSO_TCPV4
  std::memcpy(&p[4], &gso_size, 2);
  uint8_t* ip = p.data() + kVirtioNetHeaderBytes;
  ip[0] = 0x45;
  ip[2] = uint8_t(ip_bytes >> 8), ip[3] = uint8_t(ip_bytes);
  ip[4] = 0x12, ip[5] = 0x34;  // id
  ip[8] = 64, ip[9] = udp ? 17 : 6;
  const uint8_t addresses[8] = {10, 47, 0, 2, 10, 47, 0, 1};
  std::memcpy(ip + 12, addresses, 8);
  uint8_t* t = ip + 20;
  if (udp) {
    t[4] = uint8_t((transport + payload) >> 8), t[5] = uint8_t(transport + payload);
  } else {
    t[4] = 0xff, t[5] = 0xff, t[6] = 0xfa, t[7] = 0x00;  // a sequence number about to wrap
    t[12] = 8 << 4;
    t[13] = tcp_flags;
  }
  for (uint32_t i = 0; i < payload; ++i) ip[20 + transport + i] = uint8_t(i);
  return p;
}

// slice() into a vector of the slice's size.
std::vector<uint8_t> slice_of(const GsoPacket& g, const std::vector<uint8_t>& p, uint32_t first, uint32_t count) {
  std::vector<uint8_t> out(p.size());
  out.resize(g.slice(p, first, count, out));
  return out;
}

bool ip_checksum_valid(const uint8_t* ip) {
  uint32_t sum = 0;
  for (int i = 0; i < 20; i += 2) sum += be16(ip + i);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return sum == 0xffff;
}

TEST(GsoPacket, CountsWireSegmentsWithTheirOwnHeaders) {
  const auto p = super_packet(false, 4000, 1448);
  const GsoPacket g = GsoPacket::parse(p);
  ASSERT_EQ(g.segments(), 3u);
  EXPECT_EQ(g.segment_wire_bytes(0), 52u + 1448);
  EXPECT_EQ(g.segment_wire_bytes(1), 52u + 1448);
  EXPECT_EQ(g.segment_wire_bytes(2), 52u + 1104);
  EXPECT_EQ(g.wire_bytes(), 3 * 52u + 4000);
}

TEST(GsoPacket, SlicesCarryThePayloadOnceWithTheKernelsHeaders) {
  const auto p = super_packet(false, 4000, 1448, kAck | kPsh | kFin | kCwr);
  const GsoPacket g = GsoPacket::parse(p);
  std::vector<uint8_t> payload, s;
  for (uint32_t i = 0; i < g.segments(); ++i) {
    s = slice_of(g, p, i, 1);
    ASSERT_EQ(s.size(), kVirtioNetHeaderBytes + g.segment_wire_bytes(i));
    EXPECT_EQ(s[1], 0) << "a single segment is no longer a super-packet";
    const uint8_t* ip = s.data() + kVirtioNetHeaderBytes;
    EXPECT_EQ(be16(ip + 2), g.segment_wire_bytes(i));
    EXPECT_EQ(be16(ip + 4), 0x1234 + i);
    EXPECT_TRUE(ip_checksum_valid(ip));
    EXPECT_EQ(be32(ip + 24), 0xfffffa00u + i * 1448);  // wraps past 2^32
    const uint8_t flags = ip[20 + 13];
    EXPECT_EQ(bool(flags & kCwr), i == 0);
    EXPECT_EQ(bool(flags & kFin), i == 2);
    EXPECT_EQ(bool(flags & kPsh), i == 2);
    EXPECT_TRUE(flags & kAck);
    payload.insert(payload.end(), s.begin() + kVirtioNetHeaderBytes + 52, s.end());
  }
  ASSERT_EQ(payload.size(), 4000u);
  for (uint32_t i = 0; i < 4000; ++i) ASSERT_EQ(payload[i], uint8_t(i));
}

TEST(GsoPacket, ASliceOfSeveralSegmentsStaysASuperPacket) {
  const auto p = super_packet(false, 5 * 1448, 1448, kAck | kPsh);
  const GsoPacket g = GsoPacket::parse(p);
  std::vector<uint8_t> s;
  s = slice_of(g, p, 1, 3);
  EXPECT_EQ(s[1], 1);
  EXPECT_EQ(GsoPacket::parse(s).segments(), 3u);
  EXPECT_EQ(GsoPacket::parse(s).wire_bytes(), 3 * (52u + 1448));
  EXPECT_EQ(s[kVirtioNetHeaderBytes + 20 + 13], kAck) << "PSH belongs to the last segment of the whole";
  s = slice_of(g, p, 0, 5);
  EXPECT_EQ(s, p);
}

TEST(GsoPacket, UdpSlicesHaveTheirOwnLength) {
  const auto p = super_packet(true, 3000, 1472);
  const GsoPacket g = GsoPacket::parse(p);
  ASSERT_EQ(g.segments(), 3u);
  EXPECT_EQ(g.segment_wire_bytes(2), 28u + 56);
  std::vector<uint8_t> s;
  s = slice_of(g, p, 2, 1);
  const uint8_t* ip = s.data() + kVirtioNetHeaderBytes;
  EXPECT_EQ(be16(ip + 2), 28 + 56);
  EXPECT_EQ(be16(ip + 20 + 4), 8 + 56);
  EXPECT_TRUE(ip_checksum_valid(ip));
  EXPECT_EQ(s[kVirtioNetHeaderBytes + 28], uint8_t(2 * 1472));
}

TEST(GsoPacket, AnythingElseIsOneSegmentOfItsSize) {
  auto plain = super_packet(false, 1000, 1448);
  plain[1] = 0;  // no GSO
  EXPECT_EQ(GsoPacket::parse(plain).segments(), 1u);
  EXPECT_EQ(GsoPacket::parse(plain).wire_bytes(), 1052u);
  auto lying = super_packet(false, 4000, 1448);
  lying[kVirtioNetHeaderBytes + 3] ^= 1;  // the IP length does not match what was read
  EXPECT_EQ(GsoPacket::parse(lying).segments(), 1u);
  const std::vector<uint8_t> tiny = {0, 1, 0};
  EXPECT_EQ(GsoPacket::parse(tiny).wire_bytes(), 0u);
  // Random bytes: never a crash, and the segments always add up to the wire size.
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20000; ++trial) {
    auto p = super_packet(trial % 2, uint32_t(1 + rng() % 9000), uint16_t(rng() % 3000));
    for (int flips = 0; flips < 3; ++flips) p[rng() % std::min<size_t>(p.size(), 70)] = uint8_t(rng());
    const GsoPacket g = GsoPacket::parse(p);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < g.segments(); ++i) sum += g.segment_wire_bytes(i);
    ASSERT_EQ(sum, g.wire_bytes());
    std::vector<uint8_t> s;
    if (g.segments() > 1) s = slice_of(g, p, g.segments() - 1, 1);
  }
}

}  // namespace
}  // namespace kvstream::emulation
