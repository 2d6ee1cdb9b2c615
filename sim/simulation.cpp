#include "sim/simulation.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <numeric>
#include <stdexcept>

#include "sim/link.h"
#include "sim/streamer.h"
#include "sim/tcp/tcp_connection_link.h"

namespace kvstream::sim {

namespace {
void check(const SimulationInputs& in) {
  const auto& c = in.config;
  if (!(c.slo_s > 0)) throw std::invalid_argument("SLO must be > 0 s, got " + std::to_string(c.slo_s));
  if (c.request_rtt_s < 0 || c.chunk_rtt_s < 0) throw std::invalid_argument("RTTs must be >= 0 s");
  if (c.trace_offset_s < 0) throw std::invalid_argument("trace offset must be >= 0 s");
  if (c.query_tokens < 0) throw std::invalid_argument("query tokens must be >= 0");
  if (c.fixed_recompute_s && *c.fixed_recompute_s < 0) throw std::invalid_argument("fixed recompute time must be >= 0 s");
  if (!in.trace) throw std::invalid_argument("no bandwidth trace to simulate");
  if (in.contexts.empty()) throw std::invalid_argument("no context profiles to simulate");
  for (const auto& request : in.requests) {
    if (!(request.arrival_s >= 0) || std::isinf(request.arrival_s))
      throw std::invalid_argument("request arrival times must be finite and >= 0 s, got " +
                                  std::to_string(request.arrival_s));
    if (request.context >= in.contexts.size())
      throw std::invalid_argument("a request names context " + std::to_string(request.context) + " of " +
                                  std::to_string(in.contexts.size()));
  }
  if (in.trace->chunk_indexed() && in.requests.size() > 1)
    throw std::invalid_argument("trace \"" + in.trace->name() +
                                "\" is chunk-indexed (one rate per chunk): it supports single-request workloads only");
}
// stream_requests without its check of the inputs (simulate has made it).
std::vector<RequestResult> stream_checked(const SimulationInputs& in, EventQueue& events, const LinkForRequest& link_for,
                                          JobRunner* runner = nullptr);
}  // namespace

std::vector<RequestResult> simulate(const SimulationInputs& in, SimulationStats* stats) {
  check(in);
  EventQueue events;
  std::vector<RequestResult> results;
  if (in.config.link_model == LinkModel::kFluid) {
    std::unique_ptr<Link> link;
    if (in.trace->chunk_indexed())
      link = std::make_unique<ChunkIndexedLink>(events, *in.trace);
    else
      link = std::make_unique<SharedLink>(events, *in.trace, in.config.trace_offset_s);
    results = stream_checked(in, events, [&link](size_t) -> Link& { return *link; });
  } else {  // a modelled TCP connection per request over the shared fluid link
    if (in.trace->chunk_indexed())
      throw std::invalid_argument("the tcp link model needs capacity over time; trace \"" + in.trace->name() +
                                  "\" is chunk-indexed");
    const double link_offset_s = link_trace_offset_s(in.config);
    SharedLink link(events, *in.trace, link_offset_s);
    std::vector<std::unique_ptr<TcpConnectionLink>> connections(in.requests.size());
    results = stream_checked(in, events, [&](size_t r) -> Link& {
      connections[r] = std::make_unique<TcpConnectionLink>(events, link, in.config.tcp, *in.trace, link_offset_s);
      return *connections[r];
    });
  }
  if (stats) stats->events = events.events_run();
  return results;
}

std::vector<RequestResult> stream_requests(const SimulationInputs& in, EventQueue& events, const LinkForRequest& link_for,
                                           JobRunner* runner) {
  check(in);
  return stream_checked(in, events, link_for, runner);
}

namespace {

std::vector<RequestResult> stream_checked(const SimulationInputs& in, EventQueue& events, const LinkForRequest& link_for,
                                          JobRunner* runner) {
  Executor decode(events, runner), prefill(events, runner);
  Executor& decode_executor = in.config.overlap_decode_prefill ? decode : prefill;

  // Per context: its costs and its exact single-request model on the true trace.
  std::vector<std::unique_ptr<CostModel>> costs;
  std::vector<std::unique_ptr<TimelineModel>> models;
  for (const auto& profile : in.contexts) {
    costs.push_back(std::make_unique<CostModel>(profile, in.config, in.hardware));
    models.push_back(std::make_unique<TimelineModel>(true_trace_model(*costs.back(), in.config, *in.trace)));
  }

  for (const auto& profile : in.contexts) make_policy(in.policy, profile);  // bad specs fail before any event

  // A streamer lives from its request's arrival to its first token; finished ones are freed at the
  // next arrival, so memory follows the requests in flight, not the workload's length.
  std::vector<RequestResult> results(in.requests.size());
  std::vector<std::unique_ptr<RequestStreamer>> streamers(in.requests.size());
  std::vector<size_t> finished;
  const RequestStreamer::Done on_done = [&](size_t r) {
    results[r] = streamers[r]->result();
    finished.push_back(r);
  };
  // Requests start in arrival order (ties: list order), each arrival scheduling the next, so the
  // event queue holds one pending arrival instead of all of them.
  std::vector<size_t> order(in.requests.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return in.requests[a].arrival_s < in.requests[b].arrival_s; });
  std::function<void(size_t)> arrive = [&](size_t k) {
    for (size_t r : finished) streamers[r].reset();
    finished.clear();
    const size_t r = order[k];
    const auto& request = in.requests[r];
    streamers[r] = std::make_unique<RequestStreamer>(Resources{events, link_for(r), decode_executor, prefill},
                                                     *models[request.context],
                                                     make_policy(in.policy, in.contexts[request.context]), r,
                                                     request.arrival_s, on_done);
    streamers[r]->start();
    if (k + 1 < order.size()) events.schedule(in.requests[order[k + 1]].arrival_s, [&arrive, k] { arrive(k + 1); });
  };
  if (!order.empty()) events.schedule(in.requests[order.front()].arrival_s, [&arrive] { arrive(0); });
  events.run();

  for (const auto& streamer : streamers)  // requests that never completed (a trace without capacity)
    if (streamer && !streamer->result().completed) results[streamer->result().request] = streamer->result();
  return results;
}

}  // namespace

}  // namespace kvstream::sim
