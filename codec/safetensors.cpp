#include "codec/safetensors.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <tuple>

#include "codec/byte_io.h"
#include "codec/half.h"
#include "common/atomic_file.h"
#include "common/json_reader.h"

namespace kvstream::codec {
namespace {

constexpr uint64_t kMaxHeaderBytes = 100u << 20;

std::runtime_error file_error(const std::filesystem::path& path, const std::string& what) {
  return std::runtime_error(path.string() + ": " + what);
}

}  // namespace

size_t dtype_size(const std::string& dtype) {
  static const std::map<std::string, size_t> sizes = {{"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8},
                                                      {"I32", 4}, {"I16", 2}, {"I8", 1},  {"U8", 1},   {"BOOL", 1}};
  const auto it = sizes.find(dtype);
  if (it == sizes.end()) throw std::invalid_argument("unsupported safetensors dtype \"" + dtype + "\"");
  return it->second;
}

const char* dtype_name(SourceDtype dtype) {
  switch (dtype) {
    case SourceDtype::kFp16: return "F16";
    case SourceDtype::kBf16: return "BF16";
    case SourceDtype::kFp32: return "F32";
  }
  return "F16";
}

SafetensorsFile read_safetensors(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw file_error(path, "cannot open");
  in.seekg(0, std::ios::end);
  const auto file_size = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  if (file_size < 8) throw file_error(path, "too short for a safetensors header (" + std::to_string(file_size) + " bytes)");
  uint8_t len_bytes[8];
  in.read(reinterpret_cast<char*>(len_bytes), 8);
  const auto header_len = ByteReader(len_bytes, "safetensors").get<uint64_t>();
  if (header_len > kMaxHeaderBytes || header_len > file_size - 8)
    throw file_error(path, "header length " + std::to_string(header_len) + " exceeds the file (" +
                               std::to_string(file_size) + " bytes)");
  std::string header(header_len, '\0');
  in.read(header.data(), static_cast<std::streamsize>(header_len));
  nlohmann::json j;
  try {
    j = common::parse_json(header, "header");
  } catch (const common::JsonError& e) {
    throw file_error(path, e.what());
  }
  if (!j.is_object()) throw file_error(path, "header is not a JSON object");
  const uint64_t data_size = file_size - 8 - header_len;
  std::vector<uint8_t> data(data_size);
  in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(data_size));
  if (!in) throw file_error(path, "read failed");

  SafetensorsFile file;
  std::vector<std::tuple<uint64_t, uint64_t, std::string>> ranges;  // [begin, end) of each tensor
  for (const auto& [name, value] : j.items()) {
    if (name == "__metadata__") {
      if (!value.is_object()) throw file_error(path, "__metadata__ is not an object");
      for (const auto& [k, v] : value.items()) {
        if (!v.is_string()) throw file_error(path, "__metadata__." + k + " is not a string");
        file.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    const std::string where = "tensor \"" + name + "\"";
    if (!value.is_object() || !value.contains("dtype") || !value["dtype"].is_string() || !value.contains("shape") ||
        !value["shape"].is_array() || !value.contains("data_offsets") || !value["data_offsets"].is_array() ||
        value["data_offsets"].size() != 2)
      throw file_error(path, where + ": expected {dtype, shape, data_offsets[2]}");
    Tensor t;
    t.dtype = value["dtype"].get<std::string>();
    size_t elem = 0;
    try {
      elem = dtype_size(t.dtype);
    } catch (const std::invalid_argument& e) {
      throw file_error(path, where + ": " + e.what());
    }
    uint64_t count = 1;
    for (const auto& d : value["shape"]) {
      if (!d.is_number_unsigned()) throw file_error(path, where + ": shape entries must be non-negative integers");
      t.shape.push_back(d.get<int64_t>());
      if (t.shape.back() > 0 && count > data_size / uint64_t(t.shape.back()))
        throw file_error(path, where + ": shape larger than the file");
      count *= uint64_t(t.shape.back());
    }
    const auto& off = value["data_offsets"];
    if (!off[0].is_number_unsigned() || !off[1].is_number_unsigned())
      throw file_error(path, where + ": data_offsets must be non-negative integers");
    const auto begin = off[0].get<uint64_t>(), end = off[1].get<uint64_t>();
    if (begin > end || end > data_size)
      throw file_error(path, where + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                                 ") outside the " + std::to_string(data_size) + "-byte data block");
    if (end - begin != count * elem)
      throw file_error(path, where + ": " + std::to_string(end - begin) + " bytes for " + std::to_string(count) + " " +
                                 t.dtype + " values");
    t.data.assign(data.begin() + static_cast<std::ptrdiff_t>(begin), data.begin() + static_cast<std::ptrdiff_t>(end));
    ranges.push_back({begin, end, name});
    file.tensors.emplace(name, std::move(t));
  }
  // The format's rule: the tensors tile the data block, without overlaps or holes (a byte that no
  // tensor owns, or one that two do, is a corrupt or forged file).
  std::sort(ranges.begin(), ranges.end());
  uint64_t covered = 0;
  for (size_t i = 0; i < ranges.size(); ++i) {
    const auto& [begin, end, name] = ranges[i];
    if (begin < covered)
      throw file_error(path, "tensors \"" + std::get<2>(ranges[i - 1]) + "\" and \"" + name +
                                 "\" overlap in the data block at byte " + std::to_string(begin));
    if (begin > covered)
      throw file_error(path, "bytes [" + std::to_string(covered) + ", " + std::to_string(begin) +
                                 ") of the data block belong to no tensor");
    covered = end;
  }
  if (covered != data_size)
    throw file_error(path, "bytes [" + std::to_string(covered) + ", " + std::to_string(data_size) +
                               ") of the data block belong to no tensor");
  return file;
}

void write_safetensors(const std::filesystem::path& path, const SafetensorsFile& file) {
  nlohmann::json header = nlohmann::json::object();
  if (!file.metadata.empty()) header["__metadata__"] = file.metadata;
  uint64_t offset = 0;
  for (const auto& [name, t] : file.tensors) {
    header[name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.data.size()}}};
    offset += t.data.size();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // align the data block to 8 bytes
  std::vector<uint8_t> len;
  ByteWriter(len).put<uint64_t>(text.size());
  common::write_file_atomically(path, [&](std::ostream& out) {
    out.write(reinterpret_cast<const char*>(len.data()), 8);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    for (const auto& [name, t] : file.tensors)
      out.write(reinterpret_cast<const char*>(t.data.data()), static_cast<std::streamsize>(t.data.size()));
  });
}

KvFile load_kv(const std::filesystem::path& path) {
  const SafetensorsFile file = read_safetensors(path);
  const auto it = file.tensors.find("kv");
  if (it == file.tensors.end()) throw file_error(path, "no tensor \"kv\" (expected [L,2,T,C] or [N,L,2,T,C])");
  const Tensor& t = it->second;
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
  const size_t elem = dtype_size(t.dtype);
  for (int64_t i = 0; i < n; ++i) {
    std::vector<float> values(per_context);
    const uint8_t* src = t.data.data() + size_t(i) * per_context * elem;
    for (size_t k = 0; k < per_context; ++k) {
      const uint8_t* p = src + k * elem;
      if (kv.dtype == SourceDtype::kFp16) values[k] = half_to_float(load_u16(p));
      else if (kv.dtype == SourceDtype::kBf16) values[k] = bf16_to_float(load_u16(p));
      else values[k] = std::bit_cast<float>(ByteReader(std::span(p, 4), "kv").get<uint32_t>());
    }
    kv.contexts.emplace_back(kv_shape, std::move(values));
  }
  if (const auto tok = file.tensors.find("tokens"); tok != file.tensors.end()) {
    const Tensor& tt = tok->second;
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
  SafetensorsFile file;
  file.metadata = kv.metadata;
  file.metadata["layout"] = n == 1 ? "[L][2][T][C]" : "[n][L][2][T][C]";
  file.metadata["L"] = std::to_string(s.layers);
  file.metadata["H"] = std::to_string(s.kv_heads);
  file.metadata["D"] = std::to_string(s.head_dim);
  file.metadata["T"] = std::to_string(s.tokens);
  std::vector<int64_t> shape = {s.layers, 2, s.tokens, s.channels()};
  if (n > 1) shape.insert(shape.begin(), n);
  Tensor t{dtype_name(kv.dtype), shape, {}};
  ByteWriter w(t.data);
  for (const auto& c : kv.contexts)
    for (float v : c.values()) {
      if (kv.dtype == SourceDtype::kFp16) w.put<uint16_t>(float_to_half(v));
      else if (kv.dtype == SourceDtype::kBf16) w.put<uint16_t>(float_to_bf16(v));
      else w.put<uint32_t>(std::bit_cast<uint32_t>(v));
    }
  file.tensors.emplace("kv", std::move(t));
  if (!kv.tokens.empty()) {
    if (kv.tokens.size() != kv.contexts.size()) throw std::invalid_argument("save_kv: token ids for some contexts only");
    std::vector<int64_t> ids_shape = {s.tokens};
    if (n > 1) ids_shape.insert(ids_shape.begin(), n);
    Tensor ids{"I32", ids_shape, {}};
    ByteWriter iw(ids.data);
    for (const auto& list : kv.tokens) {
      if (int64_t(list.size()) != s.tokens)
        throw std::invalid_argument("save_kv: " + std::to_string(list.size()) + " token ids for T = " + std::to_string(s.tokens));
      for (int32_t id : list) iw.put<uint32_t>(static_cast<uint32_t>(id));
    }
    file.tensors.emplace("tokens", std::move(ids));
  }
  write_safetensors(path, file);
}

}  // namespace kvstream::codec
