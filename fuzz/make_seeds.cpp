// fuzz_seeds REPOSITORY OUT: writes the seed corpus of every fuzz target into OUT/<target>/, from
// real files only (docs/FUZZING.md "Seeds"): the KV fixture (found by the data resolver, never
// copied into the repository) encoded by every codec at every level, as bitstreams and .kvs files,
// an offline CDF table built from it and slices of it as safetensors; the shipped ladders,
// experiment configs, context profiles and hardware profiles; the heads of real traces of every
// format; a small GGUF file; a transform calibration, a jobs.json and #SBATCH values, and the
// fidelity.jsonl of the rescore fixture's config. Inputs of targets that take a selector byte get the selector that
// reads them as they are (with checksum repair, which leaves a valid file unchanged).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "codec/cachegen/offline_cdf.h"
#include "codec/codec.h"
#include "codec/format/kv_dump.h"
#include "codec/format/kvs_file.h"
#include "common/data_resolver.h"
#include "common/file_text.h"
#include "experiments/slurm_sweep.h"
#include "fuzz/fidelity_fixture.h"
#include "fuzz/offline_tables.h"
#include "models/gguf_file.h"
#include "tests/models/gguf_builder.h"

namespace fs = std::filesystem;
using namespace kvstream;

namespace {

constexpr const char* kFixture = "kv/stories260K_tinystories_4x512.safetensors";
constexpr size_t kTraceHeadBytes = 4096;  // a trace's first lines are a valid trace, and fuzz faster
constexpr int kTracesPerFormat = 3;

struct SeedWriter {
  fs::path out;
  int count = 0;

  void write(const std::string& target, const std::string& name, const std::vector<uint8_t>& bytes,
             std::optional<uint8_t> selector = std::nullopt) {
    fs::create_directories(out / target);
    std::ofstream file(out / target / name, std::ios::binary);
    if (selector) file.put(char(*selector));
    file.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    if (!file) throw std::runtime_error("cannot write seed " + (out / target / name).string());
    ++count;
  }
  void write_file(const std::string& target, const fs::path& source, std::optional<uint8_t> selector = std::nullopt,
                  size_t max_bytes = SIZE_MAX) {
    std::string text = common::read_file_text(source);
    if (text.size() > max_bytes) text.resize(text.rfind('\n', max_bytes) + 1);  // whole lines only
    write(target, source.filename().string(), std::vector<uint8_t>(text.begin(), text.end()), selector);
  }
};

std::vector<uint8_t> read_bytes(const fs::path& path) {
  const std::string text = common::read_file_text(path);
  return {text.begin(), text.end()};
}

// Every codec at every level on two chunks of the fixture's first context: each bitstream alone,
// and both as one .kvs file (the selector of fuzz_bitstream.cpp: codec index, bit 1 of the rest
// for .kvs). CacheGen also with the offline table, and the transform codec with the calibration,
// that fuzz_bitstream decodes with.
void bitstream_seeds(SeedWriter& seeds, const codec::KvCache& kv) {
  const auto& registry = codec::codec_registry();
  const fs::path scratch = seeds.out / "scratch.kvs";
  const fs::path table = seeds.out / "scratch.kvcdf";
  const fs::path calibration = seeds.out / "scratch.kvcal";
  fuzz::offline_table()->save(table);
  fuzz::transform_calibration()->save(calibration);
  // (seed name, spec): the names leave out the scratch files' paths.
  const std::vector<std::pair<std::string, std::string>> specs = {
      {"fp16", "fp16"}, {"quant:bits=8", "quant:bits=8"}, {"quant:bits=3", "quant:bits=3"}, {"kivi:bits=2", "kivi:bits=2"},
      {"zstd", "zstd"}, {"cachegen", "cachegen"}, {"cachegen:entropy=rans", "cachegen:entropy=rans"},
      {"cachegen:delta=10", "cachegen:delta=10"}, {"cachegen:cdf=offline", "cachegen:cdf=offline,table=" + table.string()},
      {"transform", "transform:cal=" + calibration.string()},
      {"transform:sub=4", "transform:cal=" + calibration.string() + ",sub=4"}};  // several groups per row
  for (const auto& [spec_name, spec] : specs) {
    const auto codec = codec::make_codec(spec);
    for (int level : codec->levels()) {
      std::vector<std::vector<uint8_t>> chunks;
      for (auto [t0, t1] : {std::pair<int64_t, int64_t>{0, 8}, {8, 24}})
        chunks.push_back(codec->encode(kv.chunk(t0, t1), level, t0));
      const auto id = codec::parse_bitstream(chunks[0]).header.codec;
      const auto entry = std::find_if(registry.begin(), registry.end(), [&](const auto& e) { return e.id == id; });
      const auto index = uint8_t(entry - registry.begin());
      const std::string name = spec_name + "-" + std::to_string(level);
      seeds.write("bitstream", name + ".bin", chunks[1], index);
      codec::write_kvs(scratch, chunks);
      seeds.write("bitstream", name + ".kvs", read_bytes(scratch), uint8_t(index + registry.size()));
    }
  }
  fs::remove(scratch);
  fs::remove(table);
  fs::remove(calibration);
}

void offline_cdf_seeds(SeedWriter& seeds, const codec::KvCache& kv) {
  const auto ladder = codec::Ladder::from_name_or_path("generic");
  for (int group : {0, 10}) {
    const auto table = codec::OfflineCdfTable::build({kv.chunk(0, 64)}, ladder, codec::TokenMode{group});
    seeds.write("offline_cdf", "generic-delta" + std::to_string(group) + ".kvcdf", table.serialize(), 0);
  }
}

void safetensors_seeds(SeedWriter& seeds, const codec::KvFile& fixture) {
  const fs::path scratch = seeds.out / "scratch.safetensors";
  const codec::KvCache slice = codec::KvCache::from_view(fixture.contexts[0].chunk(0, 4));
  for (auto dtype : {codec::SourceDtype::kFp16, codec::SourceDtype::kBf16, codec::SourceDtype::kFp32}) {
    codec::save_kv(scratch, slice, dtype, {}, {1, 2, 3, 4});
    seeds.write("safetensors", std::string("kv-") + codec::dtype_name(dtype) + ".safetensors", read_bytes(scratch));
  }
  codec::KvFile two;
  two.contexts = {slice, codec::KvCache::from_view(fixture.contexts[1].chunk(0, 4))};
  two.tokens = {{1, 2, 3, 4}, {5, 6, 7, 8}};
  codec::save_kv(scratch, two);
  seeds.write("safetensors", "kv-2-contexts.safetensors", read_bytes(scratch));
  fs::remove(scratch);
}

// A small GGUF v3 file with metadata of every kind the loaders read and one tensor of each type
// read_tensor_f32 dequantizes (the real SmolLM2 file is 93 MB: too large to mutate usefully).
void gguf_seeds(SeedWriter& seeds) {
  using models::GgmlType;
  using models::GgufType;
  struct TensorSeed {
    const char* name;
    GgmlType type;
    uint64_t bytes;  // for 32 elements
  };
  const std::vector<TensorSeed> tensors = {{"f32", GgmlType::kF32, 128},  {"f16", GgmlType::kF16, 64},
                                           {"bf16", GgmlType::kBF16, 64}, {"q8_0", GgmlType::kQ8_0, 34},
                                           {"q4_0", GgmlType::kQ4_0, 18}, {"q4_1", GgmlType::kQ4_1, 20}};
  test_support::GgufBuilder b;
  b.header(3, tensors.size(), 6);
  b.kv_string("general.architecture", "llama");
  b.kv("llama.block_count", GgufType::kU32, uint32_t(2));
  b.kv("llama.rope.freq_base", GgufType::kF32, 10000.0f);
  b.kv("general.alignment", GgufType::kU32, uint32_t(32));
  b.kv_strings("tokenizer.ggml.tokens", {"<s>", "</s>", "a", "b"});
  b.kv_array("tokenizer.ggml.scores", GgufType::kF32, std::vector<float>{0, 0, -1, -2});
  uint64_t offset = 0;
  for (const auto& t : tensors) {
    b.str(t.name);
    b.put<uint32_t>(2);
    b.put<uint64_t>(16);
    b.put<uint64_t>(2);
    b.put(static_cast<uint32_t>(t.type));
    b.put<uint64_t>(offset);
    offset += (t.bytes + 31) / 32 * 32;
  }
  b.pad(32);
  b.bytes.append(offset, '\x11');
  seeds.write("gguf", "small-v3.gguf", std::vector<uint8_t>(b.bytes.begin(), b.bytes.end()));
}

// The heads of the first real traces of every format, with the selector that sniffs the format.
void trace_seeds(SeedWriter& seeds) {
  for (const char* folder : {"traces/mahimahi", "traces/pensieve_fcc", "traces/pensieve_norway3g",
                             "traces/lumos5g_5g", "traces/cachegen"}) {
    std::vector<fs::path> files;
    for (const auto& entry : fs::recursive_directory_iterator(common::resolve_data_dir(folder)))
      if (entry.is_regular_file()) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    files.resize(std::min<size_t>(files.size(), kTracesPerFormat));
    for (const auto& file : files) seeds.write_file("traces", file, 0, kTraceHeadBytes);
  }
}

// Calibrations of the fixture's shape (offline_tables.h), as they are (selector 0: its CRC repaired,
// which leaves a valid file unchanged): version 1, and version 2 with keys weighed by a metric.
void kvcal_seeds(SeedWriter& seeds) {
  seeds.write("kvcal", "synthetic.kvcal", fuzz::transform_calibration()->serialize(), 0);
  seeds.write("kvcal", "weighed-keys.kvcal", fuzz::weighed_transform_calibration().serialize(), 0);
}

// A jobs.json as `kvstream slurm` writes it (selector 0) and #SBATCH values (selector 1): a plain one,
// and paths with a space, quotes, '#' and '%'.
void slurm_jobs_seeds(SeedWriter& seeds) {
  const auto text = [](const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); };
  seeds.write("slurm_jobs", "jobs.json",
              text(experiments::to_json(experiments::SlurmJobs{"2026-12-06T10:00:00Z", 3, "/r", "11", "12", "13"}).dump(2)), 0);
  seeds.write("slurm_jobs", "value-plain", text("gpu-a100"), 1);
  seeds.write("slurm_jobs", "value-odd-path", text("/data/it's a \"dir\" #1 100%/logs/grid-%A_%a.out"), 1);
}

// fidelity.jsonl of the fuzz fixture's config (fidelity_fixture.h): every case, its "emulation" the
// fluid simulation of the case, as `kvstream fidelity` writes a line.
void fidelity_rescore_seeds(SeedWriter& seeds) {
  const emulation::FidelityRunner& runner = *fuzz::fidelity_fixture().runner;
  std::string lines;
  for (const auto& c : emulation::plan_fidelity(runner.config())) {
    emulation::FidelityRun run;
    run.fidelity_case = c;
    run.trace_mean_mbps = runner.trace(c.trace).mean_bps() / 1e6;
    run.queue_bytes = runner.queue_bytes(c);
    run.emulated.results = sim::simulate(runner.inputs(c, "fluid"));
    for (const auto& model : runner.config().link_models) run.simulated.push_back(sim::simulate(runner.inputs(c, model)));
    lines += emulation::to_json(runner.config(), run).dump() + "\n";
  }
  seeds.write("fidelity_rescore", "fluid.jsonl", std::vector<uint8_t>(lines.begin(), lines.end()));
}

// The repository's own files of a JSON format, as they are.
void repository_seeds(SeedWriter& seeds, const fs::path& repo) {
  const std::vector<std::pair<std::string, fs::path>> folders = {
      {"ladder", "codec/ladders"},
      {"experiment_config", "experiments/configs"},
      {"context_profile", "experiments/configs/profiles"},
      {"hardware_profile", "profiling/hardware"}};
  for (const auto& [target, folder] : folders)
    for (const auto& entry : fs::recursive_directory_iterator(repo / folder))
      if (entry.is_regular_file() && entry.path().extension() == ".json" &&
          (target != "experiment_config" || entry.path().parent_path() == repo / folder))
        seeds.write_file(target, entry.path());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: fuzz_seeds REPOSITORY OUT\n");
    return 2;
  }
  try {
    SeedWriter seeds{argv[2]};
    fs::create_directories(seeds.out);
    const codec::KvFile fixture = codec::load_kv(common::resolve_data(kFixture));
    bitstream_seeds(seeds, fixture.contexts[0]);
    offline_cdf_seeds(seeds, fixture.contexts[0]);
    safetensors_seeds(seeds, fixture);
    gguf_seeds(seeds);
    trace_seeds(seeds);
    repository_seeds(seeds, argv[1]);
    kvcal_seeds(seeds);
    slurm_jobs_seeds(seeds);
    fidelity_rescore_seeds(seeds);
    std::printf("fuzz_seeds: %d seeds in %s\n", seeds.count, argv[2]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_seeds: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
