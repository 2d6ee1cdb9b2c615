#include "sim/request_result.h"

#include <limits>

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

RequestResult request_result_from_json(const common::JsonNode& node) {
  RequestResult r;
  r.request = size_t(node.at("request").integer_at_least(0));
  r.context = node.at("context").string();
  r.arrival_s = node.at("arrival_s").number_at_least(0);
  r.completed = node.at("completed").boolean();
  r.ttft_s = r.completed ? node.at("ttft_s").number_at_least(0) : std::numeric_limits<double>::infinity();
  r.slo_met = node.at("slo_met").boolean();
  const common::JsonNode breakdown = node.at("breakdown");
  r.transfer_s = breakdown.at("transfer_s").number_at_least(0);
  r.decode_s = breakdown.at("decode_s").number_at_least(0);
  r.recompute_s = breakdown.at("recompute_s").number_at_least(0);
  r.query_prefill_s = breakdown.at("query_prefill_s").number_at_least(0);
  r.queueing_s = breakdown.at("queueing_s").number_at_least(0);
  r.bytes = node.at("bytes").number_at_least(0);
  r.quality = node.at("quality").number();
  const common::JsonNode choices = node.at("choices"), chunk_s = node.at("chunk_transfer_s");
  for (size_t i = 0; i < choices.size(); ++i) r.choices.push_back(choices.at(i).string());
  for (size_t i = 0; i < chunk_s.size(); ++i) r.chunk_transfer_s.push_back(chunk_s.at(i).number_at_least(0));
  return r;
}

}  // namespace kvstream::sim
