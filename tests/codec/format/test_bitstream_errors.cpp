// Malformed bitstreams (codec/FORMAT.md, docs/CACHEGEN.md §8.2): every decoder failure is a typed
// BitstreamError naming where it is. Truncation at every region, flipped bytes, absurd shapes and
// lengths behind a valid CRC, inconsistent CacheGen sections, missing offline tables, .kvs framing
// errors, and a seeded fuzz loop that may only ever decode or throw BitstreamError.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <typeinfo>
#include <vector>

#include "codec/cachegen/cachegen_codec.h"
#include "codec/cachegen/offline_cdf.h"
#include "codec/codec.h"
#include "codec/format/bitstream.h"
#include "codec/format/bitstream_error.h"
#include "codec/format/crc32c.h"
#include "codec/format/kv_dump.h"
#include "codec/format/kvs_file.h"
#include "tests/test_support.h"

namespace kvstream::codec {
namespace {

namespace fs = std::filesystem;
using K = BitstreamErrorKind;

const KvCache& context0() { return test_support::kv_fixture().contexts.at(0); }

// Level 2, tokens [0, 300): two sub-chunks (256 + 44), sections PARM SCAL CDF_ LENS DATA.
const std::vector<uint8_t>& cachegen_bytes() {
  static const auto bytes = make_codec("cachegen")->encode(context0().chunk(0, 300), 2, 0);
  return bytes;
}
const std::vector<uint8_t>& fp16_bytes() {
  static const auto bytes = make_codec("fp16")->encode(context0().chunk(0, 40), 1, 0);
  return bytes;
}

std::shared_ptr<const OfflineCdfTable> offline_table() {
  static const auto table = std::make_shared<const OfflineCdfTable>(
      OfflineCdfTable::build({context0().all()}, Ladder::from_name_or_path("generic"), {}));
  return table;
}

// --- helpers -----------------------------------------------------------------------------------

uint64_t read_le(const std::vector<uint8_t>& bytes, size_t offset, int width) {
  uint64_t v = 0;
  for (int i = 0; i < width; ++i) v |= uint64_t(bytes[offset + size_t(i)]) << (8 * i);
  return v;
}

void write_le(std::vector<uint8_t>& bytes, size_t offset, uint64_t value, int width) {
  for (int i = 0; i < width; ++i) bytes[offset + size_t(i)] = static_cast<uint8_t>(value >> (8 * i));
}

// Header fields (offset, width): see bitstream.h.
struct Field {
  size_t offset;
  int width;
};
constexpr Field kVersion{4, 2}, kSectionCount{7, 1}, kTotal{8, 8}, kLayers{16, 2}, kHeads{18, 2}, kHeadDim{20, 2}, kTokens{28, 4};

// A copy of `bytes` with header fields patched and the CRC recomputed.
std::vector<uint8_t> patched(const std::vector<uint8_t>& bytes, std::initializer_list<std::pair<Field, uint64_t>> fields) {
  auto out = bytes;
  for (const auto& [field, value] : fields) write_le(out, field.offset, value, field.width);
  test_support::repair_crc(out);
  return out;
}

// A copy with the table entry of section `index` patched (tag and/or length), CRC recomputed.
std::vector<uint8_t> patched_entry(const std::vector<uint8_t>& bytes, size_t index, std::optional<std::string> tag,
                                   std::optional<uint64_t> length) {
  auto out = bytes;
  const size_t entry = kHeaderBytes + kSectionEntryBytes * index;
  if (tag) std::copy(tag->begin(), tag->end(), out.begin() + ptrdiff_t(entry));
  if (length) write_le(out, entry + 4, *length, 8);
  test_support::repair_crc(out);
  return out;
}

// The bitstream with section `tag` replaced by `content`, rebuilt with a valid CRC.
std::vector<uint8_t> rewrite(const std::vector<uint8_t>& bytes, const std::string& tag, std::vector<uint8_t> content) {
  const ParsedBitstream parsed = parse_bitstream(bytes);
  std::vector<Section> sections;
  for (const auto& s : parsed.sections)
    sections.push_back({s.tag, s.name() == tag ? content : std::vector<uint8_t>(s.bytes.begin(), s.bytes.end())});
  return write_bitstream(parsed.header, sections);
}

std::vector<uint8_t> section_copy(const std::vector<uint8_t>& bytes, const std::string& name) {
  for (const auto& s : parse_bitstream(bytes).sections)
    if (s.name() == name) return {s.bytes.begin(), s.bytes.end()};
  ADD_FAILURE() << "no section " << name;
  return {};
}

// Named byte ranges of a bitstream: header, section table, each section, checksum.
struct Region {
  std::string name;
  size_t begin, end;
};
std::vector<Region> regions(const std::vector<uint8_t>& bytes) {
  const ParsedBitstream parsed = parse_bitstream(bytes);
  std::vector<Region> out = {{"header", 0, kHeaderBytes}};
  size_t offset = kHeaderBytes + kSectionEntryBytes * parsed.sections.size();
  out.push_back({"section table", kHeaderBytes, offset});
  for (const auto& s : parsed.sections) {
    out.push_back({s.name(), offset, offset + s.bytes.size()});
    offset += s.bytes.size();
  }
  out.push_back({"checksum", offset, offset + kCrcBytes});
  EXPECT_EQ(out.back().end, bytes.size());
  return out;
}

// Decodes and expects a BitstreamError of `kind` (and, if given, naming `section`).
void expect_error(std::span<const uint8_t> bytes, K kind, const std::optional<std::string>& section,
                  const DecodeContext& context = {}) {
  try {
    decode_bitstream(bytes, context);
    ADD_FAILURE() << "decoded without error, expected " << to_string(kind);
  } catch (const BitstreamError& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    if (section) {
      EXPECT_EQ(e.section(), *section) << e.what();
    }
    EXPECT_NE(std::string(e.what()).find(to_string(e.kind())), std::string::npos) << e.what();
  }
}

// --- truncation and flipped bytes --------------------------------------------------------------

void check_truncations(const std::vector<uint8_t>& bytes) {
  ASSERT_NO_THROW(decode_bitstream(bytes));
  for (const Region& region : regions(bytes)) {
    const size_t size = region.end - region.begin;
    for (size_t cut : {region.begin, region.begin + 1, region.begin + size / 2, region.end - 1}) {
      SCOPED_TRACE("cut at " + std::to_string(cut) + " (" + region.name + ")");
      expect_error(std::span(bytes).first(cut), K::kTruncated, region.name);
    }
  }
}

TEST(BitstreamErrors, TruncationNamesTheRegionOfTheCut) {
  check_truncations(cachegen_bytes());
  check_truncations(fp16_bytes());
}

TEST(BitstreamErrors, TrailingBytesAreLeftToTheCaller) {
  auto bytes = fp16_bytes();
  bytes.push_back(0xAB);
  EXPECT_EQ(parse_bitstream(bytes).total_bytes, fp16_bytes().size());
}

// Every `stride`-th byte (and every header and table byte) flipped: always a BitstreamError; a
// specific kind for the magic, the version and anything the CRC covers that is not read before it.
void check_flips(const std::vector<uint8_t>& bytes, size_t stride) {
  const size_t table_end = regions(bytes)[1].end;
  for (size_t offset = 0; offset < bytes.size(); offset += offset < table_end ? 1 : stride) {
    auto flipped = bytes;
    flipped[offset] ^= 0xFF;
    std::optional<K> kind;
    if (offset < 4) kind = K::kBadMagic;
    else if (offset < 6) kind = K::kUnsupportedVersion;
    else if ((offset >= 16 && offset < 22) || (offset >= 24 && offset < 32)) kind = K::kChecksumMismatch;  // shape, t0
    else if (offset >= kHeaderBytes && offset < table_end && (offset - kHeaderBytes) % kSectionEntryBytes < 4)
      kind = K::kChecksumMismatch;  // a section tag
    else if (offset >= table_end) kind = K::kChecksumMismatch;  // payload or the CRC itself
    try {
      decode_bitstream(flipped);
      ADD_FAILURE() << "flipped byte " << offset << " decoded without error";
    } catch (const BitstreamError& e) {
      if (kind) {
        EXPECT_EQ(e.kind(), *kind) << "byte " << offset << ": " << e.what();
      }
    }
  }
}

// Version 3 is written; version 2 reads the same for every codec but the transform codec, whose
// own test reads it (tests/codec/transform/test_transform_groups.cpp); 1 and 4 are refused.
TEST(BitstreamErrors, VersionsTwoAndThreeAreReadAndNoOthers) {
  EXPECT_EQ(read_le(cachegen_bytes(), kVersion.offset, 2), kBitstreamVersion);
  const auto version_2 = patched(cachegen_bytes(), {{kVersion, 2}});
  EXPECT_EQ(parse_bitstream(version_2).version, 2);
  EXPECT_EQ(decode_bitstream(version_2).kv.values(), decode_bitstream(cachegen_bytes()).kv.values());
  for (const uint64_t version : {1, 4})
    try {
      decode_bitstream(patched(cachegen_bytes(), {{kVersion, version}}));
      ADD_FAILURE() << "read version " << version;
    } catch (const BitstreamError& e) {
      EXPECT_EQ(e.kind(), K::kUnsupportedVersion);
      EXPECT_NE(std::string(e.what()).find("this build reads 2 to 3"), std::string::npos) << e.what();
    }
}

TEST(BitstreamErrors, FlippedBytes) {
  check_flips(cachegen_bytes(), 7);
  check_flips(fp16_bytes(), 7);
}

// --- absurd header and table values behind a valid CRC -----------------------------------------

TEST(BitstreamErrors, AbsurdShapes) {
  for (const auto* bytes : {&cachegen_bytes(), &fp16_bytes()}) {
    for (const auto& fields : std::vector<std::vector<std::pair<Field, uint64_t>>>{
             {{kLayers, 0}},
             {{kLayers, 5000}},
             {{kLayers, 1025}},
             {{kTokens, 0}},
             {{kTokens, (1u << 24) + 1}},
             {{kHeads, 0}},
             {{kHeadDim, 0}},
             {{kHeads, 300}, {kHeadDim, 300}},                    // H·D = 90000 > 65536
             {{kTokens, 1u << 24}},                               // 2·5·2^24·32 > 2^32 values
             {{kLayers, 1024}, {kHeads, 256}, {kHeadDim, 256}},   // 2·1024·T·65536 > 2^32 for T >= 33
         }) {
      auto b = *bytes;
      for (const auto& [field, value] : fields) write_le(b, field.offset, value, field.width);
      test_support::repair_crc(b);
      SCOPED_TRACE("L=" + std::to_string(read_le(b, 16, 2)) + " H=" + std::to_string(read_le(b, 18, 2)) +
                   " D=" + std::to_string(read_le(b, 20, 2)) + " T=" + std::to_string(read_le(b, 28, 4)));
      expect_error(b, K::kBadShape, "header");
    }
  }
}

TEST(BitstreamErrors, ShapesThatDisagreeWithTheSections) {
  const auto& bytes = cachegen_bytes();
  // L=4: PARM holds bins for 5 layers.
  expect_error(patched(bytes, {{kLayers, 4}}), K::kBadLevelSpec, "PARM");
  // C=64: the CDF_ table is sized for C=32.
  expect_error(patched(bytes, {{kHeads, 8}}), K::kBadSection, "CDF_");
  // T=600: three sub-chunks of lengths, not two.
  expect_error(patched(bytes, {{kTokens, 600}}), K::kBadSection, "LENS");
  // T=299: same LENS size; the last sub-chunk's raw streams or SCAL no longer match.
  expect_error(patched(bytes, {{kTokens, 299}}), K::kBadSection, std::nullopt);
  expect_error(patched(fp16_bytes(), {{kTokens, 39}}), K::kBadSection, "FP16");
  // Unknown codec id, dtype, reserved byte.
  expect_error(patched(bytes, {{Field{6, 1}, 99}}), K::kUnknownCodec, "header");
  expect_error(patched(bytes, {{Field{22, 1}, 0}}), K::kBadSection, "header");
  expect_error(patched(bytes, {{Field{23, 1}, 1}}), K::kBadSection, "header");
}

TEST(BitstreamErrors, AbsurdSectionTables) {
  const auto& bytes = cachegen_bytes();
  const uint64_t total = bytes.size();
  expect_error(patched_entry(bytes, 0, std::nullopt, uint64_t(1) << 40), K::kBadSection, "PARM");
  expect_error(patched_entry(bytes, 4, std::nullopt, ~uint64_t(0)), K::kBadSection, "DATA");
  const uint64_t data_length = read_le(bytes, kHeaderBytes + 4 * kSectionEntryBytes + 4, 8);
  expect_error(patched_entry(bytes, 4, std::nullopt, data_length + 1), K::kBadSection, "section table");
  expect_error(patched_entry(bytes, 4, std::nullopt, data_length - 1), K::kBadSection, "section table");
  // Total and the DATA length both 100 bytes larger: consistent, but the bytes end inside DATA.
  {
    auto b = patched_entry(bytes, 4, std::nullopt, data_length + 100);
    write_le(b, kTotal.offset, total + 100, 8);
    expect_error(b, K::kTruncated, "DATA");
  }
  expect_error(patched(bytes, {{kTotal, 10}}), K::kBadSection, "header");
  expect_error(patched(bytes, {{kSectionCount, 0}}), K::kBadSection, "header");
  expect_error(patched(bytes, {{kSectionCount, 17}}), K::kBadSection, "header");
  // A repeated tag, a missing section.
  expect_error(patched_entry(bytes, 1, "PARM", std::nullopt), K::kBadSection, "PARM");
  expect_error(patched_entry(bytes, 4, "DATX", std::nullopt), K::kBadSection, "DATA");
  expect_error(patched_entry(bytes, 2, "CDFX", std::nullopt), K::kBadSection, "CDF_");
}

// --- inconsistent CacheGen sections --------------------------------------------------------------

TEST(BitstreamErrors, CacheGenParameters) {
  const auto& bytes = cachegen_bytes();
  const auto parm = section_copy(bytes, "PARM");  // level 2, ac, raw, 0, chunk, M=32, sub 256, K bins, V bins
  ASSERT_EQ(parm.size(), 18u);
  ASSERT_NO_THROW(decode_bitstream(rewrite(bytes, "PARM", parm)));
  auto with = [&](size_t index, uint8_t value) {
    auto p = parm;
    p[index] = value;
    return rewrite(bytes, "PARM", p);
  };
  // The wrong number of bins for L=5.
  expect_error(rewrite(bytes, "PARM", std::vector<uint8_t>(parm.begin(), parm.end() - 1)), K::kBadLevelSpec, "PARM");
  auto longer = parm;
  longer.push_back(16);
  expect_error(rewrite(bytes, "PARM", longer), K::kBadLevelSpec, "PARM");
  expect_error(rewrite(bytes, "PARM", std::vector<uint8_t>(parm.begin(), parm.begin() + 5)), K::kTruncated, "PARM");
  // Bins outside [4, 64].
  for (uint8_t bins : std::vector<uint8_t>{0, 2, 3, 65, 255}) expect_error(with(8, bins), K::kBadLevelSpec, "PARM");
  for (uint8_t bins : std::vector<uint8_t>{0, 3, 65}) expect_error(with(17, bins), K::kBadLevelSpec, "PARM");
  // Alphabet other than the largest bin count.
  for (uint8_t m : std::vector<uint8_t>{0, 16, 31, 33, 64}) expect_error(with(5, m), K::kBadLevelSpec, "PARM");
  expect_error(with(1, 2), K::kBadLevelSpec, "PARM");  // unknown coder
  expect_error(with(2, 2), K::kBadLevelSpec, "PARM");  // unknown token mode
  expect_error(with(3, 5), K::kBadLevelSpec, "PARM");  // group size in raw mode
  {
    auto p = parm;
    p[2] = 1, p[3] = 1;  // delta with groups of 1
    expect_error(rewrite(bytes, "PARM", p), K::kBadLevelSpec, "PARM");
  }
  expect_error(with(4, 2), K::kBadLevelSpec, "PARM");  // unknown CDF source
  auto with_sub = [&](uint16_t sub) {
    auto p = parm;
    p[6] = uint8_t(sub & 0xFF), p[7] = uint8_t(sub >> 8);
    return rewrite(bytes, "PARM", p);
  };
  ASSERT_EQ(parm[6] | parm[7] << 8, 256);
  expect_error(with_sub(0), K::kBadLevelSpec, "PARM");
  expect_error(with_sub(257), K::kBadLevelSpec, "PARM");
  expect_error(with_sub(0xFFFF), K::kBadLevelSpec, "PARM");
  expect_error(with_sub(128), K::kBadSection, "LENS");  // valid, but LENS has 2 sub-chunks, not 3
  // A 16-bin K layer (Q=7) read as 8 bins (Q=3), its CDF_ rows cut to match (entries 1..6 of each
  // channel; rows 0-1 have 32 bins, 30 entries per channel before it): some symbol exceeds 2Q = 6.
  ASSERT_EQ(parm[8 + 2], 16);
  expect_error(with(8 + 2, 8), K::kBadSection, "CDF_");  // the table still sized for 16 bins
  const auto cdf = section_copy(bytes, "CDF_");
  const size_t channels = 32, row2 = 2 * channels * 30 * 2;
  std::vector<uint8_t> cut(cdf.begin(), cdf.begin() + ptrdiff_t(row2));
  for (size_t c = 0; c < channels; ++c) {
    const auto entries = cdf.begin() + ptrdiff_t(row2 + c * 14 * 2);
    cut.insert(cut.end(), entries, entries + 6 * 2);
  }
  cut.insert(cut.end(), cdf.begin() + ptrdiff_t(row2 + channels * 14 * 2), cdf.end());
  expect_error(rewrite(with(8 + 2, 8), "CDF_", cut), K::kCorruptPayload, "DATA");
  // Offline source with no table id: PARM too short for the offline layout.
  expect_error(with(4, 1), K::kBadLevelSpec, "PARM");
}

TEST(BitstreamErrors, CacheGenPayload) {
  const auto& bytes = cachegen_bytes();
  // LENS that do not add up to DATA.
  auto lens = section_copy(bytes, "LENS");
  lens[0] = lens[0] == kRawStreamCode ? 0 : uint8_t(lens[0] + 1);
  expect_error(rewrite(bytes, "LENS", lens), K::kBadSection, "DATA");
  auto data = section_copy(bytes, "DATA");
  data.push_back(0);
  expect_error(rewrite(bytes, "DATA", data), K::kBadSection, "DATA");
  lens = section_copy(bytes, "LENS");
  lens.pop_back();
  expect_error(rewrite(bytes, "LENS", lens), K::kBadSection, "LENS");
  // LENS that add up but split the streams differently: garbage symbols, never a crash.
  lens = section_copy(bytes, "LENS");
  ASSERT_NE(lens[0], kRawStreamCode);
  ASSERT_NE(lens[1], kRawStreamCode);
  ASSERT_GT(lens[1], 0);
  ASSERT_LT(lens[0], 254);
  lens[0]++, lens[1]--;
  try {
    const DecodedChunk decoded = decode_bitstream(rewrite(bytes, "LENS", lens));
    for (float v : decoded.kv.values()) ASSERT_TRUE(std::isfinite(v));
  } catch (const BitstreamError& e) {
    EXPECT_EQ(e.kind(), K::kCorruptPayload) << e.what();
  }
  // A CDF row that is not strictly increasing: stream 0's cdf[1] above its cdf[2].
  auto cdf = section_copy(bytes, "CDF_");
  const uint16_t second = uint16_t(cdf[2] | cdf[3] << 8);
  write_le(cdf, 0, uint16_t(second + 1), 2);
  expect_error(rewrite(bytes, "CDF_", cdf), K::kCorruptPayload, "CDF_");
  cdf = section_copy(bytes, "CDF_");
  write_le(cdf, cdf.size() - 2, 65535, 2);  // last interior entry equal to cdf[M]
  expect_error(rewrite(bytes, "CDF_", cdf), K::kCorruptPayload, "CDF_");
  cdf.resize(cdf.size() - 2);
  expect_error(rewrite(bytes, "CDF_", cdf), K::kBadSection, "CDF_");
  // Scales: negative, NaN, infinite, wrong size.
  for (uint16_t bad : std::vector<uint16_t>{0xBC00, 0x7E00, 0x7C00, 0x8001}) {
    auto scal = section_copy(bytes, "SCAL");
    write_le(scal, 2 * 77, bad, 2);
    expect_error(rewrite(bytes, "SCAL", scal), K::kCorruptPayload, "SCAL");
  }
  auto scal = section_copy(bytes, "SCAL");
  scal.pop_back();
  expect_error(rewrite(bytes, "SCAL", scal), K::kBadSection, "SCAL");
}

// Strict decoding (codec/decoded_values.h): CRC-valid bitstreams whose values no encoder writes.
TEST(BitstreamErrors, StrictDecodingRefusesValuesNoEncoderWrites) {
  const auto all = [](const std::vector<uint8_t>& section, uint16_t half) {
    std::vector<uint8_t> out(section.size());
    for (size_t i = 0; i + 1 < out.size(); i += 2) write_le(out, i, half, 2);
    return out;
  };
  // Raw fp16 payload: an infinity or a NaN is refused by the fp16 decoder itself.
  for (const uint16_t bad : {uint16_t(0x7C00), uint16_t(0xFE00)}) {
    auto payload = section_copy(fp16_bytes(), "FP16");
    write_le(payload, 2 * 123, bad, 2);
    expect_error(rewrite(fp16_bytes(), "FP16", payload), K::kCorruptPayload, "FP16");
  }
  // Every per-token scale of a cachegen:delta chunk at fp16's largest value: decodes beyond fp16.
  const auto delta = make_codec("cachegen:delta=10")->encode(context0().chunk(0, 64), 2, 0);
  const auto huge_scales = rewrite(delta, "SCAL", all(section_copy(delta, "SCAL"), 0x7BFF));
  expect_error(huge_scales, K::kImplausibleValue, "DATA");
  // --no-strict decodes it, to look at.
  const DecodedChunk loose = decode_bitstream(huge_scales, DecodeContext{{}, false});
  EXPECT_TRUE(std::any_of(loose.kv.values().begin(), loose.kv.values().end(),
                          [](float v) { return !(std::fabs(v) < 65520.0f); }));
  // KIVI: every K group's minimum and scale at fp16's largest value.
  const auto kivi = make_codec("kivi:bits=2")->encode(context0().chunk(0, 64), 1, 0);
  const auto huge_min = rewrite(kivi, "KMIN", all(section_copy(kivi, "KMIN"), 0x7BFF));
  expect_error(rewrite(huge_min, "KSCL", all(section_copy(huge_min, "KSCL"), 0x7BFF)), K::kImplausibleValue, "DATA");
  // A legitimate overshoot (KIVI rounds its scales up: 65504 comes back as 65536 here) is set back
  // to fp16's largest value, so that writing the KV as fp16 makes no infinity.
  KvCache extreme(KvShape{1, 1, 4, 32});
  for (size_t i = 0; i < extreme.values().size(); ++i) extreme.values()[i] = i % 2 ? 65504.0f : -65504.0f;
  const auto extreme_bytes = make_codec("kivi:bits=2")->encode(extreme.all(), 1, 0);
  const DecodedChunk raw = decode_bitstream(extreme_bytes, DecodeContext{{}, false});
  EXPECT_GT(*std::max_element(raw.kv.values().begin(), raw.kv.values().end()), 65504.0f);
  const DecodedChunk back = decode_bitstream(extreme_bytes);
  for (const float v : back.kv.values()) EXPECT_EQ(std::fabs(v), 65504.0f);
  // The message names where.
  try {
    decode_bitstream(huge_scales);
  } catch (const BitstreamError& e) {
    EXPECT_NE(std::string(e.what()).find("at layer 0 K, token"), std::string::npos) << e.what();
  }
}

TEST(BitstreamErrors, OfflineTables) {
  const auto codec = make_cachegen_codec("cachegen:cdf=offline", offline_table());
  const auto bytes = codec->encode(context0().chunk(0, 64), 2, 0);
  ASSERT_NO_THROW(decode_bitstream(bytes, DecodeContext{{offline_table()}}));
  expect_error(bytes, K::kMissingCdfTable, "PARM");
  // A different table (other id) does not stand in for it.
  const auto other = std::make_shared<const OfflineCdfTable>(
      OfflineCdfTable::build({context0().chunk(0, 100)}, Ladder::from_name_or_path("generic"), {}));
  ASSERT_NE(other->id(), offline_table()->id());
  expect_error(bytes, K::kMissingCdfTable, "PARM", DecodeContext{{other}});
  try {
    decode_bitstream(bytes);
  } catch (const BitstreamError& e) {
    char id[17];
    std::snprintf(id, sizeof id, "%016llx", static_cast<unsigned long long>(offline_table()->id()));
    EXPECT_NE(std::string(e.what()).find(id), std::string::npos) << e.what();
  }
  // The table matches by id but the PARM claims another level, absent from the table's ladder.
  auto parm = section_copy(bytes, "PARM");
  parm[0] = 3;  // level 3 exists but has a different spec (all 32) than these bins
  expect_error(rewrite(bytes, "PARM", parm), K::kBadLevelSpec, "PARM", DecodeContext{{offline_table()}});
  // Declaring the per-chunk source without a CDF_ section (and without the id bytes).
  parm = section_copy(bytes, "PARM");
  parm[4] = 0;
  parm.resize(parm.size() - 8);
  expect_error(rewrite(bytes, "PARM", parm), K::kBadSection, "CDF_");
}

// --- .kvs files ---------------------------------------------------------------------------------

class KvsFile : public test_support::TempDirTest {
 protected:
  // The bitstreams of chunks [t0, t1) of context 0 (cachegen level 1).
  static std::vector<std::vector<uint8_t>> encode(const std::vector<std::pair<int64_t, int64_t>>& chunks) {
    std::vector<std::vector<uint8_t>> bitstreams;
    for (const auto& [t0, t1] : chunks) bitstreams.push_back(make_codec("cachegen")->encode(context0().chunk(t0, t1), 1, t0));
    return bitstreams;
  }
  fs::path write(const std::vector<std::pair<int64_t, int64_t>>& chunks, const std::string& name = "x.kvs") {
    write_kvs(dir_ / name, encode(chunks));
    return dir_ / name;
  }
  static std::vector<uint8_t> read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  fs::path store(const std::vector<uint8_t>& b, const std::string& name) {
    std::ofstream(dir_ / name, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
    return dir_ / name;
  }
  // A file of the header of `header_from` with its chunk count, tokens and length set as given and its
  // CRC recomputed (codec/FORMAT.md §4), followed by `bitstreams`: a file whose header is valid but
  // whose chunks may not be what it says.
  fs::path forge(const std::vector<std::vector<uint8_t>>& bitstreams, uint32_t chunks, uint64_t tokens,
                 const std::string& name) {
    std::vector<uint8_t> bytes = read(write({{0, 512}}, "header_from.kvs"));
    bytes.resize(kKvsHeaderBytes);
    for (const auto& b : bitstreams) bytes.insert(bytes.end(), b.begin(), b.end());
    auto put = [&](size_t at, uint64_t value, int width) {
      for (int i = 0; i < width; ++i) bytes[at + size_t(i)] = uint8_t(value >> (8 * i));
    };
    put(8, chunks, 4);
    put(24, tokens, 8);
    put(32, bytes.size(), 8);
    put(40, crc32c(std::span<const uint8_t>(bytes.data(), 40)), 4);
    return store(bytes, name);
  }

  // decode_kvs's error message, which must name the file.
  std::string error_of(const fs::path& path) {
    try {
      decode_kvs(path);
    } catch (const std::exception& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(path.string()), std::string::npos) << message;
      return message;
    }
    ADD_FAILURE() << "decoded " << path << " without error";
    return "";
  }
};

TEST_F(KvsFile, ConcatTokensJoinsEqualShapes) {
  // decode_kvs joins its chunks with KvCache::concat_tokens.
  const KvCache joined = KvCache::concat_tokens({KvCache::from_view(context0().chunk(0, 200)),
                                                 KvCache::from_view(context0().chunk(200, 300))});
  ASSERT_EQ(joined.shape(), (KvShape{5, 4, 8, 300}));
  EXPECT_EQ(joined.values(), KvCache::from_view(context0().chunk(0, 300)).values());
}

TEST_F(KvsFile, ContiguousChunksDecode) {
  const auto decoded = decode_kvs(write({{100, 300}, {300, 512}}));
  EXPECT_EQ(decoded.chunks, 2u);
  EXPECT_EQ(decoded.t0, 100);
  EXPECT_EQ(decoded.kv.shape(), (KvShape{5, 4, 8, 412}));
  EXPECT_FALSE(test_support::temporary_left(dir_ / "x.kvs"));
}

TEST_F(KvsFile, WriteRefusesChunksThatDoNotFollowEachOther) {
  EXPECT_THROW(write({{0, 200}, {300, 512}}), std::invalid_argument);   // a gap
  EXPECT_THROW(write({{0, 200}, {100, 512}}), std::invalid_argument);   // an overlap
  KvCache four_layers(KvShape{4, 4, 8, 100});
  EXPECT_THROW(write_kvs(dir_ / "mixed.kvs", {make_codec("fp16")->encode(context0().chunk(0, 100), 1, 0),
                                              make_codec("fp16")->encode(four_layers.all(), 1, 100)}),
               std::invalid_argument);
  EXPECT_THROW(write_kvs(dir_ / "none.kvs", {}), std::invalid_argument);
  EXPECT_FALSE(fs::exists(dir_ / "x.kvs"));
  EXPECT_FALSE(fs::exists(dir_ / "mixed.kvs"));
}

TEST_F(KvsFile, AFileCutAnywhereIsAnError) {
  const auto bitstreams = encode({{0, 200}, {200, 400}, {400, 512}});
  const std::vector<uint8_t> bytes = read(write({{0, 200}, {200, 400}, {400, 512}}));
  // At the boundary of the third chunk: what a truncated download or a full disk leaves.
  const size_t boundary = kKvsHeaderBytes + bitstreams[0].size() + bitstreams[1].size();
  const std::string at_boundary = error_of(store({bytes.begin(), bytes.begin() + long(boundary)}, "boundary.kvs"));
  EXPECT_NE(at_boundary.find("the file is cut: " + std::to_string(boundary) + " of its " + std::to_string(bytes.size()) +
                             " bytes (3 chunks, 512 tokens)"),
            std::string::npos)
      << at_boundary;
  EXPECT_NE(error_of(store({bytes.begin(), bytes.end() - 10}, "tail.kvs")).find("the file is cut"), std::string::npos);
  EXPECT_NE(error_of(store({bytes.begin(), bytes.begin() + 20}, "header.kvs")).find("file header: 20 bytes"),
            std::string::npos);
  EXPECT_NE(error_of(store({}, "empty.kvs")).find("file header: 0 bytes"), std::string::npos);
  auto longer = bytes;
  longer.push_back(0);
  EXPECT_NE(error_of(store(longer, "longer.kvs")).find("1 bytes after its end"), std::string::npos);
}

TEST_F(KvsFile, MissingDuplicatedOrReorderedChunksAreNamed) {
  const auto b = encode({{0, 200}, {200, 400}, {400, 512}});
  const std::string missing = error_of(forge({b[0], b[2]}, 3, 512, "missing.kvs"));
  EXPECT_NE(missing.find("chunk 1 at byte " + std::to_string(kKvsHeaderBytes + b[0].size()) +
                         ": starts at token 400, expected 200: a chunk is missing, duplicated or out of order"),
            std::string::npos)
      << missing;
  EXPECT_NE(error_of(forge({b[0], b[1], b[1]}, 3, 512, "duplicated.kvs")).find("chunk 2"), std::string::npos);
  EXPECT_NE(error_of(forge({b[0], b[2], b[1]}, 3, 512, "reordered.kvs")).find("chunk 1"), std::string::npos);
  // A header that promises more than the chunks hold, or fewer.
  EXPECT_NE(error_of(forge(b, 4, 512, "more.kvs")).find("holds 3 chunks and 512 tokens, its header says 4 and 512"),
            std::string::npos);
  EXPECT_NE(error_of(forge(b, 2, 512, "fewer.kvs")).find("chunk 2 at byte"), std::string::npos);
  EXPECT_NE(error_of(forge(b, 3, 600, "tokens.kvs")).find("its header says 3 and 600"), std::string::npos);
}

TEST_F(KvsFile, AHeaderThatIsNotOneIsRefusedClearly) {
  std::vector<uint8_t> bytes = read(write({{0, 512}}));
  auto flipped = bytes;
  flipped[24] ^= 1;  // tokens, without the CRC
  EXPECT_NE(error_of(store(flipped, "crc.kvs")).find("file header: checksum mismatch"), std::string::npos);
  auto magic = bytes;
  magic[3] = 'X';
  EXPECT_NE(error_of(store(magic, "magic.kvs")).find("not a .kvs file"), std::string::npos);
  // Format 1: bare bitstreams back to back, whose completeness cannot be told.
  const std::vector<uint8_t> bare(bytes.begin() + long(kKvsHeaderBytes), bytes.end());
  EXPECT_NE(error_of(store(bare, "v1.kvs")).find("a .kvs of format 1"), std::string::npos);
}

TEST_F(KvsFile, CorruptOrTruncatedChunkIsNamed) {
  const auto b = encode({{0, 200}, {200, 400}, {400, 512}});
  auto bytes = read(write({{0, 200}, {200, 400}, {400, 512}}));
  const size_t chunk1 = kKvsHeaderBytes + b[0].size();
  bytes[chunk1 + 500] ^= 0x10;  // inside chunk 1's payload
  const std::string corrupt = error_of(store(bytes, "corrupt.kvs"));
  EXPECT_NE(corrupt.find("chunk 1 at byte " + std::to_string(chunk1)), std::string::npos) << corrupt;
  EXPECT_NE(corrupt.find("checksum"), std::string::npos) << corrupt;
  // A chunk cut inside, the file's length in its header fixed up to match: the chunk says it.
  const std::string truncated = error_of(forge({b[0], b[1], {b[2].begin(), b[2].end() - 10}}, 3, 512, "cut.kvs"));
  EXPECT_NE(truncated.find("chunk 2"), std::string::npos) << truncated;
  EXPECT_NE(truncated.find("truncated"), std::string::npos) << truncated;
}

// --- fuzzing ------------------------------------------------------------------------------------

// Random byte changes inside sections (and sometimes in the header's shape fields), CRC recomputed:
// decoding must succeed with finite values or throw BitstreamError, nothing else.
void fuzz(const std::vector<uint8_t>& original, const DecodeContext& context, uint32_t seed, int iterations) {
  std::mt19937 rng(seed);
  const auto layout = regions(original);
  std::vector<Region> sections(layout.begin() + 2, layout.end() - 1);
  int decoded_ok = 0;
  for (int i = 0; i < iterations; ++i) {
    auto bytes = original;
    const int changes = 1 + int(rng() % 4);
    for (int k = 0; k < changes; ++k) {
      if (rng() % 16 == 0) {  // a shape field
        const Field fields[] = {kLayers, kHeads, kHeadDim, kTokens};
        const Field f = fields[rng() % 4];
        const uint64_t old = read_le(bytes, f.offset, f.width);
        write_le(bytes, f.offset, rng() % 2 ? old + (rng() % 3) - 1 : rng() % 70000, f.width);
        continue;
      }
      // Half the changes hit PARM or LENS (when present), whose bytes steer the decoder the most.
      const Region* target = &sections[rng() % sections.size()];
      const std::string steering = rng() % 2 ? "PARM" : "LENS";
      if (rng() % 2)
        for (const auto& s : sections)
          if (s.name == steering) target = &s;
      const size_t offset = target->begin + rng() % (target->end - target->begin);
      bytes[offset] = rng() % 2 ? uint8_t(rng()) : uint8_t(bytes[offset] + (rng() % 2 ? 1u : 255u));
    }
    test_support::repair_crc(bytes);
    try {
      const DecodedChunk decoded = decode_bitstream(bytes, context);
      for (float v : decoded.kv.values())
        if (!std::isfinite(v)) {
          ADD_FAILURE() << "iteration " << i << ": decoded a non-finite value";
          return;
        }
      ++decoded_ok;
    } catch (const BitstreamError&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << "iteration " << i << ": " << typeid(e).name() << ": " << e.what();
      return;
    }
  }
  // Payload-only mutations often still decode: the loop exercised both paths.
  EXPECT_GT(decoded_ok, 0);
  EXPECT_LT(decoded_ok, iterations);
}

TEST(BitstreamFuzz, CacheGenPerChunk) {
  fuzz(make_codec("cachegen:sub=32")->encode(context0().chunk(0, 70), 2, 0), {}, 1, 2000);
}

TEST(BitstreamFuzz, CacheGenDelta) {
  fuzz(make_codec("cachegen:delta=10")->encode(context0().chunk(100, 170), 1, 100), {}, 2, 1000);
}

TEST(BitstreamFuzz, CacheGenOffline) {
  const auto bytes = make_cachegen_codec("cachegen:cdf=offline", offline_table())->encode(context0().chunk(0, 70), 3, 0);
  fuzz(bytes, DecodeContext{{offline_table()}}, 3, 1000);
}

TEST(BitstreamFuzz, Fp16) { fuzz(make_codec("fp16")->encode(context0().chunk(0, 20), 1, 0), {}, 4, 500); }

}  // namespace
}  // namespace kvstream::codec
