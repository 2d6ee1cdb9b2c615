// The streamer of one request (docs/CACHEGEN.md §11.1): chunks in order, a policy decision before each,
// transfers over the link, decode or recompute on the executors, then the query prefill. Its
// semantics are those written out in request_timeline.h.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "sim/executor.h"
#include "sim/link.h"
#include "sim/policy.h"
#include "sim/request_result.h"

namespace kvstream::sim {

struct Resources {
  EventQueue& events;
  Link& link;
  Executor& decode;   // the same object as prefill when decode and prefill do not overlap
  Executor& prefill;
};

class RequestStreamer {
 public:
  using Done = std::function<void(size_t request_id)>;

  // `model` is the context's exact single-request model (the oracle's view; the streamer also uses
  // it for its own timeline bookkeeping). `on_done` (which must outlive the streamer) runs once the
  // first token is out and result() is final.
  RequestStreamer(Resources resources, const TimelineModel& model, std::unique_ptr<Policy> policy, size_t request_id,
                  double arrival_s, const Done& on_done);
  void start();  // schedules the request's first chunk request
  const RequestResult& result() const { return result_; }

 private:
  void issue(size_t chunk);
  void send(size_t chunk);
  void on_arrived(size_t chunk);
  void try_submit();
  void on_job_done(size_t chunk, double start_s);
  void on_first_token();

  Resources resources_;
  const TimelineModel& model_;
  const CostModel& costs_;
  const SimConfig& config_;
  std::unique_ptr<Policy> policy_;
  const Done& on_done_;
  RequestResult result_;
  Timeline timeline_;                  // this request's own view, advanced as chunks arrive
  std::vector<int> choices_;           // per issued chunk: its size is the number issued
  std::vector<char> arrived_;
  // Per chunk: request time, first byte on the link, GPU job submission (so that event handlers
  // capture only `this` and a chunk index, which std::function stores without allocating).
  std::vector<double> issue_s_, data_start_s_, submit_s_;
  std::vector<TransferSample> history_;
  size_t submitted_ = 0, done_ = 0;
};

}  // namespace kvstream::sim
