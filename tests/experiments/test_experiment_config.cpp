// The experiment config schema (experiments/SCHEMA.md): every error names the JSON path, and the
// resolved form reads back to itself.
#include <gtest/gtest.h>

#include "common/json_reader.h"
#include "experiments/experiment_config.h"
#include "experiments/experiment_grid.h"
#include "models/architecture_table.h"
#include "profiling/kv_scale.h"

namespace kvstream::experiments {
namespace {

nlohmann::json minimal() {
  return nlohmann::json::parse(R"({
    "name": "t",
    "contexts": [{"name": "syn", "source": "synthetic", "chunks": 3}],
    "traces": [{"name": "c", "inputs": ["constant:gbps=1"]}],
    "policies": ["quant8", "cachegen"],
    "slo_s": [0.5, 1]
  })");
}

// The message parse_experiment_config throws for `config`, or "" when it parses.
std::string error_of(const nlohmann::json& config) {
  try {
    parse_experiment_config(config, "c.json");
  } catch (const common::JsonError& e) {
    return e.what();
  }
  return "";
}

TEST(ExperimentConfig, MinimalConfigParses) {
  const auto c = parse_experiment_config(minimal(), "c.json");
  EXPECT_EQ(c.name, "t");
  ASSERT_EQ(c.context_sets.size(), 1u);
  EXPECT_EQ(c.context_sets[0].source, ContextSource::kSynthetic);
  EXPECT_EQ(c.context_sets[0].synthetic_chunks, 3);
  EXPECT_EQ(c.slos_s, (std::vector<double>{0.5, 1}));
  EXPECT_FALSE(c.workload.poisson);
  EXPECT_EQ(c.repetitions, 1);
}

TEST(ExperimentConfig, ErrorsNameTheJsonPath) {
  struct Case {
    std::function<void(nlohmann::json&)> edit;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](auto& j) { j.erase("name"); }, "c.json: $: missing key \"name\""},
      {[](auto& j) { j["polices"] = nlohmann::json::array(); }, "c.json: $: unknown key \"polices\""},
      {[](auto& j) { j["name"] = "a b"; }, "c.json: $.name: expected a name of letters"},
      {[](auto& j) { j["traces"][0]["scale"] = -2; }, "c.json: $.traces[0].scale: expected a number > 0, got -2"},
      {[](auto& j) { j["slo_s"][1] = 0; }, "c.json: $.slo_s[1]: expected an SLO > 0 seconds, got 0"},
      {[](auto& j) { j["slo_s"][1] = 1e300; }, "c.json: $.slo_s[1]: expected an SLO of at most 1e6 seconds"},
      {[](auto& j) { j["slo_s"] = nlohmann::json::array(); }, "c.json: $.slo_s: expected a non-empty list"},
      {[](auto& j) { j["policies"][1] = "fastest"; }, "c.json: $.policies[1]: unknown policy \"fastest\""},
      {[](auto& j) { j["contexts"][0]["source"] = "web"; },
       "c.json: $.contexts[0].source: expected \"model\", \"synthetic\" or \"files\", got \"web\""},
      {[](auto& j) { j["contexts"][0]["chunks"] = 0; }, "c.json: $.contexts[0].chunks: expected an integer >= 1, got 0"},
      {[](auto& j) { j["contexts"][0]["colour"] = 1; }, "c.json: $.contexts[0]: unknown key \"colour\""},
      {[](auto& j) { j["contexts"] = nlohmann::json::array(); }, "c.json: $.contexts: expected at least one context set"},
      {[](auto& j) { j["contexts"][0] = {{"name", "m"}, {"model", "stories260K"}, {"dataset", "x.txt"}, {"chunk_tokens", 64}}; },
       "c.json: $.contexts[0]: missing key \"tokens\""},
      {[](auto& j) { j["codecs"] = {"cachegen", "nosuchcodec"}; }, "c.json: $.codecs[1]: "},
      {[](auto& j) { j["workload"] = {{"kind", "burst"}}; }, "c.json: $.workload.kind: expected \"single\" or \"poisson\""},
      {[](auto& j) { j["workload"] = {{"kind", "poisson"}, {"rate_per_s", {1, -1}}, {"requests", 10}}; },
       "c.json: $.workload.rate_per_s[1]: expected a rate > 0 requests/s"},
      {[](auto& j) { j["workload"] = {{"kind", "poisson"}, {"rate_per_s", 1}}; }, "c.json: $.workload: missing key \"requests\""},
      {[](auto& j) { j["kv_scale"] = "gpt-5"; }, "c.json: $.kv_scale: unknown architecture \"gpt-5\" (known: stories260K, smollm2-135m, mistral-7b"},
      {[](auto& j) { j["decode"] = {{"fp16_bytes_per_s", 5e9}}; }, "c.json: $.decode: missing key \"source\""},
      {[](auto& j) { j["figures"] = {"pie"}; }, "c.json: $.figures[0]: unknown figure \"pie\""},
      {[](auto& j) { j["contexts"][0]["model"] = "smollm2"; }, "c.json: $.contexts[0]: unknown key \"model\""},
      {[](auto& j) { j["traces"][0]["format"] = "pcap"; }, "c.json: $.traces[0].format: unknown trace format 'pcap'"},
      {[](auto& j) { j["seed"] = -1; }, "c.json: $.seed: expected an integer in [0, 2^64), got -1"},
      {[](auto& j) {
         j["contexts"][0] = {{"name", "m"}, {"model", "smollm2"}, {"dataset", "x.txt"}, {"chunk_tokens", 64},
                             {"tokens", {512, 1024}}, {"fallback", {{"model", "stories260K"}, {"tokens", 384}}}};
       },
       "c.json: $.contexts[0].fallback.tokens: a fallback with its own tokens"},
      {[](auto& j) {
         j.erase("policies");
         j["slo_s"] = -1;
       },
       "c.json: $.slo_s: expected an SLO > 0 seconds, got -1"},
      {[](auto& j) {
         j["contexts"][0] = {{"name", "m"}, {"model", "smollm2"}, {"dataset", "x.txt"}, {"chunk_tokens", 64}, {"tokens", 512},
                             {"transform_fit", {{"windows", 2}, {"sensitivity_windows", 3}}}};
       },
       "c.json: $.contexts[0].transform_fit.sensitivity_windows: expected at most the 2 windows of the fit"},
      {[](auto& j) {
         j["contexts"][0] = {{"name", "m"}, {"model", "smollm2"}, {"dataset", "x.txt"}, {"chunk_tokens", 64}, {"tokens", 512},
                             {"transform_fit", {{"window", 2}}}};
       },
       "c.json: $.contexts[0].transform_fit: unknown key \"window\""},
      {[](auto& j) {
         j["contexts"][0] = {{"name", "m"}, {"model", "smollm2"}, {"dataset", "x.txt"}, {"chunk_tokens", 64}, {"tokens", 512},
                             {"fallback", {{"model", "stories260K"}, {"transform_fit", {{"windows", 0}}}}}};
       },
       "c.json: $.contexts[0].fallback.transform_fit.windows: expected an integer >= 1, got 0"},
      {[](auto& j) { j["repetitions"] = 1.5; }, "c.json: $.repetitions: expected an integer, got 1.5"},
      {[](auto& j) { j["repetitions"] = 1000000000; }, "c.json: $.repetitions: expected at most 100000 repetitions, got 1000000000"},
      {[](auto& j) { j["workload"] = {{"kind", "poisson"}, {"rate_per_s", 1}, {"requests", 100000000}}; },
       "c.json: $.workload.requests: expected at most 1000000 requests, got 100000000"},
      {[](auto& j) { j["kv_scale"] = {{"name", "huge"}, {"fp16_bytes_per_token", 1e308}}; },
       "c.json: $.kv_scale.fp16_bytes_per_token: expected a number in [1, 1e+09], got 1e+308"},
      {[](auto& j) { j["name"] = ".."; }, "c.json: $.name: expected a name that does not start with '.', got \"..\""},
      {[](auto& j) { j["sim"] = {{"pipelining", "yes"}}; }, "c.json: $.sim.pipelining: expected true or false"},
      {[](auto& j) { j["traces"].push_back(j["traces"][0]); }, "c.json: $.traces: two trace sets are named \"c\""},
      {[](auto& j) { j.erase("traces"); }, "c.json: $: missing key \"traces\""},
      {[](auto& j) {
         j["contexts"][0] = {{"name", "f"}, {"source", "files"}, {"files", {"p.json"}}};
         j["kv_scale"] = "mistral-7b";
       },
       "c.json: $.kv_scale: context set \"f\" reads profile files: give its fp16_bytes_per_token"},
  };
  for (const auto& c : cases) {
    auto config = minimal();
    c.edit(config);
    const std::string message = error_of(config);
    EXPECT_EQ(message.rfind(c.message, 0), 0u) << "expected a message starting \"" << c.message << "\"\ngot \"" << message
                                               << "\"\nfor " << config.dump();
  }
}

TEST(ExperimentConfig, TokenListsExpandAndTheResolvedFormReadsBack) {
  auto j = minimal();
  j["contexts"].push_back({{"name", "wiki"}, {"model", "smollm2"}, {"dataset", "text/wikitext2/wiki.test.raw"},
                           {"tokens", {1024, 2048}}, {"chunk_tokens", 256},
                           {"transform_fit", {{"windows", 4}, {"sensitivity_windows", 1}}},
                           {"fallback", {{"model", "stories260K"}, {"chunk_tokens", 128}, {"transform_fit", {{"windows", 8}}}}},
                           {"extrapolate", {{"chunks", 10}, {"chunk_tokens", 1500}}}});
  j["kv_scale"] = "llama-2-70b";
  j["hardware"] = "a40_mistral-7b";
  j["workload"] = {{"kind", "poisson"}, {"rate_per_s", {0.5, 1}}, {"requests", 20}};
  const auto c = parse_experiment_config(j, "c.json");
  ASSERT_EQ(c.context_sets.size(), 3u);
  EXPECT_EQ(c.context_sets[1].name, "wiki-T1024");
  EXPECT_EQ(c.context_sets[2].name, "wiki-T2048");
  EXPECT_EQ(c.context_sets[2].measured.tokens, 2048);
  ASSERT_TRUE(c.context_sets[2].fallback);
  EXPECT_EQ(c.context_sets[2].fallback->model, "stories260K");
  EXPECT_EQ(c.context_sets[2].fallback->tokens, 2048);  // kept from the primary
  EXPECT_EQ(c.context_sets[2].fallback->chunk_tokens, 128);
  EXPECT_EQ(c.context_sets[2].fallback->dataset, "text/wikitext2/wiki.test.raw");
  EXPECT_EQ(c.context_sets[2].extrapolate->chunk_tokens, 1500);
  EXPECT_EQ(c.context_sets[2].measured.transform_fit, (profiling::TransformFit{4, 1}));
  EXPECT_EQ(c.context_sets[2].fallback->transform_fit, (profiling::TransformFit{8, 1}));  // sensitivity kept
  EXPECT_FALSE(c.context_sets[0].measured.transform_fit.windows);
  EXPECT_EQ(c.kv_scale->fp16_bytes_per_token, 327680);
  EXPECT_EQ(c.hardware, (std::vector<std::string>{"a40_mistral-7b"}));
  const auto resolved = to_json(c);
  EXPECT_EQ(to_json(parse_experiment_config(resolved, "config.json")), resolved);
}

TEST(ExperimentConfig, ShorthandTracesAndProfilingOnlyConfigsReadBack) {
  auto j = minimal();
  j["traces"] = {"constant:gbps=2", "traces/mahimahi/*LTE*"};
  j["policies"] = "cachegen";  // one item instead of a list
  const auto c = parse_experiment_config(j, "c.json");
  EXPECT_EQ(c.trace_sets[1].name, "traces/mahimahi/*LTE*");
  EXPECT_EQ(c.policies, (std::vector<std::string>{"cachegen"}));
  EXPECT_EQ(to_json(parse_experiment_config(to_json(c), "config.json")), to_json(c));
  j.erase("policies");
  j.erase("traces");
  j.erase("slo_s");
  const auto profiling = to_json(parse_experiment_config(j, "c.json"));
  EXPECT_EQ(to_json(parse_experiment_config(profiling, "config.json")), profiling);
}

TEST(ExperimentGrid, OrderIdsAndShards) {
  auto j = minimal();
  j["repetitions"] = 2;
  const auto c = parse_experiment_config(j, "c.json");
  GridShape shape{{{"syn"}}, {{"constant:gbps=1", "other"}}};
  const Grid grid(c, shape);
  ASSERT_EQ(grid.size(), 2u * 2 * 2 * 2);  // traces x SLOs x policies x repetitions
  EXPECT_EQ(grid[0].coordinates["policy"], "quant8");
  EXPECT_EQ(grid[1].repetition, 1);  // repetitions vary fastest
  EXPECT_EQ(grid[2].coordinates["policy"], "cachegen");
  EXPECT_EQ(grid[8].coordinates["trace"], "other");
  EXPECT_EQ(Grid(c, shape)[5].id, grid[5].id);  // ids are stable
  // Shards partition the grid.
  std::vector<int> owners(grid.size(), 0);
  for (size_t i = 0; i < 3; ++i)
    for (size_t r = 0; r < grid.size(); ++r) owners[grid[r].index] += Shard{i, 3}.owns(r);
  for (const int n : owners) EXPECT_EQ(n, 1);
  EXPECT_THROW(Shard::parse("3/3"), std::invalid_argument);
  EXPECT_THROW(Shard::parse("1"), std::invalid_argument);
  EXPECT_EQ(Shard::parse("2/5").count, 5u);
  // The same trace twice in one set would make two runs alike.
  shape.traces[0][1] = shape.traces[0][0];
  EXPECT_THROW((void)Grid(c, shape), std::invalid_argument);
}

// The network section (SCHEMA.md §7a): every key a grid axis; a fluid path has no queue, congestion
// control or restart axis (they would not change its result).
TEST(ExperimentGrid, TheNetworkSectionIsGridAxes) {
  auto j = minimal();
  j["network"] = nlohmann::json::parse(R"({"link_model": ["fluid", "tcp"], "rtt_ms": [20, 80],
    "queue": [{"name": "shallow", "ms": 50}, {"name": "deep", "bytes": 2000000}],
    "congestion_control": ["cubic", "bbr"], "slow_start_after_idle": true})");
  const auto c = parse_experiment_config(j, "c.json");
  EXPECT_EQ(to_json(parse_experiment_config(to_json(c), "config.json")), to_json(c));  // reads back
  const auto paths = network_paths(c);
  ASSERT_EQ(paths.size(), 2u + 2 * 2 * 2);  // fluid x 2 RTTs, tcp x 2 RTTs x 2 queues x 2 ccs
  EXPECT_EQ(paths[0].coordinates, nlohmann::json::parse(R"({"link_model": "fluid", "rtt_ms": 20.0, "queue": null,
                                                             "congestion_control": null, "slow_start_after_idle": null})"));
  EXPECT_EQ(paths[0].path.link_model, sim::LinkModel::kFluid);
  EXPECT_EQ(paths[0].path.request_rtt_s, 0.02);
  EXPECT_EQ(paths[0].path.chunk_rtt_s, 0.02);
  const auto& tcp = paths[2];  // tcp, 20 ms, shallow, cubic
  EXPECT_EQ(tcp.path.link_model, sim::LinkModel::kTcp);
  EXPECT_EQ(tcp.path.queue.ms, 50);
  EXPECT_EQ(tcp.path.congestion_control, "cubic");
  EXPECT_EQ(tcp.coordinates["queue"], "shallow");
  EXPECT_EQ(paths[3].coordinates["congestion_control"], "bbr");
  EXPECT_EQ(paths.back().coordinates["rtt_ms"], 80.0);
  // Every run carries its path; ids differ by path.
  const Grid grid(c, GridShape{{{"syn"}}, {{"constant:gbps=1"}}});
  ASSERT_EQ(grid.size(), paths.size() * 2 * 2);  // x SLOs x policies
  EXPECT_EQ(grid[0].coordinates["link_model"], "fluid");
  EXPECT_EQ(grid[4].network, 1u);
  EXPECT_NE(grid[0].id, grid[4].id);

  // Without a network section: the tcp link model over sim's round trips (the modelled connection's
  // round trip the larger), recorded like any path.
  auto defaults = minimal();
  defaults["sim"] = {{"request_rtt_ms", 5}, {"chunk_rtt_ms", 7}};
  const auto plain = parse_experiment_config(defaults, "c.json");
  const auto one = network_paths(plain);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].path.link_model, sim::LinkModel::kTcp);
  EXPECT_EQ(one[0].path.request_rtt_s, 0.005);
  EXPECT_EQ(one[0].path.chunk_rtt_s, 0.007);
  EXPECT_EQ(one[0].coordinates, nlohmann::json::parse(R"({"link_model": "tcp", "rtt_ms": 7.0, "queue": "unbounded",
                                                          "congestion_control": "cubic", "slow_start_after_idle": true})"));
  EXPECT_FALSE(to_json(plain).contains("network"));
  // One fluid path without a round trip (what the shipped paper configs say): no network coordinates,
  // so ids and results are those of configs written before the section existed.
  auto fluid = minimal();
  fluid["network"] = {{"link_model", "fluid"}};
  const auto paper = parse_experiment_config(fluid, "c.json");
  ASSERT_EQ(network_paths(paper).size(), 1u);
  EXPECT_TRUE(network_paths(paper)[0].coordinates.empty());
  const Grid paper_grid(paper, GridShape{{{"syn"}}, {{"constant:gbps=1"}}});
  EXPECT_FALSE(paper_grid[0].coordinates.contains("link_model"));
  EXPECT_EQ(paper_grid[0].id, "16080e968db0f076") << paper_grid[0].coordinates;  // as before the section
  EXPECT_NE(Grid(plain, GridShape{{{"syn"}}, {{"constant:gbps=1"}}})[0].id, paper_grid[0].id);
}

TEST(ExperimentConfig, NetworkErrorsNameTheJsonPathAndTheValidValues) {
  const auto error_with = [](const char* network) {
    auto j = minimal();
    j["network"] = nlohmann::json::parse(network);
    return error_of(j);
  };
  const std::vector<std::pair<const char*, std::string>> cases = {
      {R"({"link_model": "packet"})", "c.json: $.network.link_model: expected link model \"fluid\" or \"tcp\", got \"packet\""},
      {R"({"link_model": ["tcp", "tcp"]})", "c.json: $.network.link_model[1]: listed twice"},
      {R"({"link_model": []})", "c.json: $.network.link_model: expected a non-empty list"},
      {R"({"rtt_ms": -1})", "c.json: $.network.rtt_ms: expected a number in [0, 1e+06], got -1"},
      {R"({"rtt_ms": [20, 1e300]})", "c.json: $.network.rtt_ms[1]: expected a number in [0, 1e+06]"},
      {R"({"queue": {"name": "q", "bytes": 100}})", "c.json: $.network.queue.bytes: expected an integer >= 1500, got 100"},
      {R"({"queue": {"name": "q", "bytes": 1e13}})", "c.json: $.network.queue.bytes: expected an integer"},
      {R"({"queue": {"name": "q", "bytes": 3000, "ms": 5}})", "c.json: $.network.queue: give \"bytes\" or \"ms\", not both"},
      {R"({"queue": [{"name": "q"}, {"name": "q", "ms": 5}]})", "c.json: $.network.queue[1].name: two queues are named \"q\""},
      {R"({"queue": {"name": "a b"}})", "c.json: $.network.queue.name: expected a name"},
      {R"({"congestion_control": "vegas"})", "c.json: $.network.congestion_control: the tcp link model has no model of congestion control \"vegas\""},
      {R"({"slow_start_after_idle": "yes"})", "c.json: $.network.slow_start_after_idle: expected"},
      {R"({"jitter_ms": 1})", "c.json: $.network: unknown key \"jitter_ms\""}};
  for (const auto& [network, message] : cases)
    EXPECT_NE(error_with(network).find(message), std::string::npos) << network << "\n" << error_with(network);
  auto both = minimal();
  both["network"] = {{"rtt_ms", 20}};
  both["sim"] = {{"request_rtt_ms", 10}};
  EXPECT_NE(error_of(both).find("c.json: $.sim.request_rtt_ms: the network section sets the round trip: give "
                                "$.network.rtt_ms"),
            std::string::npos)
      << error_of(both);
}

TEST(ExperimentGrid, AGridTooLargeToHoldIsAnErrorBeforeItGrows) {
  auto j = minimal();
  j["repetitions"] = 100000;  // x 2 SLOs x 2 policies x 3 traces = 1.2 M runs
  const auto c = parse_experiment_config(j, "c.json");
  try {
    (void)Grid(c, GridShape{{{"syn"}}, {{"a", "b", "c"}}});
    ADD_FAILURE() << "expanded";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("the grid has 1200000 runs"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("more than the 1000000 one config may hold"), std::string::npos) << e.what();
  }
}

TEST(KvScale, ArchitecturesAndScaling) {
  EXPECT_EQ(models::architecture("mistral-7b").fp16_kv_bytes_per_token(), 131072);
  EXPECT_EQ(models::architecture("codellama-34b").fp16_kv_bytes_per_token(), 196608);
  EXPECT_EQ(models::architecture("llama-2-70b").fp16_kv_bytes_per_token(), 327680);
  EXPECT_EQ(models::architecture("longchat-7b").fp16_kv_bytes_per_token(), 524288);
  const auto profile = sim::synthetic_profile({});
  const auto scaled = profiling::scale_kv(profile, 2.5);
  EXPECT_DOUBLE_EQ(scaled.chunks[3].levels[1].bytes, 2.5 * profile.chunks[3].levels[1].bytes);
  EXPECT_DOUBLE_EQ(scaled.chunks[3].levels[1].decode_s, 2.5 * profile.chunks[3].levels[1].decode_s);
  EXPECT_EQ(scaled.chunks[3].levels[1].quality, profile.chunks[3].levels[1].quality);
  EXPECT_EQ(scaled.chunks[3].text_bytes, profile.chunks[3].text_bytes);
}

TEST(KvScale, ExtrapolationKeepsPerTokenCosts) {
  sim::SyntheticProfileSpec spec;
  spec.n_chunks = 3;
  spec.chunk_tokens = 64;
  auto measured = sim::synthetic_profile(spec);
  measured.chunks[2].levels[0].quality = 0.5;  // token-weighted: (2 x 0.75 + 0.5) / 3
  const auto long_context = profiling::extrapolate_context(measured, 10, 1500);
  ASSERT_EQ(long_context.chunks.size(), 10u);
  EXPECT_EQ(long_context.chunks[9].start_token, 9 * 1500);
  EXPECT_EQ(long_context.chunk_tokens, 1500);
  EXPECT_NEAR(long_context.chunks[4].levels[1].bytes, measured.chunks[0].levels[1].bytes / 64 * 1500, 1e-6);
  EXPECT_NEAR(long_context.chunks[4].levels[1].decode_s, measured.chunks[0].levels[1].decode_s / 64 * 1500, 1e-12);
  EXPECT_NEAR(long_context.chunks[0].levels[0].quality, (2 * 0.75 + 0.5) / 3, 1e-12);
  EXPECT_NEAR(long_context.chunks[0].text_bytes, 4 * 1500, 1e-9);
  EXPECT_FALSE(long_context.chunks[0].recompute_s);
  EXPECT_NO_THROW(sim::context_profile_from_json(sim::to_json(long_context)));
}

}  // namespace
}  // namespace kvstream::experiments
