// The transform codec (codec/transform/transform_codec.cpp) and its calibration (codec/transform/transform_calibration.h):
// RoPE undo/redo, the .kvcal file (round trip, corruption refused), and the codec on held-out contexts
// of the real stories260K fixture, calibrated on the others: the error bound per kept component,
// sinks kept in fp16, sizes falling with the level, and typed errors without the calibration.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <fstream>
#include <random>

#include "codec/codec.h"
#include "codec/format/bitstream_error.h"
#include "codec/transform/rope.h"
#include "codec/transform/transform_calibration.h"
#include "common/half.h"
#include "tests/codec/transform/calibration_bytes.h"
#include "tests/test_support.h"

namespace kvstream::codec {
namespace {

using test_support::repair_crc;

const RopeSpec kStoriesRope{RopePairs::kInterleaved, 10000.0};

const float* row_token(const KvCache& kv, int r, int64_t t) {
  return kv.token(r % kv.shape().layers, static_cast<KvPart>(r / kv.shape().layers), t);
}

// Calibrated on fixture contexts 0..2; context 3 is held out.
const TransformCalibration& fixture_calibration() {
  static const TransformCalibration cal = [] {
    const auto& kv = test_support::kv_fixture();
    std::vector<KvChunkView> views;
    for (size_t i = 0; i < 3; ++i) views.push_back(kv.contexts[i].all());
    TransformCalibration::Options options;
    options.model = "stories260K";
    options.rope = kStoriesRope;
    return TransformCalibration::build(views, options);
  }();
  return cal;
}

class TransformTest : public test_support::TempDirTest {
 protected:
  std::string saved_calibration() {
    const auto path = dir_ / "stories.kvcal";
    fixture_calibration().save(path);
    return path.string();
  }
};

TEST(Rope, UndoThenRedoGivesTheKeyBackInBothLayouts) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  for (auto pairs : {RopePairs::kInterleaved, RopePairs::kRotateHalf}) {
    const RopeAngles angles({pairs, 10000.0}, 8, 1000, 4);
    std::vector<float> key(32), original;
    for (auto& v : key) v = normal(rng);
    original = key;
    angles.rotate(key.data(), 4, 3, /*undo=*/true);
    EXPECT_GT(std::abs(key[0] - original[0]) + std::abs(key[1] - original[1]), 1e-3f);  // position 1003 turns pair 0
    angles.rotate(key.data(), 4, 3, /*undo=*/false);
    for (size_t i = 0; i < key.size(); ++i) EXPECT_NEAR(key[i], original[i], 1e-5f);
  }
}

TEST(Rope, PositionZeroIsTheIdentity) {
  const RopeAngles angles(kStoriesRope, 8, 0, 1);
  std::vector<float> key = {1, 2, 3, 4, 5, 6, 7, 8};
  const auto original = key;
  angles.rotate(key.data(), 1, 0, /*undo=*/true);
  EXPECT_EQ(key, original);
}

TEST_F(TransformTest, CalibrationFileRoundTripsAndKeepsItsId) {
  const auto& cal = fixture_calibration();
  const auto loaded = TransformCalibration::load(saved_calibration());
  EXPECT_EQ(loaded.id(), cal.id());
  EXPECT_EQ(loaded.serialize(), cal.serialize());
  EXPECT_EQ(loaded.layers(), 5);
  EXPECT_EQ(loaded.channels(), 32);
  EXPECT_EQ(loaded.rope().pairs, RopePairs::kInterleaved);
  // Components are unit vectors, orthogonal, variances descending.
  const auto& row = loaded.row(0);
  for (int i = 0; i < 32; ++i)
    for (int j = 0; j < 32; ++j) {
      double dot = 0;
      for (int c = 0; c < 32; ++c) dot += double(row.basis[size_t(i * 32 + c)]) * row.basis[size_t(j * 32 + c)];
      EXPECT_NEAR(dot, i == j ? 1.0 : 0.0, 1e-4) << i << " " << j;
    }
  for (int i = 1; i < 32; ++i) EXPECT_LE(row.variance[size_t(i)], row.variance[size_t(i - 1)]);
}

TEST_F(TransformTest, ACorruptOrCutCalibrationIsRefusedNamingTheFile) {
  auto bytes = fixture_calibration().serialize();
  auto error_of = [&](const std::vector<uint8_t>& b) -> std::string {
    try {
      TransformCalibration::parse(b, "x.kvcal");
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  };
  auto flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x10;
  EXPECT_NE(error_of(flipped).find("x.kvcal: CRC32C mismatch"), std::string::npos);
  EXPECT_NE(error_of({bytes.begin(), bytes.begin() + 100}).find("x.kvcal"), std::string::npos);
  auto foreign = bytes;
  foreign[0] = 'X';
  EXPECT_NE(error_of(foreign).find("magic"), std::string::npos);
  EXPECT_THROW(TransformCalibration::load(dir_ / "absent.kvcal"), std::runtime_error);
}

// The fixture calibration's bytes (version 1: no synthesis) and where its fields lie, for tests to
// make one edit, as a file made by hand or by another program may hold (codec/FORMAT.md
// "Transform calibration" gives the layout); error() makes the CRC32C right again before parsing.
struct FixtureCalibrationBytes : test_support_transform::CalibrationBytes {
  FixtureCalibrationBytes() : CalibrationBytes{fixture_calibration().serialize()} {}
  static constexpr size_t kName = 8, kNameBytes = 11;  // "stories260K"
  static constexpr size_t kShape = kName + kNameBytes, kRows = kShape + 6 + 1 + 8 + 4 + 1 + 12 * 8;
  static constexpr size_t kC = 32, kRowBytes = 8 + 4 * (2 * kC + kC * kC);
  size_t basis(int row, size_t component, size_t channel) const {
    return kRows + size_t(row) * kRowBytes + 8 + 4 * (2 * kC + component * kC + channel);
  }
};

TEST_F(TransformTest, ACalibrationWhoseBasisIsNotOrthonormalIsRefused) {
  EXPECT_EQ(FixtureCalibrationBytes().error(), "no error");
  // Every component of row 0 the same unit vector: each row passes a unit-length check, and the
  // decoder's reconstruction would be off by about 400 %.
  FixtureCalibrationBytes same;
  for (size_t i = 0; i < 32; ++i)
    for (size_t c = 0; c < 32; ++c) same.put_f32(same.basis(0, i, c), c == 0 ? 1.0f : 0.0f);
  EXPECT_NE(same.error().find("x.kvcal: row 0: the basis is not orthonormal"), std::string::npos) << same.error();
  // Component 1 of row 3 tilted towards component 0 by 0.1 and normalised: unit length, not orthogonal.
  FixtureCalibrationBytes tilted;
  std::vector<float> v(32);
  double norm = 0;
  for (size_t c = 0; c < 32; ++c) {
    v[c] = tilted.get_f32(tilted.basis(3, 1, c)) + 0.1f * tilted.get_f32(tilted.basis(3, 0, c));
    norm += double(v[c]) * v[c];
  }
  for (size_t c = 0; c < 32; ++c) tilted.put_f32(tilted.basis(3, 1, c), float(v[c] / std::sqrt(norm)));
  EXPECT_NE(tilted.error().find("row 3: the basis is not orthonormal"), std::string::npos) << tilted.error();
}

TEST_F(TransformTest, ShapesBeyondTheLimitsAreRefusedWithoutOverflow) {
  FixtureCalibrationBytes huge;  // H = D = 65535: H * D overflowed an int before it was checked
  for (size_t at : {huge.kShape + 2, huge.kShape + 4}) huge.bytes[at] = huge.bytes[at + 1] = 0xff;
  EXPECT_NE(huge.error().find("bad shape L=5 H=65535 D=65535"), std::string::npos) << huge.error();
}

TEST_F(TransformTest, ACalibrationNamesItsModelAndCodecsCheckIt) {
  FixtureCalibrationBytes nameless;  // the name's length set to 0 and its bytes removed
  nameless.bytes[6] = nameless.bytes[7] = 0;
  nameless.bytes.erase(nameless.bytes.begin() + nameless.kName,
                       nameless.bytes.begin() + nameless.kName + nameless.kNameBytes);
  EXPECT_NE(nameless.error().find("names no model"), std::string::npos) << nameless.error();
  TransformCalibration::Options anonymous;
  EXPECT_THROW(TransformCalibration::build({test_support::kv_fixture().contexts[0].all()}, anonymous), std::invalid_argument);

  const auto codec = make_codec("transform:cal=" + saved_calibration());
  EXPECT_EQ(codec->fitted_model(), "stories260K");
  EXPECT_NO_THROW(check_codec_model(*codec, "stories260K"));
  EXPECT_NO_THROW(check_codec_model(*codec, "/data/models/stories260K"));  // the same name by another path
  EXPECT_NO_THROW(check_codec_model(*make_codec("cachegen"), "smollm2"));  // fits any model
  try {
    check_codec_model(*codec, "smollm2");
    FAIL() << "a stories260K calibration encoded SmolLM2's KV";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("was fitted to model \"stories260K\", not to \"smollm2\""), std::string::npos)
        << e.what();
  }
}

// Distortions below the format's range (codec/transform/transform_distortion.h) are refused wherever one is
// read; a clamp once decided the values (d = 1e-20: 28 % error; d = 1e-300: every value the mean).
TEST_F(TransformTest, DistortionsOutsideTheFormatsRangeAreRefused) {
  for (const std::string d : {"1e-20", "1e-300", "1e-9", "0x1p-1074", "5e-324", "0", "1.5"}) {
    try {
      make_codec("transform:cal=" + saved_calibration() + ",d=" + d);
      ADD_FAILURE() << "d=" << d << " accepted";
    } catch (const std::invalid_argument& e) {
      const std::string message = e.what();
      EXPECT_TRUE(message.find("is outside [1e-08, 1]") != std::string::npos ||
                  message.find("expected a decimal number") != std::string::npos)
          << d << ": " << message;
    }
  }
  EXPECT_NO_THROW(make_codec("transform:cal=" + saved_calibration() + ",d=1e-8"));
  TransformCalibration::Options options;
  options.model = "stories260K";
  options.level_distortions = {0.1, 1e-9};
  EXPECT_THROW(TransformCalibration::build({test_support::kv_fixture().contexts[0].all()}, options), std::invalid_argument);
  // A bitstream whose TPRM says d = 1e-20 (CRC made right) is refused by the decoder.
  const auto codec = make_codec("transform:cal=" + saved_calibration());
  auto bytes = codec->encode(test_support::kv_fixture().contexts[3].chunk(0, 64), 1, 0);
  const auto tiny = std::bit_cast<uint64_t>(1e-20);
  const auto parsed = parse_bitstream(bytes);
  const size_t d_at = size_t(parsed.section("TPRM").data() - bytes.data()) + 8;
  for (int b = 0; b < 8; ++b) bytes[d_at + size_t(b)] = uint8_t(tiny >> (8 * b));
  repair_crc(bytes);
  try {
    decode_bitstream(bytes, codec->decode_context());
    FAIL() << "decoded at d = 1e-20";
  } catch (const BitstreamError& e) {
    EXPECT_EQ(e.section(), "TPRM");
    EXPECT_NE(std::string(e.what()).find("outside [1e-08, 1]"), std::string::npos) << e.what();
  }
}

// A coefficient more than 2^30 steps from its row's mean cannot be coded: the encoder refuses the
// chunk rather than clamping it to a wrong value.
TEST_F(TransformTest, ACoefficientBeyondTheFormatsRangeIsRefusedNotClamped) {
  KvCache small(KvShape{5, 4, 8, 128});  // calibrated on values of about 1e-3
  for (size_t i = 0; i < small.values().size(); ++i)
    small.values()[i] = float(1e-3 * std::sin(0.37 * double(i)) * double(1 + i % 7));
  TransformCalibration::Options options;
  options.model = "small";
  options.level_distortions = {0.5, 1e-8};
  const auto path = dir_ / "small.kvcal";
  TransformCalibration::build({small.all()}, options).save(path);
  const auto codec = make_codec("transform:cal=" + path.string());
  KvCache large(KvShape{5, 4, 8, 16});  // values of about 1e4: far outside what it was fitted on
  for (size_t i = 0; i < large.values().size(); ++i) large.values()[i] = float(1e4 * std::sin(0.11 * double(i)));
  try {
    codec->encode(large.all(), 2, 8);
    FAIL() << "encoded a coefficient beyond 2^30 steps";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("beyond the format's range"), std::string::npos) << e.what();
  }
  const auto decoded = decode_bitstream(codec->encode(large.all(), 1, 8), codec->decode_context());  // d = 0.5: in range
  for (size_t i = 0; i < large.values().size(); ++i) ASSERT_TRUE(std::isfinite(decoded.kv.values()[i]));
}

TEST_F(TransformTest, HeldOutContextRoundTripsWithinTheQuantizerBound) {
  const auto& cal = fixture_calibration();
  const auto codec = make_codec("transform:cal=" + saved_calibration());
  ASSERT_EQ(codec->levels().size(), cal.level_distortions().size());
  const auto& context = test_support::kv_fixture().contexts[3];
  const KvShape s = context.shape();
  size_t previous_bytes = 0;
  for (int level : codec->levels()) {
    const double d = cal.level_distortions()[size_t(level - 1)];
    for (const auto& [t0, t1] : chunk_ranges(s.tokens, 200)) {  // 200: chunks after the sinks, and a short last one
      const auto chunk = context.chunk(t0, t1);
      const auto bytes = codec->encode(chunk, level, t0);
      const auto decoded = decode_bitstream(bytes, codec->decode_context());
      ASSERT_EQ(decoded.header.codec, CodecId::kTransform);
      ASSERT_EQ(decoded.kv.shape(), chunk.shape());
      const RopeAngles angles(cal.rope(), s.head_dim, t0, t1 - t0);
      for (int r = 0; r < s.rows(); ++r) {
        const auto& row = cal.row(r);
        const double step = cal.step(r, d);
        const auto classes = cal.classes(r, step);
        for (int64_t t = 0; t < t1 - t0; ++t) {
          const float* x = chunk.token(r, t);
          const float* y = row_token(decoded.kv, r, t);
          if (t0 + t < cal.sink_tokens()) {  // sinks: fp16 as stored
            for (int c = 0; c < 32; ++c) ASSERT_EQ(y[c], common::half_to_float(common::float_to_half(x[c])));
            continue;
          }
          // In the basis (RoPE undone): each kept component within step / 2 (plus float rounding).
          std::vector<float> a(x, x + 32), b(y, y + 32);
          if (r < s.layers) {
            angles.rotate(a.data(), s.kv_heads, t, true);
            angles.rotate(b.data(), s.kv_heads, t, true);
          }
          for (int i = 0; i < 32 && classes[size_t(i)] >= 0; ++i) {
            double err = 0;
            for (int c = 0; c < 32; ++c) err += double(row.basis[size_t(i * 32 + c)]) * (double(a[size_t(c)]) - b[size_t(c)]);
            ASSERT_LE(std::abs(err), step / 2 * 1.001 + 1e-4) << "level " << level << " row " << r << " token " << t0 + t;
          }
        }
      }
    }
    const size_t bytes = codec->encode(context.all(), level, 0).size();
    if (previous_bytes) {
      EXPECT_GT(bytes, previous_bytes) << "level " << level;  // higher level, lower distortion
    }
    previous_bytes = bytes;
  }
}

TEST_F(TransformTest, ErrorFollowsTheDistortionTargetOnHeldOutText) {
  const double d = 0.01;
  const auto& cal = fixture_calibration();
  const auto codec = make_codec("transform:cal=" + saved_calibration() + ",d=0.01");
  const auto& context = test_support::kv_fixture().contexts[3];
  const KvShape s = context.shape();
  const auto decoded = decode_bitstream(codec->encode(context.all(), 1, 0), codec->decode_context());
  // Reverse water-filling aims at d x the row's mean component variance per channel (RoPE and the
  // basis are rotations, so the error is the same in the KV's channels). On held-out text, and with
  // the fp16 sinks, it lands near that, not on it.
  double error = 0, target = 0;
  for (int r = 0; r < s.rows(); ++r) {
    for (int64_t t = cal.sink_tokens(); t < s.tokens; ++t)
      for (int c = 0; c < s.channels(); ++c) {
        const double e = double(context.all().token(r, t)[c]) - row_token(decoded.kv, r, t)[c];
        error += e * e;
      }
    target += d * cal.row(r).mean_variance * double(s.tokens - cal.sink_tokens()) * s.channels();
  }
  EXPECT_LT(error / target, 2.0);
  EXPECT_GT(error / target, 0.3);
}

TEST_F(TransformTest, RowWeightsScaleTheStepAndTravelInTheFile) {
  TransformCalibration cal = fixture_calibration();
  const double step = cal.step(3, 0.01);
  std::vector<double> weights(10, 1.0);
  weights[3] = 4.0;
  cal.set_row_weights(weights);
  EXPECT_NEAR(cal.step(3, 0.01), 2 * step, 1e-12 * step);  // the step grows with the square root
  EXPECT_NE(cal.id(), fixture_calibration().id());
  const auto path = dir_ / "weighted.kvcal";
  cal.save(path);
  EXPECT_EQ(TransformCalibration::load(path).row(3).weight, 4.0);
  weights[0] = 1000;
  EXPECT_THROW(cal.set_row_weights(weights), std::invalid_argument);
  EXPECT_THROW(cal.set_row_weights({1.0}), std::invalid_argument);
}

TEST_F(TransformTest, DecodingWithoutItsCalibrationNamesTheIdAndTheOption) {
  const auto codec = make_codec("transform:cal=" + saved_calibration());
  const auto bytes = codec->encode(test_support::kv_fixture().contexts[3].chunk(0, 64), 1, 0);
  try {
    decode_bitstream(bytes, {});
    FAIL() << "decoded without a calibration";
  } catch (const BitstreamError& e) {
    EXPECT_EQ(e.kind(), BitstreamErrorKind::kMissingCdfTable);
    EXPECT_NE(std::string(e.what()).find("--calibration"), std::string::npos) << e.what();
  }
}

TEST_F(TransformTest, SpecErrorsAndShapeMismatchAreClear) {
  EXPECT_THROW(make_codec("transform"), std::invalid_argument);
  EXPECT_THROW(make_codec("transform:cal=" + saved_calibration() + ",d=2"), std::invalid_argument);
  EXPECT_THROW(make_codec("transform:cal=" + (dir_ / "none.kvcal").string()), std::runtime_error);
  const auto codec = make_codec("transform:cal=" + saved_calibration());
  const KvCache other(KvShape{2, 4, 8, 16});
  try {
    codec->encode(other.all(), 1, 0);
    FAIL() << "encoded a chunk of another shape";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("stories260K"), std::string::npos) << e.what();
  }
  EXPECT_THROW(codec->encode(test_support::kv_fixture().contexts[3].chunk(0, 8), 99, 0), std::invalid_argument);
}

// A row with every component dropped costs no bytes per token, so the payload does not bound the
// decoded size: more than 2^16 tokens per chunk is refused on both sides (found by fuzz_bitstream:
// a 673-byte chunk declaring 5.4 M tokens asked for 7 GB; fuzz/regressions/bitstream/).
TEST_F(TransformTest, ChunksOfMoreThanTwoToTheSixteenTokensAreRefusedBothWays) {
  const auto codec = make_codec("transform:cal=" + saved_calibration());
  auto bytes = codec->encode(test_support::kv_fixture().contexts[3].chunk(0, 64), 1, 0);
  constexpr size_t kTokensOffset = 28;  // FORMAT.md §1: the header's u32 token count
  const uint32_t declared = (uint32_t(1) << 16) + 1;
  for (int b = 0; b < 4; ++b) bytes[kTokensOffset + size_t(b)] = static_cast<uint8_t>(declared >> (8 * b));
  repair_crc(bytes);
  try {
    decode_bitstream(bytes, codec->decode_context());
    FAIL() << "decoded a chunk of 65537 tokens";
  } catch (const BitstreamError& e) {
    EXPECT_EQ(e.section(), "TPRM");
    EXPECT_NE(std::string(e.what()).find("65536 per chunk"), std::string::npos) << e.what();
  }
  const KvCache long_chunk(KvShape{5, 4, 8, declared});
  EXPECT_THROW(codec->encode(long_chunk.all(), 1, 0), std::invalid_argument);
}

// ladder=PATH (a transform ladder of kvstream calibrate-ladder) sets the levels; a CacheGen ladder,
// or d= beside it, is refused, and so is a transform ladder given to cachegen.
TEST_F(TransformTest, ALadderFileSetsTheLevels) {
  const auto ladder = dir_ / "levels.json";
  std::ofstream(ladder) << R"({"name": "l", "codec": "transform", "levels": [{"level": 1, "distortion": 0.2},
                                                                             {"level": 2, "distortion": 0.002}]})";
  const auto codec = make_codec("transform:cal=" + saved_calibration() + ",ladder=" + ladder.string());
  EXPECT_EQ(codec->levels(), std::vector<int>({1, 2}));
  const auto chunk = test_support::kv_fixture().contexts[3].chunk(0, 64);
  const auto with_d = make_codec("transform:cal=" + saved_calibration() + ",d=0.002");
  EXPECT_EQ(codec->encode(chunk, 2, 0), with_d->encode(chunk, 1, 0));
  EXPECT_LT(codec->encode(chunk, 1, 0).size(), codec->encode(chunk, 2, 0).size());
  EXPECT_THROW(make_codec("transform:cal=" + saved_calibration() + ",ladder=generic"), std::invalid_argument);
  EXPECT_THROW(make_codec("transform:cal=" + saved_calibration() + ",d=0.1,ladder=" + ladder.string()), std::invalid_argument);
  EXPECT_THROW(make_codec("cachegen:ladder=" + ladder.string()), std::invalid_argument);
}

TEST_F(TransformTest, ACorruptGroupIsATypedErrorNotACrash) {
  const auto codec = make_codec("transform:cal=" + saved_calibration());
  const auto bytes = codec->encode(test_support::kv_fixture().contexts[3].chunk(100, 300), 3, 100);
  std::mt19937 rng(3);
  int refused = 0;
  for (int trial = 0; trial < 200; ++trial) {
    auto corrupt = bytes;
    corrupt[kHeaderBytes + rng() % (corrupt.size() - kHeaderBytes - kCrcBytes)] ^= static_cast<uint8_t>(1 + rng() % 255);
    repair_crc(corrupt);
    try {
      decode_bitstream(corrupt, codec->decode_context());
    } catch (const BitstreamError&) {
      ++refused;
    }
  }
  EXPECT_GT(refused, 100);  // most flips break a group, a size or a section; the rest decode to other values
}

}  // namespace
}  // namespace kvstream::codec
