// External policies (sim/policies/external_policy.cpp, docs/POLICIES.md): the Python examples of
// examples/policies/ speak the JSON-lines protocol, budget.py decides as its C++ twin does, one
// program serves a thread's requests across runs, and every way a program can fail is an error that
// names the request and the chunk.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

#include "common/data_resolver.h"
#include "sim/network_path.h"
#include "sim/policies/policies.h"
#include "sim/policy.h"
#include "sim/simulation.h"
#include "tests/test_support.h"
#include "traces/trace_readers.h"
#include "traces/trace_transforms.h"

namespace kvstream::sim {
namespace {

const std::filesystem::path kRoot = std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();

std::string python_policy(const std::filesystem::path& script, const std::string& options = "") {
  return "external:cmd=\"python3 " + script.string() + "\"" + options;
}

std::string example(const std::string& script_and_args) {
  return "external:cmd=\"python3 " + (kRoot / "examples/policies").string() + "/" + script_and_args + "\"";
}

// Three SmolLM2 WikiText-2 context profiles (6 chunks, CacheGen levels 1-3 and quant8, measured
// recompute times) on Norway 3G's bus trace scaled to a mean of `mbps`; Poisson arrivals, several
// requests in flight.
SimulationInputs wiki_on_norway(const std::string& policy, double slo_s, LinkModel link, double mbps = 100) {
  SimulationInputs in;
  for (int i = 0; i < 3; ++i)
    in.contexts.push_back(read_context_profile(
        (kRoot / ("experiments/configs/profiles/smollm2-wikitext/wiki.test-" + std::to_string(i) + ".json")).string()));
  const auto trace = traces::read_trace(common::resolve_data("traces/pensieve_norway3g/norway_bus_1").string());
  in.trace = std::make_shared<const traces::BandwidthTrace>(traces::scale(trace, mbps * 1e6 / trace.mean_bps()));
  in.policy = policy;
  in.config.slo_s = slo_s;
  NetworkPath path;
  path.link_model = link;
  path.request_rtt_s = path.chunk_rtt_s = 0.02;
  apply_network_path(path, in.trace->mean_bps(), in.config);
  in.requests = poisson_requests(2, 16, in.contexts.size(), 5);
  return in;
}

class ExternalPolicy : public test_support::TempDirTest {
 protected:
  // A Python policy written into the test's directory.
  std::filesystem::path script(const std::string& name, const std::string& body) {
    const auto path = dir_ / name;
    std::ofstream(path) << "import json, os, sys\n" << body;
    return path;
  }
  // What simulating with `policy` throws (std::runtime_error or std::invalid_argument), or "".
  static std::string error_of(const std::string& policy) {
    try {
      simulate(wiki_on_norway(policy, 1, LinkModel::kFluid));
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(ExternalPolicy, BudgetExampleDecidesAsItsCppTwin) {
  std::set<std::string> chosen;
  for (const LinkModel link : {LinkModel::kFluid, LinkModel::kTcp})
    for (const double mbps : {30, 100})
    for (const double slo_s : {0.6, 1.0, 2.0}) {
      const auto twin = simulate(wiki_on_norway("cachegen:ladder=cachegen", slo_s, link, mbps));
      const auto external = simulate(wiki_on_norway(example("budget.py") + ",ladder=cachegen", slo_s, link, mbps));
      ASSERT_EQ(twin.size(), external.size());
      for (size_t r = 0; r < twin.size(); ++r) {
        EXPECT_EQ(external[r].choices, twin[r].choices) << "request " << r << ", SLO " << slo_s;
        EXPECT_EQ(external[r].ttft_s, twin[r].ttft_s) << "request " << r << ", SLO " << slo_s;
        chosen.insert(twin[r].choices.begin(), twin[r].choices.end());
      }
    }
  // The runs exercise every branch of the rule: each level and text.
  EXPECT_EQ(chosen, (std::set<std::string>{"cachegen:1", "cachegen:2", "cachegen:3", "text"}));
}

TEST_F(ExternalPolicy, FixedAndRobustMpcExamplesRun) {
  const auto twin = simulate(wiki_on_norway("fixed:cachegen:2", 1, LinkModel::kTcp));
  const auto fixed = simulate(wiki_on_norway(example("fixed.py cachegen:2"), 1, LinkModel::kTcp));
  for (size_t r = 0; r < twin.size(); ++r) EXPECT_EQ(fixed[r].ttft_s, twin[r].ttft_s) << "request " << r;
  const auto mpc = simulate(wiki_on_norway(example("robust_mpc.py"), 1, LinkModel::kTcp));
  std::set<std::string> chosen;
  for (const auto& result : mpc) {
    EXPECT_TRUE(result.completed);
    chosen.insert(result.choices.begin(), result.choices.end());
  }
  EXPECT_GE(chosen.size(), 2u);  // it adapts
}

// What the program is told: a context's table once, one "request" message before a request's first
// decision, a "decide" per chunk, an "end" when the request is done; one program for the thread,
// across runs.
TEST_F(ExternalPolicy, MessagesFollowTheProtocolAndOneProgramServesEveryRun) {
  const auto log = dir_ / "messages.jsonl";
  const auto recorder = script("recorder.py", "log = open(sys.argv[1], 'a')\n"
                                              "for line in sys.stdin:\n"
                                              "    m = json.loads(line)\n"
                                              "    m['pid'] = os.getpid()\n"
                                              "    log.write(json.dumps(m) + '\\n'); log.flush()\n"
                                              "    if m['type'] == 'decide': print(json.dumps({'choice': 'cachegen:1'}), flush=True)\n");
  const std::string policy = "external:cmd=\"python3 " + recorder.string() + " " + log.string() + "\",ladder=cachegen";
  const auto first = simulate(wiki_on_norway(policy, 1, LinkModel::kTcp));
  const auto second = simulate(wiki_on_norway(policy, 2, LinkModel::kFluid));
  // The last "end" messages may still be on their way into the log: 3 contexts (the same tables in
  // both runs), then per request its message, 6 decisions and its end.
  const size_t expected_lines = 3 + (first.size() + second.size()) * 8;
  const auto lines_in_log = [&] {
    std::ifstream in(log);
    return size_t(std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n'));
  };
  for (int waited_ms = 0; waited_ms < 5000 && lines_in_log() < expected_lines; waited_ms += 10)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::map<std::string, ContextProfile> profiles;
  for (auto& profile : wiki_on_norway(policy, 1, LinkModel::kFluid).contexts) profiles[profile.name] = profile;
  std::ifstream in(log);
  std::set<int> pids;
  std::map<int, nlohmann::json> contexts, requests;  // by number: the table, the "request" message
  std::map<int, int> decided, ended;
  std::map<int, size_t> told;  // transfers
  size_t lines = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    const auto m = nlohmann::json::parse(line);
    pids.insert(m["pid"].get<int>());
    if (m["type"] == "context") {
      const int c = m["context"];
      EXPECT_FALSE(contexts.count(c)) << "a table is told once: " << line;
      const ContextProfile& profile = profiles.at(m["table"]["name"]);
      nlohmann::json options = nlohmann::json::array();  // the ladder best first, as the C++ policies see it
      for (const int level : policies::ladder_best_first(profile, "cachegen")) options.push_back(profile.levels[size_t(level)].name);
      options.push_back("text");
      EXPECT_EQ(m["table"]["options"], options);
      EXPECT_EQ(m["table"]["chunks"].size(), 6u);
      EXPECT_EQ(m["table"]["chunks"][0]["bits"].size(), 4u);
      EXPECT_EQ(m["table"]["chunks"][0]["tokens"], 128);
      contexts[c] = m["table"];
      continue;
    }
    const int r = m["request"];
    if (m["type"] == "request") {
      EXPECT_FALSE(requests.count(r)) << "request numbers are not reused";
      EXPECT_TRUE(contexts.count(m["context"].get<int>())) << "a request after its context's table: " << line;
      EXPECT_DOUBLE_EQ(m["deadline_s"].get<double>(), m["arrival_s"].get<double>() + m["slo_s"].get<double>());
      requests[r] = m;
    } else if (m["type"] == "decide") {
      ASSERT_TRUE(requests.count(r)) << "a decision before its request: " << line;
      EXPECT_EQ(m["chunk"], decided[r]++);
      told[r] += m["transfers"].size();
      EXPECT_EQ(told[r], m["chunk"].get<size_t>()) << "one transfer per earlier KV chunk, each told once";
      EXPECT_NEAR(m["remaining_s"].get<double>(), requests[r]["deadline_s"].get<double>() - m["now_s"].get<double>(), 1e-12);
    } else {
      EXPECT_EQ(m["type"], "end");
      EXPECT_EQ(decided[r], 6) << "ended after its six decisions";
      ++ended[r];
    }
  }
  EXPECT_EQ(pids.size(), 1u);
  EXPECT_EQ(contexts.size(), 3u);
  EXPECT_EQ(requests.size(), first.size() + second.size());
  EXPECT_EQ(ended.size(), requests.size());
  EXPECT_EQ(lines, expected_lines);
}

TEST_F(ExternalPolicy, FailuresNameTheRequestAndChunk) {
  // A program that failed is started again for the next run: both runs see it exit.
  const auto crash = script("crash.py", "for _ in range(3): sys.stdin.readline()  # context, request, decide\nsys.exit(3)\n");
  for (int run = 0; run < 2; ++run) {
    const std::string crashed = error_of(python_policy(crash));
    EXPECT_NE(crashed.find("request 0 (context wiki.test-"), std::string::npos) << crashed;
    EXPECT_NE(crashed.find("chunk 0: python3 " + crash.string() + ": exited with status 3 without answering"),
              std::string::npos) << crashed;
  }
  const auto silent = script("silent.py", "for line in sys.stdin: pass\n");
  EXPECT_NE(error_of(python_policy(silent, ",timeout_s=0.3")).find("no answer within 0.3 s"), std::string::npos);
  // Two good answers, then a bad one: the error is at chunk 2.
  const auto late = script("late.py", "for line in sys.stdin:\n"
                                      "    m = json.loads(line)\n"
                                      "    if m['type'] != 'decide': continue\n"
                                      "    print(json.dumps({'choice': 'cachegen:1'}) if m['chunk'] < 2 else 'hello', flush=True)\n");
  const std::string not_json = error_of(python_policy(late));
  EXPECT_NE(not_json.find("chunk 2: answered hello: not a JSON line"), std::string::npos) << not_json;
  const auto wrong = script("wrong.py", "for line in sys.stdin:\n"
                                        "    if json.loads(line)['type'] == 'decide': print(json.dumps({'choice': 'text'}), flush=True)\n");
  EXPECT_NE(error_of(python_policy(wrong, ",text=0,ladder=cachegen"))
                .find("\"text\" is not one of its options (cachegen:3, cachegen:2, cachegen:1)"),
            std::string::npos) << error_of(python_policy(wrong, ",text=0,ladder=cachegen"));
  const auto no_key = script("no_key.py", "for line in sys.stdin:\n"
                                          "    if json.loads(line)['type'] == 'decide': print('[1]', flush=True)\n");
  EXPECT_NE(error_of(python_policy(no_key)).find("answered [1]: expected {\"choice\": NAME}"), std::string::npos);
  EXPECT_NE(error_of("external:cmd=\"kvstream-no-such-program x\"").find("cannot run kvstream-no-such-program x"),
            std::string::npos);
  // Spec errors come before anything runs.
  EXPECT_NE(error_of("external").find("option cmd: expected the program to run"), std::string::npos);
  EXPECT_NE(error_of(example("fixed.py x") + ",horizon=3").find("unknown option \"horizon\""), std::string::npos);
  EXPECT_NE(error_of(example("fixed.py x") + ",timeout_s=0").find("option timeout_s"), std::string::npos);
}

}  // namespace
}  // namespace kvstream::sim
