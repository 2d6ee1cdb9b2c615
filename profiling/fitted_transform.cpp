#include "profiling/fitted_transform.h"

#include <algorithm>
#include <chrono>

#include "codec/codec.h"
#include "codec/transform/transform_calibration.h"
#include "common/atomic_file.h"
#include "common/content_hash.h"
#include "common/json_reader.h"
#include "eval/text_windows.h"
#include "eval/transform_fit.h"

namespace kvstream::profiling {

namespace {

// Bumped whenever fit_transform fits differently, so calibrations fitted before are not reused.
constexpr int kFitVersion = 2;  // 2: keys weighed by the queries (eval::kTransformKeyWindows)

// The calibration of `model` for experiment configs: from the cache, else fitted and stored there.
std::string fitted_calibration(const models::LoadedModel& model, const TransformFit& fit,
                               const nlohmann::json& model_fingerprint, const std::filesystem::path& cache_dir,
                               const ProgressLog& log) {
  eval::TextWindows windows = eval::calibration_windows(model.name);
  windows.contexts = fit.windows.value_or(windows.contexts);
  const int sensitivity_windows =
      fit.sensitivity_windows.value_or(std::min(eval::kTransformSensitivityWindows, windows.contexts));
  const int key_windows = std::min(eval::kTransformKeyWindows, windows.contexts);
  const codec::TransformCalibration::Options options;  // `kvstream calibrate`'s defaults
  const nlohmann::json inputs = {
      {"fit_version", kFitVersion},
      {"model", model_fingerprint},
      {"windows",
       {{"text", windows.text_path}, {"contexts", windows.contexts}, {"context_tokens", windows.context_tokens},
        {"window_chars", windows.window_chars}, {"stride_chars", windows.stride_chars}, {"first_char", windows.first_char}}},
      {"sensitivity_windows", sensitivity_windows},
      {"key_windows", key_windows},
      {"key_metric_floor", options.key_metric_floor},
      {"sink_tokens", options.sink_tokens},
      {"level_distortions", options.level_distortions}};
  const std::filesystem::path path = cache_dir / "calibrations" / (common::content_hash(inputs.dump()) + ".kvcal");
  // Beside it, its record: the inputs and the id of the calibration fitted on them. A cached file is
  // used only when it is what the record says, for this model; anything else (a different
  // calibration copied over it, a file without its record) is fitted again (docs/THREAT_MODEL.md).
  const std::filesystem::path record = path.string() + ".json";
  if (std::filesystem::exists(path)) {
    std::string mismatch;
    try {
      const nlohmann::json stored = common::read_json_file(record.string());
      const auto cal = codec::TransformCalibration::load(path);
      if (stored.value("inputs", nlohmann::json()) != inputs) mismatch = "its record was made for other inputs";
      else if (stored.value("calibration_id", std::string()) != common::hex64(cal.id()))
        mismatch = "it is not the calibration its record names (id " + common::hex64(cal.id()) + ", recorded " +
                   stored.value("calibration_id", std::string("none")) + ")";
      else if (cal.model() != model.name) mismatch = "it was fitted to model " + cal.model();
    } catch (const std::exception& e) {
      mismatch = e.what();
    }
    if (mismatch.empty()) {
      log("transform codec for " + model.name + ": calibration from the cache (" + path.string() + ")");
      return path.string();
    }
    log("transform codec for " + model.name + ": the cached calibration " + path.string() + " is not used (" + mismatch +
        "): fitting it again");
  }
  const auto start = std::chrono::steady_clock::now();
  std::filesystem::create_directories(path.parent_path());
  const auto cal = eval::fit_transform(model, windows, options, sensitivity_windows, key_windows);
  cal.save(path);  // atomic, and the record after it: a calibration without its record is fitted again
  const nlohmann::json stored = {{"inputs", inputs}, {"calibration_id", common::hex64(cal.id())}};
  common::write_file_atomically(record, [&](std::ostream& out) { out << stored.dump(2) << "\n"; });
  log("transform codec for " + model.name + ": fitted on " + std::to_string(windows.contexts) + " windows of " +
      std::to_string(windows.context_tokens) + " tokens of " + windows.text_path + " (sensitivity on " +
      std::to_string(sensitivity_windows) + ", keys weighed by the queries of " + std::to_string(key_windows) + ") in " +
      std::to_string(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()) + " s (" +
      path.string() + ", id " + common::hex64(cal.id()) + ")");
  return path.string();
}

}  // namespace

std::map<std::string, std::string> fit_transform_specs(const std::vector<std::string>& codecs,
                                                       const models::LoadedModel& model, const TransformFit& fit,
                                                       const nlohmann::json& model_fingerprint,
                                                       const std::filesystem::path& cache_dir, const ProgressLog& log) {
  std::map<std::string, std::string> runs_as;
  std::string calibration;  // one per model, whatever the number of specs
  for (const auto& spec : codecs) {
    if (!codec::transform_needs_calibration(spec)) continue;
    if (calibration.empty()) calibration = fitted_calibration(model, fit, model_fingerprint, cache_dir, log);
    runs_as[spec] = codec::with_calibration(spec, calibration);
  }
  return runs_as;
}

}  // namespace kvstream::profiling
