// The transform codec fitted to a model on text windows (codec/transform/transform_calibration.h): what
// `kvstream calibrate` writes and what `kvstream rd --calibration-text` fits for a `transform` spec
// that names no calibration file.
#pragma once
#include "codec/transform/transform_calibration.h"
#include "eval/text_windows.h"
#include "models/model_catalog.h"

namespace kvstream::eval {

inline constexpr int kTransformSensitivityWindows = 4;  // the default of `kvstream calibrate --sensitivity-windows`
inline constexpr int kTransformKeyWindows = 4;          // the default of `kvstream calibrate --key-windows`
inline constexpr int kTransformKeyQueryPositions = 64;  // query positions per window of the key metric
inline constexpr int kTransformKeyTopKeys = 128;        // keys per query position and head of the key metric

// Prefills `windows`, fits every row (keys with the model's RoPE undone unless `keep_rope`; with
// key_windows > 0, keys weighed by the queries of that many of the windows, eval/key_sensitivity.h)
// and, with sensitivity_windows > 0, weighs each row's distortion by its measured effect on KL
// (eval/kv_sensitivity.h) on that many of the windows. `options.rope`, `options.model` (the
// model's name) and `options.key_metrics` are set here.
codec::TransformCalibration fit_transform(const models::LoadedModel& model, const TextWindows& windows,
                                          codec::TransformCalibration::Options options, int sensitivity_windows,
                                          int key_windows, bool keep_rope = false);

}  // namespace kvstream::eval
