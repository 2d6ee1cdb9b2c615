#include "experiments/experiment_config.h"

#include <functional>

#include <algorithm>

#include "codec/codec.h"
#include "common/json_reader.h"
#include "models/architecture_table.h"
#include "sim/context_profile.h"
#include "sim/policy.h"
#include "sim/sim_config.h"
#include "sim/tcp/congestion_control.h"
#include "sim/workload.h"
#include "traces/trace_readers.h"

namespace kvstream::experiments {

namespace {

using common::JsonNode;

const std::vector<std::string> kFigureKinds = {"size_quality", "ttft_vs_bandwidth", "violation_vs_quality", "ttft_cdf",
                                               "ttft_vs_load"};

// A value that may be one item or a list of items: the list of items either way.
std::vector<JsonNode> one_or_many(const JsonNode& node, bool may_be_empty = true) {
  std::vector<JsonNode> items;
  if (!node.value().is_array()) {
    items.push_back(node);
    return items;
  }
  if (node.size() == 0 && !may_be_empty) node.fail("expected a non-empty list");
  for (size_t i = 0; i < node.size(); ++i) items.push_back(node.at(i));
  return items;
}

std::vector<std::string> strings(const JsonNode& node) {
  std::vector<std::string> out;
  for (const auto& item : one_or_many(node)) out.push_back(item.string());
  return out;
}

int int_at_least(const JsonNode& node, int minimum) {
  const int64_t x = node.integer_at_least(minimum);
  if (x > 1'000'000'000) node.fail("expected an integer <= 1000000000");
  return static_cast<int>(x);
}

// The model fields of a context set (or of its fallback, whose missing fields keep `base`'s).
ModelContexts model_contexts(const JsonNode& node, const ModelContexts& base, bool top_level) {
  ModelContexts m = base;
  if (top_level || node.has("model")) m.model = node.at("model").string();
  if (top_level || node.has("dataset")) m.dataset = node.at("dataset").string();
  if (node.has("count")) m.count = int_at_least(node.at("count"), 1);
  if (!top_level && node.has("tokens")) m.tokens = int_at_least(node.at("tokens"), 1);
  if (top_level || node.has("chunk_tokens")) m.chunk_tokens = node.at("chunk_tokens").integer_at_least(1);
  if (node.has("continuation_tokens")) m.continuation_tokens = int_at_least(node.at("continuation_tokens"), 2);
  if (node.has("stride_chars")) m.stride_chars = node.at("stride_chars").integer_at_least(1);
  if (node.has("transform_fit")) {
    const JsonNode fit = node.at("transform_fit");
    fit.only_keys({"windows", "sensitivity_windows"});
    if (fit.has("windows")) m.transform_fit.windows = int_at_least(fit.at("windows"), 1);
    if (fit.has("sensitivity_windows"))
      m.transform_fit.sensitivity_windows = int_at_least(fit.at("sensitivity_windows"), 0);
    if (m.transform_fit.windows && m.transform_fit.sensitivity_windows > m.transform_fit.windows)
      fit.at("sensitivity_windows").fail("expected at most the " + std::to_string(*m.transform_fit.windows) +
                                         " windows of the fit");
  }
  return m;
}

// One entry of "contexts"; a list of "tokens" expands to one set per value, named <name>-T<tokens>.
void parse_context_set(const JsonNode& node, std::vector<ContextSetConfig>& out) {
  ContextSetConfig set;
  set.name = node.at("name").name();
  set.json_path = node.path();
  const std::string source = node.has("source") ? node.at("source").string() : "model";
  if (source == "synthetic") {
    node.only_keys({"name", "source", "chunks", "chunk_tokens"});
    set.source = ContextSource::kSynthetic;
    if (node.has("chunks")) set.synthetic_chunks = int_at_least(node.at("chunks"), 1);
    if (node.has("chunk_tokens")) set.synthetic_chunk_tokens = node.at("chunk_tokens").integer_at_least(1);
    out.push_back(set);
    return;
  }
  if (source == "files") {
    node.only_keys({"name", "source", "files", "fp16_bytes_per_token"});
    set.source = ContextSource::kFiles;
    set.files = strings(node.at("files"));
    if (set.files.empty()) node.at("files").fail("expected at least one profile file");
    if (node.has("fp16_bytes_per_token"))
      set.fp16_bytes_per_token = node.at("fp16_bytes_per_token").number_in(1, sim::kMaxFp16BytesPerToken);
    out.push_back(set);
    return;
  }
  if (source != "model") node.at("source").fail("expected \"model\", \"synthetic\" or \"files\", got \"" + source + "\"");
  node.only_keys({"name", "source", "model", "dataset", "count", "tokens", "chunk_tokens", "continuation_tokens",
                  "stride_chars", "transform_fit", "fallback", "extrapolate"});
  set.measured = model_contexts(node, {}, true);
  if (node.has("extrapolate") && !node.at("extrapolate").value().is_null()) {
    const JsonNode e = node.at("extrapolate");
    e.only_keys({"chunks", "chunk_tokens"});
    set.extrapolate = Extrapolation{int_at_least(e.at("chunks"), 1), e.at("chunk_tokens").integer_at_least(1)};
  }
  std::vector<int> tokens;
  for (const auto& t : one_or_many(node.at("tokens"), false)) tokens.push_back(int_at_least(t, 1));
  const bool has_fallback = node.has("fallback") && !node.at("fallback").value().is_null();
  if (has_fallback) {
    node.at("fallback").only_keys({"model", "dataset", "count", "tokens", "chunk_tokens", "continuation_tokens",
                                   "stride_chars", "transform_fit"});
    if (tokens.size() > 1 && node.at("fallback").has("tokens"))
      node.at("fallback").at("tokens").fail("a fallback with its own tokens would make every set of the tokens list "
                                            "the same when it is used; give the sweep's sets separately");
  }
  for (const int t : tokens) {
    ContextSetConfig expanded = set;
    if (tokens.size() > 1) expanded.name += "-T" + std::to_string(t);
    expanded.measured.tokens = t;
    if (has_fallback) expanded.fallback = model_contexts(node.at("fallback"), expanded.measured, false);
    out.push_back(expanded);
  }
}

TraceSetConfig parse_trace_set(const JsonNode& node) {
  TraceSetConfig set;
  set.json_path = node.path();
  if (node.value().is_string()) {  // shorthand: one input, named after it
    set.inputs = {node.string()};
    set.name = set.inputs.front();
    if (set.name.empty()) node.fail("expected a trace input, got \"\"");
    return set;
  }
  node.only_keys({"name", "inputs", "format", "scale", "fallback"});
  set.name = node.at("name").string();  // a label only (shorthand sets are named after their input)
  if (set.name.empty()) node.at("name").fail("expected a non-empty name");
  set.inputs = strings(node.at("inputs"));
  if (set.inputs.empty()) node.at("inputs").fail("expected at least one trace input");
  if (node.has("fallback")) set.fallback = strings(node.at("fallback"));
  if (node.has("format")) {
    set.format = node.at("format").string();
    try {
      traces::parse_trace_format(set.format);
    } catch (const std::exception& e) {
      node.at("format").fail(e.what());
    }
  }
  if (node.has("scale")) {
    set.scale = node.at("scale").number();
    if (!(set.scale > 0)) node.at("scale").fail("expected a number > 0, got " + node.at("scale").value().dump());
    if (set.scale > sim::kMaxTraceScale)
      node.at("scale").fail("expected a scale of at most 1e6, got " + node.at("scale").value().dump());
  }
  return set;
}

void check_policy(const JsonNode& node) {
  try {
    sim::parse_policy_spec(node.string());
  } catch (const std::invalid_argument& e) {
    node.fail(e.what());
  }
}

WorkloadConfig parse_workload(const JsonNode& node) {
  node.only_keys({"kind", "rate_per_s", "requests"});
  WorkloadConfig w;
  const std::string kind = node.at("kind").string();
  if (kind == "single") {
    if (node.has("rate_per_s") || node.has("requests")) node.fail("a single workload takes no rate_per_s or requests");
    return w;
  }
  if (kind != "poisson") node.at("kind").fail("expected \"single\" or \"poisson\", got \"" + kind + "\"");
  w.poisson = true;
  for (const auto& r : one_or_many(node.at("rate_per_s"), false)) {
    w.rates_per_s.push_back(r.number());
    if (!(w.rates_per_s.back() > 0)) r.fail("expected a rate > 0 requests/s, got " + r.value().dump());
    if (!(w.rates_per_s.back() >= sim::kMinRatePerS && w.rates_per_s.back() <= sim::kMaxRatePerS))
      r.fail("expected a rate in [1e-6, 1e9] requests/s, got " + r.value().dump());
  }
  w.requests = int_at_least(node.at("requests"), 1);
  if (uint64_t(w.requests) > sim::kMaxRequests)
    node.at("requests").fail("expected at most " + std::to_string(sim::kMaxRequests) + " requests, got " +
                             std::to_string(w.requests));
  return w;
}

SimOptionsConfig parse_sim_options(const JsonNode& node) {
  node.only_keys({"pipelining", "shared_gpu", "artifact_timing", "query_tokens", "request_rtt_ms", "chunk_rtt_ms"});
  SimOptionsConfig s;
  if (node.has("pipelining")) s.pipelining = node.at("pipelining").boolean();
  if (node.has("shared_gpu")) s.shared_gpu = node.at("shared_gpu").boolean();
  if (node.has("artifact_timing")) s.artifact_timing = node.at("artifact_timing").boolean();
  if (node.has("query_tokens")) s.query_tokens = node.at("query_tokens").integer_at_least(0);
  if (node.has("request_rtt_ms")) s.request_rtt_ms = node.at("request_rtt_ms").number_in(0, sim::kMaxRttMs);
  if (node.has("chunk_rtt_ms")) s.chunk_rtt_ms = node.at("chunk_rtt_ms").number_in(0, sim::kMaxRttMs);
  return s;
}

// Throws naming the item when a list of `node` (or its one value) holds a value twice: two runs would
// have one coordinate.
template <typename T>
void check_distinct(const JsonNode& node, const std::vector<T>& values) {
  for (size_t i = 1; i < values.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (values[i] == values[j]) node.at(i).fail("listed twice (each value is a grid point)");
}

NetworkConfig parse_network(const JsonNode& node) {
  node.only_keys({"link_model", "rtt_ms", "queue", "congestion_control", "slow_start_after_idle"});
  NetworkConfig n;
  if (node.has("link_model")) {
    n.link_models.clear();
    for (const auto& item : one_or_many(node.at("link_model"), false)) {
      try {
        sim::link_model_named(item.string());
      } catch (const std::invalid_argument& e) {
        item.fail(e.what());
      }
      n.link_models.push_back(item.string());
    }
  }
  if (node.has("rtt_ms")) {
    n.rtts_ms.clear();
    for (const auto& item : one_or_many(node.at("rtt_ms"), false)) n.rtts_ms.push_back(item.number_in(0, sim::kMaxRttMs));
  }
  if (node.has("queue")) {
    n.queues.clear();
    for (const auto& item : one_or_many(node.at("queue"), false)) {
      item.only_keys({"name", "bytes", "ms"});
      QueueConfig q{item.at("name").name(), 0, 0};
      if (item.has("bytes") && item.has("ms")) item.fail("give \"bytes\" or \"ms\", not both (neither: unbounded)");
      if (item.has("bytes")) {
        const JsonNode bytes = item.at("bytes");
        if (bytes.integer_at_least(1500) > int64_t(sim::kMaxQueueBytes))
          bytes.fail("expected at most 1e12 bytes, got " + bytes.value().dump());
        q.bytes = uint64_t(bytes.value().get<int64_t>());
      }
      if (item.has("ms")) q.ms = item.at("ms").number_in(0.01, sim::kMaxRttMs);
      for (const auto& other : n.queues)
        if (other.name == q.name) item.at("name").fail("two queues are named \"" + q.name + "\"");
      n.queues.push_back(q);
    }
  }
  if (node.has("congestion_control")) {
    n.congestion_controls.clear();
    for (const auto& item : one_or_many(node.at("congestion_control"), false)) {
      const std::string name = item.string();
      try {  // only what the tcp link model has (the emulator would take any the kernel has)
        sim::make_congestion_control(sim::tcp_model_for(0, name, true, 0));
      } catch (const std::invalid_argument& e) {
        item.fail(e.what());
      }
      n.congestion_controls.push_back(name);
    }
  }
  if (node.has("slow_start_after_idle")) {
    n.slow_start_after_idle.clear();
    for (const auto& item : one_or_many(node.at("slow_start_after_idle"), false))
      n.slow_start_after_idle.push_back(item.boolean());
  }
  if (node.has("link_model")) check_distinct(node.at("link_model"), n.link_models);
  if (node.has("rtt_ms")) check_distinct(node.at("rtt_ms"), n.rtts_ms);
  if (node.has("congestion_control")) check_distinct(node.at("congestion_control"), n.congestion_controls);
  if (node.has("slow_start_after_idle")) check_distinct(node.at("slow_start_after_idle"), n.slow_start_after_idle);
  return n;
}

std::optional<KvScaleConfig> parse_kv_scale(const JsonNode& node) {
  if (node.value().is_null()) return std::nullopt;
  if (node.value().is_string()) {
    const std::string name = node.string();
    try {
      return KvScaleConfig{name, models::architecture(name).fp16_kv_bytes_per_token()};
    } catch (const std::invalid_argument& e) {
      node.fail(e.what());
    }
  }
  node.only_keys({"name", "fp16_bytes_per_token"});
  return KvScaleConfig{node.at("name").name(),
                       node.at("fp16_bytes_per_token").number_in(1, sim::kMaxFp16BytesPerToken)};
}

std::optional<DecodeConfig> parse_decode(const JsonNode& node) {
  if (node.value().is_null() || (node.value().is_string() && node.string() == "measured")) return std::nullopt;
  if (node.value().is_string() && node.string() == "hardware") return DecodeConfig{true, "", 0, ""};
  if (node.value().is_string())
    node.fail("expected \"measured\", \"hardware\", {\"profile\"} or {\"fp16_bytes_per_s\", \"source\"}");
  if (node.value().is_object() && node.value().contains("profile")) {
    node.only_keys({"profile"});
    DecodeConfig d{true, node.at("profile").string(), 0, ""};
    if (d.profile.empty()) node.at("profile").fail("expected a hardware profile's name or path");
    return d;
  }
  node.only_keys({"fp16_bytes_per_s", "source"});
  DecodeConfig d{false, "", node.at("fp16_bytes_per_s").number(), node.at("source").string()};
  if (!(d.fp16_bytes_per_s > 0)) node.at("fp16_bytes_per_s").fail("expected a throughput > 0 bytes/s");
  if (d.source.empty()) node.at("source").fail("say where the throughput comes from (measured on ..., assumed)");
  return d;
}

}  // namespace

const char* to_string(ContextSource source) {
  static constexpr const char* kNames[] = {"model", "synthetic", "files"};  // in ContextSource's order
  return kNames[static_cast<int>(source)];
}

ExperimentConfig parse_experiment_config(const nlohmann::json& json, const std::string& where) {
  const JsonNode root(json, where);
  root.only_keys({"name", "description", "seed", "contexts", "codecs", "levels", "kv_scale", "decode", "traces",
                  "policies", "slo_s", "hardware", "workload", "sim", "network", "repetitions", "figures"});
  ExperimentConfig c;
  c.name = root.at("name").name();
  if (root.has("description")) c.description = root.at("description").string();
  if (root.has("seed")) {
    const JsonNode seed = root.at("seed");
    if (!seed.value().is_number_unsigned()) seed.fail("expected an integer in [0, 2^64), got " + seed.value().dump());
    c.seed = seed.value().get<uint64_t>();
  }

  const JsonNode contexts = root.at("contexts");
  if (contexts.size() == 0) contexts.fail("expected at least one context set");
  for (size_t i = 0; i < contexts.size(); ++i) parse_context_set(contexts.at(i), c.context_sets);
  for (size_t i = 0; i < c.context_sets.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (c.context_sets[i].name == c.context_sets[j].name)
        contexts.fail("two context sets are named \"" + c.context_sets[i].name + "\"");

  if (root.has("codecs")) {
    c.codecs.clear();
    for (const JsonNode& node : one_or_many(root.at("codecs"))) {
      try {
        if (codec::transform_needs_calibration(node.string()))  // fitted to each context set's model
          codec::transform_spec_distortions(codec::parse_codec_spec(node.string()));
        else
          codec::make_codec(node.string());
      } catch (const std::invalid_argument& e) {
        node.fail(e.what());
      }
      c.codecs.push_back(node.string());
    }
    if (c.codecs.empty()) root.at("codecs").fail("expected at least one codec");
  }
  if (root.has("levels"))
    for (const auto& level : one_or_many(root.at("levels"))) c.levels.push_back(int_at_least(level, 1));
  if (root.has("kv_scale")) c.kv_scale = parse_kv_scale(root.at("kv_scale"));
  if (root.has("decode")) c.decode = parse_decode(root.at("decode"));

  if (root.has("policies"))
    for (const JsonNode& policy : one_or_many(root.at("policies"))) {
      check_policy(policy);
      c.policies.push_back(policy.string());
    }
  const bool simulates = !c.policies.empty();  // a config without policies only profiles
  if (simulates || root.has("traces")) {
    const JsonNode traces = root.at("traces");
    if (traces.size() == 0 && simulates) traces.fail("expected at least one trace set");
    for (size_t i = 0; i < traces.size(); ++i) c.trace_sets.push_back(parse_trace_set(traces.at(i)));
    for (size_t i = 0; i < c.trace_sets.size(); ++i)
      for (size_t j = 0; j < i; ++j)
        if (c.trace_sets[i].name == c.trace_sets[j].name)
          traces.fail("two trace sets are named \"" + c.trace_sets[i].name + "\"");
  }
  if (simulates || root.has("slo_s"))
    for (const auto& slo : one_or_many(root.at("slo_s"), !simulates)) {
      c.slos_s.push_back(slo.number());
      if (!(c.slos_s.back() > 0)) slo.fail("expected an SLO > 0 seconds, got " + slo.value().dump());
      if (c.slos_s.back() > sim::kMaxSloS) slo.fail("expected an SLO of at most 1e6 seconds, got " + slo.value().dump());
    }
  if (root.has("hardware") && !root.at("hardware").value().is_null()) c.hardware = strings(root.at("hardware"));
  if (c.decode && c.decode->from_hardware && c.hardware.empty())
    root.at("decode").fail(c.decode->profile.empty()
                               ? "\"hardware\" takes decode throughputs from the hardware profiles, but $.hardware names none"
                               : "decode throughputs from a profile time the runs of $.hardware's profiles, but "
                                 "$.hardware names none");
  if (root.has("workload")) c.workload = parse_workload(root.at("workload"));
  if (root.has("sim")) c.sim = parse_sim_options(root.at("sim"));
  if (root.has("network")) {
    c.network = parse_network(root.at("network"));
    for (const char* key : {"request_rtt_ms", "chunk_rtt_ms"})  // 0 is what to_json writes beside a network
      if (root.has("sim") && root.at("sim").has(key) && root.at("sim").at(key).number() != 0)
        root.at("sim").at(key).fail("the network section sets the round trip: give $.network.rtt_ms, not $.sim." +
                                    std::string(key));
  }
  if (root.has("repetitions")) {
    c.repetitions = int_at_least(root.at("repetitions"), 1);
    if (c.repetitions > kMaxRepetitions)
      root.at("repetitions").fail("expected at most " + std::to_string(kMaxRepetitions) + " repetitions, got " +
                                  std::to_string(c.repetitions));
  }
  if (root.has("figures"))
    for (const auto& kind : one_or_many(root.at("figures"))) {
      const std::string name = kind.string();
      if (std::find(kFigureKinds.begin(), kFigureKinds.end(), name) == kFigureKinds.end())
        kind.fail("unknown figure \"" + name + "\" (known: size_quality, ttft_vs_bandwidth, violation_vs_quality, "
                  "ttft_cdf, ttft_vs_load)");
      c.figures.push_back(name);
    }
  if (c.kv_scale)
    for (size_t i = 0; i < c.context_sets.size(); ++i)
      if (c.context_sets[i].source == ContextSource::kFiles && !c.context_sets[i].fp16_bytes_per_token)
        root.at("kv_scale").fail("context set \"" + c.context_sets[i].name +
                                 "\" reads profile files: give its fp16_bytes_per_token so KV bytes can be scaled");
  return c;
}

ExperimentConfig read_experiment_config(const std::string& path) {
  return parse_experiment_config(common::read_json_file(path), path);
}

namespace {
nlohmann::json to_json(const ModelContexts& m) {
  nlohmann::json out = {{"model", m.model},       {"dataset", m.dataset},         {"count", m.count},
                        {"tokens", m.tokens},     {"chunk_tokens", m.chunk_tokens}, {"continuation_tokens", m.continuation_tokens},
                        {"stride_chars", m.stride_chars}};
  // Only when set, so that the configs of earlier runs read back the same.
  if (m.transform_fit.windows) out["transform_fit"]["windows"] = *m.transform_fit.windows;
  if (m.transform_fit.sensitivity_windows) out["transform_fit"]["sensitivity_windows"] = *m.transform_fit.sensitivity_windows;
  return out;
}
}  // namespace

nlohmann::json to_json(const ExperimentConfig& c) {
  nlohmann::json contexts = nlohmann::json::array();
  for (const auto& set : c.context_sets) {
    nlohmann::json j = {{"name", set.name}, {"source", to_string(set.source)}};
    if (set.source == ContextSource::kModel) {
      j.update(to_json(set.measured));
      j["fallback"] = set.fallback ? to_json(*set.fallback) : nlohmann::json(nullptr);
      j["extrapolate"] = set.extrapolate ? nlohmann::json{{"chunks", set.extrapolate->chunks},
                                                          {"chunk_tokens", set.extrapolate->chunk_tokens}}
                                         : nlohmann::json(nullptr);
    } else if (set.source == ContextSource::kSynthetic) {
      j["chunks"] = set.synthetic_chunks;
      j["chunk_tokens"] = set.synthetic_chunk_tokens;
    } else {
      j["files"] = set.files;
      if (set.fp16_bytes_per_token) j["fp16_bytes_per_token"] = *set.fp16_bytes_per_token;
    }
    contexts.push_back(j);
  }
  nlohmann::json traces = nlohmann::json::array();
  for (const auto& t : c.trace_sets)
    traces.push_back({{"name", t.name}, {"inputs", t.inputs}, {"format", t.format}, {"scale", t.scale},
                      {"fallback", t.fallback}});
  nlohmann::json workload = {{"kind", c.workload.poisson ? "poisson" : "single"}};
  if (c.workload.poisson) {
    workload["rate_per_s"] = c.workload.rates_per_s;
    workload["requests"] = c.workload.requests;
  }
  nlohmann::json out = {{"name", c.name},
                        {"description", c.description},
                        {"seed", c.seed},
                        {"contexts", contexts},
                        {"codecs", c.codecs},
                        {"levels", c.levels},
                        {"kv_scale", c.kv_scale ? nlohmann::json{{"name", c.kv_scale->name},
                                                                 {"fp16_bytes_per_token", c.kv_scale->fp16_bytes_per_token}}
                                                : nlohmann::json(nullptr)},
                        {"decode", !c.decode                  ? nlohmann::json("measured")
                                   : !c.decode->profile.empty() ? nlohmann::json{{"profile", c.decode->profile}}
                                   : c.decode->from_hardware  ? nlohmann::json("hardware")
                                                             : nlohmann::json{{"fp16_bytes_per_s", c.decode->fp16_bytes_per_s},
                                                                              {"source", c.decode->source}}},
                        {"traces", traces},
                        {"policies", c.policies},
                        {"slo_s", c.slos_s},
                        {"hardware", c.hardware},
                        {"workload", workload},
                        {"sim",
                         {{"pipelining", c.sim.pipelining},
                          {"shared_gpu", c.sim.shared_gpu},
                          {"artifact_timing", c.sim.artifact_timing},
                          {"query_tokens", c.sim.query_tokens},
                          {"request_rtt_ms", c.sim.request_rtt_ms},
                          {"chunk_rtt_ms", c.sim.chunk_rtt_ms}}},
                        {"repetitions", c.repetitions},
                        {"figures", c.figures}};
  if (c.network) {
    nlohmann::json queues = nlohmann::json::array();
    for (const auto& q : c.network->queues) {
      nlohmann::json queue = {{"name", q.name}};
      if (q.bytes > 0) queue["bytes"] = q.bytes;
      if (q.ms > 0) queue["ms"] = q.ms;
      queues.push_back(queue);
    }
    out["network"] = {{"link_model", c.network->link_models},
                      {"rtt_ms", c.network->rtts_ms},
                      {"queue", queues},
                      {"congestion_control", c.network->congestion_controls},
                      {"slow_start_after_idle", c.network->slow_start_after_idle}};
  }
  return out;
}

}  // namespace kvstream::experiments
