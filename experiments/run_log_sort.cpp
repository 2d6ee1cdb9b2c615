#include "experiments/run_log_sort.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <queue>
#include <stdexcept>

#include "common/atomic_file.h"
#include "experiments/run_log.h"
#include "experiments/zstd_frames.h"

namespace kvstream::experiments {

namespace fs = std::filesystem;

namespace {

struct Record {
  size_t run = 0;
  size_t source = 0;  // index into the sources
  size_t number = 0;  // its line in the source
  std::string line;
};

// The value of a record's top-level "run" key as kvstream writes records (compact, keys sorted, no
// other key named "run"), found without parsing the record; nullopt for text of another form. The
// record is parsed when it is written out, and a "run" that differs then is an error.
std::optional<size_t> scanned_run(std::string_view line) {
  const size_t key = line.rfind("\"run\":");
  if (key == std::string_view::npos) return std::nullopt;
  size_t run = 0, i = key + 6;
  const size_t digits = i;
  for (; i < line.size() && line[i] >= '0' && line[i] <= '9' && i - digits < 18; ++i) run = run * 10 + size_t(line[i] - '0');
  if (i == digits || i == line.size() || (line[i] != ',' && line[i] != '}')) return std::nullopt;
  return run;
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

// A file for a sorted chunk beside `out`: created and unlinked at once, so that it never outlives the
// process.
File unnamed_temporary(const fs::path& out) {
  std::string name = (out.parent_path() / ".runs-sort-XXXXXX").string();
  const int fd = ::mkstemp(name.data());
  if (fd < 0) throw std::runtime_error("cannot create a temporary file beside " + out.string() + " to sort runs");
  ::unlink(name.c_str());
  File file(::fdopen(fd, "w+b"));
  if (!file) {
    ::close(fd);
    throw std::runtime_error("cannot open a temporary file beside " + out.string());
  }
  return file;
}

// A chunk on disk: (run, source, number, length, bytes) per record, in run order.
void spill(std::FILE* f, const std::vector<Record>& chunk, const fs::path& out) {
  for (const auto& r : chunk) {
    const uint64_t head[4] = {r.run, r.source, r.number, r.line.size()};
    if (std::fwrite(head, sizeof head, 1, f) != 1 || std::fwrite(r.line.data(), 1, r.line.size(), f) != r.line.size())
      throw std::runtime_error("cannot write a temporary file beside " + out.string() + " (disk full?)");
  }
  if (std::fflush(f) != 0 || std::fseek(f, 0, SEEK_SET) != 0)
    throw std::runtime_error("cannot write a temporary file beside " + out.string() + " (disk full?)");
}

bool read_record(std::FILE* f, Record& r) {
  uint64_t head[4];
  if (std::fread(head, sizeof head, 1, f) != 1) return false;
  r.run = head[0];
  r.source = head[1];
  r.number = head[2];
  r.line.resize(head[3]);
  if (std::fread(r.line.data(), 1, r.line.size(), f) != r.line.size())
    throw std::runtime_error("a temporary file of the run sort was cut short");
  return true;
}

// Calls `emit` for the records of `sources` in (run, source) order.
void for_each_sorted(const std::vector<RunLogSource>& sources, const fs::path& out, size_t chunk_limit,
                     const std::function<void(const Record&)>& emit) {
  const auto by_run = [](const Record& a, const Record& b) { return a.run != b.run ? a.run < b.run : a.source < b.source; };
  std::vector<Record> chunk;
  size_t chunk_bytes = 0;
  std::vector<File> spilled;
  const auto end_chunk = [&] {
    std::stable_sort(chunk.begin(), chunk.end(), by_run);
    spilled.push_back(unnamed_temporary(out));
    spill(spilled.back().get(), chunk, out);
    chunk.clear();
    chunk_bytes = 0;
  };
  for (size_t s = 0; s < sources.size(); ++s)
    for_each_line(sources[s].path, [&](std::string_view line, size_t number) {
      if (line.empty()) return;
      std::optional<size_t> run = scanned_run(line);
      if (!run) run = parse_run_record(line, sources[s].path.string() + ":" + std::to_string(number)).at("run").get<size_t>();
      if (chunk_bytes >= chunk_limit) end_chunk();
      chunk.push_back({*run, s, number, std::string(line)});
      chunk_bytes += line.size() + sizeof(Record);
    });
  if (spilled.empty()) {  // everything fits in one chunk: no file
    std::stable_sort(chunk.begin(), chunk.end(), by_run);
    for (const auto& r : chunk) emit(r);
    return;
  }
  if (!chunk.empty()) end_chunk();
  // The heads of the spilled chunks, smallest (run, source) first.
  std::vector<Record> heads(spilled.size());
  const auto later = [&](size_t a, size_t b) { return by_run(heads[b], heads[a]); };
  std::priority_queue<size_t, std::vector<size_t>, decltype(later)> queue(later);
  for (size_t c = 0; c < spilled.size(); ++c)
    if (read_record(spilled[c].get(), heads[c])) queue.push(c);
  while (!queue.empty()) {
    const size_t c = queue.top();
    queue.pop();
    emit(heads[c]);
    if (read_record(spilled[c].get(), heads[c])) queue.push(c);
  }
}

}  // namespace

SortedRunLog write_sorted_run_log(const std::vector<RunLogSource>& sources, const fs::path& out, int threads,
                                  const std::function<void(size_t runs)>& check, size_t chunk_bytes) {
  SortedRunLog sorted;
  SummaryBuilder summaries;
  const bool compressed = run_log_format(out) == RunLogFormat::kZstd;
  common::write_file_atomically(out, [&](std::ostream& file) {
    FrameBuffer frames;
    const auto write = [&](std::string_view text) {
      if (!compressed) return void(file.write(text.data(), std::streamsize(text.size())));
      frames.add(text);
      if (frames.text_bytes() < kFrameTextBytes) return;
      const std::string frame = frames.take_frame();
      file.write(frame.data(), std::streamsize(frame.size()));
    };
    std::optional<Record> last;
    for_each_sorted(sources, out, chunk_bytes, [&](const Record& r) {
      const auto where = [&](const Record& of) { return sources[of.source].path.string() + ":" + std::to_string(of.number); };
      if (last && last->run == r.run) {  // the same run from another source
        if (r.line == last->line) return;
        const auto record = parse_run_record(r.line, where(r));
        if (record != parse_run_record(last->line, where(*last)))
          throw std::runtime_error("run " + (record.at("id").is_string() ? record.at("id").get<std::string>() : record.at("id").dump()) +
                                   " (index " + std::to_string(r.run) +
                                   ") differs between " + sources[last->source].label + " and " + sources[r.source].label);
        return;
      }
      const nlohmann::json record = parse_run_record(r.line, where(r));
      if (record.at("run") != r.run)
        throw std::runtime_error(where(r) + ": the record's \"run\" key is not where kvstream writes it");
      summaries.add(run_totals(record));
      write(r.line);
      write("\n");
      ++sorted.runs;
      last = r;
    });
    if (compressed) {
      const std::string frame = frames.take_frame();
      file.write(frame.data(), std::streamsize(frame.size()));
    }
    check(sorted.runs);
  });
  sorted.summary = summaries.rows(threads);
  return sorted;
}

}  // namespace kvstream::experiments
