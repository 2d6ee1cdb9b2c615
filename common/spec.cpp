#include "common/spec.h"

#include <charconv>
#include <cmath>
#include <stdexcept>

namespace kvstream::common {

Spec Spec::named(const std::string& text, const std::string& kind) {
  Spec spec;
  spec.kind_ = kind;
  spec.text_ = text;
  spec.name_ = text.substr(0, text.find(':'));
  if (spec.name_.empty()) spec.fail("missing the name before ':'");
  return spec;
}

Spec Spec::parse(const std::string& text, const std::string& kind) {
  Spec spec = named(text, kind);
  const size_t colon = text.find(':');
  if (colon == std::string::npos) return spec;
  const std::string rest = text.substr(colon + 1);
  for (size_t begin = 0; begin <= rest.size();) {
    size_t end = std::min(rest.find(',', begin), rest.size());
    size_t eq = rest.find('=', begin);
    const bool quoted = eq < end && eq + 1 < rest.size() && rest[eq + 1] == '"';
    if (quoted) {  // key="value": the value runs to the next '"' and may hold ','
      const size_t close = rest.find('"', eq + 2);
      if (close == std::string::npos) spec.fail("option \"" + rest.substr(begin) + "\": the quoted value has no closing '\"'");
      end = close + 1;
      if (end < rest.size() && rest[end] != ',')
        spec.fail("option \"" + rest.substr(begin, end - begin) + "\": a ',' or the end must follow the closing '\"'");
    }
    const std::string item = rest.substr(begin, end - begin);
    eq = item.find('=');
    const std::string key = item.substr(0, eq);
    if (item.empty()) spec.fail("empty option");
    if (key.empty()) spec.fail("option \"" + item + "\" has no name");
    if (spec.has(key)) spec.fail("option " + key + " is given twice");
    const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    spec.options_[key] = quoted ? value.substr(1, value.size() - 2) : value;
    begin = end + 1;
  }
  return spec;
}

Spec Spec::parse_argument(const std::string& text, const std::string& kind, const std::string& key) {
  Spec spec = named(text, kind);
  const size_t colon = text.find(':');
  if (colon != std::string::npos) spec.options_[key] = text.substr(colon + 1);
  return spec;
}

std::string Spec::canonical() const {
  std::string out = name_;
  char separator = ':';
  for (const auto& [key, value] : options_) {
    const bool quote = value.find(',') != std::string::npos;  // as parse reads it back
    out += separator + key + (value.empty() ? "" : quote ? "=\"" + value + "\"" : "=" + value);
    separator = ',';
  }
  return out;
}

std::string Spec::string(const std::string& key, const std::string& fallback) const {
  const auto it = options_.find(key);
  return it == options_.end() ? fallback : it->second;
}

double Spec::number(const std::string& key, double fallback) const {
  const auto it = options_.find(key);
  if (it == options_.end()) return fallback;
  // Decimal notation only (1e-3, 0.25): no hex floats, no leading space or sign, nothing beyond a
  // double's range.
  const std::string& text = it->second;
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, std::chars_format::general);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value))
    fail_option(key, "a decimal number");
  return value;
}

int Spec::integer(const std::string& key, int fallback, int lo, int hi) const {
  const auto it = options_.find(key);
  if (it == options_.end()) return fallback;
  const std::string expected = "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(it->second, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != it->second.size() || value < lo || value > hi) fail_option(key, expected);
  return static_cast<int>(value);
}

bool Spec::boolean(const std::string& key, bool fallback) const {
  const auto it = options_.find(key);
  if (it == options_.end()) return fallback;
  if (it->second != "0" && it->second != "1") fail_option(key, "0 or 1");
  return it->second == "1";
}

void Spec::only(const std::vector<std::string>& known) const {
  for (const auto& [key, value] : options_) {
    bool found = false;
    std::string list;
    for (const auto& k : known) {
      found = found || k == key;
      list += (list.empty() ? "" : ", ") + k;
    }
    if (!found) fail("unknown option \"" + key + "\" (options of " + name_ + ": " + (list.empty() ? "none" : list) + ")");
  }
}

void Spec::fail(const std::string& message) const {
  throw std::invalid_argument(kind_ + " \"" + text_ + "\": " + message);
}

void Spec::fail_option(const std::string& key, const std::string& expected) const {
  fail("option " + key + "=" + options_.at(key) + ": expected " + expected);
}

}  // namespace kvstream::common
