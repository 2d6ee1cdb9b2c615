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
//      low bits, or escaped (transform_calibration.h).
// Decode inverts it: x = mu_r + sum_i q_i Delta_r W_r[i], RoPE redone. Invariant: the error of a
// token is the projection residual of the dropped components plus at most Delta_r / 2 per kept one.
//
// Sections (codec/FORMAT.md §"transform"):
//   TPRM  calibration id u64 | d f64 | sink tokens in this chunk u32
//   SINK  fp16 [2L][sinks][C], CacheGen row order
//   GRPS  u32 [2L]: bytes of each row's rANS group (8 interleaved states, rans_coder.h)
//   RANS  the groups, row by row; symbols in (token, component) order
//   LOWB  the low bits of every non-escaped q in that order, LSB first, k_c bits each
//   ESCP  int32 [escapes]: the escaped q in that order
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "codec/byte_io.h"
#include "codec/codec.h"
#include "codec/half.h"
#include "codec/ladder.h"
#include "codec/rans_decode_x8.h"
#include "codec/transform_calibration.h"
#include "common/content_hash.h"

namespace kvstream::codec {
namespace {

using K = BitstreamErrorKind;
using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

constexpr int kStates = 8;
constexpr int64_t kMaxQ = int64_t(1) << 30;  // |q| is clamped here: only an absurd input value reaches it

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

class BitReader {
 public:
  explicit BitReader(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  uint32_t get(int bits) {  // bits <= 24
    while (filled_ < bits) {
      if (pos_ >= bytes_.size()) throw BitstreamError(K::kTruncated, "LOWB", "fewer low bits than the symbols need");
      buffer_ |= uint64_t(bytes_[pos_++]) << filled_;
      filled_ += 8;
    }
    const auto value = static_cast<uint32_t>(buffer_ & ((uint64_t(1) << bits) - 1));
    buffer_ >>= bits;
    filled_ -= bits;
    return value;
  }
  // All bytes used, and the unused bits of the last one zero (what the writer leaves).
  bool exhausted() const { return pos_ == bytes_.size() && buffer_ == 0; }

 private:
  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
  uint64_t buffer_ = 0;
  int filled_ = 0;
};

// The kept components of a row at one step: their classes (a prefix of the components) and the
// rANS tables in component order.
struct RowPlan {
  double step = 0;
  std::vector<int> classes;  // kept components only
  std::vector<uint16_t> cdf;  // [kept][kTransformAlphabet + 1]

  RowPlan(const TransformCalibration& cal, int row, double d) : step(cal.step(row, d)) {
    for (int c : cal.classes(row, step))
      if (c >= 0) classes.push_back(c);
    const int part = row < cal.layers() ? 0 : 1;
    cdf.reserve(classes.size() * (kTransformAlphabet + 1));
    for (int c : classes) cdf.insert(cdf.end(), cal.cdf(part, c), cal.cdf(part, c) + kTransformAlphabet + 1);
  }
  int kept() const { return static_cast<int>(classes.size()); }
};

int sinks_in_chunk(const TransformCalibration& cal, int64_t t0, int64_t tokens) {
  return static_cast<int>(std::clamp<int64_t>(cal.sink_tokens() - t0, 0, tokens));
}

// A row whose components are all dropped decodes to its mean at no bytes per token, so a transform
// chunk's decoded size is not bounded by its payload as every other codec's is. The token count is
// capped instead (FORMAT.md §3a), so that a small bitstream cannot demand gigabytes: 2^16 tokens is
// dozens of CacheGen-sized chunks (1.5 K tokens) and longer than most contexts.
constexpr int64_t kMaxTransformChunkTokens = int64_t(1) << 16;

void check_shape(const TransformCalibration& cal, const KvShape& s, const std::string& what) {
  if (s.tokens > kMaxTransformChunkTokens)
    throw std::invalid_argument(what + " has " + std::to_string(s.tokens) + " tokens, more than the transform codec's " +
                                std::to_string(kMaxTransformChunkTokens) + " per chunk (use smaller chunks)");
  if (s.layers != cal.layers() || s.kv_heads != cal.kv_heads() || s.head_dim != cal.head_dim())
    throw std::invalid_argument(what + " has shape " + s.to_string() + ", the transform calibration (model \"" +
                                cal.model() + "\") is for L=" + std::to_string(cal.layers()) +
                                " H=" + std::to_string(cal.kv_heads()) + " D=" + std::to_string(cal.head_dim()));
}

class TransformCodec final : public Codec {
 public:
  TransformCodec(const common::Spec& spec, std::shared_ptr<const TransformCalibration> cal)
      : spec_(spec.canonical()), cal_(std::move(cal)), distortions_(transform_spec_distortions(spec)) {
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
  // The calibration's id and the levels' distortions (from d=, a ladder file or the calibration).
  std::string content_id() const override {
    std::string id = "cal=" + common::hex64(cal_->id()) + ",d=";
    char number[32];
    for (size_t i = 0; i < distortions_.size(); ++i) {
      std::snprintf(number, sizeof number, "%s%.17g", i ? "/" : "", distortions_[i]);
      id += number;
    }
    return id;
  }
  std::string entropy_coder() const override { return "rans"; }

  std::vector<uint8_t> encode(const KvChunkView& chunk, int level, int64_t t0, SourceDtype source_dtype) const override {
    if (level < 1 || level > static_cast<int>(distortions_.size()))
      throw std::invalid_argument("codec " + spec_ + " has levels 1.." + std::to_string(distortions_.size()) +
                                  ", asked for level " + std::to_string(level));
    const KvShape s = chunk.shape();
    check_shape(*cal_, s, "the chunk");
    const double d = distortions_[size_t(level - 1)];
    const int channels = s.channels();
    const int sinks = sinks_in_chunk(*cal_, t0, s.tokens);
    const int64_t coded = s.tokens - sinks;
    const RopeAngles angles(cal_->rope(), s.head_dim, t0, s.tokens);

    std::vector<uint8_t> tprm, sink, grps, rans, escp;
    ByteWriter(tprm).put<uint64_t>(cal_->id());
    ByteWriter(tprm).put<uint64_t>(std::bit_cast<uint64_t>(d));
    ByteWriter(tprm).put<uint32_t>(static_cast<uint32_t>(sinks));
    BitWriter low_bits;
    std::vector<uint8_t> symbols, group;
    RowMajor x(coded, channels);
    for (int r = 0; r < s.rows(); ++r) {
      for (int t = 0; t < sinks; ++t)
        for (int c = 0; c < channels; ++c) ByteWriter(sink).put<uint16_t>(float_to_half(chunk.token(r, t)[c]));
      const RowPlan plan(*cal_, r, d);
      const auto& row = cal_->row(r);
      for (int64_t t = 0; t < coded; ++t) {
        float* out = x.row(t).data();
        std::copy_n(chunk.token(r, sinks + t), channels, out);
        if (r < s.layers) angles.rotate(out, s.kv_heads, sinks + t, /*undo=*/true);
        for (int c = 0; c < channels; ++c) out[c] -= row.mean[size_t(c)];
      }
      const Eigen::Map<const RowMajor> basis(row.basis.data(), plan.kept(), channels);
      const RowMajor y = x * basis.transpose();  // [coded][kept]
      symbols.resize(size_t(coded) * size_t(plan.kept()));
      for (int64_t t = 0; t < coded; ++t)
        for (int i = 0; i < plan.kept(); ++i) {
          const double scaled = std::nearbyint(double(y(t, i)) / plan.step);
          const auto q = static_cast<int64_t>(std::clamp<double>(scaled, -double(kMaxQ), double(kMaxQ)));
          const int k = transform_low_bits(plan.classes[size_t(i)]);
          const int64_t hi = q >> k;
          auto& symbol = symbols[size_t(t) * size_t(plan.kept()) + size_t(i)];
          if (hi >= -32 && hi <= 30) {
            symbol = static_cast<uint8_t>(hi + 32);
            if (k > 0) low_bits.put(static_cast<uint32_t>(q - (hi << k)), k);
          } else {
            symbol = kTransformEscape;
            ByteWriter(escp).put<uint32_t>(static_cast<uint32_t>(static_cast<int32_t>(q)));
          }
        }
      const auto n = static_cast<uint32_t>(symbols.size());
      group.resize(rans_group_capacity(n, kStates));
      const uint32_t bytes = plan.kept() == 0 ? 0
                                              : rans_encode_group(symbols.data(), n, plan.kept(), plan.cdf.data(),
                                                                  kTransformAlphabet, kStates, group.data());
      ByteWriter(grps).put<uint32_t>(bytes);
      rans.insert(rans.end(), group.begin(), group.begin() + bytes);
    }
    BitstreamHeader header{CodecId::kTransform, s, t0, source_dtype};
    return write_bitstream(header, {Section{section_tag("TPRM"), std::move(tprm)}, Section{section_tag("SINK"), std::move(sink)},
                                    Section{section_tag("GRPS"), std::move(grps)}, Section{section_tag("RANS"), std::move(rans)},
                                    Section{section_tag("LOWB"), low_bits.finish()},
                                    Section{section_tag("ESCP"), std::move(escp)}});
  }

 private:
  std::string spec_;
  std::shared_ptr<const TransformCalibration> cal_;
  std::vector<double> distortions_;  // per level, lowest quality first
};

const TransformCalibration& find_calibration(const DecodeContext& context, uint64_t id) {
  for (const auto& cal : context.transform_calibrations)
    if (cal && cal->id() == id) return *cal;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(id));
  throw BitstreamError(K::kMissingCdfTable, "TPRM",
                       std::string("transform calibration id ") + hex + " (pass its .kvcal with --calibration)");
}

KvCache decode(const ParsedBitstream& parsed, const DecodeContext& context) {
  const KvShape& s = parsed.header.shape;
  ByteReader tprm(parsed.section_of_size("TPRM", 20), "TPRM");
  const TransformCalibration& cal = find_calibration(context, tprm.get<uint64_t>());
  const double d = std::bit_cast<double>(tprm.get<uint64_t>());
  const uint32_t sinks = tprm.get<uint32_t>();
  try {
    check_shape(cal, s, "the bitstream");
  } catch (const std::invalid_argument& e) {
    throw BitstreamError(K::kBadLevelSpec, "TPRM", e.what());
  }
  if (!(d > 0 && d <= 1)) throw BitstreamError(K::kBadLevelSpec, "TPRM", "distortion " + std::to_string(d) + " not in (0, 1]");
  if (int64_t(sinks) != sinks_in_chunk(cal, parsed.header.t0, s.tokens))
    throw BitstreamError(K::kBadLevelSpec, "TPRM", "sink tokens " + std::to_string(sinks) + " differ from the calibration's");
  const int channels = s.channels();
  const int64_t coded = s.tokens - sinks;
  const auto sink = parsed.section_of_size("SINK", uint64_t(2) * s.rows() * sinks * channels);
  const auto grps = parsed.section_of_size("GRPS", uint64_t(4) * s.rows());
  const auto rans = parsed.section("RANS");
  const auto escp = parsed.section("ESCP");
  if (escp.size() % 4 != 0) throw BitstreamError(K::kBadSection, "ESCP", "size not a multiple of 4");
  BitReader low_bits(parsed.section("LOWB"));
  const RopeAngles angles(cal.rope(), s.head_dim, parsed.header.t0, s.tokens);
  const bool x8 = rans_x8_available();

  KvCache kv(s);
  size_t rans_at = 0, escape_at = 0;
  std::vector<uint8_t> symbols;
  std::vector<RansSymbolLookup> lookups;
  for (int r = 0; r < s.rows(); ++r) {
    for (uint32_t t = 0; t < sinks; ++t)
      for (int c = 0; c < channels; ++c)
        kv.row_token(r, t)[c] = half_to_float(load_u16(sink.data() + 2 * ((size_t(r) * sinks + t) * channels + c)));
    const RowPlan plan(cal, r, d);
    const auto& row = cal.row(r);
    const uint32_t bytes = load_u32(grps.data() + 4 * size_t(r));
    if (bytes > rans.size() - rans_at)
      throw BitstreamError(K::kBadSection, "GRPS", "row " + std::to_string(r) + "'s group runs past the RANS section");
    const auto n = static_cast<uint32_t>(coded * plan.kept());
    symbols.resize(n);
    if (plan.kept() > 0) {
      const int part = r < s.layers ? 0 : 1;
      lookups.resize(size_t(plan.kept()) + 1);  // +1: the x8 gathers read past the last entry
      for (int i = 0; i < plan.kept(); ++i) lookups[size_t(i)] = cal.lookup(part, plan.classes[size_t(i)]);
      const uint8_t* in = rans.data() + rans_at;
      const bool ok = x8 && plan.kept() % 8 == 0
                          ? rans_decode_group_x8(in, bytes, n, plan.kept(), plan.cdf.data(), lookups.data(),
                                                 kTransformAlphabet, symbols.data())
                          : rans_decode_group(in, bytes, n, plan.kept(), plan.cdf.data(), lookups.data(),
                                              kTransformAlphabet, kStates, symbols.data());
      if (!ok) throw BitstreamError(K::kCorruptPayload, "RANS", "row " + std::to_string(r) + "'s rANS group is corrupt");
    } else if (bytes != 0) {
      throw BitstreamError(K::kCorruptPayload, "GRPS", "row " + std::to_string(r) + " keeps no component but has a group");
    }
    rans_at += bytes;

    RowMajor y(coded, plan.kept());
    for (int64_t t = 0; t < coded; ++t)
      for (int i = 0; i < plan.kept(); ++i) {
        const int symbol = symbols[size_t(t) * size_t(plan.kept()) + size_t(i)];
        int64_t q;
        if (symbol == kTransformEscape) {
          if (escape_at + 4 > escp.size()) throw BitstreamError(K::kTruncated, "ESCP", "fewer escapes than the symbols need");
          q = static_cast<int32_t>(load_u32(escp.data() + escape_at));
          escape_at += 4;
          if (q < -kMaxQ || q > kMaxQ) throw BitstreamError(K::kCorruptPayload, "ESCP", "escaped value out of range");
        } else {
          const int k = transform_low_bits(plan.classes[size_t(i)]);
          q = (int64_t(symbol - 32) << k) + (k > 0 ? int64_t(low_bits.get(k)) : 0);
        }
        y(t, i) = static_cast<float>(double(q) * plan.step);
      }
    const Eigen::Map<const RowMajor> basis(row.basis.data(), plan.kept(), channels);
    RowMajor x(coded, channels);
    if (plan.kept() > 0) x.noalias() = y * basis;
    else x.setZero();
    for (int64_t t = 0; t < coded; ++t) {
      float* out = kv.row_token(r, sinks + t);
      for (int c = 0; c < channels; ++c) out[c] = x(t, c) + row.mean[size_t(c)];
      if (r < s.layers) angles.rotate(out, s.kv_heads, sinks + t, /*undo=*/false);
    }
  }
  if (rans_at != rans.size()) throw BitstreamError(K::kBadSection, "RANS", "bytes left after the last row's group");
  if (escape_at != escp.size()) throw BitstreamError(K::kBadSection, "ESCP", "escapes left after the last symbol");
  if (!low_bits.exhausted()) throw BitstreamError(K::kBadSection, "LOWB", "low bits left after the last symbol");
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
  spec.only({"cal", "d", "ladder"});
  if (spec.has("d") && spec.has("ladder")) spec.fail("d=D and ladder=PATH both set the levels: give one");
  if (spec.has("d")) {
    const double d = spec.number("d", 0);
    if (!(d > 0 && d <= 1)) spec.fail("d (the relative distortion) must be in (0, 1]");
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
          "kvstream calibrate-ladder, or d=D one relative distortion)",
          [](const common::Spec& spec) {
            transform_spec_distortions(spec);  // the options, before the calibration is read
            if (!spec.has("cal")) spec.fail("needs cal=PATH, a .kvcal file written by kvstream calibrate");
            auto cal = std::make_shared<const TransformCalibration>(TransformCalibration::load(spec.string("cal", "")));
            return std::unique_ptr<Codec>(new TransformCodec(spec, std::move(cal)));
          },
          decode};
}

}  // namespace kvstream::codec
