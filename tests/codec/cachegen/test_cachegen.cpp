// The CacheGen codec (docs/CACHEGEN.md §4–§8) on the real stories260K fixture and on synthetic KV:
// round trips for every level, token mode, sub-chunk size and CDF source, checked element-wise
// against the bound |x - x̂| <= m / (2Q) with m the stored fp16 scale, and bit-for-bit against the
// quantizer; raw-stream fallback; every section's size against the FORMAT formula.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "codec/cachegen/cachegen_codec.h"
#include "codec/cachegen/cachegen_payload.h"
#include "codec/cachegen/cachegen_quantizer.h"
#include "codec/cachegen/offline_cdf.h"
#include "codec/codec.h"
#include "codec/format/bitstream.h"
#include "codec/format/byte_io.h"
#include "codec/format/kv_dump.h"
#include "codec/vector_quantizer.h"
#include "common/half.h"
#include "tests/test_support.h"

namespace kvstream::codec {
namespace {

namespace fs = std::filesystem;

const KvFile& fixture() { return test_support::kv_fixture(); }

LevelSpec generic_spec(int level, int layers) { return Ladder::from_name_or_path("generic").level_spec(level, layers); }

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Bytes of stream `code` in LENS for a sub-chunk of n tokens.
uint64_t stream_bytes(uint8_t code, int64_t n) { return code == kRawStreamCode ? uint64_t(n) : uint64_t(code) + 1; }

// Counts LENS codes that mark a raw stream.
uint64_t raw_stream_count(const std::vector<uint8_t>& bytes) {
  const auto lens = parse_bitstream(bytes).section("LENS");
  return uint64_t(std::count(lens.begin(), lens.end(), kRawStreamCode));
}

// Normal values with a few outlier channels (per-token absmax then spreads the rest over few symbols).
KvCache random_kv(KvShape shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  KvCache kv(shape);
  for (auto& v : kv.values()) v = normal(rng);
  for (int row = 0; row < shape.rows(); ++row)
    for (int64_t t = 0; t < shape.tokens; ++t) kv.row_token(row, t)[row % shape.channels()] *= 6.0f;
  return kv;
}

// Checks every section of a CacheGen bitstream against the FORMAT formulas:
//   PARM 8 + 2L (+8 offline, +1 rans), SCAL 2·2L·T, CDF_ C·Σ_rows 2Q·2 (absent offline),
//   LENS ceil(T/sub)·2L·C (ac: a code per stream) or ceil(T/sub)·2L·4 (rans: a u32 per group),
//   DATA = sum of the lengths LENS encodes; total = 32 + 12·sections + sum + 4.
void expect_format_sizes(const std::vector<uint8_t>& bytes, const LevelSpec& spec, int sub, TokenMode mode, bool offline) {
  const ParsedBitstream parsed = parse_bitstream(bytes);
  const KvShape& s = parsed.header.shape;
  const uint64_t L = uint64_t(s.layers), C = uint64_t(s.channels()), T = uint64_t(s.tokens);
  const uint64_t M = uint64_t(spec.alphabet()), n_sub = uint64_t(ceil_div(s.tokens, sub));
  std::vector<std::string> names;
  for (const auto& section : parsed.sections) names.push_back(section.name());
  EXPECT_EQ(names, offline ? std::vector<std::string>({"PARM", "SCAL", "LENS", "DATA"})
                           : std::vector<std::string>({"PARM", "SCAL", "CDF_", "LENS", "DATA"}));

  const auto parm = parsed.section("PARM");
  ASSERT_GE(parm.size(), 2u);
  const bool rans = parm[1] == 2;
  ASSERT_EQ(parm.size(), 8 + 2 * L + (offline ? 8 : 0) + (rans ? 1 : 0));
  EXPECT_EQ(parm[0], spec.level);
  EXPECT_TRUE(parm[1] == 1 || rans) << "entropy coder " << int(parm[1]);
  EXPECT_EQ(parm[2], mode.is_delta() ? 1 : 0);
  EXPECT_EQ(parm[3], mode.delta_group);
  EXPECT_EQ(parm[4], offline ? 1 : 0);
  EXPECT_EQ(parm[5], M);
  EXPECT_EQ(load_u16(parm.data() + 6), sub);
  for (uint64_t l = 0; l < L; ++l) {
    EXPECT_EQ(parm[8 + l], spec.key_bins[l]) << "K layer " << l;
    EXPECT_EQ(parm[8 + L + l], spec.value_bins[l]) << "V layer " << l;
  }
  EXPECT_EQ(parsed.section("SCAL").size(), 2 * 2 * L * T);
  if (!offline) {
    uint64_t largest_symbols = 0;  // 2Q of each row
    for (int row = 0; row < spec.layers() * 2; ++row) largest_symbols += uint64_t(2 * bins_to_q(spec.bins_of_row(row)));
    EXPECT_EQ(parsed.section("CDF_").size(), C * largest_symbols * 2);
  }
  const auto lens = parsed.section("LENS");
  uint64_t data = 0;
  if (rans) {
    const uint64_t states = uint64_t(1) << parm.back();
    ASSERT_EQ(lens.size(), n_sub * 2 * L * 4);
    for (uint64_t g = 0; g < n_sub * 2 * L; ++g) {
      const uint64_t group = load_u32(lens.data() + 4 * g);
      EXPECT_GE(group, 4 * states);
      data += group;
    }
  }
  if (!rans) {
    ASSERT_EQ(lens.size(), n_sub * 2 * L * C);
  }
  for (uint64_t j = 0; !rans && j < n_sub; ++j) {
    const int64_t n = std::min<int64_t>(sub, s.tokens - int64_t(j) * sub);
    for (uint64_t i = 0; i < 2 * L * C; ++i) {
      const uint8_t code = lens[j * 2 * L * C + i];
      if (code != kRawStreamCode) {
        EXPECT_LT(int64_t(code) + 1, n) << "an AC stream must be shorter than raw";
      }
      data += stream_bytes(code, n);
    }
  }
  EXPECT_EQ(parsed.section("DATA").size(), data);
  uint64_t sum = 0;
  for (const auto& section : parsed.sections) sum += section.bytes.size();
  EXPECT_EQ(bytes.size(), 32 + 12 * parsed.sections.size() + sum + 4);
  uint64_t header_total = 0;
  for (int i = 0; i < 8; ++i) header_total |= uint64_t(bytes[size_t(8 + i)]) << (8 * i);
  EXPECT_EQ(header_total, bytes.size());
}

// Encodes `view` with `codec`, decodes it and checks, for every element:
//   * the decoded KV equals dequantize_chunk(quantize_chunk(view)) bit for bit (same symbols, scales);
//   * the stored scale m is the fp16 absmax (rounded up) of what was quantized (x, or x minus the
//     decoded anchor in delta mode), so the bound below is tight;
//   * |x - x̂| <= m / (2Q) + 1e-6·(m + |x|), Q = bins/2 - 1 of the row.
// Returns the bitstream.
std::vector<uint8_t> check_round_trip(const Codec& codec, const KvChunkView& view, int level, TokenMode mode,
                                      const DecodeContext& context = {}) {
  const KvShape s = view.shape();
  SCOPED_TRACE(codec.spec() + " level " + std::to_string(level) + " tokens [" + std::to_string(view.t0()) + ", " +
               std::to_string(view.t1()) + ")");
  const auto bytes = codec.encode(view, level, view.t0());
  const DecodedChunk decoded = decode_bitstream(bytes, context);
  EXPECT_EQ(decoded.header.codec, CodecId::kCacheGen);
  EXPECT_EQ(decoded.header.shape, s);
  EXPECT_EQ(decoded.header.t0, view.t0());
  EXPECT_EQ(decoded.kv.shape(), s);

  const LevelSpec spec = generic_spec(level, s.layers);
  const QuantizedChunk q = quantize_chunk(view, spec, mode);
  KvCache expected(s);
  dequantize_chunk(q, spec, mode, expected);
  const auto scal = parse_bitstream(bytes).section("SCAL");
  for (size_t i = 0; i < q.scales.size(); ++i)
    if (load_u16(scal.data() + 2 * i) != q.scales[i]) {
      ADD_FAILURE() << "SCAL entry " << i << " differs from the quantizer's scale";
      break;
    }
  for (size_t i = 0; i < expected.values().size(); ++i)
    if (std::memcmp(&expected.values()[i], &decoded.kv.values()[i], sizeof(float)) != 0) {
      ADD_FAILURE() << "value " << i << ": decoded " << decoded.kv.values()[i] << ", quantizer gives "
                    << expected.values()[i];
      break;
    }

  KvCache out = decoded.kv;
  std::vector<float> reference(size_t(s.channels()));
  for (int row = 0; row < s.rows(); ++row) {
    const float Q = float(bins_to_q(spec.bins_of_row(row)));
    for (int64_t t = 0; t < s.tokens; ++t) {
      const float* x = view.token(row, t);
      const float* y = out.row_token(row, t);
      const float* anchor = mode.is_anchor(t) ? nullptr : out.row_token(row, mode.anchor_of(t));
      float max_abs = 0;
      for (int c = 0; c < s.channels(); ++c) {
        reference[size_t(c)] = anchor ? x[c] - anchor[c] : x[c];
        max_abs = std::max(max_abs, std::fabs(reference[size_t(c)]));
      }
      const uint16_t scale_bits = load_u16(scal.data() + 2 * (size_t(row) * size_t(s.tokens) + size_t(t)));
      EXPECT_EQ(scale_bits, common::float_to_half_up(max_abs)) << "row " << row << " token " << t;
      const float m = common::half_to_float(scale_bits);
      for (int c = 0; c < s.channels(); ++c) {
        const float bound = m / (2 * Q) + 1e-6f * (m + std::fabs(x[c]));
        if (!(std::fabs(x[c] - y[c]) <= bound)) {
          ADD_FAILURE() << "row " << row << " token " << t << " channel " << c << ": x " << x[c] << " decoded " << y[c]
                        << " bound " << bound;
          return bytes;
        }
      }
    }
  }
  const CacheGenOptions options = cachegen_options(parse_codec_spec(codec.spec()));
  expect_format_sizes(bytes, spec, CacheGenParams::parse(parse_bitstream(bytes)).sub_tokens, mode, options.offline_cdf);
  return bytes;
}

// Round trips every context of the fixture in chunks of 512 and of 200 tokens (200 gives a partial
// last chunk and, with 256-token sub-chunks, never a full one; 512 gives sub-chunks of 256 + 256).
void check_fixture_round_trips(const std::string& spec, TokenMode mode) {
  const auto codec = make_codec(spec);
  EXPECT_EQ(codec->levels(), std::vector<int>({1, 2, 3}));
  for (const auto& context : fixture().contexts)
    for (int64_t chunk : {512, 200})
      for (const auto& [t0, t1] : chunk_ranges(context.shape().tokens, chunk))
        for (int level : {1, 2, 3}) {
          check_round_trip(*codec, context.chunk(t0, t1), level, mode);
          if (::testing::Test::HasFailure()) return;
        }
}

TEST(CacheGenFixture, Shape) {
  ASSERT_EQ(fixture().contexts.size(), 4u);
  EXPECT_EQ(fixture().dtype, SourceDtype::kFp16);
  for (const auto& context : fixture().contexts) EXPECT_EQ(context.shape(), (KvShape{5, 4, 8, 512}));
}

TEST(CacheGenFixture, RawRoundTrip) { check_fixture_round_trips("cachegen", {}); }
TEST(CacheGenFixture, DeltaRoundTrip) { check_fixture_round_trips("cachegen:delta=10", {10}); }
TEST(CacheGenFixture, DeltaOfThreeRoundTrip) { check_fixture_round_trips("cachegen:delta=3", {3}); }
TEST(CacheGenFixture, DeltaWithoutValueMeansTen) { check_fixture_round_trips("cachegen:delta", {10}); }
TEST(CacheGenFixture, SubChunksOf64RoundTrip) { check_fixture_round_trips("cachegen:sub=64", {}); }
TEST(CacheGenFixture, RansRoundTrip) { check_fixture_round_trips("cachegen:entropy=rans", {}); }
TEST(CacheGenFixture, RansDeltaRoundTrip) { check_fixture_round_trips("cachegen:entropy=rans,delta=10", {10}); }
TEST(CacheGenFixture, RansSubChunksOf64RoundTrip) { check_fixture_round_trips("cachegen:entropy=rans,sub=64", {}); }
TEST(CacheGenFixture, RansOneStateRoundTrip) { check_fixture_round_trips("cachegen:entropy=rans,states=1", {}); }
TEST(CacheGenFixture, RansSixtyFourStatesRoundTrip) { check_fixture_round_trips("cachegen:entropy=rans,states=64", {}); }

// An offline table profiled on contexts 0-2, used for context 3 (never seen in profiling).
class CacheGenOffline : public test_support::TempDirTest {
 protected:
  static std::shared_ptr<const OfflineCdfTable> profile(TokenMode mode) {
    const auto& contexts = fixture().contexts;
    return std::make_shared<const OfflineCdfTable>(OfflineCdfTable::build(
        {contexts[0].all(), contexts[1].all(), contexts[2].all()}, Ladder::from_name_or_path("generic"), mode));
  }
};

TEST_F(CacheGenOffline, RoundTripWithAnInMemoryTable) {
  const auto table = profile({});
  const auto codec = make_cachegen_codec("cachegen:cdf=offline", table);
  const KvCache& context = fixture().contexts[3];
  for (int64_t chunk : {512, 200})
    for (const auto& [t0, t1] : chunk_ranges(context.shape().tokens, chunk))
      for (int level : {1, 2, 3}) {
        const auto bytes = check_round_trip(*codec, context.chunk(t0, t1), level, {}, DecodeContext{{table}});
        // The PARM section ends with the table id.
        const auto parm = parse_bitstream(bytes).section("PARM");
        uint64_t id = 0;
        for (int i = 0; i < 8; ++i) id |= uint64_t(parm[parm.size() - 8 + size_t(i)]) << (8 * i);
        EXPECT_EQ(id, table->id());
        if (HasFailure()) return;
      }
}

TEST_F(CacheGenOffline, RoundTripWithASavedTableFile) {
  const auto table = profile({});
  const fs::path path = dir_ / "fixture.kvcdf";
  table->save(path);
  const auto loaded = std::make_shared<const OfflineCdfTable>(OfflineCdfTable::load(path));
  EXPECT_EQ(loaded->id(), table->id());
  EXPECT_EQ(loaded->serialize(), table->serialize());
  const auto by_path = make_codec("cachegen:cdf=offline,table=" + path.string());
  const auto in_memory = make_cachegen_codec("cachegen:cdf=offline", table);
  const KvChunkView view = fixture().contexts[3].chunk(0, 200);
  for (int level : {1, 2, 3}) {
    const auto bytes = check_round_trip(*by_path, view, level, {}, DecodeContext{{loaded}});
    EXPECT_EQ(bytes, in_memory->encode(view, level, view.t0())) << "level " << level;
  }
}

TEST_F(CacheGenOffline, DeltaTable) {
  const auto table = profile({10});
  const auto codec = make_cachegen_codec("cachegen:cdf=offline,delta=10", table);
  const KvCache& context = fixture().contexts[3];
  for (const auto& [t0, t1] : chunk_ranges(context.shape().tokens, 200))
    for (int level : {1, 2, 3}) check_round_trip(*codec, context.chunk(t0, t1), level, {10}, DecodeContext{{table}});
  // A raw-token codec cannot use a table profiled with delta groups.
  EXPECT_THROW(make_cachegen_codec("cachegen:cdf=offline", table), std::invalid_argument);
}

TEST_F(CacheGenOffline, SmallerThanPerChunkTablesAtLevel2) {
  const auto table = profile({});
  const KvChunkView view = fixture().contexts[3].all();
  const size_t per_chunk = make_codec("cachegen")->encode(view, 2, 0).size();
  const size_t offline = make_cachegen_codec("cachegen:cdf=offline", table)->encode(view, 2, 0).size();
  EXPECT_LT(offline, per_chunk);
  // It saves at most the CDF_ section (C·Σ 2Q·2 bytes: K0, K1, V0 at 32 bins, the rest at 16) plus
  // the payload it may win or lose.
  EXPECT_GT(offline + 32 * (3 * 30 + 7 * 14) * 2, per_chunk);
}

TEST(CacheGen, Level2IsThreeToFourTimesSmallerThanFp16) {
  const KvChunkView view = fixture().contexts[0].all();
  const double ratio = double(view.shape().fp16_bytes()) / double(make_codec("cachegen")->encode(view, 2, 0).size());
  EXPECT_GE(ratio, 3.0);
  EXPECT_LE(ratio, 4.0);
  // Levels order by size: 1 < 2 < 3.
  const auto codec = make_codec("cachegen");
  EXPECT_LT(codec->encode(view, 1, 0).size(), codec->encode(view, 2, 0).size());
  EXPECT_LT(codec->encode(view, 2, 0).size(), codec->encode(view, 3, 0).size());
}

TEST(CacheGen, ZeroTokensDecodeToExactlyZero) {
  KvCache kv = fixture().contexts[0];
  const KvShape s = kv.shape();
  const std::vector<std::pair<int, int64_t>> zeros = {{0, 0}, {3, 255}, {3, 256}, {7, 100}, {9, 511}};
  for (const auto& [row, t] : zeros) std::fill_n(kv.row_token(row, t), s.channels(), 0.0f);
  for (int row = 0; row < s.rows(); ++row) std::fill_n(kv.row_token(row, 300), s.channels(), 0.0f);  // a whole token
  // A whole anchor/delta group of 10 (tokens 20..29) in every row.
  for (int row = 0; row < s.rows(); ++row)
    for (int64_t t = 20; t < 30; ++t) std::fill_n(kv.row_token(row, t), s.channels(), 0.0f);
  for (const auto& [spec, mode] : std::vector<std::pair<std::string, TokenMode>>{{"cachegen", {}}, {"cachegen:delta=10", {10}}})
    for (int level : {1, 2, 3}) {
      const auto bytes = check_round_trip(*make_codec(spec), kv.all(), level, mode);
      const DecodedChunk decoded = decode_bitstream(bytes);
      const auto scal = parse_bitstream(bytes).section("SCAL");
      const std::string& name = spec;  // clang 14 cannot capture a structured binding in a lambda
      auto expect_zero = [&](int row, int64_t t) {
        EXPECT_EQ(load_u16(scal.data() + 2 * (size_t(row) * size_t(s.tokens) + size_t(t))), 0u) << name << " row " << row << " token " << t;
        for (int c = 0; c < s.channels(); ++c)
          ASSERT_EQ(decoded.kv.token(row % s.layers, KvPart(row / s.layers), t)[c], 0.0f)
              << name << " level " << level << " row " << row << " token " << t;
      };
      for (int row = 0; row < s.rows(); ++row)
        for (int64_t t = 20; t < 30; ++t) expect_zero(row, t);
      if (mode.is_delta()) continue;  // elsewhere a zero token is a delta to a non-zero anchor
      for (const auto& [row, t] : zeros) expect_zero(row, t);
      for (int row = 0; row < s.rows(); ++row) expect_zero(row, 300);
    }
}

TEST(CacheGen, StreamsThatOutgrowTheirBudgetAreStoredRaw) {
  // Profile on KV where every symbol is Q (tiny noise) except channel 0 (the token's absmax, 2Q):
  // every table gives all other symbols probability 1/65536, i.e. 16 bits each.
  const KvShape shape{2, 2, 8, 300};  // sub-chunks of 256 + 44 tokens
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> noise(-1e-4f, 1e-4f);
  KvCache quiet(shape);
  for (int row = 0; row < shape.rows(); ++row)
    for (int64_t t = 0; t < shape.tokens; ++t) {
      float* x = quiet.row_token(row, t);
      x[0] = 1.0f;
      for (int c = 1; c < shape.channels(); ++c) x[c] = noise(rng);
    }
  const auto table = std::make_shared<const OfflineCdfTable>(
      OfflineCdfTable::build({quiet.all()}, Ladder::from_name_or_path("generic"), {}));
  const auto codec = make_cachegen_codec("cachegen:cdf=offline", table);
  const KvCache spread = random_kv(shape, 6);
  const uint64_t streams = 2 * uint64_t(shape.rows()) * uint64_t(shape.channels());  // 2 sub-chunks
  for (int level : {1, 2, 3}) {
    const auto bytes = check_round_trip(*codec, spread.all(), level, {}, DecodeContext{{table}});
    const uint64_t raw = raw_stream_count(bytes);
    EXPECT_GE(raw, streams * 9 / 10) << "level " << level;
    EXPECT_LE(raw, streams);
    // The quiet KV itself codes to short arithmetic streams: no raw stream at all.
    const auto quiet_bytes = check_round_trip(*codec, quiet.all(), level, {}, DecodeContext{{table}});
    EXPECT_EQ(raw_stream_count(quiet_bytes), 0u);
  }
}

// Per-row bytes (what calibrate-ladder weighs bins by) add up to DATA, and a row of near-constant
// values costs less than a row of noise, with either entropy coder.
TEST(CacheGen, RowCodedBytesSplitDataAndTablesByRow) {
  const KvShape shape{2, 2, 16, 300};
  KvCache kv = random_kv(shape, 9);
  for (int64_t t = 0; t < shape.tokens; ++t) {
    float* x = kv.row_token(1, t);
    x[0] = 1.0f;
    std::fill(x + 1, x + shape.channels(), 0.0f);
  }
  for (const std::string spec : {"cachegen", "cachegen:entropy=rans"}) {
    const auto codec = make_codec(spec);
    const auto bytes = codec->encode(kv.all(), 2, 0);
    const auto parsed = parse_bitstream(bytes);
    const auto payload = parse_cachegen_payload(parsed, codec->decode_context());
    const auto per_row = row_coded_bytes(payload);
    ASSERT_EQ(per_row.size(), size_t(shape.rows())) << spec;
    uint64_t sum = 0;
    for (uint64_t b : per_row) sum += b;
    EXPECT_EQ(sum, parsed.section("DATA").size() + parsed.section("CDF_").size()) << spec;
    const auto table = [&](int row) {  // the row's CDF_ entries: C·2Q·2 bytes
      return uint64_t(shape.channels()) * uint64_t(2 * bins_to_q(payload.params.spec.bins_of_row(row))) * 2;
    };
    EXPECT_LT((per_row[1] - table(1)) * 4, per_row[0] - table(0)) << spec;
  }
}

TEST(CacheGen, SizeReportMatchesTheBitstream) {
  const std::vector<KvCache> inputs = {fixture().contexts[1], random_kv({3, 3, 5, 300}, 1), random_kv({1, 1, 4, 1}, 2)};
  for (const auto& kv : inputs)
    for (const char* spec : {"cachegen", "cachegen:sub=64", "cachegen:delta=10"})
      for (int level : {1, 2, 3}) {
        SCOPED_TRACE(std::string(spec) + " level " + std::to_string(level) + " " + kv.shape().to_string());
        const auto bytes = make_codec(spec)->encode(kv.all(), level, 0);
        const CacheGenSizeReport report = cachegen_size_report(spec, kv.all(), level);
        const ParsedBitstream parsed = parse_bitstream(bytes);
        const uint64_t lens = parsed.section("LENS").size(), payload = parsed.section("DATA").size();
        EXPECT_EQ(report.total_bytes, bytes.size());
        EXPECT_EQ(report.payload_bytes, payload);
        EXPECT_EQ(report.side_bytes, bytes.size() - payload);
        EXPECT_EQ(report.raw_streams, raw_stream_count(bytes));
        // The ideal payload is the side info minus LENS plus ceil(sum -log2 p / 8). Each arithmetic
        // stream takes at most its ideal + 9 bits (+ 1e-4 bit per symbol; see test_arithmetic_coder),
        // a raw one less. Untrimmed, a stream takes at least its ideal; trimming its trailing zero
        // bytes drops the flush's follow bits (the final pending count, rarely more than a few bits),
        // so without raw streams the payload stays within a byte per stream of the ideal.
        const uint64_t side_without_lens = report.side_bytes - lens;
        ASSERT_GE(report.ideal_bytes, side_without_lens);
        const double ideal_payload = double(report.ideal_bytes - side_without_lens);
        const double n_streams = double(lens), symbols = double(kv.shape().elements());
        EXPECT_LE(double(payload), ideal_payload + n_streams * 9.0 / 8.0 + symbols * 1e-4 / 8 + 1);
        if (report.raw_streams == 0) {
          EXPECT_GE(double(payload) + n_streams + 1 + symbols * 1e-4 / 8, ideal_payload);
        }
      }
}

TEST(CacheGen, SectionSizesOnSyntheticShapes) {
  // Shapes with T below, at and above a sub-chunk, odd C, a single layer and a single token.
  for (const KvShape& shape : std::vector<KvShape>{{3, 3, 5, 300}, {1, 1, 4, 1}, {2, 4, 2, 256}, {4, 1, 7, 257}, {1, 2, 3, 65}})
    for (const auto& [spec, mode] : std::vector<std::pair<std::string, TokenMode>>{
             {"cachegen", {}}, {"cachegen:sub=64", {}}, {"cachegen:sub=1", {}}, {"cachegen:delta=3", {3}}})
      for (int level : {1, 2, 3}) {
        check_round_trip(*make_codec(spec), random_kv(shape, uint32_t(shape.tokens)).all(), level, mode);
        if (HasFailure()) return;
      }
}

TEST(CacheGen, FixtureSectionSizesByHand) {
  // Context 0, level 2, one 512-token chunk: L=5, C=32, M=32, two 256-token sub-chunks; K0, K1 and
  // V0 have 32 bins (2Q = 30), the other 7 rows 16 (2Q = 14).
  const auto bytes = make_codec("cachegen")->encode(fixture().contexts[0].all(), 2, 0);
  const ParsedBitstream parsed = parse_bitstream(bytes);
  EXPECT_EQ(parsed.section("PARM").size(), 8u + 10u);
  EXPECT_EQ(parsed.section("SCAL").size(), 2u * 10u * 512u);  // 10240
  EXPECT_EQ(parsed.section("CDF_").size(), 32u * (3u * 30u + 7u * 14u) * 2u);  // 12032
  EXPECT_EQ(parsed.section("LENS").size(), 2u * 10u * 32u);  // 640
  EXPECT_EQ(bytes.size(), 32u + 12u * 5u + 18u + 10240u + 12032u + 640u + parsed.section("DATA").size() + 4u);
}

// The default rANS layout gives wide chunks enough independent chains for a GPU (docs/CODECS.md,
// "Parallelism of rANS"): a Mistral-7B-shaped chunk of 1,024 tokens has >= 32k chains of >= 2,048
// symbols each, narrow models keep 256-token sub-chunks, AC and an explicit sub= are left alone.
TEST(CacheGen, DefaultRansLayoutScalesWithTheRowWidth) {
  const auto chains = [](const std::string& spec, const KvShape& shape) {
    const CacheGenParams p = plan_cachegen_encode(spec, shape, 1).params;
    return std::pair{sub_chunk_count(shape.tokens, p.sub_tokens) * shape.rows() * p.rans_states, p.sub_tokens};
  };
  const KvShape mistral{32, 8, 128, 1024}, stories{5, 4, 8, 512}, smollm2{30, 3, 64, 1024};
  const auto [mistral_chains, mistral_sub] = chains("cachegen:entropy=rans,ladder=mistral-7b", mistral);
  EXPECT_EQ(mistral_sub, 16);
  EXPECT_GE(mistral_chains, 32768);
  EXPECT_GE(16 * mistral.channels() / 8, 2048);  // symbols per state
  EXPECT_EQ(chains("cachegen:entropy=rans", stories).second, 256);
  EXPECT_EQ(chains("cachegen:entropy=rans", smollm2).second, 128);
  EXPECT_EQ(chains("cachegen:entropy=rans,states=32", smollm2).second, 256);  // more states per group, longer groups
  EXPECT_EQ(chains("cachegen:entropy=rans,sub=64,ladder=mistral-7b", mistral).second, 64);
  EXPECT_EQ(plan_cachegen_encode("cachegen:ladder=mistral-7b", mistral, 1).params.sub_tokens, kMaxSubChunkTokens);
}

TEST(CacheGen, SpecsAndOptions) {
  EXPECT_EQ(make_codec("cachegen")->spec(), "cachegen");
  EXPECT_EQ(make_codec("cachegen:sub=64,delta=10")->spec(), "cachegen:delta=10,sub=64");
  for (const char* bad : {"cachegen:cdf=offline", "cachegen:table=x.kvcdf", "cachegen:cdf=sometimes", "cachegen:sub=0",
                          "cachegen:sub=257", "cachegen:delta=1", "cachegen:delta=256", "cachegen:delta=x",
                          "cachegen:ladder=no-such-ladder", "cachegen:bits=4",
                          "cachegen:cdf=offline,table=/no/such/table.kvcdf"})
    EXPECT_ANY_THROW(make_codec(bad)) << bad;
  EXPECT_THROW(make_codec("cachegen:cdf=offline"), std::invalid_argument);
  const KvChunkView view = fixture().contexts[0].chunk(0, 16);
  EXPECT_THROW(make_codec("cachegen")->encode(view, 4, 0), std::invalid_argument);
  EXPECT_THROW(make_codec("cachegen")->encode(view, 0, 0), std::invalid_argument);
  EXPECT_THROW(make_codec("cachegen:ladder=mistral-7b")->encode(view, 2, 0), std::invalid_argument);  // L=5
  // Another ladder works: lmcache-default at L=5 is 32 bins everywhere, like generic level 3.
  const auto lmcache = make_codec("cachegen:ladder=lmcache-default")->encode(view, 1, 0);
  const auto generic3 = make_codec("cachegen")->encode(view, 3, 0);
  EXPECT_EQ(decode_bitstream(lmcache).kv.values(), decode_bitstream(generic3).kv.values());
  // A table built for a different ladder has no matching level spec.
  const auto other = std::make_shared<const OfflineCdfTable>(
      OfflineCdfTable::build({view}, Ladder::from_name_or_path("lmcache-default"), {}));
  EXPECT_THROW(make_cachegen_codec("cachegen:cdf=offline", other)->encode(view, 2, 0), std::invalid_argument);
  // Non-fp16 values are rejected with the position named.
  KvCache bad = KvCache::from_view(view);
  bad.row_token(7, 3)[2] = NAN;
  try {
    make_codec("cachegen")->encode(bad.all(), 2, 0);
    ADD_FAILURE() << "NaN accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("row 7, token 3"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kvstream::codec
