// Trace arguments (command line, configs, benchmarks): a generator spec, FILE#k, a file (all its traces), a directory
// (every file below it) or a glob pattern (*, ?, [...]; every match), files looked up through the data resolver.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "traces/bandwidth_trace.h"
#include "traces/trace_readers.h"

namespace kvstream::traces {

struct NamedTrace {
  traces::BandwidthTrace trace;
  std::string format;  // the format it was read in, or "generator"
};

// Appends the traces `arg` stands for; `format` nullopt sniffs each file.
void collect_traces(const std::string& arg, std::optional<traces::TraceFormat> format, std::vector<NamedTrace>& out);
// Exactly one trace (a file holding several needs FILE#k); `format_name` as for --format.
traces::BandwidthTrace load_one_trace(const std::string& arg, const std::string& format_name);

}  // namespace kvstream::traces
