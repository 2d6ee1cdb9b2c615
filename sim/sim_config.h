// Knobs of one simulation that are not the policy, the trace or the profiles.
#pragma once
#include <cstdint>
#include <optional>

namespace kvstream::sim {

struct SimConfig {
  double slo_s = 1.0;                  // TTFT objective of every request
  // Chunk i+1 is in flight while chunk i is decoded (paper §5.3 / CACHEGEN.md §11.1). Off: the
  // next chunk is requested only once every earlier chunk's KV is ready, like the artifact.
  bool pipelining = true;
  // Decode and prefill run on separate executors (e.g. CUDA streams) and may overlap; otherwise one
  // FIFO executor (one GPU) runs both.
  bool overlap_decode_prefill = true;
  double request_rtt_s = 0;            // once per request, before its first chunk request
  double chunk_rtt_s = 0;              // before the bytes of every chunk request start to flow
  int64_t query_tokens = 0;            // prefilled after the context; its end is the first token
  // Artifact timing (CACHEGEN.md §11.2): a text chunk costs this constant in all, instead of its
  // transfer plus the prefill cost model; with decode_costs_time = false decoding costs nothing.
  std::optional<double> fixed_recompute_s;
  bool decode_costs_time = true;
  double trace_offset_s = 0;           // trace time at simulated time 0
};

}  // namespace kvstream::sim
