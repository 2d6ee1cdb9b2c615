// KV dumps (docs/ARCHITECTURE.md §5): safetensors files (common/safetensors.h) holding tensor "kv"
// [L,2,T,C] (or [N,L,2,T,C] for N contexts, like the shared fixture) in F16, BF16 or F32, metadata "H"
// and "D" (KV heads, head dim) and optionally an I32 tensor "tokens" [T] or [N,T].
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "codec/format/bitstream.h"
#include "codec/kv_cache.h"

namespace kvstream::codec {

struct KvFile {
  std::vector<KvCache> contexts;             // one per context (N = 1 for a [L,2,T,C] tensor)
  std::vector<std::vector<int32_t>> tokens;  // empty, or one id list per context
  SourceDtype dtype = SourceDtype::kFp16;
  std::map<std::string, std::string> metadata;
};

// Throws std::runtime_error naming the file and what is wrong (the safetensors layer's errors, the
// "kv" tensor's dtype or shape, metadata H and D, the "tokens" tensor).
KvFile load_kv(const std::filesystem::path& path);
// Writes tensor "kv" [L,2,T,C] in `dtype` (and "tokens" if given), with shape metadata L/H/D/T added.
void save_kv(const std::filesystem::path& path, const KvCache& kv, SourceDtype dtype,
             std::map<std::string, std::string> metadata = {}, const std::vector<int32_t>& tokens = {});
// Writes several contexts of one shape as "kv" [N,L,2,T,C] (and "tokens" [N,T] when every context
// has ids), the layout of the shared fixture; a single context is written as [L,2,T,C].
void save_kv(const std::filesystem::path& path, const KvFile& file);

const char* dtype_name(SourceDtype dtype);  // "F16", "BF16", "F32"

}  // namespace kvstream::codec
