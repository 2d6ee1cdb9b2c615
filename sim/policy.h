// Adaptation policies (CACHEGEN.md §11): before each chunk is requested, pick a level of the
// profile's ladder or text. Policies see only what a real sender sees (the profile, the elapsed
// time, this request's past transfers), except those named oracle, which may also use the
// exact single-request timeline with the true trace.
//
// Policies are chosen by spec string from a registry (Vidur-style), e.g. "fixed:cachegen:2",
// "cachegen:estimator=hm,window=5", "mpc:horizon=5". `kvstream simulate --help` lists them.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

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

// "name:key=value,key=value". Keys a policy does not know are an error.
struct PolicySpec {
  std::string name;
  std::map<std::string, std::string> options;
  std::string text;  // the spec as given

  static PolicySpec parse(const std::string& text);
  std::string get(const std::string& key, const std::string& fallback) const;
  double get_number(const std::string& key, double fallback) const;
  // Throws std::invalid_argument naming the first option not in `known`.
  void only(std::initializer_list<const char*> known) const;
};

using PolicyFactory = std::function<std::unique_ptr<Policy>(const PolicySpec& spec, const ContextProfile& profile)>;

struct PolicyInfo {
  std::string name;
  std::string summary;  // one line with the options, for --help
  bool oracle = false;
  PolicyFactory make;
};

const std::vector<PolicyInfo>& policy_registry();
// Builds the policy for one request on `profile`; throws std::invalid_argument for an unknown name,
// an unknown option, or levels the profile lacks.
std::unique_ptr<Policy> make_policy(const std::string& spec, const ContextProfile& profile);
std::string policy_list_help();

}  // namespace kvstream::sim
