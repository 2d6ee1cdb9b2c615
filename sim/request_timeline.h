// One request's streaming timeline as a pure function of its choices, chunk by chunk.
//
// This is the event-driven simulator's semantics for a request that is alone on the link and the
// GPU, written as arithmetic (tests check that both agree exactly). Planners use it: the oracle
// with the true trace, MPC with a predicted constant throughput.
//
// Semantics (shared with streamer.cpp):
//   - chunk i is requested at issue_i; its bytes flow from issue_i + chunk_rtt and arrive at a_i;
//   - GPU jobs of a request are submitted in chunk order: s_i = max(a_i, s_{i-1}), and a text chunk
//     also waits until the KV of every earlier chunk is ready (it is recomputed with that prefix);
//   - a job starts when its executor is free (FIFO) and runs for CostModel::gpu_s;
//   - ready_i = max(ready_{i-1}, end_i): the KV of chunks 0..i is on the GPU;
//   - the next chunk is requested at a_i (pipelining) or at ready_i (no pipelining);
//   - after the last chunk the query is prefilled on the prefill executor; its end is the first
//     output token, and TTFT = that end - arrival.
// Under the `tcp` link model a chunk's transfer depends on the request's connection (its window,
// threshold, idle time): a model built with a ConnectionPath carries the connection in the
// Timeline, and each transfer runs the connection's rounds (TcpConnection::transfer_end_s) on the
// path's capacity. Without one, a transfer is the SoloTransfer function of its start and size.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include "sim/cost_model.h"
#include "sim/link_capacity.h"
#include "sim/tcp/tcp_connection.h"

namespace kvstream::sim {

struct Timeline {
  double arrival_s = 0;
  double next_issue_s = 0;      // when the next chunk request leaves
  double last_submit_s = 0;     // submission time of the previous chunk's GPU job
  double decode_free_s = 0;     // executors' next idle times (equal when they are one executor)
  double prefill_free_s = 0;
  double ready_s = 0;           // KV of every chunk so far is on the GPU
  double quality_tokens = 0;    // sum over chunks so far of quality x tokens
  // The request's connection after the chunks so far (models with a ConnectionPath; else null).
  // Shared and never modified: advancing makes a new one.
  std::shared_ptr<const TcpConnection> connection;
};

// Arrival time of `bits` whose transfer starts at start_s on an otherwise idle link.
using SoloTransfer = std::function<double(double start_s, double bits, size_t chunk)>;

// A path through which every transfer runs a TCP connection's rounds: the connection's model and
// the capacity its rounds read.
struct ConnectionPath {
  TcpModel tcp;
  std::shared_ptr<const LinkCapacity> capacity;
};

class TimelineModel {
 public:
  // `transfer`: a chunk's transfer without a connection; with `path`, the Timelines carry one and
  // `transfer` stays what transfer_end_s answers (the capacity alone: no TCP transfer ends before it).
  TimelineModel(const CostModel& costs, const SimConfig& config, SoloTransfer transfer,
                std::optional<ConnectionPath> path = std::nullopt)
      : costs_(costs), config_(config), transfer_(std::move(transfer)), path_(std::move(path)) {}

  const CostModel& costs() const { return costs_; }
  const SimConfig& config() const { return config_; }
  Timeline start(double arrival_s) const;
  // The timeline after chunk `chunk` is sent with `choice` (a level index or kText).
  Timeline advance(const Timeline& state, size_t chunk, int choice) const;
  // The same, with the chunk's arrival time given (the streamer's own view of a request).
  Timeline advance_arrived(const Timeline& state, size_t chunk, int choice, double arrive_s) const;
  // When the transfer of chunk `chunk` as `choice` that follows `state` arrives.
  double arrival_s(const Timeline& state, size_t chunk, int choice) const { return transfer(state, chunk, choice).first; }
  // Time of the first output token once every chunk has been advanced through.
  double first_token_s(const Timeline& state) const;
  // Arrival time of `bits` of chunk `chunk` whose transfer starts at start_s, alone on the link
  // (without a connection: a lower bound of the connection's transfer).
  double transfer_end_s(double start_s, double bits, size_t chunk) const { return transfer_(start_s, bits, chunk); }
  const std::optional<ConnectionPath>& path() const { return path_; }

 private:
  // The arrival of the chunk's transfer, and the connection after it (null without one).
  std::pair<double, std::shared_ptr<const TcpConnection>> transfer(const Timeline& state, size_t chunk, int choice) const;

  const CostModel& costs_;
  const SimConfig& config_;
  SoloTransfer transfer_;
  std::optional<ConnectionPath> path_;
};

// The exact single-request model on the true trace under config's link model (the simulator's
// transfers for a request alone; under tcp, through the request's connection): what oracle policies
// plan on. Keeps references to `costs`, `config` and `trace`.
TimelineModel true_trace_model(const CostModel& costs, const SimConfig& config, const traces::BandwidthTrace& trace);

}  // namespace kvstream::sim
