// Fuzzes the bandwidth-trace readers (traces/trace_readers.h): every format through read_traces on
// the input as a file, then the exact queries the simulator asks of each trace it returns.
// Input: one selector byte, then the file. Selector % 6: 0 sniffs the format, 1..5 force mahimahi,
// pensieve, lumos5g, cachegen (JSONL) or csv.
// A finding: anything but traces or a documented rejection (fuzz_support.h), or a trace that a
// query rejects (a reader must only return traces every query accepts), or a hang (-timeout).
#include <array>
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_support.h"
#include "traces/trace_readers.h"

namespace {

constexpr std::array<const char*, 6> kFormats = {"auto", "mahimahi", "pensieve", "lumos5g", "cachegen", "csv"};

// The queries of sim/ on one trace: a period, a mean, capacities and integrals inside and across it.
void query(const kvstream::traces::BandwidthTrace& trace) {
  const double period = trace.duration_s();
  (void)trace.mean_bps();
  (void)trace.capacity_bps(period / 2);
  (void)trace.next_change_s(period / 3);
  const double bits = trace.bits_between(0, 2.5 * period);
  (void)trace.arrival_s(period / 2, bits / 2);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const auto format = kvstream::traces::parse_trace_format(kFormats[data[0] % kFormats.size()]);
  const auto& path = kvstream::fuzz::write_input_file("traces", data + 1, size - 1);
  std::vector<kvstream::traces::BandwidthTrace> traces;
  kvstream::fuzz::expect_clean_rejection([&] { traces = kvstream::traces::read_traces(path.string(), format); });
  for (const auto& trace : traces) {
    try {
      query(trace);
    } catch (const std::exception& e) {
      kvstream::fuzz::report_finding(std::string("a trace the reader returned fails a query: ") + e.what());
    }
  }
  return 0;
}
