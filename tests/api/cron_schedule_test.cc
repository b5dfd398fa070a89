// CronJob schedules as robfig/cron's standard parser reads them (what kube-apiserver
// validates and kube-controller-manager runs), and batch/v1 CronJob validation.
#include "api/cron_schedule.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_util.h"

namespace muster::api {
namespace {

using testing::Decode;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::Lines;

cctz::civil_minute At(int y, int mo, int d, int h, int mi) {
  return cctz::civil_minute(y, mo, d, h, mi);
}

CronSchedule Parsed(const std::string& text) {
  auto s = CronSchedule::Parse(text);
  EXPECT_TRUE(s.ok()) << text << ": " << s.status().ToString();
  return s.ok() ? *s : CronSchedule();
}

std::string ParseError(const std::string& text) {
  auto s = CronSchedule::Parse(text);
  return s.ok() ? "(parsed)" : s.status().message();
}

TEST(CronSchedule, NextFindsTheFollowingMinuteOfEachField) {
  EXPECT_EQ(Parsed("* * * * *").Next(At(2026, 12, 6, 21, 59)), At(2026, 12, 6, 22, 0));
  EXPECT_EQ(Parsed("*/15 * * * *").Next(At(2026, 12, 6, 21, 15)), At(2026, 12, 6, 21, 30));
  EXPECT_EQ(Parsed("30 2 * * *").Next(At(2026, 12, 6, 21, 0)), At(2026, 12, 7, 2, 30));
  // Month and year boundaries.
  EXPECT_EQ(Parsed("0 0 1 * *").Next(At(2026, 12, 6, 0, 0)), At(2027, 1, 1, 0, 0));
  EXPECT_EQ(Parsed("@yearly").Next(At(2026, 1, 1, 0, 0)), At(2027, 1, 1, 0, 0));
  // Leap day: the next February 29th.
  EXPECT_EQ(Parsed("0 12 29 2 *").Next(At(2026, 3, 1, 0, 0)), At(2028, 2, 29, 12, 0));
  // Never: no February 30th within the search.
  EXPECT_EQ(Parsed("0 0 30 2 *").Next(At(2026, 1, 1, 0, 0)), std::nullopt);
}

TEST(CronSchedule, PrevMirrorsNext) {
  EXPECT_EQ(Parsed("* * * * *").Prev(At(2026, 12, 6, 21, 59)), At(2026, 12, 6, 21, 59));
  EXPECT_EQ(Parsed("*/15 * * * *").Prev(At(2026, 12, 6, 21, 44)), At(2026, 12, 6, 21, 30));
  EXPECT_EQ(Parsed("30 2 * * *").Prev(At(2026, 12, 6, 2, 29)), At(2026, 12, 5, 2, 30));
  EXPECT_EQ(Parsed("0 0 1 * *").Prev(At(2027, 1, 1, 0, 0)), At(2027, 1, 1, 0, 0));
  EXPECT_EQ(Parsed("0 0 1 * *").Prev(At(2026, 12, 31, 23, 59)), At(2026, 12, 1, 0, 0));
  EXPECT_EQ(Parsed("0 12 29 2 *").Prev(At(2027, 3, 1, 0, 0)), At(2024, 2, 29, 12, 0));
  EXPECT_EQ(Parsed("0 0 30 2 *").Prev(At(2026, 1, 1, 0, 0)), std::nullopt);
}

TEST(CronSchedule, RestrictedDayFieldsMatchEitherAStarMakesBothNeeded) {
  // 2026-12-06 is a Sunday. "1st of the month or any Monday": Monday the 7th.
  EXPECT_EQ(Parsed("0 0 1 * MON").Next(At(2026, 12, 6, 0, 0)), At(2026, 12, 7, 0, 0));
  // Day of month `*`: only Mondays.
  EXPECT_EQ(Parsed("0 0 * * 1").Next(At(2026, 12, 6, 0, 0)), At(2026, 12, 7, 0, 0));
  // Day of week `?`: only the 1st.
  EXPECT_EQ(Parsed("0 0 1 * ?").Next(At(2026, 12, 6, 0, 0)), At(2027, 1, 1, 0, 0));
  // A `*/2` step restricts: "1st or every other weekday from Sunday" -> Tuesday the 8th.
  EXPECT_EQ(Parsed("0 0 1 * */2").Next(At(2026, 12, 6, 0, 0)), At(2026, 12, 8, 0, 0));
}

TEST(CronSchedule, NamesRangesStepsAndDescriptors) {
  EXPECT_EQ(Parsed("0 9 * JAN-mar mon-FRI").Next(At(2026, 12, 6, 0, 0)), At(2027, 1, 1, 9, 0));
  // "N/step" runs from N to the maximum.
  EXPECT_EQ(Parsed("50/5 * * * *").Next(At(2026, 12, 6, 0, 56)), At(2026, 12, 6, 1, 50));
  EXPECT_EQ(Parsed("1-10/3,45 * * * *").Next(At(2026, 12, 6, 0, 10)), At(2026, 12, 6, 0, 45));
  EXPECT_EQ(Parsed("@hourly").Next(At(2026, 12, 6, 0, 0)), At(2026, 12, 6, 1, 0));
  EXPECT_EQ(Parsed("@weekly").Next(At(2026, 12, 6, 0, 0)), At(2026, 12, 13, 0, 0));
  EXPECT_EQ(Parsed("  0   0 *  * *  ").Next(At(2026, 12, 6, 0, 0)), At(2026, 12, 7, 0, 0));
}

TEST(CronSchedule, ErrorsSayWhatIsWrongAsUpstreamDoes) {
  EXPECT_EQ(ParseError(""), "empty spec string");
  EXPECT_EQ(ParseError("* * * *"), "expected exactly 5 fields, found 4: [* * * *]");
  EXPECT_EQ(ParseError("0 0 * * * *"), "expected exactly 5 fields, found 6: [0 0 * * * *]");
  EXPECT_EQ(ParseError("60 * * * *"), "end of range (60) above maximum (59): 60");
  EXPECT_EQ(ParseError("* * 0 * *"), "beginning of range (0) below minimum (1): 0");
  EXPECT_EQ(ParseError("* * * * 7"), "end of range (7) above maximum (6): 7");
  EXPECT_EQ(ParseError("5-2 * * * *"), "beginning of range (5) beyond end of range (2): 5-2");
  EXPECT_EQ(ParseError("*/0 * * * *"), "step of range should be a positive number: */0");
  EXPECT_EQ(ParseError("1-2-3 * * * *"), "too many hyphens: 1-2-3");
  EXPECT_EQ(ParseError("1/2/3 * * * *"), "too many slashes: 1/2/3");
  EXPECT_EQ(ParseError("x * * * *"), "failed to parse int from x");
  EXPECT_EQ(ParseError("* * * FOO *"), "failed to parse int from FOO");
  EXPECT_THAT(ParseError("@every 1h"), HasSubstr("unrecognized descriptor: @every"));
}

std::string CronJob(const std::string& spec_lines, const std::string& name = "nightly") {
  return "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: " + name +
         ", namespace: default}\nspec:\n" + spec_lines +
         "  jobTemplate:\n"
         "    spec:\n"
         "      template:\n"
         "        spec:\n"
         "          restartPolicy: Never\n"
         "          containers: [{name: main, image: busybox}]\n";
}

TEST(DecodeCronJob, AValidCronJobDecodesToNoWorkload) {
  auto r = Decode(CronJob(
      "  schedule: \"*/5 * * * *\"\n  timeZone: Europe/Berlin\n  concurrencyPolicy: Forbid\n"
      "  startingDeadlineSeconds: 30\n  successfulJobsHistoryLimit: 2\n"));
  EXPECT_THAT(Lines(r), IsEmpty());
  EXPECT_TRUE(r.manifests.jobs.empty());
}

TEST(DecodeCronJob, BadFieldsAreNamed) {
  EXPECT_THAT(Lines(Decode(CronJob("  schedule: \"61 * * * *\"\n"))),
              ElementsAre(HasSubstr("spec.schedule: end of range (61) above maximum (59)")));
  EXPECT_THAT(Lines(Decode(CronJob("  schedule: \"TZ=UTC 0 * * * *\"\n"))),
              ElementsAre(HasSubstr("cannot use TZ or CRON_TZ in schedule")));
  EXPECT_THAT(Lines(Decode(CronJob("  concurrencyPolicy: Allow\n"))),
              ElementsAre(HasSubstr("spec.schedule")));
  EXPECT_THAT(Lines(Decode(CronJob("  schedule: \"@daily\"\n  concurrencyPolicy: Sometimes\n"))),
              ElementsAre(HasSubstr("spec.concurrencyPolicy")));
  EXPECT_THAT(Lines(Decode(CronJob("  schedule: \"@daily\"\n  timeZone: ../../etc/passwd\n"))),
              ElementsAre(HasSubstr("spec.timeZone: unknown time zone ../../etc/passwd")));
  EXPECT_THAT(Lines(Decode(CronJob("  schedule: \"@daily\"\n  timeZone: Local\n"))),
              ElementsAre(HasSubstr("explicit time zone")));
  EXPECT_THAT(Lines(Decode(CronJob("  schedule: \"@daily\"\n  failedJobsHistoryLimit: -1\n"))),
              ElementsAre(HasSubstr("spec.failedJobsHistoryLimit")));
  EXPECT_THAT(Lines(Decode(CronJob("  schedule: \"@daily\"\n", std::string(53, 'a')))),
              ElementsAre(HasSubstr("must be no more than 52 characters")));
}

TEST(DecodeCronJob, TheJobTemplateIsValidatedAsAJob) {
  auto indexed = Decode(R"(apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: default}
spec:
  schedule: "@daily"
  jobTemplate:
    spec:
      completionMode: Indexed
      parallelism: 2
      template:
        spec:
          restartPolicy: Never
          containers: [{name: main, image: busybox}]
)");
  EXPECT_THAT(Lines(indexed),
              ElementsAre(HasSubstr("spec.jobTemplate.spec.completions: is required")));
  auto always = Decode(R"(apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: default}
spec:
  schedule: "@daily"
  jobTemplate:
    spec:
      template:
        spec:
          containers: [{name: main, image: busybox}]
)");
  EXPECT_THAT(Lines(always),
              ElementsAre(HasSubstr("spec.jobTemplate.spec.template.spec.restartPolicy")));
}

}  // namespace
}  // namespace muster::api
