// The artifact's adaptation rule, exactly (docs/CACHEGEN.md §11.2, run_adaptation.py config_selection):
//   n_chunks = round(N / S)      Python's round: half to even; the trailing partial chunk still counts
//   budget   = SLO / n_chunks    static, no carry-over of slack
//   per chunk: the TRUE transfer time t of each level, best quality first; the first with
//   t < budget is chosen, else text (which the artifact charges a fixed chunk_delay).
// With SimConfig's artifact timing (fixed_recompute_s = chunk_delay, no decode cost, no pipelining,
// no query, no RTT) the simulated TTFT equals the artifact's `ttft` sum.
#include <algorithm>
#include <cmath>

#include "sim/policies/policies.h"

namespace kvstream::sim::policies {

namespace {
class CacheGenArtifact final : public Policy {
 public:
  CacheGenArtifact(std::vector<int> ladder, double n_chunks) : ladder_(std::move(ladder)), n_chunks_(n_chunks) {}

  int choose(const DecisionContext& context) override {
    const double budget_s = context.config.slo_s / n_chunks_;
    const double start_s = context.now_s + context.config.chunk_rtt_s;
    for (int level : ladder_) {
      const double transfer_s =
          context.oracle.transfer_end_s(start_s, context.costs.bits(context.chunk, level), context.chunk) - start_s;
      if (transfer_s < budget_s) return level;
    }
    return kText;
  }

 private:
  std::vector<int> ladder_;
  double n_chunks_;
};
}  // namespace

std::unique_ptr<Policy> make_cachegen_artifact(const Spec& spec, const ContextProfile& profile) {
  spec.only({"ladder"});
  const double ratio = static_cast<double>(profile.context_tokens()) / static_cast<double>(profile.chunk_tokens);
  const double n_chunks = std::max(1.0, std::nearbyint(ratio));  // default rounding mode: half to even
  return std::make_unique<CacheGenArtifact>(ladder_best_first(profile, spec.string("ladder", default_ladder(profile))),
                                            n_chunks);
}

}  // namespace kvstream::sim::policies
