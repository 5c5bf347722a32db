#include "util/temporal.h"

#include <cstdio>

namespace deltacpp::internal {

namespace {

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int DaysInMonth(int64_t y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

// Inverse of DaysFromCivil.
void CivilFromDays(int64_t z, int64_t* year, int* month, int* day) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  *day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  *month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  *year = yoe + era * 400 + (*month <= 2 ? 1 : 0);
}

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// A small cursor over the text being parsed.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : text_(text) {}
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }
  bool Consume(char c) {
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  // Reads between min_digits and max_digits decimal digits.
  std::optional<int64_t> Digits(int min_digits, int max_digits, int* count = nullptr) {
    int64_t value = 0;
    int n = 0;
    while (n < max_digits && !AtEnd() && Peek() >= '0' && Peek() <= '9') {
      value = value * 10 + (Peek() - '0');
      ++pos_;
      ++n;
    }
    if (count) *count = n;
    if (n < min_digits) return std::nullopt;
    return value;
  }
  bool ConsumeWordIgnoreCase(std::string_view word) {
    if (text_.size() - pos_ < word.size()) return false;
    for (size_t i = 0; i < word.size(); ++i) {
      char c = text_[pos_ + i];
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
      if (c != word[i]) return false;
    }
    pos_ += word.size();
    return true;
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<int32_t> ParseDatePart(Cursor& cur) {
  auto year = cur.Digits(4, 4);
  if (!year || !cur.Consume('-')) return std::nullopt;
  auto month = cur.Digits(1, 2);
  if (!month || !cur.Consume('-')) return std::nullopt;
  auto day = cur.Digits(1, 2);
  if (!day) return std::nullopt;
  return DaysFromCivil(*year, static_cast<int>(*month), static_cast<int>(*day));
}

// Parses the zone suffix; returns its offset from UTC in seconds.
std::optional<int64_t> ParseZone(Cursor& cur) {
  if (cur.ConsumeWordIgnoreCase("Z")) return 0;
  bool named = cur.ConsumeWordIgnoreCase("UTC") || cur.ConsumeWordIgnoreCase("GMT");
  if (named && cur.AtEnd()) return 0;
  int sign = 0;
  if (cur.Consume('+')) {
    sign = 1;
  } else if (cur.Consume('-')) {
    sign = -1;
  } else {
    return std::nullopt;
  }
  auto hours = cur.Digits(1, 2);
  if (!hours) return std::nullopt;
  int64_t minutes = 0;
  if (cur.Consume(':')) {
    auto m = cur.Digits(2, 2);
    if (!m) return std::nullopt;
    minutes = *m;
  } else if (!cur.AtEnd()) {
    auto m = cur.Digits(2, 2);
    if (!m) return std::nullopt;
    minutes = *m;
  }
  if (*hours > 18 || minutes > 59 || (*hours == 18 && minutes > 0)) return std::nullopt;
  return sign * (*hours * 3600 + minutes * 60);
}

}  // namespace

std::optional<int32_t> DaysFromCivil(int64_t year, int month, int day) {
  if (month < 1 || month > 12 || day < 1 || year < 0 || year > 9999) return std::nullopt;
  if (day > DaysInMonth(year, month)) return std::nullopt;
  const int64_t y = year - (month <= 2 ? 1 : 0);
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t mp = month > 2 ? month - 3 : month + 9;
  const int64_t doy = (153 * mp + 2) / 5 + day - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return static_cast<int32_t>(era * 146097 + doe - 719468);
}

std::optional<int32_t> ParseDate(std::string_view text) {
  Cursor cur(Trim(text));
  auto days = ParseDatePart(cur);
  if (!days || !cur.AtEnd()) return std::nullopt;
  return days;
}

std::optional<ParsedTimestamp> ParseTimestamp(std::string_view text) {
  Cursor cur(Trim(text));
  auto days = ParseDatePart(cur);
  if (!days) return std::nullopt;
  int64_t hour = 0, minute = 0, second = 0, micros = 0;
  const char sep = cur.Peek();
  if (sep == 'T' || sep == 't' || sep == ' ') {
    cur.Consume(sep);
    if (cur.AtEnd()) return std::nullopt;
    auto h = cur.Digits(1, 2);
    if (!h) {
      // A space followed by a zone name rather than a time of day.
      auto zone = ParseZone(cur);
      if (!zone || !cur.AtEnd()) return std::nullopt;
      return ParsedTimestamp{*days * kMicrosPerDay - *zone * 1'000'000LL, true};
    }
    hour = *h;
    if (!cur.Consume(':')) return std::nullopt;
    auto m = cur.Digits(2, 2);
    if (!m) return std::nullopt;
    minute = *m;
    if (cur.Consume(':')) {
      auto s = cur.Digits(2, 2);
      if (!s) return std::nullopt;
      second = *s;
      if (cur.Consume('.')) {
        int n = 0;
        auto frac = cur.Digits(1, 9, &n);
        if (!frac) return std::nullopt;
        int64_t f = *frac;
        for (int i = n; i < 6; ++i) f *= 10;
        for (int i = n; i > 6; --i) f /= 10;
        micros = f;
      }
    }
    if (hour > 23 || minute > 59 || second > 59) return std::nullopt;
  }
  int64_t value = *days * kMicrosPerDay + ((hour * 60 + minute) * 60 + second) * 1'000'000LL + micros;
  if (cur.AtEnd()) return ParsedTimestamp{value, false};
  cur.Consume(' ');
  auto zone = ParseZone(cur);
  if (!zone || !cur.AtEnd()) return std::nullopt;
  return ParsedTimestamp{value - *zone * 1'000'000LL, true};
}

std::string FormatDate(int32_t days) {
  int64_t y;
  int m, d;
  CivilFromDays(days, &y, &m, &d);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%04lld-%02d-%02d", static_cast<long long>(y), m, d);
  return buf;
}

std::string FormatTimestampMicros(int64_t micros) {
  const int64_t days = FloorDiv(micros, kMicrosPerDay);
  int64_t rest = micros - days * kMicrosPerDay;
  const int64_t frac = rest % 1'000'000LL;
  rest /= 1'000'000LL;
  const int64_t sec = rest % 60;
  const int64_t min = (rest / 60) % 60;
  const int64_t hour = rest / 3600;
  std::string out = FormatDate(static_cast<int32_t>(days));
  char buf[48];
  std::snprintf(buf, sizeof(buf), " %02lld:%02lld:%02lld", static_cast<long long>(hour),
                static_cast<long long>(min), static_cast<long long>(sec));
  out += buf;
  if (frac != 0) {
    std::snprintf(buf, sizeof(buf), ".%06lld", static_cast<long long>(frac));
    out += buf;
  }
  return out;
}

}  // namespace deltacpp::internal
