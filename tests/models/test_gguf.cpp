// The GGUF reader: a GGUF built byte by byte here (metadata of every type; F32, F16, BF16, Q8_0,
// Q4_0 and Q4_1 tensors with exactly representable values), its truncations and corruptions, and
// the real SmolLM2-135M-Instruct Q4_1 file against values computed with llama.cpp's Python `gguf`
// package (tests/golden/smollm2_reference.json, written by scripts/dev/smollm2_reference.py).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "common/data_resolver.h"
#include "models/gguf_checkpoint.h"
#include "models/gguf_file.h"
#include "tests/models/gguf_builder.h"
#include "tests/test_support.h"

namespace kvstream::models {
namespace {

// Passes when `text` contains `part`; the failure message shows both.
::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

using test_support::GgufBuilder;

struct TestTensor {
  std::string name;
  std::vector<uint64_t> dims;
  uint32_t type;
  std::string data;
};

template <class T>
std::string raw(std::initializer_list<T> values) {
  std::string s;
  for (T v : values) s.append(reinterpret_cast<const char*>(&v), sizeof v);
  return s;
}

// Q4 nibbles: byte j holds element j (low) and element j + 16 (high).
std::string nibbles(const std::function<int(int)>& q) {
  std::string s;
  for (int j = 0; j < 16; ++j) s += static_cast<char>(q(j) | (q(j + 16) << 4));
  return s;
}

constexpr uint64_t kAlignment = 64;

std::vector<TestTensor> test_tensors() {
  std::string q8;  // two blocks: d = 0.5 with q = j - 16, then d = 0.25 with q = -j
  q8 += raw<uint16_t>({0x3800});
  for (int j = 0; j < 32; ++j) q8 += static_cast<char>(j - 16);
  q8 += raw<uint16_t>({0x3400});
  for (int j = 0; j < 32; ++j) q8 += static_cast<char>(-j);
  const std::string q4_0 = raw<uint16_t>({0x4000}) + nibbles([](int j) { return j % 16; });  // d = 2
  std::string q4_1;  // two blocks: d = 0.5, m = -1 with q = j % 16; d = 1, m = 0.25 with q = 15 - j % 16
  q4_1 += raw<uint16_t>({0x3800, 0xBC00}) + nibbles([](int j) { return j % 16; });
  q4_1 += raw<uint16_t>({0x3C00, 0x3400}) + nibbles([](int j) { return 15 - j % 16; });
  return {
      {"f32", {3, 2}, 0, raw<float>({0.0f, 0.5f, 1.0f, 1.5f, 2.0f, -2.5f})},
      {"f16", {4}, 1, raw<uint16_t>({0x3C00, 0xC000, 0x7BFF, 0x0001})},
      {"bf16", {2}, 30, raw<uint16_t>({0x3F80, 0xC040})},
      {"q8_0", {32, 2}, 8, q8},
      {"q4_0", {32}, 2, q4_0},
      {"q4_1", {64}, 3, q4_1},
      {"q5_k", {256}, 13, std::string(176, '\x11')},
  };
}

// A complete GGUF v3 file with alignment 64 and every metadata type.
GgufBuilder build_gguf(const std::vector<TestTensor>& tensors, uint32_t version = 3) {
  GgufBuilder b;
  b.header(version, tensors.size(), 18);  // 18 metadata entries below
  b.kv<uint8_t>("t.u8", GgufType::kU8, 200);
  b.kv<int8_t>("t.i8", GgufType::kI8, -5);
  b.kv<uint16_t>("t.u16", GgufType::kU16, 60000);
  b.kv<int16_t>("t.i16", GgufType::kI16, -30000);
  b.kv<uint32_t>("t.u32", GgufType::kU32, 4000000000u);
  b.kv<int32_t>("t.i32", GgufType::kI32, -2000000000);
  b.kv<float>("t.f32", GgufType::kF32, 1.5f);
  b.kv<uint8_t>("t.bool", GgufType::kBool, 1);
  b.kv<uint64_t>("t.u64", GgufType::kU64, (uint64_t{1} << 40) + 1);
  b.kv<int64_t>("t.i64", GgufType::kI64, -(int64_t{1} << 40));
  b.kv<double>("t.f64", GgufType::kF64, 0.1);
  b.kv<uint64_t>("t.u64_huge", GgufType::kU64, ~uint64_t{0});
  b.kv<uint32_t>("general.alignment", GgufType::kU32, static_cast<uint32_t>(kAlignment));
  b.kv_string("t.string", "h\xC3\xA9llo");
  b.kv_strings("t.strings", {"a", std::string(40, 'b'), ""});
  b.marks["t.strings[1]"] = b.bytes.size() - (8 + 40) - 8;  // before the last two elements
  b.kv_array<int32_t>("t.i32s", GgufType::kI32, {-1, 2, 3});
  b.kv_array<uint8_t>("t.u8s", GgufType::kU8, {7, 255});
  b.kv_array<float>("t.f32s", GgufType::kF32, {0.5f, -2.0f});

  uint64_t offset = 0;
  for (const TestTensor& t : tensors) {
    b.mark("info " + t.name);
    b.str(t.name);
    b.put<uint32_t>(static_cast<uint32_t>(t.dims.size()));
    for (uint64_t d : t.dims) b.put(d);
    b.put(t.type);
    b.put(offset);
    offset += (t.data.size() + kAlignment - 1) / kAlignment * kAlignment;
  }
  b.pad(kAlignment);
  for (const TestTensor& t : tensors) {
    b.mark("data " + t.name);
    b.bytes += t.data;
    b.pad(kAlignment);
  }
  return b;
}

class GgufTest : public test_support::TempDirTest {
 protected:
  std::filesystem::path write(const std::string& bytes, const std::string& name = "test.gguf") {
    const auto path = dir_ / name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  // The message of open()'s std::runtime_error ("" if it opened).
  std::string open_error(const std::string& bytes) {
    try {
      GgufFile::open(write(bytes));
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(GgufTest, ReadsMetadataOfEveryType) {
  const GgufFile f = GgufFile::open(write(build_gguf(test_tensors()).bytes));
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.alignment(), kAlignment);
  EXPECT_EQ(f.keys().size(), 18u);
  EXPECT_EQ(f.keys().front(), "t.u8");
  EXPECT_EQ(f.get_u8("t.u8"), 200);
  EXPECT_EQ(f.get_i8("t.i8"), -5);
  EXPECT_EQ(f.get_u16("t.u16"), 60000);
  EXPECT_EQ(f.get_i16("t.i16"), -30000);
  EXPECT_EQ(f.get_u32("t.u32"), 4000000000u);
  EXPECT_EQ(f.get_i32("t.i32"), -2000000000);
  EXPECT_EQ(f.get_f32("t.f32"), 1.5f);
  EXPECT_EQ(f.get_bool("t.bool"), true);
  EXPECT_EQ(f.get_u64("t.u64"), (uint64_t{1} << 40) + 1);
  EXPECT_EQ(f.get_i64("t.i64"), -(int64_t{1} << 40));
  EXPECT_EQ(f.get_f64("t.f64"), 0.1);
  EXPECT_EQ(f.get_string("t.string"), "h\xC3\xA9llo");
  EXPECT_EQ(f.get_string_array("t.strings"), (std::vector<std::string>{"a", std::string(40, 'b'), ""}));
  EXPECT_EQ(f.get_int_array("t.i32s"), (std::vector<int64_t>{-1, 2, 3}));
  EXPECT_EQ(f.get_int_array("t.u8s"), (std::vector<int64_t>{7, 255}));
  EXPECT_EQ(f.get_float_array("t.f32s"), (std::vector<double>{0.5, -2.0}));
  EXPECT_EQ(f.get_integer("t.u8"), 200);
  EXPECT_EQ(f.get_integer("t.i64"), -(int64_t{1} << 40));
  EXPECT_EQ(f.type_of("t.f64"), GgufType::kF64);
  EXPECT_EQ(f.array_type_of("t.strings"), GgufType::kString);
  EXPECT_FALSE(f.get_u32("absent").has_value());
  EXPECT_FALSE(f.get_string_array("absent").has_value());
  EXPECT_FALSE(f.has("absent"));
}

TEST_F(GgufTest, TypeMismatchNamesKeyExpectedAndActual) {
  const GgufFile f = GgufFile::open(write(build_gguf(test_tensors()).bytes));
  const auto message = [&](const std::function<void()>& get) {
    try {
      get();
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_TRUE(Contains(message([&] { f.get_u32("t.i8"); }), "'t.i8' is i8, expected u32"));
  EXPECT_TRUE(Contains(message([&] { f.get_string("t.strings"); }), "'t.strings' is array of string, expected string"));
  EXPECT_TRUE(Contains(message([&] { f.get_string_array("t.i32s"); }),
                       "'t.i32s' is array of i32, expected array of string"));
  EXPECT_TRUE(Contains(message([&] { f.get_float_array("t.i32s"); }), "expected array of f32 or f64"));
  EXPECT_TRUE(Contains(message([&] { f.get_int_array("t.f32s"); }),
                       "'t.f32s' is array of f32, expected array of integers"));
  EXPECT_TRUE(Contains(message([&] { f.get_integer("t.f32"); }), "'t.f32' is f32, expected an integer"));
  EXPECT_TRUE(Contains(message([&] { f.get_integer("t.u64_huge"); }), "'t.u64_huge' does not fit in int64"));
  EXPECT_TRUE(Contains(message([&] { f.get_bool("t.u8"); }), "test.gguf"));
}

TEST_F(GgufTest, TensorInfosHonourTheAlignment) {
  const GgufBuilder b = build_gguf(test_tensors());
  const GgufFile f = GgufFile::open(write(b.bytes));
  ASSERT_EQ(f.tensors().size(), 7u);
  const GgufTensorInfo& t = f.tensor("f32");
  EXPECT_EQ(t.dims, (std::vector<uint64_t>{3, 2}));
  EXPECT_EQ(t.type, 0u);
  EXPECT_EQ(t.element_count(), 6u);
  EXPECT_EQ(t.n_bytes, 24u);
  EXPECT_EQ(f.tensor("q4_1").offset % kAlignment, 0u);
  EXPECT_EQ(f.tensor("q4_1").n_bytes, 40u);
  EXPECT_EQ(f.find_tensor("nope"), nullptr);
  EXPECT_THROW(f.tensor("nope"), std::runtime_error);
  // tensor_bytes() are the bytes the builder placed at the aligned data offset.
  const auto bytes = f.tensor_bytes("q8_0");
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
            b.bytes.substr(b.marks.at("data q8_0"), 68));
  EXPECT_EQ(ggml_type_name(3), "Q4_1");
  EXPECT_EQ(ggml_type_name(99), "type 99");
}

TEST_F(GgufTest, DequantizesExactly) {
  const GgufFile f = GgufFile::open(write(build_gguf(test_tensors()).bytes));
  EXPECT_EQ(f.read_tensor_f32("f32"), (std::vector<float>{0.0f, 0.5f, 1.0f, 1.5f, 2.0f, -2.5f}));
  EXPECT_EQ(f.read_tensor_f32("f16"), (std::vector<float>{1.0f, -2.0f, 65504.0f, std::ldexp(1.0f, -24)}));
  EXPECT_EQ(f.read_tensor_f32("bf16"), (std::vector<float>{1.0f, -3.0f}));

  std::vector<float> q8, q4_0, q4_1;
  for (int j = 0; j < 32; ++j) q8.push_back(static_cast<float>(j - 16) * 0.5f);
  for (int j = 0; j < 32; ++j) q8.push_back(static_cast<float>(-j) * 0.25f);
  for (int j = 0; j < 32; ++j) q4_0.push_back(static_cast<float>(j % 16 - 8) * 2.0f);
  for (int j = 0; j < 32; ++j) q4_1.push_back(static_cast<float>(j % 16) * 0.5f - 1.0f);
  for (int j = 0; j < 32; ++j) q4_1.push_back(static_cast<float>(15 - j % 16) + 0.25f);
  EXPECT_EQ(f.read_tensor_f32("q8_0"), q8);
  EXPECT_EQ(f.read_tensor_f32("q4_0"), q4_0);
  EXPECT_EQ(f.read_tensor_f32("q4_1"), q4_1);
}

// A tensor with a zero dimension holds no elements: it reads as empty, of every type (the F32 path
// once handed memcpy the null data() of an empty vector: fuzz/regressions/gguf/).
TEST_F(GgufTest, AZeroElementTensorReadsAsEmpty) {
  const GgufFile f = GgufFile::open(write(build_gguf({{"empty_f32", {4, 0}, 0, ""}, {"empty_f16", {0}, 1, ""}}).bytes));
  EXPECT_TRUE(f.read_tensor_f32("empty_f32").empty());
  EXPECT_TRUE(f.read_tensor_f32("empty_f16").empty());
}

// 2^62 F32 elements are 2^64 bytes: the size must not wrap to 0 and pass the data-size check.
TEST_F(GgufTest, ADataSizeThatOverflowsIsRefused) {
  const std::string error = open_error(build_gguf({{"huge", {uint64_t(1) << 62}, 0, ""}}).bytes);
  EXPECT_NE(error.find("tensor 'huge'"), std::string::npos) << error;
  EXPECT_NE(error.find("overflows"), std::string::npos) << error;
}

TEST_F(GgufTest, UnsupportedTensorTypeNamesTensorAndType) {
  const GgufFile f = GgufFile::open(write(build_gguf(test_tensors()).bytes));
  try {
    f.read_tensor_f32("q5_k");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(Contains(e.what(), "tensor 'q5_k' has type Q5_K"));
  }
}

TEST_F(GgufTest, TruncationNamesThePlace) {
  const GgufBuilder b = build_gguf(test_tensors());
  const std::vector<std::pair<size_t, std::string>> cases = {
      {0, "header: truncated: magic"},
      {6, "header: truncated: version"},
      {20, "header: truncated: metadata count"},
      {100, "header: counts exceed the file size: 18 metadata entries and 7 tensors"},
      {b.marks.at("t.u8s") + 5, "metadata entry 16: truncated: key"},
      {b.marks.at("general.alignment") + 8 + 17 + 4 + 2, "metadata key 'general.alignment': truncated: value"},
      {b.marks.at("t.f32s") + 8 + 6 + 4 + 4 + 8 + 6, "metadata key 't.f32s': array of 2 f32 values exceeds"},
      {b.marks.at("t.strings[1]") + 8 + 20, "metadata key 't.strings' (element 1): truncated: string of 40 bytes"},
      {b.marks.at("info q8_0") + 8 + 4 + 4, "tensor 'q8_0': truncated: dimension"},
      {b.marks.at("data q4_1") + 39, "tensor 'q4_1': truncated: data of 40 bytes"},
  };
  for (const auto& [size, expected] : cases) {
    const std::string message = open_error(b.bytes.substr(0, size));
    EXPECT_TRUE(Contains(message, expected)) << "cut at " << size;
    EXPECT_TRUE(Contains(message, "test.gguf")) << "cut at " << size;
  }
  // Every cut before the end of the last tensor's data is an error, never a crash.
  for (size_t size = 0; size < b.marks.at("data q5_k") + 176; size += 7) {
    EXPECT_NE(open_error(b.bytes.substr(0, size)), "") << "cut at " << size;
  }
}

TEST_F(GgufTest, RejectsBadMagicVersionAndLayout) {
  const std::vector<TestTensor> tensors = test_tensors();
  std::string bytes = build_gguf(tensors).bytes;
  bytes[3] = 'X';
  EXPECT_TRUE(Contains(open_error(bytes), "not a GGUF file"));
  EXPECT_TRUE(Contains(open_error(build_gguf(tensors, 1).bytes), "unsupported GGUF version 1; supported: 2, 3"));
  EXPECT_TRUE(Contains(open_error(build_gguf(tensors, 4).bytes), "unsupported GGUF version 4"));
  EXPECT_EQ(open_error(build_gguf(tensors, 2).bytes), "");

  GgufBuilder huge = build_gguf(tensors);
  const uint64_t billion = 1000000000;
  std::memcpy(huge.bytes.data() + 16, &billion, 8);  // metadata count
  EXPECT_TRUE(Contains(open_error(huge.bytes), "counts exceed the file size"));

  // q4_1's info: name (8 + 4 bytes), dimension count (4), one dimension (8), type (4), offset (8).
  const size_t type_field = build_gguf(tensors).marks.at("info q4_1") + 24, offset_field = type_field + 4;
  GgufBuilder far = build_gguf(tensors);
  const uint64_t far_offset = 64 * 1024;
  std::memcpy(far.bytes.data() + offset_field, &far_offset, 8);
  EXPECT_TRUE(Contains(open_error(far.bytes), "tensor 'q4_1': truncated: data of 40 bytes at offset"));

  GgufBuilder misaligned = build_gguf(tensors);
  const uint64_t odd_offset = 8;
  std::memcpy(misaligned.bytes.data() + offset_field, &odd_offset, 8);
  EXPECT_TRUE(Contains(open_error(misaligned.bytes),
                       "tensor 'q4_1': data offset 8 is not a multiple of the alignment 64"));

  // q4_1's offset moved onto the first tensor's data: aligned and inside the file, but it would load
  // another tensor's bytes as its weights.
  GgufBuilder overlapping = build_gguf(tensors);
  const uint64_t zero_offset = 0;
  std::memcpy(overlapping.bytes.data() + offset_field, &zero_offset, 8);
  EXPECT_TRUE(Contains(open_error(overlapping.bytes), "overlaps tensor '"));

  GgufBuilder unknown = build_gguf(tensors);
  const uint32_t type99 = 99;
  std::memcpy(unknown.bytes.data() + type_field, &type99, 4);
  EXPECT_TRUE(Contains(open_error(unknown.bytes), "tensor 'q4_1': unknown ggml type 99"));

  EXPECT_THROW(GgufFile::open(dir_ / "missing.gguf"), std::runtime_error);
}

// ---- The real SmolLM2-135M-Instruct Q4_1 GGUF ------------------------------------------------

constexpr const char* kSmolLm2 = "models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";

const nlohmann::json& reference() {
  static const nlohmann::json json = test_support::golden_json("smollm2_reference.json");
  return json;
}

const GgufFile* smollm2() {
  static const std::optional<GgufFile> file = []() -> std::optional<GgufFile> {
    try {
      return GgufFile::open(common::resolve_data(kSmolLm2));
    } catch (const common::DataNotFound&) {
      return std::nullopt;
    }
  }();
  return file ? &*file : nullptr;
}

#define REQUIRE_SMOLLM2()                                                                              \
  if (!smollm2()) GTEST_SKIP() << kSmolLm2 << " not found: run scripts/fetch-data.sh to fetch it"

TEST(SmolLm2Gguf, Metadata) {
  REQUIRE_SMOLLM2();
  const GgufFile& f = *smollm2();
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.get_string("general.architecture"), "llama");
  EXPECT_EQ(f.get_u32("llama.block_count"), 30u);
  EXPECT_EQ(f.get_u32("llama.embedding_length"), 576u);
  EXPECT_EQ(f.get_u32("llama.feed_forward_length"), 1536u);
  EXPECT_EQ(f.get_u32("llama.attention.head_count"), 9u);
  EXPECT_EQ(f.get_u32("llama.attention.head_count_kv"), 3u);
  EXPECT_EQ(f.get_u32("llama.context_length"), 8192u);
  EXPECT_EQ(f.get_u32("llama.vocab_size"), 49152u);
  EXPECT_EQ(f.get_u32("llama.rope.dimension_count"), 64u);
  EXPECT_EQ(f.get_f32("llama.rope.freq_base"), 100000.0f);
  EXPECT_EQ(f.get_f32("llama.attention.layer_norm_rms_epsilon"), 1e-5f);
  EXPECT_EQ(f.get_string("tokenizer.ggml.model"), "gpt2");
  EXPECT_EQ(f.get_string("tokenizer.ggml.pre"), "smollm");
  EXPECT_EQ(f.get_string_array("tokenizer.ggml.tokens")->size(), 49152u);
  EXPECT_EQ(f.get_string_array("tokenizer.ggml.merges")->size(), 48900u);
  for (const auto& [key, value] : reference()["metadata"].items()) {
    const auto type = f.type_of(key);
    ASSERT_TRUE(type.has_value()) << key;
    if (value.is_string()) {
      EXPECT_EQ(f.get_string(key), value.get<std::string>()) << key;
    } else if (value.is_boolean()) {
      EXPECT_EQ(f.get_bool(key), value.get<bool>()) << key;
    } else if (value.is_number_integer()) {
      EXPECT_EQ(f.get_integer(key), value.get<int64_t>()) << key;
    } else {
      EXPECT_EQ(f.get_f32(key), value.get<float>()) << key;
    }
  }
}

TEST(SmolLm2Gguf, TensorNamesAndShapes) {
  REQUIRE_SMOLLM2();
  const GgufFile& f = *smollm2();
  const nlohmann::json& ref = reference()["tensors"];
  EXPECT_EQ(f.tensors().size(), ref["count"].get<size_t>());
  EXPECT_EQ(f.tensor("token_embd.weight").dims, (std::vector<uint64_t>{576, 49152}));
  EXPECT_EQ(f.tensor("blk.29.attn_k.weight").dims, (std::vector<uint64_t>{576, 192}));
  EXPECT_EQ(f.tensor("blk.0.ffn_down.weight").dims, (std::vector<uint64_t>{1536, 576}));
  EXPECT_EQ(f.find_tensor("output.weight"), nullptr);  // tied to token_embd
  std::map<std::string, int> types;
  for (const GgufTensorInfo& t : f.tensors()) ++types[ggml_type_name(t.type)];
  EXPECT_EQ(types, (ref["type_counts"].get<std::map<std::string, int>>()));
}

TEST(SmolLm2Gguf, DequantizedChecksumsMatchTheGgufPackage) {
  REQUIRE_SMOLLM2();
  const GgufFile& f = *smollm2();
  for (const nlohmann::json& check : reference()["tensors"]["checks"]) {
    const std::string name = check["name"];
    SCOPED_TRACE(name);
    const GgufTensorInfo& t = f.tensor(name);
    EXPECT_EQ(ggml_type_name(t.type), check["type"].get<std::string>());
    EXPECT_EQ(t.dims, check["dims"].get<std::vector<uint64_t>>());
    const std::vector<float> values = f.read_tensor_f32(name);
    const auto first = check["first"].get<std::vector<float>>();
    EXPECT_EQ(std::vector<float>(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(first.size())), first);
    double sum = 0, sum_abs = 0;
    for (float v : values) {
      sum += v;
      sum_abs += std::fabs(v);
    }
    EXPECT_NEAR(sum, check["sum"].get<double>(), 1e-9 * check["sum_abs"].get<double>());
    EXPECT_NEAR(sum_abs, check["sum_abs"].get<double>(), 1e-9 * check["sum_abs"].get<double>());
  }
}

// Model dimensions from metadata are bounded before anything is sized by them: a context length of
// 2^31 once reached a LibTorch arange that failed with a backtrace naming neither file nor key.
TEST_F(GgufTest, AbsurdModelDimensionsNameTheKey) {
  test_support::GgufBuilder b;
  b.header(3, 0, 6);
  b.kv_string("general.architecture", "llama");
  b.kv<uint32_t>("llama.embedding_length", GgufType::kU32, 64);
  b.kv<uint32_t>("llama.feed_forward_length", GgufType::kU32, 128);
  b.kv<uint32_t>("llama.block_count", GgufType::kU32, 2);
  b.kv<uint32_t>("llama.attention.head_count", GgufType::kU32, 4);
  b.kv<uint64_t>("llama.context_length", GgufType::kU64, uint64_t{1} << 31);
  b.pad(32);
  try {
    load_gguf_checkpoint(GgufFile::open(write(b.bytes)));
    ADD_FAILURE() << "loaded";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(Contains(e.what(), "test.gguf: metadata llama.context_length = 2147483648 is outside 1..16777216"));
  }
}


}  // namespace
}  // namespace kvstream::models
