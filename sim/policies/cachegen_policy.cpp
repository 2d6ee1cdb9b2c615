// The paper's rule (docs/CACHEGEN.md §11.1): throughput estimated from this request's past transfers;
// the best level whose remaining chunks all fit in the remaining budget SLO - elapsed at that
// throughput; if none fits, text when recomputing this chunk beats sending it at the lowest level.
// Chunk 0 has no measurement: it goes at `first` (default: the middle of the ladder).
// The rule times the remaining chunks as bits / throughput (predictor=fluid, the paper's); with
// predictor=link, under the tcp link model, as the request's TCP connection would send them one after
// another on a path of that capacity, the throughput estimated from the capacities its past
// transfers imply (sim/transfer_predictor.h).
#include "sim/policies/policies.h"

namespace kvstream::sim::policies {

namespace {
class CacheGen final : public Policy {
 public:
  CacheGen(std::vector<int> ladder, int first, std::unique_ptr<ThroughputEstimator> estimator, bool text,
           TransferPredictor::Kind predictor)
      : ladder_(std::move(ladder)), first_(first), estimator_(std::move(estimator)), text_(text), predictor_(predictor) {}

  int choose(const DecisionContext& context) override {
    predictor_.observe(context);
    const int choice = decide(context);
    predictor_.sent(context, choice);
    return choice;
  }

 private:
  int decide(const DecisionContext& context) {
    const auto estimate_bps = estimator_->estimate_bps(predictor_.samples(context));
    if (!estimate_bps) return first_;
    const double remaining_s = context.deadline_s() - context.now_s;
    const auto& costs = context.costs;
    std::vector<double> bits(costs.chunks() - context.chunk);
    for (int level : ladder_) {
      for (size_t c = context.chunk; c < costs.chunks(); ++c) bits[c - context.chunk] = costs.bits(c, level);
      if (predictor_.send_s(context, bits, *estimate_bps) <= remaining_s) return level;
    }
    const int lowest = ladder_.back();
    const double lowest_s = predictor_.send_s(context, std::span(bits).first(1), *estimate_bps);
    if (text_ && costs.recompute_s(context.chunk) < lowest_s) return kText;
    return lowest;
  }

  std::vector<int> ladder_;
  int first_;
  std::unique_ptr<ThroughputEstimator> estimator_;
  bool text_;
  TransferPredictor predictor_;
};
}  // namespace

std::unique_ptr<Policy> make_cachegen(const Spec& spec, const ContextProfile& profile) {
  spec.only({"estimator", "window", "alpha", "first", "ladder", "text", "predictor"});
  auto ladder = ladder_best_first(profile, spec.string("ladder", default_ladder(profile)));
  const int first = spec.has("first") ? profile.level_index(spec.string("first", "")) : ladder[ladder.size() / 2];
  auto estimator = make_estimator(spec.string("estimator", "last"), static_cast<int>(spec.number("window", 5)),
                                  spec.number("alpha", 0.5));
  return std::make_unique<CacheGen>(std::move(ladder), first, std::move(estimator), text_allowed(spec),
                                    predictor_option(spec, "fluid"));
}

}  // namespace kvstream::sim::policies
