// How strongly the model's next-token distribution reacts to error in each CacheGen row of its KV (K or
// V of one layer): the transform codec's calibration weighs each row's distortion by it
// (codec/transform/transform_calibration.h, Row::weight), and calibrate-ladder sets CacheGen's per-layer bins
// from it (eval/ladder_calibration.h).
//
// For row r, error is added to that row alone (Gaussian noise shaped as the transform codec's error,
// or a codec's real decode error), the last `fed_tokens` tokens of each window are fed on the changed
// KV of the ones before, and the KL from the clean distributions is averaged over positions and
// windows. For small noise KL grows linearly with the noise variance, so KL_r / noise variance is the
// row's sensitivity; minimising bytes at a KL budget then gives each row a distortion inversely
// proportional to it (Lagrange: D_r = const / sensitivity_r).
#pragma once
#include <cstdint>
#include <vector>

#include "codec/kv_cache.h"
#include "codec/transform/transform_calibration.h"
#include "eval/text_windows.h"
#include "models/llama_model.h"

namespace kvstream::eval {

// KL per row when that row alone carries its real decode error: row r of each window's prefix is
// replaced by row r of `decoded[i]` (the same window after a codec round trip, same shape), the last
// `fed_tokens` tokens fed on it. Unlike Gaussian noise of the same mean square this keeps where the
// error sits: per-token absmax quantization puts most of it on the few tokens with outlier values
// (an attention sink), which the model may barely read.
std::vector<double> row_decode_error_kl(const models::LlamaModel& model, const std::vector<codec::KvCache>& windows,
                                        const std::vector<codec::KvCache>& decoded,
                                        const std::vector<std::vector<int32_t>>& tokens, int fed_tokens);

// The transform calibration's row weights (TransformCalibration::set_row_weights) from the first
// `count` calibration windows: each row's KL under noise of 1 % of its mean component variance on
// every component, shaped as the codec's error is (through the row's synthesis where it has one:
// keys weighed by the queries), from the calibration's sink tokens on, the last 32 tokens fed;
// w_r = geometric mean of the KLs / KL_r, clamped to the allowed range, so every row adds about the
// same KL at a level.
std::vector<double> transform_row_weights(const models::LlamaModel& model, const WindowKv& windows, int count,
                                          const codec::TransformCalibration& cal);

}  // namespace kvstream::eval
