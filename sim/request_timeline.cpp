#include "sim/request_timeline.h"

#include <algorithm>

namespace kvstream::sim {

Timeline TimelineModel::start(double arrival_s) const {
  const double first_issue_s = arrival_s + config_.request_rtt_s;
  return {arrival_s, first_issue_s, arrival_s, arrival_s, arrival_s, arrival_s, 0};
}

Timeline TimelineModel::advance_arrived(const Timeline& state, size_t chunk, int choice, double arrive_s) const {
  Timeline next = state;
  double submit_s = std::max(arrive_s, state.last_submit_s);
  if (choice == kText) submit_s = std::max(submit_s, state.ready_s);
  double& executor_free_s = (choice == kText || !config_.overlap_decode_prefill) ? next.prefill_free_s : next.decode_free_s;
  const double end_s = std::max(submit_s, executor_free_s) + costs_.gpu_s(chunk, choice);
  executor_free_s = end_s;
  if (!config_.overlap_decode_prefill) next.decode_free_s = next.prefill_free_s = end_s;
  next.last_submit_s = submit_s;
  next.ready_s = std::max(state.ready_s, end_s);
  next.next_issue_s = config_.pipelining ? arrive_s : next.ready_s;
  next.quality_tokens += costs_.quality(chunk, choice) * costs_.tokens(chunk);
  return next;
}

double TimelineModel::first_token_s(const Timeline& state) const {
  return std::max(state.ready_s, state.prefill_free_s) + costs_.query_prefill_s();
}

}  // namespace kvstream::sim
