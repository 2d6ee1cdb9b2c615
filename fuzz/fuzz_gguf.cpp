// Fuzzes the GGUF reader (models/gguf_file.h; torch-free, no model is built): GgufFile::open on the
// input as a file (header, every metadata value, every tensor info), then every typed getter on
// every key, and the bytes and float32 values of every tensor.
// A finding: anything but a file or a documented rejection (fuzz_support.h). A getter of the wrong
// type and a tensor type that cannot be dequantized are documented rejections.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_support.h"
#include "models/gguf_file.h"

namespace {

using kvstream::fuzz::expect_clean_rejection;
using kvstream::models::GgufFile;

// Every getter on `key`: the one of its type returns it, the others reject it.
void read_key(const GgufFile& file, const std::string& key) {
  expect_clean_rejection([&] { (void)file.get_integer(key); });
  expect_clean_rejection([&] { (void)file.get_f32(key); });
  expect_clean_rejection([&] { (void)file.get_f64(key); });
  expect_clean_rejection([&] { (void)file.get_bool(key); });
  expect_clean_rejection([&] { (void)file.get_string(key); });
  expect_clean_rejection([&] { (void)file.get_string_array(key); });
  expect_clean_rejection([&] { (void)file.get_int_array(key); });
  expect_clean_rejection([&] { (void)file.get_float_array(key); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto& path = kvstream::fuzz::write_input_file("gguf", data, size);
  expect_clean_rejection([&] {
    const GgufFile file = GgufFile::open(path);
    for (const std::string& key : file.keys()) read_key(file, key);
    for (const auto& tensor : file.tensors()) {
      expect_clean_rejection([&] { (void)file.tensor_bytes(tensor.name); });
      expect_clean_rejection([&] { (void)file.read_tensor_f32(tensor.name); });
    }
  });
  return 0;
}
