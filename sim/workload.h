// Workloads: which requests arrive when, and for which context.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace kvstream::sim {

struct Request {
  double arrival_s = 0;
  size_t context = 0;  // index into the simulation's context profiles
};

// The most requests one workload may hold: each keeps its result in memory (measured: --requests 1e8
// ended in a bare std::bad_alloc).
inline constexpr size_t kMaxRequests = 1'000'000;
// Poisson arrival rates, requests/s: every arrival time stays finite.
inline constexpr double kMinRatePerS = 1e-6, kMaxRatePerS = 1e9;

// One request for context 0 at time 0.
std::vector<Request> single_request();
// `count` requests with exponential inter-arrival times of mean 1/rate_per_s (the first at its
// first draw, not at 0), each for a context drawn uniformly from n_contexts. Deterministic in
// `seed` on every platform (own transforms of std::mt19937_64 output, not std:: distributions).
// Throws std::invalid_argument for a rate that is not > 0 and finite, no contexts, or more than
// kMaxRequests requests.
std::vector<Request> poisson_requests(double rate_per_s, size_t count, size_t n_contexts, uint64_t seed);

}  // namespace kvstream::sim
