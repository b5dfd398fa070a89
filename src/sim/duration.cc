#include "sim/duration.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

namespace muster::sim {
namespace {

Status Bad(std::string_view text) {
  return InvalidArgument("\"" + std::string(text) +
                         "\" is not a duration: use seconds (\"90\", \"1.5\") or a duration "
                         "(\"90s\", \"15m\", \"2h\", \"1h30m\")");
}

// Parses a non-negative decimal number at the start of `s`; advances `s`.
bool TakeNumber(std::string_view& s, double& out) {
  size_t n = 0;
  bool digits = false;
  while (n < s.size() && (std::isdigit(static_cast<unsigned char>(s[n])) || s[n] == '.')) {
    digits |= s[n] != '.';
    ++n;
  }
  if (!digits) return false;
  std::string number(s.substr(0, n));
  char* end = nullptr;
  out = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size()) return false;
  s.remove_prefix(n);
  return true;
}

}  // namespace

Result<double> ParseDuration(std::string_view text) {
  std::string_view s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  if (s.empty()) return Bad(text);
  if (s.front() == '+') s.remove_prefix(1);

  double total = 0;
  bool first = true;
  while (!s.empty()) {
    double value = 0;
    if (!TakeNumber(s, value)) return Bad(text);
    if (s.empty()) {
      if (!first) return Bad(text);  // "1h30" is ambiguous
      total = value;                 // plain seconds
      break;
    }
    double unit = 0;
    if (s.starts_with("ms")) {
      unit = 0.001;
      s.remove_prefix(2);
    } else if (s.front() == 's') {
      unit = 1;
      s.remove_prefix(1);
    } else if (s.front() == 'm') {
      unit = 60;
      s.remove_prefix(1);
    } else if (s.front() == 'h') {
      unit = 3600;
      s.remove_prefix(1);
    } else if (s.front() == 'd') {
      unit = 86400;
      s.remove_prefix(1);
    } else {
      return Bad(text);
    }
    total += value * unit;
    first = false;
  }
  if (!std::isfinite(total)) return Bad(text);
  return total;
}

}  // namespace muster::sim
