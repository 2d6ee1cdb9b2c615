// `kvstream calibrate-ladder`: a codec's levels chosen per model so that each lands on a requested KL
// on calibration text (docs/RATE_DISTORTION.md "Calibrated ladders"), written as a ladder file
// (codec/ladder.h) the codec and experiment configs take.
//
// Each level has one knob x whose KL grows about in proportion to it, found by a secant search in
// log-log space (first step slope 1), at most `max_probes` measurements, stopping within `tolerance`:
//   cachegen   x = the level's KL budget B. Per-layer bins come from each row's (K or V of one
//              layer) measured rate-distortion curve, taken once on the sensitivity windows: at
//              each bin count of a grid from 4 to 64 (about 2^(1/4) apart), the bytes of that row's
//              streams and CDF entries (codec::row_coded_bytes) and the KL its own decode error adds
//              in that row alone
//              (eval/kv_sensitivity.h). With KL taken as additive over rows, minimising bytes under
//              sum_r KL_r <= B is a Lagrangian choice (as in video rate control): every row takes the
//              grid point minimising bytes_r + lambda KL_r, lambda the smallest whose predicted
//              total is within B. No power law is assumed; rows whose values cost few bytes (a
//              narrow distribution) or whose error the model barely reads get coarser bins.
//   transform  x = the relative distortion d (transform:cal=...,d=x).
// Levels are numbered from the largest KL (level 1, lowest quality) down, as every ladder.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "codec/ladder.h"
#include "eval/text_quality.h"

namespace kvstream::eval {

// A mean KL per token beyond this is a model that has lost its context, not a quality level.
inline constexpr double kMaxTargetKl = 10;

struct LadderCalibrationOptions {
  QualityOptions windows;            // the calibration text and its windows (`codecs`, `levels` unused)
  std::string codec = "cachegen";    // "cachegen[:options]" (no ladder=) or "transform:cal=M.kvcal" (no d=, ladder=)
  std::vector<double> target_kl;     // one level each, any order
  std::string name;                  // the ladder's name
  int max_probes = 6;
  double tolerance = 0.1;            // |KL / target - 1| at which a level's search stops
  int sensitivity_windows = 2;       // cachegen: windows for the per-row rate-distortion curves
};

struct CalibratedLevel {
  int level = 0;
  double target_kl = 0;
  double knob = 0;                   // B (cachegen) or d (transform)
  codec::LevelSpec bins;             // cachegen only
  QualityRow measured;               // on the calibration windows
  int probes = 0;
};

struct LadderCalibration {
  std::vector<CalibratedLevel> levels;  // level 1 first
  nlohmann::json ladder;                // the ladder file (codec/FORMAT.md §6), with a "calibration" record
};

// Throws std::invalid_argument for a codec other than cachegen or transform, a spec that already sets
// the levels, or a target KL outside (0, kMaxTargetKl]; std::runtime_error when the transform levels found
// are not strictly ordered (targets too close for the measurement's noise).
LadderCalibration calibrate_ladder(const models::LoadedModel& model, const LadderCalibrationOptions& options,
                                   const std::function<void(const CalibratedLevel&)>& on_level = {});

}  // namespace kvstream::eval
