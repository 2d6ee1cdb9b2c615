// Fuzzes the reader of experiment configs (experiments/experiment_config.h, experiments/SCHEMA.md):
// read_experiment_config on the input as a JSON file, then the round trip its header documents
// (to_json, read back, the same JSON; json_round_trip.h).
// A finding: anything but a config or a documented rejection (fuzz_support.h), or a config that
// does not read back as itself.
#include <cstddef>
#include <cstdint>

#include "experiments/experiment_config.h"
#include "fuzz/fuzz_support.h"
#include "fuzz/json_round_trip.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace ex = kvstream::experiments;
  const auto& path = kvstream::fuzz::write_input_file("experiment_config", data, size);
  kvstream::fuzz::expect_clean_rejection([&] {
    const ex::ExperimentConfig config = ex::read_experiment_config(path.string());
    kvstream::fuzz::check_round_trip(
        config, [](const nlohmann::json& j, const std::string& where) { return ex::parse_experiment_config(j, where); },
        [](const ex::ExperimentConfig& c) { return ex::to_json(c); });
  });
  return 0;
}
