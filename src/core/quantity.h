// Quantity: a Kubernetes resource.Quantity, parsed and printed exactly as
// k8s.io/apimachinery/pkg/api/resource does (canonical form, rounding rules).
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace muster {

class Quantity {
 public:
  enum class Format { kDecimalSI, kBinarySI, kDecimalExponent };

  Quantity() = default;

  // Parses "100m", "1.5Gi", "1e3", "-2", "+0.5k"... Rejects what Kubernetes rejects,
  // and also values with more than 38 significant digits (Kubernetes has no limit).
  static Result<Quantity> Parse(std::string_view text);
  static Quantity FromInt(int64_t value, Format format = Format::kDecimalSI);
  static Quantity FromMilli(int64_t milli, Format format = Format::kDecimalSI);

  // Canonical string, as Quantity.String() in Kubernetes ("1536Mi", "1500m", "1k").
  std::string ToString() const;

  // Rounded up to an integer, as Quantity.Value(); saturates at int64 limits.
  int64_t Value() const;
  // Rounded up to milli-units, as Quantity.MilliValue(); saturates at int64 limits.
  int64_t MilliValue() const;
  bool IsZero() const { return mantissa_ == 0; }
  int Sign() const { return mantissa_ > 0 ? 1 : (mantissa_ < 0 ? -1 : 0); }
  Format format() const { return format_; }

  // Exact comparison regardless of format: "1k" == "1000" == "1e3".
  friend std::strong_ordering operator<=>(const Quantity& a, const Quantity& b);
  friend bool operator==(const Quantity& a, const Quantity& b) {
    return (a <=> b) == std::strong_ordering::equal;
  }

 private:
  // Builds a quantity from mantissa * 10^exponent, stripping trailing zeros of the
  // mantissa so equal values share one representation.
  static Quantity Make(__int128 mantissa, int64_t exponent, Format format);

  // value = mantissa_ * 10^exponent_ exactly (binary suffixes are expanded on parse).
  // The mantissa never ends in a zero digit and has at most 38 digits.
  __int128 mantissa_ = 0;
  int32_t exponent_ = 0;
  Format format_ = Format::kDecimalSI;
  // Kubernetes keeps the input text of a quantity that parsed on its fast path in
  // an already-canonical looking form ("100M", "+1", "1E3") and String() returns
  // it verbatim; we keep it for the same output. Empty when not kept.
  std::string text_;
};

}  // namespace muster
