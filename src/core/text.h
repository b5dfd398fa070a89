// Small text helpers for annotation and configuration values ("a, b;c").
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace muster {

// An ASCII decimal digit (std::isdigit depends on the locale and takes an int).
constexpr bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// `s` with A-Z as a-z (ASCII only: Kubernetes names and HTTP header names).
std::string AsciiLower(std::string_view s);

// `s` without leading and trailing spaces, tabs, CR and LF.
std::string_view TrimSpace(std::string_view s);

// `s` split at every `sep`, each piece trimmed; empty pieces are kept ("a,,b" has 3).
std::vector<std::string> SplitTrimmed(std::string_view s, char sep);

// `parts` with `sep` between each two ({"a", "b"}, ", " -> "a, b").
std::string JoinStrings(const std::vector<std::string>& parts, std::string_view sep);

}  // namespace muster
