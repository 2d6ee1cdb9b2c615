// Adaptation policies (docs/CACHEGEN.md §11): before each chunk is requested, pick a level of the
// profile's ladder or text. Policies see only what a real sender sees (the profile, the elapsed
// time, this request's past transfers), except those named oracle, which may also use the
// exact single-request timeline with the true trace.
//
// Policies are chosen by spec (common/spec.h) from a registry (Vidur-style), e.g. "fixed:cachegen:2",
// "cachegen:estimator=hm,window=5", "mpc:horizon=5". `kvstream simulate --help` lists them. The registry
// also says what a policy may do before it runs: whether it may recompute text (the experiment runner
// checks that every context then has a recompute cost).
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/spec.h"
#include "sim/request_timeline.h"
#include "sim/throughput_estimator.h"

namespace kvstream::sim {

struct DecisionContext {
  const CostModel& costs;
  const SimConfig& config;
  size_t chunk = 0;             // the chunk to decide; chunks before it are already chosen
  double now_s = 0;             // when the request for this chunk leaves
  double arrival_s = 0;         // when the request arrived (elapsed = now_s - arrival_s)
  std::span<const TransferSample> history;  // this request's completed transfers, in order
  // This request's timeline so far (its own transfers and GPU jobs; exact when it is alone).
  const Timeline& timeline;
  // Oracle knowledge: the exact timeline model on the true trace. Only oracle policies use it.
  const TimelineModel& oracle;

  double deadline_s() const { return arrival_s + config.slo_s; }
  double elapsed_s() const { return now_s - arrival_s; }
};

class Policy {
 public:
  virtual ~Policy() = default;
  // A profile level index or kText. One Policy object serves one request, chunk 0 first.
  virtual int choose(const DecisionContext& context) = 0;
};

using common::Spec;

// Policies that may choose text read whether they may from one option, `text`: 1 (the default) lets
// them recompute a chunk, 0 forbids it. Throws std::invalid_argument for another value.
bool text_allowed(const Spec& spec);

using PolicyFactory = std::function<std::unique_ptr<Policy>(const Spec& spec, const ContextProfile& profile)>;

// Whether a policy may send a chunk as text (recompute it).
enum class Recompute {
  kNever,
  kYes,
  kUnlessTextOff,  // unless its option text=0 (text_allowed)
};

struct PolicyInfo {
  std::string name;
  std::string summary;  // one line with the options, for --help
  bool oracle = false;
  Recompute recompute = Recompute::kNever;
  PolicyFactory make;
  // The whole text after "name:" is one option of this name (fixed:<level>); empty: key=value options.
  std::string argument;
};

const std::vector<PolicyInfo>& policy_registry();
// Adds a policy to the registry (e.g. one defined by a test or an extension); throws
// std::invalid_argument when the name is taken. Not thread-safe: register before simulating.
void register_policy(PolicyInfo info);
// The spec parsed the way its policy takes options; throws std::invalid_argument for an unknown name
// (listing the known ones) or bad syntax.
Spec parse_policy_spec(const std::string& spec);
// Builds the policy for one request on `profile`; throws std::invalid_argument for an unknown name,
// an unknown option, or levels the profile lacks.
std::unique_ptr<Policy> make_policy(const std::string& spec, const ContextProfile& profile);
// Whether the policy of `spec` may choose text for some chunk (its registry entry and options).
bool may_recompute(const std::string& spec);
std::string policy_list_help();

}  // namespace kvstream::sim
