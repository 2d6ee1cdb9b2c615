// Fuzzes what `kvstream slurm` reads and writes that a shell or sbatch parses (experiments/slurm_sweep.h):
//   selector even: the input as DIR/slurm/jobs.json, which --status reads from result directories
//     that may come from elsewhere: parse_slurm_jobs, then the squeue command it gives. Every
//     argument must be one of ours or a comma-separated list of job ids (digits), the shard count
//     within 1..10000, and what was read must write and read back as itself.
//   selector odd: the input as a value for an #SBATCH line: sbatch_quoted either refuses it
//     (std::invalid_argument: a control character) or gives a word that sbatch's tokenizer, as
//     measured on sbatch 22.05 (tests/slurm/slurm_sweep.sh submits such words to a real Slurm),
//     reads back as exactly the value, alone on its line.
// A finding: anything but those or a documented rejection (fuzz_support.h).
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/json_reader.h"
#include "experiments/slurm_sweep.h"
#include "fuzz/fuzz_support.h"

namespace {

using namespace kvstream;

// sbatch 22.05 reading one word of an #SBATCH line, as measured: double quotes group and take \" and
// \\ inside; outside them a backslash takes the next character, but whitespace ends the word even
// after one, and '#' starts a comment. Returns the word and where reading stopped.
std::pair<std::string, size_t> sbatch_reads(const std::string& line) {
  std::string word;
  size_t i = 0;
  bool quoted = false;
  for (; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '\\' && i + 1 < line.size()) word += line[++i];
      else if (c == '"') quoted = false;
      else word += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ' ' || c == '\t' || c == '#' || c == '\n') {
      break;
    } else if (c == '\\' && i + 1 < line.size() && line[i + 1] != ' ' && line[i + 1] != '\t') {
      word += line[++i];  // "x\y" reads as "xy"; "x\ y" still ends at the space
    } else {
      word += c;
    }
  }
  if (quoted) fuzz::report_finding("an #SBATCH word whose quote does not close: " + line);
  return {word, i};
}

void check_jobs(const std::string& text) {
  const experiments::SlurmJobs jobs = experiments::parse_slurm_jobs(common::parse_json(text, "jobs.json"), "jobs.json");
  if (jobs.shards < 1 || jobs.shards > 10000) fuzz::report_finding("a shard count of " + std::to_string(jobs.shards));
  const auto command = experiments::squeue_command("squeue", jobs);
  for (size_t i = 0; i < command.size(); ++i) {
    const std::string& arg = command[i];
    const bool ours = i < 6;  // squeue -h -r -o FORMAT -j
    if (!ours && (arg.empty() || arg.find_first_not_of("0123456789,") != std::string::npos || arg.front() == ','))
      fuzz::report_finding("an squeue argument that is not a list of job ids: " + arg);
  }
  const experiments::SlurmJobs again = experiments::parse_slurm_jobs(experiments::to_json(jobs), "written");
  if (experiments::to_json(again) != experiments::to_json(jobs)) fuzz::report_finding("jobs.json does not read back as itself");
}

void check_sbatch_word(const std::string& value) {
  const std::string word = experiments::sbatch_quoted(value, "the value");
  if (word.find_first_of("\n\r") != std::string::npos) fuzz::report_finding("an #SBATCH word with a line break");
  const auto [read, end] = sbatch_reads(word);
  if (end != word.size()) fuzz::report_finding("sbatch would end the word early: " + word);
  if (read != value) fuzz::report_finding("sbatch would read \"" + read + "\" for \"" + value + "\"");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  fuzz::expect_clean_rejection([&] { data[0] % 2 == 0 ? check_jobs(text) : check_sbatch_word(text); });
  return 0;
}
