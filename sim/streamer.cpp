#include "sim/streamer.h"

#include <limits>

namespace kvstream::sim {

RequestStreamer::RequestStreamer(Resources resources, const TimelineModel& model, std::unique_ptr<Policy> policy,
                                 size_t request_id, double arrival_s, const Done& on_done)
    : resources_(resources),
      model_(model),
      costs_(model.costs()),
      config_(model.config()),
      policy_(std::move(policy)),
      on_done_(on_done),
      timeline_(model.start(arrival_s)),
      arrived_(model.costs().chunks(), 0),
      issue_s_(model.costs().chunks()),
      data_start_s_(model.costs().chunks()),
      submit_s_(model.costs().chunks()) {
  result_.request = request_id;
  result_.context = costs_.profile().name;
  result_.arrival_s = arrival_s;
  result_.ttft_s = std::numeric_limits<double>::infinity();
  const size_t chunks = costs_.chunks();
  choices_.reserve(chunks);
  history_.reserve(chunks);
  result_.choices.reserve(chunks);
  result_.chunk_transfer_s.reserve(chunks);
}

void RequestStreamer::start() {
  resources_.events.schedule(timeline_.next_issue_s, [this] { issue(0); });
}

void RequestStreamer::issue(size_t chunk) {
  const double now_s = resources_.events.now_s();
  timeline_.next_issue_s = now_s;
  const DecisionContext context{costs_, config_, chunk, now_s, result_.arrival_s, history_, timeline_, model_};
  const int choice = policy_->choose(context);
  choices_.push_back(choice);
  result_.choices.push_back(costs_.choice_name(choice));
  result_.bytes += costs_.bits(chunk, choice) / 8;
  issue_s_[chunk] = now_s;
  if (config_.chunk_rtt_s > 0)
    resources_.events.schedule(now_s + config_.chunk_rtt_s, [this, chunk] { send(chunk); });
  else
    send(chunk);
}

void RequestStreamer::send(size_t chunk) {
  data_start_s_[chunk] = resources_.events.now_s();
  resources_.link.send(costs_.bits(chunk, choices_[chunk]), chunk, choices_[chunk], [this, chunk] { on_arrived(chunk); });
}

void RequestStreamer::on_arrived(size_t chunk) {
  const double now_s = resources_.events.now_s();
  arrived_[chunk] = 1;
  result_.chunk_transfer_s.push_back(now_s - issue_s_[chunk]);
  result_.transfer_s += result_.chunk_transfer_s.back();
  // A throughput sample: a KV chunk's bits from when they started to flow (as the sender sees them
  // arrive) to the last. A text chunk's few bytes time the round trip, not the bandwidth (measured in
  // the emulator: a 600-byte sample on an LTE trace read as 0.5 Mbit/s, and mpc then recomputed
  // every chunk left).
  const double first_bit_s = resources_.link.first_bit_s(chunk);
  const double start_s = first_bit_s >= 0 ? first_bit_s : data_start_s_[chunk];
  if (choices_[chunk] != kText && now_s > start_s) history_.push_back({costs_.bits(chunk, choices_[chunk]), start_s, now_s});
  timeline_ = model_.advance_arrived(timeline_, chunk, choices_[chunk], now_s);
  try_submit();
  if (config_.pipelining && chunk + 1 < costs_.chunks()) issue(chunk + 1);
}

// GPU jobs are submitted in chunk order; a text chunk also waits for the KV of every earlier
// chunk (all earlier jobs done), since it is recomputed with that KV as prefix.
void RequestStreamer::try_submit() {
  while (submitted_ < choices_.size() && arrived_[submitted_]) {
    const size_t chunk = submitted_;
    const int choice = choices_[chunk];
    if (choice == kText && done_ < chunk) return;
    Executor& executor = choice == kText ? resources_.prefill : resources_.decode;
    submit_s_[chunk] = resources_.events.now_s();
    ++submitted_;
    const GpuJob job{choice == kText ? GpuJob::Kind::kRecompute : GpuJob::Kind::kDecode, result_.request, chunk, choice,
                     costs_.gpu_s(chunk, choice)};
    executor.submit(job, [this, chunk](double start_s) { on_job_done(chunk, start_s); });
  }
}

void RequestStreamer::on_job_done(size_t chunk, double start_s) {
  const double run_s = resources_.events.now_s() - start_s;
  (choices_[chunk] == kText ? result_.recompute_s : result_.decode_s) += run_s;
  result_.queueing_s += start_s - submit_s_[chunk];
  ++done_;
  if (done_ == costs_.chunks()) {
    const double query_submit_s = resources_.events.now_s();
    const GpuJob query{GpuJob::Kind::kQueryPrefill, result_.request, 0, 0, costs_.query_prefill_s()};
    resources_.prefill.submit(query, [this, query_submit_s](double query_start_s) {
      result_.queueing_s += query_start_s - query_submit_s;
      result_.query_prefill_s = resources_.events.now_s() - query_start_s;
      on_first_token();
    });
    return;
  }
  try_submit();
  if (!config_.pipelining && done_ == choices_.size()) issue(choices_.size());
}

void RequestStreamer::on_first_token() {
  result_.completed = true;
  result_.ttft_s = resources_.events.now_s() - result_.arrival_s;
  result_.slo_met = result_.ttft_s <= config_.slo_s;
  double quality_tokens = 0, tokens = 0;
  for (size_t c = 0; c < choices_.size(); ++c) {
    quality_tokens += costs_.quality(c, choices_[c]) * costs_.tokens(c);
    tokens += costs_.tokens(c);
  }
  result_.quality = quality_tokens / tokens;
  on_done_(result_.request);
}

}  // namespace kvstream::sim
