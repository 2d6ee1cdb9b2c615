// Fuzzes the reader of context profiles (sim/context_profile.h, sim/README.md): read_context_profile
// on the input as a JSON file, then the round trip (to_json, read back, the same JSON;
// json_round_trip.h).
// A finding: anything but a profile or a documented rejection (fuzz_support.h), or a profile that
// does not read back as itself.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_support.h"
#include "fuzz/json_round_trip.h"
#include "sim/context_profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace sim = kvstream::sim;
  const auto& path = kvstream::fuzz::write_input_file("context_profile", data, size);
  kvstream::fuzz::expect_clean_rejection([&] {
    const sim::ContextProfile profile = sim::read_context_profile(path.string());
    kvstream::fuzz::check_round_trip(
        profile,
        [](const nlohmann::json& j, const std::string& where) { return sim::context_profile_from_json(j, where); },
        [](const sim::ContextProfile& p) { return sim::to_json(p); });
  });
  return 0;
}
