// CPU launchers of the transform codec's stages (codec/transform/transform_decode_stages.h,
// codec/transform/transform_encode_stages.h) for the tests: every stage's threads run in a random order, as a
// GPU may run them, and the scans run in between, as the CUDA kernels' do. Their output is what the
// GPU must give bit for bit (the ordered sums of the projections), and what the CPU codec gives to
// float rounding (its GEMMs sum in another order).
// Also the stories260K calibration the transform tests share (fixture contexts 0..2; 3 is held out),
// and a version-2 bitstream made from a version-3 one.
#pragma once
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <span>
#include <stdexcept>
#include <vector>

#include "codec/entropy/rans_coder.h"
#include "codec/format/bitstream.h"
#include "codec/format/bitstream_error.h"
#include "codec/format/byte_io.h"
#include "codec/transform/rope.h"
#include "codec/transform/transform_calibration.h"
#include "codec/transform/transform_decode_stages.h"
#include "codec/transform/transform_encode_stages.h"
#include "codec/transform/transform_payload.h"
#include "common/half.h"
#include "tests/test_support.h"

namespace kvstream::codec::test_support_transform {

// Key metrics (TransformCalibration::Options::key_metrics) of the fixture's shape, as a model's
// queries give them: per layer and head A A^T for a Gaussian A, its rows scaled by 4^(-i / D) so
// that some directions matter much more than others; zero between heads.
inline std::vector<std::vector<double>> random_key_metrics(int layers, int kv_heads, int head_dim, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  const int channels = kv_heads * head_dim;
  std::vector<std::vector<double>> metrics(size_t(layers), std::vector<double>(size_t(channels) * size_t(channels), 0.0));
  for (auto& m : metrics)
    for (int h = 0; h < kv_heads; ++h) {
      std::vector<double> a(size_t(head_dim) * size_t(head_dim));
      for (int i = 0; i < head_dim; ++i)
        for (int j = 0; j < head_dim; ++j) a[size_t(i * head_dim + j)] = normal(rng) * std::pow(4.0, -double(i) / head_dim);
      for (int i = 0; i < head_dim; ++i)
        for (int j = 0; j < head_dim; ++j) {
          double sum = 0;
          for (int k = 0; k < head_dim; ++k) sum += a[size_t(i * head_dim + k)] * a[size_t(j * head_dim + k)];
          m[size_t(h * head_dim + i) * size_t(channels) + size_t(h * head_dim + j)] = sum;
        }
    }
  return metrics;
}

// The calibration of fixture contexts 0..2 (3 held out); with `weighed_keys`, keys weighed by
// random_key_metrics.
inline TransformCalibration stories_calibration(RopePairs pairs, bool weighed_keys = false) {
  const auto& kv = test_support::kv_fixture();
  std::vector<KvChunkView> views;
  for (size_t i = 0; i < 3; ++i) views.push_back(kv.contexts[i].all());
  TransformCalibration::Options options;
  options.model = "stories260K";
  options.rope = RopeSpec{pairs, 10000.0};
  const KvShape s = views.front().shape();
  if (weighed_keys) options.key_metrics = random_key_metrics(s.layers, s.kv_heads, s.head_dim, 5);
  return TransformCalibration::build(views, options);
}

// 0 .. n-1 in a random order: a stage's threads as a GPU may run them.
inline std::vector<uint64_t> shuffled(uint64_t n, std::mt19937& rng) {
  std::vector<uint64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

// A thread per (layer, coded token, head, pair) in random order, turning the pair of the key that
// key_of(layer, position) points at (position = sinks + coded token, in the chunk) by the chunk's
// angles: forwards (decode) or backwards (encode).
template <class KeyOf>
void launch_rope_pairs(const TransformCalibration& cal, const KvShape& s, int64_t t0, int sinks, bool undo,
                       const KeyOf& key_of, std::mt19937& rng) {
  if (cal.rope().pairs == RopePairs::kNone) return;
  const RopeAngles angles(cal.rope(), s.head_dim, t0, s.tokens);
  const int half = s.head_dim / 2;
  const uint64_t coded = uint64_t(s.tokens - sinks), per_token = uint64_t(s.kv_heads) * uint64_t(half);
  for (const uint64_t k : shuffled(uint64_t(s.layers) * coded * per_token, rng)) {
    const int layer = int(k / (coded * per_token));
    const int64_t t = sinks + int64_t(k % (coded * per_token) / per_token);
    const int h = int(k % per_token / uint64_t(half)), j = int(k % uint64_t(half));
    float* key = key_of(layer, t) + h * s.head_dim;
    const size_t at = size_t(t) * size_t(half) + size_t(j);
    rope_turn_pair(key[rope_pair_first(cal.rope().pairs, j)], key[rope_pair_second(cal.rope().pairs, j, half)],
                   angles.cos_table()[at], angles.sin_table()[at], undo);
  }
}

struct LaunchedDecode {
  std::vector<float> values;  // canonical [L][2][T][C]
  uint64_t escapes = 0;       // escaped symbols in the chunk
};

// Throws BitstreamError as the decoders do for a corrupt group or sections not used up exactly.
inline LaunchedDecode launch_transform_stages(std::span<const uint8_t> bitstream, const DecodeContext& context,
                                              std::mt19937& rng) {
  const ParsedBitstream parsed = parse_bitstream(bitstream);
  const TransformPayload p = parse_transform_payload(parsed, context);
  const TransformCalibration& cal = *p.cal;
  const KvShape& s = p.shape;
  const int rows = s.rows(), channels = s.channels();
  std::vector<uint64_t> start(1, 0);
  for (int r = 0; r < rows; ++r) start.push_back(start.back() + p.row_symbols(r));
  const uint64_t symbols_total = start.back();
  // (row, index in row) of chunk symbol g.
  std::vector<int> row_of(symbols_total);
  for (int r = 0; r < rows; ++r) std::fill(row_of.begin() + int64_t(start[r]), row_of.begin() + int64_t(start[r + 1]), r);
  const auto class_of = [&](uint64_t g) {
    const int r = row_of[g];
    return p.rows[size_t(r)].classes[(g - start[size_t(r)]) % uint64_t(p.rows[size_t(r)].kept())];
  };

  // 1. entropy, a group at a time in random order.
  std::vector<uint8_t> symbols(symbols_total);
  for (const uint64_t g : shuffled(p.groups.size(), rng)) {
    const int r = p.groups.row[g];
    const TransformRowPlan& plan = p.rows[size_t(r)];
    if (plan.kept() == 0) continue;
    std::vector<RansSymbolLookup> lookups(size_t(plan.kept()));
    for (int i = 0; i < plan.kept(); ++i) lookups[size_t(i)] = cal.lookup(r < s.layers ? 0 : 1, plan.classes[size_t(i)]);
    if (!rans_decode_group(p.rans.data() + p.group_offset[g], uint32_t(p.group_offset[g + 1] - p.group_offset[g]),
                           p.groups.symbols(g), plan.kept(), plan.cdf.data(), lookups.data(), kTransformAlphabet,
                           kTransformRansStates, symbols.data() + p.groups.symbol_start[g]))
      throw BitstreamError(BitstreamErrorKind::kCorruptPayload, "RANS", "a rANS group is corrupt");
  }
  // 2. counts, then the scans.
  std::vector<uint64_t> bit_at(symbols_total + 1, 0), escape_at(symbols_total + 1, 0);
  for (const uint64_t g : shuffled(symbols_total, rng)) {
    bit_at[g] = uint64_t(transform_symbol_low_bits(symbols[g], class_of(g)));
    escape_at[g] = symbols[g] == kTransformEscape ? 1 : 0;
  }
  std::exclusive_scan(bit_at.begin(), bit_at.end(), bit_at.begin(), uint64_t(0));
  std::exclusive_scan(escape_at.begin(), escape_at.end(), escape_at.begin(), uint64_t(0));
  p.check_totals(bit_at.back(), escape_at.back());
  // 3. coefficients.
  std::vector<float> y(symbols_total);
  for (const uint64_t g : shuffled(symbols_total, rng))
    if (!transform_coefficient(symbols[g], class_of(g), p.low_bits.data(), bit_at[g], p.escapes.data(), escape_at[g],
                               p.rows[size_t(row_of[g])].step, y[g]))
      throw BitstreamError(BitstreamErrorKind::kCorruptPayload, "ESCP", "escaped value out of range");
  // 4. values and sinks, then RoPE on the keys.
  KvCache kv(s);
  for (const uint64_t k : shuffled(uint64_t(rows) * uint64_t(s.tokens) * uint64_t(channels), rng)) {
    const int r = int(k / (uint64_t(s.tokens) * channels));
    const int64_t t = int64_t(k / channels % uint64_t(s.tokens));
    const int c = int(k % channels);
    const TransformRowPlan& plan = p.rows[size_t(r)];
    kv.row_token(r, t)[c] = t < p.sinks ? common::half_to_float(load_u16(p.sink.data() + 2 * ((uint64_t(r) * p.sinks + t) * channels + c)))
                                        : transform_value(y.data() + start[size_t(r)] + uint64_t(t - p.sinks) * plan.kept(),
                                                          plan.kept(), cal.row(r).synthesis_basis().data(), channels, c,
                                                          cal.row(r).mean[size_t(c)]);
  }
  launch_rope_pairs(cal, s, p.t0, p.sinks, /*undo=*/false, [&kv](int layer, int64_t t) { return kv.row_token(layer, t); },
                    rng);
  return {std::move(kv.values()), escape_at.back()};
}

// The encoder's stages on `chunk` (its first token at position t0) at distortion d, with sub_tokens
// per rANS group (0: each row's default): the bitstream.
inline std::vector<uint8_t> launch_transform_encode_stages(const TransformCalibration& cal, double d, int sub_tokens,
                                                           const KvChunkView& chunk, int64_t t0, std::mt19937& rng) {
  const KvShape s = chunk.shape();
  check_transform_shape(cal, s, "the chunk");
  const int rows = s.rows(), channels = s.channels(), sinks = transform_sinks_in_chunk(cal, t0, s.tokens);
  const int64_t coded = s.tokens - sinks;
  std::vector<TransformRowPlan> plans;
  std::vector<uint64_t> start(1, 0);
  for (int r = 0; r < rows; ++r) {
    plans.emplace_back(cal, r, d, sub_tokens);
    start.push_back(start.back() + uint64_t(coded) * uint64_t(plans.back().kept()));
  }
  const uint64_t symbols_total = start.back();
  // (row, token, component) of chunk symbol g.
  const auto locate = [&](uint64_t g, int& r, int64_t& t, int& i) {
    r = int(std::upper_bound(start.begin(), start.end(), g) - start.begin()) - 1;
    t = int64_t((g - start[size_t(r)]) / uint64_t(plans[size_t(r)].kept()));
    i = int((g - start[size_t(r)]) % uint64_t(plans[size_t(r)].kept()));
  };
  // 1. the coded tokens [row][t][C], RoPE undone on the keys pair by pair, then the projections.
  std::vector<float> x(size_t(rows) * size_t(coded) * size_t(channels));
  for (int r = 0; r < rows; ++r)
    for (int64_t t = 0; t < coded; ++t)
      std::copy_n(chunk.token(r, sinks + t), channels, x.begin() + (int64_t(r) * coded + t) * channels);
  launch_rope_pairs(cal, s, t0, sinks, /*undo=*/true,
                    [&](int layer, int64_t t) { return x.data() + (int64_t(layer) * coded + t - sinks) * channels; }, rng);
  std::vector<float> y(symbols_total);
  for (const uint64_t g : shuffled(symbols_total, rng)) {
    int r, i;
    int64_t t;
    locate(g, r, t, i);
    y[g] = transform_component(x.data() + (int64_t(r) * coded + t) * channels, cal.row(r).mean.data(),
                               cal.row(r).basis.data() + int64_t(i) * channels, channels);
  }
  // 2. quantize.
  std::vector<TransformQuantized> q(symbols_total);
  for (const uint64_t g : shuffled(symbols_total, rng)) {
    int r, i;
    int64_t t;
    locate(g, r, t, i);
    q[g] = transform_quantize(y[g], plans[size_t(r)].step, plans[size_t(r)].classes[size_t(i)]);
  }
  // 3. scans, then every symbol's bits and escape in place.
  std::vector<uint64_t> bit_at(symbols_total + 1, 0), escape_at(symbols_total + 1, 0);
  for (uint64_t g = 0; g < symbols_total; ++g) {
    bit_at[g] = uint64_t(q[g].low_bits);
    escape_at[g] = q[g].symbol == kTransformEscape ? 1 : 0;
  }
  std::exclusive_scan(bit_at.begin(), bit_at.end(), bit_at.begin(), uint64_t(0));
  std::exclusive_scan(escape_at.begin(), escape_at.end(), escape_at.begin(), uint64_t(0));
  TransformSections sections;
  sections.sink = transform_sink_bytes(chunk, sinks);
  sections.low_bits.assign(size_t((bit_at.back() + 7) / 8), 0);
  sections.escapes.assign(size_t(4 * escape_at.back()), 0);
  std::vector<uint8_t> symbols(symbols_total);
  for (const uint64_t g : shuffled(symbols_total, rng)) {
    symbols[g] = uint8_t(q[g].symbol);
    for (int b = 0; b < q[g].low_bits; ++b)
      sections.low_bits[size_t((bit_at[g] + uint64_t(b)) / 8)] |= uint8_t(((q[g].low >> b) & 1u) << ((bit_at[g] + uint64_t(b)) % 8));
    if (q[g].symbol == kTransformEscape)
      for (int b = 0; b < 4; ++b) sections.escapes[size_t(4 * escape_at[g]) + size_t(b)] = uint8_t(uint32_t(q[g].escaped) >> (8 * b));
  }
  // 4. a group per sub-chunk of a row, in random order.
  const TransformGroups groups = transform_groups(plans, coded, /*one_per_row=*/false);
  sections.group_bytes.assign(groups.size(), 0);
  std::vector<std::vector<uint8_t>> coded_groups(groups.size());
  for (const uint64_t g : shuffled(groups.size(), rng)) {
    const TransformRowPlan& plan = plans[size_t(groups.row[g])];
    coded_groups[g].resize(rans_group_capacity(groups.symbols(g), kTransformRansStates));
    sections.group_bytes[g] = rans_encode_group(symbols.data() + groups.symbol_start[g], groups.symbols(g), plan.kept(),
                                                plan.cdf.data(), kTransformAlphabet, kTransformRansStates, coded_groups[g].data());
  }
  for (size_t g = 0; g < groups.size(); ++g)
    sections.rans.insert(sections.rans.end(), coded_groups[g].begin(), coded_groups[g].begin() + sections.group_bytes[g]);
  return write_transform_bitstream({CodecId::kTransform, s, t0, SourceDtype::kFp16}, cal, d, sinks, plans,
                                   std::move(sections));
}

// A version-2 bitstream had no sub-chunk bytes in TPRM and one group per row: none (0 bytes) for a row
// that keeps nothing, and the states alone for a row of a chunk of sinks only; written here from a
// version-3 one with at most one group per row (sub=65536).
inline std::vector<uint8_t> as_version_2(const std::vector<uint8_t>& bytes, const DecodeContext& context) {
  const ParsedBitstream parsed = parse_bitstream(bytes);
  const TransformPayload p = parse_transform_payload(parsed, context);
  std::vector<uint8_t> grps, rans, empty(rans_group_capacity(0, kTransformRansStates));
  const uint32_t empty_bytes = rans_encode_group(nullptr, 0, 1, nullptr, kTransformAlphabet, kTransformRansStates, empty.data());
  size_t g = 0;
  for (const TransformRowPlan& plan : p.rows) {
    std::span<const uint8_t> group;
    if (plan.kept() > 0 && p.coded_tokens() == 0) group = std::span(empty).first(empty_bytes);
    else if (plan.kept() > 0) {
      group = p.rans.subspan(p.group_offset[g], p.group_offset[g + 1] - p.group_offset[g]);
      ++g;
    }
    ByteWriter(grps).put<uint32_t>(static_cast<uint32_t>(group.size()));
    rans.insert(rans.end(), group.begin(), group.end());
  }
  std::vector<Section> sections;
  for (const auto& section : parsed.sections) {
    std::vector<uint8_t> contents(section.bytes.begin(), section.bytes.end());
    if (section.name() == "TPRM") contents.resize(20);
    if (section.name() == "GRPS") contents = grps;
    if (section.name() == "RANS") contents = rans;
    sections.push_back({section.tag, std::move(contents)});
  }
  auto out = write_bitstream(parsed.header, sections);
  out[4] = 2;  // the header's version, FORMAT.md §1
  test_support::repair_crc(out);
  return out;
}

}  // namespace kvstream::codec::test_support_transform
