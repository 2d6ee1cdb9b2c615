// Fuzzes the reader of ladder files (codec/ladder.h, codec/FORMAT.md §6): Ladder::load on the input
// as a JSON file, then every level mapped to the layer counts of the shipped models and the rules'
// edge cases (1 layer, fewer or more than the reference), each checked for its invariants.
// A finding: anything but a ladder or a documented rejection (fuzz_support.h), or a mapped level
// whose bin lists do not have one entry per layer.
#include <cstddef>
#include <cstdint>
#include <string>

#include "codec/ladder.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto& path = kvstream::fuzz::write_input_file("ladder", data, size);
  kvstream::fuzz::expect_clean_rejection([&] {
    const auto ladder = kvstream::codec::Ladder::load(path);
    for (int level : ladder.levels()) {
      for (int layers : {1, 2, 5, 30, 32, 80, 200}) {
        kvstream::fuzz::expect_clean_rejection([&] {
          const auto spec = ladder.level_spec(level, layers);
          if (spec.layers() != layers || spec.value_bins.size() != size_t(layers))
            kvstream::fuzz::report_finding("level " + std::to_string(level) + " on " + std::to_string(layers) +
                                           " layers has " + std::to_string(spec.layers()) + " layers");
        });
      }
    }
  });
  return 0;
}
