// Fuzzes the safetensors reader (common/safetensors.h): read_safetensors on the input as a file,
// then load_kv, which interprets the tensors of a KV dump ("kv", "tokens", metadata H and D).
// A finding: anything but a file or a documented rejection (fuzz_support.h); -rss_limit_mb catches
// allocations sized by the header's declared shapes rather than by the bytes present.
#include <cstddef>
#include <cstdint>

#include "codec/format/kv_dump.h"
#include "common/safetensors.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto& path = kvstream::fuzz::write_input_file("safetensors", data, size);
  kvstream::fuzz::expect_clean_rejection([&] { (void)kvstream::common::read_safetensors(path); });
  kvstream::fuzz::expect_clean_rejection([&] { (void)kvstream::codec::load_kv(path); });
  return 0;
}
