#include "sim/workload.h"

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

namespace kvstream::sim {

std::vector<Request> single_request() { return {Request{0, 0}}; }

std::vector<Request> poisson_requests(double rate_per_s, size_t count, size_t n_contexts, uint64_t seed) {
  if (!(rate_per_s > 0) || !std::isfinite(rate_per_s))
    throw std::invalid_argument("Poisson arrival rate must be > 0 requests/s, got " + std::to_string(rate_per_s));
  if (n_contexts == 0) throw std::invalid_argument("Poisson workload needs at least one context");
  if (count > kMaxRequests)
    throw std::invalid_argument("a workload of " + std::to_string(count) + " requests, more than the " +
                                std::to_string(kMaxRequests) + " one simulation holds");
  std::mt19937_64 rng(seed);
  // 53 random bits -> u in (0, 1]; -ln(u)/rate is exponential.
  auto unit = [&rng] { return (static_cast<double>(rng() >> 11) + 1.0) * 0x1.0p-53; };
  std::vector<Request> requests;
  double t_s = 0;
  for (size_t i = 0; i < count; ++i) {
    t_s += -std::log(unit()) / rate_per_s;
    requests.push_back({t_s, static_cast<size_t>(rng() % n_contexts)});
  }
  return requests;
}

}  // namespace kvstream::sim
