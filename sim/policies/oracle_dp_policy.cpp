// oracle-dp: the optimal plan of one request on the TRUE trace through the run's link model (an
// upper bound for every other policy when the request is alone on the link and the GPU; under
// contention it follows a plan made for an idle link and is no longer a bound).
//
// At its first decision (chunk 0 in the simulator) it plans every remaining chunk with the exact
// single-request model DecisionContext::oracle, starting from the request's own timeline, and then
// returns the planned choice at each chunk. The objective over complete plans, in order:
//   1. a plan that meets the SLO (TTFT = first token - arrival <= slo_s, the simulator's slo_met)
//      beats one that does not;
//   2. among plans that meet it: more quality (Timeline::quality_tokens), then smaller TTFT;
//   3. among plans that miss it: smaller TTFT, then more quality;
//   4. plans equal in (quality, TTFT) are interchangeable; the choice among them is deterministic.
// No heuristic decides the result: every shortcut below drops only partial plans that provably
// cannot beat a plan that is kept.
//
// Algorithm: a Pareto-frontier DP over chunks. Layer k holds nodes (a Timeline after the first k
// chunks, with a back-pointer: parent node, choice) that no other node of the layer dominates; A
// dominates B when A is no later in every time of the Timeline and has no less quality_tokens.
//
// Why dropping dominated nodes is exact. TimelineModel::advance (request_timeline.cpp) is monotone in
// the five times {next_issue, last_submit, decode_free, prefill_free, ready}: with A's times <= B's,
// for the same chunk and choice,
//   arrive = transfer(next_issue + chunk_rtt) is no later for A: a transfer alone on the link that
//            starts later cannot finish earlier (FIFO), on time-indexed and chunk-indexed traces;
//   submit = max(arrive, last_submit[, ready]);  end = max(submit, executor_free) + gpu_s (the same
//            gpu_s for both); executor free times, ready = max(ready, end) and next_issue (arrive or
//            ready) are maxima and sums of no-later terms;
// and quality_tokens grows by the same amount. By induction any suffix leaves A's final Timeline no
// later and no lower in quality than B's, and first_token_s = max(ready, prefill_free) + query
// prefill is monotone, so A's completion is at least as good as B's under the objective (meeting
// the SLO is monotone in TTFT). Hence the frontier always holds a prefix of an optimal plan. This
// holds for the doubles computed: max and adding the same number are monotone under rounding; the
// transfer must be monotone in its start in floating point as well, which solo_transfer_end_s is
// (BandwidthTrace::arrival_s is computed from the period count and offset, not start + duration).
//
// Canonical form (exact). Before a node with a chunk to go is compared, with s0 = next_issue +
// chunk_rtt (the next transfer's start, and every later arrival is >= s0):
//   - last_submit and decode_free become M = max(last_submit, decode_free, s0): the next level ends
//     at max(arrive, last_submit, decode_free) + gpu with arrive >= s0; the next text job waits for
//     ready >= M; after either, max(last_submit, decode_free) is unchanged (a level's end is >= its
//     submit, a text job's submit is >= ready >= M), and neither enters first_token_s;
//   - ready becomes max(ready, s0): ready only enters maxima with later times;
//   - prefill_free becomes ready (overlap: prefill_free <= ready and a text job waits for ready,
//     first_token_s takes the max with ready) or M (one executor, where it equals decode_free).
// No completion can tell a node from its canonical form, so nodes are compared on three times
// (next_issue, M, ready) and quality; the DP stores canonical nodes. Without pipelining
// next_issue = ready and the form reduces a node to (ready, quality).
//
// Bounds against the incumbent (the best complete plan known): a node is dropped when no completion
// can beat it. Limit: the SLO when the incumbent meets it, else the incumbent's TTFT.
//   - first_token_s(node) - arrival > limit (exact: ready and prefill_free only grow);
//   - incumbent meets the SLO and quality_tokens + the best quality of every remaining chunk is
//     below the incumbent's;
//   - relaxation bounds (class Relaxation), each with a relative margin of 1e-9 against rounding:
//     * TTFT: every remaining chunk uses the link (its bits, sent one after another from s0) and,
//       as text, the recompute chain (a text job starts after ready, one at a time). With theta the
//       recompute time of the text chunks, ready at the end >= max(F(theta), ready + theta), F the
//       arrival of the least link load that leaves theta of recompute (a fractional knapsack: text
//       for the chunks that save the most link per recompute second). The min over theta bounds
//       every completion's ready;
//     * quality (incumbent meets the SLO): with prices lambda per unit of link and mu per
//       recompute second, any completion that meets the SLO has quality <= q + sum over chunks of
//       max over choices (quality - lambda link - mu recompute) + lambda x link capacity until the
//       deadline + mu x recompute budget (Lagrangian relaxation). Prices: a small grid from the
//       profile's marginal rates; the capacity test is one transfer of the needed amount.
//     The link is modelled from probes of the transfer at the first start: chunk-independent (a
//     time-indexed trace: one transfer of the summed bits ends no later than sequential ones) or a
//     constant rate per chunk (chunk-indexed: link seconds add up); any other transfer gets no
//     relaxation bounds.
// Incumbents: two greedy plans from the start ("fast": each chunk the choice with the smallest TTFT
// bound; "quality": each chunk its best choice whose completion by the fast plan meets the SLO), a
// beam search (width 8) from a layer whenever the frontier outgrows twice its size at the last beam
// search (16 the first time), and the final layer, whose every completion is compared. Incumbents
// speed the search up; the result is the best complete plan seen, which is optimal.
//
// Bounded frontier (option frontier=K, default kOracleDpFrontier = 256; 0 = unbounded). Unbounded,
// the DP is exact whatever the input but its frontier can grow exponentially: a few nodes per layer
// typically, ~12,000 at 40 chunks of a random instance with text in pipelined mode (4.7 s), so
// planning a 63-chunk context could take minutes. With K, a layer whose frontier exceeds K nodes is
// thinned by epsilon-dominance: quality is compared in buckets of width b (floor(quality / b)),
// b doubled from (quality range) / K until the frontier fits. A node dropped that way has a kept
// node no later in every time with quality > its own - b, so (by the dominance argument above,
// applied to the optimal plan's path) some kept path completes no later in every time with at most
// b less quality; over the layers the plan meets the SLO whenever the optimum does, has the
// optimum's TTFT when that misses the SLO, and has at least the optimum's quality less the sum of
// the b's (OracleDpPlan::quality_slack_tokens; a pruned node only ever yields to an incumbent at
// least as good). When the buckets reach the whole quality range, the time frontier alone is kept
// if it fits (slack: the range); when even it does not (K nodes incomparable in time alone), the K
// earliest-ready nodes are kept and the plan carries no guarantee (OracleDpPlan::truncated).
// Cost: each layer sorts and scans at most C x K candidates against at most K kept nodes, with
// O(log(range / resolution)) thinning passes: O(n x C x K^2) for n chunks and C choices, plus the
// relaxation tables' O(n^2 + n x C). Measured (`kvstream sim-bench`, oracle_dp_200_chunks_max_s):
// a 200-chunk context of varying chunks plans in under a second on one core of the development VM.
// On random 20-36-chunk instances that thinned, the plan's quality was 2-160 quality-tokens (up to
// ~4 %) below the exact optimum; pass frontier=0 when exactness matters more than time.
//
// Under the tcp link model (DecisionContext::oracle built by true_trace_model) every node carries
// the request's modelled TCP connection (sim/tcp/tcp_connection.h), and a transfer's end depends on it
// (window, threshold, idle time), so the dominance argument above no longer holds: a node with
// earlier times but a smaller window may finish later. There a node dominates another only when
// their windows are equal as well (KeptTimes), the plans of one choice for every chunk are
// incumbents too, and the DP's plan is then improved by local search (one chunk's choice changed,
// or two chunks' choices swapped, while a move beats it). The remaining difference (a congestion
// control's other state) makes it a heuristic that is exact in tests: on 300 random instances with
// tcp paths (cubic, reno, bbr, queues and round trips drawn at random) it matched brute force on
// every one, and on 1,000 more no online policy of 12 beat it on any request (400 of them run in
// tests/sim/test_planning_policies.cpp, TcpPlanning; without the local search 1 of 1,000 was beaten
// by 17 ms at equal quality). The bounds stay
// valid: they relax the link to the fluid capacity at the same trace time, and no TCP transfer ends
// before the fluid transfer of its bits. Every plan's times are exact (the connection's rounds).
//
// Stalled Timelines: on a trace without capacity a transfer never ends (arrive = +infinity); from
// then on next_issue is +infinity and every completion has TTFT = +infinity. Such a node is advanced
// with advance_arrived(..., +infinity), exactly what advance computes, without asking the transfer
// about an infinite start (solo_transfer_end_s rejects non-finite times). Comparisons with infinity
// are well defined, so the DP needs nothing else.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "sim/policies/policies.h"

namespace kvstream::sim::policies {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// One node of the DP: a Timeline after some prefix of the plan, and how it was reached.
struct Node {
  Timeline state;
  uint32_t parent = 0;  // index in the previous layer (unused in layer 0)
  int choice = kText;   // the choice for the layer's chunk
};

// The times of a frontier being built, one array per time, for the DP's inner loop: is a candidate
// dominated by a kept node? On canonical states (Planner::canonicalize) decode_free equals
// last_submit and prefill_free equals ready or last_submit, so three times and the quality decide
// dominance; candidates come in quality order, so every kept node has at least the candidate's.
class KeptTimes {
 public:
  void add(const Timeline& t) {
    if (size_ % kBlock == 0)  // NaN padding: comparisons with NaN are false, so it dominates nothing
      for (auto* times : {&next_issue_, &last_submit_, &ready_, &window_}) times->resize(size_ + kBlock, std::nan(""));
    next_issue_[size_] = t.next_issue_s, last_submit_[size_] = t.last_submit_s, ready_[size_] = t.ready_s;
    window_[size_] = window_packets(t);
    ++size_;
  }
  // True when a kept node is no later than `t` in every time and has no smaller window; blocks of
  // kBlock without branches.
  bool dominate(const Timeline& t) const {
    const double window = window_packets(t);
    for (size_t block = 0; block < size_; block += kBlock) {
      bool any = false;
      for (size_t i = block; i < block + kBlock; ++i)
        any |= (next_issue_[i] <= t.next_issue_s) & (last_submit_[i] <= t.last_submit_s) & (ready_[i] <= t.ready_s) &
               (window_[i] == window);
      if (any) return true;
    }
    return false;
  }

 private:
  // The connection's window (0 without a connection: every node compares equal there).
  static double window_packets(const Timeline& t) {
    return t.connection ? t.connection->congestion_control().window_packets() : 0.0;
  }

  static constexpr size_t kBlock = 8;
  size_t size_ = 0;
  std::vector<double> next_issue_, last_submit_, ready_, window_;
};

// The quality class a node is compared in: its quality_tokens when exact (bucket 0), else the
// bucket floor(quality_tokens / bucket) of an epsilon-thinned layer (see "Bounded frontier").
double quality_class(const Timeline& t, double bucket) {
  return bucket > 0 ? std::floor(t.quality_tokens / bucket) : t.quality_tokens;
}

// A total order in which a dominating state never comes after one it dominates: quality class
// descending, then the times ascending, then quality descending. Ties keep the candidates'
// generation order (stable sort).
bool comes_first(const Timeline& a, const Timeline& b, double bucket) {
  const double class_a = quality_class(a, bucket), class_b = quality_class(b, bucket);
  if (class_a != class_b) return class_a > class_b;
  if (a.next_issue_s != b.next_issue_s) return a.next_issue_s < b.next_issue_s;
  if (a.ready_s != b.ready_s) return a.ready_s < b.ready_s;
  if (a.last_submit_s != b.last_submit_s) return a.last_submit_s < b.last_submit_s;
  return a.quality_tokens > b.quality_tokens;
}

// Relaxations of the remaining chunks that bound every completion of a node (header comment,
// "Relaxation bounds"): each remaining chunk needs link capacity (its bits) and, as text, a turn on
// the recompute chain. Built once per plan in O(chunks^2 + chunks x choices x prices).
class Relaxation {
 public:
  Relaxation(const DecisionContext& context, const std::vector<int>& choices)
      : context_(context), first_(context.chunk), n_(context.costs.chunks()), width_(choices.size()) {
    link_ = probe_link();
    if (link_ == Link::kUnknown) return;
    const CostModel& costs = context.costs;
    // options_[(c - first) x width + i]: chunk c sent with choices[i]. Link cost is in bits (shared
    // link) or seconds (per-chunk rates).
    for (size_t c = first_; c < n_; ++c) {
      const double scale = link_ == Link::kShared ? 1.0 : seconds_per_bit_[c - first_];
      for (int choice : choices)
        options_.push_back({costs.bits(c, choice) * scale, choice == kText ? costs.recompute_s(c) : 0.0,
                            costs.quality(c, choice) * costs.tokens(c), choice == kText});
    }
    build_ready_bound_tables();
    build_quality_bound_tables();
  }

  // Lower bound on `ready` after the last chunk for a canonical `state` whose next chunk is `next`:
  // min over text recompute time theta of max(F(theta), G(theta)), F the last arrival when the
  // link carries the least that leaves theta of recompute, G = ready + theta (see header).
  double ready_bound_s(const Timeline& state, size_t next) const {
    const double s0 = state.next_issue_s + context_.config.chunk_rtt_s;
    if (link_ == Link::kUnknown || !std::isfinite(s0)) return state.ready_s;
    const Breakpoint* points = breakpoints_.data() + breakpoint_begin_[next - first_];
    const size_t count = breakpoint_begin_[next - first_ + 1] - breakpoint_begin_[next - first_];
    const auto f = [&](size_t i) { return link_end_s(s0, points[i].link, next); };
    const auto g = [&](size_t i) { return state.ready_s + points[i].theta_s; };
    // F - G decreases along the breakpoints: find the first i with F(i) <= G(i).
    size_t lo = 0, hi = count;
    while (lo < hi) {
      const size_t mid = (lo + hi) / 2;
      if (f(mid) <= g(mid))
        hi = mid;
      else
        lo = mid + 1;
    }
    if (lo == count) return f(count - 1);  // even all savings leave the link last
    if (lo == 0) return g(0);
    // Between breakpoints lo-1 and lo, F >= F(lo) and G >= G(lo-1); beyond them one is larger.
    return std::max(f(lo), g(lo - 1));
  }

  // True when no completion of the canonical `state` (next chunk `next`) whose KV is ready by
  // ready_limit_s reaches `quality_tokens` (Lagrangian bound, see header); false when unsure.
  bool quality_out_of_reach(const Timeline& state, size_t next, double ready_limit_s, double quality_tokens) const {
    const double s0 = state.next_issue_s + context_.config.chunk_rtt_s;
    if (link_ == Link::kUnknown || !std::isfinite(s0)) return false;
    const double recompute_budget_s = ready_limit_s - state.ready_s;
    if (recompute_budget_s < 0) return false;  // the TTFT bound decides this node
    // With prices (lambda, mu): quality <= q + mu x recompute budget + suffix value + lambda x
    // link capacity. Out of reach when the capacity is below `needed`; the largest `needed` decides.
    double needed = -kInf;
    for (size_t p = 0; p < prices_.size(); ++p) {
      const double short_by = quality_tokens - state.quality_tokens - prices_[p].mu * recompute_budget_s -
                              suffix_value_[(next - first_) * prices_.size() + p];
      if (!(short_by > 1e-9 * std::abs(quality_tokens))) continue;
      if (prices_[p].lambda == 0) return true;
      needed = std::max(needed, short_by / prices_[p].lambda);
    }
    // The link capacity from s0 to ready_limit_s is below `needed` iff sending `needed` ends later.
    return needed > 0 && link_end_s(s0, needed, next) > ready_limit_s + 1e-9 * std::abs(ready_limit_s);
  }

 private:
  // How the transfer depends on the chunk, from probes at the request's first transfer start:
  // kShared, it does not (a time-indexed trace: one transfer of the sum of the bits ends no later
  // than sequential ones); kPerChunk, each chunk has its own constant rate (a chunk-indexed trace:
  // the link seconds add up); kUnknown, neither (or no capacity): no relaxation bounds.
  enum class Link { kShared, kPerChunk, kUnknown };

  struct Option {
    double link, recompute_s, quality_tokens;
    bool text;
  };
  struct Breakpoint {
    double theta_s, link;  // text recompute time; the least link cost of the rest
  };
  struct Prices {
    double lambda, mu;  // per unit of link cost, per recompute second
  };

  Link probe_link() {
    const double x0 = context_.timeline.next_issue_s + context_.config.chunk_rtt_s, x1 = x0 + 0.5;
    const double b0 = 1e6, b1 = 3e6;
    if (!std::isfinite(x0)) return Link::kUnknown;
    bool shared = true, per_chunk = true;
    double d0_first = 0, d1_first = 0;
    for (size_t c = first_; c < n_; ++c) {
      const double d0 = context_.oracle.transfer_end_s(x0, b0, c) - x0;
      const double d1 = context_.oracle.transfer_end_s(x1, b1, c) - x1;
      if (!std::isfinite(d0) || !std::isfinite(d1) || !(d0 > 0)) return Link::kUnknown;
      if (c == first_) d0_first = d0, d1_first = d1;
      shared = shared && d0 == d0_first && d1 == d1_first;
      per_chunk = per_chunk && std::abs(d1 - 3 * d0) <= 1e-9 * d1;
      seconds_per_bit_.push_back(d0 / b0);
    }
    return shared ? Link::kShared : per_chunk ? Link::kPerChunk : Link::kUnknown;
  }

  // When `link` (bits or seconds) sent from s0 has arrived, at the earliest.
  double link_end_s(double s0, double link, size_t chunk) const {
    return link_ == Link::kShared ? context_.oracle.transfer_end_s(s0, link, chunk) : s0 + link;
  }

  // The ready bound's breakpoints, per suffix k of the chunks: with text recompute time theta, the
  // least link cost of the chunks left as levels is a fractional knapsack (text first for the
  // chunks that save the most link cost per recompute second), linear between breakpoints.
  void build_ready_bound_tables() {
    struct Saver {
      size_t chunk;
      double saving, recompute_s;
    };
    std::vector<double> cheapest_level(n_ - first_, kInf);
    std::vector<Saver> savers;
    for (size_t c = first_; c < n_; ++c) {
      const Option* text = nullptr;
      for (size_t i = 0; i < width_; ++i) {
        const Option& o = options_[(c - first_) * width_ + i];
        if (o.text)
          text = &o;
        else
          cheapest_level[c - first_] = std::min(cheapest_level[c - first_], o.link);
      }
      if (text && text->link < cheapest_level[c - first_])
        savers.push_back({c, cheapest_level[c - first_] - text->link, text->recompute_s});
    }
    // saving_a / recompute_a > saving_b / recompute_b without dividing by zero; ties: chunk order
    std::stable_sort(savers.begin(), savers.end(), [](const Saver& a, const Saver& b) {
      return a.saving * b.recompute_s > b.saving * a.recompute_s;
    });
    for (size_t k = first_; k < n_; ++k) {
      breakpoint_begin_.push_back(breakpoints_.size());
      double link = 0;
      for (size_t c = k; c < n_; ++c) link += cheapest_level[c - first_];
      double theta_s = 0;
      breakpoints_.push_back({theta_s, link});
      for (const Saver& saver : savers)
        if (saver.chunk >= k) {
          theta_s += saver.recompute_s;
          link = std::max(0.0, link - saver.saving);
          breakpoints_.push_back({theta_s, link});
        }
    }
    breakpoint_begin_.push_back(breakpoints_.size());
  }

  // The quality bound's prices: lambda and mu each 0 or 1/2, 1, 2 times the median marginal rate
  // in the profile (quality per extra link cost between a chunk's levels; text's extra quality per
  // recompute second), and per suffix and prices the sum of each chunk's best priced quality.
  void build_quality_bound_tables() {
    std::vector<double> link_rates, recompute_rates;
    for (size_t c = 0; c < n_ - first_; ++c)
      for (size_t i = 0; i < width_; ++i)
        for (size_t j = 0; j < width_; ++j) {
          const Option &a = options_[c * width_ + i], &b = options_[c * width_ + j];
          if (a.quality_tokens <= b.quality_tokens || b.text) continue;
          if (!a.text && a.link > b.link)
            link_rates.push_back((a.quality_tokens - b.quality_tokens) / (a.link - b.link));
          if (a.text && a.recompute_s > 0)
            recompute_rates.push_back((a.quality_tokens - b.quality_tokens) / a.recompute_s);
        }
    const auto grid = [](std::vector<double>& rates) {
      std::vector<double> values = {0.0};
      if (rates.empty()) return values;
      std::nth_element(rates.begin(), rates.begin() + rates.size() / 2, rates.end());
      const double median = rates[rates.size() / 2];
      for (double factor : {0.5, 1.0, 2.0}) values.push_back(factor * median);
      return values;
    };
    for (double lambda : grid(link_rates))
      for (double mu : grid(recompute_rates)) prices_.push_back({lambda, mu});
    suffix_value_.assign((n_ - first_ + 1) * prices_.size(), 0.0);
    for (size_t c = n_ - first_; c-- > 0;)
      for (size_t p = 0; p < prices_.size(); ++p) {
        double best = -kInf;
        for (size_t i = 0; i < width_; ++i) {
          const Option& o = options_[c * width_ + i];
          best = std::max(best, o.quality_tokens - prices_[p].lambda * o.link - prices_[p].mu * o.recompute_s);
        }
        suffix_value_[c * prices_.size() + p] = suffix_value_[(c + 1) * prices_.size() + p] + best;
      }
  }

  const DecisionContext& context_;
  const size_t first_, n_, width_;
  Link link_ = Link::kUnknown;
  std::vector<double> seconds_per_bit_;  // per remaining chunk (kPerChunk)
  std::vector<Option> options_;
  std::vector<Breakpoint> breakpoints_;  // suffix k: [breakpoint_begin_[k - first], ..[k - first + 1])
  std::vector<size_t> breakpoint_begin_;
  std::vector<Prices> prices_;
  std::vector<double> suffix_value_;  // [(k - first) x prices + p]
};

class Planner {
 public:
  Planner(const DecisionContext& context, const std::vector<int>& choices, size_t max_frontier)
      : max_frontier_(max_frontier),
        context_(context),
        model_(context.oracle),
        costs_(context.costs),
        choices_(choices),
        first_(context.chunk),
        relaxation_(context, choices) {
    // best_rest_[k] = the most quality_tokens that chunks first+k..n-1 can add.
    const size_t n = costs_.chunks();
    best_rest_.assign(n - first_ + 1, 0.0);
    for (size_t c = n; c-- > first_;) {
      double best = -kInf;
      for (int choice : choices_) best = std::max(best, costs_.quality(c, choice) * costs_.tokens(c));
      best_rest_[c - first_] = best_rest_[c - first_ + 1] + best;
    }
  }

  // The optimal choices for chunks first..n-1 (empty when there are none).
  std::vector<int> plan() {
    const size_t n = costs_.chunks();
    if (first_ >= n) return {};
    layers_.push_back({Node{context_.timeline, 0, kText}});
    offer_quality_greedy();
    if (context_.timeline.connection) offer_constant_plans();
    std::vector<Node> candidates;
    std::vector<uint32_t> order;
    for (size_t chunk = first_; chunk + 1 < n; ++chunk) {
      const std::vector<Node>& frontier = layers_.back();
      candidates.clear();
      for (uint32_t parent = 0; parent < frontier.size(); ++parent)
        for (int choice : choices_) {
          if (hopeless_before_transfer(frontier[parent].state, chunk, choice)) continue;
          Node node{advance(frontier[parent].state, chunk, choice), parent, choice};
          canonicalize(node.state);
          if (!hopeless(node.state, chunk + 1)) candidates.push_back(node);
        }
      std::vector<Node> next = pareto_frontier(candidates, 0, order, max_frontier_);
      if (max_frontier_ > 0 && next.size() > max_frontier_) next = thinned(candidates, order);
      // A wide frontier means weak bounds: look for a better incumbent and prune again.
      if (next.size() > beam_trigger_) {
        beam_trigger_ = 2 * next.size();
        improve_incumbent(next, chunk + 1);
        std::erase_if(next, [&](const Node& node) { return hopeless(node.state, chunk + 1); });
      }
      layers_.push_back(std::move(next));
    }
    // The last chunk: only the objective matters now, so every child of the frontier is compared.
    const std::vector<Node>& frontier = layers_.back();
    for (uint32_t parent = 0; parent < frontier.size(); ++parent)
      for (int choice : choices_) {
        const PlanScore candidate = outcome(advance(frontier[parent].state, n - 1, choice));
        if (candidate.better_than(incumbent_)) {
          incumbent_ = candidate;
          incumbent_plan_ = path_to(parent);
          incumbent_plan_.push_back(choice);
        }
      }
    if (context_.timeline.connection) improve_by_local_moves();
    return incumbent_plan_;
  }

  // Σ of the quality buckets of the thinned layers: the plan's quality is at least the optimum's
  // less this (0: exact), unless truncated().
  double quality_slack_tokens() const { return quality_slack_tokens_; }
  // Whether a layer kept only max_frontier of its nodes by time (no guarantee; see the header).
  bool truncated() const { return truncated_; }

 private:
  // The Pareto frontier of `candidates` with quality compared by class (quality_class): a node is
  // dropped when a kept one has no lower class and is no later in every time. In comes_first order
  // no candidate dominates one before it unless they are equal, so a candidate is kept iff no kept
  // one dominates it; dominance is transitive, so the kept set is the frontier, duplicates removed.
  // With a `limit` > 0 it stops once it has kept more than `limit` nodes (the caller then thins).
  std::vector<Node> pareto_frontier(const std::vector<Node>& candidates, double bucket, std::vector<uint32_t>& order,
                                    size_t limit = 0) const {
    order.resize(candidates.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return comes_first(candidates[a].state, candidates[b].state, bucket);
    });
    std::vector<Node> kept_nodes;
    KeptTimes kept;
    for (uint32_t index : order) {
      const Node& candidate = candidates[index];
      if (kept.dominate(candidate.state)) continue;
      kept.add(candidate.state);
      kept_nodes.push_back(candidate);
      if (limit > 0 && kept_nodes.size() > limit) break;
    }
    return kept_nodes;
  }

  // A layer whose exact frontier outgrew max_frontier_ (header, "Bounded frontier"): the frontier
  // with quality in buckets, the bucket doubled from (quality range) / max_frontier until it fits;
  // when even one bucket does not fit, the max_frontier_ earliest-ready nodes of it.
  std::vector<Node> thinned(const std::vector<Node>& candidates, std::vector<uint32_t>& order) {
    const auto [low, high] = std::minmax_element(candidates.begin(), candidates.end(), [](const Node& a, const Node& b) {
      return a.state.quality_tokens < b.state.quality_tokens;
    });
    const double range = high->state.quality_tokens - low->state.quality_tokens;
    double bucket = range / static_cast<double>(max_frontier_);
    if (bucket > 0)
      for (;; bucket *= 2) {
        std::vector<Node> next = pareto_frontier(candidates, bucket, order, max_frontier_);
        if (next.size() <= max_frontier_) {
          quality_slack_tokens_ += bucket;
          return next;
        }
        if (bucket > range) break;  // one or two buckets hold everything: buckets cannot help
      }
    // Every candidate in one class: its time frontier, a dropped node's quality at most `range`
    // above a kept one's; when even that outgrows the bound, the earliest-ready nodes of it.
    std::vector<Node> next = pareto_frontier(candidates, kInf, order);
    if (next.size() <= max_frontier_) {
      quality_slack_tokens_ += range;
      return next;
    }
    std::stable_sort(next.begin(), next.end(), [](const Node& a, const Node& b) {
      return a.state.ready_s != b.state.ready_s ? a.state.ready_s < b.state.ready_s
                                                : a.state.next_issue_s < b.state.next_issue_s;
    });
    next.resize(max_frontier_);
    truncated_ = true;
    return next;
  }

  Timeline advance(const Timeline& state, size_t chunk, int choice) const {
    // Stalled: see the header comment.
    return std::isfinite(state.next_issue_s) ? model_.advance(state, chunk, choice)
                                             : model_.advance_arrived(state, chunk, choice, kInf);
  }

  // The canonical form of a state with a chunk to go (see the header comment): last_submit and
  // decode_free become M = max(last_submit, decode_free, s0), ready becomes max(ready, s0), and
  // prefill_free becomes ready (overlap) or M (one executor). No completion can tell the difference.
  void canonicalize(Timeline& state) const {
    const double s0 = state.next_issue_s + context_.config.chunk_rtt_s;
    const double m = std::max({state.last_submit_s, state.decode_free_s, s0});
    state.last_submit_s = state.decode_free_s = m;
    state.ready_s = std::max(state.ready_s, s0);
    state.prefill_free_s = context_.config.overlap_decode_prefill ? state.ready_s : m;
  }

  // Under the tcp link model, where a transfer runs the connection's rounds: true when the child
  // is hopeless even with its transfer timed on the capacity alone, which no TCP transfer beats
  // (TimelineModel::transfer_end_s). Every bound in hopeless() only grows with the times, so the
  // exact child is hopeless too; this skips the rounds of the children the bounds prune.
  bool hopeless_before_transfer(const Timeline& state, size_t chunk, int choice) const {
    if (!state.connection || !std::isfinite(state.next_issue_s) || chunk + 1 >= costs_.chunks()) return false;
    const double start_s = state.next_issue_s + context_.config.chunk_rtt_s;
    Timeline lower = model_.advance_arrived(state, chunk, choice,
                                            model_.transfer_end_s(start_s, costs_.bits(chunk, choice), chunk));
    canonicalize(lower);
    return hopeless(lower, chunk + 1);
  }

  PlanScore outcome(const Timeline& final_state) const {
    const double ttft_s = model_.first_token_s(final_state) - context_.arrival_s;
    return {ttft_s <= context_.config.slo_s, ttft_s, final_state.quality_tokens};
  }

  // True when no completion of `state` (canonical; chunk `next_chunk` is next) can beat the
  // incumbent: its quality bound is below a plan that meets the SLO, or its TTFT bound exceeds
  // the SLO (when a plan meets it) or the incumbent's TTFT (when none does yet).
  bool hopeless(const Timeline& state, size_t next_chunk) const {
    double limit_s = incumbent_.ttft_s;
    if (incumbent_.meets_slo) {
      const double quality_bound = state.quality_tokens + best_rest_[next_chunk - first_];
      if (quality_bound + 1e-9 * std::abs(quality_bound) < incumbent_.quality) return true;
      limit_s = context_.config.slo_s;
    }
    if (std::isinf(limit_s)) return false;
    // first_token_s(state) is an exact bound; the relaxation bounds get a rounding margin.
    if (model_.first_token_s(state) - context_.arrival_s > limit_s) return true;
    const double bound_s = relaxation_.ready_bound_s(state, next_chunk) + costs_.query_prefill_s() - context_.arrival_s;
    if (bound_s - 1e-9 * std::abs(bound_s) > limit_s) return true;
    return incumbent_.meets_slo &&
           relaxation_.quality_out_of_reach(state, next_chunk,
                                            context_.arrival_s + context_.config.slo_s - costs_.query_prefill_s(),
                                            incumbent_.quality);
  }

  // The choices that lead to node `index` of the last layer.
  std::vector<int> path_to(uint32_t index) const {
    std::vector<int> path(layers_.size() - 1);
    for (size_t layer = layers_.size() - 1; layer > 0; --layer) {
      path[layer - 1] = layers_[layer][index].choice;
      index = layers_[layer][index].parent;
    }
    return path;
  }

  void offer(const std::vector<int>& plan, const Timeline& final_state) {
    const PlanScore candidate = outcome(final_state);
    if (!candidate.better_than(incumbent_)) return;
    incumbent_ = candidate;
    incumbent_plan_ = plan;
  }

  // Times `plan` (choices for chunks first..) from `state`, the timeline before chunk first + from,
  // and makes it the incumbent when it beats it. Exact shortcuts: a plan whose quality (known
  // before timing, summed as advance sums it) loses to an incumbent that meets the SLO is not
  // timed, and timing stops once the first token is later than the limit (the SLO, or the
  // incumbent's TTFT while it misses the SLO): first_token_s only grows as chunks are added.
  bool offer_from(const std::vector<int>& plan, size_t from, Timeline state) {
    const size_t count = costs_.chunks() - first_;
    double quality_tokens = state.quality_tokens;
    for (size_t k = from; k < count; ++k) quality_tokens += costs_.quality(first_ + k, plan[k]) * costs_.tokens(first_ + k);
    if (incumbent_.meets_slo && quality_tokens < incumbent_.quality) return false;
    const double limit_s = incumbent_.meets_slo ? context_.config.slo_s : incumbent_.ttft_s;
    for (size_t k = from; k < count; ++k) {
      state = advance(state, first_ + k, plan[k]);
      if (model_.first_token_s(state) - context_.arrival_s > limit_s) return false;
    }
    if (!outcome(state).better_than(incumbent_)) return false;
    offer(plan, state);
    return true;
  }

  // Under the tcp link model, where dominance is a heuristic (header): every plan of one choice for
  // all chunks, so that no fixed policy beats the plan.
  void offer_constant_plans() {
    for (int choice : choices_) offer_from(std::vector<int>(costs_.chunks() - first_, choice), 0, context_.timeline);
  }

  // Under the tcp link model (header): local search from the plan. A move changes one chunk's
  // choice, or swaps the choices of two chunks (other timing, and other quality when the chunks'
  // tokens differ); each move is timed exactly (offer_from) and kept when it beats the plan, until
  // no move does.
  void improve_by_local_moves() {
    const size_t n = costs_.chunks(), count = n - first_;
    std::vector<Timeline> before(count);  // before[k]: the timeline before chunk first + k
    for (bool improved = true; improved;) {
      improved = false;
      Timeline state = context_.timeline;
      for (size_t k = 0; k < count; ++k) before[k] = state, state = advance(state, first_ + k, incumbent_plan_[k]);
      std::vector<int> plan = incumbent_plan_;
      for (size_t k = 0; k < count && !improved; ++k) {
        for (int choice : choices_) {
          if (choice == plan[k]) continue;
          std::swap(plan[k], choice);
          improved = offer_from(plan, k, before[k]);
          std::swap(plan[k], choice);
          if (improved) break;
        }
        for (size_t j = k + 1; j < count && !improved; ++j) {
          if (plan[j] == plan[k]) continue;
          std::swap(plan[k], plan[j]);
          improved = offer_from(plan, k, before[k]);
          std::swap(plan[k], plan[j]);
        }
      }
    }
  }

  // Two incumbents from the starting timeline. "Fast": each chunk with the choice whose
  // remaining-work bound is smallest (then ready earliest, then the better choice). "Quality": each
  // chunk with its best choice whose completion by the fast plan meets the SLO.
  void offer_quality_greedy() {
    const size_t n = costs_.chunks();
    std::vector<int> fast;
    Timeline state = context_.timeline;
    for (size_t c = first_; c < n; ++c) {
      Timeline best;
      double best_bound_s = kInf;
      int best_choice = choices_.front();
      for (int choice : choices_) {
        Timeline next = advance(state, c, choice);
        const double next_bound_s =
            c + 1 < n ? (canonicalize(next), relaxation_.ready_bound_s(next, c + 1)) : next.ready_s;
        if (choice == choices_.front() || next_bound_s < best_bound_s ||
            (next_bound_s == best_bound_s && next.ready_s < best.ready_s))
          best = next, best_bound_s = next_bound_s, best_choice = choice;
      }
      state = best;
      fast.push_back(best_choice);
    }
    offer(fast, state);
    if (!incumbent_.meets_slo) return;  // the quality plan below meets the SLO only when the fast one does
    std::vector<int> plan;
    std::vector<int> by_quality;
    state = context_.timeline;
    for (size_t c = first_; c < n; ++c) {
      by_quality = choices_;
      std::stable_sort(by_quality.begin(), by_quality.end(),
                       [&](int a, int b) { return costs_.quality(c, a) > costs_.quality(c, b); });
      for (int choice : by_quality) {
        // Whether the fast plan completes it within the SLO (timing stops once it cannot).
        Timeline tail = advance(state, c, choice);
        for (size_t rest = c + 1; rest < n && outcome(tail).meets_slo; ++rest) tail = advance(tail, rest, fast[rest - first_]);
        if (outcome(tail).meets_slo || choice == fast[c - first_]) {
          plan.push_back(choice);
          state = advance(state, c, choice);
          break;
        }
      }
    }
    offer(plan, state);
  }

  // Beam search from `nodes`, the layer being built (chunk `next` is theirs to go): at each chunk
  // it keeps the kBeamWidth children that are not hopeless with the most quality (then the
  // smallest TTFT bound) while a plan meets the SLO, else with the smallest TTFT bound (then the
  // most quality), and offers the best complete plan it reaches.
  void improve_incumbent(const std::vector<Node>& nodes, size_t next) {
    struct Entry {
      Timeline state;
      uint32_t root;          // index in `nodes`
      std::vector<int> tail;  // choices for chunks next..
      double bound_s;
    };
    const size_t n = costs_.chunks();
    // While a plan meets the SLO the search is after quality, else after TTFT.
    const auto keep_best = [&](std::vector<Entry>& entries) {
      std::stable_sort(entries.begin(), entries.end(), [&](const Entry& a, const Entry& b) {
        const bool by_quality = incumbent_.meets_slo && a.state.quality_tokens != b.state.quality_tokens;
        if (by_quality) return a.state.quality_tokens > b.state.quality_tokens;
        if (a.bound_s != b.bound_s) return a.bound_s < b.bound_s;
        return a.state.quality_tokens > b.state.quality_tokens;
      });
      if (entries.size() > kBeamWidth) entries.resize(kBeamWidth);
    };
    std::vector<Entry> beam;
    for (uint32_t i = 0; i < nodes.size(); ++i)
      beam.push_back({nodes[i].state, i, {}, relaxation_.ready_bound_s(nodes[i].state, next)});
    keep_best(beam);
    for (size_t chunk = next; chunk < n; ++chunk) {
      std::vector<Entry> children;
      for (const Entry& entry : beam)
        for (int choice : choices_) {
          Entry child{advance(entry.state, chunk, choice), entry.root, entry.tail, 0};
          child.tail.push_back(choice);
          if (chunk + 1 < n) {
            canonicalize(child.state);
            if (hopeless(child.state, chunk + 1)) continue;
            child.bound_s = relaxation_.ready_bound_s(child.state, chunk + 1);
          }
          children.push_back(std::move(child));
        }
      if (chunk + 1 < n) {
        keep_best(children);
        beam = std::move(children);
        continue;
      }
      for (const Entry& entry : children) {
        const PlanScore candidate = outcome(entry.state);
        if (!candidate.better_than(incumbent_)) continue;
        incumbent_ = candidate;
        incumbent_plan_ = path_to(nodes[entry.root].parent);
        incumbent_plan_.push_back(nodes[entry.root].choice);
        incumbent_plan_.insert(incumbent_plan_.end(), entry.tail.begin(), entry.tail.end());
      }
    }
  }

  static constexpr size_t kBeamWidth = 8;

  const size_t max_frontier_;  // 0: unbounded (exact)
  double quality_slack_tokens_ = 0;
  bool truncated_ = false;

  const DecisionContext& context_;
  const TimelineModel& model_;
  const CostModel& costs_;
  const std::vector<int>& choices_;
  const size_t first_;
  const Relaxation relaxation_;
  std::vector<double> best_rest_;
  // layers_[k]: the frontier after chunks first..first+k-1 (layers_[0] is the starting timeline).
  std::vector<std::vector<Node>> layers_;
  // The best complete plan known so far; the final layer's comparison makes it the optimum.
  PlanScore incumbent_;
  std::vector<int> incumbent_plan_;
  size_t beam_trigger_ = 16;  // frontier size that starts the next beam search
};

class OracleDp final : public Policy {
 public:
  OracleDp(std::vector<int> choices, size_t max_frontier) : choices_(std::move(choices)), max_frontier_(max_frontier) {}

  int choose(const DecisionContext& context) override {
    if (plan_.empty()) {
      first_chunk_ = context.chunk;
      plan_ = plan_oracle_dp(context, choices_, max_frontier_).choices;
    }
    if (context.chunk < first_chunk_ || context.chunk - first_chunk_ >= plan_.size())
      throw std::logic_error("oracle-dp: asked for chunk " + std::to_string(context.chunk) + " outside its plan");
    return plan_[context.chunk - first_chunk_];
  }

 private:
  std::vector<int> choices_;  // ladder best first, then text when allowed
  size_t max_frontier_;
  size_t first_chunk_ = 0;
  std::vector<int> plan_;  // plan_[k] is the choice for chunk first_chunk_ + k
};

}  // namespace

OracleDpPlan plan_oracle_dp(const DecisionContext& context, const std::vector<int>& choices, size_t max_frontier) {
  Planner planner(context, choices, max_frontier);
  std::vector<int> plan = planner.plan();
  return {std::move(plan), planner.quality_slack_tokens(), planner.truncated()};
}

std::unique_ptr<Policy> make_oracle_dp(const Spec& spec, const ContextProfile& profile) {
  spec.only({"ladder", "text", "frontier"});
  std::vector<int> choices = ladder_best_first(profile, spec.string("ladder", default_ladder(profile)));
  if (text_allowed(spec)) choices.push_back(kText);
  const int frontier = spec.integer("frontier", kOracleDpFrontier, 0, 1'000'000);  // 0: unbounded (exact)
  return std::make_unique<OracleDp>(std::move(choices), static_cast<size_t>(frontier));
}

}  // namespace kvstream::sim::policies
