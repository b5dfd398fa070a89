#include "core/duration.h"

#include <gtest/gtest.h>

namespace muster {
namespace {

struct DurationCase {
  const char* text;
  double seconds;
};

void PrintTo(const DurationCase& c, std::ostream* os) { *os << c.text; }

class DurationOk : public ::testing::TestWithParam<DurationCase> {};

TEST_P(DurationOk, Parses) {
  Result<double> r = ParseDurationSeconds(GetParam().text);
  ASSERT_TRUE(r.ok()) << GetParam().text << ": " << r.status().message();
  EXPECT_DOUBLE_EQ(*r, GetParam().seconds) << GetParam().text;
}

INSTANTIATE_TEST_SUITE_P(
    Table, DurationOk,
    ::testing::Values(DurationCase{"90", 90}, DurationCase{"1.5", 1.5}, DurationCase{"0", 0},
                      DurationCase{".5", 0.5}, DurationCase{"5.", 5}, DurationCase{"90s", 90},
                      DurationCase{"15m", 900}, DurationCase{"2h", 7200},
                      DurationCase{"1h30m", 5400}, DurationCase{"1h30m15s", 5415},
                      DurationCase{"1.5h", 5400}, DurationCase{"250ms", 0.25},
                      DurationCase{"10us", 1e-5}, DurationCase{"10\xC2\xB5s", 1e-5},
                      DurationCase{"3ns", 3e-9}, DurationCase{"+90s", 90}, DurationCase{"-1m", -60},
                      DurationCase{"0s", 0}, DurationCase{"1m1m", 120}));

class DurationBad : public ::testing::TestWithParam<const char*> {};

TEST_P(DurationBad, Rejects) {
  Result<double> r = ParseDurationSeconds(GetParam());
  ASSERT_FALSE(r.ok()) << GetParam();
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("is not a duration"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Table, DurationBad,
                         ::testing::Values("", "-", "s", "abc", "1e3", "inf", "nan", "1h30", "10x",
                                           "1 h", " 90", "90 ", "1..5", "1.5.5s", "0x10", "1d",
                                           "h1", "."));

}  // namespace
}  // namespace muster
