// Fuzzes the reader of offline CDF tables, .kvcdf files (codec/cachegen/offline_cdf.h, codec/FORMAT.md §5):
// OfflineCdfTable::load on the input as a file, then a row of every level it holds and serialize().
// Input: one selector byte, then the file. An even selector repairs the file's trailing CRC32C
// (checksum_repair.h) so that mutations reach the fields behind it; an odd one leaves it.
// A finding: anything but a table or a documented rejection (fuzz_support.h).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "codec/cachegen/offline_cdf.h"
#include "fuzz/checksum_repair.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::vector<uint8_t> bytes(data + 1, data + size);
  if (data[0] % 2 == 0 && bytes.size() >= 4) kvstream::fuzz::repair_crc32c(bytes, 0, bytes.size() - 4);
  const auto& path = kvstream::fuzz::write_input_file("offline_cdf", bytes.data(), bytes.size());
  kvstream::fuzz::expect_clean_rejection([&] {
    const auto table = kvstream::codec::OfflineCdfTable::load(path);
    // Invariant of a loaded level: a CDF of M + 1 entries per (row, channel), so row() stays inside.
    for (int level = 0; level < 256; ++level)
      if (const auto* t = table.level(level);
          t && t->cdf.size() != size_t(2 * table.layers()) * size_t(table.channels()) * size_t(t->alphabet + 1))
        kvstream::fuzz::report_finding("level " + std::to_string(level) + " holds " + std::to_string(t->cdf.size()) +
                                       " CDF entries");
    (void)table.serialize();
  });
  return 0;
}
