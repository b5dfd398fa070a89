#include "core/duration.h"

#include <charconv>
#include <cmath>
#include <string>

#include "core/text.h"

namespace muster {
namespace {

// Reads "<digits>[.<digits>]" (at least one digit overall) from the front of `s` and
// consumes it. Digits are checked here, not by from_chars, so that "1e3", "inf" and
// hex floats are rejected: Go rejects them too.
bool ReadDecimal(std::string_view& s, double* value) {
  size_t i = 0;
  std::string int_part;
  std::string frac_part;
  while (i < s.size() && IsDigit(s[i])) int_part += s[i++];
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && IsDigit(s[i])) frac_part += s[i++];
  }
  if (int_part.empty() && frac_part.empty()) return false;
  std::string normalized =
      (int_part.empty() ? "0" : int_part) + "." + (frac_part.empty() ? "0" : frac_part);
  const char* end = normalized.data() + normalized.size();
  auto [ptr, ec] = std::from_chars(normalized.data(), end, *value);
  if (ec != std::errc() || ptr != end || !std::isfinite(*value)) return false;
  s.remove_prefix(i);
  return true;
}

// Seconds per Go duration unit; 0 when `s` does not start with a unit. Consumes it.
double ReadUnit(std::string_view& s) {
  struct Unit {
    std::string_view name;
    double seconds;
  };
  // Longest names first so "ms" is not read as "m" followed by garbage.
  static constexpr Unit kUnits[] = {
      {"ns", 1e-9}, {"us", 1e-6}, {"\xC2\xB5s", 1e-6}, {"\xCE\xBCs", 1e-6},
      {"ms", 1e-3}, {"s", 1.0},   {"m", 60.0},         {"h", 3600.0},
  };
  for (const Unit& u : kUnits) {
    if (s.substr(0, u.name.size()) == u.name) {
      s.remove_prefix(u.name.size());
      return u.seconds;
    }
  }
  return 0;
}

Status Malformed(std::string_view text) {
  return InvalidArgument("\"" + std::string(text) +
                         "\" is not a duration: use seconds (\"90\", \"1.5\") or a Go "
                         "duration (\"90s\", \"15m\", \"2h\", \"1h30m\")");
}

}  // namespace

Result<double> ParseDurationSeconds(std::string_view text) {
  std::string_view s = text;
  double sign = 1;
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) {
    if (s.front() == '-') sign = -1;
    s.remove_prefix(1);
  }
  if (s.empty()) return Malformed(text);

  double first = 0;
  if (!ReadDecimal(s, &first)) return Malformed(text);
  if (s.empty()) return sign * first;  // plain seconds: "90", "1.5"

  double total = 0;
  double number = first;
  while (true) {
    double unit = ReadUnit(s);
    if (unit == 0) return Malformed(text);
    total += number * unit;
    if (s.empty()) break;
    if (!ReadDecimal(s, &number)) return Malformed(text);
  }
  if (!std::isfinite(total)) return Malformed(text);
  return sign * total;
}

}  // namespace muster
