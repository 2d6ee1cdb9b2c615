// CacheGen chunks encoded on the GPU (gpu_encode.cu): the parameters are planned as the CPU
// encoder plans them (cachegen_payload.h), the KV goes to the GPU, the encode stages run there
// (cachegen_encode_stages.h, the CPU encoder's per-thread code), and the host writes the bitstream.
// The bitstream equals the CPU encoder's byte for byte (a test, run where a GPU exists;
// scripts/gpu-check.sh).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "codec/codec.h"
#include "codec/cuda/gpu_results.h"
#include "codec/kv_cache.h"

namespace kvstream::codec {

class OfflineCdfTable;

// Throws std::invalid_argument for a bad spec or KV that is not finite fp16 (the CPU encoder's
// errors), and std::runtime_error when no GPU can be used (saying why) or the spec asks for more
// rANS states than the GPU path takes (32).
GpuEncoded gpu_encode_cachegen(const std::string& spec, const KvChunkView& chunk, int level, int64_t t0,
                               SourceDtype dtype = SourceDtype::kFp16,
                               std::shared_ptr<const OfflineCdfTable> table = nullptr);

}  // namespace kvstream::codec
