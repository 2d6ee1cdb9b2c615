#include "emulation/fidelity_config.h"

#include <algorithm>
#include <filesystem>

#include "common/data_resolver.h"
#include "common/json_reader.h"
#include "sim/policy.h"
#include "sim/tcp/congestion_control.h"

namespace kvstream::emulation {

namespace {

using common::JsonNode;

std::vector<JsonNode> items(const JsonNode& node) {
  std::vector<JsonNode> out;
  if (node.size() == 0) node.fail("expected a non-empty list");
  for (size_t i = 0; i < node.size(); ++i) out.push_back(node.at(i));
  return out;
}

// A profile path: beside the config first, then as a command-line argument would be (working
// directory, then the data roots).
std::string profile_path(const JsonNode& node, const std::filesystem::path& config_dir) {
  const std::string text = node.string();
  const std::filesystem::path beside = config_dir / text;
  std::error_code ec;
  if (std::filesystem::is_regular_file(beside, ec)) return beside.string();
  std::filesystem::path resolved;
  try {
    resolved = common::resolve_input(text);
  } catch (const std::exception&) {
  }
  if (resolved.empty() || !std::filesystem::is_regular_file(resolved, ec))
    node.fail("no profile file \"" + text + "\" beside the config (" + config_dir.string() +
              "), in the working directory or the data roots");
  return resolved.string();
}

// The index of each name in `node` (a list of names) among `named`'s names.
template <typename Named>
std::vector<size_t> indices_of(const JsonNode& node, const std::vector<Named>& named, const char* what) {
  std::vector<size_t> out;
  for (const auto& item : items(node)) {
    const std::string name = item.string();
    const auto it = std::find_if(named.begin(), named.end(), [&](const Named& n) { return n.name == name; });
    if (it == named.end()) item.fail("no " + std::string(what) + " named \"" + name + "\" in the config");
    out.push_back(size_t(it - named.begin()));
  }
  return out;
}

// Read after the queues and workloads, whose names a trace may list.
FidelityTrace trace(const JsonNode& node, const FidelityConfig& c) {
  node.only_keys({"name", "input", "format", "scale", "mean_mbps", "rtt_ms", "queues", "workloads", "kv_bytes_scale"});
  FidelityTrace t;
  t.name = node.at("name").name();
  t.input = node.at("input").string();
  if (node.has("format")) t.format = node.at("format").string();
  if (node.has("scale") && node.has("mean_mbps")) node.fail("give \"scale\" or \"mean_mbps\", not both");
  if (node.has("scale")) t.scale = node.at("scale").number_in(1e-9, 1e9);
  if (node.has("mean_mbps")) t.mean_mbps = node.at("mean_mbps").number_in(1e-3, 1e6);
  if (node.has("rtt_ms"))
    for (const auto& item : items(node.at("rtt_ms"))) t.rtt_ms.push_back(item.number_in(0, 10'000));
  if (node.has("queues")) t.queues = indices_of(node.at("queues"), c.queues, "queue");
  if (node.has("workloads")) t.workloads = indices_of(node.at("workloads"), c.workloads, "workload");
  if (node.has("kv_bytes_scale")) t.kv_bytes_scale = node.at("kv_bytes_scale").number_in(1e-3, 1e6);
  return t;
}

FidelityQueue queue(const JsonNode& node) {
  node.only_keys({"name", "bytes", "ms"});
  FidelityQueue q;
  q.name = node.at("name").name();
  if (node.has("bytes") && node.has("ms")) node.fail("give \"bytes\" or \"ms\", not both");
  if (node.has("bytes")) q.bytes = uint64_t(node.at("bytes").integer_at_least(1500));
  if (node.has("ms")) q.ms = node.at("ms").number_in(0.01, 1e6);
  return q;
}

FidelityWorkload workload(const JsonNode& node) {
  FidelityWorkload w;
  w.name = node.at("name").name();
  const std::string kind = node.at("kind").string();
  if (kind == "single") {
    node.only_keys({"name", "kind", "offsets_s", "rotate"});
    if (node.has("offsets_s")) {
      w.offsets_s.clear();
      for (const auto& item : items(node.at("offsets_s"))) w.offsets_s.push_back(item.number_at_least(0));
    }
  } else if (kind == "poisson") {
    node.only_keys({"name", "kind", "requests", "rate_per_s", "seed", "offset_s", "rotate"});
    w.poisson = true;
    w.requests = node.at("requests").integer_at_least(1);
    w.rate_per_s = node.at("rate_per_s").number_in(1e-6, 1e6);
    if (node.has("seed")) w.seed = uint64_t(node.at("seed").integer_at_least(0));
    if (node.has("offset_s")) w.offsets_s = {node.at("offset_s").number_at_least(0)};
  } else {
    node.at("kind").fail("expected \"single\" or \"poisson\", got \"" + kind + "\"");
  }
  if (node.has("rotate")) {
    const std::string rotate = node.at("rotate").string();
    if (rotate == "pairs")
      w.rotate = Rotation::kPairs;
    else if (rotate == "offsets" && !w.poisson)
      w.rotate = Rotation::kOffsets;
    else if (rotate != "none")
      node.at("rotate").fail(std::string("expected \"none\", \"pairs\"") + (w.poisson ? "" : " or \"offsets\"") +
                             ", got \"" + rotate + "\"");
  }
  return w;
}

}  // namespace

FidelityConfig read_fidelity_config(const std::string& path) {
  FidelityConfig c;
  c.source = common::read_json_file(path);
  const JsonNode root(c.source, path);
  root.only_keys({"name", "description", "profiles", "traces", "rtt_ms", "queues", "congestion_controls",
                  "slow_start_after_idle", "offloads", "policies", "slo_s", "workloads", "link_models", "hardware"});
  c.name = root.at("name").name();
  if (root.has("description")) c.description = root.at("description").string();
  const std::filesystem::path config_dir = std::filesystem::path(path).parent_path();
  for (const auto& item : items(root.at("profiles"))) c.profiles.push_back(profile_path(item, config_dir));
  for (const auto& item : items(root.at("rtt_ms"))) c.rtt_ms.push_back(item.number_in(0, 10'000));
  for (const auto& item : items(root.at("queues"))) c.queues.push_back(queue(item));
  for (const auto& item : items(root.at("congestion_controls"))) c.congestion_controls.push_back(item.name());
  if (root.has("slow_start_after_idle")) c.slow_start_after_idle = root.at("slow_start_after_idle").boolean();
  if (root.has("offloads")) c.offloads = root.at("offloads").boolean();
  for (const auto& item : items(root.at("policies"))) {
    c.policies.push_back(item.string());
    try {
      sim::parse_policy_spec(c.policies.back());
    } catch (const std::exception& e) {
      item.fail(e.what());
    }
  }
  for (const auto& item : items(root.at("slo_s"))) c.slo_s.push_back(item.number_in(1e-6, 1e6));
  for (const auto& item : items(root.at("workloads"))) c.workloads.push_back(workload(item));
  for (const auto& item : items(root.at("traces"))) c.traces.push_back(trace(item, c));
  if (root.has("link_models")) {
    c.link_models.clear();
    for (const auto& item : items(root.at("link_models"))) {
      const std::string model = item.string();
      try {
        sim::link_model_named(model);
      } catch (const std::invalid_argument& e) {
        item.fail(e.what());
      }
      c.link_models.push_back(model);
    }
  }
  if (root.has("hardware")) c.hardware = root.at("hardware").string();
  if (std::find(c.link_models.begin(), c.link_models.end(), "tcp") != c.link_models.end())
    for (size_t i = 0; i < c.congestion_controls.size(); ++i) {
      const auto& modelled = sim::modelled_congestion_controls();
      if (std::find(modelled.begin(), modelled.end(), c.congestion_controls[i]) == modelled.end())
        root.at("congestion_controls").at(i).fail("the tcp link model has no model of \"" + c.congestion_controls[i] +
                                                  "\" (drop \"tcp\" from link_models to emulate it alone)");
    }
  return c;
}

}  // namespace kvstream::emulation
