// The check the JSON-format targets share: what a reader accepted, its writer writes, and the
// reader reads that back to the same thing (written twice, the JSON is equal). A reader that
// accepts a file its own writer cannot reproduce loses or invents a field.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "fuzz/fuzz_support.h"

namespace kvstream::fuzz {

// `value` was read from a file; `from_json(json, where)` is its reader, `to_json(value)` its writer.
template <class T, class FromJson, class ToJson>
void check_round_trip(const T& value, FromJson from_json, ToJson to_json) {
  const nlohmann::json written = to_json(value);
  nlohmann::json rewritten;
  try {
    rewritten = to_json(from_json(written, "written"));
  } catch (const std::exception& e) {
    report_finding(std::string("what was read does not read back once written: ") + e.what());
  }
  if (rewritten != written)
    report_finding("what was read reads back different once written:\n" + written.dump() + "\n" + rewritten.dump());
}

}  // namespace kvstream::fuzz
