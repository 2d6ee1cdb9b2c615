// Knobs of one simulation that are not the policy, the trace or the profiles.
#pragma once
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "sim/tcp/tcp_model.h"

namespace kvstream::sim {

// How the link carries a request's chunks (docs/EMULATION.md "The simulator's link models").
enum class LinkModel {
  kFluid,  // the trace's capacity, shared fairly by the transfers in flight; exact for the artifact's experiments
  kTcp,    // the same, through one modelled TCP connection per request (sim/tcp/tcp_connection_link.h)
};

// The model named "fluid" or "tcp"; throws std::invalid_argument naming both otherwise.
inline LinkModel link_model_named(const std::string& name) {
  if (name == "fluid") return LinkModel::kFluid;
  if (name == "tcp") return LinkModel::kTcp;
  throw std::invalid_argument("expected link model \"fluid\" or \"tcp\", got \"" + name + "\"");
}

// Where the decode time of a level chunk comes from (when decoding costs time at all).
enum class DecodeTime {
  kProfile,     // the context profile's measured decode_s
  kThroughput,  // tokens x the profile's fp16_bytes_per_token / SimConfig::decode_fp16_bytes_per_s, every level alike
  kHardware,    // the same with the hardware profile's measured throughput for the level's codec and level
};

struct SimConfig {
  double slo_s = 1.0;                  // TTFT objective of every request
  // Chunk i+1 is in flight while chunk i is decoded (paper §5.3 / docs/CACHEGEN.md §11.1). Off: the
  // next chunk is requested only once every earlier chunk's KV is ready, like the artifact.
  bool pipelining = true;
  // Decode and prefill run on separate executors (e.g. CUDA streams) and may overlap; otherwise one
  // FIFO executor (one GPU) runs both.
  bool overlap_decode_prefill = true;
  double request_rtt_s = 0;            // once per request, before its first chunk request
  double chunk_rtt_s = 0;              // before the bytes of every chunk request start to flow
  int64_t query_tokens = 0;            // prefilled after the context; its end is the first token
  // Artifact timing (docs/CACHEGEN.md §11.2): a text chunk costs this constant in all, instead of its
  // transfer plus the prefill cost model; with decode_costs_time = false decoding costs nothing.
  std::optional<double> fixed_recompute_s;
  bool decode_costs_time = true;
  DecodeTime decode_time = DecodeTime::kProfile;
  double decode_fp16_bytes_per_s = 0;  // DecodeTime::kThroughput: the decoder's rate in fp16 KV bytes/s (> 0)
  double trace_offset_s = 0;           // trace time at simulated time 0
  LinkModel link_model = LinkModel::kFluid;
  TcpModel tcp;                        // the path: the tcp link model's, and the one emulate builds
};

// Where the link reads the trace: trace_offset_s, except that under the tcp link model the server's
// packets meet the bottleneck half a round trip before they reach the client, where the streamer
// times them, so the link reads the trace that much earlier.
inline double link_trace_offset_s(const SimConfig& config) {
  if (config.link_model == LinkModel::kFluid) return config.trace_offset_s;
  return config.trace_offset_s - config.tcp.rtt_s / 2 > 0 ? config.trace_offset_s - config.tcp.rtt_s / 2 : 0.0;
}

// Bounds on the inputs' times, far beyond any experiment, so that every simulated time is finite (a
// round trip of 1e308 ms once gave a TTFT of 1e305 s). simulate/emulate flags and experiment configs
// check them, naming the flag or JSON path.
inline constexpr double kMaxSloS = 1e6;          // slo_s, and a recompute time
inline constexpr double kMaxRttMs = 1e6;         // request and chunk round trips
inline constexpr double kMaxTraceOffsetS = 1e9;  // trace_offset_s
inline constexpr double kMaxTraceScale = 1e6;    // capacity multiplier of a trace
inline constexpr double kMaxQueueBytes = 1e12;   // a bottleneck's drop-tail queue (TcpModel::queue_bytes)

// The artifact's chunk_delay: what its adaptation charges for a text chunk, whatever its length.
inline constexpr double kArtifactChunkDelay_s = 0.2;

// The artifact's timing (docs/CACHEGEN.md §11.2): no pipelining, decoding costs nothing, and a text chunk
// costs kArtifactChunkDelay_s unless `config` fixes another recompute time. With it, the simulated
// TTFT of the cachegen-artifact policy equals the artifact's sum (tests/sim/test_simulation.cpp).
inline SimConfig with_artifact_timing(SimConfig config) {
  config.pipelining = false;
  config.decode_costs_time = false;
  if (!config.fixed_recompute_s) config.fixed_recompute_s = kArtifactChunkDelay_s;
  return config;
}

}  // namespace kvstream::sim
