// batch/v1 CronJob: validated as kube-apiserver validates one (its schedule, policies
// and limits, and its jobTemplate as a Job's spec); not added to the ManifestSet: the
// Jobs it makes are the workloads (server/cronjob_controller.h).
#include <string>
#include <string_view>

#include "api/cron_schedule.h"
#include "api/decode_common.h"
#include "core/text.h"

namespace muster::api {

bool IsTimeZoneName(std::string_view name) {
  if (name.empty() || name.size() > 255 || name.front() == '/' ||
      name.find("..") != std::string_view::npos) {
    return false;
  }
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '+' || c == '/';
    if (!ok) return false;
  }
  return true;
}

}  // namespace muster::api

namespace muster::api::internal {

// The decoder table's signature takes the metadata by value (the others move it).
void DecodeCronJob(const YamlValue& root,
                   model::ObjectMeta meta,  // NOLINT(performance-unnecessary-value-param)
                   DecodeResult& out) {
  // Job names are the CronJob's plus "-" and up to 11 digits (its scheduled minute).
  if (meta.name.size() > 52) {
    root.Get("metadata").Get("name").Error("must be no more than 52 characters");
  }
  YamlValue spec = root.Get("spec");
  YamlValue schedule = spec.Get("schedule");
  if (!schedule.IsSet()) {
    schedule.Error("Required value");
  } else if (auto text = schedule.String()) {
    if (text->find("TZ") != std::string::npos) {
      schedule.Error("cannot use TZ or CRON_TZ in schedule, use timeZone field instead");
    } else if (auto parsed = CronSchedule::Parse(*text); !parsed.ok()) {
      schedule.Error(parsed.status().message());
    }
  }
  // The zone's existence is the server's check (it reads the time zone database);
  // here, what no database holds: a path out of it, or the machine's own zone.
  YamlValue zone = spec.Get("timeZone");
  if (auto name = zone.String()) {
    if (name->empty()) {
      zone.Error("timeZone must be nil or non-empty string");
    } else if (AsciiLower(*name) == "local") {
      zone.Error(
          "timeZone must be an explicit time zone as defined in "
          "https://www.iana.org/time-zones");
    } else if (!IsTimeZoneName(*name)) {
      zone.Error("unknown time zone " + *name);
    }
  }
  YamlValue policy = spec.Get("concurrencyPolicy");
  if (policy.IsSet()) policy.Enum({"Allow", "Forbid", "Replace"});
  spec.Get("suspend").Bool();
  spec.Get("startingDeadlineSeconds").Int(0, INT64_MAX);
  spec.Get("successfulJobsHistoryLimit").Int32(0);
  spec.Get("failedJobsHistoryLimit").Int32(0);
  YamlValue tmpl = spec.Get("jobTemplate");
  if (!tmpl.IsSet()) {
    tmpl.Error("Required value");
    return;
  }
  tmpl.Get("metadata").Get("name").String();  // kubectl sends the CronJob's; unused
  tmpl.Get("metadata").Get("labels").StringMap();
  tmpl.Get("metadata").Get("annotations").StringMap();
  YamlValue job_spec = tmpl.Get("spec");
  model::BatchJobSpec js = DecodeBatchJobSpec(job_spec);
  DecodeJobPolicies(job_spec, js);
  if (js.tmpl.spec.restart_policy != "OnFailure" && js.tmpl.spec.restart_policy != "Never" &&
      !root.ctx().has_errors()) {
    job_spec.Get("template")
        .Get("spec")
        .Get("restartPolicy")
        .Error("Unsupported value: \"" + js.tmpl.spec.restart_policy +
               "\": supported values: \"OnFailure\", \"Never\"");
  }
  NoteValidatedOnly(root, meta, out);
}

void NoteValidatedOnly(const YamlValue& root, const model::ObjectMeta& meta, DecodeResult& out) {
  if (root.ctx().has_errors()) return;
  Diagnostic d;
  d.file = root.ctx().file();
  d.line = root.line();
  d.kind = meta.kind;
  d.namespace_ = meta.namespace_;
  d.name = meta.name;
  out.validated_only.push_back(std::move(d));
}

}  // namespace muster::api::internal
