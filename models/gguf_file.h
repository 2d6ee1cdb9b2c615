// A reader for GGUF v2/v3 files (llama.cpp's model format): typed metadata, tensor infos and
// dequantization of F32, F16, BF16, Q8_0, Q4_0 and Q4_1 tensors to float32. No torch here.
//
// The file is memory-mapped once; open() walks every metadata value and tensor info, checking each
// length and count against the bytes that remain, so that afterwards every getter reads validated
// bytes. Any malformed or truncated file is a std::runtime_error naming the file and the key or
// tensor being read.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace kvstream::models {

// Metadata value types, numbered as in the GGUF specification.
enum class GgufType : uint32_t {
  kU8 = 0, kI8 = 1, kU16 = 2, kI16 = 3, kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7,
  kString = 8, kArray = 9, kU64 = 10, kI64 = 11, kF64 = 12,
};
const char* gguf_type_name(GgufType type);

// Tensor element types (ggml_type ids) that read_tensor_f32 dequantizes; any other id known to
// ggml is accepted by open() (its byte size is known) but cannot be dequantized.
enum class GgmlType : uint32_t { kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ4_1 = 3, kQ8_0 = 8, kBF16 = 30 };
std::string ggml_type_name(uint32_t type);  // "Q4_1", or "type 99" when unknown

struct GgufTensorInfo {
  std::string name;
  std::vector<uint64_t> dims;  // GGUF order: dims[0] varies fastest (a [rows][cols] matrix is {cols, rows})
  uint32_t type = 0;           // ggml_type id
  uint64_t offset = 0;         // from the start of the tensor data section, a multiple of the alignment
  uint64_t n_bytes = 0;
  uint64_t element_count() const;
};

class GgufFile {
 public:
  static GgufFile open(const std::filesystem::path& path);
  GgufFile(GgufFile&&) noexcept;
  GgufFile& operator=(GgufFile&&) noexcept;
  ~GgufFile();

  const std::filesystem::path& path() const { return path_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }

  // Metadata. Each getter returns nullopt when the key is absent and throws std::runtime_error
  // naming the key, the expected and the actual type when it is present with another type.
  const std::vector<std::string>& keys() const { return key_order_; }  // file order
  bool has(const std::string& key) const { return entries_.count(key) != 0; }
  std::optional<GgufType> type_of(const std::string& key) const;
  std::optional<GgufType> array_type_of(const std::string& key) const;  // element type of an array

  std::optional<uint8_t> get_u8(const std::string& key) const;
  std::optional<int8_t> get_i8(const std::string& key) const;
  std::optional<uint16_t> get_u16(const std::string& key) const;
  std::optional<int16_t> get_i16(const std::string& key) const;
  std::optional<uint32_t> get_u32(const std::string& key) const;
  std::optional<int32_t> get_i32(const std::string& key) const;
  std::optional<uint64_t> get_u64(const std::string& key) const;
  std::optional<int64_t> get_i64(const std::string& key) const;
  std::optional<float> get_f32(const std::string& key) const;
  std::optional<double> get_f64(const std::string& key) const;
  std::optional<bool> get_bool(const std::string& key) const;
  std::optional<std::string> get_string(const std::string& key) const;
  // Any integer type (u8..i64), for keys whose integer width differs between converters;
  // a u64 above INT64_MAX is an error.
  std::optional<int64_t> get_integer(const std::string& key) const;
  std::optional<std::vector<std::string>> get_string_array(const std::string& key) const;
  std::optional<std::vector<int64_t>> get_int_array(const std::string& key) const;   // any integer elements
  std::optional<std::vector<double>> get_float_array(const std::string& key) const;  // f32 or f64 elements

  // Tensors, in file order.
  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufTensorInfo* find_tensor(const std::string& name) const;  // nullptr if absent
  const GgufTensorInfo& tensor(const std::string& name) const;        // throws naming the tensor
  std::span<const uint8_t> tensor_bytes(const std::string& name) const;
  // All elements in GGUF order (dims[0] fastest), dequantized; other types throw naming the tensor and type.
  std::vector<float> read_tensor_f32(const std::string& name) const;

 private:
  struct Entry {
    GgufType type;
    GgufType array_type;  // for arrays
    uint64_t count;       // array length
    size_t payload;       // file offset of the value (after the type, or after an array's type and count)
  };
  class Mapping;

  GgufFile() = default;
  const Entry* entry(const std::string& key, GgufType expected) const;
  template <class T>
  std::optional<T> scalar(const std::string& key, GgufType expected) const;
  [[noreturn]] void fail(const std::string& message) const;

  std::filesystem::path path_;
  std::unique_ptr<Mapping> map_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  size_t data_start_ = 0;  // file offset of the tensor data section
  std::vector<std::string> key_order_;
  std::unordered_map<std::string, Entry> entries_;
  std::vector<GgufTensorInfo> tensors_;
  std::unordered_map<std::string, size_t> tensor_index_;
};

}  // namespace kvstream::models
