// Quantity parsing and printing, following k8s.io/apimachinery/pkg/api/resource.
//
// The value is kept as an exact decimal mantissa * 10^exponent. Kubernetes keeps
// arbitrary precision (inf.Dec); we keep up to 38 significant digits, which covers
// every quantity a real manifest carries, and reject longer ones instead of
// silently rounding them. No floating point anywhere.
#include "core/quantity.h"

#include <algorithm>
#include <array>
#include <limits>

#include "core/text.h"

namespace muster {
namespace {

constexpr int kMaxDigits = 38;  // every 38-digit number fits in a signed __int128
constexpr int64_t kNanoExponent = -9;
constexpr std::string_view kMaxInt64Digits = "9223372036854775807";

// Error texts match the Kubernetes ones so messages read the same to users.
constexpr std::string_view kErrFormatWrong =
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
constexpr std::string_view kErrNumeric = "unable to parse numeric part of quantity";
constexpr std::string_view kErrSuffix = "unable to parse quantity's suffix";

Status ParseError(std::string_view text, std::string_view why) {
  std::string m = "invalid quantity \"";
  m.append(text);
  m += "\": ";
  m.append(why);
  return InvalidArgument(std::move(m));
}

constexpr std::array<__int128, kMaxDigits + 1> MakePow10() {
  std::array<__int128, kMaxDigits + 1> p{};
  p[0] = 1;
  for (int i = 1; i <= kMaxDigits; ++i) p[i] = p[i - 1] * 10;
  return p;
}
constexpr std::array<__int128, kMaxDigits + 1> kPow10 = MakePow10();

int DigitCount(__int128 v) {  // v >= 0
  int n = 1;
  while (n <= kMaxDigits && v >= kPow10[n]) ++n;
  return n;
}

std::string Int128ToString(__int128 v) {
  if (v == 0) return "0";
  bool neg = v < 0;
  unsigned __int128 u = neg ? -static_cast<unsigned __int128>(v) : v;
  char buf[48];
  int i = sizeof(buf);
  while (u != 0) {
    buf[--i] = static_cast<char>('0' + static_cast<int>(u % 10));
    u /= 10;
  }
  if (neg) buf[--i] = '-';
  return std::string(buf + i, sizeof(buf) - i);
}

// The pieces of a quantity string, split exactly as Kubernetes' scanner does.
struct Scanned {
  bool positive = true;
  std::string_view num;    // integer digits without leading zeros; "0" if none
  std::string_view denom;  // fraction digits, possibly empty
  std::string_view suffix;
  bool has_digits = false;  // any digit before the suffix, leading zeros included
};

// Mirrors parseQuantityString: returns false on a format error. Note its quirks,
// kept on purpose: "1.", "1.G", "." and a bare sign ("-") are all accepted.
bool Scan(std::string_view s, Scanned* out) {
  size_t pos = 0;
  const size_t end = s.size();
  // Until a suffix starts, the whole text is the number; narrowed once one does.
  out->has_digits = std::any_of(s.begin(), s.end(), IsDigit);
  if (s[0] == '-') {
    out->positive = false;
    ++pos;
  } else if (s[0] == '+') {
    ++pos;
  }
  while (pos < end && s[pos] == '0') ++pos;
  if (pos >= end) {
    out->num = "0";
    return true;
  }
  size_t start = pos;
  while (pos < end && IsDigit(s[pos])) ++pos;
  out->num = pos == start ? std::string_view("0") : s.substr(start, pos - start);
  if (pos >= end) return true;
  if (s[pos] == '.') {
    start = ++pos;
    while (pos < end && IsDigit(s[pos])) ++pos;
    out->denom = s.substr(start, pos - start);
    if (pos >= end) return true;
  }
  const size_t suffix_start = pos;
  constexpr std::string_view kSuffixChars = "eEinumkKMGTP";
  while (pos < end && kSuffixChars.find(s[pos]) != std::string_view::npos) ++pos;
  if (pos < end && (s[pos] == '-' || s[pos] == '+')) ++pos;
  while (pos < end && IsDigit(s[pos])) ++pos;
  if (pos < end) return false;
  out->suffix = s.substr(suffix_start);
  out->has_digits =
      std::any_of(s.begin(), s.begin() + static_cast<ptrdiff_t>(suffix_start), IsDigit);
  return true;
}

struct Suffix {
  int base;  // 10 or 2
  int32_t exponent;
  Quantity::Format format;
};

// Parses strconv.ParseInt(s, 10, 64)-style text; false on syntax or range error.
bool ParseInt64(std::string_view s, int64_t* out) {
  bool neg = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return false;
  unsigned __int128 v = 0;
  for (char c : s) {
    if (!IsDigit(c)) return false;
    v = v * 10 + static_cast<unsigned>(c - '0');
    if (v > static_cast<unsigned __int128>(std::numeric_limits<int64_t>::max()) + 1) return false;
  }
  if (!neg && v > static_cast<unsigned __int128>(std::numeric_limits<int64_t>::max())) return false;
  *out = neg ? static_cast<int64_t>(-static_cast<__int128>(v)) : static_cast<int64_t>(v);
  return true;
}

bool InterpretSuffix(std::string_view s, Suffix* out) {
  using F = Quantity::Format;
  struct Entry {
    std::string_view text;
    Suffix suffix;
  };
  static constexpr Entry kTable[] = {
      {"", {10, 0, F::kDecimalSI}},   {"n", {10, -9, F::kDecimalSI}},
      {"u", {10, -6, F::kDecimalSI}}, {"m", {10, -3, F::kDecimalSI}},
      {"k", {10, 3, F::kDecimalSI}},  {"M", {10, 6, F::kDecimalSI}},
      {"G", {10, 9, F::kDecimalSI}},  {"T", {10, 12, F::kDecimalSI}},
      {"P", {10, 15, F::kDecimalSI}}, {"E", {10, 18, F::kDecimalSI}},
      {"Ki", {2, 10, F::kBinarySI}},  {"Mi", {2, 20, F::kBinarySI}},
      {"Gi", {2, 30, F::kBinarySI}},  {"Ti", {2, 40, F::kBinarySI}},
      {"Pi", {2, 50, F::kBinarySI}},  {"Ei", {2, 60, F::kBinarySI}},
  };
  for (const Entry& e : kTable) {
    if (e.text == s) {
      *out = e.suffix;
      return true;
    }
  }
  if (s.size() > 1 && (s[0] == 'e' || s[0] == 'E')) {
    int64_t exp = 0;
    if (!ParseInt64(s.substr(1), &exp)) return false;
    // Kubernetes narrows the parsed int64 to int32 with Go's wrap-around.
    *out = {10, static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(exp))),
            F::kDecimalExponent};
    return true;
  }
  return false;
}

// Multiplies a decimal digit string (most significant first) by 2^bits.
void MultiplyByPow2(std::string* digits, int bits) {
  while (bits > 0) {
    const int step = std::min(bits, 32);  // 9 * 2^32 + carry fits in 64 bits
    bits -= step;
    uint64_t carry = 0;
    for (auto it = digits->rbegin(); it != digits->rend(); ++it) {
      uint64_t v = (static_cast<uint64_t>(*it - '0') << step) + carry;
      *it = static_cast<char>('0' + v % 10);
      carry = v / 10;
    }
    while (carry != 0) {
      digits->insert(digits->begin(), static_cast<char>('0' + carry % 10));
      carry /= 10;
    }
  }
}

// Adds one to a decimal digit string.
void Increment(std::string* digits) {
  for (auto it = digits->rbegin(); it != digits->rend(); ++it) {
    if (*it != '9') {
      ++*it;
      return;
    }
    *it = '0';
  }
  digits->insert(digits->begin(), '1');
}

// Whether Kubernetes parses this input on its int64 fast path, and if so whether
// that path keeps the input text as the quantity's string. Which path is taken is
// visible: the slow path rejects inputs without any digit ("Pi", "e-10"), and
// only the fast path keeps text.
bool FastPath(const Scanned& sc, const Suffix& suf, bool* keep_text) {
  const int64_t len_num = static_cast<int64_t>(sc.num.size());
  const int64_t len_denom = static_cast<int64_t>(sc.denom.size());
  *keep_text = false;
  if (suf.format == Quantity::Format::kBinarySI) {
    if (!sc.denom.empty()) return false;
    // Kubernetes' own rough precision estimate: 2^exponent has exponent*3/10 digits.
    if (15 - len_num - suf.exponent * 3 / 10 - 1 < 0) return false;
    int64_t value = 0;  // at most 14 digits on this path
    for (char c : sc.num) value = value * 10 + (c - '0');
    *keep_text = (value & 7) != 0;
    return true;
  }
  if (18 - (len_num + len_denom) < 0) return false;
  const int64_t scale = suf.exponent - len_denom;
  if (scale < kNanoExponent) return false;
  // shifted = num + denom; a leading '0' or a trailing "000" is not canonical.
  if (scale % 3 != 0 || sc.num[0] == '0') return true;
  if (sc.denom.size() >= 3) {
    *keep_text = !sc.denom.ends_with("000");
  } else {
    std::string shifted(sc.num);
    shifted.append(sc.denom);
    *keep_text = !shifted.ends_with("000");
  }
  return true;
}

}  // namespace

Quantity Quantity::Make(__int128 mantissa, int64_t exponent, Format format) {
  Quantity q;
  q.format_ = format;
  if (mantissa == 0) return q;
  while (mantissa % 10 == 0) {
    mantissa /= 10;
    ++exponent;
  }
  q.mantissa_ = mantissa;
  q.exponent_ = static_cast<int32_t>(exponent);
  return q;
}

Result<Quantity> Quantity::Parse(std::string_view text) {
  if (text.empty()) return ParseError(text, kErrFormatWrong);
  if (text == "0") {
    Quantity q;
    q.text_ = "0";
    return q;
  }
  Scanned sc;
  if (!Scan(text, &sc)) return ParseError(text, kErrFormatWrong);
  Suffix suf;
  if (!InterpretSuffix(sc.suffix, &suf)) return ParseError(text, kErrSuffix);
  bool keep_text = false;
  if (!FastPath(sc, suf, &keep_text) && !sc.has_digits) return ParseError(text, kErrNumeric);

  // Exact value: digits * 10^exp10 (times 2^exponent for binary suffixes).
  std::string digits(sc.num == "0" ? std::string_view() : sc.num);
  digits.append(sc.denom);
  digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size()));
  int64_t exp10 = -static_cast<int64_t>(sc.denom.size());
  Format format = suf.format;
  if (digits.empty()) return Make(0, 0, format);  // "-0", "0.0Ki", "." are zero
  if (suf.base == 10) {
    exp10 += suf.exponent;
  } else {
    MultiplyByPow2(&digits, suf.exponent);
  }

  // Non-zero values round up (away from zero) to the nano scale: asking for a
  // sliver of a resource must still get some of it.
  if (exp10 < kNanoExponent) {
    const int64_t cut = kNanoExponent - exp10;
    if (cut >= static_cast<int64_t>(digits.size())) {
      digits = "1";
    } else {
      const size_t keep = digits.size() - static_cast<size_t>(cut);
      const bool inexact = digits.find_first_not_of('0', keep) != std::string::npos;
      digits.resize(keep);
      if (inexact) Increment(&digits);
      digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size()));
      if (digits.empty()) digits = "1";
    }
    exp10 = kNanoExponent;
  }
  while (digits.size() > 1 && digits.back() == '0') {
    digits.pop_back();
    ++exp10;
  }

  if (format == Format::kBinarySI) {
    // Kubernetes caps binary quantities at the largest int64.
    const int64_t int_len = static_cast<int64_t>(digits.size()) + exp10;
    bool over = int_len > 19;
    if (int_len == 19) {
      std::string ip = digits.substr(0, 19);
      ip.resize(19, '0');
      int c = ip.compare(kMaxInt64Digits);
      over = c > 0 || (c == 0 && digits.size() > 19);
    }
    if (over) {
      digits = kMaxInt64Digits;
      exp10 = 0;
    }
    // Below one, binary notation would need rounding: print as decimal instead.
    if (static_cast<int64_t>(digits.size()) + exp10 <= 0) format = Format::kDecimalSI;
  }

  if (digits.size() > static_cast<size_t>(kMaxDigits)) {
    return ParseError(text, "more than 38 significant digits are not supported");
  }
  if (exp10 > std::numeric_limits<int32_t>::max() || exp10 < std::numeric_limits<int32_t>::min()) {
    return ParseError(text, kErrNumeric);
  }
  __int128 m = 0;
  for (char c : digits) m = m * 10 + (c - '0');
  Quantity q = Make(sc.positive ? m : -m, exp10, format);
  if (keep_text) q.text_ = std::string(text);
  return q;
}

Quantity Quantity::FromInt(int64_t value, Format format) { return Make(value, 0, format); }

Quantity Quantity::FromMilli(int64_t milli, Format format) { return Make(milli, -3, format); }

namespace {

// Rounds mantissa * 10^exponent to an integer away from zero, saturating.
int64_t ScaledValue(__int128 mantissa, int64_t exponent) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  if (mantissa == 0) return 0;
  const int sign = mantissa > 0 ? 1 : -1;
  __int128 mag = mantissa > 0 ? mantissa : -mantissa;
  __int128 r;
  if (exponent >= 0) {
    if (DigitCount(mag) + exponent > 19) return sign > 0 ? kMax : kMin;
    r = mag * kPow10[exponent];
  } else if (-exponent > kMaxDigits) {
    r = 1;
  } else {
    const __int128 div = kPow10[-exponent];
    r = mag / div + (mag % div != 0 ? 1 : 0);
  }
  r *= sign;
  if (r > kMax) return kMax;
  if (r < kMin) return kMin;
  return static_cast<int64_t>(r);
}

}  // namespace

int64_t Quantity::Value() const { return ScaledValue(mantissa_, exponent_); }

int64_t Quantity::MilliValue() const {
  return ScaledValue(mantissa_, static_cast<int64_t>(exponent_) + 3);
}

std::string Quantity::ToString() const {
  if (!text_.empty()) return text_;
  if (mantissa_ == 0) return "0";
  Format format = format_;
  const __int128 mag = mantissa_ > 0 ? mantissa_ : -mantissa_;
  if (format == Format::kBinarySI) {
    // Binary notation only for exact integers of at least 1024 in magnitude.
    const int64_t int_len = DigitCount(mag) + static_cast<int64_t>(exponent_);
    if (exponent_ < 0 || int_len > 19 || mag * kPow10[exponent_] < 1024) {
      format = Format::kDecimalSI;
    }
  }
  if (format == Format::kBinarySI) {
    __int128 v = mag * kPow10[exponent_];
    int times = 0;
    while (v >= 1024 && v % 1024 == 0) {
      v /= 1024;
      ++times;
    }
    static constexpr std::string_view kBinSuffixes[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    std::string out = Int128ToString(mantissa_ < 0 ? -v : v);
    if (times < 7) out.append(kBinSuffixes[times]);
    return out;
  }
  // Decimal: move the exponent down to a multiple of three (Go's % truncates, so
  // this always lowers it), then name it with an SI suffix or "e<n>".
  int64_t exp = exponent_;
  int zeros = 0;
  while (exp % 3 != 0) {
    --exp;
    ++zeros;
  }
  std::string out = Int128ToString(mantissa_);
  out.append(static_cast<size_t>(zeros), '0');
  if (format == Format::kDecimalSI && exp >= -9 && exp <= 18) {
    static constexpr std::string_view kDecSuffixes[] = {"n", "u", "m", "",  "k",
                                                        "M", "G", "T", "P", "E"};
    out.append(kDecSuffixes[(exp + 9) / 3]);
  } else if (exp != 0) {
    out += 'e';
    out += std::to_string(exp);
  }
  return out;
}

std::strong_ordering operator<=>(const Quantity& a, const Quantity& b) {
  const int sa = a.Sign();
  const int sb = b.Sign();
  if (sa != sb || sa == 0) return sa <=> sb;
  __int128 ma = sa > 0 ? a.mantissa_ : -a.mantissa_;
  __int128 mb = sb > 0 ? b.mantissa_ : -b.mantissa_;
  const int64_t order_a = DigitCount(ma) + static_cast<int64_t>(a.exponent_);
  const int64_t order_b = DigitCount(mb) + static_cast<int64_t>(b.exponent_);
  std::strong_ordering mag = order_a <=> order_b;
  if (mag == std::strong_ordering::equal) {
    // Same order of magnitude: the exponent gap is below 38 digits, so aligning
    // the mantissas stays within __int128.
    if (a.exponent_ > b.exponent_) {
      ma *= kPow10[a.exponent_ - b.exponent_];
    } else {
      mb *= kPow10[b.exponent_ - a.exponent_];
    }
    mag = ma <=> mb;
  }
  // clang-tidy 14 takes the 0 of a three-way comparison for a null pointer constant.
  return sa > 0 ? mag : 0 <=> mag;  // NOLINT(modernize-use-nullptr)
}

}  // namespace muster
