#include "models/gguf_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string_view>

#include "common/half.h"

namespace kvstream::models {

static_assert(std::endian::native == std::endian::little, "GGUF files are read as little-endian");

namespace {

struct GgmlTypeTraits {
  uint32_t id;
  const char* name;
  uint64_t block_elements;
  uint64_t block_bytes;
};

// Every ggml_type id that GGUF files carry (ids 4, 5, 31..33 and 36..38 were removed from ggml).
constexpr std::array<GgmlTypeTraits, 34> kGgmlTypes{{
    {0, "F32", 1, 4},          {1, "F16", 1, 2},         {2, "Q4_0", 32, 18},      {3, "Q4_1", 32, 20},
    {6, "Q5_0", 32, 22},       {7, "Q5_1", 32, 24},      {8, "Q8_0", 32, 34},      {9, "Q8_1", 32, 40},
    {10, "Q2_K", 256, 84},     {11, "Q3_K", 256, 110},   {12, "Q4_K", 256, 144},   {13, "Q5_K", 256, 176},
    {14, "Q6_K", 256, 210},    {15, "Q8_K", 256, 292},   {16, "IQ2_XXS", 256, 66}, {17, "IQ2_XS", 256, 74},
    {18, "IQ3_XXS", 256, 98},  {19, "IQ1_S", 256, 50},   {20, "IQ4_NL", 32, 18},   {21, "IQ3_S", 256, 110},
    {22, "IQ2_S", 256, 82},    {23, "IQ4_XS", 256, 136}, {24, "I8", 1, 1},         {25, "I16", 1, 2},
    {26, "I32", 1, 4},         {27, "I64", 1, 8},        {28, "F64", 1, 8},        {29, "IQ1_M", 256, 56},
    {30, "BF16", 1, 2},        {34, "TQ1_0", 256, 54},   {35, "TQ2_0", 256, 66},   {39, "MXFP4", 32, 17},
    {40, "NVFP4", 64, 36},     {41, "Q1_0", 128, 18},
}};

const GgmlTypeTraits* ggml_traits(uint32_t type) {
  for (const auto& t : kGgmlTypes) {
    if (t.id == type) return &t;
  }
  return nullptr;
}

// Bytes of one scalar value; 0 for strings and arrays (variable length).
size_t scalar_size(GgufType type) {
  switch (type) {
    case GgufType::kU8: case GgufType::kI8: case GgufType::kBool: return 1;
    case GgufType::kU16: case GgufType::kI16: return 2;
    case GgufType::kU32: case GgufType::kI32: case GgufType::kF32: return 4;
    case GgufType::kU64: case GgufType::kI64: case GgufType::kF64: return 8;
    case GgufType::kString: case GgufType::kArray: return 0;
  }
  return 0;
}

bool is_integer(GgufType type) {
  switch (type) {
    case GgufType::kU8: case GgufType::kI8: case GgufType::kU16: case GgufType::kI16:
    case GgufType::kU32: case GgufType::kI32: case GgufType::kU64: case GgufType::kI64: return true;
    default: return false;
  }
}

std::string type_description(GgufType type, GgufType array_type) {
  if (type != GgufType::kArray) return gguf_type_name(type);
  return std::string("array of ") + gguf_type_name(array_type);
}

template <class T>
T load(const uint8_t* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

// Bounds-checked little-endian reads over the mapped file. `context` names what is being read
// (a key, a tensor) for error messages; `element` the array element, when inside an array.
class Cursor {
 public:
  Cursor(const std::filesystem::path& path, std::span<const uint8_t> bytes, size_t pos)
      : path_(path), bytes_(bytes), pos_(pos) {}

  size_t pos() const { return pos_; }
  size_t remaining() const { return bytes_.size() - pos_; }
  void set_context(std::string context) { context_ = std::move(context); element_ = -1; }
  void set_element(int64_t element) { element_ = element; }

  template <class T>
  T read(const char* what) {
    need(sizeof(T), what);
    const T value = load<T>(bytes_.data() + pos_);
    pos_ += sizeof(T);
    return value;
  }
  std::string_view read_string(const char* what) {
    const uint64_t length = read<uint64_t>(what);
    if (length > remaining()) {
      fail(std::string("truncated: ") + what + " of " + std::to_string(length) + " bytes at offset " +
           std::to_string(pos_) + ", but only " + std::to_string(remaining()) + " bytes remain");
    }
    const std::string_view s(reinterpret_cast<const char*>(bytes_.data() + pos_), length);
    pos_ += length;
    return s;
  }
  void skip(size_t n, const char* what) {
    need(n, what);
    pos_ += n;
  }
  [[noreturn]] void fail(const std::string& detail) const {
    std::string where = context_;
    if (element_ >= 0) where += " (element " + std::to_string(element_) + ")";
    throw std::runtime_error("GGUF file " + path_.string() + ": " + where + ": " + detail);
  }

 private:
  void need(size_t n, const char* what) const {
    if (n > remaining()) {
      fail(std::string("truncated: ") + what + " needs " + std::to_string(n) + " bytes at offset " +
           std::to_string(pos_) + ", but only " + std::to_string(remaining()) + " remain");
    }
  }

  const std::filesystem::path& path_;
  std::span<const uint8_t> bytes_;
  size_t pos_;
  std::string context_ = "header";
  int64_t element_ = -1;
};

GgufType read_type(Cursor& in, const char* what) {
  const uint32_t type = in.read<uint32_t>(what);
  if (type > static_cast<uint32_t>(GgufType::kF64)) {
    in.fail("unknown value type " + std::to_string(type));
  }
  return static_cast<GgufType>(type);
}

// Smallest encoding of one array element of `type` (not an array), to bound counts by the bytes left.
size_t min_size(GgufType type) { return type == GgufType::kString ? 8 : scalar_size(type); }

// Skips `count` values of `type`; errors inside an array name the element.
void skip_values(Cursor& in, GgufType type, uint64_t count, bool in_array) {
  if (type == GgufType::kString) {
    for (uint64_t i = 0; i < count; ++i) {
      if (in_array) in.set_element(static_cast<int64_t>(i));
      in.read_string("string");
    }
    in.set_element(-1);
  } else {
    in.skip(scalar_size(type) * count, "value");  // count ≤ remaining / size was checked: no overflow
  }
}

}  // namespace

const char* gguf_type_name(GgufType type) {
  switch (type) {
    case GgufType::kU8: return "u8";
    case GgufType::kI8: return "i8";
    case GgufType::kU16: return "u16";
    case GgufType::kI16: return "i16";
    case GgufType::kU32: return "u32";
    case GgufType::kI32: return "i32";
    case GgufType::kF32: return "f32";
    case GgufType::kBool: return "bool";
    case GgufType::kString: return "string";
    case GgufType::kArray: return "array";
    case GgufType::kU64: return "u64";
    case GgufType::kI64: return "i64";
    case GgufType::kF64: return "f64";
  }
  return "unknown";
}

std::string ggml_type_name(uint32_t type) {
  const GgmlTypeTraits* traits = ggml_traits(type);
  return traits ? traits->name : "type " + std::to_string(type);
}

uint64_t GgufTensorInfo::element_count() const {
  uint64_t n = 1;
  for (uint64_t d : dims) n *= d;
  return n;
}

// The whole file, mapped read-only and private; unmapped on destruction.
class GgufFile::Mapping {
 public:
  explicit Mapping(const std::filesystem::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error("GGUF file " + path.string() + ": cannot open: " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      throw std::runtime_error("GGUF file " + path.string() + ": not a regular file");
    }
    size_ = static_cast<size_t>(st.st_size);
    if (size_ > 0) {
      void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        const int err = errno;
        ::close(fd);
        throw std::runtime_error("GGUF file " + path.string() + ": mmap failed: " + std::strerror(err));
      }
      data_ = static_cast<const uint8_t*>(p);
    }
    ::close(fd);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() {
    if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
  }
  std::span<const uint8_t> bytes() const { return {data_, size_}; }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

GgufFile::GgufFile(GgufFile&&) noexcept = default;
GgufFile& GgufFile::operator=(GgufFile&&) noexcept = default;
GgufFile::~GgufFile() = default;

GgufFile GgufFile::open(const std::filesystem::path& path) {
  GgufFile f;
  f.path_ = path;
  f.map_ = std::make_unique<Mapping>(path);
  const std::span<const uint8_t> bytes = f.map_->bytes();
  Cursor in(f.path_, bytes, 0);

  const uint32_t magic = in.read<uint32_t>("magic");
  if (std::memcmp(&magic, "GGUF", 4) != 0) {
    in.fail("not a GGUF file: the first 4 bytes are not \"GGUF\"");
  }
  f.version_ = in.read<uint32_t>("version");
  if (f.version_ != 2 && f.version_ != 3) {
    const bool swapped = f.version_ == 0x02000000u || f.version_ == 0x03000000u;
    in.fail("unsupported GGUF version " + std::to_string(f.version_) +
            (swapped ? " (a big-endian file?)" : "") + "; supported: 2, 3");
  }
  const uint64_t tensor_count = in.read<uint64_t>("tensor count");
  const uint64_t kv_count = in.read<uint64_t>("metadata count");
  // A key-value pair takes at least 13 bytes (key length, type, 1-byte value), a tensor info 24.
  if (kv_count > in.remaining() / 13 || tensor_count > in.remaining() / 24) {
    in.fail("counts exceed the file size: " + std::to_string(kv_count) + " metadata entries and " +
            std::to_string(tensor_count) + " tensors in " + std::to_string(bytes.size()) + " bytes");
  }

  for (uint64_t i = 0; i < kv_count; ++i) {
    in.set_context("metadata entry " + std::to_string(i));
    std::string key(in.read_string("key"));
    in.set_context("metadata key '" + key + "'");
    Entry e{read_type(in, "value type"), GgufType::kU8, 1, 0};
    if (e.type == GgufType::kArray) {
      e.array_type = read_type(in, "array element type");
      if (e.array_type == GgufType::kArray) in.fail("arrays of arrays are not supported");
      e.count = in.read<uint64_t>("array length");
      if (e.count > in.remaining() / min_size(e.array_type)) {
        in.fail("array of " + std::to_string(e.count) + " " + gguf_type_name(e.array_type) +
                " values exceeds the " + std::to_string(in.remaining()) + " bytes left in the file");
      }
    }
    e.payload = in.pos();
    const bool array = e.type == GgufType::kArray;
    skip_values(in, array ? e.array_type : e.type, e.count, array);
    if (!f.entries_.emplace(key, e).second) in.fail("duplicate key");
    f.key_order_.push_back(std::move(key));
  }

  if (f.has("general.alignment")) {
    const uint32_t alignment = *f.get_u32("general.alignment");
    if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
      f.fail("general.alignment " + std::to_string(alignment) + " is not a power of two");
    }
    f.alignment_ = alignment;
  }

  f.tensors_.reserve(tensor_count);
  for (uint64_t i = 0; i < tensor_count; ++i) {
    in.set_context("tensor info " + std::to_string(i));
    GgufTensorInfo t;
    t.name = in.read_string("name");
    in.set_context("tensor '" + t.name + "'");
    const uint32_t n_dims = in.read<uint32_t>("dimension count");
    if (n_dims > 4) in.fail(std::to_string(n_dims) + " dimensions; GGUF tensors have at most 4");
    uint64_t elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      const uint64_t n = in.read<uint64_t>("dimension");
      if (n != 0 && elements > std::numeric_limits<int64_t>::max() / n) in.fail("element count overflows");
      elements *= n;
      t.dims.push_back(n);
    }
    t.type = in.read<uint32_t>("type");
    t.offset = in.read<uint64_t>("data offset");
    const GgmlTypeTraits* traits = ggml_traits(t.type);
    if (!traits) in.fail("unknown ggml type " + std::to_string(t.type));
    if (n_dims > 0 && t.dims[0] % traits->block_elements != 0) {
      in.fail("first dimension " + std::to_string(t.dims[0]) + " is not a multiple of the " + traits->name +
              " block size " + std::to_string(traits->block_elements));
    }
    const uint64_t blocks = elements / traits->block_elements;
    if (blocks > std::numeric_limits<uint64_t>::max() / traits->block_bytes) {
      // Wrapped, the size would pass the data-size check and the reader would size a buffer by
      // the element count.
      in.fail("data size of " + std::to_string(elements) + " " + traits->name + " elements overflows");
    }
    t.n_bytes = blocks * traits->block_bytes;
    if (!f.tensor_index_.emplace(t.name, f.tensors_.size()).second) in.fail("duplicate tensor name");
    f.tensors_.push_back(std::move(t));
  }

  // Tensor data starts at the next multiple of the alignment after the tensor infos.
  f.data_start_ = in.pos() + (f.alignment_ - in.pos() % f.alignment_) % f.alignment_;
  const uint64_t data_bytes = f.data_start_ <= bytes.size() ? bytes.size() - f.data_start_ : 0;
  for (const GgufTensorInfo& t : f.tensors_) {
    in.set_context("tensor '" + t.name + "'");
    if (t.offset % f.alignment_ != 0) {
      in.fail("data offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
              std::to_string(f.alignment_));
    }
    if (t.offset > data_bytes || t.n_bytes > data_bytes - t.offset) {
      in.fail("truncated: data of " + std::to_string(t.n_bytes) + " bytes at offset " +
              std::to_string(f.data_start_ + t.offset) + " lies beyond the end of the file (" +
              std::to_string(bytes.size()) + " bytes)");
    }
  }
  // No two tensors share a byte (padding between them, up to the alignment, is allowed): a tensor
  // whose offset points into another would load that one's bytes as its weights.
  std::vector<const GgufTensorInfo*> by_offset;
  for (const GgufTensorInfo& t : f.tensors_) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const GgufTensorInfo* a, const GgufTensorInfo* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const GgufTensorInfo& before = *by_offset[i - 1];
    const GgufTensorInfo& t = *by_offset[i];
    in.set_context("tensor '" + t.name + "'");
    if (t.offset < before.offset + before.n_bytes && t.n_bytes > 0 && before.n_bytes > 0)
      in.fail("data at offset " + std::to_string(f.data_start_ + t.offset) + " overlaps tensor '" + before.name +
              "' (bytes " + std::to_string(f.data_start_ + before.offset) + " to " +
              std::to_string(f.data_start_ + before.offset + before.n_bytes) + ")");
  }
  return f;
}

void GgufFile::fail(const std::string& message) const {
  throw std::runtime_error("GGUF file " + path_.string() + ": " + message);
}

std::optional<GgufType> GgufFile::type_of(const std::string& key) const {
  const auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  return it->second.type;
}

std::optional<GgufType> GgufFile::array_type_of(const std::string& key) const {
  const auto it = entries_.find(key);
  if (it == entries_.end() || it->second.type != GgufType::kArray) return std::nullopt;
  return it->second.array_type;
}

const GgufFile::Entry* GgufFile::entry(const std::string& key, GgufType expected) const {
  const auto it = entries_.find(key);
  if (it == entries_.end()) return nullptr;
  if (it->second.type != expected) {
    fail("metadata key '" + key + "' is " + type_description(it->second.type, it->second.array_type) +
         ", expected " + gguf_type_name(expected));
  }
  return &it->second;
}

template <class T>
std::optional<T> GgufFile::scalar(const std::string& key, GgufType expected) const {
  const Entry* e = entry(key, expected);
  if (!e) return std::nullopt;
  return load<T>(map_->bytes().data() + e->payload);
}

std::optional<uint8_t> GgufFile::get_u8(const std::string& k) const { return scalar<uint8_t>(k, GgufType::kU8); }
std::optional<int8_t> GgufFile::get_i8(const std::string& k) const { return scalar<int8_t>(k, GgufType::kI8); }
std::optional<uint16_t> GgufFile::get_u16(const std::string& k) const { return scalar<uint16_t>(k, GgufType::kU16); }
std::optional<int16_t> GgufFile::get_i16(const std::string& k) const { return scalar<int16_t>(k, GgufType::kI16); }
std::optional<uint32_t> GgufFile::get_u32(const std::string& k) const { return scalar<uint32_t>(k, GgufType::kU32); }
std::optional<int32_t> GgufFile::get_i32(const std::string& k) const { return scalar<int32_t>(k, GgufType::kI32); }
std::optional<uint64_t> GgufFile::get_u64(const std::string& k) const { return scalar<uint64_t>(k, GgufType::kU64); }
std::optional<int64_t> GgufFile::get_i64(const std::string& k) const { return scalar<int64_t>(k, GgufType::kI64); }
std::optional<float> GgufFile::get_f32(const std::string& k) const { return scalar<float>(k, GgufType::kF32); }
std::optional<double> GgufFile::get_f64(const std::string& k) const { return scalar<double>(k, GgufType::kF64); }

std::optional<bool> GgufFile::get_bool(const std::string& key) const {
  const auto v = scalar<uint8_t>(key, GgufType::kBool);
  if (!v) return std::nullopt;
  return *v != 0;
}

std::optional<std::string> GgufFile::get_string(const std::string& key) const {
  const Entry* e = entry(key, GgufType::kString);
  if (!e) return std::nullopt;
  Cursor in(path_, map_->bytes(), e->payload);
  return std::string(in.read_string("string"));
}

namespace {

// Reads one integer of `type` at `p` as int64; false for a u64 above INT64_MAX.
bool load_integer(GgufType type, const uint8_t* p, int64_t& out) {
  switch (type) {
    case GgufType::kU8: out = load<uint8_t>(p); return true;
    case GgufType::kI8: out = load<int8_t>(p); return true;
    case GgufType::kU16: out = load<uint16_t>(p); return true;
    case GgufType::kI16: out = load<int16_t>(p); return true;
    case GgufType::kU32: out = load<uint32_t>(p); return true;
    case GgufType::kI32: out = load<int32_t>(p); return true;
    case GgufType::kI64: out = load<int64_t>(p); return true;
    case GgufType::kU64: {
      const uint64_t v = load<uint64_t>(p);
      out = static_cast<int64_t>(v);
      return v <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    }
    default: return false;
  }
}

}  // namespace

std::optional<int64_t> GgufFile::get_integer(const std::string& key) const {
  const auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  const Entry& e = it->second;
  if (!is_integer(e.type)) {
    fail("metadata key '" + key + "' is " + type_description(e.type, e.array_type) + ", expected an integer");
  }
  int64_t v = 0;
  if (!load_integer(e.type, map_->bytes().data() + e.payload, v)) {
    fail("metadata key '" + key + "' does not fit in int64");
  }
  return v;
}

std::optional<std::vector<std::string>> GgufFile::get_string_array(const std::string& key) const {
  const Entry* e = entry(key, GgufType::kArray);
  if (!e) return std::nullopt;
  if (e->array_type != GgufType::kString) {
    fail("metadata key '" + key + "' is " + type_description(e->type, e->array_type) + ", expected array of string");
  }
  Cursor in(path_, map_->bytes(), e->payload);
  std::vector<std::string> out;
  out.reserve(e->count);
  for (uint64_t i = 0; i < e->count; ++i) out.emplace_back(in.read_string("string"));
  return out;
}

std::optional<std::vector<int64_t>> GgufFile::get_int_array(const std::string& key) const {
  const Entry* e = entry(key, GgufType::kArray);
  if (!e) return std::nullopt;
  if (!is_integer(e->array_type)) {
    fail("metadata key '" + key + "' is " + type_description(e->type, e->array_type) + ", expected array of integers");
  }
  const uint8_t* p = map_->bytes().data() + e->payload;
  const size_t size = scalar_size(e->array_type);
  std::vector<int64_t> out(e->count);
  for (uint64_t i = 0; i < e->count; ++i) {
    if (!load_integer(e->array_type, p + i * size, out[i])) {
      fail("metadata key '" + key + "' element " + std::to_string(i) + " does not fit in int64");
    }
  }
  return out;
}

std::optional<std::vector<double>> GgufFile::get_float_array(const std::string& key) const {
  const Entry* e = entry(key, GgufType::kArray);
  if (!e) return std::nullopt;
  if (e->array_type != GgufType::kF32 && e->array_type != GgufType::kF64) {
    fail("metadata key '" + key + "' is " + type_description(e->type, e->array_type) +
         ", expected array of f32 or f64");
  }
  const uint8_t* p = map_->bytes().data() + e->payload;
  std::vector<double> out(e->count);
  for (uint64_t i = 0; i < e->count; ++i) {
    out[i] = e->array_type == GgufType::kF32 ? load<float>(p + 4 * i) : load<double>(p + 8 * i);
  }
  return out;
}

const GgufTensorInfo* GgufFile::find_tensor(const std::string& name) const {
  const auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const GgufTensorInfo& GgufFile::tensor(const std::string& name) const {
  const GgufTensorInfo* t = find_tensor(name);
  if (!t) fail("no tensor named '" + name + "'");
  return *t;
}

std::span<const uint8_t> GgufFile::tensor_bytes(const std::string& name) const {
  const GgufTensorInfo& t = tensor(name);
  return map_->bytes().subspan(data_start_ + t.offset, t.n_bytes);
}

std::vector<float> GgufFile::read_tensor_f32(const std::string& name) const {
  const GgufTensorInfo& t = tensor(name);
  const uint8_t* p = map_->bytes().data() + data_start_ + t.offset;
  const size_t n = t.element_count();
  std::vector<float> out(n);
  switch (static_cast<GgmlType>(t.type)) {
    case GgmlType::kF32:
      if (n > 0) std::memcpy(out.data(), p, n * sizeof(float));  // an empty vector's data() may be null
      break;
    case GgmlType::kF16:
      for (size_t i = 0; i < n; ++i) out[i] = common::half_to_float(load<uint16_t>(p + 2 * i));
      break;
    case GgmlType::kBF16:
      for (size_t i = 0; i < n; ++i) {
        out[i] = std::bit_cast<float>(static_cast<uint32_t>(load<uint16_t>(p + 2 * i)) << 16);
      }
      break;
    case GgmlType::kQ8_0:  // blocks of fp16 d, 32 × int8 q: x = q·d
      for (size_t b = 0; b < n / 32; ++b, p += 34) {
        const float d = common::half_to_float(load<uint16_t>(p));
        for (size_t j = 0; j < 32; ++j) out[32 * b + j] = static_cast<float>(static_cast<int8_t>(p[2 + j])) * d;
      }
      break;
    case GgmlType::kQ4_0:  // fp16 d, 16 bytes: low nibbles are elements 0..15, high ones 16..31; x = (q - 8)·d
      for (size_t b = 0; b < n / 32; ++b, p += 18) {
        const float d = common::half_to_float(load<uint16_t>(p));
        for (size_t j = 0; j < 16; ++j) {
          out[32 * b + j] = static_cast<float>((p[2 + j] & 0x0f) - 8) * d;
          out[32 * b + j + 16] = static_cast<float>((p[2 + j] >> 4) - 8) * d;
        }
      }
      break;
    case GgmlType::kQ4_1:  // fp16 d, fp16 m, 16 bytes of nibbles as Q4_0; x = q·d + m
      for (size_t b = 0; b < n / 32; ++b, p += 20) {
        const float d = common::half_to_float(load<uint16_t>(p));
        const float m = common::half_to_float(load<uint16_t>(p + 2));
        for (size_t j = 0; j < 16; ++j) {
          out[32 * b + j] = static_cast<float>(p[4 + j] & 0x0f) * d + m;
          out[32 * b + j + 16] = static_cast<float>(p[4 + j] >> 4) * d + m;
        }
      }
      break;
    default:
      fail("tensor '" + name + "' has type " + ggml_type_name(t.type) +
           ", which read_tensor_f32 cannot dequantize (supported: F32, F16, BF16, Q8_0, Q4_0, Q4_1)");
  }
  return out;
}

}  // namespace kvstream::models
