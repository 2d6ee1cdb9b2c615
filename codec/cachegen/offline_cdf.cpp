#include "codec/cachegen/offline_cdf.h"

#include <stdexcept>

#include "codec/entropy/cdf.h"
#include "codec/format/byte_io.h"
#include "codec/format/crc32c.h"
#include "common/atomic_file.h"
#include "common/file_text.h"

namespace kvstream::codec {
namespace {

constexpr uint8_t kMagic[4] = {'K', 'V', 'C', 'D'};
constexpr uint16_t kVersion = 1;

}  // namespace

OfflineCdfTable OfflineCdfTable::build(const std::vector<KvChunkView>& contexts, const Ladder& ladder, TokenMode mode) {
  if (contexts.empty()) throw std::invalid_argument("offline CDF table: no profiling contexts");
  OfflineCdfTable table;
  table.layers_ = contexts.front().shape().layers;
  table.channels_ = contexts.front().shape().channels();
  table.mode_ = mode;
  for (const auto& ctx : contexts)
    if (ctx.shape().layers != table.layers_ || ctx.shape().channels() != table.channels_)
      throw std::invalid_argument("offline CDF table: profiling contexts have different L or C");
  const int rows = 2 * table.layers_, channels = table.channels_;
  for (int level : ladder.levels()) {
    LevelTable lt{ladder.level_spec(level, table.layers_), 0, {}};
    lt.alphabet = lt.spec.alphabet();
    std::vector<uint64_t> counts(size_t(rows) * channels * lt.alphabet, 0);
    for (const auto& ctx : contexts) {
      const QuantizedChunk q = quantize_chunk(ctx, lt.spec, mode);
      for (int row = 0; row < rows; ++row)
        for (int64_t t = 0; t < q.shape.tokens; ++t) {
          const uint8_t* s = q.row_token(row, t);
          for (int c = 0; c < channels; ++c) ++counts[(size_t(row) * channels + c) * lt.alphabet + s[c]];
        }
    }
    lt.cdf.resize(size_t(rows) * channels * (lt.alphabet + 1));
    for (size_t stream = 0; stream < size_t(rows) * channels; ++stream)
      build_cdf16(counts.data() + stream * lt.alphabet, lt.alphabet, lt.cdf.data() + stream * (lt.alphabet + 1));
    table.levels_.push_back(std::move(lt));
  }
  table.compute_id();
  return table;
}

const OfflineCdfTable::LevelTable* OfflineCdfTable::level(int level) const {
  for (const auto& lt : levels_)
    if (lt.spec.level == level) return &lt;
  return nullptr;
}

std::vector<uint8_t> OfflineCdfTable::serialize() const {
  std::vector<uint8_t> out;
  ByteWriter w(out);
  w.bytes(kMagic);
  w.put<uint16_t>(kVersion);
  w.put<uint8_t>(static_cast<uint8_t>(mode_.delta_group));
  w.put<uint8_t>(static_cast<uint8_t>(levels_.size()));
  w.put<uint16_t>(static_cast<uint16_t>(layers_));
  w.put<uint32_t>(static_cast<uint32_t>(channels_));
  for (const auto& lt : levels_) {
    w.put<uint8_t>(static_cast<uint8_t>(lt.spec.level));
    w.put<uint8_t>(static_cast<uint8_t>(lt.alphabet));
    for (int b : lt.spec.key_bins) w.put<uint8_t>(static_cast<uint8_t>(b));
    for (int b : lt.spec.value_bins) w.put<uint8_t>(static_cast<uint8_t>(b));
    w.u16_array(lt.cdf);
  }
  w.put<uint32_t>(crc32c(out));
  return out;
}

void OfflineCdfTable::compute_id() {
  auto bytes = serialize();
  id_ = file_fingerprint(std::span(bytes).first(bytes.size() - 4));
}

void OfflineCdfTable::save(const std::filesystem::path& path) const {
  const auto bytes = serialize();
  common::write_file_atomically(path, [&](std::ostream& out) {
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  });
}

OfflineCdfTable OfflineCdfTable::load(const std::filesystem::path& path) {
  const auto text = common::read_file_if_open(path);
  if (!text) throw std::runtime_error("cannot open offline CDF table " + path.string());
  const std::vector<uint8_t> bytes(text->begin(), text->end());
  return parse(bytes, path.string());
}

OfflineCdfTable OfflineCdfTable::parse(const std::vector<uint8_t>& bytes, const std::string& where) {
  auto fail = [&](const std::string& what) -> void {
    throw std::runtime_error("offline CDF table " + where + ": " + what);
  };
  try {
    if (bytes.size() < 18 || !std::equal(kMagic, kMagic + 4, bytes.begin())) fail("not a .kvcdf file (magic \"KVCD\")");
    const std::span<const uint8_t> body(bytes.data(), bytes.size() - 4);
    if (ByteReader(std::span(bytes).last(4), "checksum").get<uint32_t>() != crc32c(body)) fail("CRC32C mismatch");
    ByteReader r(body, "table");
    r.take(4);
    if (const auto v = r.get<uint16_t>(); v != kVersion) fail("unsupported version " + std::to_string(v));
    OfflineCdfTable table;
    table.mode_.delta_group = r.get<uint8_t>();
    const int n_levels = r.get<uint8_t>();
    table.layers_ = r.get<uint16_t>();
    table.channels_ = static_cast<int>(r.get<uint32_t>());
    if (table.layers_ < 1 || table.channels_ < 1 || table.channels_ > 65536) fail("bad shape");
    const int rows = 2 * table.layers_;
    for (int i = 0; i < n_levels; ++i) {
      LevelTable lt;
      lt.spec.level = r.get<uint8_t>();
      lt.alphabet = r.get<uint8_t>();
      for (auto* list : {&lt.spec.key_bins, &lt.spec.value_bins})
        for (int l = 0; l < table.layers_; ++l) list->push_back(r.get<uint8_t>());
      lt.spec.validate(table.layers_);
      if (lt.alphabet != lt.spec.alphabet()) fail("level " + std::to_string(lt.spec.level) + ": alphabet mismatch");
      const size_t entries = size_t(rows) * table.channels_ * (lt.alphabet + 1);
      const auto raw = r.take(entries * 2);
      lt.cdf.resize(entries);
      for (size_t k = 0; k < entries; ++k) lt.cdf[k] = load_u16(raw.data() + 2 * k);
      for (size_t s = 0; s < size_t(rows) * table.channels_; ++s)
        if (!cdf16_is_valid(lt.cdf.data() + s * (lt.alphabet + 1), lt.alphabet)) fail("invalid CDF row");
      table.levels_.push_back(std::move(lt));
    }
    if (r.remaining() != 0) fail("trailing bytes");
    table.id_ = file_fingerprint(body);
    return table;
  } catch (const BitstreamError& e) {
    fail(e.what());
  } catch (const std::invalid_argument& e) {
    fail(e.what());
  }
  return {};
}

}  // namespace kvstream::codec
