// The one spec parser of codecs and policies: syntax, typed options and messages that name the spec.
#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>

#include "common/spec.h"

namespace kvstream::common {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Spec, ParsesNameOptionsAndFlags) {
  const Spec spec = Spec::parse("cachegen:ladder=generic,delta", "codec");
  EXPECT_EQ(spec.name(), "cachegen");
  EXPECT_EQ(spec.text(), "cachegen:ladder=generic,delta");
  EXPECT_EQ(spec.string("delta", "x"), "");
  EXPECT_TRUE(spec.has("delta"));
  EXPECT_FALSE(spec.has("sub"));
  EXPECT_EQ(spec.string("sub", "256"), "256");
  EXPECT_EQ(spec.canonical(), "cachegen:delta,ladder=generic");
  EXPECT_EQ(Spec::parse("text", "policy").canonical(), "text");
  EXPECT_TRUE(Spec::parse("text", "policy").options().empty());
}

TEST(Spec, SyntaxErrorsNameTheSpec) {
  EXPECT_EQ(error_of([] { Spec::parse(":x=1", "codec"); }), "codec \":x=1\": missing the name before ':'");
  EXPECT_EQ(error_of([] { Spec::parse("quant:bits=4,,x", "codec"); }), "codec \"quant:bits=4,,x\": empty option");
  EXPECT_EQ(error_of([] { Spec::parse("quant:", "codec"); }), "codec \"quant:\": empty option");
  EXPECT_EQ(error_of([] { Spec::parse("mpc:=3", "policy"); }), "policy \"mpc:=3\": option \"=3\" has no name");
  EXPECT_EQ(error_of([] { Spec::parse("quant:bits=4,bits=5", "codec"); }),
            "codec \"quant:bits=4,bits=5\": option bits is given twice");
}

TEST(Spec, TypedOptionsCheckTheirValues) {
  const Spec spec = Spec::parse("mpc:horizon=5,alpha=0.25,text=0,bad=x,big=99", "policy");
  EXPECT_EQ(spec.integer("horizon", 1, 1, 100), 5);
  EXPECT_EQ(spec.integer("window", 7, 1, 100), 7);
  EXPECT_DOUBLE_EQ(spec.number("alpha", 0.5), 0.25);
  EXPECT_FALSE(spec.boolean("text", true));
  EXPECT_TRUE(spec.boolean("other", true));
  EXPECT_EQ(error_of([&] { spec.number("bad", 0); }), "policy \"mpc:horizon=5,alpha=0.25,text=0,bad=x,big=99\": option bad=x: expected a decimal number");
  EXPECT_NE(error_of([&] { spec.integer("big", 1, 1, 10); }).find("option big=99: expected an integer in [1, 10]"), std::string::npos);
  EXPECT_NE(error_of([&] { spec.integer("alpha", 1, 0, 10); }).find("option alpha=0.25: expected an integer"), std::string::npos);
  EXPECT_NE(error_of([&] { spec.boolean("horizon", true); }).find("option horizon=5: expected 0 or 1"), std::string::npos);
  EXPECT_NE(error_of([&] { Spec::parse("p:x=inf", "policy").number("x", 0); }).find("expected a decimal number"), std::string::npos);
  // Decimal notation only: a hex float once slipped a subnormal distortion past a range check that
  // refused the same value written in decimal.
  for (const char* text : {"p:x=0x1p-1074", "p:x= 1", "p:x=1e999", "p:x=nan", "p:x=1.5.2"}) {
    const std::string error = error_of([&] { Spec::parse(text, "policy").number("x", 0); });
    EXPECT_NE(error.find("expected a decimal number"), std::string::npos) << text << ": " << error;
  }
  EXPECT_DOUBLE_EQ(Spec::parse("p:x=-2.5e-3", "policy").number("x", 0), -2.5e-3);
  EXPECT_DOUBLE_EQ(Spec::parse("p:x=7", "policy").number("x", 0), 7);
}

TEST(Spec, OnlyKnownOptions) {
  EXPECT_NO_THROW(Spec::parse("zstd:level=3", "codec").only({"level"}));
  EXPECT_EQ(error_of([] { Spec::parse("zstd:lvl=3", "codec").only({"level"}); }),
            "codec \"zstd:lvl=3\": unknown option \"lvl\" (options of zstd: level)");
  EXPECT_EQ(error_of([] { Spec::parse("fp16:x", "codec").only({}); }),
            "codec \"fp16:x\": unknown option \"x\" (options of fp16: none)");
}

TEST(Spec, AQuotedValueMayHoldCommas) {
  const Spec spec = Spec::parse("external:cmd=\"python3 p.py a,b=c:d\",timeout_s=2", "policy");
  EXPECT_EQ(spec.string("cmd", ""), "python3 p.py a,b=c:d");
  EXPECT_DOUBLE_EQ(spec.number("timeout_s", 0), 2);
  EXPECT_EQ(spec.canonical(), "external:cmd=\"python3 p.py a,b=c:d\",timeout_s=2");
  EXPECT_EQ(Spec::parse(spec.canonical(), "policy").options(), spec.options());  // canonical reads back
  EXPECT_EQ(Spec::parse("p:x=\"\"", "policy").string("x", "?"), "");
  EXPECT_EQ(Spec::parse("p:x=a\"b", "policy").string("x", ""), "a\"b");  // a quote inside is a character
  EXPECT_EQ(error_of([] { Spec::parse("p:cmd=\"a,b", "policy"); }),
            "policy \"p:cmd=\"a,b\": option \"cmd=\"a,b\": the quoted value has no closing '\"'");
  EXPECT_EQ(error_of([] { Spec::parse("p:cmd=\"a\"b,c=1", "policy"); }),
            "policy \"p:cmd=\"a\"b,c=1\": option \"cmd=\"a\"\": a ',' or the end must follow the closing '\"'");
}

TEST(Spec, AnArgumentKeepsColonsAndEquals) {
  const Spec spec = Spec::parse_argument("fixed:cachegen:delta=10:2", "policy", "level");
  EXPECT_EQ(spec.name(), "fixed");
  EXPECT_EQ(spec.string("level", ""), "cachegen:delta=10:2");
  EXPECT_FALSE(Spec::parse_argument("fixed", "policy", "level").has("level"));
}

}  // namespace
}  // namespace kvstream::common
