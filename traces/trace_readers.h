// Readers for measured bandwidth-trace files (docs/DATA.md §1). Every reader returns
// BandwidthTraces in bit/s; a malformed file is a TraceError whose message starts with
// `file:line:` and says what was expected and what was found.
//
// Formats and how each becomes a piecewise-constant, looping trace:
//  - mahimahi: one integer per line, a millisecond timestamp at which ONE 1500-byte packet may be
//    delivered (a timestamp repeated k times = k packets). Non-decreasing; the last timestamp T > 0
//    is the period, as Mahimahi loops the file there: packets stamped T fall at time 0 of the next
//    period, so they count in millisecond bin 0 (a period then holds exactly #lines packets). Bin k
//    = [k, k+1) ms has capacity packets(k) * 12000 bit / 0.001 s; equal adjacent bins are merged.
//  - pensieve (also "fcc", "norway"), lumos5g: `time_s<whitespace>Mbps` per line, times strictly
//    increasing and >= 0, Mbps >= 0 (1 Mbps = 1e6 bit/s). Sample i holds from t_i until t_{i+1};
//    the last sample lasts as long as the interval before it (so at least two samples are needed).
//    The trace starts at t_0: a first time > 0 (Lumos5G starts at 1.0) is shifted to 0.
//  - csv: `time_s,mbps` per line, read like pensieve; an optional header line `time_s,mbps`.
//  - cachegen_jsonl: one JSON object `{"bw": [Gbps per chunk, ...]}` per non-empty line, each line
//    one chunk-indexed trace (segment c = chunk c, 1 s placeholder, capacity Gbps * 1e9) named
//    "<file name>#<index>", index counting non-empty lines from 0.
// Blank lines are skipped everywhere; a trailing '\r' is ignored.
#pragma once
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "traces/bandwidth_trace.h"

namespace kvstream::traces {

// A trace file could not be read: missing, empty, malformed (message: `file:line: ...`), or an
// unknown format name.
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class TraceFormat { mahimahi, pensieve, lumos5g, cachegen_jsonl, csv };

// "mahimahi", "pensieve" (or "fcc", "norway"), "lumos5g", "cachegen", "csv"; "auto" -> nullopt
// (sniff the file). Anything else is a TraceError listing the names.
std::optional<TraceFormat> parse_trace_format(const std::string& name);
// The canonical name: "mahimahi", "pensieve", "lumos5g", "cachegen", "csv".
std::string format_name(TraceFormat format);

// Guesses the format from the first non-empty line: starts with '{' -> cachegen_jsonl; one
// integer -> mahimahi; contains ',' -> csv; two whitespace-separated fields -> pensieve (Lumos5G
// files have the same shape and read the same). TraceError when the file is missing, empty or
// none of these.
TraceFormat sniff_trace_format(const std::string& path);

// Every trace in the file (several only for cachegen_jsonl); `format` nullopt sniffs it. Single-
// trace files name the trace after the file name.
std::vector<BandwidthTrace> read_traces(const std::string& path, std::optional<TraceFormat> format = std::nullopt);

// One trace. `spec` is a path, or `path#k` for the k-th trace (from 0) of the file; without #k the
// file must hold exactly one trace (else a TraceError saying how many it holds). A path that exists
// as given is never split at '#'.
BandwidthTrace read_trace(const std::string& spec, std::optional<TraceFormat> format = std::nullopt);

}  // namespace kvstream::traces
