#include "traces/trace_readers.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string_view>

#include "common/file_text.h"
#include "common/json_reader.h"

namespace kvstream::traces {
namespace {

constexpr double kBitsPerMahimahiPacket = 1500 * 8;  // one MTU-sized packet per delivery opportunity

// One non-blank line of a file: its 1-based number and its text without surrounding whitespace.
struct Line {
  size_t number = 0;
  std::string_view text;
};

// A trace file's content and its non-blank lines (views into `content`).
struct TraceFile {
  std::string path;
  std::string content;
  std::vector<Line> lines;

  [[noreturn]] void fail(const Line& line, const std::string& what) const {
    throw TraceError(path + ":" + std::to_string(line.number) + ": " + what);
  }
};

std::string_view trim(std::string_view text) {
  const auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

// Reads `path`; TraceError when it is missing, not a regular file, unreadable or has no non-blank line.
TraceFile load(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw TraceError("trace file '" + path + "' not found");
  if (!std::filesystem::is_regular_file(path, ec)) throw TraceError("trace file '" + path + "' is not a regular file");
  auto content = common::read_file_if_open(path);
  if (!content) throw TraceError("cannot open trace file '" + path + "'");
  TraceFile file{path, std::move(*content), {}};
  std::string_view rest = file.content;
  for (size_t number = 1; !rest.empty(); ++number) {
    const size_t end = rest.find('\n');
    const std::string_view text = trim(rest.substr(0, end));
    if (!text.empty()) file.lines.push_back({number, text});
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
  }
  if (file.lines.empty()) throw TraceError("trace file '" + path + "' is empty");
  return file;
}

// `text` in quotes for an error message, shortened when long.
std::string quoted(std::string_view text) {
  constexpr size_t kMax = 60;
  std::string result(1, '\'');
  result.append(text.substr(0, kMax));
  result.append(text.size() > kMax ? "...'" : "'");
  return result;
}

std::vector<std::string_view> split_whitespace(std::string_view text) {
  std::vector<std::string_view> fields;
  const auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && space(text[i])) ++i;
    const size_t begin = i;
    while (i < text.size() && !space(text[i])) ++i;
    if (i > begin) fields.push_back(text.substr(begin, i - begin));
  }
  return fields;
}

std::vector<std::string_view> split_commas(std::string_view text) {
  std::vector<std::string_view> fields;
  for (size_t begin = 0;;) {
    const size_t comma = text.find(',', begin);
    fields.push_back(trim(text.substr(begin, comma - begin)));
    if (comma == std::string_view::npos) return fields;
    begin = comma + 1;
  }
}

// The whole field as a finite number, else nullopt.
std::optional<double> parse_number(std::string_view field) {
  double value = 0;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (ec != std::errc() || end != field.data() + field.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

// The whole field as a non-negative decimal integer, else nullopt.
std::optional<uint64_t> parse_integer(std::string_view field) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (ec != std::errc() || end != field.data() + field.size() || field.empty()) return std::nullopt;
  return value;
}

std::string file_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

BandwidthTrace read_mahimahi(const TraceFile& file) {
  std::vector<uint64_t> stamps_ms;
  stamps_ms.reserve(file.lines.size());
  for (const Line& line : file.lines) {
    const auto value = parse_integer(line.text);
    if (!value)
      file.fail(line, "expected one non-negative integer (a millisecond timestamp), found " + quoted(line.text));
    if (!stamps_ms.empty() && *value < stamps_ms.back())
      file.fail(line, "expected timestamps in non-decreasing order, found " + std::to_string(*value) + " after " +
                          std::to_string(stamps_ms.back()));
    stamps_ms.push_back(*value);
  }
  const uint64_t period_ms = stamps_ms.back();
  if (period_ms == 0) file.fail(file.lines.back(), "expected a last timestamp > 0 (the loop period), found 0");

  // Packets per millisecond that has any, in time order; packets stamped with the period wrap to bin 0.
  std::vector<std::pair<uint64_t, uint64_t>> bins;  // (ms, packets)
  uint64_t wrapped = 0;
  for (const uint64_t ms : stamps_ms) {
    if (ms == period_ms)
      ++wrapped;
    else if (!bins.empty() && bins.back().first == ms)
      ++bins.back().second;
    else
      bins.emplace_back(ms, 1);
  }
  if (wrapped > 0) {
    if (bins.empty() || bins.front().first != 0) bins.insert(bins.begin(), {0, 0});
    bins.front().second += wrapped;
  }
  // Runs of equal-capacity milliseconds covering [0, period): (length in ms, packets per ms).
  std::vector<std::pair<uint64_t, uint64_t>> runs;
  const auto append = [&runs](uint64_t length_ms, uint64_t packets) {
    if (!runs.empty() && runs.back().second == packets)
      runs.back().first += length_ms;
    else
      runs.emplace_back(length_ms, packets);
  };
  uint64_t covered_ms = 0;  // bins [0, covered_ms) are in `runs`
  for (const auto& [ms, packets] : bins) {
    if (ms > covered_ms) append(ms - covered_ms, 0);
    append(1, packets);
    covered_ms = ms + 1;
  }
  if (period_ms > covered_ms) append(period_ms - covered_ms, 0);

  std::vector<TraceSegment> segments;
  segments.reserve(runs.size());
  for (const auto& [length_ms, packets] : runs)
    segments.push_back({double(length_ms) / 1000.0, double(packets) * kBitsPerMahimahiPacket * 1000.0});  // per 1 ms
  return BandwidthTrace(std::move(segments), file_name(file.path));
}

// Pensieve, Lumos5G and CSV: (time_s, Mbps) samples, each held until the next; the last one for
// the interval before it. `csv` selects comma-separated fields and the optional header.
BandwidthTrace read_samples(const TraceFile& file, bool csv) {
  std::vector<double> times_s, mbps;
  for (size_t i = 0; i < file.lines.size(); ++i) {
    const Line& line = file.lines[i];
    const auto fields = csv ? split_commas(line.text) : split_whitespace(line.text);
    if (csv && i == 0 && fields.size() == 2 && fields[0] == "time_s" && fields[1] == "mbps") continue;
    const std::string shape = csv ? "'time_s,mbps'" : "'time_s Mbps' (whitespace-separated)";
    if (fields.size() != 2)
      file.fail(line, "expected 2 fields " + shape + ", found " + std::to_string(fields.size()) + ": " + quoted(line.text));
    const auto t = parse_number(fields[0]);
    const auto rate = parse_number(fields[1]);
    if (!t) file.fail(line, "expected a time in seconds, found " + quoted(fields[0]));
    if (!rate) file.fail(line, "expected a throughput in Mbps, found " + quoted(fields[1]));
    if (*t < 0) file.fail(line, "expected a time >= 0, found " + quoted(fields[0]));
    if (*rate < 0) file.fail(line, "expected a throughput >= 0 Mbps, found " + quoted(fields[1]));
    if (!times_s.empty() && !(*t > times_s.back()))
      file.fail(line, "expected strictly increasing times, found " + quoted(fields[0]) + " after " +
                          std::to_string(times_s.back()));
    times_s.push_back(*t);
    mbps.push_back(*rate);
  }
  if (times_s.size() < 2)
    file.fail(file.lines.back(), "expected at least 2 samples (the last one lasts as long as the interval before it), found " +
                                     std::to_string(times_s.size()));
  std::vector<TraceSegment> segments(times_s.size());
  for (size_t i = 0; i < times_s.size(); ++i) {
    const size_t next = i + 1 < times_s.size() ? i + 1 : i;
    segments[i] = {times_s[next] - times_s[next - 1], mbps[i] * 1e6};
  }
  return BandwidthTrace(std::move(segments), file_name(file.path));
}

std::vector<BandwidthTrace> read_cachegen(const TraceFile& file) {
  std::vector<BandwidthTrace> traces;
  for (const Line& line : file.lines) {
    nlohmann::json object;
    try {
      object = common::parse_json(line.text, "bad JSON");
    } catch (const common::JsonError& e) {
      file.fail(line, std::string("expected a JSON object {\"bw\": [Gbps, ...]}, found ") + e.what());
    }
    if (!object.is_object()) file.fail(line, "expected a JSON object {\"bw\": [Gbps, ...]}, found " + quoted(line.text));
    const auto bw = object.find("bw");
    if (bw == object.end()) file.fail(line, "expected a key \"bw\", found none in " + quoted(line.text));
    if (!bw->is_array() || bw->empty()) file.fail(line, "expected \"bw\" to be a non-empty array of Gbps, found " + bw->dump());
    std::vector<TraceSegment> segments;
    for (size_t c = 0; c < bw->size(); ++c) {
      const nlohmann::json& value = (*bw)[c];
      if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0)
        file.fail(line, "expected \"bw\"[" + std::to_string(c) + "] to be a number of Gbps >= 0, found " + value.dump());
      segments.push_back({1.0, value.get<double>() * 1e9});
    }
    traces.emplace_back(std::move(segments), file_name(file.path) + "#" + std::to_string(traces.size()), true);
  }
  return traces;
}

TraceFormat sniff(const TraceFile& file) {
  const Line& first = file.lines.front();
  if (first.text.front() == '{') return TraceFormat::cachegen_jsonl;
  if (parse_integer(first.text)) return TraceFormat::mahimahi;
  if (first.text.find(',') != std::string_view::npos) return TraceFormat::csv;
  if (split_whitespace(first.text).size() == 2) return TraceFormat::pensieve;
  file.fail(first, "cannot tell the trace format: expected '{' (cachegen), one integer (mahimahi), 'time_s,mbps' (csv) "
                   "or 'time_s Mbps' (pensieve), found " + quoted(first.text) + "; give the format explicitly");
}

}  // namespace

std::optional<TraceFormat> parse_trace_format(const std::string& name) {
  if (name == "auto") return std::nullopt;
  if (name == "mahimahi") return TraceFormat::mahimahi;
  if (name == "pensieve" || name == "fcc" || name == "norway") return TraceFormat::pensieve;
  if (name == "lumos5g") return TraceFormat::lumos5g;
  if (name == "cachegen") return TraceFormat::cachegen_jsonl;
  if (name == "csv") return TraceFormat::csv;
  throw TraceError("unknown trace format '" + name + "'; expected auto, mahimahi, pensieve (fcc, norway), lumos5g, cachegen or csv");
}

std::string format_name(TraceFormat format) {
  switch (format) {
    case TraceFormat::mahimahi: return "mahimahi";
    case TraceFormat::pensieve: return "pensieve";
    case TraceFormat::lumos5g: return "lumos5g";
    case TraceFormat::cachegen_jsonl: return "cachegen";
    case TraceFormat::csv: return "csv";
  }
  throw std::logic_error("unhandled TraceFormat");
}

TraceFormat sniff_trace_format(const std::string& path) { return sniff(load(path)); }

std::vector<BandwidthTrace> read_traces(const std::string& path, std::optional<TraceFormat> format) {
  const TraceFile file = load(path);
  switch (format ? *format : sniff(file)) {
    case TraceFormat::mahimahi: return {read_mahimahi(file)};
    case TraceFormat::pensieve:
    case TraceFormat::lumos5g: return {read_samples(file, false)};
    case TraceFormat::csv: return {read_samples(file, true)};
    case TraceFormat::cachegen_jsonl: return read_cachegen(file);
  }
  throw std::logic_error("unhandled TraceFormat");
}

BandwidthTrace read_trace(const std::string& spec, std::optional<TraceFormat> format) {
  std::string path = spec;
  std::optional<size_t> index;
  std::error_code ec;
  const size_t hash = spec.rfind('#');
  if (!std::filesystem::exists(spec, ec) && hash != std::string::npos) {
    const auto k = parse_integer(std::string_view(spec).substr(hash + 1));
    if (!k) throw TraceError("trace '" + spec + "': expected path#k with k a trace index, found '#" + spec.substr(hash + 1) + "'");
    path = spec.substr(0, hash);
    index = size_t(*k);
  }
  std::vector<BandwidthTrace> traces = read_traces(path, format);
  const std::string count = std::to_string(traces.size()) + " trace" + (traces.size() == 1 ? "" : "s");
  if (!index) {
    if (traces.size() != 1)
      throw TraceError("trace file '" + path + "' holds " + count + "; select one with " + path + "#k, k = 0.." +
                       std::to_string(traces.size() - 1));
    return std::move(traces.front());
  }
  if (*index >= traces.size())
    throw TraceError("trace '" + spec + "': index " + std::to_string(*index) + " out of range, the file holds " + count);
  return std::move(traces[*index]);
}

}  // namespace kvstream::traces
