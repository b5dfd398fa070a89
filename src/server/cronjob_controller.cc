#include "server/cronjob_controller.h"

#include <algorithm>
#include <cmath>
#include <iostream>

#include "api/cron_schedule.h"
#include "control/job_deadlines.h"
#include "control/json_fields.h"
#include "control/pod_workloads.h"
#include "control/workload_objects.h"
#include "server/api_handler.h"
#include "server/auth/owner.h"
#include "server/object_store.h"

namespace muster::server {
namespace {

using nlohmann::json;

constexpr const char* kCronJobs = "cronjobs.batch";
constexpr const char* kJobs = "jobs.batch";
constexpr const char* kScheduledAnnotation = "batch.kubernetes.io/cronjob-scheduled-timestamp";
// Upstream warns when more start times than this were missed since the last one.
constexpr int kMaxMissed = 100;
// A Job the API refused (quota, a namespace being deleted) is tried again this late.
constexpr double kRetrySeconds = 60;

const json& Field(const json& object, const char* key) {
  static const json kNull;
  if (!object.is_object()) return kNull;
  auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

using control::StringField;

std::optional<Time> TimeField(const json& object, const char* key) {
  const json& v = Field(object, key);
  return v.is_string() ? control::ParseRfc3339(v.get<std::string>()) : std::nullopt;
}

using Seconds = cctz::time_point<cctz::seconds>;

Seconds PointOf(Time t) { return Seconds(cctz::seconds(static_cast<int64_t>(std::floor(t)))); }

cctz::civil_minute CivilAt(Time t, const cctz::time_zone& zone) {
  return cctz::civil_minute(cctz::convert(PointOf(t), zone));
}

Time InstantOf(const cctz::civil_minute& m, const cctz::time_zone& zone) {
  return static_cast<Time>(cctz::convert(cctz::civil_second(m), zone).time_since_epoch().count());
}

// The last scheduled instant at or before `now` (a minute in a daylight-saving gap
// maps past it, so a later civil minute may be an earlier... or a later instant).
std::optional<Time> MostRecent(const api::CronSchedule& s, Time now, const cctz::time_zone& zone) {
  cctz::civil_minute at = CivilAt(now, zone);
  for (int i = 0; i < 4; ++i) {
    auto m = s.Prev(at);
    if (!m) return std::nullopt;
    const Time t = InstantOf(*m, zone);
    if (t <= now) return t;
    at = *m - 1;
  }
  return std::nullopt;
}

// The first scheduled instant after `t`.
std::optional<Time> NextAfter(const api::CronSchedule& s, Time t, const cctz::time_zone& zone) {
  cctz::civil_minute at = CivilAt(t, zone);
  for (int i = 0; i < 4; ++i) {
    auto m = s.Next(at);
    if (!m) return std::nullopt;
    const Time next = InstantOf(*m, zone);
    if (next > t) return next;
    at = *m;
  }
  return std::nullopt;
}

// RFC 3339 in the zone, "Z" for a zero offset (Go's time.RFC3339).
std::string ZonedRfc3339(Time t, const cctz::time_zone& zone) {
  const Seconds p = PointOf(t);
  if (zone.lookup(p).offset == 0) return cctz::format("%Y-%m-%dT%H:%M:%SZ", p, zone);
  return cctz::format("%Y-%m-%dT%H:%M:%S%Ez", p, zone);
}

// Complete or Failed when the Job has finished, else "".
std::string FinishedAs(const json& job) {
  const json& conditions = Field(Field(job, "status"), "conditions");
  if (!conditions.is_array()) return "";
  for (const json& c : conditions) {
    std::string type = StringField(c, "type");
    if ((type == "Complete" || type == "Failed") && StringField(c, "status") == "True") return type;
  }
  return "";
}

json JobRef(const json& job) {
  const json& meta = Field(job, "metadata");
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"name", StringField(meta, "name")},
          {"namespace", StringField(meta, "namespace")},
          {"uid", StringField(meta, "uid")},
          {"resourceVersion", StringField(meta, "resourceVersion")}};
}

// Finished Jobs past `limit`, oldest start first (no start time last, then by name).
void TrimHistory(std::vector<const json*> finished, const json& limit, CronJobPlan& plan) {
  if (!limit.is_number_integer()) return;
  const auto keep = static_cast<size_t>(std::max<int64_t>(0, limit.get<int64_t>()));
  if (finished.size() <= keep) return;
  std::sort(finished.begin(), finished.end(), [](const json* a, const json* b) {
    const auto sa = TimeField(Field(*a, "status"), "startTime");
    const auto sb = TimeField(Field(*b, "status"), "startTime");
    if (sa.has_value() != sb.has_value()) return sa.has_value();
    if (sa && *sa != *sb) return *sa < *sb;
    return StringField(Field(*a, "metadata"), "name") < StringField(Field(*b, "metadata"), "name");
  });
  for (size_t i = 0; i + keep < finished.size(); ++i) {
    const json& meta = Field(*finished[i], "metadata");
    plan.deletes.push_back({StringField(meta, "name"), StringField(meta, "uid")});
    plan.events.push_back(
        {"Normal", "SuccessfulDelete", "Deleted job " + StringField(meta, "name")});
  }
}

}  // namespace

std::optional<cctz::time_zone> CronJobZone(const json& cronjob) {
  const json& name = Field(Field(cronjob, "spec"), "timeZone");
  if (!name.is_string()) return cctz::utc_time_zone();
  const std::string zone_name = name.get<std::string>();
  cctz::time_zone zone;
  if (!api::IsTimeZoneName(zone_name) || !cctz::load_time_zone(zone_name, &zone)) {
    return std::nullopt;
  }
  return zone;
}

CronJobPlan PlanCronJob(const json& cronjob, const std::vector<const json*>& jobs, Time now) {
  CronJobPlan plan;
  const json& meta = Field(cronjob, "metadata");
  const json& spec = Field(cronjob, "spec");
  plan.status = Field(cronjob, "status").is_object() ? Field(cronjob, "status") : json::object();
  if (!Field(meta, "deletionTimestamp").is_null()) return plan;
  json& status = plan.status;
  json active = Field(status, "active").is_array() ? Field(status, "active") : json::array();
  auto in_active = [&](const std::string& uid) {
    return std::any_of(active.begin(), active.end(),
                       [&](const json& ref) { return StringField(ref, "uid") == uid; });
  };

  // The Jobs as they are: ones running that the list misses join it, finished ones
  // leave it, and ones gone from the store are dropped.
  std::vector<const json*> succeeded, failed;
  std::optional<Time> last_success = TimeField(status, "lastSuccessfulTime");
  for (const json* owned : jobs) {
    const json& job = *owned;
    const json& jm = Field(job, "metadata");
    const std::string name = StringField(jm, "name"), uid = StringField(jm, "uid");
    const std::string finished = FinishedAs(job);
    const bool listed = in_active(uid);
    if (!listed && finished.empty()) {
      active.push_back(JobRef(job));
      plan.events.push_back({"Warning", "UnexpectedJob",
                             "Saw a job that the controller did not create or forgot: " + name});
    } else if (listed && !finished.empty()) {
      active.erase(std::remove_if(active.begin(), active.end(),
                                  [&](const json& ref) { return StringField(ref, "uid") == uid; }),
                   active.end());
      plan.events.push_back(
          {"Normal", "SawCompletedJob", "Saw completed job: " + name + ", condition: " + finished});
    }
    if (finished == "Complete") {
      succeeded.push_back(&job);
      if (auto done = TimeField(Field(job, "status"), "completionTime")) {
        if (!last_success || *done > *last_success) last_success = done;
      }
    } else if (finished == "Failed") {
      failed.push_back(&job);
    }
  }
  for (auto it = active.begin(); it != active.end();) {
    const std::string uid = StringField(*it, "uid");
    const bool exists = std::any_of(jobs.begin(), jobs.end(), [&](const json* job) {
      return StringField(Field(*job, "metadata"), "uid") == uid;
    });
    if (exists) {
      ++it;
    } else {
      plan.events.push_back(
          {"Normal", "MissingJob", "Active job went missing: " + StringField(*it, "name")});
      it = active.erase(it);
    }
  }
  if (last_success) status["lastSuccessfulTime"] = control::Rfc3339(*last_success);
  TrimHistory(succeeded, Field(spec, "successfulJobsHistoryLimit"), plan);
  TrimHistory(failed, Field(spec, "failedJobsHistoryLimit"), plan);
  auto finish = [&] {
    if (active.empty()) {
      status.erase("active");
    } else {
      status["active"] = active;
    }
    plan.status_changed = status != Field(cronjob, "status") &&
                          !(status.empty() && Field(cronjob, "status").is_null());
    return plan;
  };

  if (Field(spec, "suspend") == json(true)) return finish();
  const auto zone = CronJobZone(cronjob);
  if (!zone) {
    plan.events.push_back(
        {"Warning", "UnknownTimeZone",
         "invalid timeZone: \"" + StringField(spec, "timeZone") + "\": unknown time zone"});
    return finish();
  }
  auto schedule = api::CronSchedule::Parse(StringField(spec, "schedule"));
  if (!schedule.ok()) {
    plan.events.push_back({"Warning", "UnparseableSchedule",
                           "unparseable schedule: \"" + StringField(spec, "schedule") +
                               "\" : " + schedule.status().message()});
    return finish();
  }
  plan.next = NextAfter(*schedule, now, *zone);

  // The most recent time the schedule named since the last Job (or since the
  // CronJob was made), no earlier than the starting deadline allows.
  Time earliest = TimeField(status, "lastScheduleTime")
                      .value_or(TimeField(meta, "creationTimestamp").value_or(now));
  const json& deadline = Field(spec, "startingDeadlineSeconds");
  if (deadline.is_number_integer()) {
    earliest = std::max(earliest, now - static_cast<Time>(deadline.get<int64_t>()));
  }
  const std::optional<Time> recent = MostRecent(*schedule, now, *zone);
  if (!recent || *recent <= earliest) return finish();
  int missed = 0;
  for (auto t = NextAfter(*schedule, earliest, *zone); t && *t <= now && missed <= kMaxMissed;
       t = NextAfter(*schedule, *t, *zone)) {
    ++missed;
  }
  if (missed > kMaxMissed) {
    plan.events.push_back({"Warning", "TooManyMissedTimes",
                           "too many missed start times: more than " + std::to_string(kMaxMissed) +
                               ". Set or decrease .spec.startingDeadlineSeconds or check clock "
                               "skew"});
  }
  if (deadline.is_number_integer() && *recent + static_cast<Time>(deadline.get<int64_t>()) < now) {
    plan.events.push_back(
        {"Warning", "MissSchedule",
         "Missed scheduled time to start a job: " +
             cctz::format("%a, %d %b %Y %H:%M:%S +0000", PointOf(*recent), cctz::utc_time_zone())});
    return finish();
  }
  const std::string name = StringField(meta, "name") + "-" +
                           std::to_string(static_cast<int64_t>(std::floor(*recent / 60)));
  const bool processed =
      std::any_of(active.begin(), active.end(),
                  [&](const json& ref) { return StringField(ref, "name") == name; }) ||
      TimeField(status, "lastScheduleTime") == recent;
  if (processed) return finish();
  const std::string policy = StringField(spec, "concurrencyPolicy");
  if (policy == "Forbid" && !active.empty()) {
    plan.events.push_back({"Normal", "JobAlreadyActive",
                           "Not starting job because prior execution is running and concurrency "
                           "policy is Forbid"});
    return finish();
  }
  if (policy == "Replace") {
    for (const json& ref : active) {
      plan.deletes.push_back({StringField(ref, "name"), StringField(ref, "uid")});
      plan.events.push_back(
          {"Normal", "SuccessfulDelete", "Deleted job " + StringField(ref, "name")});
    }
    active = json::array();
  }

  const json& tmpl = Field(spec, "jobTemplate");
  const json& tmeta = Field(tmpl, "metadata");
  json job_meta = {{"name", name}, {"namespace", StringField(meta, "namespace")}};
  if (Field(tmeta, "labels").is_object()) job_meta["labels"] = Field(tmeta, "labels");
  job_meta["annotations"] =
      Field(tmeta, "annotations").is_object() ? Field(tmeta, "annotations") : json::object();
  job_meta["annotations"][kScheduledAnnotation] = ZonedRfc3339(*recent, *zone);
  job_meta["ownerReferences"] = json::array({{{"apiVersion", "batch/v1"},
                                              {"kind", "CronJob"},
                                              {"name", StringField(meta, "name")},
                                              {"uid", StringField(meta, "uid")},
                                              {"controller", true},
                                              {"blockOwnerDeletion", true}}});
  plan.job = json{{"apiVersion", "batch/v1"},
                  {"kind", "Job"},
                  {"metadata", std::move(job_meta)},
                  {"spec", Field(tmpl, "spec").is_object() ? Field(tmpl, "spec") : json::object()}};
  plan.scheduled = *recent;
  return finish();
}

// ---------------------------------------------------------------------------
// The controller

namespace {

// The uid of the CronJob that controls `job`, or "".
std::string ControllingCronJob(const json& job) {
  const json& refs = Field(Field(job, "metadata"), "ownerReferences");
  if (!refs.is_array()) return "";
  for (const json& ref : refs) {
    if (Field(ref, "controller") == json(true) && StringField(ref, "kind") == "CronJob" &&
        StringField(ref, "apiVersion") == "batch/v1") {
      return StringField(ref, "uid");
    }
  }
  return "";
}

std::string IdOf(const control::Change& change) { return change.namespace_ + "/" + change.name; }

}  // namespace

void CronJobController::Attach(ObjectStore& store, ApiHandler& api) {
  store_ = &store;
  api_ = &api;
  for (const char* resource : {kCronJobs, kJobs}) {
    StoreChangeLoop::ForEachStored(store, resource, [this](const control::Change& c) { Apply(c); });
  }
}

void CronJobController::Apply(const control::Change& change) {
  const std::string id = IdOf(change);
  const bool deleted = change.type == control::ChangeType::kDeleted;
  if (change.resource == kCronJobs) {
    auto it = cronjobs_.find(id);
    if (it != cronjobs_.end())
      by_uid_.erase(StringField(Field(*it->second.object, "metadata"), "uid"));
    if (deleted) {
      if (it != cronjobs_.end()) cronjobs_.erase(it);
      return;
    }
    Entry& e = cronjobs_[id];
    e.object = change.shared_object;
    e.dirty = true;
    by_uid_[StringField(Field(*e.object, "metadata"), "uid")] = id;
    return;
  }
  if (change.resource != kJobs) return;
  auto mark = [&](const std::string& owner_uid) {
    if (auto it = by_uid_.find(owner_uid); it != by_uid_.end()) cronjobs_[it->second].dirty = true;
  };
  // Filed under the CronJob that controls it now (an update may have dropped the
  // reference the last one had).
  if (auto was = job_owner_.find(id); was != job_owner_.end()) {
    auto jobs = jobs_.find(was->second);
    if (jobs != jobs_.end()) {
      jobs->second.erase(id);
      if (jobs->second.empty()) jobs_.erase(jobs);
    }
    mark(was->second);
    job_owner_.erase(was);
  }
  const std::string owner = deleted ? "" : ControllingCronJob(change.Object());
  if (owner.empty()) return;
  jobs_[owner][id] = change.shared_object;  // shared with the change, not copied
  job_owner_[id] = owner;
  mark(owner);
}

void CronJobController::SyncDue(Time now) {
  for (auto& [id, entry] : cronjobs_) {  // NOLINT(readability-unused-variable)
    if (entry.dirty || (entry.next && *entry.next <= now)) Sync(entry, now);
  }
}

std::optional<Time> CronJobController::NextWake() const {
  std::optional<Time> next;
  for (const auto& [id, entry] : cronjobs_) {
    if (entry.next && (!next || *entry.next < *next)) next = entry.next;
  }
  return next;
}

void CronJobController::Sync(Entry& entry, Time now) {
  entry.dirty = false;
  if (!entry.object) return;  // only its Jobs were seen (it was deleted)
  const json& cronjob = *entry.object;
  std::vector<const json*> jobs;
  if (auto it = jobs_.find(StringField(Field(cronjob, "metadata"), "uid")); it != jobs_.end()) {
    for (const auto& [job_id, job] : it->second) jobs.push_back(job.get());
  }
  CronJobPlan plan = PlanCronJob(cronjob, jobs, now);
  if (std::optional<json> written = Execute(cronjob, plan, now)) {
    // What the next sync reads, before its change comes.
    entry.object = std::make_shared<const json>(std::move(*written));
  }
  entry.next = plan.next;
  if (plan.job) {
    // Not created: tried again a little later (or at the next time, if sooner).
    const Time retry = now + kRetrySeconds;
    if (!entry.next || retry < *entry.next) entry.next = retry;
  }
}

std::optional<json> CronJobController::Execute(const json& cronjob, CronJobPlan& plan, Time now) {
  const json& meta = Field(cronjob, "metadata");
  const std::string ns = StringField(meta, "namespace");
  for (const CronJobPlan::JobToDelete& d : plan.deletes) {
    auto deleted = store_->Delete({kJobs, ns, d.name}, std::nullopt,
                                  d.uid.empty() ? std::nullopt : std::optional(d.uid));
    if (!deleted.ok() && deleted.status().code() != StatusCode::kNotFound) {
      std::cerr << "muster serve: cronjob controller: deleting job " << ns << "/" << d.name << ": "
                << deleted.status().message() << std::endl;
    }
  }
  if (plan.job) {
    ApiRequest request;
    request.method = "POST";
    request.path = "/apis/batch/v1/namespaces/" + ns + "/jobs";
    request.content_type = "application/json";
    request.accept = "application/json";
    request.body = plan.job->dump();
    // Made as the CronJob's owner's, who runs its pods.
    const json& annotations = Field(meta, "annotations");
    request.owner = StringField(annotations, auth::kOwnerAnnotation);
    ApiResult result = api_->Handle(request);
    const ApiResponse* response = std::get_if<ApiResponse>(&result);
    const std::string job_name = StringField(Field(*plan.job, "metadata"), "name");
    if (response != nullptr && response->code == 201) {
      json created = json::parse(response->body, nullptr, /*allow_exceptions=*/false);
      json& active = plan.status["active"];
      if (!active.is_array()) active = json::array();
      active.push_back(JobRef(created));
      plan.status["lastScheduleTime"] = control::Rfc3339(plan.scheduled);
      plan.status_changed = true;
      plan.events.push_back({"Normal", "SuccessfulCreate", "Created job " + job_name});
      plan.job.reset();
    } else {
      std::string why = "no answer";
      if (response != nullptr) {
        json body = json::parse(response->body, nullptr, /*allow_exceptions=*/false);
        why = body.is_object() ? body.value("message", response->body) : response->body;
      }
      plan.events.push_back({"Warning", "FailedCreate", "Error creating job: " + why});
    }
  }
  std::optional<json> stored;
  if (plan.status_changed) {
    const std::string uid = StringField(meta, "uid");
    auto written = store_->Mutate(
        {kCronJobs, ns, StringField(meta, "name")},
        [&](const json& current) -> Result<json> {
          if (StringField(Field(current, "metadata"), "uid") != uid) return NotFound("replaced");
          json next = current;
          next["status"] = plan.status;
          return next;
        },
        WriteScope::kStatus);
    if (written.ok()) {
      stored = std::move(*written);
    } else if (written.status().code() != StatusCode::kNotFound) {
      std::cerr << "muster serve: cronjob controller: status of " << ns << "/"
                << StringField(meta, "name") << ": " << written.status().message() << std::endl;
    }
  }
  for (const CronJobPlan::Note& note : plan.events) RecordEvent(cronjob, note, now);
  return stored;
}

void CronJobController::RecordEvent(const json& cronjob, const CronJobPlan::Note& note, Time now) {
  static const control::EventSource kController{"batch/v1", "CronJob", "cronjob-controller"};
  json event = control::ObjectEvent(cronjob, kController, note.type, note.reason, note.message, now,
                                    ++event_sequence_);
  const std::string name = event["metadata"]["name"].get<std::string>();
  store_->Create({"events", StringField(Field(cronjob, "metadata"), "namespace"), name},
                 std::move(event));
}

Status CronJobController::Start(ServeContext& context) {
  if (context.api == nullptr) return FailedPrecondition("the cronjob controller needs the API");
  StoreChangeLoop::Hooks hooks;
  // Jobs no CronJob controls are not queued (most Jobs; this runs under the store's
  // write lock). A Job whose reference an update dropped is therefore not seen again:
  // it stays the CronJob's here until it is deleted, as a Job made by it.
  hooks.wants = [](const control::Change& change) {
    return change.resource == kCronJobs ||
           (change.resource == kJobs && !ControllingCronJob(change.Object()).empty());
  };
  hooks.run = [this](StoreChangeLoop::Changes& changes) {
    for (const auto& change : changes) Apply(*change);
    SyncDue(StoreChangeLoop::WallNow());
  };
  // Wall-clock instants: wake at the earliest scheduled time.
  hooks.next_wake = [this]() -> std::optional<StoreChangeLoop::Clock::time_point> {
    return StoreChangeLoop::WakeForWallDeadline(NextWake());
  };
  loop_.Subscribe(context.store.hub(), std::move(hooks));
  Attach(context.store, *context.api);
  loop_.Start();
  return Status();
}

void CronJobController::Stop() { loop_.Stop(); }

}  // namespace muster::server
