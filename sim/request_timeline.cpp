#include "sim/request_timeline.h"

#include <algorithm>
#include <cmath>

#include "sim/link.h"

namespace kvstream::sim {

Timeline TimelineModel::start(double arrival_s) const {
  const double first_issue_s = arrival_s + config_.request_rtt_s;
  Timeline state{arrival_s, first_issue_s, arrival_s, arrival_s, arrival_s, arrival_s, 0, nullptr};
  if (path_) state.connection = std::make_shared<const TcpConnection>(path_->tcp);
  return state;
}

std::pair<double, std::shared_ptr<const TcpConnection>> TimelineModel::transfer(const Timeline& state, size_t chunk,
                                                                                 int choice) const {
  const double start_s = state.next_issue_s + config_.chunk_rtt_s;
  const double bits = costs_.bits(chunk, choice);
  // A stalled timeline (a transfer that never ended) stays stalled: no round starts at +infinity.
  if (!path_ || !state.connection || std::isinf(start_s)) return {transfer_end_s(start_s, bits, chunk), nullptr};
  auto connection = std::make_shared<TcpConnection>(*state.connection);
  const double arrive_s = connection->transfer_end_s(start_s, bits, *path_->capacity);
  return {arrive_s, std::move(connection)};
}

Timeline TimelineModel::advance(const Timeline& state, size_t chunk, int choice) const {
  auto [arrive_s, connection] = transfer(state, chunk, choice);
  Timeline next = advance_arrived(state, chunk, choice, arrive_s);
  if (connection) next.connection = std::move(connection);
  return next;
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

TimelineModel true_trace_model(const CostModel& costs, const SimConfig& config, const traces::BandwidthTrace& trace) {
  const double offset_s = link_trace_offset_s(config);
  auto solo = [&trace, offset_s](double start_s, double bits, size_t chunk) {
    return solo_transfer_end_s(trace, offset_s, start_s, bits, chunk);
  };
  std::optional<ConnectionPath> path;
  if (config.link_model == LinkModel::kTcp)
    path = ConnectionPath{config.tcp, std::make_shared<TraceCapacity>(trace, offset_s)};
  return TimelineModel(costs, config, solo, path);
}

}  // namespace kvstream::sim
