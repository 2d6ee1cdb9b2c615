#include "common/json_reader.h"

#include <algorithm>

#include <cmath>
#include <cstdio>
#include <set>
#include <vector>
#include <regex>

#include "common/file_text.h"

namespace kvstream::common {

namespace {
std::string shown(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", x);
  return buffer;
}

std::string shown(const nlohmann::json& value) {
  std::string text = value.dump();
  return text.size() > 60 ? text.substr(0, 57) + "..." : text;
}
}  // namespace

void JsonNode::fail(const std::string& message) const { throw JsonError(where_ + ": " + path_ + ": " + message); }

JsonNode JsonNode::at(const std::string& key) const {
  if (!value_.is_object()) fail("expected an object, got " + shown(value_));
  auto it = value_.find(key);
  if (it == value_.end()) fail("missing key \"" + key + "\"");
  return JsonNode(*it, where_, path_ + "." + key);
}

JsonNode JsonNode::at(size_t index) const {
  if (!value_.is_array()) fail("expected an array, got " + shown(value_));
  if (index >= value_.size()) fail("index " + std::to_string(index) + " out of range");
  return JsonNode(value_[index], where_, path_ + "[" + std::to_string(index) + "]");
}

size_t JsonNode::size() const {
  if (!value_.is_array()) fail("expected an array, got " + shown(value_));
  return value_.size();
}

double JsonNode::number() const {
  if (!value_.is_number()) fail("expected a number, got " + shown(value_));
  const double x = value_.get<double>();
  if (!std::isfinite(x)) fail("expected a finite number");
  return x;
}

double JsonNode::number_at_least(double minimum) const {
  const double x = number();
  if (x < minimum) fail("expected a number >= " + shown(minimum) + ", got " + shown(value_));
  return x;
}

double JsonNode::number_in(double lo, double hi) const {
  const double x = number();
  if (x < lo || x > hi) fail("expected a number in [" + shown(lo) + ", " + shown(hi) + "], got " + shown(value_));
  return x;
}

int64_t JsonNode::integer_at_least(int64_t minimum) const {
  if (!value_.is_number_integer()) fail("expected an integer, got " + shown(value_));
  const int64_t x = value_.get<int64_t>();
  if (x < minimum) fail("expected an integer >= " + std::to_string(minimum) + ", got " + shown(value_));
  return x;
}

std::string JsonNode::string() const {
  if (!value_.is_string()) fail("expected a string, got " + shown(value_));
  return value_.get<std::string>();
}

std::string JsonNode::name() const {
  const std::string text = string();
  static const std::regex allowed("[A-Za-z0-9._-]+");
  if (!std::regex_match(text, allowed)) fail("expected a name of letters, digits, '.', '_', '-', got \"" + text + "\"");
  // "." and ".." would name the directory a name is made into, or its parent (results/.. is the
  // working directory, and --overwrite would clear it); a leading '.' hides it.
  if (text.front() == '.') fail("expected a name that does not start with '.', got \"" + text + "\"");
  return text;
}

bool JsonNode::boolean() const {
  if (!value_.is_boolean()) fail("expected true or false, got " + shown(value_));
  return value_.get<bool>();
}

void JsonNode::only_keys(std::initializer_list<const char*> known) const {
  if (!value_.is_object()) fail("expected an object, got " + shown(value_));
  for (const auto& item : value_.items()) {
    bool found = false;
    for (const char* key : known) found = found || item.key() == key;
    if (found) continue;
    std::string list;
    for (const char* key : known) list += (list.empty() ? "" : ", ") + std::string(key);
    fail("unknown key \"" + item.key() + "\" (known: " + list + ")");
  }
}

namespace {

// nlohmann's message without its "[json.exception.<kind>.<id>] " prefix. A number out of a
// double's range (out_of_range 406) comes without a position: it is found in the text.
std::string json_error_text(const nlohmann::json::exception& e, std::string_view text) {
  std::string what = e.what();
  const size_t close = what.find("] ");
  if (what.rfind("[json.exception.", 0) == 0 && close != std::string::npos) what.erase(0, close + 2);
  const std::string quote = "parsing '";
  const size_t begin = what.find(quote);
  if (e.id != 406 || begin == std::string::npos) return what;
  const std::string literal = what.substr(begin + quote.size(), what.rfind('\'') - begin - quote.size());
  const size_t at = literal.empty() ? std::string_view::npos : text.find(literal);
  if (at == std::string_view::npos) return what;
  const size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + long(at), '\n'));
  const size_t line_start = text.rfind('\n', at);
  const size_t column = at - (line_start == std::string_view::npos ? 0 : line_start + 1) + 1;
  return "line " + std::to_string(line) + ", column " + std::to_string(column) + ": the number " + literal +
         " is beyond the range of a double";
}

}  // namespace

nlohmann::json parse_json(std::string_view text, const std::string& where) {
  // Keys seen in each object being parsed, innermost last (the callback sees events in order).
  std::vector<std::set<std::string>> keys;
  const nlohmann::json::parser_callback_t check = [&](int depth, nlohmann::json::parse_event_t event,
                                                      nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (depth >= kMaxJsonDepth)  // depth counts from 0 at the top level
      throw JsonError(where + ": JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    if (event == Event::object_start) keys.emplace_back();
    if (event == Event::object_end) keys.pop_back();
    if (event == Event::key && !keys.back().insert(parsed.get<std::string>()).second)
      throw JsonError(where + ": duplicate key \"" + parsed.get<std::string>() + "\" at depth " + std::to_string(depth));
    return true;
  };
  try {
    return nlohmann::json::parse(text.begin(), text.end(), check);
  } catch (const nlohmann::json::exception& e) {  // syntax (parse_error) or a number out of range (out_of_range)
    throw JsonError(where + ": invalid JSON: " + json_error_text(e, text));
  }
}

nlohmann::json read_json_file(const std::string& path) {
  const auto text = read_file_if_open(path);
  if (!text) throw JsonError(path + ": cannot open file");
  return parse_json(*text, path);
}

}  // namespace kvstream::common
