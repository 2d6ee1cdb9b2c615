// The transform codec fitted to a context set's model, for the `transform` specs of an experiment
// config that name no calibration (codec::transform_needs_calibration): fitted as `kvstream
// calibrate` fits by default (eval::calibration_windows of the model, eval::fit_transform with
// sensitivity weights) or with the set's `transform_fit` (fewer windows), once per model and fit,
// and kept in the profile cache's calibrations/ folder as <key>.kvcal, key the hash of what the fit
// depends on (the model's fingerprint, the windows, the fit's options), so later runs and shards
// reuse it. Beside it, <key>.kvcal.json records the inputs
// and the calibration's id: a cached file that is not what its record says (or has none, or was
// fitted to another model) is fitted again, so a calibration copied over a cache entry is never used
// silently. The calibration text is never what the contexts are cut from unless a config makes it
// so (docs/RATE_DISTORTION.md).
#pragma once
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/model_catalog.h"
#include "profiling/model_context_request.h"

namespace kvstream::profiling {

// For every spec of `codecs` that needs a calibration, the spec it runs as
// (codec::with_calibration with the fitted file); nothing for the others (ProfilingOptions::runs_as).
// Logs whether each calibration was fitted or found.
std::map<std::string, std::string> fit_transform_specs(const std::vector<std::string>& codecs,
                                                       const models::LoadedModel& model, const TransformFit& fit,
                                                       const nlohmann::json& model_fingerprint,
                                                       const std::filesystem::path& cache_dir, const ProgressLog& log);

}  // namespace kvstream::profiling
