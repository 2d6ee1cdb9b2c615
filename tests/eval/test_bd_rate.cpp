// BD-rate: exact on curves where the answer is known in closed form, equal to an independent
// implementation (SciPy's PchipInterpolator and its exact integral) on irregular curves, and a clear
// error where it is undefined.
#include <gtest/gtest.h>

#include <cmath>

#include "eval/bd_rate.h"

namespace kvstream::eval {
namespace {

// Points on ln bytes = a + b·ln KL at the given KLs.
std::vector<RdSample> on_line(double a, double b, const std::vector<double>& kls) {
  std::vector<RdSample> points;
  for (const double kl : kls) points.push_back({std::exp(a + b * std::log(kl)), kl});
  return points;
}

// Irregular curves, the shape of CacheGen's levels and of a better codec's.
const std::vector<RdSample> kReference = {{100000, 0.012}, {70000, 0.05}, {55000, 0.078}, {40000, 0.107}, {30000, 0.2}};
const std::vector<RdSample> kTest = {{60000, 0.004}, {45000, 0.01}, {30000, 0.03}, {22000, 0.06}, {15000, 0.15}};

TEST(BdRate, ACurveAgainstItselfIsZero) {
  const auto r = bd_rate(kReference, kReference);
  EXPECT_NEAR(r.bd_rate, 0, 1e-12);
  EXPECT_NEAR(r.kl_lo, 0.012, 1e-12);
  EXPECT_NEAR(r.kl_hi, 0.2, 1e-12);
}

TEST(BdRate, HalfTheBytesAtEveryPointIsMinusOneHalf) {
  std::vector<RdSample> half = kReference;
  for (auto& p : half) p.bytes /= 2;
  EXPECT_NEAR(bd_rate(half, kReference).bd_rate, -0.5, 1e-12);
  EXPECT_NEAR(bd_rate(kReference, half).bd_rate, 1.0, 1e-12);
}

// PCHIP reproduces straight lines, so two power laws give the closed form: the mean of two lines'
// difference over [lo, hi] is their difference at the midpoint of ln KL.
TEST(BdRate, TwoPowerLawsGiveTheirDifferenceAtTheMidpoint) {
  const auto reference = on_line(8.0, -0.4, {0.001, 0.003, 0.02, 0.05, 0.3});
  const auto test = on_line(6.5, -0.7, {0.002, 0.01, 0.04, 0.5});
  const double lo = std::log(0.002), hi = std::log(0.3), mid = (lo + hi) / 2;
  const auto r = bd_rate(test, reference);
  EXPECT_NEAR(r.bd_rate, std::expm1((6.5 - 0.7 * mid) - (8.0 - 0.4 * mid)), 1e-12);
  EXPECT_NEAR(r.kl_lo, 0.002, 1e-15);
  EXPECT_NEAR(r.kl_hi, 0.3, 1e-12);
}

// Reference values from SciPy 1.10 (PchipInterpolator over (ln KL, ln bytes), .integrate), computed
// once outside this project.
TEST(BdRate, MatchesSciPysPchipOnIrregularCurves) {
  const auto r = bd_rate(kTest, kReference);
  EXPECT_NEAR(r.bd_rate, -0.6223546021093774, 1e-12);
  EXPECT_NEAR(r.kl_lo, 0.012, 1e-12);
  EXPECT_NEAR(r.kl_hi, 0.15, 1e-12);
  EXPECT_NEAR(bd_rate(kTest, kReference, std::pair{0.02, 0.1}).bd_rate, -0.6425390887578895, 1e-12);
  const std::vector<RdSample> bumpy = {{100, 0.01}, {300, 0.02}, {200, 0.05}, {250, 0.1}};
  EXPECT_NEAR(rd_log_bytes_at(bumpy, std::log(0.03)), 5.535862890035719, 1e-12);
  EXPECT_NEAR(rd_log_bytes_at(bumpy, std::log(0.015)), 5.46482640073351, 1e-12);
  EXPECT_NEAR(rd_log_bytes_at(bumpy, std::log(0.07)), 5.350285514513825, 1e-12);
}

TEST(BdRate, TheInterpolantDoesNotOvershootBetweenPoints) {
  const std::vector<RdSample> step = {{1000, 0.001}, {1000, 0.01}, {100, 0.02}, {100, 0.1}};
  for (double x = std::log(0.001); x <= std::log(0.1); x += 0.01) {
    const double y = rd_log_bytes_at(step, x);
    EXPECT_GE(y, std::log(100.0) - 1e-12);
    EXPECT_LE(y, std::log(1000.0) + 1e-12);
  }
}

TEST(BdRate, OfPointsWithEqualKlTheFewestBytesCount) {
  std::vector<RdSample> with_worse = kReference;
  with_worse.push_back({kReference[2].bytes * 3, kReference[2].kl});
  EXPECT_NEAR(bd_rate(with_worse, kReference).bd_rate, 0, 1e-12);
}

TEST(BdRate, IsAnErrorWhereItIsUndefined) {
  const auto message = [](auto&& call) {
    try {
      call();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([&] { bd_rate({{100, 0.01}}, kReference, std::nullopt, "transform"); })
                .find("transform: a rate-distortion curve needs at least two points"),
            std::string::npos);
  EXPECT_NE(message([&] { bd_rate({{100, 0.01}, {50, 0.0}}, kReference, std::nullopt, "transform"); })
                .find("transform: point 1 (bytes 50"),
            std::string::npos);
  EXPECT_NE(message([&] { bd_rate({{100, 0.01}, {50, NAN}}, kReference); }).find("not positive and finite"),
            std::string::npos);
  EXPECT_NE(message([&] { bd_rate({{100, 0.001}, {50, 0.005}}, kReference, std::nullopt, "kivi", "cachegen"); })
                .find("kivi (KL [0.001000, 0.005000]) and cachegen (KL [0.012000, 0.200000]) share no KL range"),
            std::string::npos);
  EXPECT_NE(message([&] { bd_rate(kTest, kReference, std::pair{0.3, 0.5}); }).find("within [0.300000, 0.500000]"),
            std::string::npos);
  EXPECT_NE(message([&] { bd_rate(kTest, kReference, std::pair{0.1, 0.01}); }).find("is not 0 < lo < hi"),
            std::string::npos);
}

}  // namespace
}  // namespace kvstream::eval
