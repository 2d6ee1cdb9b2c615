// Fuzzes the bitstream decoder of every codec in the registry (codec/FORMAT.md §1-§4): a single
// bitstream through decode_bitstream, or a whole .kvs file through decode_kvs, given the offline CDF
// table and the transform calibration of offline_tables.h (so bitstreams that reference one decode too).
//
// Input: one selector byte, then the bytes. Selector s, with n codecs in codec_registry():
//   s % n            the codec: its id is written into every bitstream's codec byte;
//   (s / n) & 1      1: the bytes are a .kvs file (decode_kvs), 0: one bitstream (decode_bitstream);
//   (s / n) & 2      0: repair the checksums and lengths (so that mutations reach the payload
//                    decoders behind the CRC32C), 1: leave the bytes as they are (the CRC and
//                    length checks themselves).
// A finding: anything but a decoded chunk or a documented rejection (fuzz_support.h). Decoding
// validates before it allocates (ARCHITECTURE.md §7), so -rss_limit_mb also catches allocations
// driven by declared rather than present sizes.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "codec/codec.h"
#include "codec/format/bitstream.h"
#include "codec/format/kvs_file.h"
#include "fuzz/checksum_repair.h"
#include "fuzz/fuzz_support.h"
#include "fuzz/offline_tables.h"

namespace {

using namespace kvstream::codec;
using kvstream::fuzz::load_le;
using kvstream::fuzz::repair_crc32c;
using kvstream::fuzz::store_le;

constexpr size_t kLengthOffset = 8;       // u64 total length, in both the bitstream and the .kvs header
constexpr size_t kCodecOffset = 6;        // the bitstream's codec id
constexpr size_t kKvsCrcOffset = 40;      // the .kvs header's CRC32C of bytes [0, 40)
constexpr size_t kMinBitstream = kHeaderBytes + kCrcBytes;

// Makes the bitstreams from `offset` on well-framed for `codec`: each gets the codec id, a total
// length that fits what remains (the last one takes the rest) and a correct CRC32C.
void repair_bitstreams(std::vector<uint8_t>& bytes, size_t offset, CodecId codec) {
  while (offset <= bytes.size() && bytes.size() - offset >= kMinBitstream) {  // a .kvs may be shorter than its header
    uint8_t* b = bytes.data() + offset;
    b[kCodecOffset] = uint8_t(codec);
    uint64_t total = load_le(b + kLengthOffset, 8);
    const size_t rest = bytes.size() - offset;
    if (total < kMinBitstream || total > rest || rest - total < kMinBitstream) total = rest;
    store_le(b + kLengthOffset, total, 8);
    repair_crc32c(bytes, offset, offset + size_t(total) - kCrcBytes);
    offset += size_t(total);
  }
}

// The .kvs header: the file's true length and a correct CRC32C.
void repair_kvs_header(std::vector<uint8_t>& bytes) {
  if (bytes.size() < kKvsHeaderBytes) return;
  store_le(bytes.data() + 32, bytes.size(), 8);
  repair_crc32c(bytes, 0, kKvsCrcOffset);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const auto& registry = codec_registry();
  const size_t selector = data[0];
  const CodecId codec = registry[selector % registry.size()].id;
  const bool kvs_file = (selector / registry.size()) & 1;
  const bool repair = ((selector / registry.size()) & 2) == 0;
  const DecodeContext context{.cdf_tables = {kvstream::fuzz::offline_table()},
                               .transform_calibrations = {kvstream::fuzz::transform_calibration()}};
  std::vector<uint8_t> bytes(data + 1, data + size);
  if (kvs_file) {
    if (repair) {
      repair_bitstreams(bytes, kKvsHeaderBytes, codec);
      repair_kvs_header(bytes);
    }
    const auto& path = kvstream::fuzz::write_input_file("bitstream", bytes.data(), bytes.size());
    kvstream::fuzz::expect_clean_rejection([&] { decode_kvs(path, context); });
  } else {
    if (repair) repair_bitstreams(bytes, 0, codec);
    kvstream::fuzz::expect_clean_rejection([&] { decode_bitstream(bytes, context); });
  }
  return 0;
}
