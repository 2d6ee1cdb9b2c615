#include "codec/format/kv_dump.h"

#include <bit>
#include <charconv>
#include <stdexcept>

#include "codec/format/byte_io.h"
#include "common/half.h"
#include "common/safetensors.h"

namespace kvstream::codec {
namespace {

std::runtime_error file_error(const std::filesystem::path& path, const std::string& what) {
  return std::runtime_error(path.string() + ": " + what);
}

}  // namespace

const char* dtype_name(SourceDtype dtype) {
  switch (dtype) {
    case SourceDtype::kFp16: return "F16";
    case SourceDtype::kBf16: return "BF16";
    case SourceDtype::kFp32: return "F32";
  }
  return "F16";
}

KvFile load_kv(const std::filesystem::path& path) {
  const common::SafetensorsFile file = common::read_safetensors(path);
  const auto it = file.tensors.find("kv");
  if (it == file.tensors.end()) throw file_error(path, "no tensor \"kv\" (expected [L,2,T,C] or [N,L,2,T,C])");
  const common::Tensor& t = it->second;
  KvFile kv;
  kv.metadata = file.metadata;
  if (t.dtype == "F16") kv.dtype = SourceDtype::kFp16;
  else if (t.dtype == "BF16") kv.dtype = SourceDtype::kBf16;
  else if (t.dtype == "F32") kv.dtype = SourceDtype::kFp32;
  else throw file_error(path, "tensor \"kv\" has dtype " + t.dtype + " (expected F16, BF16 or F32)");
  std::vector<int64_t> shape = t.shape;
  if (shape.size() == 4) shape.insert(shape.begin(), 1);
  if (shape.size() != 5 || shape[2] != 2)
    throw file_error(path, "tensor \"kv\" must be [L,2,T,C] or [N,L,2,T,C]");
  const int64_t n = shape[0], layers = shape[1], tokens = shape[3], channels = shape[4];
  int64_t heads = 1, head_dim = channels;
  if (file.metadata.count("H") && file.metadata.count("D")) {
    // Whole decimal integers within the bitstream's bounds (H·D ≤ 65,536), so that their product
    // cannot overflow into a match with C (measured: "4611686018427387908" was read as 4).
    const auto dimension = [&](const char* key) {
      const std::string& text = file.metadata.at(key);
      int64_t value = 0;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (error != std::errc() || end != text.data() + text.size() || value < 1 || value > 65536)
        throw file_error(path, std::string("metadata ") + key + " = \"" + text + "\": expected an integer in 1..65536");
      return value;
    };
    heads = dimension("H");
    head_dim = dimension("D");
    if (heads * head_dim != channels)
      throw file_error(path, "metadata H*D = " + std::to_string(heads * head_dim) + " but C = " + std::to_string(channels));
  }
  const KvShape kv_shape{static_cast<int>(layers), static_cast<int>(heads), static_cast<int>(head_dim), tokens};
  try {
    validate_shape(kv_shape, "kv tensor");
  } catch (const std::exception& e) {
    throw file_error(path, e.what());
  }
  const size_t per_context = static_cast<size_t>(kv_shape.elements());
  const size_t elem = common::dtype_size(t.dtype);
  for (int64_t i = 0; i < n; ++i) {
    std::vector<float> values(per_context);
    const uint8_t* src = t.data.data() + size_t(i) * per_context * elem;
    for (size_t k = 0; k < per_context; ++k) {
      const uint8_t* p = src + k * elem;
      if (kv.dtype == SourceDtype::kFp16) values[k] = common::half_to_float(load_u16(p));
      else if (kv.dtype == SourceDtype::kBf16) values[k] = common::bf16_to_float(load_u16(p));
      else values[k] = std::bit_cast<float>(ByteReader(std::span(p, 4), "kv").get<uint32_t>());
    }
    kv.contexts.emplace_back(kv_shape, std::move(values));
  }
  if (const auto tok = file.tensors.find("tokens"); tok != file.tensors.end()) {
    const common::Tensor& tt = tok->second;
    if (tt.dtype != "I32" || tt.data.size() != size_t(n * tokens) * 4)
      throw file_error(path, "tensor \"tokens\" must be I32 with N*T = " + std::to_string(n * tokens) + " entries");
    for (int64_t i = 0; i < n; ++i) {
      std::vector<int32_t> ids(static_cast<size_t>(tokens));
      for (int64_t k = 0; k < tokens; ++k)
        ids[size_t(k)] = static_cast<int32_t>(ByteReader(std::span(tt.data.data() + (i * tokens + k) * 4, 4), "tokens").get<uint32_t>());
      kv.tokens.push_back(std::move(ids));
    }
  }
  return kv;
}

void save_kv(const std::filesystem::path& path, const KvCache& kv, SourceDtype dtype,
             std::map<std::string, std::string> metadata, const std::vector<int32_t>& tokens) {
  KvFile file;
  file.contexts.push_back(kv);
  if (!tokens.empty()) file.tokens.push_back(tokens);
  file.dtype = dtype;
  file.metadata = std::move(metadata);
  save_kv(path, file);
}

void save_kv(const std::filesystem::path& path, const KvFile& kv) {
  if (kv.contexts.empty()) throw std::invalid_argument("save_kv: no context to write");
  const KvShape& s = kv.contexts.front().shape();
  for (const auto& c : kv.contexts)
    if (!(c.shape() == s)) throw std::invalid_argument("save_kv: contexts differ in shape (" + c.shape().to_string() + " vs " + s.to_string() + ")");
  const int64_t n = static_cast<int64_t>(kv.contexts.size());
  common::SafetensorsFile file;
  file.metadata = kv.metadata;
  file.metadata["layout"] = n == 1 ? "[L][2][T][C]" : "[n][L][2][T][C]";
  file.metadata["L"] = std::to_string(s.layers);
  file.metadata["H"] = std::to_string(s.kv_heads);
  file.metadata["D"] = std::to_string(s.head_dim);
  file.metadata["T"] = std::to_string(s.tokens);
  std::vector<int64_t> shape = {s.layers, 2, s.tokens, s.channels()};
  if (n > 1) shape.insert(shape.begin(), n);
  common::Tensor t{dtype_name(kv.dtype), shape, {}};
  ByteWriter w(t.data);
  for (const auto& c : kv.contexts)
    for (float v : c.values()) {
      if (kv.dtype == SourceDtype::kFp16) w.put<uint16_t>(common::float_to_half(v));
      else if (kv.dtype == SourceDtype::kBf16) w.put<uint16_t>(common::float_to_bf16(v));
      else w.put<uint32_t>(std::bit_cast<uint32_t>(v));
    }
  file.tensors.emplace("kv", std::move(t));
  if (!kv.tokens.empty()) {
    if (kv.tokens.size() != kv.contexts.size()) throw std::invalid_argument("save_kv: token ids for some contexts only");
    std::vector<int64_t> ids_shape = {s.tokens};
    if (n > 1) ids_shape.insert(ids_shape.begin(), n);
    common::Tensor ids{"I32", ids_shape, {}};
    ByteWriter iw(ids.data);
    for (const auto& list : kv.tokens) {
      if (int64_t(list.size()) != s.tokens)
        throw std::invalid_argument("save_kv: " + std::to_string(list.size()) + " token ids for T = " + std::to_string(s.tokens));
      for (int32_t id : list) iw.put<uint32_t>(static_cast<uint32_t>(id));
    }
    file.tensors.emplace("tokens", std::move(ids));
  }
  common::write_safetensors(path, file);
}

}  // namespace kvstream::codec
