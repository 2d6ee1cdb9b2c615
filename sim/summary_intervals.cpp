#include "sim/summary_intervals.h"

#include <algorithm>

#include "sim/summary.h"

namespace kvstream::sim {

namespace {

// splitmix64: a fixed generator (std's distributions are implementation-defined, and a summary must
// read the same on every machine).
struct Generator {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n): the modulo's bias is below n / 2^64, nothing at the sizes of a sweep.
  size_t below(size_t n) { return size_t(next() % n); }
};

// The row of order statistics a p-th percentile reads in a sample of n: lo = floor(p/100 (n - 1)).
size_t lower_order(size_t n, double p) { return size_t(std::floor(p / 100 * double(n - 1))); }

// sim::percentile's p-th percentile of a sample of n, from its lo-th and (lo + 1)-th smallest values.
double interpolated(size_t n, double p, double below, double above) {
  const double rank = p / 100 * double(n - 1);
  const size_t lo = lower_order(n, p);
  return lo + 1 >= n ? below : below + (rank - double(lo)) * (above - below);
}

Interval middle_95(std::vector<double>& estimates) {
  std::sort(estimates.begin(), estimates.end());
  return {percentile(estimates, 2.5), percentile(estimates, 97.5)};
}

}  // namespace

Interval wilson_interval(size_t hits, size_t n, double z) {
  if (n == 0) return {};
  const double p = double(hits) / double(n), nn = double(n), z2 = z * z;
  const double centre = (p + z2 / (2 * nn)) / (1 + z2 / nn);
  const double half = z * std::sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn)) / (1 + z2 / nn);
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

SummaryIntervals summary_intervals(const std::vector<double>& ttfts, size_t requests, size_t violations, uint64_t seed) {
  SummaryIntervals out;
  out.slo_violation_rate = wilson_interval(violations, requests);
  if (ttfts.empty()) return out;
  const size_t n = ttfts.size();
  // A resample is held as how often it drew each TTFT, indexed by the TTFT's place in sorted order:
  // its order statistics are then read off the counts in one pass (the values a sort of the resample
  // would give), while its mean is summed in draw order.
  std::vector<size_t> by_value(n);
  for (size_t i = 0; i < n; ++i) by_value[i] = i;
  std::stable_sort(by_value.begin(), by_value.end(), [&](size_t a, size_t b) { return ttfts[a] < ttfts[b]; });
  std::vector<double> sorted(n);
  std::vector<uint32_t> place(n);  // ttfts[i] is sorted[place[i]]
  for (size_t k = 0; k < n; ++k) {
    sorted[k] = ttfts[by_value[k]];
    place[by_value[k]] = uint32_t(k);
  }
  std::vector<uint32_t> draws(n);
  Generator generator{seed};
  std::vector<double> means, p50s, p95s;
  for (int b = 0; b < kBootstrapResamples; ++b) {
    std::fill(draws.begin(), draws.end(), 0u);
    double sum = 0;
    for (size_t k = 0; k < n; ++k) {
      const size_t i = generator.below(n);
      sum += ttfts[i];
      ++draws[place[i]];
    }
    means.push_back(sum / double(n));
    // The resample's order statistics that the two percentiles need, ascending, found in one pass.
    const size_t wanted[4] = {lower_order(n, 50), std::min(lower_order(n, 50) + 1, n - 1), lower_order(n, 95),
                              std::min(lower_order(n, 95) + 1, n - 1)};
    double value[4] = {};
    size_t found = 0, seen = 0;  // seen: draws of the sorted TTFTs up to and including k
    for (size_t k = 0; found < 4 && k < n; ++k)
      for (seen += draws[k]; found < 4 && wanted[found] < seen;) value[found++] = sorted[k];
    p50s.push_back(interpolated(n, 50, value[0], value[1]));
    p95s.push_back(interpolated(n, 95, value[2], value[3]));
  }
  out.mean_ttft_s = middle_95(means);
  out.p50_ttft_s = middle_95(p50s);
  out.p95_ttft_s = middle_95(p95s);
  return out;
}

}  // namespace kvstream::sim
