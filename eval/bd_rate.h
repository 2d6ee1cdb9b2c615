// Bjøntegaard-delta rate (BD-rate) between two codecs' rate–distortion curves: how many more or fewer
// bytes one codec needs than a reference at equal quality, averaged over the quality range both
// curves cover. Quality here is a distortion (KL divergence of next-token distributions, lower is
// better), rate is bytes.
//
// Method (Bjøntegaard, VCEG-M33; the piecewise-cubic variant of VCEG-AL22 and JVET's CTC): each curve
// is the points (x = ln KL, y = ln bytes), sorted by x and joined by the monotone piecewise-cubic
// Hermite interpolant of Fritsch and Carlson (PCHIP), which passes through every point and adds no
// overshoot between them. Over [x_lo, x_hi], the overlap of both curves' x ranges (clipped to a
// requested KL range when one is given), the mean of y_test − y_ref is
//     Δ = (∫ y_test dx − ∫ y_ref dx) / (x_hi − x_lo),
// integrated exactly (a cubic per segment), and BD-rate = e^Δ − 1: −0.5 means half the bytes at equal
// KL, +1 twice the bytes. Nothing is extrapolated: a range the curves do not share is an error.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kvstream::eval {

struct RdSample {
  double bytes = 0;  // > 0
  double kl = 0;     // > 0: a lossless point (KL 0) has no place on a log axis
};

struct BdRate {
  double bd_rate = 0;    // e^Δ − 1, a fraction; negative = fewer bytes than the reference
  double kl_lo = 0;      // the KL range integrated over
  double kl_hi = 0;
};

// `test` against `reference`, over the KL range both cover, within `kl_range` when given.
// Throws std::invalid_argument naming `test_name` / `reference_name` when a curve has fewer than two
// points of distinct KL, a point is not positive and finite, or the ranges do not overlap.
BdRate bd_rate(const std::vector<RdSample>& test, const std::vector<RdSample>& reference,
               std::optional<std::pair<double, double>> kl_range = std::nullopt,
               const std::string& test_name = "test", const std::string& reference_name = "reference");

// The PCHIP interpolant of ln bytes over ln KL through `points` (exposed for tests and plots):
// ln bytes at ln KL = `x`, for x within the points' range.
double rd_log_bytes_at(const std::vector<RdSample>& points, double x);

}  // namespace kvstream::eval
