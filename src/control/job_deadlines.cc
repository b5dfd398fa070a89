#include "control/job_deadlines.h"

#include <cstdio>
#include <ctime>

#include "control/json_fields.h"

namespace muster::control {
namespace {

using nlohmann::json;

// Read in place (asked of every job with a deadline at every step: copying its spec,
// pod template included, was most of an idle server's CPU with 10,000 jobs).
bool IsBatchJob(const json& job) {
  return StringField(job, "apiVersion") == "batch/v1" && StringField(job, "kind") == "Job";
}

std::optional<int64_t> SpecInt(const json& job, const char* field) {
  const json& spec = ObjectField(job, "spec");
  auto it = spec.find(field);
  if (it == spec.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

}  // namespace

std::optional<Time> ParseRfc3339(const std::string& text) {
  std::tm tm{};
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &consumed) != 6) {
    return std::nullopt;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  double fraction = 0;
  size_t pos = static_cast<size_t>(consumed);
  if (pos < text.size() && text[pos] == '.') {
    double scale = 0.1;
    for (++pos; pos < text.size() && text[pos] >= '0' && text[pos] <= '9'; ++pos) {
      fraction += (text[pos] - '0') * scale;
      scale /= 10;
    }
  }
  if (pos >= text.size() || text[pos] != 'Z') return std::nullopt;  // muster writes UTC
  return static_cast<Time>(timegm(&tm)) + fraction;
}

std::optional<Time> ActiveDeadline(const json& job) {
  if (!IsBatchJob(job)) return std::nullopt;
  auto seconds = SpecInt(job, "activeDeadlineSeconds");
  if (!seconds) return std::nullopt;
  auto start = ParseRfc3339(StringField(ObjectField(job, "status"), "startTime"));
  if (!start) return std::nullopt;
  return *start + static_cast<Time>(*seconds);
}

std::optional<Time> TtlExpiry(const json& job) {
  if (!IsBatchJob(job)) return std::nullopt;
  auto ttl = SpecInt(job, "ttlSecondsAfterFinished");
  if (!ttl) return std::nullopt;
  for (const json& c : ArrayField(ObjectField(job, "status"), "conditions")) {
    if (!c.is_object()) continue;
    const std::string type = c.value("type", "");
    if ((type != "Complete" && type != "Failed") || c.value("status", "") != "True") continue;
    auto finished = ParseRfc3339(c.value("lastTransitionTime", ""));
    if (finished) return *finished + static_cast<Time>(*ttl);
  }
  return std::nullopt;
}

}  // namespace muster::control
