// The CronJob controller: what one sync decides (PlanCronJob, at chosen instants),
// and the controller against a real store and API (no thread: Attach, Apply, SyncDue).
#include "server/cronjob_controller.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "api_fixture.h"
#include "control/job_deadlines.h"
#include "control/workload_objects.h"
#include "server/object_store.h"

namespace muster::server {
namespace {

using nlohmann::json;
using ::testing::Contains;
using ::testing::ElementsAre;

// 2026-12-06T21:00:00Z, a Sunday.
constexpr Time kNine = 1796590800;

json CronJobObject(const std::string& schedule, const json& extra_spec = json::object(),
                   Time created = kNine - 3600) {
  json spec = json::parse(R"({
    "concurrencyPolicy": "Allow", "suspend": false,
    "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1,
    "jobTemplate": {
      "metadata": {"labels": {"team": "a"}},
      "spec": {"template": {"spec": {
        "restartPolicy": "Never",
        "containers": [{"name": "main", "image": "busybox"}]}}}}})");
  spec["schedule"] = schedule;
  spec.update(extra_spec);
  return {{"apiVersion", "batch/v1"},
          {"kind", "CronJob"},
          {"metadata",
           {{"name", "nightly"},
            {"namespace", "default"},
            {"uid", "cj-uid"},
            {"creationTimestamp", control::Rfc3339(created)}}},
          {"spec", spec}};
}

json OwnedJob(const std::string& name, const std::string& uid, const std::string& finished = "",
              Time start = 0) {
  json job = {{"metadata",
               {{"name", name},
                {"namespace", "default"},
                {"uid", uid},
                {"ownerReferences",
                 {{{"apiVersion", "batch/v1"},
                   {"kind", "CronJob"},
                   {"name", "nightly"},
                   {"uid", "cj-uid"},
                   {"controller", true}}}}}},
              {"status", json::object()}};
  if (start > 0) job["status"]["startTime"] = control::Rfc3339(start);
  if (!finished.empty()) {
    job["status"]["conditions"] = {{{"type", finished}, {"status", "True"}}};
    job["status"]["completionTime"] = control::Rfc3339(start + 60);
  }
  return job;
}

json Ref(const std::string& name, const std::string& uid) {
  return {{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"name", name},
          {"namespace", "default"},   {"uid", uid},    {"resourceVersion", ""}};
}

// PlanCronJob over Jobs held here.
CronJobPlan PlanOver(const json& cronjob, const std::vector<json>& jobs, Time now) {
  std::vector<const json*> owned;
  for (const json& job : jobs) owned.push_back(&job);
  return PlanCronJob(cronjob, owned, now);
}

std::vector<std::string> Reasons(const CronJobPlan& plan) {
  std::vector<std::string> out;
  for (const auto& e : plan.events) out.push_back(e.reason);
  return out;
}

std::string JobName(Time scheduled) {
  return "nightly-" + std::to_string(static_cast<int64_t>(scheduled / 60));
}

TEST(PlanCronJob, BeforeItsFirstTimeNothingRunsAndTheNextTimeIsKnown) {
  const CronJobPlan plan = PlanOver(CronJobObject("30 21 * * *"), {}, kNine + 60);
  EXPECT_FALSE(plan.job);
  EXPECT_EQ(plan.next, kNine + 30 * 60);
  EXPECT_FALSE(plan.status_changed);
}

TEST(PlanCronJob, TheMostRecentTimeMakesOneJobFromTheTemplate) {
  const CronJobPlan plan = PlanOver(CronJobObject("*/15 * * * *"), {}, kNine + 20 * 60);
  ASSERT_TRUE(plan.job);
  EXPECT_EQ(plan.scheduled, kNine + 15 * 60);
  const json& meta = (*plan.job)["metadata"];
  EXPECT_EQ(meta["name"], JobName(kNine + 15 * 60));
  EXPECT_EQ(meta["labels"]["team"], "a");
  EXPECT_EQ(meta["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"],
            "2026-12-06T21:15:00Z");
  EXPECT_EQ(meta["ownerReferences"][0]["uid"], "cj-uid");
  EXPECT_EQ(meta["ownerReferences"][0]["controller"], true);
  EXPECT_EQ((*plan.job)["spec"]["template"]["spec"]["restartPolicy"], "Never");
  EXPECT_EQ(plan.next, kNine + 30 * 60);
}

TEST(PlanCronJob, ATimeAlreadyRunIsNotRunAgain) {
  json cj = CronJobObject("*/15 * * * *");
  cj["status"]["lastScheduleTime"] = control::Rfc3339(kNine + 15 * 60);
  EXPECT_FALSE(PlanOver(cj, {}, kNine + 20 * 60).job);
  // Nor while its Job is listed as active (a status write lost in a restart).
  json listed = CronJobObject("*/15 * * * *");
  listed["status"]["active"] = {Ref(JobName(kNine + 15 * 60), "j1")};
  const CronJobPlan plan =
      PlanOver(listed, {OwnedJob(JobName(kNine + 15 * 60), "j1")}, kNine + 20 * 60);
  EXPECT_FALSE(plan.job);
}

TEST(PlanCronJob, ForbidSkipsWhileAJobRunsReplaceDeletesIt) {
  json forbid = CronJobObject("*/15 * * * *", {{"concurrencyPolicy", "Forbid"}});
  forbid["status"]["active"] = {Ref("nightly-old", "j0")};
  const CronJobPlan skipped = PlanOver(forbid, {OwnedJob("nightly-old", "j0")}, kNine + 1200);
  EXPECT_FALSE(skipped.job);
  EXPECT_THAT(Reasons(skipped), ElementsAre("JobAlreadyActive"));

  json replace = CronJobObject("*/15 * * * *", {{"concurrencyPolicy", "Replace"}});
  replace["status"]["active"] = {Ref("nightly-old", "j0")};
  const CronJobPlan replaced = PlanOver(replace, {OwnedJob("nightly-old", "j0")}, kNine + 1200);
  EXPECT_TRUE(replaced.job);
  ASSERT_EQ(replaced.deletes.size(), 1u);
  EXPECT_EQ(replaced.deletes[0].uid, "j0");
  EXPECT_THAT(Reasons(replaced), ElementsAre("SuccessfulDelete"));
  EXPECT_FALSE(replaced.status.contains("active"));
}

TEST(PlanCronJob, SuspendStopsNewJobsOnly) {
  json cj = CronJobObject("*/15 * * * *", {{"suspend", true}});
  cj["status"]["active"] = {Ref("nightly-old", "j0")};
  const CronJobPlan plan =
      PlanOver(cj, {OwnedJob("nightly-old", "j0", "Complete", kNine)}, kNine + 1200);
  EXPECT_FALSE(plan.job);
  EXPECT_FALSE(plan.next);
  // Its finished Job still leaves the active list.
  EXPECT_THAT(Reasons(plan), ElementsAre("SawCompletedJob"));
  EXPECT_TRUE(plan.status_changed);
  EXPECT_EQ(plan.status["lastSuccessfulTime"], control::Rfc3339(kNine + 60));
}

TEST(PlanCronJob, AStartingDeadlineDropsTimesMissedLongAgo) {
  // Made a day ago, due at 21:00, seen at 21:05: 300 s late.
  json late = CronJobObject("0 21 * * *", {{"startingDeadlineSeconds", 200}}, kNine - 86400);
  EXPECT_FALSE(PlanOver(late, {}, kNine + 300).job);
  json in_time = CronJobObject("0 21 * * *", {{"startingDeadlineSeconds", 400}}, kNine - 86400);
  EXPECT_TRUE(PlanOver(in_time, {}, kNine + 300).job);
}

TEST(PlanCronJob, ManyMissedTimesWarnAndOnlyTheLastRuns) {
  const CronJobPlan plan =
      PlanOver(CronJobObject("* * * * *", json::object(), kNine - 86400), {}, kNine + 30);
  ASSERT_TRUE(plan.job);
  EXPECT_EQ(plan.scheduled, kNine);
  EXPECT_THAT(Reasons(plan), ElementsAre("TooManyMissedTimes"));
}

TEST(PlanCronJob, JobsFinishingLeaveTheListAndOldHistoryIsDeleted) {
  json cj = CronJobObject("0 0 1 1 *");
  cj["status"]["active"] = {Ref("nightly-5", "j5"), Ref("gone", "jx")};
  std::vector<json> jobs;
  for (int i = 1; i <= 5; ++i) {
    jobs.push_back(OwnedJob("nightly-" + std::to_string(i), "j" + std::to_string(i), "Complete",
                            kNine - 1000.0 * (6 - i)));
  }
  jobs.push_back(OwnedJob("nightly-f1", "f1", "Failed", kNine - 9000));
  jobs.push_back(OwnedJob("nightly-f2", "f2", "Failed", kNine - 8000));
  jobs.push_back(OwnedJob("stray", "s1"));  // running, not listed
  const CronJobPlan plan = PlanOver(cj, jobs, kNine);
  EXPECT_FALSE(plan.job);
  std::vector<std::string> deleted;
  for (const auto& d : plan.deletes) deleted.push_back(d.name);
  EXPECT_THAT(deleted, ElementsAre("nightly-1", "nightly-2", "nightly-f1"));
  EXPECT_THAT(Reasons(plan),
              ElementsAre("SawCompletedJob", "UnexpectedJob", "MissingJob", "SuccessfulDelete",
                          "SuccessfulDelete", "SuccessfulDelete"));
  ASSERT_EQ(plan.status["active"].size(), 1u);
  EXPECT_EQ(plan.status["active"][0]["uid"], "s1");
  EXPECT_EQ(plan.status["lastSuccessfulTime"], control::Rfc3339(kNine - 1000 + 60));
}

TEST(PlanCronJob, TheScheduleIsReadInItsTimeZone) {
  // 09:00 in Berlin in December is 08:00 UTC.
  const Time eight_utc = kNine - 13 * 3600;
  const CronJobPlan plan =
      PlanOver(CronJobObject("0 9 * * *", {{"timeZone", "Europe/Berlin"}}, eight_utc - 60), {},
               eight_utc + 60);
  ASSERT_TRUE(plan.job);
  EXPECT_EQ(plan.scheduled, eight_utc);
  EXPECT_EQ(
      (*plan.job)["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"],
      "2026-12-06T09:00:00+01:00");
  EXPECT_FALSE(CronJobZone(CronJobObject("0 9 * * *", {{"timeZone", "Mars/Olympus"}})));
}

// ---------------------------------------------------------------------------

class CronJobControllerTest : public testing::ApiFixture {
 protected:
  json Stored(const std::string& resource, const std::string& name) {
    auto got = store_->Get({resource, "default", name});
    return got.ok() ? *got : json();
  }
  // The stored object as a change (what the store's hub hands the running loop).
  void Feed(CronJobController& c, const std::string& resource, const std::string& name) {
    control::Change change;
    change.resource = resource;
    change.namespace_ = "default";
    change.name = name;
    change.SetObject(Stored(resource, name));
    c.Apply(change);
  }
};

TEST_F(CronJobControllerTest, MakesItsJobAsItsOwnersAndFollowsIt) {
  ApiRequest create;
  create.method = "POST";
  create.path = "/apis/batch/v1/namespaces/default/cronjobs";
  create.content_type = "application/json";
  create.user.name = "alice";
  json cj = CronJobObject("* * * * *");
  cj["metadata"].erase("uid");
  cj["metadata"].erase("creationTimestamp");
  cj["spec"].erase("concurrencyPolicy");
  cj["spec"].erase("successfulJobsHistoryLimit");
  create.body = cj.dump();
  auto result = handler_->Handle(create);
  ASSERT_EQ(std::get<ApiResponse>(result).code, 201) << std::get<ApiResponse>(result).body;
  const json stored = Stored("cronjobs.batch", "nightly");
  EXPECT_EQ(stored["spec"]["concurrencyPolicy"], "Allow");  // defaulted
  EXPECT_EQ(stored["spec"]["successfulJobsHistoryLimit"], 3);

  CronJobController c;
  c.Attach(*store_, *handler_);
  const Time created = *control::ParseRfc3339(stored["metadata"]["creationTimestamp"]);
  const Time due = (std::floor(created / 60) + 1) * 60;
  c.SyncDue(due - 1);
  EXPECT_EQ(Stored("jobs.batch", JobName(due)), json());
  EXPECT_EQ(c.NextWake(), due);

  c.SyncDue(due + 5);
  const json job = Stored("jobs.batch", JobName(due));
  ASSERT_TRUE(job.is_object());
  EXPECT_EQ(job["metadata"]["annotations"]["muster.dev/owner"], "alice");
  EXPECT_EQ(job["metadata"]["ownerReferences"][0]["uid"], stored["metadata"]["uid"]);
  EXPECT_EQ(job["spec"]["completions"], 1);  // created through the API: a Job's defaults
  json status = Stored("cronjobs.batch", "nightly")["status"];
  ASSERT_EQ(status["active"].size(), 1u);
  EXPECT_EQ(status["active"][0]["name"], JobName(due));
  EXPECT_EQ(status["lastScheduleTime"], control::Rfc3339(due));
  auto events = store_->List("events", "default");
  ASSERT_TRUE(events.ok());
  std::vector<std::string> reasons;
  for (const json& e : events->items) reasons.push_back(e.value("reason", ""));
  EXPECT_THAT(reasons, Contains("SuccessfulCreate"));

  // The same instant again, and the changes it wrote: nothing new.
  Feed(c, "jobs.batch", JobName(due));
  Feed(c, "cronjobs.batch", "nightly");
  c.SyncDue(due + 6);
  auto jobs = store_->List("jobs.batch", "default");
  ASSERT_TRUE(jobs.ok());
  EXPECT_EQ(jobs->items.size(), 1u);

  // The Job completes: it leaves the active list.
  json done = Stored("jobs.batch", JobName(due));
  done["status"] = {{"startTime", control::Rfc3339(due)},
                    {"completionTime", control::Rfc3339(due + 10)},
                    {"conditions", {{{"type", "Complete"}, {"status", "True"}}}}};
  ASSERT_TRUE(
      store_->Update({"jobs.batch", "default", JobName(due)}, done, WriteScope::kStatus).ok());
  Feed(c, "jobs.batch", JobName(due));
  c.SyncDue(due + 20);
  status = Stored("cronjobs.batch", "nightly")["status"];
  EXPECT_FALSE(status.contains("active"));
  EXPECT_EQ(status["lastSuccessfulTime"], control::Rfc3339(due + 10));
}

TEST_F(CronJobControllerTest, AnUnknownTimeZoneIsRefusedOnCreate) {
  json cj = CronJobObject("@daily", {{"timeZone", "Mars/Olympus"}});
  cj["metadata"].erase("uid");
  cj["metadata"].erase("creationTimestamp");
  auto r = Call("POST", "/apis/batch/v1/namespaces/default/cronjobs", cj.dump());
  EXPECT_EQ(r.code, 422);
  EXPECT_THAT(r.body, ::testing::HasSubstr("spec.timeZone"));
  EXPECT_THAT(r.body, ::testing::HasSubstr("unknown time zone Mars/Olympus"));
}

}  // namespace
}  // namespace muster::server
