// Interleaved rANS (rans_coder.h) and the cachegen codec's entropy=rans backend: exact round trips on
// random models, the mirrored-order invariants, garbage in without crashes, and sizes against the
// arithmetic coder on the real fixture.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <random>
#include <vector>

#include "codec/cachegen/cachegen_codec.h"
#include "codec/codec.h"
#include "codec/entropy/cdf.h"
#include "codec/entropy/rans_coder.h"
#include "codec/entropy/rans_decode_x8.h"
#include "codec/format/bitstream.h"
#include "codec/format/bitstream_error.h"
#include "codec/format/byte_io.h"
#include "tests/test_support.h"

namespace kvstream::codec {
namespace {

// `channels` CDF rows over an alphabet of m, each from skewed random counts (some symbols unseen).
struct RandomModel {
  int m, channels;
  std::vector<uint16_t> cdf;
  std::vector<RansSymbolLookup> lookups;
  std::vector<std::discrete_distribution<int>> draw;

  RandomModel(int m_, int channels_, std::mt19937& rng) : m(m_), channels(channels_) {
    cdf.resize(size_t(channels) * (m + 1));
    lookups.resize(size_t(channels));
    std::geometric_distribution<int> geometric(0.3);
    for (int c = 0; c < channels; ++c) {
      std::vector<uint64_t> counts(static_cast<size_t>(m));
      for (auto& n : counts) n = rng() % 3 == 0 ? 0 : uint64_t(1) << std::min(geometric(rng), 20);
      build_cdf16(counts.data(), m, cdf.data() + size_t(c) * (m + 1));
      build_symbol_lookup(cdf.data() + size_t(c) * (m + 1), m, lookups[size_t(c)]);
      std::vector<double> weights(counts.begin(), counts.end());
      weights[size_t(rng() % m)] += 1;  // at least one symbol can be drawn
      draw.emplace_back(weights.begin(), weights.end());
    }
  }
  std::vector<uint8_t> symbols(uint32_t n, std::mt19937& rng) {
    std::vector<uint8_t> out(n);
    for (uint32_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(draw[i % uint32_t(channels)](rng));
    return out;
  }
};

TEST(Rans, RoundTripsOnRandomModelsForEveryStateCount) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int m = 4 + int(rng() % 61), channels = 1 + int(rng() % 40), states = 1 << (rng() % 7);
    const auto n = static_cast<uint32_t>(rng() % 3000);
    RandomModel model(m, channels, rng);
    const auto symbols = model.symbols(n, rng);
    std::vector<uint8_t> out(rans_group_capacity(n, states));
    const uint32_t bytes = rans_encode_group(symbols.data(), n, channels, model.cdf.data(), m, states, out.data());
    ASSERT_LE(bytes, out.size());
    ASSERT_EQ((bytes - 4u * uint32_t(states)) % 2, 0u);
    std::vector<uint8_t> decoded(n, 0xFF);
    ASSERT_TRUE(rans_decode_group(out.data(), bytes, n, channels, model.cdf.data(), model.lookups.data(), m, states,
                                  decoded.data()))
        << "trial " << trial << ": m " << m << ", channels " << channels << ", states " << states << ", n " << n;
    ASSERT_EQ(decoded, symbols) << "trial " << trial;
  }
}

// The GPU decoder searches CDF rows staged in shared memory (search_symbol) where the CPU uses the
// row's lookup (lookup_symbol): both must name the same symbol for every slot, every alphabet size.
TEST(Rans, SearchedSymbolEqualsTheLookupsForEverySlot) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 300; ++trial) {
    const int m = 1 + trial % kMaxAlphabet;
    RandomModel model(m, 1, rng);
    for (uint32_t slot = 0; slot <= 0xFFFFu; ++slot)
      ASSERT_EQ(search_symbol(model.cdf.data(), m, slot), lookup_symbol(model.cdf.data(), m, model.lookups[0], slot))
          << "m " << m << ", slot " << slot;
  }
}

// The GPU encoder's rounds (codec/cachegen/gpu_encode.cu: a lane per state, a ballot of the lanes that give
// out a word, rans_round_word_position to place it) run here lane by lane: the group's bytes must be
// the sequential encoder's.
TEST(Rans, WarpRoundsGiveTheSequentialEncodersBytes) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    const int m = 4 + int(rng() % 61), channels = 1 + int(rng() % 40), states = 1 << (rng() % 6);  // <= 32 lanes
    const auto n = static_cast<uint32_t>(1 + rng() % 3000);
    RandomModel model(m, channels, rng);
    const auto symbols = model.symbols(n, rng);
    std::vector<uint8_t> sequential(rans_group_capacity(n, states)), warp(sequential.size());
    const uint32_t bytes = rans_encode_group(symbols.data(), n, channels, model.cdf.data(), m, states, sequential.data());

    std::vector<uint32_t> x(32, kRansLow);
    uint32_t word = rans_group_capacity(n, states);
    for (int64_t base = int64_t((n - 1) / uint32_t(states) * uint32_t(states)); base >= 0; base -= states) {
      std::vector<uint16_t> out(32);
      uint32_t emitting = 0;  // the ballot
      for (unsigned lane = 0; lane < unsigned(states) && base + lane < n; ++lane) {
        const uint64_t i = uint64_t(base) + lane;
        const uint16_t* row = model.cdf.data() + (i % uint64_t(channels)) * uint64_t(m + 1);
        if (rans_encode_symbol(x[lane], row, m, symbols[i], out[lane])) emitting |= 1u << lane;
      }
      for (unsigned lane = 0; lane < 32; ++lane)
        if (emitting >> lane & 1u) {
          const uint32_t at = rans_round_word_position(word, emitting, lane);
          warp[at] = static_cast<uint8_t>(out[lane]);
          warp[at + 1] = static_cast<uint8_t>(out[lane] >> 8);
        }
      word -= 2u * uint32_t(std::popcount(emitting));
    }
    const uint32_t head = word - 4u * uint32_t(states);
    for (int lane = 0; lane < states; ++lane)
      for (int b = 0; b < 4; ++b) warp[head + 4u * unsigned(lane) + unsigned(b)] = static_cast<uint8_t>(x[size_t(lane)] >> (8 * b));
    ASSERT_EQ(warp.size() - head, bytes) << "trial " << trial;
    ASSERT_TRUE(std::equal(sequential.begin(), sequential.begin() + bytes, warp.begin() + head)) << "trial " << trial;
  }
}

TEST(Rans, CostsWithinAFewBytesOfTheIdealSize) {
  std::mt19937 rng(11);
  RandomModel model(32, 16, rng);
  const uint32_t n = 200000;
  const auto symbols = model.symbols(n, rng);
  double ideal_bits = 0;
  for (uint32_t i = 0; i < n; ++i) ideal_bits += symbol_bits(model.cdf.data() + (i % 16) * 33, 32, symbols[i]);
  std::vector<uint8_t> out(rans_group_capacity(n, 8));
  const uint32_t bytes = rans_encode_group(symbols.data(), n, 16, model.cdf.data(), 32, 8, out.data());
  // The coder adds the N = 8 flushed states (32 bytes), a word of rounding per state, and the loss of
  // coding with a state only 2^16 above the 2^16 probability scale (ryg_rans: about 0.2 % here).
  EXPECT_LE(double(bytes), 1.005 * ideal_bits / 8 + 32 + 16);
  EXPECT_GE(double(bytes), ideal_bits / 8);
}

TEST(Rans, GarbageDecodesToValidSymbolsOrIsRejectedWithoutReadingOutside) {
  std::mt19937 rng(3);
  RandomModel model(20, 8, rng);
  const uint32_t n = 500;
  const auto symbols = model.symbols(n, rng);
  std::vector<uint8_t> good(rans_group_capacity(n, 4));
  const uint32_t bytes = rans_encode_group(symbols.data(), n, 8, model.cdf.data(), 20, 4, good.data());
  good.resize(bytes);
  int rejected = 0;
  for (int trial = 0; trial < 500; ++trial) {
    std::vector<uint8_t> bad = good;
    switch (trial % 3) {
      case 0: bad[rng() % bad.size()] ^= uint8_t(1 + rng() % 255); break;        // a flipped byte
      case 1: bad.resize(bad.size() - 2 * (1 + rng() % 8)); break;               // truncated
      default: for (auto& b : bad) b = uint8_t(rng()); break;                    // noise
    }
    std::vector<uint8_t> decoded(n);
    // A heap copy of exactly the group, so that sanitizers see any read outside it.
    const std::vector<uint8_t> in(bad.begin(), bad.end());
    rejected += !rans_decode_group(in.data(), uint32_t(in.size()), n, 8, model.cdf.data(), model.lookups.data(), 20, 4,
                                   decoded.data());
    for (const uint8_t s : decoded) ASSERT_LT(s, 20);
  }
  EXPECT_GT(rejected, 450);  // the end-state check catches nearly every corruption
  EXPECT_FALSE(rans_decode_group(good.data(), 3, n, 8, model.cdf.data(), model.lookups.data(), 20, 4,
                                 std::vector<uint8_t>(n).data()));
}

// The AVX2 decoder of 8-state groups gives exactly the scalar decoder's symbols and verdict, on
// valid groups and on garbage, alone and interleaved with up to three other groups of other rows,
// channel counts and lengths.
TEST(Rans, EightLaneDecoderEqualsTheScalarOne) {
  if (!rans_x8_available()) GTEST_SKIP() << "this CPU has no AVX2";
  std::mt19937 rng(5);
  for (int trial = 0; trial < 300; ++trial) {
    const int m = 4 + int(rng() % 61), count = 1 + trial % kRansX8MaxGroups;
    std::vector<RandomModel> models;
    std::vector<std::vector<uint8_t>> groups, expected, scalar(static_cast<size_t>(count)), lanes(static_cast<size_t>(count));
    std::vector<bool> scalar_ok;
    std::vector<RansGroup> batch;
    for (int g = 0; g < count; ++g) {
      const int channels = 8 * (1 + int(rng() % 8));
      const auto n = static_cast<uint32_t>(channels) * static_cast<uint32_t>(1 + rng() % 300);
      models.emplace_back(m, channels, rng);
      models.back().lookups.emplace_back();  // the padding the gathers may read
      expected.push_back(models.back().symbols(n, rng));
      std::vector<uint8_t> group(rans_group_capacity(n, 8));
      group.resize(rans_encode_group(expected.back().data(), n, channels, models.back().cdf.data(), m, 8, group.data()));
      if (rng() % 2) group[rng() % group.size()] ^= uint8_t(1 + rng() % 255);  // garbage half the time
      groups.push_back(std::move(group));
    }
    for (int g = 0; g < count; ++g) {
      const RandomModel& model = models[size_t(g)];
      const std::vector<uint8_t>& group = groups[size_t(g)];
      const auto n = uint32_t(expected[size_t(g)].size());
      scalar[size_t(g)].resize(n);
      lanes[size_t(g)].resize(n);
      scalar_ok.push_back(rans_decode_group(group.data(), uint32_t(group.size()), n, model.channels, model.cdf.data(),
                                            model.lookups.data(), m, 8, scalar[size_t(g)].data()));
      batch.push_back({group.data(), uint32_t(group.size()), n, model.channels, model.cdf.data(), model.lookups.data(),
                       lanes[size_t(g)].data()});
    }
    const uint32_t valid = rans_decode_groups_x8(batch.data(), count, m);
    for (int g = 0; g < count; ++g) {
      ASSERT_EQ(bool(valid >> g & 1u), scalar_ok[size_t(g)]) << "trial " << trial << ", group " << g;
      ASSERT_EQ(lanes[size_t(g)], scalar[size_t(g)]) << "trial " << trial << ", group " << g;
      if (scalar_ok[size_t(g)]) {
        ASSERT_EQ(lanes[size_t(g)], expected[size_t(g)]);
      }
    }
  }
}

// The real KV fixture in chunks of 512 tokens: rANS and AC code the same quantized symbols (the
// decoded KV is identical) and rANS is within 0.5 % of the AC bitstream at every level.
TEST(RansCodec, SameSymbolsAndSizeWithinHalfAPercentOfAcOnTheFixture) {
  const auto& kv = test_support::kv_fixture();
  const auto ac = make_codec("cachegen"), rans = make_codec("cachegen:entropy=rans");
  for (int level : {1, 2, 3}) {
    uint64_t ac_bytes = 0, rans_bytes = 0;
    for (const auto& context : kv.contexts) {
      const auto view = context.chunk(0, 512);
      const auto a = ac->encode(view, level, 0), r = rans->encode(view, level, 0);
      ac_bytes += a.size();
      rans_bytes += r.size();
      EXPECT_EQ(decode_bitstream(a).kv.values(), decode_bitstream(r).kv.values()) << "level " << level;
    }
    EXPECT_LE(double(rans_bytes), 1.005 * double(ac_bytes)) << "level " << level;
    RecordProperty("level" + std::to_string(level) + "_rans_over_ac", std::to_string(double(rans_bytes) / double(ac_bytes)));
  }
}

TEST(RansCodec, OptionsAndParametersAreChecked) {
  EXPECT_THROW(make_codec("cachegen:entropy=huffman"), std::invalid_argument);
  EXPECT_THROW(make_codec("cachegen:states=8"), std::invalid_argument);  // states without rans
  EXPECT_THROW(make_codec("cachegen:entropy=rans,states=3"), std::invalid_argument);
  EXPECT_THROW(make_codec("cachegen:entropy=rans,states=128"), std::invalid_argument);
  // An entropy coder this build does not know is a PARM error.
  const auto& kv = test_support::kv_fixture();
  auto bytes = make_codec("cachegen:entropy=rans")->encode(kv.contexts[0].chunk(0, 64), 2, 0);
  const auto parsed = parse_bitstream(bytes);
  std::vector<Section> sections;
  for (const auto& section : parsed.sections) {
    sections.push_back({section.tag, std::vector<uint8_t>(section.bytes.begin(), section.bytes.end())});
    if (section.name() == "PARM") sections.back().bytes[1] = 3;
  }
  const auto rewritten = write_bitstream(parsed.header, sections);
  try {
    decode_bitstream(rewritten);
    ADD_FAILURE() << "coder 3 must be rejected";
  } catch (const BitstreamError& e) {
    EXPECT_NE(std::string(e.what()).find("entropy coder 3 (this build knows 1 = ac, 2 = rans)"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace kvstream::codec
