// parse_json (common/json_reader.h): what parses but would harm or mislead is refused with the
// text's name, never a crash: nesting of any depth, duplicate keys, numbers beyond a double.
#include <gtest/gtest.h>

#include <string>

#include "common/json_reader.h"

namespace kvstream::common {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_json(text, "in.json");
  } catch (const JsonError& e) {
    return e.what();
  }
  ADD_FAILURE() << "parsed: " << text.substr(0, 80);
  return "";
}

TEST(ParseJson, ReadsOrdinaryJson) {
  const auto j = parse_json(R"({"a": [1, 2.5, {"b": null}], "c": "x"})", "in.json");
  EXPECT_EQ(j.at("a").at(1).get<double>(), 2.5);
  EXPECT_EQ(parse_json(std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']'), "in.json").size(), 1u);
}

TEST(ParseJson, DeepNestingIsAnErrorNotACrash) {
  // 70,000 levels: nlohmann would parse it, and dump() in an error message would overflow the stack.
  const std::string deep = "{\"bw\": " + std::string(70000, '[') + std::string(70000, ']') + "}";
  EXPECT_EQ(error_of(deep), "in.json: JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  EXPECT_NE(error_of(std::string(kMaxJsonDepth + 1, '[') + std::string(kMaxJsonDepth + 1, ']')).find("nested deeper"),
            std::string::npos);
}

TEST(ParseJson, DuplicateKeysAreAnError) {
  EXPECT_EQ(error_of(R"({"slo_s": 1, "slo_s": 2})"), "in.json: duplicate key \"slo_s\" at depth 1");
  EXPECT_NE(error_of(R"({"a": {"x": 1, "x": 1}})").find("duplicate key \"x\""), std::string::npos);
  // The same key in two objects is fine.
  EXPECT_NO_THROW(parse_json(R"([{"x": 1}, {"x": 2}])", "in.json"));
}

TEST(ParseJson, SyntaxAndOverflowNameTheText) {
  EXPECT_NE(error_of(R"({"a": )").find("in.json: invalid JSON: "), std::string::npos);
  EXPECT_NE(error_of("{\n  \"a\": 1e400}").find("in.json: invalid JSON: line 2, column 8: the number 1e400 is beyond "
                                               "the range of a double"),
            std::string::npos)
      << error_of("{\n  \"a\": 1e400}");
  EXPECT_EQ(error_of(R"({"a": )").find("[json.exception"), std::string::npos) << error_of(R"({"a": )");
}

TEST(JsonNodeName, NamesCannotLeaveTheirDirectory) {
  const auto j = parse_json(R"({"a": "..", "b": ".", "c": ".hidden", "d": "run-1.v2", "e": "../x"})", "c.json");
  for (const char* key : {"a", "b", "c"})
    EXPECT_THROW(JsonNode(j, "c.json").at(key).name(), JsonError) << key;
  EXPECT_EQ(JsonNode(j, "c.json").at("d").name(), "run-1.v2");
  try {
    JsonNode(j, "c.json").at("e").name();
    ADD_FAILURE();
  } catch (const JsonError& e) {
    EXPECT_NE(std::string(e.what()).find("c.json: $.e: expected a name"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kvstream::common
