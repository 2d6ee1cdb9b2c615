// Run logs (experiments/run_log.h, run_log_file.h, run_log_sort.h, in_order.h): plain and zstd logs
// read the same, a torn tail is skipped and cut off, a corrupt frame is an error naming the file and
// byte, the external sort gives what sorting in memory gives, and results are handed on in order.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <thread>

#include <gtest/gtest.h>
#include <zstd.h>

#include "experiments/in_order.h"
#include "experiments/result_tables.h"
#include "experiments/run_log.h"
#include "experiments/run_log_sort.h"

namespace kvstream::experiments {
namespace {

namespace fs = std::filesystem;

class RunLogFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kvstream_run_log_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A run record as the runner writes it: a group, a trace rate and one request.
  static std::string record(size_t run, const std::string& policy, double ttft_s) {
    nlohmann::json r = {{"run", run}, {"id", "id" + std::to_string(run)}, {"context_set", "syn"}, {"trace_set", "t"},
                        {"policy", policy}, {"slo_s", 1.0}, {"hardware", nullptr}, {"workload", "single"},
                        {"rate_per_s", nullptr}, {"trace_mean_gbps", 1.5 + double(run % 7)}};
    r["requests"] = {{{"completed", ttft_s < 9}, {"ttft_s", ttft_s < 9 ? nlohmann::json(ttft_s) : nlohmann::json()},
                      {"slo_met", ttft_s <= 1.0}, {"bytes", 1e6 + double(run)}, {"quality", 0.9}}};
    return r.dump();
  }
  static std::vector<std::string> lines_of(const fs::path& path) {
    std::vector<std::string> lines;
    for_each_line(path, [&](std::string_view line, size_t) { lines.emplace_back(line); });
    return lines;
  }

  fs::path dir_;
};

TEST_F(RunLogFiles, ZstdLogsReadLikePlainOnesAndATornFrameIsCutOff) {
  std::vector<std::string> lines;
  for (size_t i = 0; i < 50; ++i) lines.push_back(record(i, i % 2 ? "mpc" : "quant8", 0.1 * double(i)));
  const fs::path plain = dir_ / kPlainRunLog, packed = dir_ / kZstdRunLog;
  {
    RunLog a(plain), b(packed);
    for (size_t i = 0; i < lines.size(); ++i) {
      a.append(lines[i] + "\n");
      b.append(lines[i] + "\n");
      if (i == 19) b.flush();  // two frames: runs 0-19, then 20-49
    }
    b.flush();
  }
  EXPECT_EQ(lines_of(plain), lines);
  EXPECT_EQ(lines_of(packed), lines);
  EXPECT_EQ(run_log_format(packed), RunLogFormat::kZstd);
  EXPECT_LT(fs::file_size(packed), fs::file_size(plain) / 3);

  // A writer killed in its second frame's write: that frame is skipped as a whole, then cut off.
  const size_t first_frame = [&] {
    std::ifstream in(packed, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), {});
    return bytes.find("\x28\xb5\x2f\xfd", 4);  // the second frame's magic number
  }();
  ASSERT_NE(first_frame, std::string::npos);
  fs::resize_file(packed, first_frame + 9);
  const RunLogScan scan = for_each_line(packed, [](std::string_view, size_t) {});
  EXPECT_EQ(scan.lines, 20u);
  EXPECT_EQ(scan.complete_bytes, first_frame);
  {
    RunLog resumed(packed);
    EXPECT_EQ(fs::file_size(packed), first_frame);
    resumed.append(lines[20] + "\n");
    resumed.flush();
  }
  const auto kept = lines_of(packed);
  ASSERT_EQ(kept.size(), 21u);
  EXPECT_EQ(kept.back(), lines[20]);
}

// Many runs handed on at once (a batch of a slow run's followers) still make frames of about
// kFrameTextBytes, each bounding what a reader holds.
TEST_F(RunLogFiles, ALargeBatchIsSplitIntoFramesOfBoundedText) {
  const fs::path packed = dir_ / kZstdRunLog;
  std::string batch;
  for (size_t i = 0; batch.size() < 3 * kFrameTextBytes; ++i) batch += record(i, "mpc", 0.25) + "\n";
  {
    RunLog log(packed);
    log.append(batch);
    log.flush();
  }
  std::ifstream in(packed, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  size_t frames = 0;
  for (size_t at = 0; at < bytes.size(); ++frames) {
    const size_t size = ZSTD_findFrameCompressedSize(bytes.data() + at, bytes.size() - at);
    ASSERT_FALSE(ZSTD_isError(size));
    EXPECT_LE(ZSTD_getFrameContentSize(bytes.data() + at, size), kFrameTextBytes + 1000);
    at += size;
  }
  EXPECT_GE(frames, 3u);
  std::string text;
  for_each_line(packed, [&](std::string_view line, size_t) { text.append(line).append("\n"); });
  EXPECT_EQ(text, batch);
}

TEST_F(RunLogFiles, ACorruptFrameIsAnErrorNamingTheFileAndByte) {
  const fs::path packed = dir_ / kZstdRunLog;
  {
    RunLog log(packed);
    for (size_t i = 0; i < 40; ++i) log.append(record(i, "mpc", 0.5) + "\n");
    log.flush();
  }
  std::fstream file(packed, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(std::streamoff(fs::file_size(packed) / 2));
  file.put('\x5a');
  file.close();
  try {
    lines_of(packed);
    ADD_FAILURE() << "a corrupt frame was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(packed.string() + ": corrupt zstd data in the frame starting at byte 0"),
              std::string::npos)
        << e.what();
  }
  // Plain text under a .zst name is no frame at all.
  std::ofstream(dir_ / "other.jsonl.zst") << record(0, "mpc", 0.5) << "\n";
  EXPECT_THROW(lines_of(dir_ / "other.jsonl.zst"), std::runtime_error);
  // Two logs in one directory: which one holds the runs is not guessed.
  std::ofstream(dir_ / kPlainRunLog) << record(0, "mpc", 0.5) << "\n";
  EXPECT_THROW(find_run_log(dir_), std::runtime_error);
}

// The external sort in chunks of a few records equals one in-memory chunk, and both equal the
// records sorted by hand, summaries included; an equal duplicate is kept once, a different one is an
// error that leaves the output as it was.
TEST_F(RunLogFiles, TheExternalSortEqualsSortingInMemory) {
  std::vector<std::string> sorted;
  for (size_t i = 0; i < 300; ++i) sorted.push_back(record(i, i % 3 ? "mpc" : "text", i % 11 == 0 ? 99 : 0.01 * double(i)));
  std::vector<std::string> shuffled = sorted;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(7));
  const std::vector<RunLogSource> sources = {{dir_ / "a.jsonl", "a"}, {dir_ / "b.jsonl.zst", "b"}};
  {
    RunLog a(sources[0].path), b(sources[1].path);
    for (size_t i = 0; i < shuffled.size(); ++i) (i < 200 ? a : b).append(shuffled[i] + "\n");
    b.append(shuffled[0] + "\n");  // a run in both sources, recorded alike
    std::string spaced = shuffled[1];  // and one written by another tool: the same JSON, other text
    spaced.replace(spaced.find("\"run\":"), 6, "\"run\": ");
    b.append(spaced + "\n");
    b.flush();
  }
  SummaryBuilder by_hand;
  for (const auto& line : sorted) by_hand.add(run_totals(nlohmann::json::parse(line)));
  const auto expected = by_hand.rows(1);
  for (const size_t chunk_bytes : {size_t(1000), kSortChunkBytes})
    for (const char* name : {"out.jsonl", "out.jsonl.zst"}) {
      const fs::path out = dir_ / name;
      const SortedRunLog result = write_sorted_run_log(sources, out, 2, [](size_t) {}, chunk_bytes);
      EXPECT_EQ(result.runs, sorted.size());
      EXPECT_EQ(lines_of(out), sorted) << name << " in chunks of " << chunk_bytes;
      ASSERT_EQ(result.summary.size(), expected.size());
      for (size_t g = 0; g < expected.size(); ++g) {
        EXPECT_EQ(result.summary[g].group, expected[g].group);
        EXPECT_EQ(result.summary[g].summary.p95_ttft_s, expected[g].summary.p95_ttft_s);
        EXPECT_EQ(result.summary[g].intervals.mean_ttft_s.lo, expected[g].intervals.mean_ttft_s.lo);
        EXPECT_EQ(result.summary[g].trace_mean_gbps, expected[g].trace_mean_gbps);
      }
      fs::remove(out);
    }
  std::ofstream(dir_ / "c.jsonl") << record(5, "other", 0.5) << "\n";
  std::ofstream(dir_ / "out.jsonl") << "before\n";
  try {
    write_sorted_run_log({sources[0], sources[1], {dir_ / "c.jsonl", "c"}}, dir_ / "out.jsonl", 1, [](size_t) {}, 1000);
    ADD_FAILURE() << "a run that differs between sources was merged";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("(index 5) differs between "), std::string::npos) << e.what();
  }
  EXPECT_EQ(lines_of(dir_ / "out.jsonl"), std::vector<std::string>{"before"});
  EXPECT_THROW(write_sorted_run_log(sources, dir_ / "out.jsonl", 1, [](size_t) { throw std::runtime_error("no"); }),
               std::runtime_error);
  EXPECT_EQ(lines_of(dir_ / "out.jsonl"), std::vector<std::string>{"before"});
}

TEST(InOrder, ResultsFromManyThreadsAreHandedOnInPositionOrder) {
  std::vector<size_t> handed;
  size_t batches = 0;
  InOrder<size_t> order(8, [&](size_t&& v) { handed.push_back(v); }, [&] { ++batches; });
  std::atomic<size_t> next{0};
  const auto worker = [&] {
    std::mt19937 random(unsigned(next.load()));
    for (size_t p; (p = next++) < 1000 && order.wait_turn(p);) {
      std::this_thread::sleep_for(std::chrono::microseconds(random() % 50));
      order.deliver(p, p % 10 == 3 ? std::nullopt : std::optional<size_t>(p));
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  ASSERT_EQ(handed.size(), 900u);
  EXPECT_TRUE(std::is_sorted(handed.begin(), handed.end()));
  EXPECT_GE(batches, 1u);
  order.stop();
  EXPECT_FALSE(order.wait_turn(5000));
}

}  // namespace
}  // namespace kvstream::experiments
