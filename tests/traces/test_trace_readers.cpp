// Trace readers: every real file of shared/data/traces (sniffed and explicit), the format
// conventions on small hand-written files, and file:line error messages on malformed input.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "tests/traces/trace_test_support.h"
#include "traces/trace_readers.h"

namespace kvstream::traces {
namespace {

namespace fs = std::filesystem;
using test::TempDirTest;

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

void expect_same(const BandwidthTrace& a, const BandwidthTrace& b) {
  EXPECT_EQ(a.name(), b.name());
  EXPECT_EQ(a.chunk_indexed(), b.chunk_indexed());
  ASSERT_EQ(a.segments().size(), b.segments().size()) << a.name();
  for (size_t k = 0; k < a.segments().size(); ++k) {
    EXPECT_EQ(a.segments()[k].duration_s, b.segments()[k].duration_s) << a.name() << " segment " << k;
    EXPECT_EQ(a.segments()[k].capacity_bps, b.segments()[k].capacity_bps) << a.name() << " segment " << k;
  }
}

// Every file of every folder, read sniffed and with its explicit format, with each folder's
// plausible ranges of period and mean (docs/DATA.md §1).
TEST(TraceReaders, EveryRealTraceFile) {
  const auto root = test::traces_dir();
  if (!root) {
    GTEST_SKIP() << "shared/data/traces not found (run scripts/fetch-data.sh)";
  }
  struct Folder {
    std::string format, sniffed;
    double min_s, max_s, min_mbps, max_mbps;
    size_t traces_per_file;
  };
  const std::map<std::string, Folder> folders = {
      {"mahimahi", {"mahimahi", "mahimahi", 100, 1100, 0.3, 20, 1}},
      {"pensieve_norway3g", {"norway", "pensieve", 60, 320, 0.5, 5, 1}},
      {"pensieve_fcc", {"fcc", "pensieve", 270, 540, 0.4, 4, 1}},
      {"lumos5g_5g", {"lumos5g", "pensieve", 180, 800, 60, 910, 1}},
      {"cachegen", {"cachegen", "cachegen", 10, 10, 100, 10000, 0}},
  };
  size_t files = 0;
  for (const auto& [folder, expect] : folders) {
    for (const fs::path& path : files_in(*root / folder)) {
      SCOPED_TRACE(path.string());
      ++files;
      EXPECT_EQ(format_name(sniff_trace_format(path.string())), expect.sniffed);
      const auto sniffed = read_traces(path.string());
      const auto explicit_format = read_traces(path.string(), parse_trace_format(expect.format));
      ASSERT_EQ(sniffed.size(), explicit_format.size());
      if (expect.traces_per_file) {
        EXPECT_EQ(sniffed.size(), expect.traces_per_file);
      }
      for (size_t i = 0; i < sniffed.size(); ++i) {
        expect_same(sniffed[i], explicit_format[i]);
        const BandwidthTrace& t = sniffed[i];
        EXPECT_EQ(t.chunk_indexed(), folder == "cachegen");
        EXPECT_GE(t.duration_s(), expect.min_s);
        EXPECT_LE(t.duration_s(), expect.max_s);
        EXPECT_GE(t.mean_bps() / 1e6, expect.min_mbps);
        EXPECT_LE(t.mean_bps() / 1e6, expect.max_mbps);
      }
    }
  }
  EXPECT_EQ(files, 5u + 40 + 32 + 61 + 2);  // the subset in shared/data (docs/DATA.md §1)
}

TEST(TraceReaders, MahimahiPeriodHoldsEveryPacket) {
  const auto root = test::traces_dir();
  if (!root) {
    GTEST_SKIP() << "shared/data/traces not found (run scripts/fetch-data.sh)";
  }
  const fs::path path = *root / "mahimahi" / "TMobile-LTE-short.down";
  std::ifstream in(path);
  size_t packets = 0;
  for (std::string line; std::getline(in, line);) packets += !line.empty();
  EXPECT_EQ(packets, 194846u);  // docs/DATA.md §1
  const BandwidthTrace t = read_trace(path.string());
  EXPECT_EQ(t.name(), "TMobile-LTE-short.down");
  EXPECT_DOUBLE_EQ(t.duration_s(), 139.986);  // the last timestamp, in seconds
  EXPECT_NEAR(t.bits_between(0, t.duration_s()), double(packets) * 12000, 1e-9 * double(packets) * 12000);
  EXPECT_NEAR(t.bits_between(5 * t.duration_s(), 8 * t.duration_s()), 3 * double(packets) * 12000, 1e-3);
  EXPECT_NEAR(t.mean_bps() / 1e6, 16.70, 0.01);
}

TEST(TraceReaders, RealFileFirstSamples) {
  const auto root = test::traces_dir();
  if (!root) {
    GTEST_SKIP() << "shared/data/traces not found (run scripts/fetch-data.sh)";
  }
  // norway_bus_1 starts "0.0 4.03768755221", "0.549999952316 4.79283060109".
  const BandwidthTrace norway = read_trace((*root / "pensieve_norway3g" / "norway_bus_1").string());
  EXPECT_DOUBLE_EQ(norway.segments()[0].duration_s, 0.549999952316);
  EXPECT_DOUBLE_EQ(norway.capacity_bps(0.1), 4.03768755221e6);
  EXPECT_DOUBLE_EQ(norway.capacity_bps(0.6), 4.79283060109e6);
  // Lumos5G starts at 1.0 ("1.0 91.0", "2.0 123.0"): shifted to 0.
  const BandwidthTrace lumos = read_trace((*root / "lumos5g_5g" / "5g_trace_100_walking").string(), TraceFormat::lumos5g);
  EXPECT_DOUBLE_EQ(lumos.capacity_bps(0.5), 91e6);
  EXPECT_DOUBLE_EQ(lumos.capacity_bps(1.5), 123e6);
  // CacheGen: one chunk-indexed trace per line, in Gbps.
  const std::string cachegen = (*root / "cachegen" / "generated_trace.jsonl").string();
  const auto all = read_traces(cachegen);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[1].name(), "generated_trace.jsonl#1");
  EXPECT_EQ(all[0].segments().size(), 10u);
  EXPECT_DOUBLE_EQ(all[0].capacity_bps(0.5), 6.88809687e9);
  EXPECT_DOUBLE_EQ(all[2].capacity_bps(9.5), 2.27291257e9);
  expect_same(read_trace(cachegen + "#2"), all[2]);
  for (const auto& [spec, message] : std::vector<std::pair<std::string, std::string>>{
           {cachegen, "holds 3 traces; select one with"},
           {cachegen + "#3", "out of range, the file holds 3 traces"},
           {cachegen + "#x", "expected path#k"}}) {
    try {
      read_trace(spec);
      ADD_FAILURE() << spec;
    } catch (const TraceError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
}

class TraceReaderFiles : public TempDirTest {};

TEST_F(TraceReaderFiles, MahimahiMillisecondBins) {
  // Stamps 0 0 1 3 5 5: period 5 ms; the two packets at 5 wrap to bin 0.
  const BandwidthTrace t = read_trace(write("a.down", "0\n0\n1\n3\n5\n5\n"));
  const std::vector<std::pair<double, double>> expected = {{0.001, 4 * 1.2e7}, {0.001, 1.2e7}, {0.001, 0},
                                                           {0.001, 1.2e7},     {0.001, 0}};
  ASSERT_EQ(t.segments().size(), expected.size());
  for (size_t k = 0; k < expected.size(); ++k) {
    EXPECT_DOUBLE_EQ(t.segments()[k].duration_s, expected[k].first) << k;
    EXPECT_DOUBLE_EQ(t.segments()[k].capacity_bps, expected[k].second) << k;
  }
  EXPECT_NEAR(t.bits_between(0, 0.005), 6 * 12000, 1e-6);
  // Equal adjacent bins merge: 0 1 2 4 -> bin 0 has 2 packets, bins 1-2 one each, bin 3 none.
  const BandwidthTrace m = read_trace(write("b.down", "0\n1\n2\n4\n"));
  ASSERT_EQ(m.segments().size(), 3u);
  EXPECT_DOUBLE_EQ(m.segments()[0].capacity_bps, 2.4e7);
  EXPECT_DOUBLE_EQ(m.segments()[1].duration_s, 0.002);
  EXPECT_DOUBLE_EQ(m.segments()[2].capacity_bps, 0);
  // No stamp at 0: the wrapped packets still land in bin 0.
  const BandwidthTrace late = read_trace(write("c.down", "2\n3\n3\n"));
  ASSERT_EQ(late.segments().size(), 3u);
  EXPECT_DOUBLE_EQ(late.segments()[0].capacity_bps, 2.4e7);
  EXPECT_DOUBLE_EQ(late.segments()[1].capacity_bps, 0);
  EXPECT_DOUBLE_EQ(late.segments()[2].capacity_bps, 1.2e7);
}

TEST_F(TraceReaderFiles, SampleFormats) {
  // The last sample lasts as long as the interval before it; a late start is shifted to 0.
  const BandwidthTrace p = read_trace(write("p", "\n2.0\t1.5\n2.5 3\n4.0\t0\n"));
  ASSERT_EQ(p.segments().size(), 3u);
  EXPECT_DOUBLE_EQ(p.duration_s(), 3.5);
  EXPECT_DOUBLE_EQ(p.segments()[0].duration_s, 0.5);
  EXPECT_DOUBLE_EQ(p.segments()[2].duration_s, 1.5);
  EXPECT_DOUBLE_EQ(p.capacity_bps(0.2), 1.5e6);
  EXPECT_DOUBLE_EQ(p.capacity_bps(3.0), 0);
  // CSV with and without its header, CRLF line endings.
  const BandwidthTrace c = read_trace(write("c.csv", "time_s,mbps\r\n0, 1\r\n1,2\r\n"));
  EXPECT_EQ(format_name(sniff_trace_format((dir_ / "c.csv").string())), "csv");
  EXPECT_DOUBLE_EQ(c.duration_s(), 2.0);
  EXPECT_DOUBLE_EQ(c.mean_bps(), 1.5e6);
  EXPECT_DOUBLE_EQ(read_trace(write("d.csv", "0,1\n1,2\n")).mean_bps(), 1.5e6);
  // lumos5g and csv read the same numbers as pensieve.
  const std::string path = write("l", "1.0\t91.0\n2.0\t123.0\n");
  EXPECT_DOUBLE_EQ(read_trace(path, TraceFormat::lumos5g).mean_bps(), 107e6);
}

TEST(TraceFormats, Names) {
  EXPECT_EQ(parse_trace_format("auto"), std::nullopt);
  EXPECT_EQ(parse_trace_format("mahimahi"), TraceFormat::mahimahi);
  EXPECT_EQ(parse_trace_format("fcc"), TraceFormat::pensieve);
  EXPECT_EQ(parse_trace_format("norway"), TraceFormat::pensieve);
  EXPECT_EQ(parse_trace_format("pensieve"), TraceFormat::pensieve);
  EXPECT_EQ(parse_trace_format("lumos5g"), TraceFormat::lumos5g);
  EXPECT_EQ(parse_trace_format("cachegen"), TraceFormat::cachegen_jsonl);
  EXPECT_EQ(parse_trace_format("csv"), TraceFormat::csv);
  for (auto f : {TraceFormat::mahimahi, TraceFormat::pensieve, TraceFormat::lumos5g, TraceFormat::cachegen_jsonl,
                 TraceFormat::csv})
    EXPECT_EQ(parse_trace_format(format_name(f)), f);
  EXPECT_THROW(parse_trace_format("mahi"), TraceError);
}

// Malformed files: the message names file:line and what was expected and found.
TEST_F(TraceReaderFiles, MalformedFilesNameFileAndLine) {
  struct Case {
    std::string content;
    std::optional<TraceFormat> format;
    std::string where, message;
  };
  const std::vector<Case> cases = {
      {"0\n5\nabc\n", TraceFormat::mahimahi, ":3:", "expected one non-negative integer (a millisecond timestamp), found 'abc'"},
      {"0\n5\n3\n", TraceFormat::mahimahi, ":3:", "non-decreasing order, found 3 after 5"},
      {"0\n-1\n", TraceFormat::mahimahi, ":2:", "non-negative integer"},
      {"0\n0\n", TraceFormat::mahimahi, ":2:", "last timestamp > 0"},
      {"0 1\n1 x\n", std::nullopt, ":2:", "expected a throughput in Mbps, found 'x'"},
      {"0 1\nnan 2\n", std::nullopt, ":2:", "expected a time in seconds, found 'nan'"},
      {"0 1\n1 -2\n", std::nullopt, ":2:", "expected a throughput >= 0 Mbps, found '-2'"},
      {"0 1\n2 1\n2 3\n", std::nullopt, ":3:", "strictly increasing times, found '2'"},
      {"0 1 2\n", TraceFormat::pensieve, ":1:", "expected 2 fields 'time_s Mbps' (whitespace-separated), found 3"},
      {"\n0 1\n\n1 x\n", std::nullopt, ":4:", "found 'x'"},
      {"0 1\n", std::nullopt, ":1:", "at least 2 samples"},
      {"time_s,mbps\n0,1\n1,2,3\n", std::nullopt, ":3:", "expected 2 fields 'time_s,mbps', found 3"},
      {"time,rate\n0,1\n", TraceFormat::csv, ":1:", "expected a time in seconds, found 'time'"},
      {"{\"bw\": [1, 2]}\n{bad\n", std::nullopt, ":2:", "bad JSON"},
      {"{\"x\": 1}\n", std::nullopt, ":1:", "expected a key \"bw\""},
      {"{\"bw\": [1, \"a\"]}\n", std::nullopt, ":1:", "expected \"bw\"[1] to be a number of Gbps >= 0, found \"a\""},
      {"{\"bw\": []}\n", std::nullopt, ":1:", "non-empty array"},
      {"[1, 2]\n", TraceFormat::cachegen_jsonl, ":1:", "expected a JSON object"},
      // Nesting that a recursive walk (an error message printing the value) would overflow the stack on.
      {"{\"bw\": " + std::string(70000, '[') + std::string(70000, ']') + "}\n", TraceFormat::cachegen_jsonl, ":1:",
       "JSON nested deeper than"},
      {"{\"bw\": [1], \"bw\": [2]}\n", TraceFormat::cachegen_jsonl, ":1:", "duplicate key \"bw\""},
      {"hello world again\n", std::nullopt, ":1:", "cannot tell the trace format"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string path = write("bad" + std::to_string(i), cases[i].content);
    try {
      read_traces(path, cases[i].format);
      ADD_FAILURE() << "no error for case " << i << ": " << cases[i].content;
    } catch (const TraceError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(path + cases[i].where), std::string::npos) << "case " << i << ": " << what;
      EXPECT_NE(what.find(cases[i].message), std::string::npos) << "case " << i << ": " << what;
    }
  }
}

TEST_F(TraceReaderFiles, MissingAndEmptyFiles) {
  const std::string missing = (dir_ / "nothere.down").string();
  for (const auto& [path, message] : std::vector<std::pair<std::string, std::string>>{
           {missing, "trace file '" + missing + "' not found"},
           {write("empty", ""), "is empty"},
           {write("blank", "\n  \n\t\n"), "is empty"},
           {dir_.string(), "is not a regular file"}}) {
    try {
      read_traces(path);
      ADD_FAILURE() << path;
    } catch (const TraceError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace kvstream::traces
