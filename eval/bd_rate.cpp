#include "eval/bd_rate.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace kvstream::eval {

namespace {

// One curve's PCHIP interpolant: knots x (strictly increasing), values y and slopes d at the knots.
struct Pchip {
  std::vector<double> x, y, d;

  // The curve's points as knots. Points of equal KL keep the one of fewest bytes (the one a codec
  // would be run at); what is left must be at least two knots.
  static Pchip through(const std::vector<RdSample>& points, const std::string& name) {
    std::vector<std::pair<double, double>> knots;  // (ln KL, ln bytes)
    for (size_t i = 0; i < points.size(); ++i) {
      const auto& p = points[i];
      if (!(std::isfinite(p.bytes) && p.bytes > 0 && std::isfinite(p.kl) && p.kl > 0))
        throw std::invalid_argument(name + ": point " + std::to_string(i) + " (bytes " + std::to_string(p.bytes) +
                                    ", KL " + std::to_string(p.kl) + ") is not positive and finite; BD-rate " +
                                    "works on log bytes over log KL");
      knots.emplace_back(std::log(p.kl), std::log(p.bytes));
    }
    std::sort(knots.begin(), knots.end());  // by x, then fewest bytes first
    knots.erase(std::unique(knots.begin(), knots.end(), [](const auto& a, const auto& b) { return a.first == b.first; }),
                knots.end());
    if (knots.size() < 2)
      throw std::invalid_argument(name + ": a rate-distortion curve needs at least two points of different KL, got " +
                                  std::to_string(knots.size()));
    Pchip c;
    for (const auto& [x, y] : knots) {
      c.x.push_back(x);
      c.y.push_back(y);
    }
    c.d = slopes(c.x, c.y);
    return c;
  }

  // Fritsch–Carlson slopes: at an interior knot, 0 where the secants change sign, else their
  // weighted harmonic mean (monotone data give a monotone curve); at an end, the three-point
  // estimate, limited so that it keeps the secant's sign and at most three times its size.
  static std::vector<double> slopes(const std::vector<double>& x, const std::vector<double>& y) {
    const size_t n = x.size();
    std::vector<double> h(n - 1), secant(n - 1), d(n);
    for (size_t k = 0; k + 1 < n; ++k) {
      h[k] = x[k + 1] - x[k];
      secant[k] = (y[k + 1] - y[k]) / h[k];
    }
    if (n == 2) return {secant[0], secant[0]};
    for (size_t k = 1; k + 1 < n; ++k) {
      if (secant[k - 1] * secant[k] <= 0) continue;  // d[k] = 0: a local extremum or a flat piece
      const double w1 = 2 * h[k] + h[k - 1], w2 = h[k] + 2 * h[k - 1];
      d[k] = (w1 + w2) / (w1 / secant[k - 1] + w2 / secant[k]);
    }
    const auto end_slope = [](double h0, double h1, double s0, double s1) {
      const double slope = ((2 * h0 + h1) * s0 - h0 * s1) / (h0 + h1);
      if (std::signbit(slope) != std::signbit(s0) || slope == 0) return 0.0;
      if (std::signbit(s0) != std::signbit(s1) && std::abs(slope) > 3 * std::abs(s0)) return 3 * s0;
      return slope;
    };
    d[0] = end_slope(h[0], h[1], secant[0], secant[1]);
    d[n - 1] = end_slope(h[n - 2], h[n - 3], secant[n - 2], secant[n - 3]);  // mirrored
    return d;
  }

  // The segment holding x (x within [x.front(), x.back()]).
  size_t segment(double x_at) const {
    const auto it = std::upper_bound(x.begin(), x.end(), x_at);
    return std::min<size_t>(std::max<ptrdiff_t>(it - x.begin(), 1) - 1, x.size() - 2);
  }

  double value(double x_at) const {
    const size_t k = segment(x_at);
    const double h = x[k + 1] - x[k], t = (x_at - x[k]) / h;
    const double h00 = (2 * t - 3) * t * t + 1, h10 = ((t - 2) * t + 1) * t, h01 = (3 - 2 * t) * t * t,
                 h11 = (t - 1) * t * t;
    return h00 * y[k] + h10 * h * d[k] + h01 * y[k + 1] + h11 * h * d[k + 1];
  }

  // ∫ from x.front() to x_at of the interpolant: whole segments (a cubic Hermite segment integrates
  // to h·(y0 + y1)/2 + h²·(d0 − d1)/12), then the part of x_at's segment, from the integrated basis.
  double primitive(double x_at) const {
    const size_t k = segment(x_at);
    double sum = 0;
    for (size_t j = 0; j < k; ++j) {
      const double h = x[j + 1] - x[j];
      sum += h * (y[j] + y[j + 1]) / 2 + h * h * (d[j] - d[j + 1]) / 12;
    }
    const double h = x[k + 1] - x[k], t = (x_at - x[k]) / h, t2 = t * t, t3 = t2 * t, t4 = t3 * t;
    const double i00 = t4 / 2 - t3 + t, i10 = t4 / 4 - 2 * t3 / 3 + t2 / 2, i01 = -t4 / 2 + t3, i11 = t4 / 4 - t3 / 3;
    return sum + h * (i00 * y[k] + i10 * h * d[k] + i01 * y[k + 1] + i11 * h * d[k + 1]);
  }
};

}  // namespace

double rd_log_bytes_at(const std::vector<RdSample>& points, double x) {
  const Pchip curve = Pchip::through(points, "curve");
  if (!(x >= curve.x.front() && x <= curve.x.back()))
    throw std::invalid_argument("ln KL " + std::to_string(x) + " is outside the curve's range");
  return curve.value(x);
}

BdRate bd_rate(const std::vector<RdSample>& test, const std::vector<RdSample>& reference,
               std::optional<std::pair<double, double>> kl_range, const std::string& test_name,
               const std::string& reference_name) {
  const Pchip t = Pchip::through(test, test_name), r = Pchip::through(reference, reference_name);
  double lo = std::max(t.x.front(), r.x.front()), hi = std::min(t.x.back(), r.x.back());
  const auto kl_span = [](const Pchip& c) {
    return "[" + std::to_string(std::exp(c.x.front())) + ", " + std::to_string(std::exp(c.x.back())) + "]";
  };
  if (kl_range) {
    const auto [kl_lo, kl_hi] = *kl_range;
    if (!(kl_lo > 0 && kl_hi > kl_lo && std::isfinite(kl_hi)))
      throw std::invalid_argument("KL range [" + std::to_string(kl_lo) + ", " + std::to_string(kl_hi) +
                                  "] is not 0 < lo < hi");
    lo = std::max(lo, std::log(kl_lo));
    hi = std::min(hi, std::log(kl_hi));
  }
  if (!(hi > lo))
    throw std::invalid_argument(test_name + " (KL " + kl_span(t) + ") and " + reference_name + " (KL " + kl_span(r) +
                                ") share no KL range" +
                                (kl_range ? " within [" + std::to_string(kl_range->first) + ", " +
                                                std::to_string(kl_range->second) + "]"
                                          : std::string()));
  const double mean_log_ratio = ((t.primitive(hi) - t.primitive(lo)) - (r.primitive(hi) - r.primitive(lo))) / (hi - lo);
  return BdRate{std::expm1(mean_log_ratio), std::exp(lo), std::exp(hi)};
}

}  // namespace kvstream::eval
