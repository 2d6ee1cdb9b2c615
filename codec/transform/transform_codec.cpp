// The transform codec, spec `transform:cal=M.kvcal[,d=D]` (KVTC, ICLR 2026: project, allocate bits
// by reverse water-filling, entropy-code with offline tables). Per row r of a chunk (K or V of one
// layer), with the calibration of transform_calibration.h:
//   1. tokens at positions below the calibration's sink_tokens go as fp16 (attention sinks carry
//      outliers no basis fitted on the rest describes);
//   2. every other token: keys have RoPE undone (rope.h), x - mu_r is projected on the kept
//      components, y_i = W_r[i] . (x - mu_r);
//   3. y_i is quantized with the row's one step Delta_r (Delta_r^2 / 12 = d * mean variance of the
//      row): the same error on every kept component is the reverse water-filling optimum, and a
//      component whose variance is below that error is dropped (decoded as the mean);
//   4. q = round(y / Delta_r) is split into a rANS symbol under the offline table of its class and raw
//      low bits, or escaped (transform_quantize, transform_encode_stages.h, which the GPU encoder
//      gpu_transform_encode.h shares).
// Decode inverts it: x = mu_r + sum_i q_i Delta_r W_r[i], RoPE redone, as the stages of
// transform_decode_stages.h that the GPU decoder (gpu_transform_decode.h) shares, on a payload
// checked by transform_payload.h. Invariant: the error of a
// token is the projection residual of the dropped components plus at most Delta_r / 2 per kept one.
//
// Sections (codec/FORMAT.md §"transform"):
//   TPRM  calibration id u64 | d f64 | sink tokens in this chunk u32 | log2 sub-chunk tokens u8 [2L]
//   SINK  fp16 [2L][sinks][C], CacheGen row order
//   GRPS  u32 per group: bytes of each rANS group (kTransformRansStates interleaved states,
//         rans_coder.h), a group per sub-chunk of a row's coded tokens (transform_groups)
//   RANS  the groups, row by row, sub-chunk by sub-chunk; symbols in (token, component) order
//   LOWB  the low bits of every non-escaped q in that order, LSB first, k_c bits each
//   ESCP  int32 [escapes]: the escaped q in that order
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "codec/codec.h"
#include "codec/entropy/rans_decode_x8.h"
#include "codec/format/byte_io.h"
#include "codec/ladder.h"
#include "codec/transform/projection.h"
#include "codec/transform/transform_calibration.h"
#include "codec/transform/transform_distortion.h"
#include "codec/transform/transform_encode_stages.h"
#include "codec/transform/transform_payload.h"
#include "common/content_hash.h"
#include "common/half.h"

namespace kvstream::codec {
namespace {

using K = BitstreamErrorKind;

// sub=N: every row's tokens per rANS group, a power of two up to 2^16; 0 when the spec leaves it to
// each row's kept components (transform_default_sub_tokens).
int spec_sub_tokens(const common::Spec& spec) {
  if (!spec.has("sub")) return 0;
  const int sub = spec.integer("sub", 0, 1, static_cast<int>(kMaxTransformChunkTokens));
  if (!std::has_single_bit(unsigned(sub))) spec.fail("sub=" + std::to_string(sub) + " is not a power of two");
  return sub;
}

// Raw bits, least significant first.
class BitWriter {
 public:
  void put(uint32_t value, int bits) {
    buffer_ |= uint64_t(value) << filled_;
    filled_ += bits;
    while (filled_ >= 8) {
      bytes_.push_back(static_cast<uint8_t>(buffer_));
      buffer_ >>= 8;
      filled_ -= 8;
    }
  }
  std::vector<uint8_t> finish() {
    if (filled_ > 0) bytes_.push_back(static_cast<uint8_t>(buffer_));
    filled_ = 0;
    buffer_ = 0;
    return std::move(bytes_);
  }

 private:
  std::vector<uint8_t> bytes_;
  uint64_t buffer_ = 0;
  int filled_ = 0;
};

class TransformCodec final : public Codec {
 public:
  TransformCodec(const common::Spec& spec, std::shared_ptr<const TransformCalibration> cal)
      : spec_(spec.canonical()),
        cal_(std::move(cal)),
        distortions_(transform_spec_distortions(spec)),
        sub_tokens_(spec_sub_tokens(spec)) {
    if (distortions_.empty()) distortions_ = cal_->level_distortions();
  }

  std::string spec() const override { return spec_; }
  std::vector<int> levels() const override {
    std::vector<int> out(distortions_.size());
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int>(i + 1);
    return out;
  }
  bool ladder() const override { return true; }
  DecodeContext decode_context() const override {
    DecodeContext context;
    context.transform_calibrations.push_back(cal_);
    return context;
  }
  // The calibration's id, the levels' distortions (from d=, a ladder file or the calibration) and
  // a sub-chunk the spec sets.
  std::string content_id() const override {
    std::string id = "cal=" + common::hex64(cal_->id()) + ",d=";
    char number[32];
    for (size_t i = 0; i < distortions_.size(); ++i) {
      std::snprintf(number, sizeof number, "%s%.17g", i ? "/" : "", distortions_[i]);
      id += number;
    }
    if (sub_tokens_ > 0) id += ",sub=" + std::to_string(sub_tokens_);
    return id;
  }
  std::string entropy_coder() const override { return "rans"; }
  std::string fitted_model() const override { return cal_->model(); }

  std::vector<uint8_t> encode(const KvChunkView& chunk, int level, int64_t t0, SourceDtype source_dtype) const override {
    if (level < 1 || level > static_cast<int>(distortions_.size()))
      throw std::invalid_argument("codec " + spec_ + " has levels 1.." + std::to_string(distortions_.size()) +
                                  ", asked for level " + std::to_string(level));
    const KvShape s = chunk.shape();
    check_transform_shape(*cal_, s, "the chunk");
    const double d = distortions_[size_t(level - 1)];
    const int channels = s.channels();
    const int sinks = transform_sinks_in_chunk(*cal_, t0, s.tokens);
    const int64_t coded = s.tokens - sinks;
    const RopeAngles angles(cal_->rope(), s.head_dim, t0, s.tokens);

    std::vector<TransformRowPlan> plans;
    for (int r = 0; r < s.rows(); ++r) plans.emplace_back(*cal_, r, d, sub_tokens_);
    const TransformGroups groups = transform_groups(plans, coded, /*one_per_row=*/false);
    TransformSections out;
    out.sink = transform_sink_bytes(chunk, sinks);
    BitWriter low_bits;
    std::vector<uint8_t> symbols, group;
    std::vector<float> x(size_t(coded) * size_t(channels)), basis_t, y;  // [coded][C], [C][kept], [coded][kept]
    size_t g = 0;        // the row's first group
    uint64_t first = 0;  // the row's first symbol in the chunk
    for (int r = 0; r < s.rows(); ++r) {
      const TransformRowPlan& plan = plans[size_t(r)];
      const auto& row = cal_->row(r);
      const int kept = plan.kept();
      for (int64_t t = 0; t < coded; ++t) {
        float* token = x.data() + size_t(t) * size_t(channels);
        std::copy_n(chunk.token(r, sinks + t), channels, token);
        check_transform_token_finite(token, channels, r, s.layers, t0 + sinks + t);
        if (r < s.layers) angles.rotate(token, s.kv_heads, sinks + t, /*undo=*/true);
        for (int c = 0; c < channels; ++c) token[c] -= row.mean[size_t(c)];
      }
      basis_t.resize(size_t(channels) * size_t(kept));
      for (int i = 0; i < kept; ++i)
        for (int c = 0; c < channels; ++c) basis_t[size_t(c) * kept + i] = row.basis[size_t(i) * channels + c];
      y.resize(size_t(coded) * size_t(kept));
      matrix_product(x.data(), coded, channels, channels, basis_t.data(), kept, kept, y.data(), kept);
      symbols.resize(size_t(coded) * size_t(kept));
      for (int64_t t = 0; t < coded; ++t)
        for (int i = 0; i < kept; ++i) {
          const TransformQuantized q = transform_quantize(y[size_t(t) * kept + i], plan.step, plan.classes[size_t(i)]);
          symbols[size_t(t) * size_t(kept) + size_t(i)] = static_cast<uint8_t>(q.symbol);
          if (q.symbol == kTransformEscape) ByteWriter(out.escapes).put<uint32_t>(static_cast<uint32_t>(q.escaped));
          else if (q.low_bits > 0) low_bits.put(q.low, q.low_bits);
        }
      for (; g < groups.size() && groups.row[g] == r; ++g) {
        group.resize(rans_group_capacity(groups.symbols(g), kTransformRansStates));
        const uint32_t bytes = rans_encode_group(symbols.data() + (groups.symbol_start[g] - first), groups.symbols(g), kept,
                                                 plan.cdf.data(), kTransformAlphabet, kTransformRansStates, group.data());
        out.group_bytes.push_back(bytes);
        out.rans.insert(out.rans.end(), group.begin(), group.begin() + bytes);
      }
      first += symbols.size();
    }
    out.low_bits = low_bits.finish();
    return write_transform_bitstream({CodecId::kTransform, s, t0, source_dtype}, *cal_, d, sinks, plans, std::move(out));
  }

 private:
  std::string spec_;
  std::shared_ptr<const TransformCalibration> cal_;
  std::vector<double> distortions_;  // per level, lowest quality first
  int sub_tokens_;                   // sub=, or 0
};

// The stages of transform_decode_stages.h, one thread after another, with one GEMM per row for stage 4.
KvCache decode(const ParsedBitstream& parsed, const DecodeContext& context) {
  const TransformPayload p = parse_transform_payload(parsed, context);
  const TransformCalibration& cal = *p.cal;
  const KvShape& s = p.shape;
  const int channels = s.channels();
  const int64_t coded = p.coded_tokens();
  const bool x8 = rans_x8_available();

  // Stage 1: every group's symbols, the chunk's symbol order. Groups of rows of 8·k components decode
  // kRansX8MaxGroups at a time with the AVX2 decoder, the others one by one. A row's lookups (+1: the
  // gathers read past the last entry) are built when its first group comes, into the next of
  // kRansX8MaxGroups slots in turn: a batch holds fewer groups than that when a row begins, all of
  // the latest rows, so a slot is reused only after its row's groups have been decoded.
  std::vector<uint64_t> start(1, 0);  // per row
  for (int r = 0; r < s.rows(); ++r) start.push_back(start.back() + p.row_symbols(r));
  std::vector<uint8_t> symbols(start.back());
  const auto corrupt = [&p](size_t g) {
    return BitstreamError(K::kCorruptPayload, "RANS",
                          "rANS group " + std::to_string(g) + " (row " + std::to_string(p.groups.row[g]) + ") is corrupt");
  };
  std::vector<std::vector<RansSymbolLookup>> lookups(kRansX8MaxGroups);
  const RansSymbolLookup* row_lookups = nullptr;
  int lookup_row = -1, next_slot = 0;
  std::vector<RansGroup> batch;
  std::vector<size_t> batch_groups;
  const auto decode_batch = [&] {
    const uint32_t valid = batch.empty() ? 0 : rans_decode_groups_x8(batch.data(), int(batch.size()), kTransformAlphabet);
    for (size_t i = 0; i < batch.size(); ++i)
      if (!(valid >> i & 1u)) throw corrupt(batch_groups[i]);
    batch.clear();
    batch_groups.clear();
  };
  for (size_t g = 0; g < p.groups.size(); ++g) {
    const int r = p.groups.row[g];
    const TransformRowPlan& plan = p.rows[size_t(r)];
    if (plan.kept() == 0) continue;  // a version-2 row's empty group
    if (r != lookup_row) {
      std::vector<RansSymbolLookup>& slot = lookups[size_t(next_slot)];
      next_slot = (next_slot + 1) % kRansX8MaxGroups;
      slot.resize(size_t(plan.kept()) + 1);
      for (int i = 0; i < plan.kept(); ++i) slot[size_t(i)] = cal.lookup(r < s.layers ? 0 : 1, plan.classes[size_t(i)]);
      row_lookups = slot.data();
      lookup_row = r;
    }
    const RansGroup group{p.rans.data() + p.group_offset[g], static_cast<uint32_t>(p.group_offset[g + 1] - p.group_offset[g]),
                          p.groups.symbols(g), plan.kept(), plan.cdf.data(), row_lookups,
                          symbols.data() + p.groups.symbol_start[g]};
    if (x8 && plan.kept() % 8 == 0) {
      batch.push_back(group);
      batch_groups.push_back(g);
      if (batch.size() == size_t(kRansX8MaxGroups)) decode_batch();
      continue;
    }
    decode_batch();  // the groups before this one first, so that the first corrupt group is the one named
    if (!rans_decode_group(group.in, group.length, group.n, group.channels, group.cdf, group.lookups,
                           kTransformAlphabet, kTransformRansStates, group.symbols))
      throw corrupt(g);
  }
  decode_batch();
  // Stage 2: the totals, which must use LOWB and ESCP up exactly (so stage 3 reads inside them);
  // the scans run along with stage 3.
  uint64_t bits_total = 0, escapes_total = 0;
  for (int r = 0; r < s.rows(); ++r) {
    const TransformRowPlan& plan = p.rows[size_t(r)];
    const uint8_t* row_symbols = symbols.data() + start[size_t(r)];
    for (uint64_t j = 0, i = 0; j < p.row_symbols(r); ++j, i = i + 1 == uint64_t(plan.kept()) ? 0 : i + 1) {
      bits_total += uint64_t(transform_symbol_low_bits(row_symbols[j], plan.classes[i]));  // component i = j mod kept
      escapes_total += row_symbols[j] == kTransformEscape ? 1 : 0;
    }
  }
  p.check_totals(bits_total, escapes_total);
  // Stage 3.
  std::vector<std::vector<float>> y(size_t(s.rows()));  // per row [coded][kept]
  uint64_t bit_at = 0, escape_at = 0;
  for (int r = 0; r < s.rows(); ++r) {
    const TransformRowPlan& plan = p.rows[size_t(r)];
    const uint8_t* row_symbols = symbols.data() + start[size_t(r)];
    std::vector<float>& row_y = y[size_t(r)];
    row_y.resize(size_t(coded) * size_t(plan.kept()));
    float* out = row_y.data();
    for (uint64_t j = 0, i = 0; j < p.row_symbols(r); ++j, i = i + 1 == uint64_t(plan.kept()) ? 0 : i + 1) {
      const int symbol = row_symbols[j], c = plan.classes[i];
      if (!transform_coefficient(symbol, c, p.low_bits.data(), bit_at, p.escapes.data(), escape_at, plan.step, out[j]))
        throw BitstreamError(K::kCorruptPayload, "ESCP", "escaped value out of range");
      bit_at += uint64_t(transform_symbol_low_bits(symbol, c));
      escape_at += symbol == kTransformEscape ? 1 : 0;
    }
  }

  // Stage 4: sinks from fp16, the rest mu_r + y W_r, RoPE redone on keys.
  KvCache kv(s);
  const RopeAngles angles(cal.rope(), s.head_dim, p.t0, s.tokens);
  for (int r = 0; r < s.rows(); ++r) {
    for (int t = 0; t < p.sinks; ++t)
      for (int c = 0; c < channels; ++c)
        kv.row_token(r, t)[c] = common::half_to_float(load_u16(p.sink.data() + 2 * ((size_t(r) * p.sinks + t) * channels + c)));
    if (coded == 0) continue;
    const TransformRowPlan& plan = p.rows[size_t(r)];
    const auto& row = cal.row(r);
    // transform_value's sums straight into the row's coded tokens (C floats apart in the canonical
    // layout; a row that keeps nothing sums zeros), then the mean.
    float* coded_tokens = kv.row_token(r, p.sinks);
    matrix_product(y[size_t(r)].data(), coded, plan.kept(), plan.kept(), row.synthesis_basis().data(), channels, channels,
                   coded_tokens, channels);
    for (int64_t t = 0; t < coded; ++t) {
      float* out = coded_tokens + t * channels;
      for (int c = 0; c < channels; ++c) out[c] += row.mean[size_t(c)];
      if (r < s.layers) angles.rotate(out, s.kv_heads, p.sinks + t, /*undo=*/false);
    }
  }
  return kv;
}

}  // namespace

bool transform_needs_calibration(const std::string& spec) {
  const common::Spec parsed = parse_codec_spec(spec);
  return parsed.name() == "transform" && !parsed.has("cal");
}

std::string with_calibration(const std::string& spec, const std::string& kvcal_path) {
  std::string out = "transform:cal=" + kvcal_path;
  if (const size_t colon = spec.find(':'); colon != std::string::npos) out.append(",").append(spec, colon + 1);
  return out;
}

std::vector<double> transform_spec_distortions(const common::Spec& spec) {
  spec.only({"cal", "d", "ladder", "sub"});
  spec_sub_tokens(spec);
  if (spec.has("d") && spec.has("ladder")) spec.fail("d=D and ladder=PATH both set the levels: give one");
  if (spec.has("d")) {
    const double d = spec.number("d", 0);
    if (const std::string error = transform_distortion_error(d); !error.empty()) spec.fail("d=: " + error);
    return {d};
  }
  if (spec.has("ladder")) {
    const Ladder ladder = Ladder::from_name_or_path(spec.string("ladder", ""));
    if (ladder.codec() != "transform")
      spec.fail("ladder=" + spec.string("ladder", "") + " holds CacheGen bins, not transform distortions");
    return ladder.distortions();
  }
  return {};
}

CodecEntry transform_codec_entry() {
  return {"transform", CodecId::kTransform,
          "calibrated transform codec (KVTC): per-layer PCA with RoPE undone, reverse water-filling, rANS with offline "
          "tables (options: cal=M.kvcal from kvstream calibrate; levels from the calibration's list, or ladder=PATH from "
          "kvstream calibrate-ladder, or d=D one relative distortion; sub=N tokens per rANS group, a power of two, "
          "default per row: the fewest giving each state 2,048 symbols)",
          [](const common::Spec& spec) {
            transform_spec_distortions(spec);  // the options, before the calibration is read
            if (!spec.has("cal")) spec.fail("needs cal=PATH, a .kvcal file written by kvstream calibrate");
            auto cal = std::make_shared<const TransformCalibration>(TransformCalibration::load(spec.string("cal", "")));
            return std::unique_ptr<Codec>(new TransformCodec(spec, std::move(cal)));
          },
          decode};
}

}  // namespace kvstream::codec
