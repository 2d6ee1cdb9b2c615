// Fuzzes what `kvstream fidelity --rescore DIR` reads from a result directory that may come from
// elsewhere (emulation/fidelity_rescore.h): the input as DIR/fidelity.jsonl beside the config.json of
// a fixed config (fidelity_fixture.h), read by read_stored_runs; then every accepted run simulated
// again against its stored emulation, as --rescore does.
// A finding: anything but runs or a documented rejection (fuzz_support.h), more or fewer accepted runs
// than the config has cases (the reader refuses duplicates), or a rescore that fails on a run that
// was accepted.
#include <cstddef>
#include <cstdint>
#include <fstream>

#include "emulation/fidelity_rescore.h"
#include "fuzz/fidelity_fixture.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kvstream;
  const fuzz::FidelityFixture& fixture = fuzz::fidelity_fixture();
  const emulation::FidelityRunner& runner = *fixture.runner;
  const std::filesystem::path dir = fixture.dir / "results";
  static const bool written = [&] {
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "config.json") << runner.config().source.dump(2) << "\n";
    return true;
  }();
  (void)written;
  std::ofstream(dir / "fidelity.jsonl", std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), std::streamsize(size));
  std::vector<emulation::StoredRun> runs;
  fuzz::expect_clean_rejection([&] { runs = emulation::read_stored_runs(runner, dir); });
  if (runs.empty()) return 0;
  const auto planned = emulation::plan_fidelity(runner.config());
  if (runs.size() != planned.size())
    fuzz::report_finding(std::to_string(runs.size()) + " runs accepted for " + std::to_string(planned.size()) + " cases");
  try {
    for (const auto& run : runs) (void)runner.rescore(run.fidelity_case, run.emulated);
  } catch (const std::exception& e) {
    fuzz::report_finding(std::string("an accepted run does not rescore: ") + e.what());
  }
  return 0;
}
