// A policy in another process (docs/POLICIES.md "Writing a policy in any language"): kvstream sends
// it JSON lines: a "context" message the first time a context's table is needed (what a sender knows
// of every chunk: its tokens, and each option's bits, quality and GPU seconds), a "request" message
// when a request's first chunk is decided, a "decide" message per chunk (the time, the budget left
// and the transfers finished since the last one) answered by one line {"choice": NAME}, and an "end"
// message when the request is done. The program runs once per (thread, command) and serves every
// request of that thread in turn, across runs; requests in flight together are told apart by their
// "request" number.
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "common/process.h"
#include "sim/policies/policies.h"

namespace kvstream::sim::policies {

namespace {

using nlohmann::json;

// The program's command line, split at spaces: no shell reads it (common/process.h).
std::vector<std::string> command_words(const Spec& spec) {
  std::vector<std::string> words;
  std::istringstream text(spec.string("cmd", ""));
  for (std::string word; text >> word;) words.push_back(word);
  if (words.empty()) spec.fail("option cmd: expected the program to run, e.g. cmd=\"python3 my_policy.py\"");
  return words;
}

// The programs of this thread, by command line; a program that failed is started again when next
// asked for.
struct Partner {
  std::unique_ptr<common::LineProcess> process;
  uint64_t requests = 0;                       // numbers the requests this program has been told of
  std::map<std::string, uint64_t> contexts;  // the tables it has been told of (as sent) and their numbers
};

Partner& partner(const std::vector<std::string>& command) {
  thread_local std::map<std::vector<std::string>, Partner> partners;
  Partner& p = partners[command];
  if (!p.process) {
    p.process = std::make_unique<common::LineProcess>(command);
    p.requests = 0;
    p.contexts.clear();
  }
  return p;
}

class External final : public Policy {
 public:
  External(Spec spec, std::vector<std::string> command, std::vector<int> options, double timeout_s)
      : spec_(std::move(spec)), command_(std::move(command)), options_(std::move(options)), timeout_s_(timeout_s) {}

  ~External() override {
    if (!partner_ || partner_->process.get() != process_) return;
    try {
      partner_->process->send(json{{"type", "end"}, {"request", request_}}.dump());
    } catch (const std::exception&) {
      partner_->process.reset();  // it has gone; the next request starts it again
    }
  }

  int choose(const DecisionContext& context) override {
    try {
      if (!partner_) begin(context);
      if (partner_->process.get() != process_) throw std::runtime_error("its program failed on another request");
      common::LineProcess& process = *process_;
      json transfers = json::array();  // those since the last decision: the program keeps the history
      for (; told_transfers_ < context.history.size(); ++told_transfers_) {
        const TransferSample& sample = context.history[told_transfers_];
        transfers.push_back({{"bits", sample.bits}, {"start_s", sample.start_s}, {"end_s", sample.end_s}});
      }
      process.send(json{{"type", "decide"},
                        {"request", request_},
                        {"chunk", context.chunk},
                        {"now_s", context.now_s},
                        {"remaining_s", context.deadline_s() - context.now_s},
                        {"transfers", std::move(transfers)}}
                       .dump());
      return choice_in(process.receive(timeout_s_), context);
    } catch (const std::exception& e) {
      if (partner_) partner_->process.reset();
      std::ostringstream where;
      where << "policy \"" << spec_.text() << "\", request " << request_ << " (context " << context.costs.profile().name
            << ", arrived at " << context.arrival_s << " s), chunk " << context.chunk << ": " << e.what();
      throw std::runtime_error(where.str());
    }
  }

 private:
  // Starts the program if need be and tells it of this request (and first of its context's table,
  // unless it has been told of that table already: a sweep reuses a few).
  void begin(const DecisionContext& context) {
    partner_ = &partner(command_);
    process_ = partner_->process.get();
    request_ = partner_->requests++;
    const CostModel& costs = context.costs;
    json names = json::array(), chunks = json::array();
    for (const int option : options_) names.push_back(costs.choice_name(option));
    for (size_t c = 0; c < costs.chunks(); ++c) {
      json bits = json::array(), quality = json::array(), gpu_s = json::array();
      for (const int option : options_) {
        bits.push_back(costs.bits(c, option));
        quality.push_back(costs.quality(c, option));
        gpu_s.push_back(costs.gpu_s(c, option));
      }
      chunks.push_back({{"tokens", costs.profile().chunks[c].tokens}, {"bits", bits}, {"quality", quality}, {"gpu_s", gpu_s}});
    }
    const json table = {{"name", costs.profile().name},
                        {"query_prefill_s", costs.query_prefill_s()},
                        {"options", std::move(names)},
                        {"chunks", std::move(chunks)}};
    const auto [known, fresh] = partner_->contexts.emplace(table.dump(), partner_->contexts.size());
    if (fresh) process_->send(json{{"type", "context"}, {"context", known->second}, {"table", table}}.dump());
    process_->send(json{{"type", "request"},
                        {"request", request_},
                        {"context", known->second},
                        {"arrival_s", context.arrival_s},
                        {"slo_s", context.config.slo_s},
                        {"deadline_s", context.deadline_s()}}
                       .dump());
  }

  int choice_in(const std::string& line, const DecisionContext& context) const {
    const auto answer = json::parse(line, nullptr, false);
    const std::string quoted = "answered " + (line.size() > 200 ? line.substr(0, 200) + "..." : line);
    if (answer.is_discarded()) throw std::runtime_error(quoted + ": not a JSON line");
    if (!answer.is_object() || !answer.contains("choice") || !answer["choice"].is_string())
      throw std::runtime_error(quoted + ": expected {\"choice\": NAME}");
    const std::string name = answer["choice"];
    std::string known;
    for (const int option : options_) {
      if (context.costs.choice_name(option) == name) return option;
      known += (known.empty() ? "" : ", ") + context.costs.choice_name(option);
    }
    throw std::runtime_error(quoted + ": \"" + name + "\" is not one of its options (" + known + ")");
  }

  Spec spec_;
  std::vector<std::string> command_;
  std::vector<int> options_;  // levels best first, then kText when allowed
  double timeout_s_;
  Partner* partner_ = nullptr;              // once told of this request
  common::LineProcess* process_ = nullptr;  // the program told of it
  uint64_t request_ = 0;
  size_t told_transfers_ = 0;  // of context.history
};

}  // namespace

std::unique_ptr<Policy> make_external(const Spec& spec, const ContextProfile& profile) {
  spec.only({"cmd", "ladder", "text", "timeout_s"});
  auto command = command_words(spec);
  std::vector<int> options = ladder_best_first(profile, spec.string("ladder", ""));
  if (text_allowed(spec)) options.push_back(kText);
  const double timeout_s = spec.number("timeout_s", 10);
  if (!(timeout_s > 0)) spec.fail("option timeout_s: expected a number of seconds > 0");
  return std::make_unique<External>(spec, std::move(command), std::move(options), timeout_s);
}

}  // namespace kvstream::sim::policies
