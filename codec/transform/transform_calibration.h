// The per-model calibration of the transform codec (transform_codec.cpp; KVTC, ICLR 2026, §3): for
// every CacheGen row (K or V of one layer) a decorrelating basis fitted once on calibration text, and
// the offline rANS tables every chunk is coded with. Built by `kvstream calibrate`, stored in a
// .kvcal file and referenced from each bitstream by its 64-bit id (codec/FORMAT.md §"Transform
// calibration").
//
// Per row r (keys with RoPE undone first, rope.h; positions below `sink_tokens` left out, the codec
// keeps those tokens in fp16):
//   mean      mu_r[C]
//   basis     W_r[C][C], row i = principal component i (unit length), by variance, largest first;
//             for keys weighed by the queries (Options::key_metrics) the analysis U^T P instead, with
//             a synthesis U^T P^(-1) beside it (Row::synthesis)
//   variance  lambda_r[C], the variance along each component on the calibration text
// Coding a component whose coefficient y has standard deviation sigma with quantizer step Delta
// depends only on r = sigma / Delta. The codec rounds r to a *class* c on a grid of quarter octaves,
// r_c = 2^((c - 8) / 4), c = 0 .. kTransformClasses - 1, and codes q = round(y / Delta) as
//   hi = q >> k_c (floor), k_c = max(0, ceil((c - 20) / 4)), so hi has a standard deviation <= ~8,
//   lo = q - (hi << k_c), k_c raw bits;
// hi + 32 is a rANS symbol when hi lies in [-32, 30], else the escape symbol 63 and q goes raw.
// The table of class c (per part, K or V) is the histogram of hi when the calibration's pooled
// normalised coefficients y / sigma are scaled by r_c: one shape per part learned from the model,
// no table per chunk. Everything the decoder derives from the calibration (steps, kept components,
// classes) uses only IEEE-exact arithmetic (+ - * / sqrt, comparisons), so it is the same on every
// machine.
#pragma once
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "codec/entropy/rans_coder.h"
#include "codec/kv_cache.h"
#include "codec/transform/rope.h"
#include "codec/transform/transform_decode_stages.h"

namespace kvstream::codec {

// kTransformClasses, kTransformAlphabet, kTransformEscape and transform_low_bits(c) are in
// transform_decode_stages.h, which the GPU decoder shares.
inline constexpr int kTransformMaxLevels = 32;

class TransformCalibration {
 public:
  struct Row {
    std::vector<float> mean;      // [C]
    std::vector<float> basis;     // [C][C], component-major: the analysis, y_i = basis_i . (x - mean)
    // The synthesis, x = mean + sum_i y_i synthesis_i, [C][C]; empty where the basis is orthonormal
    // and is its own synthesis (synthesis_basis()). Keys weighed by the queries have one (below).
    std::vector<float> synthesis;
    std::vector<float> variance;  // [C], descending
    double mean_variance = 0;     // sum(variance) / C, in the order the file stores them
    // How much of the ladder's distortion this row takes (1 = its share relative to its variance):
    // rows the model is less sensitive to take more (set_row_weights; eval/kv_sensitivity.h).
    double weight = 1.0;

    const std::vector<float>& synthesis_basis() const { return synthesis.empty() ? basis : synthesis; }
  };

  struct Options {
    std::string model;                    // the model fitted (required): codecs check it (check_codec_model)
    RopeSpec rope;                        // how the model turned its keys
    int sink_tokens = 4;                  // positions kept in fp16 by the codec
    std::vector<double> level_distortions = {0.5, 0.3, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001, 3e-4, 1e-4};
    // Keys weighed by the queries: per layer a C x C metric M (row-major, symmetric, positive
    // semidefinite; eval/key_sensitivity.h), or empty for the plain PCA of the keys. With one, K row
    // r is fitted in the coordinates z = P (x - mean), P = M'^(1/2), M' = M scaled to mean eigenvalue
    // 1 plus key_metric_floor times the identity, then scaled back to mean eigenvalue 1: the basis is
    // the analysis U^T P and the synthesis U^T P^(-1), U the principal components of z, so that equal
    // error on every component is the least e^T M e for its bytes (reverse water-filling in z).
    std::vector<std::vector<double>> key_metrics;
    double key_metric_floor = 0.1;
  };

  // Fits every row on the tokens of `contexts` (each a whole context, its first token at position
  // 0). Throws std::invalid_argument for contexts of different shapes, an odd head_dim with RoPE,
  // too few tokens (fewer than C + 1 beyond the sinks), a bad level list, or key metrics of another
  // count or size than L x C^2, not finite, or with no positive trace, or a floor outside (0, 1].
  static TransformCalibration build(const std::vector<KvChunkView>& contexts, const Options& options);
  // load and parse check everything a decoder and encoder rely on, and throw std::runtime_error
  // naming the file and what is wrong: the CRC, the shape (H * D computed without overflow), a model
  // name, levels (transform_distortion.h), row weights, finite values, descending variances, a basis
  // that is orthonormal within 1e-3 (unit rows and, by random probes, W^T W = I), or for a row with
  // a synthesis, synthesis^T basis = I within 1e-3 (by probes), and valid CDFs.
  static TransformCalibration load(const std::filesystem::path& path);
  void save(const std::filesystem::path& path) const;                   // atomic (temp file + rename)
  std::vector<uint8_t> serialize() const;
  static TransformCalibration parse(std::span<const uint8_t> bytes, const std::string& where);

  uint64_t id() const { return id_; }
  const std::string& model() const { return model_; }
  int layers() const { return layers_; }
  int kv_heads() const { return kv_heads_; }
  int head_dim() const { return head_dim_; }
  int channels() const { return kv_heads_ * head_dim_; }
  const RopeSpec& rope() const { return rope_; }
  int sink_tokens() const { return sink_tokens_; }
  // Relative distortion targets of the ladder, lowest quality (largest) first: level i + 1 has
  // Delta_r^2 / 12 = level_distortions[i] * weight_r * mean_variance_r (the same error on every
  // component of a row: reverse water-filling within a row; across rows as the weights say).
  const std::vector<double>& level_distortions() const { return level_distortions_; }
  const Row& row(int r) const { return rows_[size_t(r)]; }
  // CDF of class c for part p (0 = K, 1 = V): kTransformAlphabet + 1 entries; and its lookup.
  const uint16_t* cdf(int part, int c) const {
    return cdf_.data() + (size_t(part) * kTransformClasses + size_t(c)) * (kTransformAlphabet + 1);
  }
  const RansSymbolLookup& lookup(int part, int c) const { return lookups_[size_t(part) * kTransformClasses + size_t(c)]; }

  // Sets every row's weight (2L values in [kMinRowWeight, kMaxRowWeight]; throws
  // std::invalid_argument otherwise); the id changes with them.
  void set_row_weights(const std::vector<double>& weights);
  static constexpr double kMinRowWeight = 1.0 / 64, kMaxRowWeight = 64;

  // The quantizer step of row r at relative distortion d.
  double step(int r, double d) const;
  // The class of each component of row r at step `step`, -1 for a dropped component (variance <=
  // step^2 / 12: reverse water-filling reconstructs it as the mean). The kept components are a
  // prefix (variances descend), padded to a multiple of 8 where C allows (the AVX2 rANS decoder).
  std::vector<int> classes(int r, double step) const;

 private:
  void derive();  // mean variances and lookups from the fields
  void finish();  // derive(), then the id of the serialized fields

  std::string model_;
  int layers_ = 0, kv_heads_ = 0, head_dim_ = 0;
  RopeSpec rope_;
  int sink_tokens_ = 0;
  std::vector<double> level_distortions_;
  std::vector<Row> rows_;         // 2L, CacheGen row order
  std::vector<uint16_t> cdf_;     // [2][kTransformClasses][kTransformAlphabet + 1]
  std::vector<RansSymbolLookup> lookups_;
  uint64_t id_ = 0;
};

}  // namespace kvstream::codec
