// The worked example of docs/POLICIES.md "Writing a policy in C++": a policy class, its factory and
// its registry entry, then chosen by spec like a built-in one. Keep the two in step.
#include <gtest/gtest.h>

#include "sim/policies/policies.h"
#include "sim/policy.h"
#include "sim/simulation.h"
#include "tests/sim/sim_test_support.h"

namespace kvstream::sim {
namespace {

class EvenSplit final : public Policy {
 public:
  explicit EvenSplit(std::vector<int> ladder) : ladder_(std::move(ladder)) {}
  int choose(const DecisionContext& context) override {
    if (context.history.empty()) return ladder_.back();  // no measurement yet: the smallest level
    const double rate_bps = context.history.back().throughput_bps();
    const double chunks_left = double(context.costs.chunks() - context.chunk);
    const double share_s = (context.deadline_s() - context.now_s) / chunks_left;
    for (const int level : ladder_)  // best quality first
      if (context.costs.bits(context.chunk, level) / rate_bps <= share_s) return level;
    return ladder_.back();
  }
 private:
  std::vector<int> ladder_;
};

void register_even_split() {
  register_policy({"even-split", "even-split[:ladder=cachegen]  the remaining budget split evenly over the "
                   "remaining chunks", /*oracle=*/false, Recompute::kNever,
                   [](const Spec& spec, const ContextProfile& profile) -> std::unique_ptr<Policy> {
                     spec.only({"ladder"});
                     return std::make_unique<EvenSplit>(
                         policies::ladder_best_first(profile, spec.string("ladder", "cachegen")));
                   },
                   ""});
}

// 4 chunks of 1, 2 or 4 MB on a constant 100 Mbit/s link, SLO 1 s: chunk 0 goes at the smallest
// level (0.08 s); then the shares are 0.92/3, 0.76/2 and 0.44/1 s, and the 4 MB level (0.32 s)
// fits the last two.
TEST(PolicyRegistryExample, EvenSplitIsChosenBySpecAndDecidesAsWorkedOut) {
  register_even_split();
  EXPECT_NE(policy_list_help().find("even-split[:ladder=cachegen]"), std::string::npos);
  SimulationInputs in;
  in.contexts = {test::hand_profile(4, 1000, {1e6, 2e6, 4e6}, {0, 0, 0}, {0.9, 0.95, 0.99})};
  in.trace = std::make_shared<const traces::BandwidthTrace>(test::gbps_trace({{1000, 0.1}}));
  in.policy = "even-split";
  const auto results = simulate(in);
  EXPECT_EQ(results[0].choices, (std::vector<std::string>{"cachegen:1", "cachegen:2", "cachegen:3", "cachegen:3"}));
  EXPECT_NEAR(results[0].ttft_s, 0.88, 1e-9);
  in.policy = "even-split:horizon=3";
  EXPECT_THROW(simulate(in), std::invalid_argument);
}

}  // namespace
}  // namespace kvstream::sim
