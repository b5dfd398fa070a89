#include "api/cron_schedule.h"

#include <array>
#include <cctype>
#include <string>
#include <vector>

namespace muster::api {
namespace {

struct Bounds {
  int min;
  int max;
  const char* const* names;  // lower-case, index + min is the value; null: none
};

constexpr const char* kMonthNames[] = {"jan", "feb", "mar", "apr", "may", "jun",  "jul",
                                       "aug", "sep", "oct", "nov", "dec", nullptr};
constexpr const char* kDayNames[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat", nullptr};

constexpr Bounds kMinute{0, 59, nullptr};
constexpr Bounds kHour{0, 23, nullptr};
constexpr Bounds kDayOfMonth{1, 31, nullptr};
constexpr Bounds kMonth{1, 12, kMonthNames};
constexpr Bounds kDayOfWeek{0, 6, kDayNames};

std::vector<std::string> Split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.emplace_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

std::vector<std::string> Fields(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t start = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > start) out.emplace_back(s.substr(start, i - start));
  }
  return out;
}

// A non-negative decimal that fits the field (larger values fail the range check).
Result<int> ParseInt(const std::string& text) {
  if (!text.empty() && text[0] == '-') {
    return InvalidArgument("negative number (" + text + ") not allowed: " + text);
  }
  if (text.empty() || text.size() > 9) return InvalidArgument("failed to parse int from " + text);
  int v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return InvalidArgument("failed to parse int from " + text);
    v = v * 10 + (c - '0');
  }
  return v;
}

Result<int> ParseIntOrName(const std::string& text, const Bounds& b) {
  if (b.names != nullptr) {
    std::string lower;
    for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (int i = 0; b.names[i] != nullptr; ++i) {
      if (lower == b.names[i]) return b.min + i;
    }
  }
  return ParseInt(text);
}

// One comma-separated element: `*`, `?`, N, N-M, each with an optional /step. Sets
// `star` when it is a bare `*` or `?` (a step above 1 makes it a restriction).
Result<uint64_t> ParseRange(const std::string& expr, const Bounds& b, bool& star) {
  const std::vector<std::string> range_and_step = Split(expr, '/');
  const std::vector<std::string> low_and_high = Split(range_and_step[0], '-');
  int start = 0, end = 0, step = 1;
  bool is_star = false;
  if (low_and_high[0] == "*" || low_and_high[0] == "?") {
    start = b.min;
    end = b.max;
    is_star = true;
  } else {
    auto s = ParseIntOrName(low_and_high[0], b);
    if (!s.ok()) return s.status();
    start = *s;
    if (low_and_high.size() == 1) {
      end = start;
    } else if (low_and_high.size() == 2) {
      auto e = ParseIntOrName(low_and_high[1], b);
      if (!e.ok()) return e.status();
      end = *e;
    } else {
      return InvalidArgument("too many hyphens: " + expr);
    }
  }
  if (range_and_step.size() == 2) {
    auto s = ParseInt(range_and_step[1]);
    if (!s.ok()) return s.status();
    step = *s;
    if (low_and_high.size() == 1 && !is_star) end = b.max;  // "N/step" runs to the maximum
    if (step > 1) is_star = false;
  } else if (range_and_step.size() > 2) {
    return InvalidArgument("too many slashes: " + expr);
  }
  if (start < b.min) {
    return InvalidArgument("beginning of range (" + std::to_string(start) + ") below minimum (" +
                           std::to_string(b.min) + "): " + expr);
  }
  if (end > b.max) {
    return InvalidArgument("end of range (" + std::to_string(end) + ") above maximum (" +
                           std::to_string(b.max) + "): " + expr);
  }
  if (start > end) {
    return InvalidArgument("beginning of range (" + std::to_string(start) +
                           ") beyond end of range (" + std::to_string(end) + "): " + expr);
  }
  if (step == 0) return InvalidArgument("step of range should be a positive number: " + expr);
  uint64_t bits = 0;
  for (int v = start; v <= end; v += step) bits |= uint64_t{1} << v;
  star = star || is_star;
  return bits;
}

Result<uint64_t> ParseField(const std::string& field, const Bounds& b, bool& star) {
  uint64_t bits = 0;
  for (const std::string& expr : Split(field, ',')) {
    auto r = ParseRange(expr, b, star);
    if (!r.ok()) return r.status();
    bits |= *r;
  }
  return bits;
}

int CronWeekday(const cctz::civil_day& d) {
  // cctz counts Monday 0 .. Sunday 6; cron Sunday 0 .. Saturday 6.
  return (static_cast<int>(cctz::get_weekday(d)) + 1) % 7;
}

constexpr int kSearchYears = 5;

}  // namespace

Result<CronSchedule> CronSchedule::Parse(std::string_view text) {
  std::vector<std::string> fields = Fields(text);
  if (fields.empty()) return InvalidArgument("empty spec string");
  if (fields[0][0] == '@') {
    static const std::array<std::pair<const char*, const char*>, 7> kDescriptors = {{
        {"@yearly", "0 0 1 1 *"},
        {"@annually", "0 0 1 1 *"},
        {"@monthly", "0 0 1 * *"},
        {"@weekly", "0 0 * * 0"},
        {"@daily", "0 0 * * *"},
        {"@midnight", "0 0 * * *"},
        {"@hourly", "0 * * * *"},
    }};
    for (const auto& [name, spec] : kDescriptors) {
      if (fields.size() == 1 && fields[0] == name) return Parse(spec);
    }
    return InvalidArgument("unrecognized descriptor: " + std::string(text) +
                           " (muster knows @yearly, @annually, @monthly, @weekly, @daily, "
                           "@midnight and @hourly)");
  }
  if (fields.size() != 5) {
    std::string list;
    for (const std::string& f : fields) list += (list.empty() ? "" : " ") + f;
    return InvalidArgument("expected exactly 5 fields, found " + std::to_string(fields.size()) +
                           ": [" + list + "]");
  }
  CronSchedule s;
  bool unused = false;
  auto minutes = ParseField(fields[0], kMinute, unused);
  if (!minutes.ok()) return minutes.status();
  auto hours = ParseField(fields[1], kHour, unused);
  if (!hours.ok()) return hours.status();
  auto days = ParseField(fields[2], kDayOfMonth, s.day_star_);
  if (!days.ok()) return days.status();
  auto months = ParseField(fields[3], kMonth, unused);
  if (!months.ok()) return months.status();
  auto weekdays = ParseField(fields[4], kDayOfWeek, s.weekday_star_);
  if (!weekdays.ok()) return weekdays.status();
  s.minutes_ = *minutes;
  s.hours_ = static_cast<uint32_t>(*hours);
  s.days_ = static_cast<uint32_t>(*days);
  s.months_ = static_cast<uint32_t>(*months);
  s.weekdays_ = static_cast<uint32_t>(*weekdays);
  return s;
}

bool CronSchedule::DayMatches(const cctz::civil_day& day) const {
  const bool dom = (days_ >> day.day()) & 1u;
  const bool dow = (weekdays_ >> CronWeekday(day)) & 1u;
  if (day_star_ || weekday_star_) return dom && dow;
  return dom || dow;
}

// Field by field, largest first: a field that does not match moves to the start of
// the next value of its unit, and a move that changes a larger unit starts over.
std::optional<cctz::civil_minute> CronSchedule::Next(cctz::civil_minute after) const {
  cctz::civil_minute t = after + 1;
  const auto limit = t.year() + kSearchYears;
  while (t.year() <= limit) {
    if (!((months_ >> t.month()) & 1u)) {
      t = cctz::civil_minute(cctz::civil_month(t) + 1);
      continue;
    }
    if (!DayMatches(cctz::civil_day(t))) {
      t = cctz::civil_minute(cctz::civil_day(t) + 1);
      continue;
    }
    if (!((hours_ >> t.hour()) & 1u)) {
      t = cctz::civil_minute(cctz::civil_hour(t) + 1);
      continue;
    }
    if (!((minutes_ >> t.minute()) & 1u)) {
      t += 1;
      continue;
    }
    return t;
  }
  return std::nullopt;
}

// Next's mirror: a field that does not match moves to the last minute of the
// previous value of its unit.
std::optional<cctz::civil_minute> CronSchedule::Prev(cctz::civil_minute at) const {
  cctz::civil_minute t = at;
  const auto limit = t.year() - kSearchYears;
  while (t.year() >= limit) {
    if (!((months_ >> t.month()) & 1u)) {
      t = cctz::civil_minute(cctz::civil_month(t)) - 1;
      continue;
    }
    if (!DayMatches(cctz::civil_day(t))) {
      t = cctz::civil_minute(cctz::civil_day(t)) - 1;
      continue;
    }
    if (!((hours_ >> t.hour()) & 1u)) {
      t = cctz::civil_minute(cctz::civil_hour(t)) - 1;
      continue;
    }
    if (!((minutes_ >> t.minute()) & 1u)) {
      t -= 1;
      continue;
    }
    return t;
  }
  return std::nullopt;
}

}  // namespace muster::api
