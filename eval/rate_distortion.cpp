#include "eval/rate_distortion.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "codec/codec.h"
#include "codec/rate_sweep.h"
#include "common/scratch_dir.h"
#include "eval/transform_fit.h"

namespace kvstream::eval {

nlohmann::json RdMeasurement::to_json() const {
  nlohmann::json j = quality.to_json();
  j["spec"] = quality.codec;  // the codec the point ran
  j["codec"] = curve;         // the curve's spec as given
  j["point"] = point;
  return j;
}

nlohmann::json RdCurve::to_json() const {
  nlohmann::json j = {{"codec", curve}};
  if (bd) {
    j["bd_rate_vs_cachegen"] = bd->bd_rate;
    j["kl_range"] = {bd->kl_lo, bd->kl_hi};
  } else {
    j["bd_rate_vs_cachegen"] = nullptr;
    j["kl_range"] = nullptr;
    j["reason"] = no_bd_reason;
  }
  return j;
}

namespace {

std::vector<RdSample> lossy_samples(const std::vector<RdMeasurement>& points, const std::string& curve) {
  std::vector<RdSample> samples;
  for (const auto& p : points)
    if (p.curve == curve && p.quality.kl_mean > 0) samples.push_back({double(p.quality.bytes), p.quality.kl_mean});
  return samples;
}

// `curve`'s BD-rate against the reference, or why it has none: a lossless curve, or one bd_rate refuses.
RdCurve curve_against(const std::string& curve, const std::vector<RdSample>& lossy, const std::vector<RdSample>& reference,
                      const RdOptions& options) {
  RdCurve c{curve, std::nullopt, ""};
  if (lossy.empty()) {
    c.no_bd_reason = curve + ": lossless here (KL 0 at every point), no curve on a log-KL axis";
    return c;
  }
  try {
    c.bd = bd_rate(lossy, reference, options.kl_range, curve, kRdReferenceCodec);
  } catch (const std::invalid_argument& e) {
    c.no_bd_reason = e.what();
  }
  return c;
}

// The spec a curve runs: itself, or for a `transform` curve without cal= the same with the fitted
// calibration's path (fitted into `scratch` on first need).
std::string runnable_spec(const std::string& curve, const models::LoadedModel& model, const RdOptions& options,
                          const common::ScratchDir& scratch, std::string& fitted) {
  if (!codec::transform_needs_calibration(curve)) return curve;
  if (!options.calibration)
    codec::parse_codec_spec(curve).fail(
        "names no calibration: give cal=M.kvcal (kvstream calibrate) or --calibration-text to fit one here");
  if (fitted.empty()) {
    fitted = scratch.file("fitted.kvcal").string();
    fit_transform(model, *options.calibration, {}, kTransformSensitivityWindows, kTransformKeyWindows).save(fitted);
  }
  return codec::with_calibration(curve, fitted);
}

}  // namespace

RdResult run_rd(const models::LoadedModel& model, const RdOptions& options,
                const std::function<void(const RdMeasurement&)>& on_point) {
  // Every curve's points, the reference's included; a spec is run once however many curves share it.
  std::vector<std::string> curves;
  for (const auto& curve : options.codecs)
    if (std::find(curves.begin(), curves.end(), curve) == curves.end()) curves.push_back(curve);
  if (std::find(curves.begin(), curves.end(), kRdReferenceCodec) == curves.end()) curves.push_back(kRdReferenceCodec);
  std::map<std::pair<std::string, int>, std::vector<std::pair<std::string, std::string>>> users;  // (spec, level) -> (curve, label)
  QualityOptions quality = options.windows;
  quality.codecs.clear();
  quality.levels.clear();
  const common::ScratchDir scratch("rd");
  std::string fitted;
  for (const auto& curve : curves)
    for (const auto& p : codec::rate_sweep(runnable_spec(curve, model, options, scratch, fitted))) {
      const std::string spec = p.codec_level.codec->spec();
      if (std::find(quality.codecs.begin(), quality.codecs.end(), spec) == quality.codecs.end()) quality.codecs.push_back(spec);
      users[{spec, p.codec_level.level}].push_back({curve, p.label});
    }

  RdResult result;
  run_quality(model, quality, [&](const QualityRow& row) {
    const auto it = users.find({row.codec, row.level});
    if (it == users.end())  // run_quality runs every level of each spec, and rate_sweep took every level
      throw std::logic_error("rd: a measured point of " + row.codec + " belongs to no curve");
    for (const auto& [curve, label] : it->second) {
      result.points.push_back({curve, label, row});
      if (on_point) on_point(result.points.back());
    }
  });

  const auto reference = lossy_samples(result.points, kRdReferenceCodec);
  for (const auto& curve : curves) result.curves.push_back(curve_against(curve, lossy_samples(result.points, curve), reference, options));
  return result;
}

}  // namespace kvstream::eval
