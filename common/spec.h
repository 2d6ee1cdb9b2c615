// A spec names a registered thing and its options: "name[:key[=value],...]", e.g. "quant:bits=8",
// "cachegen:delta=10,entropy=rans", "mpc:horizon=5,text=0". A value may be double-quoted to hold ','
// (key="a,b"; the quotes are not part of it, and it cannot hold '"'). Codecs (codec/codec.h) and policies
// (sim/policy.h) are chosen by specs. Parsing checks only the syntax; the owner of the name says which
// options exist (only) and reads their values through the typed getters, so that every error names
// the spec, the option and what was expected:
//   policy "mpc:horizon=x": option horizon=x: expected a number
#pragma once
#include <map>
#include <string>
#include <vector>

namespace kvstream::common {

class Spec {
 public:
  // Parses `text`; `kind` ("codec", "policy") opens every error message. An option given without
  // "=value" is a flag whose value is "". Throws std::invalid_argument for an empty name, an empty
  // option, an option without a key, or a key given twice.
  static Spec parse(const std::string& text, const std::string& kind);
  // "name:ARGUMENT": everything after the first ':' is the value of option `key`, as written (it may
  // hold ':', '=' and ','), e.g. the level name of "fixed:cachegen:2". No ':' gives no option.
  static Spec parse_argument(const std::string& text, const std::string& kind, const std::string& key);

  const std::string& name() const { return name_; }
  const std::string& text() const { return text_; }  // as given
  const std::map<std::string, std::string>& options() const { return options_; }
  // name[:key[=value],...] with the options sorted by key: one spelling per meaning.
  std::string canonical() const;

  bool has(const std::string& key) const { return options_.count(key) > 0; }
  std::string string(const std::string& key, const std::string& fallback) const;
  double number(const std::string& key, double fallback) const;                 // a finite number
  int integer(const std::string& key, int fallback, int lo, int hi) const;      // in [lo, hi]
  bool boolean(const std::string& key, bool fallback) const;                    // "0" or "1"

  // Throws unless every option is in `known`, naming the first unknown one and the known ones.
  void only(const std::vector<std::string>& known) const;
  // Throws std::invalid_argument "<kind> "<text>": <message>".
  [[noreturn]] void fail(const std::string& message) const;

 private:
  static Spec named(const std::string& text, const std::string& kind);  // name only; checks it is not empty
  [[noreturn]] void fail_option(const std::string& key, const std::string& expected) const;

  std::string kind_, text_, name_;
  std::map<std::string, std::string> options_;
};

}  // namespace kvstream::common
