#include "sim/policy.h"

#include <stdexcept>

#include "sim/policies/policies.h"

namespace kvstream::sim {

bool text_allowed(const Spec& spec) { return spec.boolean("text", true); }

namespace policies {
TransferPredictor::Kind predictor_option(const Spec& spec, const std::string& fallback) {
  const std::string name = spec.string("predictor", fallback);
  try {
    return TransferPredictor::kind_named(name);
  } catch (const std::invalid_argument&) {
    spec.fail("option predictor=" + name + ": expected link or fluid");
  }
}
}  // namespace policies

namespace {

std::vector<PolicyInfo>& registry() {
  using namespace policies;
  static std::vector<PolicyInfo> policies = {
      {"fixed", "fixed:<level>  every chunk at one profile level, e.g. fixed:cachegen:2", false, Recompute::kNever,
       make_fixed, "level"},
      {"text", "text  every chunk as text, recomputed (full prefill)", false, Recompute::kYes, make_text, ""},
      {"quant8", "quant8  the 8-bit quantization baseline as a one-level ladder (level quant:bits=8)", false,
       Recompute::kNever, make_quant8, ""},
      {"cachegen-artifact",
       "cachegen-artifact[:ladder=cachegen]  the artifact's rule: true per-chunk bandwidth, "
       "budget SLO/round(N/S) per chunk, best level whose transfer fits, else text (ORACLE)",
       true, Recompute::kYes, make_cachegen_artifact, ""},
      {"cachegen",
       "cachegen[:estimator=last,window=5,alpha=0.5,first=<level>,ladder=cachegen,text=1,predictor=fluid]  the "
       "paper's rule: estimated throughput, remaining budget SLO - elapsed, best level whose remaining chunks fit, "
       "text when recompute is faster; predictor=link times the chunks through the request's TCP connection",
       false, Recompute::kUnlessTextOff, make_cachegen, ""},
      {"mpc",
       "mpc[:horizon=5,estimator=robust,window=5,alpha=0.5,ladder=cachegen,text=1,prior_gbps=G,predictor=link]  "
       "look-ahead over the next horizon chunks maximising quality with predicted completion before the deadline; "
       "before the first sample it predicts prior_gbps, or without it sends the middle level; predictor=link "
       "predicts transfers through the request's TCP connection under the tcp link model, fluid as bits / rate",
       false, Recompute::kUnlessTextOff, make_mpc, ""},
      {"oracle-dp",
       "oracle-dp[:ladder=cachegen,text=1,frontier=256]  knows the future trace: the plan of best quality that "
       "meets the SLO (else the smallest TTFT) for a request alone on the link and GPU; exact while the DP's "
       "layers hold <= frontier nodes, else within a bounded quality loss (frontier=0: always exact, can be "
       "exponential in chunks) (ORACLE)",
       true, Recompute::kUnlessTextOff, make_oracle_dp, ""},
      {"external",
       "external:cmd=\"PROGRAM ARGS\"[,ladder=,text=1,timeout_s=10]  a policy in another process (e.g. Python) "
       "that answers a JSON line per chunk (docs/POLICIES.md); offered every level (or those of codec ladder=) "
       "best first, and text; one process per thread, reused across runs",
       false, Recompute::kUnlessTextOff, make_external, ""},
  };
  return policies;
}

const PolicyInfo& find_policy(const std::string& name) {
  for (const auto& info : registry())
    if (info.name == name) return info;
  std::string names;
  for (const auto& info : registry()) names += (names.empty() ? "" : ", ") + info.name;
  throw std::invalid_argument("unknown policy \"" + name + "\" (known: " + names + ")");
}

}  // namespace

const std::vector<PolicyInfo>& policy_registry() { return registry(); }

void register_policy(PolicyInfo info) {
  for (const auto& known : registry())
    if (known.name == info.name) throw std::invalid_argument("a policy named \"" + info.name + "\" is registered already");
  registry().push_back(std::move(info));
}

Spec parse_policy_spec(const std::string& spec) {
  const std::string name = spec.substr(0, spec.find(':'));
  const PolicyInfo& info = find_policy(name);
  return info.argument.empty() ? Spec::parse(spec, "policy") : Spec::parse_argument(spec, "policy", info.argument);
}

std::unique_ptr<Policy> make_policy(const std::string& spec, const ContextProfile& profile) {
  const Spec parsed = parse_policy_spec(spec);
  return find_policy(parsed.name()).make(parsed, profile);
}

bool may_recompute(const std::string& spec) {
  const Spec parsed = parse_policy_spec(spec);
  switch (find_policy(parsed.name()).recompute) {
    case Recompute::kNever: return false;
    case Recompute::kYes: return true;
    case Recompute::kUnlessTextOff: return text_allowed(parsed);
  }
  return true;
}

std::string policy_list_help() {
  std::string text = "policies:\n";
  for (const auto& info : policy_registry()) text += "  " + info.summary + "\n";
  return text;
}

}  // namespace kvstream::sim
