// `kvstream rd`: rate–distortion curves of codecs on text windows, and each curve's BD-rate against
// CacheGen, the artifact-faithful codec (docs/RATE_DISTORTION.md).
// Every codec spec becomes the points of codec/rate_sweep.h (a ladder's levels, a rate knob's values);
// each point is measured exactly as `kvstream quality` measures a (codec, level) (eval/text_quality.h:
// bytes, KL, top-1 agreement, perplexity over the windows); the points of each curve with KL > 0 give
// its BD-rate against the curve of `cachegen` (eval/bd_rate.h).
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "eval/bd_rate.h"
#include "eval/text_quality.h"
#include "eval/text_windows.h"

namespace kvstream::eval {

inline constexpr const char* kRdReferenceCodec = "cachegen";

struct RdOptions {
  QualityOptions windows;                       // the text and its windows; `codecs` and `levels` are unused
  std::vector<std::string> codecs;              // specs, each one curve; the reference is measured too
  std::optional<std::pair<double, double>> kl_range;  // clips the KL range of the BD-rate
  // Where a `transform` spec without cal= is fitted first (eval/transform_fit.h, once for all such
  // specs, with the calibration's default levels and sensitivity weights); without it such a spec
  // is refused.
  std::optional<TextWindows> calibration;
};

// One measured point of one curve.
struct RdMeasurement {
  std::string curve;  // the spec as given
  std::string point;  // codec/rate_sweep.h's label
  QualityRow quality;
  nlohmann::json to_json() const;  // codec, point, spec, level, bytes, ratio_vs_fp16, kl_mean, top1_agree, ppl_delta, ...
};

// One curve's BD-rate against the reference, or why there is none.
struct RdCurve {
  std::string curve;
  std::optional<BdRate> bd;
  std::string no_bd_reason;  // set when !bd
  nlohmann::json to_json() const;  // codec, bd_rate_vs_cachegen (null when none), kl_range, points, reason
};

struct RdResult {
  std::vector<RdMeasurement> points;
  std::vector<RdCurve> curves;
};

// Throws std::invalid_argument for a bad spec before the model runs (a transform spec that needs
// fitting without options.calibration among them).
RdResult run_rd(const models::LoadedModel& model, const RdOptions& options,
                const std::function<void(const RdMeasurement&)>& on_point = {});

}  // namespace kvstream::eval
