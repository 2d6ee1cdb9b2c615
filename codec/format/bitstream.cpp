#include "codec/format/bitstream.h"

#include <algorithm>

#include "codec/format/byte_io.h"
#include "codec/format/crc32c.h"

namespace kvstream::codec {

const char* to_string(BitstreamErrorKind kind) {
  switch (kind) {
    case BitstreamErrorKind::kTruncated: return "truncated bitstream";
    case BitstreamErrorKind::kBadMagic: return "not a kvstream bitstream";
    case BitstreamErrorKind::kUnsupportedVersion: return "unsupported bitstream version";
    case BitstreamErrorKind::kChecksumMismatch: return "checksum mismatch";
    case BitstreamErrorKind::kBadShape: return "bad shape";
    case BitstreamErrorKind::kBadLevelSpec: return "bad level spec";
    case BitstreamErrorKind::kBadSection: return "bad section";
    case BitstreamErrorKind::kCorruptPayload: return "corrupt payload";
    case BitstreamErrorKind::kUnknownCodec: return "unknown codec";
    case BitstreamErrorKind::kMissingCdfTable: return "missing offline CDF table";
    case BitstreamErrorKind::kImplausibleValue: return "implausible value";
  }
  return "bitstream error";
}

std::array<char, 4> section_tag(const char (&tag)[5]) { return {tag[0], tag[1], tag[2], tag[3]}; }

std::span<const uint8_t> ParsedBitstream::section(const char (&tag)[5]) const {
  const auto want = section_tag(tag);
  for (const auto& s : sections)
    if (s.tag == want) return s.bytes;
  throw BitstreamError(BitstreamErrorKind::kBadSection, tag, "section is missing");
}

std::span<const uint8_t> ParsedBitstream::section_of_size(const char (&tag)[5], uint64_t bytes) const {
  const auto s = section(tag);
  if (s.size() != bytes)
    throw BitstreamError(BitstreamErrorKind::kBadSection, tag,
                         "holds " + std::to_string(s.size()) + " bytes, the header implies " + std::to_string(bytes));
  return s;
}

void validate_shape(const KvShape& shape, const std::string& section) {
  auto fail = [&](const std::string& what) {
    throw BitstreamError(BitstreamErrorKind::kBadShape, section, what + " (" + shape.to_string() + ")");
  };
  if (shape.layers < 1 || shape.layers > kMaxLayers) fail("layers must be in [1, " + std::to_string(kMaxLayers) + "]");
  if (shape.kv_heads < 1 || shape.head_dim < 1) fail("heads and head_dim must be positive");
  if (int64_t(shape.kv_heads) * shape.head_dim > kMaxChannels)
    fail("channels H*D must be at most " + std::to_string(kMaxChannels));
  if (shape.tokens < 1 || shape.tokens > kMaxChunkTokens)
    fail("tokens must be in [1, " + std::to_string(kMaxChunkTokens) + "]");
  if (shape.elements() > kMaxElements) fail("more than 2^32 values in one chunk");
}

std::vector<uint8_t> write_bitstream(const BitstreamHeader& header, const std::vector<Section>& sections) {
  validate_shape(header.shape, "header");
  if (sections.empty() || sections.size() > kMaxSections)
    throw std::invalid_argument("write_bitstream: 1.." + std::to_string(kMaxSections) + " sections required");
  uint64_t total = kHeaderBytes + kSectionEntryBytes * sections.size() + kCrcBytes;
  for (const auto& s : sections) total += s.bytes.size();

  std::vector<uint8_t> out;
  out.reserve(total);
  ByteWriter w(out);
  w.bytes(kBitstreamMagic);
  w.put<uint16_t>(kBitstreamVersion);
  w.put<uint8_t>(static_cast<uint8_t>(header.codec));
  w.put<uint8_t>(static_cast<uint8_t>(sections.size()));
  w.put<uint64_t>(total);
  w.put<uint16_t>(static_cast<uint16_t>(header.shape.layers));
  w.put<uint16_t>(static_cast<uint16_t>(header.shape.kv_heads));
  w.put<uint16_t>(static_cast<uint16_t>(header.shape.head_dim));
  w.put<uint8_t>(static_cast<uint8_t>(header.source_dtype));
  w.put<uint8_t>(0);  // reserved
  w.put<uint32_t>(static_cast<uint32_t>(header.t0));
  w.put<uint32_t>(static_cast<uint32_t>(header.shape.tokens));
  for (const auto& s : sections) {
    w.bytes(std::span(reinterpret_cast<const uint8_t*>(s.tag.data()), 4));
    w.put<uint64_t>(s.bytes.size());
  }
  for (const auto& s : sections) w.bytes(s.bytes);
  w.put<uint32_t>(crc32c(out));
  return out;
}

ParsedBitstream parse_bitstream(std::span<const uint8_t> bytes) {
  using K = BitstreamErrorKind;
  if (bytes.size() < kBitstreamMagic.size() ||
      !std::equal(kBitstreamMagic.begin(), kBitstreamMagic.end(), bytes.begin())) {
    if (bytes.size() < kBitstreamMagic.size()) throw BitstreamError(K::kTruncated, "header", "fewer than 4 bytes");
    throw BitstreamError(K::kBadMagic, "header", "expected magic \"KVST\"");
  }
  ByteReader header_reader(bytes.subspan(0, std::min(bytes.size(), kHeaderBytes)), "header");
  header_reader.take(4);
  const auto version = header_reader.get<uint16_t>();
  if (version < kOldestBitstreamVersion || version > kBitstreamVersion)
    throw BitstreamError(K::kUnsupportedVersion, "header",
                         "version " + std::to_string(version) + ", this build reads " +
                             std::to_string(kOldestBitstreamVersion) + " to " + std::to_string(kBitstreamVersion));
  ParsedBitstream parsed;
  parsed.version = version;
  const auto codec = header_reader.get<uint8_t>();
  const auto n_sections = header_reader.get<uint8_t>();
  const auto total = header_reader.get<uint64_t>();
  parsed.header.shape.layers = header_reader.get<uint16_t>();
  parsed.header.shape.kv_heads = header_reader.get<uint16_t>();
  parsed.header.shape.head_dim = header_reader.get<uint16_t>();
  const auto dtype = header_reader.get<uint8_t>();
  const auto reserved = header_reader.get<uint8_t>();
  parsed.header.t0 = header_reader.get<uint32_t>();
  parsed.header.shape.tokens = header_reader.get<uint32_t>();

  if (codec < static_cast<uint8_t>(CodecId::kFp16) || codec > static_cast<uint8_t>(CodecId::kTransform))
    throw BitstreamError(K::kUnknownCodec, "header", "codec id " + std::to_string(codec));
  parsed.header.codec = static_cast<CodecId>(codec);
  if (dtype < 1 || dtype > 3) throw BitstreamError(K::kBadSection, "header", "source dtype " + std::to_string(dtype));
  parsed.header.source_dtype = static_cast<SourceDtype>(dtype);
  if (reserved != 0) throw BitstreamError(K::kBadSection, "header", "reserved byte is not zero");
  if (n_sections < 1 || n_sections > kMaxSections)
    throw BitstreamError(K::kBadSection, "header", std::to_string(n_sections) + " sections (expected 1..16)");
  const uint64_t fixed = kHeaderBytes + kSectionEntryBytes * n_sections + kCrcBytes;
  if (total < fixed)
    throw BitstreamError(K::kBadSection, "header",
                         "total length " + std::to_string(total) + " is below the minimum " + std::to_string(fixed));

  ByteReader table_reader(bytes.subspan(kHeaderBytes), "section table");
  std::vector<std::pair<std::array<char, 4>, uint64_t>> table;
  uint64_t sum = fixed;
  for (int i = 0; i < n_sections; ++i) {
    const auto tag_bytes = table_reader.take(4);
    const auto length = table_reader.get<uint64_t>();
    std::array<char, 4> tag;
    std::copy(tag_bytes.begin(), tag_bytes.end(), tag.begin());
    if (length > total) throw BitstreamError(K::kBadSection, std::string(tag.begin(), tag.end()), "length exceeds total");
    sum += length;
    table.emplace_back(tag, length);
  }
  if (sum != total)
    throw BitstreamError(K::kBadSection, "section table",
                         "header, sections and checksum add up to " + std::to_string(sum) +
                             " bytes, the header says " + std::to_string(total));
  if (bytes.size() < total) {  // name the section the cut falls into
    uint64_t offset = kHeaderBytes + kSectionEntryBytes * n_sections;
    std::string where = "checksum";
    for (const auto& [tag, length] : table) {
      if (bytes.size() < offset + length) {
        where = std::string(tag.begin(), tag.end());
        break;
      }
      offset += length;
    }
    throw BitstreamError(K::kTruncated, where,
                         "have " + std::to_string(bytes.size()) + " of " + std::to_string(total) + " bytes");
  }
  const uint32_t stored_crc = ByteReader(bytes.subspan(total - kCrcBytes, kCrcBytes), "checksum").get<uint32_t>();
  const uint32_t actual_crc = crc32c(bytes.subspan(0, total - kCrcBytes));
  if (stored_crc != actual_crc)
    throw BitstreamError(K::kChecksumMismatch, "checksum", "CRC32C over the bitstream does not match the stored value");
  validate_shape(parsed.header.shape, "header");

  uint64_t offset = kHeaderBytes + kSectionEntryBytes * n_sections;
  for (const auto& [tag, length] : table) {
    for (const auto& s : parsed.sections)
      if (s.tag == tag) throw BitstreamError(K::kBadSection, std::string(tag.begin(), tag.end()), "appears twice");
    parsed.sections.push_back({tag, bytes.subspan(offset, length)});
    offset += length;
  }
  parsed.total_bytes = total;
  return parsed;
}

}  // namespace kvstream::codec
