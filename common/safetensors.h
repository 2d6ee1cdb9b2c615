// safetensors files (https://huggingface.co/docs/safetensors): u64 header length, a JSON header
// mapping tensor names to {dtype, shape, data_offsets} plus optional "__metadata__" strings, then the
// raw little-endian data. Reading validates every offset and size, and that the tensors tile the data
// block; writing is atomic (temp + rename). KV dumps in this format: codec/format/kv_dump.h.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace kvstream::common {

struct Tensor {
  std::string dtype;  // "F16", "BF16", "F32", "I32", "I64", "U8", ...
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

struct SafetensorsFile {
  std::map<std::string, std::string> metadata;
  std::map<std::string, Tensor> tensors;
};

size_t dtype_size(const std::string& dtype);  // throws std::invalid_argument for unknown dtypes

// Throws std::runtime_error naming the file and what is wrong (header JSON, tensor, offsets).
SafetensorsFile read_safetensors(const std::filesystem::path& path);
void write_safetensors(const std::filesystem::path& path, const SafetensorsFile& file);

}  // namespace kvstream::common
