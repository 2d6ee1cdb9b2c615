// Typed access to JSON objects with errors that name where the value came from and its JSON path
// (e.g. "p.json: $.chunks[3].levels[1].bytes: expected a number >= 0, got \"12\""). Used by every
// reader of a JSON file that crosses a module border (profiles, configs).
#pragma once
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kvstream::common {

class JsonError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A JSON value together with its path, for reading with checked types.
class JsonNode {
 public:
  JsonNode(const nlohmann::json& value, std::string where, std::string path = "$")
      : value_(value), where_(std::move(where)), path_(std::move(path)) {}

  const nlohmann::json& value() const { return value_; }
  const std::string& path() const { return path_; }
  bool has(const std::string& key) const { return value_.is_object() && value_.contains(key); }

  JsonNode at(const std::string& key) const;  // required member of an object
  JsonNode at(size_t index) const;            // element of an array
  size_t size() const;                        // of an array (throws if not an array)

  double number() const;
  double number_at_least(double minimum) const;
  double number_in(double lo, double hi) const;
  int64_t integer_at_least(int64_t minimum) const;
  std::string string() const;
  // A string usable as a file or directory name: letters, digits, '.', '_', '-', not starting with
  // '.' (so never "." or "..", which would write outside the directory it is made in).
  std::string name() const;
  bool boolean() const;

  // Throws unless this is an object whose keys are all in `known` (catches misspelt keys), naming
  // the unknown key and the known ones.
  void only_keys(std::initializer_list<const char*> known) const;

  // Throws JsonError "<where>: <path>: <message>".
  [[noreturn]] void fail(const std::string& message) const;

 private:
  const nlohmann::json& value_;
  std::string where_, path_;
};

// Every JSON text kvstream reads goes through parse_json, which refuses what would parse but then
// harm or mislead: nesting deeper than kMaxJsonDepth (anything that walks it recursively, such as
// an error message that prints a value, would overflow the stack) and a key twice in one object
// (which of the two counts?). Throws JsonError "<where>: ..." naming the problem, or with nlohmann's
// message and byte position for a syntax error or a number beyond a double's range.
inline constexpr int kMaxJsonDepth = 64;
nlohmann::json parse_json(std::string_view text, const std::string& where);
// A whole file through parse_json.
nlohmann::json read_json_file(const std::string& path);

}  // namespace kvstream::common
