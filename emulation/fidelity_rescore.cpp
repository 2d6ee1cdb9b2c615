#include "emulation/fidelity_rescore.h"

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

namespace kvstream::emulation {

namespace {

using common::JsonNode;

// The index of the item of `items` whose name is `node`'s string.
template <typename T>
size_t index_of(const std::vector<T>& items, const JsonNode& node, const char* what) {
  const std::string name = node.string();
  for (size_t i = 0; i < items.size(); ++i)
    if (items[i].name == name) return i;
  node.fail(std::string("the config has no ") + what + " \"" + name + "\"");
}

// What identifies a case; two runs of one case are the same measurement twice.
auto key_of(const FidelityCase& c) {
  return std::make_tuple(c.trace, c.queue, c.workload, c.rtt_ms, c.congestion_control, c.policy, c.slo_s, c.offset_s,
                         c.context);
}

std::string describe(const FidelityConfig& config, const FidelityCase& c) {
  std::ostringstream text;
  text << "trace " << config.traces[c.trace].name << ", rtt " << c.rtt_ms << " ms, queue " << config.queues[c.queue].name
       << ", " << c.congestion_control << ", workload " << config.workloads[c.workload].name << " at " << c.offset_s
       << " s, " << c.policy << ", SLO " << c.slo_s << " s";
  return text.str();
}

// The first JSON path where `a` and `b` differ ("$" when their types or sizes do).
std::string first_difference(const nlohmann::json& a, const nlohmann::json& b, const std::string& path = "$") {
  if (a.type() != b.type()) return path;
  if (a.is_object()) {
    for (const auto& [key, value] : a.items())
      if (!b.contains(key)) return path + "." + key;
      else if (value != b.at(key)) return first_difference(value, b.at(key), path + "." + key);
    for (const auto& [key, value] : b.items())
      if (!a.contains(key)) return path + "." + key;
    return path;
  }
  if (a.is_array()) {
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
      if (a[i] != b[i]) return first_difference(a[i], b[i], path + "[" + std::to_string(i) + "]");
    return path;
  }
  return path;
}

// An emulated request, checked against the profile of its context.
sim::RequestResult stored_request(const JsonNode& node, size_t index, const std::vector<sim::ContextProfile>& contexts) {
  sim::RequestResult r = sim::request_result_from_json(node);
  if (r.request != index) node.at("request").fail("expected request " + std::to_string(index) + " (requests in order)");
  if (!r.completed) node.at("completed").fail("an emulated request completes (the emulator refuses runs that would not)");
  if (!(r.ttft_s > 0)) node.at("ttft_s").fail("expected an emulated TTFT > 0, got " + std::to_string(r.ttft_s));
  const sim::ContextProfile* profile = nullptr;
  for (const auto& context : contexts)
    if (context.name == r.context) profile = &context;
  if (!profile) node.at("context").fail("no profile of the config is \"" + r.context + "\"");
  const size_t chunks = profile->chunks.size();
  if (r.choices.size() != chunks)
    node.at("choices").fail("expected one choice per chunk of " + r.context + " (" + std::to_string(chunks) + "), got " +
                            std::to_string(r.choices.size()));
  if (r.chunk_transfer_s.size() != chunks)
    node.at("chunk_transfer_s").fail("expected one time per chunk of " + r.context + " (" + std::to_string(chunks) +
                                     "), got " + std::to_string(r.chunk_transfer_s.size()));
  std::set<std::string> levels = {"text"};
  for (const auto& level : profile->levels) levels.insert(level.name);
  for (size_t c = 0; c < chunks; ++c)
    if (!levels.count(r.choices[c])) node.at("choices").at(c).fail("not a level of " + r.context + ", nor text");
  return r;
}

}  // namespace

StoredRun parse_stored_run(const FidelityRunner& runner, const JsonNode& line) {
  const FidelityConfig& config = runner.config();
  const auto& contexts = runner.contexts();
  StoredRun run;
  FidelityCase& c = run.fidelity_case;
  c.trace = index_of(config.traces, line.at("trace"), "trace");
  c.queue = index_of(config.queues, line.at("queue"), "queue");
  c.workload = index_of(config.workloads, line.at("workload"), "workload");
  c.rtt_ms = line.at("rtt_ms").number_at_least(0);
  c.congestion_control = line.at("congestion_control").string();
  c.policy = line.at("policy").string();
  c.slo_s = line.at("slo_s").number_at_least(0);
  c.offset_s = line.at("offset_s").number_at_least(0);
  const double mean_mbps = line.at("trace_mean_mbps").number_at_least(0), now_mbps = runner.trace(c.trace).mean_bps() / 1e6;
  if (std::abs(mean_mbps - now_mbps) > 1e-9 * now_mbps)
    line.at("trace_mean_mbps").fail("the trace was emulated at a mean of " + std::to_string(mean_mbps) +
                                    " Mbit/s; the config gives " + std::to_string(now_mbps));
  const JsonNode queue = line.at("queue_bytes");
  const uint64_t queue_bytes = queue.value().is_null() ? 0 : uint64_t(queue.integer_at_least(1));
  if (queue_bytes != runner.queue_bytes(c))
    queue.fail("the queue was " + std::to_string(queue_bytes) + " bytes; the config gives " +
               std::to_string(runner.queue_bytes(c)) + " (0: unbounded)");

  const FidelityWorkload& workload = config.workloads[c.workload];
  const JsonNode stored = line.at("emulated"), requests = stored.at("requests");
  const size_t expected = workload.poisson ? size_t(workload.requests) : 1;
  if (requests.size() != expected)
    requests.fail("workload " + workload.name + " has " + std::to_string(expected) + " request(s), the run " +
                  std::to_string(requests.size()));
  for (size_t r = 0; r < requests.size(); ++r) run.emulated.results.push_back(stored_request(requests.at(r), r, contexts));
  if (!workload.poisson) {
    const std::string& context = run.emulated.results[0].context;
    for (size_t i = 0; i < contexts.size(); ++i)
      if (contexts[i].name == context) c.context = i;
  }
  const JsonNode link = stored.at("link");
  run.emulated.delivered_packets = uint64_t(link.at("delivered_packets").integer_at_least(0));
  run.emulated.dropped_packets = uint64_t(link.at("dropped_packets").integer_at_least(0));
  run.emulated.mean_lateness_s = link.at("mean_lateness_s").number_at_least(0);
  run.emulated.max_lateness_s = link.at("max_lateness_s").number_at_least(0);

  // The case must be one the config plans: a policy, SLO, offset or context it does not run is not a
  // measurement of this config.
  const auto planned = plan_fidelity(config);
  for (const auto& p : planned)
    if (key_of(p) == key_of(c)) return run;
  line.fail("this run (" + describe(config, c) + ", context " + contexts[c.context].name +
            ") is not a case of the config: its policy, SLO, round trip, congestion control, offset or context "
            "is not one the config runs there");
}

std::vector<StoredRun> read_stored_runs(const FidelityRunner& runner, const std::filesystem::path& dir) {
  const FidelityConfig& config = runner.config();
  const std::filesystem::path stored_config = dir / "config.json";
  const nlohmann::json written = common::read_json_file(stored_config.string());
  if (written != config.source)
    throw std::runtime_error(stored_config.string() + " is not the config given (they differ at " +
                             first_difference(written, config.source) + "): rescore a directory with the config " +
                             "it was emulated with (pass " + stored_config.string() + " itself)");
  const std::filesystem::path path = dir / "fidelity.jsonl";
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path.string() + ": cannot read (--rescore takes a `kvstream fidelity` result directory)");
  const auto planned = plan_fidelity(config);
  std::map<decltype(key_of(planned.front())), size_t> line_of;  // case -> the line that holds it
  std::vector<StoredRun> runs;
  std::string text;
  for (size_t number = 1; std::getline(in, text); ++number) {
    if (text.empty()) continue;
    const std::string where = path.string() + ":" + std::to_string(number);
    if (in.eof()) throw std::runtime_error(where + ": the last line has no newline (the file was cut)");
    const nlohmann::json line = common::parse_json(text, where);
    runs.push_back(parse_stored_run(runner, JsonNode(line, where)));
    const auto [at, fresh] = line_of.emplace(key_of(runs.back().fidelity_case), number);
    if (!fresh)
      throw std::runtime_error(where + ": the run of line " + std::to_string(at->second) + " again (" +
                               describe(config, runs.back().fidelity_case) + ")");
  }
  if (runs.size() != planned.size()) {
    for (const auto& c : planned)
      if (!line_of.count(key_of(c)))
        throw std::runtime_error(path.string() + " holds " + std::to_string(runs.size()) + " of the config's " +
                                 std::to_string(planned.size()) + " runs (cut, or from another config?): the first " +
                                 "missing is " + describe(config, c) + ", context " + runner.contexts()[c.context].name);
  }
  return runs;
}

}  // namespace kvstream::emulation
