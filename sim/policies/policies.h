// Factories of the registered policies (policy.cpp lists them with their help lines), and the
// ladder helper they share.
#pragma once
#include <limits>
#include <memory>
#include <vector>

#include "sim/policy.h"
#include "sim/transfer_predictor.h"

namespace kvstream::sim::policies {

// The levels of `profile` whose codec is `ladder` ("" = every level), best quality first: by mean
// quality over chunks, ties broken by larger size. Throws std::invalid_argument when none match.
std::vector<int> ladder_best_first(const ContextProfile& profile, const std::string& ladder);
// The default ladder option: "cachegen" when the profile has CacheGen levels, else "" (all levels).
std::string default_ladder(const ContextProfile& profile);
// The `predictor` option (sim/transfer_predictor.h): "link" or "fluid", `fallback` when absent.
TransferPredictor::Kind predictor_option(const Spec& spec, const std::string& fallback);

// The planners' objective (mpc over its horizon, oracle-dp over whole plans): a plan that meets the
// SLO (TTFT <= slo_s, the simulator's slo_met) beats one that does not; among those that meet it,
// more quality, then smaller TTFT; among those that miss it, smaller TTFT, then more quality.
struct PlanScore {
  bool meets_slo = false;
  double ttft_s = std::numeric_limits<double>::infinity();
  double quality = -std::numeric_limits<double>::infinity();  // below any real plan: an empty best loses

  bool better_than(const PlanScore& other) const {
    if (meets_slo != other.meets_slo) return meets_slo;
    if (meets_slo) return quality != other.quality ? quality > other.quality : ttft_s < other.ttft_s;
    return ttft_s != other.ttft_s ? ttft_s < other.ttft_s : quality > other.quality;
  }
};

// oracle-dp's plan for chunks context.chunk.. (oracle_dp_policy.cpp): the DP's layers hold at most
// max_frontier nodes (0: unbounded, exact and exponential in the worst case). A layer that
// outgrows it is thinned; the plan then meets the SLO whenever the optimum does, has its TTFT when
// the optimum misses the SLO, and has at least its quality less quality_slack_tokens, unless
// truncated (a layer whose times alone outgrew the bound: no guarantee).
struct OracleDpPlan {
  std::vector<int> choices;
  double quality_slack_tokens = 0;
  bool truncated = false;
};
inline constexpr int kOracleDpFrontier = 256;  // the default of the policy's option frontier
OracleDpPlan plan_oracle_dp(const DecisionContext& context, const std::vector<int>& choices, size_t max_frontier);

std::unique_ptr<Policy> make_fixed(const Spec& spec, const ContextProfile& profile);
std::unique_ptr<Policy> make_text(const Spec& spec, const ContextProfile& profile);
std::unique_ptr<Policy> make_quant8(const Spec& spec, const ContextProfile& profile);
std::unique_ptr<Policy> make_cachegen_artifact(const Spec& spec, const ContextProfile& profile);
std::unique_ptr<Policy> make_cachegen(const Spec& spec, const ContextProfile& profile);
std::unique_ptr<Policy> make_mpc(const Spec& spec, const ContextProfile& profile);
std::unique_ptr<Policy> make_oracle_dp(const Spec& spec, const ContextProfile& profile);
std::unique_ptr<Policy> make_external(const Spec& spec, const ContextProfile& profile);

}  // namespace kvstream::sim::policies
