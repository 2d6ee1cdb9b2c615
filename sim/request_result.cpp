#include "sim/request_result.h"

namespace kvstream::sim {

nlohmann::json to_json(const RequestResult& r) {
  nlohmann::json ttft = r.completed ? nlohmann::json(r.ttft_s) : nlohmann::json(nullptr);
  return {{"request", r.request},
          {"context", r.context},
          {"arrival_s", r.arrival_s},
          {"completed", r.completed},
          {"ttft_s", ttft},
          {"slo_met", r.slo_met},
          {"breakdown",
           {{"transfer_s", r.transfer_s},
            {"decode_s", r.decode_s},
            {"recompute_s", r.recompute_s},
            {"query_prefill_s", r.query_prefill_s},
            {"queueing_s", r.queueing_s}}},
          {"bytes", r.bytes},
          {"quality", r.quality},
          {"choices", r.choices},
          {"chunk_transfer_s", r.chunk_transfer_s}};
}

}  // namespace kvstream::sim
