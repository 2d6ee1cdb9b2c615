#include "traces/trace_generators.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "traces/format_number.h"

namespace kvstream::traces {
namespace {

// Uniform in [0, 1) from the top 53 bits of one draw.
double uniform01(std::mt19937_64& rng) { return double(rng() >> 11) * 0x1.0p-53; }

// Exponential with the given mean (> 0); 0 only when the draw is exactly 0.
double exponential(std::mt19937_64& rng, double mean) { return -mean * std::log1p(-uniform01(rng)); }

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

// The most segments a generator makes (~160 MB of segments): beyond, a spec is an error, not a
// std::bad_alloc after minutes of work.
constexpr double kMaxGeneratedSegments = 1e7;

bool is_rate(double bps) { return bps >= 0 && std::isfinite(bps); }
bool is_duration(double s) { return s > 0 && std::isfinite(s); }

// Canonical specs, the names of generated traces.
std::string constant_name(double gbps, double duration_s) {
  return "constant:gbps=" + format_number(gbps) + ",duration_s=" + format_number(duration_s);
}
std::string uniform_name(uint64_t seed, int64_t chunks, double lo_gbps, double hi_gbps) {
  return "uniform:seed=" + std::to_string(seed) + ",chunks=" + std::to_string(chunks) +
         ",lo_gbps=" + format_number(lo_gbps) + ",hi_gbps=" + format_number(hi_gbps);
}
std::string markov_name(uint64_t seed, double good_gbps, double bad_gbps, double good_s, double bad_s, double duration_s) {
  return "markov:seed=" + std::to_string(seed) + ",good_gbps=" + format_number(good_gbps) + ",bad_gbps=" +
         format_number(bad_gbps) + ",good_s=" + format_number(good_s) + ",bad_s=" + format_number(bad_s) +
         ",duration_s=" + format_number(duration_s);
}
std::string step_name(double high_gbps, double low_gbps, double at_s, double duration_s) {
  return "step:high_gbps=" + format_number(high_gbps) + ",low_gbps=" + format_number(low_gbps) +
         ",at_s=" + format_number(at_s) + ",duration_s=" + format_number(duration_s);
}

BandwidthTrace make_constant(double bps, double duration_s, std::string name) {
  require(is_rate(bps), "constant: bandwidth must be finite and >= 0");
  require(is_duration(duration_s), "constant: duration must be finite and > 0");
  return BandwidthTrace({{duration_s, bps}}, std::move(name));
}

BandwidthTrace make_uniform(uint64_t seed, int64_t n_chunks, double lo_gbps, double hi_gbps, std::string name) {
  require(n_chunks >= 1, "uniform: need at least 1 chunk");
  require(double(n_chunks) <= kMaxGeneratedSegments, "uniform: chunks must be at most 10000000");
  require(is_rate(lo_gbps) && is_rate(hi_gbps) && lo_gbps <= hi_gbps, "uniform: need finite 0 <= lo_gbps <= hi_gbps");
  std::mt19937_64 rng(seed);
  std::vector<TraceSegment> segments(static_cast<size_t>(n_chunks));
  for (TraceSegment& s : segments) s = {1.0, (lo_gbps + (hi_gbps - lo_gbps) * uniform01(rng)) * 1e9};
  return BandwidthTrace(std::move(segments), std::move(name), true);
}

BandwidthTrace make_markov(uint64_t seed, double good_bps, double bad_bps, double mean_good_s, double mean_bad_s,
                           double duration_s, std::string name) {
  require(is_rate(good_bps) && is_rate(bad_bps), "markov: bandwidths must be finite and >= 0");
  require(is_duration(mean_good_s) && is_duration(mean_bad_s) && is_duration(duration_s),
          "markov: mean sojourns and duration must be finite and > 0");
  // A good and a bad sojourn per (good_s + bad_s) seconds on average.
  require(2 * duration_s / (mean_good_s + mean_bad_s) <= kMaxGeneratedSegments,
          "markov: duration_s / (good_s + bad_s) must be at most 5000000 (the trace would hold over 10000000 segments)");
  std::mt19937_64 rng(seed);
  std::vector<TraceSegment> segments;
  bool good = true;
  for (double left_s = duration_s; left_s > 0; good = !good) {
    const double sojourn_s = exponential(rng, good ? mean_good_s : mean_bad_s);
    if (sojourn_s <= 0) continue;  // a zero-length sojourn: the state flips with no segment
    segments.push_back({std::min(sojourn_s, left_s), good ? good_bps : bad_bps});
    require(double(segments.size()) <= 2 * kMaxGeneratedSegments, "markov: the draws gave over 20000000 segments");
    left_s -= sojourn_s;
  }
  return BandwidthTrace(std::move(segments), std::move(name));
}

BandwidthTrace make_step(double high_bps, double low_bps, double drop_at_s, double duration_s, std::string name) {
  require(is_rate(high_bps) && is_rate(low_bps), "step: bandwidths must be finite and >= 0");
  require(drop_at_s > 0 && drop_at_s < duration_s && std::isfinite(duration_s),
          "step: need 0 < drop time < duration (finite)");
  return BandwidthTrace({{drop_at_s, high_bps}, {duration_s - drop_at_s, low_bps}}, std::move(name));
}

// The key=value items of one spec, checked against the generator's keys as they are read.
class SpecArgs {
 public:
  SpecArgs(std::string spec, std::string_view items, std::vector<std::string> known)
      : spec_(std::move(spec)), known_(std::move(known)) {
    for (size_t begin = 0; begin <= items.size();) {
      const size_t comma = std::min(items.find(',', begin), items.size());
      const std::string_view item = items.substr(begin, comma - begin);
      const size_t eq = item.find('=');
      if (eq == std::string_view::npos || eq == 0)
        fail("expected key=value, found '" + std::string(item) + "'");
      const std::string key(item.substr(0, eq));
      if (std::find(known_.begin(), known_.end(), key) == known_.end()) fail("unknown key '" + key + "'; " + keys());
      if (!values_.emplace(key, std::string(item.substr(eq + 1))).second) fail("key '" + key + "' given twice");
      begin = comma + 1;
    }
  }

  // The number under `key` (or `fallback` when absent and one is given), finite.
  double number(const std::string& key, std::optional<double> fallback = std::nullopt) const {
    const auto it = values_.find(key);
    if (it == values_.end()) {
      if (!fallback) fail("missing key '" + key + "'; " + keys());
      return *fallback;
    }
    double value = 0;
    const std::string& text = it->second;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty() || !std::isfinite(value))
      fail("expected a number for '" + key + "', found '" + text + "'");
    return value;
  }
  double gbps(const std::string& key, std::optional<double> fallback = std::nullopt) const {
    const double value = number(key, fallback);
    if (value < 0) fail("expected '" + key + "' >= 0, found " + values_.at(key));
    return value;
  }
  double seconds(const std::string& key) const {
    const double value = number(key);
    if (value <= 0) fail("expected '" + key + "' > 0, found " + values_.at(key));
    return value;
  }
  uint64_t integer(const std::string& key) const {
    const auto it = values_.find(key);
    if (it == values_.end()) fail("missing key '" + key + "'; " + keys());
    uint64_t value = 0;
    const std::string& text = it->second;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty())
      fail("expected a non-negative integer for '" + key + "', found '" + text + "'");
    return value;
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw std::invalid_argument("generator spec '" + spec_ + "': " + what);
  }

 private:
  std::string keys() const {
    std::string text = "keys are";
    for (const std::string& key : known_) text += " " + key;
    return text;
  }

  std::string spec_;
  std::vector<std::string> known_;
  std::map<std::string, std::string> values_;
};

const std::map<std::string, std::vector<std::string>>& generator_keys() {
  static const std::map<std::string, std::vector<std::string>> keys = {
      {"constant", {"gbps", "duration_s"}},
      {"uniform", {"seed", "chunks", "lo_gbps", "hi_gbps"}},
      {"markov", {"seed", "good_gbps", "bad_gbps", "good_s", "bad_s", "duration_s"}},
      {"step", {"high_gbps", "low_gbps", "at_s", "duration_s"}},
  };
  return keys;
}

}  // namespace

BandwidthTrace constant(double bps, double duration_s) {
  return make_constant(bps, duration_s, constant_name(bps / 1e9, duration_s));
}

BandwidthTrace cachegen_uniform(uint64_t seed, int64_t n_chunks, double lo_gbps, double hi_gbps) {
  return make_uniform(seed, n_chunks, lo_gbps, hi_gbps, uniform_name(seed, n_chunks, lo_gbps, hi_gbps));
}

BandwidthTrace markov(uint64_t seed, double good_bps, double bad_bps, double mean_good_s, double mean_bad_s,
                      double duration_s) {
  return make_markov(seed, good_bps, bad_bps, mean_good_s, mean_bad_s, duration_s,
                     markov_name(seed, good_bps / 1e9, bad_bps / 1e9, mean_good_s, mean_bad_s, duration_s));
}

BandwidthTrace step_drop(double high_bps, double low_bps, double drop_at_s, double duration_s) {
  return make_step(high_bps, low_bps, drop_at_s, duration_s, step_name(high_bps / 1e9, low_bps / 1e9, drop_at_s, duration_s));
}

bool is_generator_spec(const std::string& text) {
  const size_t colon = text.find(':');
  return colon != std::string::npos && generator_keys().count(text.substr(0, colon)) > 0;
}

BandwidthTrace make_generated_trace(const std::string& spec) {
  const size_t colon = spec.find(':');
  const std::string name = spec.substr(0, colon);
  const auto known = generator_keys().find(name);
  if (known == generator_keys().end())
    throw std::invalid_argument("generator spec '" + spec + "': unknown generator '" + name +
                                "'; expected constant, uniform, markov or step (name:key=value,...)");
  if (colon == std::string::npos)
    throw std::invalid_argument("generator spec '" + spec + "': expected " + name + ":key=value,...");
  const SpecArgs args(spec, std::string_view(spec).substr(colon + 1), known->second);
  try {
    if (name == "constant") {
      const double gbps = args.gbps("gbps"), duration_s = args.number("duration_s", 1.0);
      return make_constant(gbps * 1e9, duration_s, constant_name(gbps, duration_s));
    }
    if (name == "uniform") {
      const uint64_t seed = args.integer("seed");
      const auto chunks = int64_t(std::min<uint64_t>(args.integer("chunks"), std::numeric_limits<int64_t>::max()));
      const double lo = args.gbps("lo_gbps", 0.1), hi = args.gbps("hi_gbps", 10.0);
      return make_uniform(seed, chunks, lo, hi, uniform_name(seed, chunks, lo, hi));
    }
    if (name == "markov") {
      const uint64_t seed = args.integer("seed");
      const double good = args.gbps("good_gbps"), bad = args.gbps("bad_gbps");
      const double good_s = args.seconds("good_s"), bad_s = args.seconds("bad_s"), duration_s = args.seconds("duration_s");
      return make_markov(seed, good * 1e9, bad * 1e9, good_s, bad_s, duration_s,
                         markov_name(seed, good, bad, good_s, bad_s, duration_s));
    }
    const double high = args.gbps("high_gbps"), low = args.gbps("low_gbps");
    const double at_s = args.seconds("at_s"), duration_s = args.seconds("duration_s");
    return make_step(high * 1e9, low * 1e9, at_s, duration_s, step_name(high, low, at_s, duration_s));
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    if (what.rfind("generator spec", 0) == 0) throw;
    args.fail(what);
  }
}

}  // namespace kvstream::traces
