// The relative distortions a transform level may have (transform_calibration.h: level i codes row r
// with Delta_r^2 / 12 = d * weight_r * mean_variance_r), in one place for every reader of one: the
// spec's d=, ladder files, calibrations, `calibrate --levels`, `calibrate-ladder` and the decoder's
// TPRM section.
//
// Why a lower bound. The format keeps |q| = |y / Delta| within kTransformMaxQ = 2^30 (escapes are
// int32). At d = 1e-8 and the smallest row weight 1/64, Delta >= 1.4e-4 sqrt(mean variance), so
// every coefficient within about 10^5 standard deviations of its row codes exactly; the encoder
// refuses a chunk with one beyond (it never clamps). Lower distortions buy nothing: fp16, the KV's
// own format, already rounds a value with a relative error near 2^-11, a relative noise variance
// near 8e-8. Below the bound the clamp would decide the values (d = 1e-20 once decoded with 28 %
// error, d = 1e-300 decoded every value as its row's mean).
#pragma once
#include <charconv>
#include <string>

namespace kvstream::codec {

inline constexpr double kMinTransformDistortion = 1e-8, kMaxTransformDistortion = 1.0;

// The shortest decimal text that reads back as `d`, for messages.
inline std::string distortion_text(double d) {
  char text[32];
  return std::string(text, std::to_chars(text, text + sizeof text, d).ptr);
}

// Empty when `d` may be a level's distortion, else why not, with the valid range.
inline std::string transform_distortion_error(double d) {
  if (d >= kMinTransformDistortion && d <= kMaxTransformDistortion) return "";
  return "relative distortion " + distortion_text(d) + " is outside [" + distortion_text(kMinTransformDistortion) + ", " +
         distortion_text(kMaxTransformDistortion) + "]";
}

}  // namespace kvstream::codec
