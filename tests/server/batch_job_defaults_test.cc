// A batch/v1 Job as kube-apiserver stores it: SetDefaults_Job on every write, the
// selector and pod-template labels it generates on create from the Job's uid and
// name, the validation of that selector, and kubectl's Job columns.
#include "server/batch_job_defaults.h"

#include <gtest/gtest.h>

#include "api_fixture.h"
#include "server/table_printer.h"

namespace muster::server {
namespace {

using nlohmann::json;

const char kJobs[] = "/apis/batch/v1/namespaces/default/jobs";

json Job(const std::string& name, json spec_extra = json::object()) {
  json container = {{"name", "main"}, {"image", "busybox"}};
  json pod_spec = {{"restartPolicy", "Never"}, {"containers", json::array({container})}};
  json spec = {{"template", {{"spec", pod_spec}}}};
  spec.update(spec_extra);
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec", spec}};
}

class BatchJobDefaultsTest : public testing::ApiFixture {
 protected:
  // The stored Job after a create that must succeed.
  json Create(const json& job) {
    auto r = Call("POST", kJobs, job.dump());
    EXPECT_EQ(r.code, 201) << r.body;
    return Body(r);
  }
  // "code field: message; ..." of a create that must fail.
  std::string Refused(const json& job) {
    auto r = Call("POST", kJobs, job.dump());
    json b = Body(r);
    std::string out = std::to_string(r.code);
    for (const auto& c : b["details"].value("causes", json::array())) {
      out += " " + c.value("field", "") + ": " + c.value("message", "") + ";";
    }
    return out;
  }
};

TEST_F(BatchJobDefaultsTest, ACreateStoresUpstreamsDefaults) {
  json job = Create(Job("plain"));
  const json& spec = job["spec"];
  EXPECT_EQ(spec["completions"], 1);
  EXPECT_EQ(spec["parallelism"], 1);
  EXPECT_EQ(spec["backoffLimit"], 6);
  EXPECT_EQ(spec["completionMode"], "NonIndexed");
  EXPECT_EQ(spec["suspend"], false);
  EXPECT_EQ(spec["manualSelector"], false);
  EXPECT_EQ(spec["podReplacementPolicy"], "TerminatingOrFailed");

  // Only parallelism defaults when completions is given; backoffLimit with a per-index
  // limit is the int32 maximum; a podFailurePolicy makes the replacement policy
  // Failed and its condition patterns' status True.
  json indexed = Create(
      Job("indexed",
          {{"completions", 4},
           {"completionMode", "Indexed"},
           {"backoffLimitPerIndex", 1},
           {"podFailurePolicy",
            {{"rules",
              {{{"action", "Ignore"}, {"onPodConditions", {{{"type", "DisruptionTarget"}}}}}}}}}}));
  EXPECT_EQ(indexed["spec"]["completions"], 4);
  EXPECT_EQ(indexed["spec"]["parallelism"], 1);
  EXPECT_EQ(indexed["spec"]["backoffLimit"], 2147483647);
  EXPECT_EQ(indexed["spec"]["podReplacementPolicy"], "Failed");
  EXPECT_EQ(indexed["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["status"],
            "True");

  // What the user set stays.
  json set = Create(Job("set", {{"backoffLimit", 0}, {"suspend", true}, {"parallelism", 3}}));
  EXPECT_EQ(set["spec"]["backoffLimit"], 0);
  EXPECT_EQ(set["spec"]["suspend"], true);
  EXPECT_FALSE(set["spec"].contains("completions"));  // a work-queue Job
}

TEST_F(BatchJobDefaultsTest, TheSelectorIsGeneratedFromTheUidAndTheTemplateCarriesIt) {
  json user = Job("train");
  user["spec"]["template"]["metadata"]["labels"] = {{"app", "llm"}};
  json job = Create(user);
  const std::string uid = job["metadata"]["uid"];
  ASSERT_FALSE(uid.empty());
  EXPECT_EQ(job["spec"]["selector"],
            json({{"matchLabels", {{"batch.kubernetes.io/controller-uid", uid}}}}));
  EXPECT_EQ(job["spec"]["template"]["metadata"]["labels"],
            json({{"app", "llm"},
                  {"batch.kubernetes.io/controller-uid", uid},
                  {"batch.kubernetes.io/job-name", "train"},
                  {"controller-uid", uid},
                  {"job-name", "train"}}));
  // The Job had no labels: it takes the template's as they were (SetDefaults_Job runs
  // before the selector is generated).
  EXPECT_EQ(job["metadata"]["labels"], json({{"app", "llm"}}));
  // A Job listed back reads the same.
  json got = Body(Call("GET", std::string(kJobs) + "/train"));
  EXPECT_EQ(got["spec"]["selector"], job["spec"]["selector"]);

  // A generated name gets labels with the name it was given.
  json generated = Job("");
  generated["metadata"].erase("name");
  generated["metadata"]["generateName"] = "sweep-";
  json g = Create(generated);
  const std::string name = g["metadata"]["name"];
  EXPECT_EQ(name.rfind("sweep-", 0), 0u);
  EXPECT_EQ(g["spec"]["template"]["metadata"]["labels"]["job-name"], name);
  EXPECT_EQ(g["spec"]["template"]["metadata"]["labels"]["batch.kubernetes.io/job-name"], name);
}

TEST_F(BatchJobDefaultsTest, ASelectorThatIsNotTheGeneratedOneIsRefused) {
  json wrong_uid = Job("a");
  wrong_uid["spec"]["template"]["metadata"]["labels"] = {{"controller-uid", "abc"}};
  const std::string refused = Refused(wrong_uid);
  EXPECT_EQ(refused.substr(0, 3), "422") << refused;
  EXPECT_NE(refused.find("spec.template.metadata.labels[controller-uid]: Invalid value: \"abc\": "
                         "must be '"),
            std::string::npos)
      << refused;

  json foreign = Job("b", {{"selector", {{"matchLabels", {{"team", "x"}}}}}});
  EXPECT_NE(Refused(foreign).find("spec.template.metadata.labels: Invalid value: "),
            std::string::npos);

  // manualSelector: the user's selector, which must match the template, and nothing
  // generated.
  json manual = Job("c", {{"manualSelector", true}});
  EXPECT_NE(Refused(manual).find("spec.selector: Required value"), std::string::npos);
  manual["spec"]["selector"] = {{"matchLabels", {{"team", "x"}}}};
  manual["spec"]["template"]["metadata"]["labels"] = {{"team", "x"}};
  auto r = Call("POST", kJobs, manual.dump());
  ASSERT_EQ(r.code, 201) << r.body;
  json created = Body(r);
  EXPECT_EQ(created["spec"]["template"]["metadata"]["labels"], json({{"team", "x"}}));
  EXPECT_EQ(created["spec"]["selector"], json({{"matchLabels", {{"team", "x"}}}}));
  // muster adopts no pods by selector: said in a warning.
  EXPECT_NE(r.warnings.size(), 0u);
}

TEST_F(BatchJobDefaultsTest, UpdatesKeepTheSelectorAndJobsStoredWithoutDefaultsStillUpdate) {
  json job = Create(Job("train"));
  job["metadata"]["labels"] = {{"extra", "y"}};
  ASSERT_EQ(Call("PUT", std::string(kJobs) + "/train", job.dump()).code, 200);
  json no_selector = job;
  no_selector["spec"].erase("selector");
  EXPECT_EQ(Call("PUT", std::string(kJobs) + "/train", no_selector.dump()).code, 422);

  // A Job an older muster stored without the defaults: an update that does not touch
  // them is no change to completionMode.
  json old = Job("old");
  old["metadata"]["uid"] = "u-1";
  ASSERT_TRUE(store_->Create({"jobs.batch", "default", "old"}, old).ok());
  auto patched = Call("PATCH", std::string(kJobs) + "/old",
                      R"({"metadata":{"labels":{"patched":"z"}}})", "application/merge-patch+json");
  EXPECT_EQ(patched.code, 200) << patched.body;
  EXPECT_EQ(Body(patched)["spec"]["completionMode"], "NonIndexed");
}

TEST_F(BatchJobDefaultsTest, KubectlGetJobsShowsStatusCompletionsAndDuration) {
  json job = Create(Job("done", {{"completions", 3}, {"parallelism", 3}}));
  job["status"] = {{"succeeded", 3},
                   {"startTime", "2026-01-01T00:00:00Z"},
                   {"completionTime", "2026-01-01T00:01:30Z"},
                   {"conditions", {{{"type", "Complete"}, {"status", "True"}}}}};
  json queue = Create(Job("queue", {{"parallelism", 4}, {"completions", nullptr}}));
  queue["status"] = {{"startTime", "2026-01-01T00:00:00Z"}};
  const control::ResourceType* type = control::FindByKind("batch/v1", "Job");
  ASSERT_NE(type, nullptr);
  TableOptions options;
  options.now_unix = ParseTimestamp("2026-01-01T00:05:00Z");
  json table = RenderTable(*type, {job, queue}, "1", options);
  std::vector<std::string> names;
  for (const auto& c : table["columnDefinitions"]) names.push_back(c["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"Name", "Status", "Completions", "Duration", "Age",
                                             "Containers", "Images", "Selector"}));
  const json& done = table["rows"][0]["cells"];
  EXPECT_EQ(done[1], "Complete");
  EXPECT_EQ(done[2], "3/3");
  EXPECT_EQ(done[3], "90s");
  EXPECT_EQ(done[5], "main");
  EXPECT_EQ(done[6], "busybox");
  EXPECT_EQ(done[7],
            "batch.kubernetes.io/controller-uid=" + job["metadata"]["uid"].get<std::string>());
  const json& running = table["rows"][1]["cells"];
  EXPECT_EQ(running[1], "Running");
  EXPECT_EQ(running[2], "0/1 of 4");
  EXPECT_EQ(running[3], "5m");
}

}  // namespace
}  // namespace muster::server
