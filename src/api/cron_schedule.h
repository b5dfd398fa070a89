// CronSchedule: a CronJob's spec.schedule as Kubernetes reads it (robfig/cron's
// standard parser): five fields, minute (0-59), hour (0-23), day of month (1-31),
// month (1-12 or JAN-DEC) and day of week (0-6 or SUN-SAT); each a comma list of
// `*` or `?`, N, N-M, with an optional `/step` (`N/step` runs to the field's
// maximum); or one of @yearly, @annually, @monthly, @weekly, @daily, @midnight,
// @hourly. When both day fields are restricted a day matches either (cron's rule);
// when one is `*` or `?`, both must match. Times are civil minutes of the CronJob's
// time zone (the caller converts), so daylight-saving gaps are the caller's.
#pragma once

#include <cctz/civil_time.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace muster::api {

class CronSchedule {
 public:
  // InvalidArgument with robfig/cron's wording of what is wrong.
  static Result<CronSchedule> Parse(std::string_view text);

  // The first minute strictly after `after` that the schedule names; nullopt when none
  // within five years (a day that never comes, such as 30 2 / February 30th).
  std::optional<cctz::civil_minute> Next(cctz::civil_minute after) const;
  // The last minute at or before `at` that the schedule names; nullopt when none
  // within the five years before it.
  std::optional<cctz::civil_minute> Prev(cctz::civil_minute at) const;

 private:
  bool DayMatches(const cctz::civil_day& day) const;

  uint64_t minutes_ = 0;  // bit m: minute m
  uint32_t hours_ = 0;
  uint32_t days_ = 0;      // bit d: day of month d (1-31)
  uint32_t months_ = 0;    // bit m: month m (1-12)
  uint32_t weekdays_ = 0;  // bit d: Sunday 0 .. Saturday 6
  bool day_star_ = false;  // day of month was `*` or `?`
  bool weekday_star_ = false;
};

// Whether `name` can name a zone of the time zone database (letters, digits, `_-+/`,
// no `..`, not absolute): what may be looked up there (decode_cronjob.cc).
bool IsTimeZoneName(std::string_view name);

}  // namespace muster::api
