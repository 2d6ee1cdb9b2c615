// `kvstream simulate`: streaming contexts over a bandwidth trace with adaptation policies (sim/README.md).
#include "cli/command.h"
#include "cli/streaming_flags.h"
#include "sim/policy.h"

namespace kvstream::cli {
namespace {

std::optional<StreamingOptions> parse(const std::vector<std::string>& args) {
  StreamingOptions o;
  StreamingFlags flags(o);
  po::variables_map vm;
  if (!parse_or_help(args,
                     "usage: kvstream simulate --profile P.json [P2.json ...] --trace T [--trace-format F] [--scale X]\n"
                     "                         --policy NAME [NAME ...] --slo S [--hardware H.json] [options] [--json]\n\n"
                     "Streams each request's context chunk by chunk over a link whose capacity follows the trace;\n"
                     "before each chunk the policy picks a level of the profile or text (recompute); arrived chunks\n"
                     "are decoded while later ones are in flight; TTFT ends with the query's prefill.\n"
                     "Per request: ttft_s, slo_met, breakdown (busy seconds of transfer, decode, recompute,\n"
                     "query_prefill; queueing), bytes, quality (token-weighted profile quality, text = 1), choices.\n"
                     "--profile synthetic: a Mistral-7B-shaped 10 x 1500-token context at the codec's measured\n"
                     "ratios and stories260K's measured quality, with an assumed 2 GB/s decoder (sim/context_profile.h).\n\n" +
                         sim::policy_list_help(),
                     flags.description(), vm))
    return std::nullopt;
  flags.finish(vm);
  return o;
}

int run(const StreamingOptions& o) {
  sim::SimulationInputs in = load_streaming_inputs(o);
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& policy : o.policies) {
    in.policy = policy;
    report_policy(o, policy, sim::simulate(in), runs);
  }
  if (o.json) print_json(in, runs);
  return 0;
}

}  // namespace

int simulate_main(const std::vector<std::string>& args) { return parse_and_run<StreamingOptions>(args, parse, run); }

}  // namespace kvstream::cli
