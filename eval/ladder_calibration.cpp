#include "eval/ladder_calibration.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "codec/cachegen/cachegen_payload.h"
#include "codec/codec.h"
#include "codec/format/bitstream.h"
#include "codec/transform/transform_distortion.h"
#include "common/scratch_dir.h"
#include "eval/kv_sensitivity.h"
#include "eval/text_windows.h"

namespace kvstream::eval {
namespace {

// The bin counts each row's rate and distortion are measured at (a factor of about 2^(1/4) apart,
// kMinBins to kMaxBins); a level's rows take bins from these.
constexpr std::array<int, 17> kGridBins = {4, 5, 6, 7, 8, 10, 11, 13, 16, 19, 23, 27, 32, 38, 45, 54, 64};
static_assert(kGridBins.front() == codec::kMinBins && kGridBins.back() == codec::kMaxBins);
constexpr int kFedTokens = 32;  // row_decode_error_kl: tokens fed after each sensitivity window's prefix

// The ladder's JSON ranges of per-layer bins: consecutive equal bins merged.
nlohmann::json ranges_of(const std::vector<int>& bins) {
  nlohmann::json ranges = nlohmann::json::array();
  for (size_t l = 0; l < bins.size(); ++l)
    if (l + 1 == bins.size() || bins[l + 1] != bins[l]) ranges.push_back({{"until", l + 1}, {"bins", bins[l]}});
  return ranges;
}

nlohmann::json cachegen_ladder_json(const std::string& name, const std::vector<codec::LevelSpec>& levels) {
  nlohmann::json j = {{"name", name}, {"codec", "cachegen"}, {"layers", levels.front().layers()}, {"layer_rule", "exact"}};
  for (const auto& level : levels)
    j["levels"].push_back({{"level", level.level}, {"key", ranges_of(level.key_bins)}, {"value", ranges_of(level.value_bins)}});
  return j;
}

// Writes `j` as a ladder file in the scratch folder; returns its path.
std::string write_ladder(const common::ScratchDir& scratch, const std::string& file, const nlohmann::json& j) {
  const auto path = scratch.file(file);
  std::ofstream(path) << j.dump(1) << "\n";
  return path.string();
}

std::string with_option(const std::string& spec, const std::string& option) {
  return spec + (spec.find(':') == std::string::npos ? ":" : ",") + option;
}

// The knob whose level lands on `target` KL: a secant search on log KL over log x, its first step
// with slope 1 (KL proportional to x), the slope of later steps kept in [0.25, 4]; the probe closest
// to the target (in log) wins.
template <typename Measure>
CalibratedLevel search_knob(double target, double x0, double x_min, double x_max, int max_probes, double tolerance,
                            Measure&& measure) {
  CalibratedLevel best;
  double best_error = INFINITY;
  double x = std::clamp(x0, x_min, x_max), last_log_x = NAN, last_log_kl = NAN, slope = 1.0;
  for (int probe = 1; probe <= max_probes; ++probe) {
    CalibratedLevel candidate = measure(x);
    candidate.knob = x;
    const double kl = std::max(candidate.measured.kl_mean, 1e-12);
    const double error = std::abs(std::log(kl / target));
    if (error < best_error) {
      best_error = error;
      best = candidate;
    }
    best.probes = probe;
    if (std::abs(kl / target - 1) <= tolerance) break;
    const double log_x = std::log(x), log_kl = std::log(kl);
    if (!std::isnan(last_log_x) && std::abs(log_x - last_log_x) > 1e-9)
      slope = std::clamp((log_kl - last_log_kl) / (log_x - last_log_x), 0.25, 4.0);
    last_log_x = log_x;
    last_log_kl = log_kl;
    const double next = std::clamp(std::exp(log_x + std::log(target / kl) / slope), x_min, x_max);
    if (std::abs(next / x - 1) < 1e-6) break;  // pinned at the knob's end
    x = next;
  }
  return best;
}

// Each row's measured rate-distortion curve on the sensitivity windows: at every bin count of
// kGridBins (all rows at once), the bytes its bins cost (its streams and its CDF_ entries:
// codec::row_coded_bytes) and the KL its own decode error adds
// when it alone carries it. A row's KL is made non-increasing in bins (measurement noise aside,
// finer bins never hurt).
struct RowCurves {
  std::vector<std::vector<double>> bytes, kl;  // [row][grid point]
};

RowCurves measure_row_curves(const models::LoadedModel& model, const LadderCalibrationOptions& o,
                             const common::ScratchDir& scratch) {
  const TextWindows text{o.windows.text_path, std::max(o.sensitivity_windows, 1), o.windows.context_tokens,
                         o.windows.window_chars, o.windows.stride_chars, o.windows.first_char};
  const WindowKv windows = window_kv(model, text);
  const int layers = windows.kv.front().shape().layers, rows = 2 * layers;
  RowCurves curves{std::vector<std::vector<double>>(size_t(rows)), std::vector<std::vector<double>>(size_t(rows))};
  for (int bins : kGridBins) {
    const codec::LevelSpec uniform{1, std::vector<int>(size_t(layers), bins), std::vector<int>(size_t(layers), bins)};
    const auto ladder = write_ladder(scratch, "grid.json", cachegen_ladder_json("grid", {uniform}));
    const auto codec = codec::make_codec(with_option(o.codec, "ladder=" + ladder));
    std::vector<codec::KvCache> decoded;
    std::vector<double> bytes(size_t(rows), 0.0);
    for (const auto& kv : windows.kv) {
      const auto bitstream = codec->encode(kv.all(), 1, 0);
      const auto parsed = codec::parse_bitstream(bitstream);
      const auto row_bytes = codec::row_coded_bytes(codec::parse_cachegen_payload(parsed, codec->decode_context()));
      for (int r = 0; r < rows; ++r) bytes[size_t(r)] += double(row_bytes[size_t(r)]);
      decoded.push_back(codec::decode_bitstream(bitstream, codec->decode_context()).kv);
    }
    const auto kl = row_decode_error_kl(*model.model, windows.kv, decoded, windows.tokens, kFedTokens);
    for (int r = 0; r < rows; ++r) {
      curves.bytes[size_t(r)].push_back(bytes[size_t(r)]);
      curves.kl[size_t(r)].push_back(kl[size_t(r)]);
    }
  }
  for (auto& kl : curves.kl)
    for (size_t g = kl.size() - 1; g-- > 0;) kl[g] = std::max(kl[g], kl[g + 1]);
  return curves;
}

// Every row's grid point minimising bytes + lambda KL; returns the point index per row.
std::vector<size_t> points_for_lambda(const RowCurves& curves, double lambda) {
  std::vector<size_t> point(curves.kl.size(), 0);
  for (size_t r = 0; r < curves.kl.size(); ++r) {
    double best = INFINITY;
    for (size_t g = 0; g < kGridBins.size(); ++g) {
      const double cost = curves.bytes[r][g] + lambda * curves.kl[r][g];
      if (cost < best) {
        best = cost;
        point[r] = g;
      }
    }
  }
  return point;
}

double predicted_kl(const RowCurves& curves, const std::vector<size_t>& point) {
  double sum = 0;
  for (size_t r = 0; r < point.size(); ++r) sum += curves.kl[r][point[r]];
  return sum;
}

// The bins of a level with KL budget `budget` (header comment): the smallest lambda whose choice the
// curves predict to stay within the budget (bisection in log lambda; predicted KL falls as lambda
// grows), or the finest bins everywhere when none does.
codec::LevelSpec bins_for_budget(const RowCurves& curves, double budget, int level) {
  double lo = 1e-6, hi = 1e18;  // in bytes per unit KL
  if (predicted_kl(curves, points_for_lambda(curves, hi)) > budget) lo = hi;
  for (int i = 0; i < 200 && hi / lo > 1 + 1e-9; ++i) {
    const double mid = std::sqrt(lo * hi);
    (predicted_kl(curves, points_for_lambda(curves, mid)) <= budget ? hi : lo) = mid;
  }
  const auto point = points_for_lambda(curves, hi);
  const size_t layers = point.size() / 2;
  codec::LevelSpec spec{level, std::vector<int>(layers), std::vector<int>(layers)};
  for (size_t r = 0; r < point.size(); ++r)
    (r < layers ? spec.key_bins[r] : spec.value_bins[r - layers]) = kGridBins[point[r]];
  return spec;
}

}  // namespace

LadderCalibration calibrate_ladder(const models::LoadedModel& model, const LadderCalibrationOptions& o,
                                   const std::function<void(const CalibratedLevel&)>& on_level) {
  const common::Spec spec = codec::parse_codec_spec(o.codec);
  const bool cachegen = spec.name() == "cachegen";
  if (!cachegen && spec.name() != "transform")
    spec.fail("calibrate-ladder calibrates cachegen and transform ladders only");
  for (const char* option : {"ladder", "d"})
    if (spec.has(option)) spec.fail(std::string(option) + "= sets the levels that calibrate-ladder chooses: leave it out");
  if (spec.has("cdf") && spec.string("cdf", "") == "offline")
    spec.fail("cdf=offline needs a table built for the ladder: calibrate with per-chunk CDFs, then run cdf-build on the ladder");
  if (o.target_kl.empty()) throw std::invalid_argument("calibrate-ladder: no target KL given");
  std::vector<double> targets = o.target_kl;
  for (double kl : targets)
    if (!(kl > 0 && kl <= kMaxTargetKl))
      throw std::invalid_argument("calibrate-ladder: target KL " + std::to_string(kl) + " is not in (0, " +
                                  std::to_string(int(kMaxTargetKl)) + "] nats per token");
  std::sort(targets.begin(), targets.end(), std::greater<>());  // level 1: the largest KL
  if (std::adjacent_find(targets.begin(), targets.end()) != targets.end())
    throw std::invalid_argument("calibrate-ladder: a target KL is given twice");
  codec::make_codec(o.codec);  // a bad option fails before the model runs

  const common::ScratchDir scratch("calibrate-ladder");
  const QualityProbe probe(model, o.windows);
  LadderCalibration out;
  RowCurves curves;
  if (cachegen) curves = measure_row_curves(model, o, scratch);
  for (size_t i = 0; i < targets.size(); ++i) {
    const int level = static_cast<int>(i + 1);
    const auto measure = [&](double knob) {
      CalibratedLevel candidate;
      candidate.level = level;
      candidate.target_kl = targets[i];
      std::string candidate_spec;
      if (cachegen) {
        candidate.bins = bins_for_budget(curves, knob, 1);
        const auto ladder = write_ladder(scratch, "candidate.json", cachegen_ladder_json("candidate", {candidate.bins}));
        candidate_spec = with_option(o.codec, "ladder=" + ladder);
      } else {
        char d[32];
        std::snprintf(d, sizeof d, "d=%.17g", knob);  // exact: the ladder file stores the same double
        candidate_spec = with_option(o.codec, d);
      }
      candidate.measured = probe.measure({codec::make_codec(candidate_spec), 1}, /*greedy=*/false);
      candidate.bins.level = level;
      return candidate;
    };
    // The budget may exceed the target: 4 bins everywhere is as far as cachegen goes; the transform
    // codec's distortions are those of codec/transform/transform_distortion.h. The first cachegen probe takes
    // the target as the budget: the curves predict about the KL measured.
    auto found = cachegen ? search_knob(targets[i], targets[i], 1e-12, 1e6, o.max_probes, o.tolerance, measure)
                          : search_knob(targets[i], targets[i], codec::kMinTransformDistortion,
                                        codec::kMaxTransformDistortion, o.max_probes, o.tolerance, measure);
    if (on_level) on_level(found);
    out.levels.push_back(std::move(found));
  }

  nlohmann::json record = {{"text", o.windows.text_path}, {"windows", o.windows.contexts},
                           {"context_tokens", o.windows.context_tokens}, {"first_char", o.windows.first_char},
                           {"stride_chars", o.windows.stride_chars}, {"model", model.name}};
  for (const auto& l : out.levels)
    record["levels"].push_back({{"level", l.level}, {"target_kl", l.target_kl}, {"kl_mean", l.measured.kl_mean},
                                {"ratio_vs_fp16", double(l.measured.fp16_bytes) / double(std::max<uint64_t>(l.measured.bytes, 1))},
                                {"knob", l.knob}, {"probes", l.probes}});
  if (cachegen) {
    std::vector<codec::LevelSpec> specs;
    for (const auto& l : out.levels) specs.push_back(l.bins);
    out.ladder = cachegen_ladder_json(o.name, specs);
  } else {
    out.ladder = {{"name", o.name}, {"codec", "transform"}};
    for (size_t i = 0; i < out.levels.size(); ++i) {
      if (i > 0 && !(out.levels[i].knob < out.levels[i - 1].knob))
        throw std::runtime_error("calibrate-ladder: the distortion found for KL " + std::to_string(out.levels[i].target_kl) +
                                 " is not below the one for " + std::to_string(out.levels[i - 1].target_kl) +
                                 ": targets too close for the measurement (use targets further apart or more windows)");
      out.ladder["levels"].push_back({{"level", out.levels[i].level}, {"distortion", out.levels[i].knob}});
    }
  }
  out.ladder["description"] = "levels calibrated by kvstream calibrate-ladder to the KL targets on " + o.windows.text_path;
  out.ladder["calibration"] = record;
  return out;
}

}  // namespace kvstream::eval
