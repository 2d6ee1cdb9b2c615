// Fuzzes the reader of hardware profiles (sim/hardware_profile.h, sim/README.md):
// read_hardware_profile on the input as a JSON file, then the prefill cost of a few requests and the
// round trip of its "decode" section (to_json, read back, the same JSON; json_round_trip.h).
// A finding: anything but a profile or a documented rejection (fuzz_support.h), or a decode section
// that does not read back as itself.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_support.h"
#include "fuzz/json_round_trip.h"
#include "sim/hardware_profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace sim = kvstream::sim;
  const auto& path = kvstream::fuzz::write_input_file("hardware_profile", data, size);
  kvstream::fuzz::expect_clean_rejection([&] {
    const sim::HardwareProfile profile = sim::read_hardware_profile(path.string());
    for (double prefix : {0.0, 512.0, 32768.0}) (void)profile.prefill.seconds(prefix, 256);
    if (profile.decode)
      kvstream::fuzz::check_round_trip(
          *profile.decode,
          [](const nlohmann::json& j, const std::string& where) { return sim::decode_throughputs_from_json(j, where); },
          [](const sim::DecodeThroughputs& d) { return sim::to_json(d); });
  });
  return 0;
}
