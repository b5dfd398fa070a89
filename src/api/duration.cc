#include "api/duration.h"

#include <cctype>
#include <cmath>
#include <string>

namespace muster::api {
namespace {

// Parses an unsigned decimal ("15", "1.5", ".5") at text[*pos]; false if none.
bool ParseDecimal(std::string_view text, size_t* pos, double* out) {
  size_t start = *pos;
  double value = 0;
  bool digits = false;
  while (*pos < text.size() && std::isdigit(static_cast<unsigned char>(text[*pos]))) {
    value = value * 10 + (text[*pos] - '0');
    ++*pos;
    digits = true;
  }
  if (*pos < text.size() && text[*pos] == '.') {
    ++*pos;
    double scale = 0.1;
    while (*pos < text.size() && std::isdigit(static_cast<unsigned char>(text[*pos]))) {
      value += (text[*pos] - '0') * scale;
      scale /= 10;
      ++*pos;
      digits = true;
    }
  }
  if (!digits) {
    *pos = start;
    return false;
  }
  *out = value;
  return true;
}

// Seconds per unit as Go's time.ParseDuration spells units.
double UnitSeconds(std::string_view unit) {
  if (unit == "h") return 3600;
  if (unit == "m") return 60;
  if (unit == "s") return 1;
  if (unit == "ms") return 1e-3;
  if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") return 1e-6;
  if (unit == "ns") return 1e-9;
  return -1;
}

Status Invalid(std::string_view text) {
  return InvalidArgument("\"" + std::string(text) +
                         "\" is not a duration (seconds like \"90\" or \"1.5\", or "
                         "a duration like \"90s\", \"15m\", \"1h30m\")");
}

}  // namespace

Result<double> ParseDuration(std::string_view text) {
  size_t pos = 0;
  if (!text.empty() && text[0] == '+') pos = 1;
  if (pos >= text.size()) return Invalid(text);
  double number = 0;
  if (!ParseDecimal(text, &pos, &number)) return Invalid(text);
  // A bare number is seconds.
  if (pos == text.size()) return number;
  double total = 0;
  while (true) {
    size_t unit_start = pos;
    while (pos < text.size() && !std::isdigit(static_cast<unsigned char>(text[pos])) &&
           text[pos] != '.') {
      ++pos;
    }
    double unit = UnitSeconds(text.substr(unit_start, pos - unit_start));
    if (unit < 0) return Invalid(text);
    total += number * unit;
    if (pos == text.size()) break;
    if (!ParseDecimal(text, &pos, &number)) return Invalid(text);
    if (pos == text.size()) return Invalid(text);  // "1h30": a number needs a unit
  }
  if (!std::isfinite(total)) return Invalid(text);
  return total;
}

}  // namespace muster::api
