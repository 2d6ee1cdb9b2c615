#include "common/safetensors.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "common/atomic_file.h"
#include "common/json_reader.h"

namespace kvstream::common {
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

SafetensorsFile read_safetensors(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw file_error(path, "cannot open");
  in.seekg(0, std::ios::end);
  const auto file_size = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  if (file_size < 8) throw file_error(path, "too short for a safetensors header (" + std::to_string(file_size) + " bytes)");
  uint8_t len_bytes[8];
  in.read(reinterpret_cast<char*>(len_bytes), 8);
  uint64_t header_len = 0;  // little-endian
  for (int i = 7; i >= 0; --i) header_len = header_len << 8 | len_bytes[i];
  if (header_len > kMaxHeaderBytes || header_len > file_size - 8)
    throw file_error(path, "header length " + std::to_string(header_len) + " exceeds the file (" +
                               std::to_string(file_size) + " bytes)");
  std::string header(header_len, '\0');
  in.read(header.data(), static_cast<std::streamsize>(header_len));
  nlohmann::json j;
  try {
    j = parse_json(header, "header");
  } catch (const JsonError& e) {
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
  uint8_t len[8];  // little-endian
  for (int i = 0; i < 8; ++i) len[i] = static_cast<uint8_t>(uint64_t(text.size()) >> (8 * i));
  write_file_atomically(path, [&](std::ostream& out) {
    out.write(reinterpret_cast<const char*>(len), 8);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    for (const auto& [name, t] : file.tensors)
      out.write(reinterpret_cast<const char*>(t.data.data()), static_cast<std::streamsize>(t.data.size()));
  });
}

}  // namespace kvstream::common
