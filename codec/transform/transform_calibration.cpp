#include "codec/transform/transform_calibration.h"

#include <Eigen/Dense>
#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <numbers>
#include <span>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "codec/entropy/cdf.h"
#include "codec/format/bitstream.h"
#include "codec/format/byte_io.h"
#include "codec/format/crc32c.h"
#include "codec/transform/transform_distortion.h"
#include "common/atomic_file.h"
#include "common/file_text.h"

namespace kvstream::codec {
namespace {

constexpr uint8_t kMagic[4] = {'K', 'V', 'C', 'L'};
// Version 1: every basis orthonormal; version 2 (written only when a row has one): a synthesis basis
// per row, flagged.
constexpr uint16_t kOrthonormalVersion = 1, kSynthesisVersion = 2;
constexpr int kMaxCalibrationChannels = 8192;
constexpr size_t kMaxPooledSamples = size_t(1) << 20;  // about this many per part, for the class tables

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// 2^(e/4) with IEEE-exact operations only (sqrt, *, ldexp), so every machine gets the same bits.
double pow2_quarter(int e) {
  const double q1 = std::sqrt(std::sqrt(2.0)), q2 = std::sqrt(2.0);
  const double fraction[4] = {1.0, q1, q2, q1 * q2};
  return std::ldexp(fraction[e & 3], e >> 2);  // e >> 2 floors for negative e (C++20)
}

// r_c^2 = 2^((c - 8) / 2); class c is the nearest grid point in log: r^2 >= 2^((2c - 15) / 4)
// for each class boundary below it.
int class_of(double r_squared) {
  int c = 0;
  while (c + 1 < kTransformClasses && r_squared >= pow2_quarter(2 * c - 15)) ++c;
  return c;
}

double class_ratio(int c) { return pow2_quarter(c - 8); }  // r_c

void put_f32(ByteWriter& w, float v) { w.put<uint32_t>(std::bit_cast<uint32_t>(v)); }
void put_f64(ByteWriter& w, double v) { w.put<uint64_t>(std::bit_cast<uint64_t>(v)); }
double get_f64(ByteReader& r) { return std::bit_cast<double>(r.get<uint64_t>()); }

void check_levels(const std::vector<double>& levels, const std::function<void(const std::string&)>& fail) {
  if (levels.empty() || levels.size() > size_t(kTransformMaxLevels))
    fail("needs 1 to " + std::to_string(kTransformMaxLevels) + " levels, has " + std::to_string(levels.size()));
  for (size_t i = 0; i < levels.size(); ++i) {
    if (const std::string error = transform_distortion_error(levels[i]); !error.empty())
      fail("level " + std::to_string(i + 1) + ": " + error);
    if (i > 0 && !(levels[i] < levels[i - 1]))
      fail("level distortions must decrease (lowest quality first), level " + std::to_string(i + 1) + " does not");
  }
}

// How far a row's synthesis S is from inverting its analysis W (both C x C, component-major; S = W
// for an orthonormal basis), as a decoder feels it: the largest of |S^T W v - v| / |v| over
// kBasisProbes Gaussian probes v, each an estimate of the RMS singular value of S^T W - I (its
// Frobenius norm over sqrt(C)), i.e. the relative error a random vector picks up when projected and
// reconstructed. O(C^2) per probe, where the Gram matrix would cost O(C^3). The probes are drawn
// from the file's own bytes, so the verdict is deterministic. An orthonormal basis stored as floats
// measures about 1e-7 sqrt(C); a basis of identical unit rows about sqrt(C).
constexpr int kBasisProbes = 4;
constexpr double kBasisTolerance = 1e-3;

double reconstruction_error(const std::vector<float>& basis, const std::vector<float>& synthesis, int channels,
                            std::span<const uint8_t> file) {
  uint64_t state = file_fingerprint(file);
  const auto uniform = [&state] {  // splitmix64, to (0, 1)
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return (double((z ^ (z >> 31)) >> 11) + 0.5) * 0x1p-53;
  };
  const auto c = size_t(channels);
  std::vector<double> v(c), wv(c), back(c);
  double worst = 0;
  for (int probe = 0; probe < kBasisProbes; ++probe) {
    for (auto& x : v) x = std::sqrt(-2 * std::log(uniform())) * std::cos(2 * std::numbers::pi * uniform());  // Box-Muller
    for (size_t i = 0; i < c; ++i) {  // W v
      double sum = 0;
      for (size_t k = 0; k < c; ++k) sum += double(basis[i * c + k]) * v[k];
      wv[i] = sum;
    }
    std::fill(back.begin(), back.end(), 0.0);
    for (size_t i = 0; i < c; ++i)  // S^T (W v)
      for (size_t k = 0; k < c; ++k) back[k] += double(synthesis[i * c + k]) * wv[i];
    double diff = 0, norm = 0;
    for (size_t k = 0; k < c; ++k) {
      diff += (back[k] - v[k]) * (back[k] - v[k]);
      norm += v[k] * v[k];
    }
    worst = std::max(worst, std::sqrt(diff / norm));
  }
  return worst;
}

// The tokens of row r of every context (positions >= sinks), keys with RoPE undone: [N][C].
RowMajor gather_row(const std::vector<KvChunkView>& contexts, int r, int sinks, const RopeSpec& rope) {
  const KvShape s = contexts.front().shape();
  int64_t n = 0;
  for (const auto& c : contexts) n += std::max<int64_t>(0, c.t1() - std::max<int64_t>(c.t0(), sinks));
  RowMajor x(n, s.channels());
  int64_t at = 0;
  for (const auto& c : contexts) {
    const RopeAngles angles(r < s.layers ? rope : RopeSpec{}, s.head_dim, c.t0(), c.shape().tokens);
    for (int64_t t = 0; t < c.shape().tokens; ++t) {
      if (c.t0() + t < sinks) continue;
      float* out = x.row(at++).data();
      std::copy_n(c.token(r, t), s.channels(), out);
      angles.rotate(out, s.kv_heads, t, /*undo=*/true);
    }
  }
  return x;
}

// P = M'^(1/2) and P^(-1) of a key metric (Options::key_metrics): M' = (M / m + floor I) / (1 + floor),
// m = trace(M) / C, so M' has mean eigenvalue 1 and none below floor / (1 + floor): the synthesis
// stays bounded along directions the calibration's queries never read.
std::pair<Eigen::MatrixXd, Eigen::MatrixXd> metric_roots(const std::vector<double>& metric, int channels, double floor,
                                                         const std::function<void(const std::string&)>& fail) {
  const Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> raw(metric.data(), channels,
                                                                                                       channels);
  Eigen::MatrixXd m = (raw + raw.transpose()) / 2;
  m = (m / (m.trace() / channels) + floor * Eigen::MatrixXd::Identity(channels, channels)) / (1 + floor);
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen(m);
  if (eigen.info() != Eigen::Success) fail("a key metric's eigen-decomposition failed");
  const Eigen::VectorXd lambda = eigen.eigenvalues().cwiseMax(floor / (1 + floor));
  const Eigen::MatrixXd& v = eigen.eigenvectors();
  return {v * lambda.cwiseSqrt().asDiagonal() * v.transpose(), v * lambda.cwiseSqrt().cwiseInverse().asDiagonal() * v.transpose()};
}

}  // namespace

double TransformCalibration::step(int r, double d) const {
  const Row& row = rows_[size_t(r)];
  return std::sqrt(12.0 * d * row.weight * row.mean_variance);
}

void TransformCalibration::set_row_weights(const std::vector<double>& weights) {
  if (weights.size() != rows_.size())
    throw std::invalid_argument("transform calibration: " + std::to_string(weights.size()) + " row weights for " +
                                std::to_string(rows_.size()) + " rows");
  for (size_t r = 0; r < weights.size(); ++r) {
    if (!(weights[r] >= kMinRowWeight && weights[r] <= kMaxRowWeight))
      throw std::invalid_argument("transform calibration: row " + std::to_string(r) + " weight " +
                                  std::to_string(weights[r]) + " outside [1/64, 64]");
    rows_[r].weight = weights[r];
  }
  finish();
}

std::vector<int> TransformCalibration::classes(int r, double step) const {
  const auto& variance = rows_[size_t(r)].variance;
  const int channels = this->channels();
  const double noise = step * step / 12.0;
  int kept = 0;
  while (kept < channels && variance[size_t(kept)] > noise) ++kept;
  if (kept > 0 && kept % 8 != 0 && (kept / 8 + 1) * 8 <= channels) kept = (kept / 8 + 1) * 8;
  std::vector<int> out(size_t(channels), -1);
  for (int i = 0; i < kept; ++i) out[size_t(i)] = class_of(variance[size_t(i)] / (step * step));
  return out;
}

TransformCalibration TransformCalibration::build(const std::vector<KvChunkView>& contexts, const Options& options) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("transform calibration: " + what); };
  if (contexts.empty()) fail("no calibration contexts");
  const KvShape s = contexts.front().shape();
  for (const auto& c : contexts)
    if (c.shape().layers != s.layers || c.shape().kv_heads != s.kv_heads || c.shape().head_dim != s.head_dim)
      fail("contexts of different shapes (" + s.to_string() + " and " + c.shape().to_string() + ")");
  if (s.channels() > kMaxCalibrationChannels) fail("more than " + std::to_string(kMaxCalibrationChannels) + " channels");
  if (options.rope.pairs != RopePairs::kNone && (s.head_dim % 2 != 0 || !(options.rope.theta > 0)))
    fail("RoPE needs an even head_dim and theta > 0");
  if (options.sink_tokens < 0) fail("sink_tokens must be >= 0");
  if (options.model.empty()) fail("no model named (Options::model): a calibration records the model it fits");
  check_levels(options.level_distortions, fail);
  const auto metric_size = size_t(s.channels()) * size_t(s.channels());
  if (!options.key_metrics.empty()) {
    if (options.key_metrics.size() != size_t(s.layers))
      fail(std::to_string(options.key_metrics.size()) + " key metrics for " + std::to_string(s.layers) + " layers");
    for (size_t l = 0; l < options.key_metrics.size(); ++l) {
      const auto& m = options.key_metrics[l];
      if (m.size() != metric_size)
        fail("layer " + std::to_string(l) + "'s key metric has " + std::to_string(m.size()) + " entries, C^2 = " +
             std::to_string(metric_size) + " needed");
      double trace = 0;
      for (int c = 0; c < s.channels(); ++c) trace += m[size_t(c) * size_t(s.channels()) + size_t(c)];
      if (!std::all_of(m.begin(), m.end(), [](double v) { return std::isfinite(v); }) || !(trace > 0))
        fail("layer " + std::to_string(l) + "'s key metric is not finite with a positive trace");
    }
    if (!(options.key_metric_floor > 0 && options.key_metric_floor <= 1)) fail("key_metric_floor must be in (0, 1]");
  }

  TransformCalibration cal;
  cal.model_ = options.model;
  cal.layers_ = s.layers;
  cal.kv_heads_ = s.kv_heads;
  cal.head_dim_ = s.head_dim;
  cal.rope_ = options.rope;
  cal.sink_tokens_ = options.sink_tokens;
  cal.level_distortions_ = options.level_distortions;
  const int channels = s.channels();
  std::vector<float> pooled[2];  // normalised coefficients y / sigma, per part
  for (int r = 0; r < s.rows(); ++r) {
    const RowMajor x = gather_row(contexts, r, options.sink_tokens, options.rope);
    if (x.rows() <= channels)
      fail("row " + std::to_string(r) + " has " + std::to_string(x.rows()) + " calibration tokens beyond the sinks, " +
           std::to_string(channels + 1) + " needed: give more or longer calibration windows");
    const Eigen::MatrixXd xd = x.cast<double>();
    const Eigen::RowVectorXd mean = xd.colwise().mean();
    const Eigen::MatrixXd centred = xd.rowwise() - mean;
    const Eigen::MatrixXd covariance = (centred.transpose() * centred) / double(x.rows());
    const bool weighed = r < s.layers && !options.key_metrics.empty();
    Eigen::MatrixXd whiten, unwhiten;  // P and P^(-1) where the row is fitted in z = P (x - mean)
    if (weighed) std::tie(whiten, unwhiten) = metric_roots(options.key_metrics[size_t(r)], channels, options.key_metric_floor, fail);
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen(weighed ? Eigen::MatrixXd(whiten * covariance * whiten)
                                                                       : covariance);
    if (eigen.info() != Eigen::Success) fail("row " + std::to_string(r) + ": the eigen-decomposition failed");
    Row row;
    row.mean.resize(size_t(channels));
    row.variance.resize(size_t(channels));
    row.basis.resize(size_t(channels) * size_t(channels));
    if (weighed) row.synthesis.resize(row.basis.size());
    for (int c = 0; c < channels; ++c) row.mean[size_t(c)] = static_cast<float>(mean(c));
    for (int i = 0; i < channels; ++i) {  // eigenvalues ascend: component i is eigenvector C - 1 - i
      const int e = channels - 1 - i;
      row.variance[size_t(i)] = static_cast<float>(std::max(0.0, eigen.eigenvalues()(e)));
      const auto u = eigen.eigenvectors().col(e);
      const Eigen::VectorXd analysis = weighed ? Eigen::VectorXd(whiten * u) : Eigen::VectorXd(u);
      for (int c = 0; c < channels; ++c) row.basis[size_t(i) * size_t(channels) + size_t(c)] = static_cast<float>(analysis(c));
      if (!weighed) continue;
      const Eigen::VectorXd synthesis = unwhiten * u;
      for (int c = 0; c < channels; ++c) row.synthesis[size_t(i) * size_t(channels) + size_t(c)] = static_cast<float>(synthesis(c));
    }
    // Pool the normalised coefficients of the components with any variance for the class tables.
    const Eigen::Map<const RowMajor> basis(row.basis.data(), channels, channels);
    const RowMajor y = (x.rowwise() - mean.cast<float>()) * basis.transpose();
    auto& pool = pooled[r < s.layers ? 0 : 1];
    const auto per_row = std::max<size_t>(1, kMaxPooledSamples / size_t(s.layers));
    const auto token_stride = std::max<Eigen::Index>(1, Eigen::Index(size_t(y.size()) / per_row));
    for (int i = 0; i < channels; ++i) {
      const double sigma = std::sqrt(double(row.variance[size_t(i)]));
      if (!(sigma > 1e-20)) continue;
      for (Eigen::Index t = 0; t < y.rows(); t += token_stride) pool.push_back(static_cast<float>(y(t, i) / sigma));
    }
    cal.rows_.push_back(std::move(row));
  }

  // One table per (part, class): the histogram of hi over the pooled coefficients scaled by r_c.
  cal.cdf_.resize(size_t(2) * kTransformClasses * (kTransformAlphabet + 1));
  for (int part = 0; part < 2; ++part) {
    const auto& pool = pooled[part];
    for (int c = 0; c < kTransformClasses; ++c) {
      uint64_t counts[kTransformAlphabet] = {};
      const double r_c = class_ratio(c);
      const int k = transform_low_bits(c);
      for (float z : pool) {
        const auto q = static_cast<int64_t>(std::llround(double(z) * r_c));
        const int64_t hi = q >> k;
        ++counts[hi >= -32 && hi <= 30 ? hi + 32 : kTransformEscape];
      }
      build_cdf16(counts, kTransformAlphabet,
                  cal.cdf_.data() + (size_t(part) * kTransformClasses + size_t(c)) * (kTransformAlphabet + 1));
    }
  }
  cal.finish();
  return cal;
}

void TransformCalibration::derive() {
  for (auto& row : rows_) {
    double sum = 0;
    for (float v : row.variance) sum += v;
    row.mean_variance = sum / double(row.variance.size());
  }
  lookups_.assign(size_t(2) * kTransformClasses + 1, RansSymbolLookup{});  // +1: the x8 decoder's gathers read past the last
  for (int part = 0; part < 2; ++part)
    for (int c = 0; c < kTransformClasses; ++c)
      build_symbol_lookup(cdf(part, c), kTransformAlphabet, lookups_[size_t(part) * kTransformClasses + size_t(c)]);
}

void TransformCalibration::finish() {
  derive();
  const auto bytes = serialize();
  id_ = file_fingerprint(std::span(bytes).first(bytes.size() - 4));
}

std::vector<uint8_t> TransformCalibration::serialize() const {
  std::vector<uint8_t> out;
  ByteWriter w(out);
  const bool synthesis = std::any_of(rows_.begin(), rows_.end(), [](const Row& row) { return !row.synthesis.empty(); });
  w.bytes(kMagic);
  w.put<uint16_t>(synthesis ? kSynthesisVersion : kOrthonormalVersion);
  w.put<uint16_t>(static_cast<uint16_t>(model_.size()));
  w.bytes(std::span(reinterpret_cast<const uint8_t*>(model_.data()), model_.size()));
  w.put<uint16_t>(static_cast<uint16_t>(layers_));
  w.put<uint16_t>(static_cast<uint16_t>(kv_heads_));
  w.put<uint16_t>(static_cast<uint16_t>(head_dim_));
  w.put<uint8_t>(static_cast<uint8_t>(rope_.pairs));
  put_f64(w, rope_.theta);
  w.put<uint32_t>(static_cast<uint32_t>(sink_tokens_));
  w.put<uint8_t>(static_cast<uint8_t>(level_distortions_.size()));
  for (double d : level_distortions_) put_f64(w, d);
  for (const auto& row : rows_) {
    put_f64(w, row.weight);
    for (const auto* values : {&row.mean, &row.variance, &row.basis})
      for (float v : *values) put_f32(w, v);
    if (!synthesis) continue;
    w.put<uint8_t>(row.synthesis.empty() ? 0 : 1);
    for (float v : row.synthesis) put_f32(w, v);
  }
  w.u16_array(cdf_);
  w.put<uint32_t>(crc32c(out));
  return out;
}

TransformCalibration TransformCalibration::parse(std::span<const uint8_t> bytes, const std::string& where) {
  auto fail = [&](const std::string& what) { throw std::runtime_error("transform calibration " + where + ": " + what); };
  try {
    if (bytes.size() < 8 || !std::equal(kMagic, kMagic + 4, bytes.begin())) fail("not a .kvcal file (magic \"KVCL\")");
    const auto body = bytes.first(bytes.size() - 4);
    if (load_u32(bytes.data() + body.size()) != crc32c(body)) fail("CRC32C mismatch (the file is corrupt or cut)");
    ByteReader r(body, "calibration");
    r.take(4);
    const auto version = r.get<uint16_t>();
    if (version != kOrthonormalVersion && version != kSynthesisVersion)
      fail("version " + std::to_string(version) + ", this build reads versions " + std::to_string(kOrthonormalVersion) +
           " and " + std::to_string(kSynthesisVersion));
    TransformCalibration cal;
    const auto name = r.take(r.get<uint16_t>());
    cal.model_.assign(name.begin(), name.end());
    if (cal.model_.empty()) fail("names no model (kvstream calibrate records the model it fitted)");
    cal.layers_ = r.get<uint16_t>();
    cal.kv_heads_ = r.get<uint16_t>();
    cal.head_dim_ = r.get<uint16_t>();
    const int64_t wide_channels = int64_t(cal.kv_heads_) * cal.head_dim_;  // up to 65535^2: no int overflow
    if (cal.layers_ < 1 || cal.layers_ > kMaxLayers || wide_channels < 1 || wide_channels > kMaxCalibrationChannels)
      fail("bad shape L=" + std::to_string(cal.layers_) + " H=" + std::to_string(cal.kv_heads_) + " D=" +
           std::to_string(cal.head_dim_) + " (1.." + std::to_string(kMaxLayers) + " layers, 1.." +
           std::to_string(kMaxCalibrationChannels) + " channels H*D)");
    const int channels = cal.channels();
    const auto pairs = r.get<uint8_t>();
    if (pairs > static_cast<uint8_t>(RopePairs::kRotateHalf)) fail("unknown RoPE layout " + std::to_string(pairs));
    cal.rope_ = {static_cast<RopePairs>(pairs), get_f64(r)};
    if (cal.rope_.pairs != RopePairs::kNone && (cal.head_dim_ % 2 != 0 || !(cal.rope_.theta > 0 && cal.rope_.theta < 1e30)))
      fail("RoPE needs an even head_dim and a finite theta > 0");
    const auto sinks = r.get<uint32_t>();
    if (sinks > uint32_t(kMaxChunkTokens)) fail("sink_tokens " + std::to_string(sinks) + " out of range");
    cal.sink_tokens_ = static_cast<int>(sinks);
    cal.level_distortions_.resize(r.get<uint8_t>());
    for (auto& d : cal.level_distortions_) d = get_f64(r);
    check_levels(cal.level_distortions_, fail);
    // Each row is a weight and (2 + C) * C floats, in version 2 then a flag and, when it is 1, C * C
    // floats of synthesis; the reader refuses a file too short before reading.
    for (int row = 0; row < 2 * cal.layers_; ++row) {
      Row out;
      out.weight = get_f64(r);
      if (!(out.weight >= kMinRowWeight && out.weight <= kMaxRowWeight))
        fail("row " + std::to_string(row) + ": weight not in [1/64, 64]");
      const auto read_floats = [&](std::vector<float>& values, size_t n) {
        const auto raw = r.take(4 * n);
        values.resize(n);
        for (size_t i = 0; i < n; ++i) values[i] = std::bit_cast<float>(load_u32(raw.data() + 4 * i));
        for (float v : values)
          if (!std::isfinite(v)) fail("row " + std::to_string(row) + ": a value is not finite");
      };
      read_floats(out.mean, size_t(channels));
      read_floats(out.variance, size_t(channels));
      read_floats(out.basis, size_t(channels) * size_t(channels));
      if (version == kSynthesisVersion) {
        const auto flag = r.get<uint8_t>();
        if (flag > 1) fail("row " + std::to_string(row) + ": synthesis flag " + std::to_string(flag) + ", 0 or 1 expected");
        if (flag == 1) read_floats(out.synthesis, size_t(channels) * size_t(channels));
      }
      for (int i = 0; i < channels; ++i) {
        if (out.variance[size_t(i)] < 0 || (i > 0 && out.variance[size_t(i)] > out.variance[size_t(i - 1)]))
          fail("row " + std::to_string(row) + ": component variances must be >= 0 and descending");
        if (!out.synthesis.empty()) continue;
        double norm = 0;
        for (int c = 0; c < channels; ++c) norm += double(out.basis[size_t(i) * channels + c]) * out.basis[size_t(i) * channels + c];
        if (std::abs(norm - 1.0) > 1e-3)
          fail("row " + std::to_string(row) + ": component " + std::to_string(i) + " is not of unit length");
      }
      if (const double error = reconstruction_error(out.basis, out.synthesis_basis(), channels, body); error > kBasisTolerance)
        fail("row " + std::to_string(row) + (out.synthesis.empty() ? ": the basis is not orthonormal (|W^T W v - v| / |v| = "
                                                                   : ": the synthesis does not invert the basis (|S^T W v - v| / |v| = ") +
             std::to_string(error) + " for a random v, more than " + std::to_string(kBasisTolerance) + ")");
      cal.rows_.push_back(std::move(out));
    }
    const size_t entries = size_t(2) * kTransformClasses * (kTransformAlphabet + 1);
    const auto raw = r.take(2 * entries);
    cal.cdf_.resize(entries);
    for (size_t i = 0; i < entries; ++i) cal.cdf_[i] = load_u16(raw.data() + 2 * i);
    for (int part = 0; part < 2; ++part)
      for (int c = 0; c < kTransformClasses; ++c)
        if (!cdf16_is_valid(cal.cdf(part, c), kTransformAlphabet))
          fail("the rANS table of class " + std::to_string(c) + (part ? " (V)" : " (K)") + " is not a valid CDF");
    if (r.remaining() != 0) fail(std::to_string(r.remaining()) + " trailing bytes");
    cal.derive();
    cal.id_ = file_fingerprint(body);  // the bytes just read: no need to serialize them again
    return cal;
  } catch (const BitstreamError& e) {
    fail(e.what());
  }
  return {};
}

TransformCalibration TransformCalibration::load(const std::filesystem::path& path) {
  const auto text = common::read_file_if_open(path);
  if (!text) throw std::runtime_error("cannot open transform calibration " + path.string());
  return parse(std::span(reinterpret_cast<const uint8_t*>(text->data()), text->size()), path.string());
}

void TransformCalibration::save(const std::filesystem::path& path) const {
  const auto bytes = serialize();
  common::write_file_atomically(path, [&](std::ostream& out) {
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  });
}

}  // namespace kvstream::codec
