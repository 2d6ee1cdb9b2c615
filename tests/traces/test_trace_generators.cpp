// Generators: determinism (a pinned value guards against platform differences), ranges, the
// Markov chain's time shares, and the spec parser's results and errors.
#include <gtest/gtest.h>

#include <stdexcept>

#include "traces/trace_generators.h"

namespace kvstream::traces {
namespace {

std::vector<double> capacities(const BandwidthTrace& t) {
  std::vector<double> values;
  for (const auto& s : t.segments()) values.push_back(s.capacity_bps);
  return values;
}

TEST(TraceGenerators, Constant) {
  const BandwidthTrace c = constant(1e9, 2);
  ASSERT_EQ(c.segments().size(), 1u);
  EXPECT_DOUBLE_EQ(c.duration_s(), 2);
  EXPECT_DOUBLE_EQ(c.mean_bps(), 1e9);
  EXPECT_EQ(c.name(), "constant:gbps=1,duration_s=2");
  EXPECT_THROW(constant(-1), std::invalid_argument);
  EXPECT_THROW(constant(1, 0), std::invalid_argument);
}

TEST(TraceGenerators, CacheGenUniformIsSeededAndInRange) {
  const BandwidthTrace a = cachegen_uniform(1, 1000);
  EXPECT_TRUE(a.chunk_indexed());
  ASSERT_EQ(a.segments().size(), 1000u);
  EXPECT_EQ(capacities(a), capacities(cachegen_uniform(1, 1000)));
  EXPECT_NE(capacities(a), capacities(cachegen_uniform(2, 1000)));
  double lo = 1e100, hi = 0;
  for (const auto& s : a.segments()) {
    EXPECT_EQ(s.duration_s, 1.0);
    lo = std::min(lo, s.capacity_bps);
    hi = std::max(hi, s.capacity_bps);
  }
  EXPECT_GE(lo, 0.1e9);
  EXPECT_LT(hi, 10e9);
  EXPECT_LT(lo, 0.2e9);  // 1000 draws cover the range
  EXPECT_GT(hi, 9.9e9);
  EXPECT_NEAR(a.mean_bps(), 5.05e9, 0.3e9);
  EXPECT_EQ(a.name(), "uniform:seed=1,chunks=1000,lo_gbps=0.1,hi_gbps=10");
  // Pinned: std::mt19937_64 is fully specified and the transform is this module's own (the values
  // were checked against an independent Python implementation of MT19937-64).
  const BandwidthTrace pinned = cachegen_uniform(1, 2);
  EXPECT_EQ(pinned.segments()[0].capacity_bps, 1425378775.7240732);
  EXPECT_EQ(pinned.segments()[1].capacity_bps, 1450429660.0253525);
  EXPECT_THROW(cachegen_uniform(1, 0), std::invalid_argument);
  EXPECT_THROW(cachegen_uniform(1, 3, 5, 4), std::invalid_argument);
}

TEST(TraceGenerators, MarkovAlternatesWithExponentialSojourns) {
  const BandwidthTrace m = markov(3, 5e9, 0.5e9, 2.0, 1.0, 30000);
  EXPECT_NEAR(m.duration_s(), 30000, 1e-6);
  EXPECT_EQ(capacities(m), capacities(markov(3, 5e9, 0.5e9, 2.0, 1.0, 30000)));
  EXPECT_NE(capacities(m), capacities(markov(4, 5e9, 0.5e9, 2.0, 1.0, 30000)));
  double good_s = 0;
  for (size_t k = 0; k < m.segments().size(); ++k) {
    EXPECT_EQ(m.segments()[k].capacity_bps, k % 2 == 0 ? 5e9 : 0.5e9) << k;  // starts good, alternates
    if (k % 2 == 0) good_s += m.segments()[k].duration_s;
  }
  EXPECT_NEAR(good_s / m.duration_s(), 2.0 / 3.0, 0.02);
  EXPECT_NEAR(double(m.segments().size()), 30000 / 1.5, 30000 / 1.5 * 0.05);  // one sojourn per 1.5 s on average
  EXPECT_THROW(markov(1, 1, 1, 0, 1, 10), std::invalid_argument);
}

TEST(TraceGenerators, SpecsThatWouldExhaustMemoryAreRefused) {
  // Before: std::bad_alloc after filling memory.
  for (const auto& [spec, message] : std::vector<std::pair<std::string, std::string>>{
           {"markov:seed=1,good_gbps=1,bad_gbps=0.1,good_s=1e-9,bad_s=1e-9,duration_s=1e6", "at most 5000000"},
           {"markov:seed=1,good_gbps=1,bad_gbps=0.1,good_s=1,bad_s=1,duration_s=1e300", "at most 5000000"},
           {"uniform:seed=1,chunks=100000000000,lo_gbps=1,hi_gbps=2", "chunks must be at most 10000000"}}) {
    try {
      make_generated_trace(spec);
      ADD_FAILURE() << spec;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
}

TEST(TraceGenerators, StepDrop) {
  const BandwidthTrace s = step_drop(5e9, 0.5e9, 1, 10);
  ASSERT_EQ(s.segments().size(), 2u);
  EXPECT_DOUBLE_EQ(s.bits_between(0, 10), 5e9 + 9 * 0.5e9);
  EXPECT_DOUBLE_EQ(s.capacity_bps(1.0), 0.5e9);
  EXPECT_EQ(s.name(), "step:high_gbps=5,low_gbps=0.5,at_s=1,duration_s=10");
  EXPECT_THROW(step_drop(1, 1, 10, 10), std::invalid_argument);
  EXPECT_THROW(step_drop(1, 1, 0, 10), std::invalid_argument);
}

TEST(TraceGenerators, SpecsMatchTheFunctions) {
  const BandwidthTrace c = make_generated_trace("constant:gbps=1");
  EXPECT_EQ(c.name(), "constant:gbps=1,duration_s=1");
  EXPECT_DOUBLE_EQ(c.mean_bps(), 1e9);
  const BandwidthTrace u = make_generated_trace("uniform:seed=1,chunks=10,lo_gbps=0.1,hi_gbps=10");
  EXPECT_EQ(capacities(u), capacities(cachegen_uniform(1, 10)));
  EXPECT_EQ(u.name(), cachegen_uniform(1, 10).name());
  EXPECT_EQ(capacities(make_generated_trace("uniform:chunks=10,seed=1")), capacities(u));  // defaults, any order
  const BandwidthTrace m = make_generated_trace("markov:seed=1,good_gbps=5,bad_gbps=0.5,good_s=2,bad_s=1,duration_s=60");
  EXPECT_EQ(capacities(m), capacities(markov(1, 5e9, 0.5e9, 2, 1, 60)));
  EXPECT_EQ(m.name(), "markov:seed=1,good_gbps=5,bad_gbps=0.5,good_s=2,bad_s=1,duration_s=60");
  const BandwidthTrace s = make_generated_trace("step:high_gbps=5,low_gbps=0.5,at_s=1,duration_s=10");
  EXPECT_EQ(capacities(s), capacities(step_drop(5e9, 0.5e9, 1, 10)));
  // A generated trace's name is its canonical spec.
  EXPECT_EQ(make_generated_trace(m.name()).name(), m.name());
  EXPECT_TRUE(is_generator_spec("constant:gbps=1"));
  EXPECT_TRUE(is_generator_spec("markov:"));
  EXPECT_FALSE(is_generator_spec("constant"));
  EXPECT_FALSE(is_generator_spec("traces/mahimahi/x.down"));
  EXPECT_FALSE(is_generator_spec("bw.jsonl#1"));
}

TEST(TraceGenerators, SpecErrors) {
  for (const auto& [spec, message] : std::vector<std::pair<std::string, std::string>>{
           {"sine:gbps=1", "unknown generator 'sine'; expected constant, uniform, markov or step"},
           {"constant", "expected constant:key=value"},
           {"constant:", "expected key=value, found ''"},
           {"constant:gbps", "expected key=value, found 'gbps'"},
           {"constant:gbps=1,mbps=2", "unknown key 'mbps'; keys are gbps duration_s"},
           {"constant:gbps=1,gbps=2", "key 'gbps' given twice"},
           {"constant:gbps=abc", "expected a number for 'gbps', found 'abc'"},
           {"constant:gbps=", "expected a number for 'gbps', found ''"},
           {"constant:gbps=-1", "expected 'gbps' >= 0, found -1"},
           {"constant:gbps=1,duration_s=0", "duration must be finite and > 0"},
           {"markov:seed=1", "missing key 'good_gbps'"},
           {"markov:seed=1,good_gbps=1,bad_gbps=0,good_s=0,bad_s=1,duration_s=5", "expected 'good_s' > 0, found 0"},
           {"uniform:seed=-1,chunks=3", "expected a non-negative integer for 'seed', found '-1'"},
           {"uniform:seed=1.5,chunks=3", "expected a non-negative integer for 'seed'"},
           {"uniform:seed=1,chunks=0", "need at least 1 chunk"},
           {"uniform:seed=1,chunks=3,lo_gbps=5,hi_gbps=1", "lo_gbps <= hi_gbps"},
           {"step:high_gbps=1,low_gbps=1,at_s=5,duration_s=2", "0 < drop time < duration"},
       }) {
    try {
      make_generated_trace(spec);
      ADD_FAILURE() << spec;
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("generator spec '" + spec + "'"), std::string::npos) << what;
      EXPECT_NE(what.find(message), std::string::npos) << spec << ": " << what;
    }
  }
}

}  // namespace
}  // namespace kvstream::traces
