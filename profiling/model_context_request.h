// Context sets measured on a real model: the profiling stage of `kvstream run` for a context set of
// source "model" (experiments/SCHEMA.md §3). Each context is text from a dataset, prefilled on the
// model chunk by chunk, encoded and decoded at every level, and scored (profiling/context_profiler.h);
// the result is cached (profiling/profile_cache.h). This header holds the request and the result;
// measuring needs LibTorch (profiling/model_context_measurer.h), so a build without it has no measurer.
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "profiling/profile_cache.h"
#include "sim/context_profile.h"

namespace kvstream::profiling {

// How the transform codec is fitted to the set's model for `transform` specs without cal=
// (profiling/fitted_transform.h); unset fields keep `kvstream calibrate`'s defaults (the model's
// eval::calibration_windows, eval::kTransformSensitivityWindows).
struct TransformFit {
  std::optional<int> windows;              // calibration text windows (the default length each)
  std::optional<int> sensitivity_windows;  // windows on which each row's effect on KL is measured (0: none)
  bool operator==(const TransformFit&) const = default;
};

// The model-side fields of a measured context set.
struct ModelContexts {
  std::string model;       // catalog name or path (models/model_catalog.h)
  std::string dataset;     // text file, data-resolved
  int count = 1;           // contexts (text windows)
  int tokens = 0;          // context tokens T
  int64_t chunk_tokens = 0;
  int continuation_tokens = 32;  // K real tokens after the context, for quality
  int64_t stride_chars = 20000;  // window i starts at character stride_chars * i
  TransformFit transform_fit;
};

struct ModelContextsRequest {
  std::string set_name;                   // for log lines
  std::string where;                      // prefix of every error: "<config file>: $.contexts[i]"
  ModelContexts contexts;
  std::optional<ModelContexts> fallback;  // measured instead when the model's files are not found
  std::vector<std::string> codecs;        // the profile's levels (profiling/level_plan.h)
  std::vector<int> levels;
};

struct MeasuredContextSet {
  std::vector<sim::ContextProfile> profiles;  // as measured, one per context
  std::vector<nlohmann::json> level_rows;     // levels.csv rows (experiments/result_tables.h): sums over the contexts
  nlohmann::json provenance;                  // for manifest.json: model asked/used, dataset, tokens, cache keys
  double fp16_bytes_per_token = 0;            // of the model used
};

using ProgressLog = std::function<void(const std::string& line)>;

// Measures a request, or reads its contexts from the cache. Throws with request.where and the
// field at fault for a model or dataset that cannot be loaded (after trying the fallback) or
// contexts that do not fit the model.
using ModelContextMeasurer =
    std::function<MeasuredContextSet(const ModelContextsRequest& request, const ProfileCache& cache, const ProgressLog& log)>;

}  // namespace kvstream::profiling
