#include "sim/policy.h"

#include <stdexcept>

#include "sim/policies/policies.h"

namespace kvstream::sim {

PolicySpec PolicySpec::parse(const std::string& text) {
  PolicySpec spec;
  spec.text = text;
  const size_t colon = text.find(':');
  spec.name = text.substr(0, colon);
  if (colon == std::string::npos) return spec;
  const std::string rest = text.substr(colon + 1);
  if (spec.name == "fixed") {  // the rest is a level name, which may itself hold ':' and '='
    spec.options["level"] = rest;
    return spec;
  }
  size_t begin = 0;
  while (begin <= rest.size()) {
    const size_t end = std::min(rest.find(',', begin), rest.size());
    const std::string item = rest.substr(begin, end - begin);
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw std::invalid_argument("policy \"" + text + "\": expected key=value, got \"" + item + "\"");
    spec.options[item.substr(0, eq)] = item.substr(eq + 1);
    begin = end + 1;
  }
  return spec;
}

std::string PolicySpec::get(const std::string& key, const std::string& fallback) const {
  auto it = options.find(key);
  return it == options.end() ? fallback : it->second;
}

double PolicySpec::get_number(const std::string& key, double fallback) const {
  auto it = options.find(key);
  if (it == options.end()) return fallback;
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(it->second, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != it->second.size())
    throw std::invalid_argument("policy \"" + text + "\": option " + key + " expects a number, got \"" + it->second + "\"");
  return value;
}

void PolicySpec::only(std::initializer_list<const char*> known) const {
  for (const auto& [key, value] : options) {
    bool ok = false;
    std::string list;
    for (const char* k : known) {
      ok = ok || key == k;
      list += std::string(list.empty() ? "" : ", ") + k;
    }
    if (!ok)
      throw std::invalid_argument("policy \"" + text + "\": unknown option \"" + key + "\" (options of " + name + ": " +
                                  (list.empty() ? "none" : list) + ")");
  }
}

const std::vector<PolicyInfo>& policy_registry() {
  using namespace policies;
  static const std::vector<PolicyInfo> registry = {
      {"fixed", "fixed:<level>  every chunk at one profile level, e.g. fixed:cachegen:2", false, make_fixed},
      {"text", "text  every chunk as text, recomputed (full prefill)", false, make_text},
      {"quant8", "quant8  the 8-bit quantization baseline as a one-level ladder (level quant:bits=8)", false, make_quant8},
      {"cachegen-artifact",
       "cachegen-artifact[:ladder=cachegen]  the artifact's rule: true per-chunk bandwidth, "
       "budget SLO/round(N/S) per chunk, best level whose transfer fits, else text (ORACLE)",
       true, make_cachegen_artifact},
      {"cachegen",
       "cachegen[:estimator=last,window=5,alpha=0.5,first=<level>,ladder=cachegen]  the paper's rule: estimated "
       "throughput, remaining budget SLO - elapsed, best level whose remaining chunks fit, text when recompute is faster",
       false, make_cachegen},
      {"mpc",
       "mpc[:horizon=5,estimator=robust,window=5,alpha=0.5,ladder=cachegen,text=1,prior_gbps=G]  look-ahead over the "
       "next horizon chunks maximising quality with predicted completion before the deadline; before the first "
       "sample it predicts prior_gbps, or without it sends the middle level",
       false, make_mpc},
      {"oracle-dp",
       "oracle-dp[:ladder=cachegen,text=1]  knows the future trace: the plan of best quality that meets the SLO "
       "(else the smallest TTFT); exact for a request alone on the link and GPU (ORACLE)",
       true, make_oracle_dp},
  };
  return registry;
}

std::unique_ptr<Policy> make_policy(const std::string& spec_text, const ContextProfile& profile) {
  const PolicySpec spec = PolicySpec::parse(spec_text);
  for (const auto& info : policy_registry())
    if (info.name == spec.name) return info.make(spec, profile);
  throw std::invalid_argument("unknown policy \"" + spec.name + "\"\n" + policy_list_help());
}

std::string policy_list_help() {
  std::string text = "policies:\n";
  for (const auto& info : policy_registry()) text += "  " + info.summary + "\n";
  return text;
}

}  // namespace kvstream::sim
