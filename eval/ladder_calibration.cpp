#include "eval/ladder_calibration.h"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "codec/codec.h"
#include "common/scratch_dir.h"
#include "eval/kv_sensitivity.h"
#include "eval/text_windows.h"

namespace kvstream::eval {
namespace {

constexpr int kReferenceBins = 16;  // Q = 7
constexpr int kFedTokens = 32;      // row_noise_kl: tokens fed after each sensitivity window's prefix

double steps_per_sign(int bins) { return bins / 2.0 - 1.0; }

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
CalibratedLevel search_knob(double target, double x0, double x_max, int max_probes, double tolerance, Measure&& measure) {
  CalibratedLevel best;
  double best_error = INFINITY;
  double x = x0, last_log_x = NAN, last_log_kl = NAN, slope = 1.0;
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
    const double next = std::min(std::exp(log_x + std::log(target / kl) / slope), x_max);
    if (std::abs(next / x - 1) < 1e-6) break;  // pinned at the knob's end
    x = next;
  }
  return best;
}

// KL_r at kReferenceBins for every row: each row's decode error at those bins (mean square, on the
// sensitivity windows) replayed as Gaussian noise in that row alone.
std::vector<double> reference_row_kl(const models::LoadedModel& model, const LadderCalibrationOptions& o,
                                     const common::ScratchDir& scratch) {
  const TextWindows text{o.windows.text_path, std::max(o.sensitivity_windows, 1), o.windows.context_tokens,
                         o.windows.window_chars, o.windows.stride_chars, o.windows.first_char};
  const WindowKv windows = window_kv(model, text);
  const int layers = windows.kv.front().shape().layers;
  codec::LevelSpec uniform{1, std::vector<int>(size_t(layers), kReferenceBins), std::vector<int>(size_t(layers), kReferenceBins)};
  const auto reference = write_ladder(scratch, "reference.json", cachegen_ladder_json("reference", {uniform}));
  const auto codec = codec::make_codec(with_option(o.codec, "ladder=" + reference));
  const int rows = 2 * layers;
  std::vector<double> mse(size_t(rows), 0.0);
  for (const auto& kv : windows.kv) {
    const auto decoded = codec::decode_bitstream(codec->encode(kv.all(), 1, 0), codec->decode_context()).kv;
    const int64_t tokens = kv.shape().tokens;
    const int channels = kv.shape().channels();
    for (int r = 0; r < rows; ++r) {
      double sum = 0;
      for (int64_t t = 0; t < tokens; ++t) {
        const float* a = kv.row_token(r, t);
        const float* b = decoded.row_token(r, t);
        for (int c = 0; c < channels; ++c) sum += double(a[c] - b[c]) * double(a[c] - b[c]);
      }
      mse[size_t(r)] += sum / double(tokens * channels) / double(windows.kv.size());
    }
  }
  return row_noise_kl(*model.model, windows.kv, windows.tokens, mse, kFedTokens, 0, 1);
}

// The bins of a level with KL budget `budget`: every row its share budget / 2L (header comment).
codec::LevelSpec bins_for_budget(const std::vector<double>& reference_kl, double budget, int level) {
  const size_t rows = reference_kl.size(), layers = rows / 2;
  codec::LevelSpec spec{level, std::vector<int>(layers), std::vector<int>(layers)};
  const double share = budget / double(rows);
  for (size_t r = 0; r < rows; ++r) {
    const double q = steps_per_sign(kReferenceBins) * std::sqrt(std::max(reference_kl[r], 1e-12) / share);
    const int bins = std::clamp(static_cast<int>(std::lround(2 * (q + 1))), codec::kMinBins, codec::kMaxBins);
    (r < layers ? spec.key_bins[r] : spec.value_bins[r - layers]) = bins;
  }
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
    if (!(kl > 0 && std::isfinite(kl))) throw std::invalid_argument("calibrate-ladder: target KL " + std::to_string(kl) + " is not positive");
  std::sort(targets.begin(), targets.end(), std::greater<>());  // level 1: the largest KL
  if (std::adjacent_find(targets.begin(), targets.end()) != targets.end())
    throw std::invalid_argument("calibrate-ladder: a target KL is given twice");
  codec::make_codec(o.codec);  // a bad option fails before the model runs

  const common::ScratchDir scratch("calibrate-ladder");
  const QualityProbe probe(model, o.windows);
  LadderCalibration out;
  std::vector<double> reference_kl;
  if (cachegen) reference_kl = reference_row_kl(model, o, scratch);
  for (size_t i = 0; i < targets.size(); ++i) {
    const int level = static_cast<int>(i + 1);
    const auto measure = [&](double knob) {
      CalibratedLevel candidate;
      candidate.level = level;
      candidate.target_kl = targets[i];
      std::string candidate_spec;
      if (cachegen) {
        candidate.bins = bins_for_budget(reference_kl, knob, 1);
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
    // The budget may exceed the target: 4 bins everywhere is as far as cachegen goes; d = 1 for transform.
    auto found = search_knob(targets[i], targets[i], cachegen ? 1e6 : 1.0, o.max_probes, o.tolerance, measure);
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
