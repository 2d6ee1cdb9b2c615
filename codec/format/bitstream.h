// The kvstream bitstream container (codec/FORMAT.md): one encoded chunk at one level, self-describing
// and checksummed. Every codec writes the same header and a list of tagged sections; only the section
// contents are codec-specific. parse_bitstream validates magic, version, shape bounds, every length
// and the CRC32C before any codec looks at a payload, and never reads outside the given bytes.
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "codec/kv_cache.h"

namespace kvstream::codec {

inline constexpr std::array<uint8_t, 4> kBitstreamMagic = {'K', 'V', 'S', 'T'};
// Written: 3 (the transform codec's rANS groups are per-row sub-chunks). Read: 2 and 3, which differ
// only in the transform codec's TPRM and GRPS (codec/FORMAT.md §3a); 2 made CacheGen's CDF_ store each
// row's entries up to its largest symbol, and version 1 is refused.
inline constexpr uint16_t kBitstreamVersion = 3;
inline constexpr uint16_t kOldestBitstreamVersion = 2;
inline constexpr size_t kHeaderBytes = 32;        // fixed header, before the section table
inline constexpr size_t kSectionEntryBytes = 12;  // fourcc + u64 length
inline constexpr size_t kCrcBytes = 4;
inline constexpr int kMaxSections = 16;
// Bounds on a declared shape, checked before anything is allocated.
inline constexpr int kMaxLayers = 1024;
inline constexpr int kMaxChannels = 65536;
inline constexpr int64_t kMaxChunkTokens = int64_t(1) << 24;
inline constexpr int64_t kMaxElements = int64_t(1) << 32;

enum class CodecId : uint8_t { kFp16 = 1, kQuant = 2, kKivi = 3, kZstd = 4, kCacheGen = 5, kTransform = 6 };
enum class SourceDtype : uint8_t { kFp16 = 1, kBf16 = 2, kFp32 = 3 };

struct BitstreamHeader {
  CodecId codec = CodecId::kFp16;
  KvShape shape;    // shape.tokens = tokens in this chunk
  int64_t t0 = 0;   // first token of the chunk within its context
  SourceDtype source_dtype = SourceDtype::kFp16;
};

struct Section {
  std::array<char, 4> tag;  // e.g. {'S','C','A','L'}
  std::vector<uint8_t> bytes;
};

struct SectionView {
  std::array<char, 4> tag;
  std::span<const uint8_t> bytes;
  std::string name() const { return std::string(tag.begin(), tag.end()); }
};

struct ParsedBitstream {
  BitstreamHeader header;
  uint16_t version = kBitstreamVersion;  // kOldestBitstreamVersion .. kBitstreamVersion
  std::vector<SectionView> sections;
  size_t total_bytes = 0;  // bytes of this bitstream (a .kvs file may hold several back to back)

  // The section with this tag; throws BitstreamError(kBadSection) when absent.
  std::span<const uint8_t> section(const char (&tag)[5]) const;
  // Throws kBadSection unless the section holds exactly `bytes` bytes.
  std::span<const uint8_t> section_of_size(const char (&tag)[5], uint64_t bytes) const;
};

std::array<char, 4> section_tag(const char (&tag)[5]);

std::vector<uint8_t> write_bitstream(const BitstreamHeader& header, const std::vector<Section>& sections);

// Parses the bitstream at the start of `bytes` (trailing bytes are left for the caller).
ParsedBitstream parse_bitstream(std::span<const uint8_t> bytes);

// Validates L/H/D/T against the bounds above; throws BitstreamError(kBadShape).
void validate_shape(const KvShape& shape, const std::string& section);

}  // namespace kvstream::codec
