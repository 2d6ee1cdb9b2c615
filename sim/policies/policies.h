// Factories of the registered policies (policy.cpp lists them with their help lines), and the
// ladder helper they share.
#pragma once
#include <memory>
#include <vector>

#include "policy.h"

namespace kvstream::sim::policies {

// The levels of `profile` whose codec is `ladder` ("" = every level), best quality first: by mean
// quality over chunks, ties broken by larger size. Throws std::invalid_argument when none match.
std::vector<int> ladder_best_first(const ContextProfile& profile, const std::string& ladder);
// The default ladder option: "cachegen" when the profile has CacheGen levels, else "" (all levels).
std::string default_ladder(const ContextProfile& profile);

std::unique_ptr<Policy> make_fixed(const PolicySpec& spec, const ContextProfile& profile);
std::unique_ptr<Policy> make_text(const PolicySpec& spec, const ContextProfile& profile);
std::unique_ptr<Policy> make_quant8(const PolicySpec& spec, const ContextProfile& profile);
std::unique_ptr<Policy> make_cachegen_artifact(const PolicySpec& spec, const ContextProfile& profile);
std::unique_ptr<Policy> make_cachegen(const PolicySpec& spec, const ContextProfile& profile);
std::unique_ptr<Policy> make_mpc(const PolicySpec& spec, const ContextProfile& profile);
std::unique_ptr<Policy> make_oracle_dp(const PolicySpec& spec, const ContextProfile& profile);

}  // namespace kvstream::sim::policies
