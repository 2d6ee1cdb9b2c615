// The paper's rule (docs/CACHEGEN.md §11.1): throughput estimated from this request's past transfers;
// the best level whose remaining chunks all fit in the remaining budget SLO - elapsed at that
// throughput; if none fits, text when recomputing this chunk beats sending it at the lowest level.
// Chunk 0 has no measurement: it goes at `first` (default: the middle of the ladder).
#include "sim/policies/policies.h"

namespace kvstream::sim::policies {

namespace {
class CacheGen final : public Policy {
 public:
  CacheGen(std::vector<int> ladder, int first, std::unique_ptr<ThroughputEstimator> estimator, bool text)
      : ladder_(std::move(ladder)), first_(first), estimator_(std::move(estimator)), text_(text) {}

  int choose(const DecisionContext& context) override {
    const auto estimate_bps = estimator_->estimate_bps(context.history);
    if (!estimate_bps) return first_;
    const double remaining_s = context.deadline_s() - context.now_s;
    const auto& costs = context.costs;
    for (int level : ladder_) {
      double bits = 0;
      for (size_t c = context.chunk; c < costs.chunks(); ++c) bits += costs.bits(c, level);
      if (bits / *estimate_bps <= remaining_s) return level;
    }
    const int lowest = ladder_.back();
    if (text_ && costs.recompute_s(context.chunk) < costs.bits(context.chunk, lowest) / *estimate_bps) return kText;
    return lowest;
  }

 private:
  std::vector<int> ladder_;
  int first_;
  std::unique_ptr<ThroughputEstimator> estimator_;
  bool text_;
};
}  // namespace

std::unique_ptr<Policy> make_cachegen(const Spec& spec, const ContextProfile& profile) {
  spec.only({"estimator", "window", "alpha", "first", "ladder", "text"});
  auto ladder = ladder_best_first(profile, spec.string("ladder", default_ladder(profile)));
  const int first = spec.has("first") ? profile.level_index(spec.string("first", "")) : ladder[ladder.size() / 2];
  auto estimator = make_estimator(spec.string("estimator", "last"), static_cast<int>(spec.number("window", 5)),
                                  spec.number("alpha", 0.5));
  return std::make_unique<CacheGen>(std::move(ladder), first, std::move(estimator), text_allowed(spec));
}

}  // namespace kvstream::sim::policies
