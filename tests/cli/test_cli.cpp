// End-to-end tests of the `kvstream` binary (KVSTREAM_CLI): encode / decode / cdf-build /
// codec-bench on the real fixture in a temporary directory, checked against the codec library,
// plus help, usage and error exits (command.h: help 0, bad usage 2, runtime error 1).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "codec/cachegen/cachegen_quantizer.h"
#include "codec/codec.h"
#include "codec/format/kv_dump.h"
#include "codec/ladder.h"
#include "codec/vector_quantizer.h"
#include "common/file_text.h"
#include "common/half.h"
#include "tests/cli/cli_test.h"

namespace fs = std::filesystem;
using namespace kvstream;
using codec::KvCache;

namespace {

using test_support::kKvFixture;
const codec::KvFile& fixture() { return test_support::kv_fixture(); }


// Checks a decoded CacheGen context (read back from a safetensors file) against the codec library:
// per chunk, the values are exactly the quantizer's dequantized values rounded to the file's dtype,
// and within m/(2Q) of the original (plus the output rounding and 1e-6 relative slack).
void expect_cachegen_decode(const KvCache& original, const KvCache& decoded, int64_t chunk_tokens, int level,
                            bool fp16_output) {
  ASSERT_EQ(decoded.shape(), original.shape());
  const auto shape = original.shape();
  const codec::LevelSpec spec = codec::Ladder::from_name_or_path("generic").level_spec(level, shape.layers);
  for (const auto& [t0, t1] : codec::chunk_ranges(shape.tokens, chunk_tokens)) {
    const auto view = original.chunk(t0, t1);
    const codec::QuantizedChunk q = codec::quantize_chunk(view, spec, {});
    KvCache expected(view.shape());
    codec::dequantize_chunk(q, spec, {}, expected);
    for (int row = 0; row < shape.rows(); ++row) {
      const float Q = float(codec::bins_to_q(spec.bins_of_row(row)));
      for (int64_t t = 0; t < t1 - t0; ++t) {
        const float m = common::half_to_float(q.scales[size_t(row) * size_t(t1 - t0) + size_t(t)]);
        const float* x = view.token(row, t);
        const float* e = expected.row_token(row, t);
        const float* y = decoded.token(row % shape.layers, codec::KvPart(row / shape.layers), t0 + t);
        for (int c = 0; c < shape.channels(); ++c) {
          const float want = fp16_output ? common::round_to_half(e[c]) : e[c];
          const float rounding = fp16_output ? std::ldexp(std::fabs(e[c]), -11) + std::ldexp(1.0f, -25) : 0.0f;
          const float bound = m / (2 * Q) + rounding + 1e-6f * (m + std::fabs(x[c]));
          if (y[c] != want || !(std::fabs(x[c] - y[c]) <= bound)) {
            ADD_FAILURE() << "row " << row << " token " << t0 + t << " channel " << c << ": x " << x[c] << " decoded "
                          << y[c] << " expected " << want << " bound " << bound;
            return;
          }
        }
      }
    }
  }
}

class Cli : public test_support::CliTest {
 protected:
  // The files in the temporary directory.
  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
};

TEST_F(Cli, CacheGenLevel2InChunksOf200) {
  const Result enc = ok(std::string("encode --kv ") + kKvFixture + " --codec cachegen --level 2 --chunk-tokens 200 --out X.kvs");
  EXPECT_NE(enc.out.find("X.kvs: 3 chunk(s)"), std::string::npos) << enc.out;
  EXPECT_NE(enc.out.find("level 2"), std::string::npos) << enc.out;
  ASSERT_TRUE(fs::exists(dir_ / "X.kvs"));
  const Result dec = ok("decode X.kvs --out Y.safetensors");
  EXPECT_NE(dec.out.find("from 3 chunk(s)"), std::string::npos) << dec.out;
  ASSERT_TRUE(fs::exists(dir_ / "Y.safetensors"));
  const codec::KvFile y = codec::load_kv(dir_ / "Y.safetensors");
  ASSERT_EQ(y.contexts.size(), 1u);
  EXPECT_EQ(y.dtype, codec::SourceDtype::kFp16);  // the source dtype, by default
  expect_cachegen_decode(fixture().contexts[0], y.contexts[0], 200, 2, true);
}

TEST_F(Cli, CacheGenWholeContextAsF32) {
  // One chunk per file, decoded to f32: exactly the dequantized values.
  ok(std::string("encode --kv ") + kKvFixture + " --codec cachegen --level 1 --context 1 --out X.kvs");
  ok("decode X.kvs --out Y.safetensors --dtype f32");
  const codec::KvFile y = codec::load_kv(dir_ / "Y.safetensors");
  EXPECT_EQ(y.dtype, codec::SourceDtype::kFp32);
  expect_cachegen_decode(fixture().contexts[1], y.contexts.at(0), 512, 1, false);
}

TEST_F(Cli, Fp16RoundTripIsExact) {
  ok(std::string("encode --kv ") + kKvFixture + " --codec fp16 --context 2 --out X.kvs");
  // The file header (44) and one fp16 bitstream: header 32 + one table entry 12 + the values + CRC 4.
  EXPECT_EQ(fs::file_size(dir_ / "X.kvs"), uint64_t(fixture().contexts[2].shape().fp16_bytes()) + 44 + 48);
  ok("decode X.kvs --out Y.safetensors");
  const codec::KvFile y = codec::load_kv(dir_ / "Y.safetensors");
  ASSERT_EQ(y.contexts.size(), 1u);
  EXPECT_EQ(y.dtype, codec::SourceDtype::kFp16);
  ASSERT_EQ(y.contexts[0].shape(), fixture().contexts[2].shape());
  EXPECT_EQ(y.contexts[0].values(), fixture().contexts[2].values());
}

TEST_F(Cli, OfflineCdfTable) {
  const Result build = ok(std::string("cdf-build --kv ") + kKvFixture + " --out T.kvcdf");
  EXPECT_NE(build.out.find("T.kvcdf: table "), std::string::npos) << build.out;
  EXPECT_NE(build.out.find("from 4 chunk(s)"), std::string::npos) << build.out;
  ok(std::string("encode --kv ") + kKvFixture + " --codec cachegen:cdf=offline,table=T.kvcdf --level 2 --context 3 --out X.kvs");
  // The per-chunk bitstream of the same context is larger by about its CDF_ section.
  ok(std::string("encode --kv ") + kKvFixture + " --codec cachegen --level 2 --context 3 --out P.kvs");
  EXPECT_LT(fs::file_size(dir_ / "X.kvs"), fs::file_size(dir_ / "P.kvs"));

  const Result missing = run("decode X.kvs --out Y.safetensors");
  EXPECT_EQ(missing.rc, 1);
  EXPECT_NE(missing.err.find("missing offline CDF table"), std::string::npos) << missing.err;
  EXPECT_NE(missing.err.find("--cdf-table"), std::string::npos) << missing.err;
  EXPECT_FALSE(fs::exists(dir_ / "Y.safetensors"));

  ok("decode X.kvs --cdf-table T.kvcdf --out Y.safetensors");
  const codec::KvFile y = codec::load_kv(dir_ / "Y.safetensors");
  expect_cachegen_decode(fixture().contexts[3], y.contexts.at(0), 512, 2, true);
}

TEST_F(Cli, TransformCodecCalibratedOnTextRoundTripsWithItsCalibration) {
  if (!KVSTREAM_WITH_TORCH) GTEST_SKIP() << "built without LibTorch: calibrate needs the model plugin";
  const Result cal = ok("calibrate --model stories260K --windows 4 --levels 0.05,0.005 --out S.kvcal");
  EXPECT_NE(cal.out.find("S.kvcal: calibration "), std::string::npos) << cal.out;
  EXPECT_NE(cal.out.find("level 2: d = 0.005"), std::string::npos) << cal.out;
  // Keys weighed by the queries by default: a synthesis per K row, so .kvcal version 2; without, version 1.
  ok("calibrate --model stories260K --windows 4 --levels 0.05,0.005 --key-windows 0 --out P.kvcal");
  const auto version = [&](const char* file) { return common::read_file_if_open(dir_ / file)->substr(4, 2); };
  EXPECT_EQ(version("S.kvcal"), std::string("\x02\x00", 2));
  EXPECT_EQ(version("P.kvcal"), std::string("\x01\x00", 2));
  ok(std::string("encode --kv ") + kKvFixture + " --codec transform:cal=S.kvcal --level 2 --context 3 --chunk-tokens 200 --out X.kvs");
  ok(std::string("encode --kv ") + kKvFixture + " --codec quant:bits=8 --context 3 --out Q.kvs");
  EXPECT_LT(2 * fs::file_size(dir_ / "X.kvs"), fs::file_size(dir_ / "Q.kvs"));  // well under 8-bit's size

  // The calibration holds its model: a KV dump of another model is refused, naming both.
  std::map<std::string, std::string> other_model = fixture().metadata;
  other_model["model"] = "smollm2";
  codec::KvFile other;
  other.contexts = {codec::KvCache::from_view(fixture().contexts[3].chunk(0, 64))};
  other.metadata = other_model;
  codec::save_kv(dir_ / "other.safetensors", other);
  test_support::expect_failure(run("encode --kv other.safetensors --codec transform:cal=S.kvcal --out O.kvs"), 1,
                               "was fitted to model \"stories260K\", not to \"smollm2\"");
  EXPECT_FALSE(fs::exists(dir_ / "O.kvs"));
  // Distortions outside the format's range are refused before the model runs.
  test_support::expect_failure(run("calibrate --model stories260K --levels 0.05,1e-9 --out T.kvcal"), 2,
                               "--levels: level 2: relative distortion 1e-09 is outside [1e-08, 1]");
  test_support::expect_failure(run("calibrate --model stories260K --levels 0.005,0.05 --out T.kvcal"), 2, "must decrease");
  test_support::expect_failure(run("calibrate --model stories260K --key-floor 0 --out T.kvcal"), 2,
                               "--key-floor: 0 is outside (0, 1]");
  test_support::expect_failure(run("calibrate --model stories260K --key-windows -1 --out T.kvcal"), 2,
                               "--key-windows: -1 is negative");
  EXPECT_FALSE(fs::exists(dir_ / "T.kvcal"));

  const Result missing = run("decode X.kvs --out Y.safetensors");
  EXPECT_EQ(missing.rc, 1);
  EXPECT_NE(missing.err.find("transform calibration id"), std::string::npos) << missing.err;
  EXPECT_NE(missing.err.find("--calibration"), std::string::npos) << missing.err;
  EXPECT_FALSE(fs::exists(dir_ / "Y.safetensors"));

  ok("decode X.kvs --calibration S.kvcal --out Y.safetensors");
  const auto& x = fixture().contexts[3];
  const codec::KvCache y = codec::load_kv(dir_ / "Y.safetensors").contexts.at(0);
  ASSERT_EQ(y.shape(), x.shape());
  double error = 0, energy = 0;
  for (size_t i = 0; i < x.values().size(); ++i) {
    error += (x.values()[i] - y.values()[i]) * double(x.values()[i] - y.values()[i]);
    energy += double(x.values()[i]) * x.values()[i];
  }
  EXPECT_LT(error / energy, 0.01);
}

TEST_F(Cli, CalibrateLadderWritesALadderTheCodecTakes) {
  if (!KVSTREAM_WITH_TORCH) GTEST_SKIP() << "built without LibTorch: calibrate-ladder needs the model plugin";
  const Result r = ok("calibrate-ladder --model stories260K --codec cachegen --kl 0.1 --windows 4 --context-tokens 128 "
                      "--max-probes 2 --out L.json --json");
  const auto line = nlohmann::json::parse(r.out.substr(0, r.out.find('\n')));
  EXPECT_EQ(line["level"], 1);
  EXPECT_EQ(line["target_kl"], 0.1);
  EXPECT_GT(line["kl_mean"].get<double>(), 0);
  ok(std::string("encode --kv ") + kKvFixture + " --codec cachegen:ladder=L.json --level 1 --context 3 --out X.kvs");
  ok("decode X.kvs --out Y.safetensors");

  const Result bad = run("calibrate-ladder --model stories260K --codec cachegen --kl 0.1,zero --out M.json");
  EXPECT_EQ(bad.rc, 2) << bad.err;
  EXPECT_NE(bad.err.find("--kl: \"zero\""), std::string::npos) << bad.err;
  // A KL no level could have is refused as a KL (it was once reported as the distortion d=100).
  test_support::expect_failure(run("calibrate-ladder --model stories260K --codec cachegen --kl 100 --out M.json"), 2,
                               "--kl: \"100\" is not a KL in (0, 10] nats per token");
  const Result quant = run("calibrate-ladder --model stories260K --codec quant --kl 0.1 --out M.json");
  EXPECT_EQ(quant.rc, 1) << quant.err;
  EXPECT_NE(quant.err.find("cachegen and transform"), std::string::npos) << quant.err;
  EXPECT_FALSE(fs::exists(dir_ / "M.json"));
}

TEST_F(Cli, CodecBenchJson) {
  const Result r = ok("codec-bench --codecs cachegen --min-time 0 --json");
  std::istringstream lines(r.out);
  std::vector<nlohmann::json> rows;
  for (std::string line; std::getline(lines, line);) rows.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(rows.size(), 3u) << r.out;

  uint64_t fp16_bytes = 0, quant8_bytes = 0;
  for (const auto& context : fixture().contexts) {
    fp16_bytes += uint64_t(context.shape().fp16_bytes());
    quant8_bytes += codec::make_codec("quant:bits=8")->encode(context.all(), 1, 0).size();
  }
  const auto cachegen = codec::make_codec("cachegen");
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    SCOPED_TRACE(row.dump());
    for (const char* key : {"codec", "level", "chunk_tokens", "bytes", "ratio_vs_fp16", "ratio_vs_quant8", "rel_mse",
                            "max_abs_err", "encode_mb_s", "decode_mb_s"})
      ASSERT_TRUE(row.contains(key)) << key;
    EXPECT_EQ(row["codec"], "cachegen");
    EXPECT_EQ(row["entropy"], "ac");
    EXPECT_EQ(row["level"], int(i) + 1);
    EXPECT_EQ(row["chunk_tokens"], 512);
    uint64_t bytes = 0;  // the same bitstreams as the library's, one chunk per context
    for (const auto& context : fixture().contexts) bytes += cachegen->encode(context.all(), int(i) + 1, 0).size();
    EXPECT_EQ(row["bytes"].get<uint64_t>(), bytes);
    EXPECT_NEAR(row["ratio_vs_fp16"].get<double>(), double(fp16_bytes) / double(bytes), 0.0006);
    EXPECT_NEAR(row["ratio_vs_quant8"].get<double>(), double(quant8_bytes) / double(bytes), 0.0006);
    EXPECT_GT(row["rel_mse"].get<double>(), 0.0);
    EXPECT_LT(row["rel_mse"].get<double>(), 0.05);
    EXPECT_GT(row["max_abs_err"].get<double>(), 0.0);
    EXPECT_GT(row["encode_mb_s"].get<double>(), 0.0);
    EXPECT_GT(row["decode_mb_s"].get<double>(), 0.0);
    if (i > 0) {  // higher levels: larger, more accurate
      EXPECT_GT(row["bytes"].get<uint64_t>(), rows[i - 1]["bytes"].get<uint64_t>());
      EXPECT_LT(row["rel_mse"].get<double>(), rows[i - 1]["rel_mse"].get<double>());
    }
  }
}

TEST_F(Cli, HelpOfEveryCommandExitsZero) {
  for (const std::string args : {"--help", "-h", "help", "encode --help", "decode --help", "codec-bench --help",
                                 "cdf-build --help", "encode -h"}) {
    const Result r = run(args);
    EXPECT_EQ(r.rc, 0) << args << "\n" << r.err;
    EXPECT_NE(r.out.find("usage"), std::string::npos) << args << "\n" << r.out;
  }
  const Result top = run("--help");
  for (const char* command : {"encode", "decode", "codec-bench", "cdf-build"})
    EXPECT_NE(top.out.find(command), std::string::npos) << command;
  EXPECT_NE(run("encode --help").out.find("cachegen"), std::string::npos);  // lists the codecs
}

TEST_F(Cli, BadUsageExitsTwo) {
  for (const std::string args : {"", "frobnicate", "encode --out X.kvs", "encode --kv a --out b --no-such-option",
                                 "decode --out Y.safetensors", "codec-bench --chunk-tokens 0",
                                 "cdf-build --kv x.safetensors --out T.kvcdf --delta 1"}) {
    const Result r = run(args);
    EXPECT_EQ(r.rc, 2) << "kvstream " << args << "\n" << r.err;
    EXPECT_FALSE(r.err.empty()) << args;
  }
}

TEST_F(Cli, KvsCutAtAChunkBoundaryFailsAndWritesNothing) {
  // 8 chunks of 64 tokens; keep the file header and the first three chunks' bytes.
  ok(std::string("encode --kv ") + kKvFixture + " --codec quant:bits=8 --chunk-tokens 64 --out X.kvs");
  std::vector<char> bytes(fs::file_size(dir_ / "X.kvs"));
  std::ifstream(dir_ / "X.kvs", std::ios::binary).read(bytes.data(), std::streamsize(bytes.size()));
  const size_t chunk_bytes = (bytes.size() - 44) / 8;  // quant:bits=8 chunks of equal tokens are equally long
  std::ofstream(dir_ / "cut.kvs", std::ios::binary).write(bytes.data(), std::streamsize(44 + 3 * chunk_bytes));
  const auto before = files();
  const Result r = run("decode cut.kvs --out Y.safetensors");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("cut.kvs: the file is cut: " + std::to_string(44 + 3 * chunk_bytes) + " of its " +
                       std::to_string(bytes.size()) + " bytes (8 chunks, 512 tokens)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(files(), before);
}

TEST_F(Cli, CorruptKvsFailsWithChecksumAndWritesNothing) {
  ok(std::string("encode --kv ") + kKvFixture + " --codec cachegen --level 2 --out X.kvs");
  std::fstream file(dir_ / "X.kvs", std::ios::in | std::ios::out | std::ios::binary);
  const auto middle = std::streamoff(fs::file_size(dir_ / "X.kvs") / 2);
  file.seekg(middle);
  const char byte = static_cast<char>(file.get() ^ 0x40);
  file.seekp(middle);
  file.put(byte);
  file.close();
  const auto before = files();
  const Result r = run("decode X.kvs --out Y.safetensors");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("checksum"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("X.kvs"), std::string::npos) << r.err;
  EXPECT_EQ(files(), before);  // neither Y.safetensors nor a temporary file
}

TEST_F(Cli, AValueNoCodecEncodesNamesTheFileAndChunk) {
  codec::KvCache kv(codec::KvShape{1, 1, 4, 8});
  kv.values()[13] = std::nanf("");
  codec::save_kv(dir_ / "nan.safetensors", kv, codec::SourceDtype::kFp32);
  for (const std::string spec : {"cachegen", "kivi:bits=2", "fp16"})
    test_support::expect_failure(run("encode --kv nan.safetensors --codec " + spec + " --chunk-tokens 4 --out X.kvs"), 1,
                                 "nan.safetensors: context 0, tokens [0, 4): ");
}

TEST_F(Cli, AFullDiskIsAClearErrorAndWritesNothing) {
  // A file size limit (ulimit -f, in KiB) below the decoded KV's size stands in for a full disk.
  ok(std::string("encode --kv ") + kKvFixture + " --codec quant:bits=8 --out X.kvs");
  const auto before = files();
  const Result r = test_support::run_kvstream(dir_, "decode X.kvs --out Y.safetensors", "ulimit -f 16 &&");
  test_support::expect_failure(r, 1, "File too large");
  EXPECT_NE(r.err.find("Y.safetensors"), std::string::npos) << r.err;
  EXPECT_EQ(files(), before);  // neither Y.safetensors nor Y.safetensors.tmp
}

TEST_F(Cli, ADirectoryGivenAsAFileIsNamedAsOne) {
  fs::create_directories(dir_ / "adir");
  test_support::expect_failure(run("decode adir --out Y.safetensors"), 1, "'adir' is a directory, not a file");
}

TEST_F(Cli, MissingInputsAreNamed) {
  for (const auto& [args, name] : std::vector<std::pair<std::string, std::string>>{
           {"decode nothere.kvs --out Y.safetensors", "nothere.kvs"},
           {"encode --kv missing.safetensors --out X.kvs", "missing.safetensors"},
           {"cdf-build --kv absent.safetensors --out T.kvcdf", "absent.safetensors"},
           {"codec-bench --kv gone.safetensors --codecs fp16 --min-time 0", "gone.safetensors"},
       }) {
    const Result r = run(args);
    EXPECT_NE(r.rc, 0) << args;
    EXPECT_NE(r.err.find(name), std::string::npos) << args << "\n" << r.err;
  }
  EXPECT_EQ(files(), std::vector<std::string>{});  // no output from a failed command
  ok(std::string("encode --kv ") + kKvFixture + " --codec fp16 --out X.kvs");
  const Result r = run("decode X.kvs --cdf-table no-table.kvcdf --out Y.safetensors");
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.err.find("no-table.kvcdf"), std::string::npos) << r.err;
  EXPECT_EQ(files(), std::vector<std::string>{"X.kvs"});
}

// `kvstream data` is the resolver for scripts: the same search order, one place.
TEST_F(Cli, DataWhichFindsFilesWhereCommandsDoAndNamesTheRootsOfAMissingOne) {
  const auto root = dir_ / "data";
  std::filesystem::create_directories(root / "text");
  std::ofstream(root / "text/a.txt") << "a";
  std::ofstream(dir_ / "here.txt") << "b";
  const std::string env = "KVSTREAM_DATA='" + root.string() + "' XDG_CACHE_HOME='" + (dir_ / "cache").string() + "'";
  const Result which = test_support::run_kvstream(dir_, "data which text/a.txt here.txt", env);
  ASSERT_EQ(which.rc, 0) << which.err;
  EXPECT_EQ(which.out, (root / "text/a.txt").string() + "\n" + (dir_ / "here.txt").string() + "\n");

  const Result roots = test_support::run_kvstream(dir_, "data roots", env);
  ASSERT_EQ(roots.rc, 0) << roots.err;
  EXPECT_EQ(roots.out.rfind(root.string() + "\n", 0), 0u) << roots.out;  // $KVSTREAM_DATA first
  EXPECT_NE(roots.out.find((dir_ / "cache/kvstream/data").string() + "\n"), std::string::npos) << roots.out;

  // One missing file: an error naming it and the roots, and no path printed for the others.
  const Result missing = test_support::run_kvstream(dir_, "data which text/a.txt text/b.txt", env);
  expect_failure(missing, 1, "text/b.txt");
  EXPECT_NE(missing.err.find(root.string()), std::string::npos) << missing.err;
  EXPECT_EQ(missing.out, "");
  expect_failure(run("data which"), 2, "which needs at least one FILE");
  expect_failure(run("data where x"), 2, "unknown action \"where\"");
}

}  // namespace
