#include "profiling/fitted_transform.h"

#include <chrono>

#include "codec/codec.h"
#include "codec/transform_calibration.h"
#include "common/content_hash.h"
#include "eval/text_windows.h"
#include "eval/transform_fit.h"

namespace kvstream::profiling {

namespace {

// Bumped whenever fit_transform fits differently, so calibrations fitted before are not reused.
constexpr int kFitVersion = 1;

// The calibration of `model` for experiment configs: from the cache, else fitted and stored there.
std::string fitted_calibration(const models::LoadedModel& model, const nlohmann::json& model_fingerprint,
                               const std::filesystem::path& cache_dir, const ProgressLog& log) {
  const eval::TextWindows windows = eval::calibration_windows(model.name);
  const codec::TransformCalibration::Options options;  // `kvstream calibrate`'s defaults
  const nlohmann::json inputs = {
      {"fit_version", kFitVersion},
      {"model", model_fingerprint},
      {"windows",
       {{"text", windows.text_path}, {"contexts", windows.contexts}, {"context_tokens", windows.context_tokens},
        {"window_chars", windows.window_chars}, {"stride_chars", windows.stride_chars}, {"first_char", windows.first_char}}},
      {"sensitivity_windows", eval::kTransformSensitivityWindows},
      {"sink_tokens", options.sink_tokens},
      {"level_distortions", options.level_distortions}};
  const std::filesystem::path path = cache_dir / "calibrations" / (common::content_hash(inputs.dump()) + ".kvcal");
  if (std::filesystem::exists(path)) {
    log("transform codec for " + model.name + ": calibration from the cache (" + path.string() + ")");
    return path.string();
  }
  const auto start = std::chrono::steady_clock::now();
  codec::TransformCalibration::Options fit = options;
  fit.model = model.name;
  std::filesystem::create_directories(path.parent_path());
  eval::fit_transform(model, windows, fit, eval::kTransformSensitivityWindows).save(path);  // atomic
  log("transform codec for " + model.name + ": fitted on " + std::to_string(windows.contexts) + " windows of " +
      std::to_string(windows.context_tokens) + " tokens of " + windows.text_path + " in " +
      std::to_string(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()) + " s (" +
      path.string() + ")");
  return path.string();
}

}  // namespace

std::map<std::string, std::string> fit_transform_specs(const std::vector<std::string>& codecs,
                                                       const models::LoadedModel& model,
                                                       const nlohmann::json& model_fingerprint,
                                                       const std::filesystem::path& cache_dir, const ProgressLog& log) {
  std::map<std::string, std::string> runs_as;
  std::string calibration;  // one per model, whatever the number of specs
  for (const auto& spec : codecs) {
    if (!codec::transform_needs_calibration(spec)) continue;
    if (calibration.empty()) calibration = fitted_calibration(model, model_fingerprint, cache_dir, log);
    runs_as[spec] = codec::with_calibration(spec, calibration);
  }
  return runs_as;
}

}  // namespace kvstream::profiling
