// What the simulator reports per request (sim/README.md: per-request output).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/json_reader.h"

namespace kvstream::sim {

struct RequestResult {
  size_t request = 0;
  std::string context;          // profile name
  double arrival_s = 0;
  bool completed = false;       // false when the link never delivered (a trace without capacity)
  double ttft_s = 0;            // arrival -> first output token; +infinity when not completed
  bool slo_met = false;         // completed and ttft_s <= SLO
  // Breakdown. Busy times of each kind of work: with pipelining they overlap, so they need not sum
  // to TTFT. transfer_s counts every chunk from its request (incl. RTT) to its last bit.
  double transfer_s = 0, decode_s = 0, recompute_s = 0, query_prefill_s = 0;
  double queueing_s = 0;        // GPU jobs waiting for a busy executor
  double bytes = 0;             // on the wire
  double quality = 0;           // token-weighted profile quality of the chosen levels (text = 1)
  std::vector<std::string> choices;  // per chunk: level name or "text"
  std::vector<double> chunk_transfer_s;  // per chunk: its request to its last bit (the chunk's share of transfer_s)
};

nlohmann::json to_json(const RequestResult& result);
// The inverse of to_json, with errors naming the JSON path (common::JsonError).
RequestResult request_result_from_json(const common::JsonNode& node);

}  // namespace kvstream::sim
