// mpc: model-predictive control over a short horizon, as in MPC video streaming (Yin et al.,
// SIGCOMM'15), with levels as the bitrate ladder and text as an extra rung with a compute cost
// (docs/CACHEGEN.md §11.4 "Planner"). A real sender: it sees only this request's past transfers.
//
// Before every chunk i (re-planning each time):
//   1. predict the throughput r with the estimator on the predictor's samples (sim/transfer_predictor.h:
//      the request's history, or under the tcp link model the capacities its transfers imply);
//      before the first sample use prior_gbps when given, else send the middle level of the ladder
//      (no prediction);
//   2. model the rest of the request with the predictor's TimelineModel: transfers at the constant
//      rate r (predictor=fluid), or through the request's modelled TCP connection on a path of
//      capacity r (predictor=link, the default; the same as fluid under the fluid link model), with
//      the same costs and config as the simulator, starting from the request's own timeline;
//   3. enumerate every choice sequence for chunks [i, i + horizon) (depth-first, sharing prefixes)
//      and complete chunks beyond the horizon with their cheapest option, to predict the TTFT:
//      the ladder level with the fewest bytes (ties: the better level), or text when text's
//      predicted time alone (its bits / r + its recompute) is smaller than that level's (bits / r +
//      decode);
//   4. among sequences whose predicted TTFT meets the SLO (TTFT <= slo_s) take the one with the most
//      quality over the horizon, then the smaller predicted TTFT; if none meets it, the smallest
//      predicted TTFT, then the most horizon quality; remaining ties: the first in enumeration order
//      (ladder best first, then text). Send its first choice.
// Branch-and-bound cuts the enumeration without changing its result: a prefix is skipped when no
// sequence through it can beat the best found so far, i.e. a lower bound of its predicted TTFT
// misses the SLO (or exceeds the best TTFT while none meets it), or its quality plus the best
// quality of the rest of the horizon is below the best feasible sequence's. TTFT bounds: the
// prefix's first_token_s, and its next transfer start plus the least link time of every remaining
// chunk at rate r; both bounds get a 1e-9 relative margin against rounding.
//
// A predicted rate of 0 (a stalled transfer in the window) makes every transfer end at +infinity, so
// every sequence misses the SLO with TTFT = infinity, and the tie-break sends the best quality.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

#include "sim/policies/policies.h"
#include "sim/transfer_predictor.h"

namespace kvstream::sim::policies {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// A capacity no path has (1 Pbit/s): transfers at it take as long as the connection's window says.
constexpr double kWindowLimitedBps = 1e15;

// One decision's search: the predicted model, the horizon and the best sequence so far.
class Search {
 public:
  Search(const DecisionContext& context, const std::vector<int>& choices, const std::vector<int>& ladder,
         size_t horizon, double rate_bps, const TransferPredictor& predictor)
      : context_(context),
        costs_(context.costs),
        choices_(choices),
        model_(predictor.model(context, rate_bps)),
        start_(predictor.start(context)),
        end_(std::min(context.chunk + horizon, context.costs.chunks())) {
    // The best quality each horizon chunk can add, summed from the back.
    best_rest_.assign(end_ - context.chunk + 1, 0.0);
    for (size_t c = end_; c-- > context.chunk;) {
      double best = -kInf;
      for (int choice : choices_) best = std::max(best, costs_.quality(c, choice) * costs_.tokens(c));
      best_rest_[c - context.chunk] = best_rest_[c - context.chunk + 1] + best;
    }
    // The tail beyond the horizon: the cheapest option of each chunk (header, step 3).
    const bool text = choices_.back() == kText;
    for (size_t c = end_; c < costs_.chunks(); ++c) {
      int level = ladder.front();
      for (int l : ladder)
        if (costs_.bits(c, l) < costs_.bits(c, level)) level = l;
      const auto predicted_s = [&](int choice) { return costs_.bits(c, choice) / rate_bps + costs_.gpu_s(c, choice); };
      tail_.push_back(text && predicted_s(kText) < predicted_s(level) ? kText : level);
    }
    // link_s_[k]: the least link time of chunks chunk+k.. (cheapest choice in the horizon, the tail
    // beyond), with the chunk RTT before every chunk but the first.
    const size_t n = costs_.chunks();
    link_s_.assign(n - context.chunk + 1, 0.0);
    for (size_t c = n; c-- > context.chunk;) {
      double bits = kInf;
      if (c >= end_)
        bits = costs_.bits(c, tail_[c - end_]);
      else
        for (int choice : choices_) bits = std::min(bits, costs_.bits(c, choice));
      const double seconds = bits > 0 ? bits / rate_bps : 0.0;  // +infinity when the rate is 0
      link_s_[c - context.chunk] =
          link_s_[c - context.chunk + 1] + seconds + (c + 1 < n ? context.config.chunk_rtt_s : 0.0);
    }
  }

  int best_first_choice() {
    visit(start_, context_.chunk, kText);
    return best_first_;
  }

 private:
  // Extends the sequence that led to `state` (chunk `chunk` is next; `first` is its first choice).
  void visit(const Timeline& state, size_t chunk, int first) {
    if (chunk == end_) return score_leaf(state, first);
    for (int choice : choices_) {
      const Timeline next = model_.advance(state, chunk, choice);
      if (!hopeless(next, chunk + 1)) visit(next, chunk + 1, chunk == context_.chunk ? choice : first);
    }
  }

  void score_leaf(const Timeline& horizon_state, int first) {
    Timeline state = horizon_state;
    for (size_t c = end_; c < costs_.chunks(); ++c) state = model_.advance(state, c, tail_[c - end_]);
    const double ttft_s = model_.first_token_s(state) - context_.arrival_s;
    const PlanScore score{ttft_s <= context_.config.slo_s, ttft_s, horizon_state.quality_tokens};
    if (score.better_than(best_)) best_ = score, best_first_ = first;
  }

  // True when no sequence through `state` (chunk `next_chunk` is next) can beat the best so far:
  // quality grows by at most best_rest_, and the first token comes no earlier than first_token_s
  // (times only grow) nor, while chunks remain, than the next transfer's start plus the rest's
  // least link time (the chunks are sent one after another at the predicted rate; a 1e-9 margin
  // covers rounding).
  bool hopeless(const Timeline& state, size_t next_chunk) const {
    double limit_s = best_.ttft_s;
    if (best_.meets_slo) {
      const double quality_bound = state.quality_tokens + best_rest_[next_chunk - context_.chunk];
      if (quality_bound + 1e-9 * std::abs(quality_bound) < best_.quality) return true;
      limit_s = context_.config.slo_s;
    }
    if (std::isinf(limit_s)) return false;
    if (model_.first_token_s(state) - context_.arrival_s > limit_s) return true;
    if (next_chunk == costs_.chunks()) return false;
    const double link_bound_s = state.next_issue_s + context_.config.chunk_rtt_s +
                                link_s_[next_chunk - context_.chunk] + costs_.query_prefill_s() - context_.arrival_s;
    return link_bound_s - 1e-9 * std::abs(link_bound_s) > limit_s;
  }

  const DecisionContext& context_;
  const CostModel& costs_;
  const std::vector<int>& choices_;
  const TimelineModel model_;
  const Timeline start_;           // the request now, with the predictor's connection
  const size_t end_;               // the horizon is chunks [context.chunk, end_)
  std::vector<double> best_rest_;  // best_rest_[k]: the most quality chunks chunk+k..end_-1 can add
  std::vector<int> tail_;          // tail_[k]: the choice predicted for chunk end_ + k
  std::vector<double> link_s_;     // link_s_[k]: least link time of chunks chunk+k.. (see constructor)
  PlanScore best_;  // over the horizon's quality
  int best_first_ = kText;
};

class Mpc final : public Policy {
 public:
  Mpc(std::vector<int> ladder, bool text, size_t horizon, std::unique_ptr<ThroughputEstimator> estimator,
      std::optional<double> prior_bps, TransferPredictor::Kind predictor)
      : ladder_(std::move(ladder)),
        choices_(ladder_),
        horizon_(horizon),
        estimator_(std::move(estimator)),
        prior_bps_(prior_bps),
        predictor_(predictor) {
    if (text) choices_.push_back(kText);
  }

  int choose(const DecisionContext& context) override {
    predictor_.observe(context);
    const std::span<const TransferSample> samples = predictor_.samples(context);
    const std::optional<double> rate_bps = samples.empty() ? prior_bps_ : estimator_->estimate_bps(samples);
    int choice;
    if (rate_bps) {
      choice = Search(context, choices_, ladder_, horizon_, *rate_bps, predictor_).best_first_choice();
    } else if (predictor_.models_connection(context)) {
      // No sample and no prior, with a modelled connection: a fresh connection's first round trips
      // are bound by slow start whatever the path's capacity, so plan as if only the window limited
      // the transfers, but with the capacity unknown, only between text and the ladder's smallest
      // level (as RobustMPC starts at the lowest bitrate).
      std::vector<int> cautious = {*std::min_element(ladder_.begin(), ladder_.end(), [&](int a, int b) {
        return context.costs.bits(context.chunk, a) < context.costs.bits(context.chunk, b);
      })};
      if (choices_.back() == kText) cautious.push_back(kText);
      choice = Search(context, cautious, cautious, horizon_, kWindowLimitedBps, predictor_).best_first_choice();
    } else {
      choice = ladder_[ladder_.size() / 2];  // the middle of the ladder (for an even count, the lower of the two)
    }
    predictor_.sent(context, choice);
    return choice;
  }

 private:
  std::vector<int> ladder_;   // best quality first
  std::vector<int> choices_;  // the ladder, then text when allowed
  size_t horizon_;
  std::unique_ptr<ThroughputEstimator> estimator_;
  std::optional<double> prior_bps_;
  TransferPredictor predictor_;
};

}  // namespace

std::unique_ptr<Policy> make_mpc(const Spec& spec, const ContextProfile& profile) {
  spec.only({"horizon", "estimator", "window", "alpha", "ladder", "text", "prior_gbps", "predictor"});
  const int horizon = spec.integer("horizon", 5, 1, 1'000'000);
  const int window = spec.integer("window", 5, 1, 1'000'000);
  std::optional<double> prior_bps;
  if (spec.has("prior_gbps")) {
    const double gbps = spec.number("prior_gbps", 0);
    if (!(gbps > 0)) spec.fail("option prior_gbps=" + spec.string("prior_gbps", "") + ": expected a number > 0");
    prior_bps = gbps * 1e9;
  }
  return std::make_unique<Mpc>(ladder_best_first(profile, spec.string("ladder", default_ladder(profile))), text_allowed(spec),
                               static_cast<size_t>(horizon),
                               make_estimator(spec.string("estimator", "robust"), window, spec.number("alpha", 0.5)),
                               prior_bps, predictor_option(spec, "link"));
}

}  // namespace kvstream::sim::policies
