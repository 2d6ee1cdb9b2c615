// The fidelity config that fuzz_fidelity_rescore reads result directories against, and whose runs
// fuzz_seeds writes as that target's seeds: a hand-made profile of 4 chunks (1, 2 and 4 MB per
// level), a constant trace at 50 Mbit/s, one path, two policies, single requests at two offsets and a
// Poisson workload of 3. Its files live in a folder of this process's own (made on first use,
// removed at exit), so parallel fuzzers never share one.
#pragma once
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "emulation/fidelity.h"
#include "tests/sim/sim_test_support.h"

namespace kvstream::fuzz {

inline constexpr const char* kFidelityConfig = R"({
  "name": "fuzz-rescore", "profiles": ["hand.json"],
  "traces": [{"name": "c", "input": "constant:gbps=0.1", "mean_mbps": 50}],
  "rtt_ms": [20], "queues": [{"name": "deep", "bytes": 2000000}], "congestion_controls": ["cubic"],
  "policies": ["fixed:cachegen:2", "mpc:text=0"], "slo_s": [1],
  "workloads": [{"name": "single", "kind": "single", "offsets_s": [0, 10]},
                {"name": "p", "kind": "poisson", "requests": 3, "rate_per_s": 2}]})";

struct FidelityFixture {
  std::filesystem::path dir;  // holds f.json and hand.json; result directories go below it
  std::unique_ptr<emulation::FidelityRunner> runner;

  FidelityFixture() : dir(std::filesystem::temp_directory_path() / ("kvstream-fuzz-fidelity-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "hand.json")
        << sim::to_json(sim::test::hand_profile(4, 1000, {1e6, 2e6, 4e6}, {0.005, 0.005, 0.005}, {0.8, 0.9, 0.98})).dump();
    std::ofstream(dir / "f.json") << kFidelityConfig;
    runner = std::make_unique<emulation::FidelityRunner>(emulation::read_fidelity_config((dir / "f.json").string()),
                                                         std::nullopt);
  }
  ~FidelityFixture() {
    runner.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
  FidelityFixture(const FidelityFixture&) = delete;
  FidelityFixture& operator=(const FidelityFixture&) = delete;
};

inline const FidelityFixture& fidelity_fixture() {
  static const FidelityFixture fixture;
  return fixture;
}

}  // namespace kvstream::fuzz
