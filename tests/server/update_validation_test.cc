// Updates muster would store but never act on are 422s naming the field, with the
// immutability rules of Kubernetes and the projects' webhooks.
#include <gtest/gtest.h>

#include "api_fixture.h"

namespace muster::server {
namespace {

using nlohmann::json;

class UpdateValidationTest : public testing::ApiFixture {
 protected:
  std::string Patch(const std::string& path, const json& patch) {
    auto r = Call("PATCH", path, patch.dump(), "application/merge-patch+json");
    if (r.code == 200) return "200";
    json b = Body(r);
    std::string out = std::to_string(r.code);
    if (b.contains("details") && b["details"].contains("causes")) {
      for (const auto& c : b["details"]["causes"]) {
        out += " " + c.value("field", "") + ": " + c.value("message", "");
      }
    }
    return out;
  }
  void AdmitWorkload(const std::string& name) {
    json wl = {{"apiVersion", "kueue.x-k8s.io/v1beta1"},
               {"kind", "Workload"},
               {"metadata", {{"name", name}, {"namespace", "default"}}},
               {"spec", {{"queueName", "lq"}, {"podSets", json::array()}}}};
    ASSERT_TRUE(store_->Create({"workloads.kueue.x-k8s.io", "default", name}, wl).ok());
    json status = {{"conditions", {{{"type", "QuotaReserved"}, {"status", "True"}}}}};
    ASSERT_TRUE(store_
                    ->Mutate(
                        {"workloads.kueue.x-k8s.io", "default", name},
                        [&](const json& cur) -> Result<json> {
                          json next = cur;
                          next["status"] = status;
                          return next;
                        },
                        WriteScope::kAll)
                    .ok());
  }
  const std::string job_ = "/apis/batch/v1/namespaces/default/jobs/train";
  json job_json_ = json::parse(R"({
    "apiVersion":"batch/v1","kind":"Job",
    "metadata":{"name":"train","labels":{"kueue.x-k8s.io/queue-name":"lq"}},
    "spec":{"completions":4,"parallelism":4,"template":{"spec":{"restartPolicy":"Never",
      "containers":[{"name":"c","image":"img:1"}]}}}})");
};

TEST_F(UpdateValidationTest, JobTemplateSelectorAndCompletionsAreImmutable) {
  ASSERT_EQ(Call("POST", "/apis/batch/v1/namespaces/default/jobs", job_json_.dump()).code, 201);
  EXPECT_EQ(Patch(job_, {{"spec", {{"completions", 8}}}}),
            "422 spec.completions: Invalid value: 8: field is immutable");
  std::string r = Patch(
      job_,
      {{"spec", {{"template", {{"spec", {{"containers", {{{"name", "c"}, {"image", "x"}}}}}}}}}}});
  EXPECT_EQ(r.substr(0, 35), "422 spec.template: Invalid value: {") << r;
  EXPECT_NE(r.find("field is immutable"), std::string::npos);
  // The generated selector (batch_job_defaults.h) is the stored one; a merge patch
  // adds to it.
  r = Patch(job_, {{"spec", {{"selector", {{"matchLabels", {{"a", "b"}}}}}}}});
  EXPECT_EQ(r.substr(0, 65),
            "422 spec.selector: Invalid value: {\"matchLabels\":{\"a\":\"b\",\"batch.")
      << r;
  EXPECT_NE(r.find("field is immutable"), std::string::npos);
  // Metadata and parallelism stay mutable; labels are still validated.
  EXPECT_EQ(Patch(job_, {{"spec", {{"parallelism", 2}}}, {"metadata", {{"labels", {{"x", "y"}}}}}}),
            "200");
  EXPECT_EQ(Patch(job_, {{"metadata", {{"labels", {{"x", "a b"}}}}}}).substr(0, 47),
            "422 metadata.labels: Invalid value: \"a b\": a va");
  // A PUT is judged the same way, and a rejected update leaves the object as it was.
  json put = Body(Call("GET", job_));
  put["spec"]["completions"] = 5;
  EXPECT_EQ(Call("PUT", job_, put.dump()).code, 422);
  EXPECT_EQ(Body(Call("GET", job_))["spec"]["completions"], 4);
}

TEST_F(UpdateValidationTest, ElasticIndexedJobsScaleCompletionsWithParallelism) {
  job_json_["spec"]["completionMode"] = "Indexed";
  ASSERT_EQ(Call("POST", "/apis/batch/v1/namespaces/default/jobs", job_json_.dump()).code, 201);
  EXPECT_EQ(Patch(job_, {{"spec", {{"completions", 6}, {"parallelism", 6}}}}), "200");
  EXPECT_EQ(Patch(job_, {{"spec", {{"completions", 8}}}}),
            "422 spec.completions: Invalid value: 8: can only be modified in tandem with "
            "spec.parallelism");
}

TEST_F(UpdateValidationTest, SuspendedJobsMayChangeSchedulingDirectives) {
  job_json_["spec"]["suspend"] = true;
  ASSERT_EQ(Call("POST", "/apis/batch/v1/namespaces/default/jobs", job_json_.dump()).code, 201);
  EXPECT_EQ(Patch(job_, {{"spec",
                          {{"template",
                            {{"metadata", {{"labels", {{"zone", "a"}}}}},
                             {"spec", {{"nodeSelector", {{"zone", "a"}}}}}}}}}}),
            "200");
}

TEST_F(UpdateValidationTest, QueueNameIsImmutableWhileAdmitted) {
  ASSERT_EQ(Call("POST", "/apis/batch/v1/namespaces/default/jobs", job_json_.dump()).code, 201);
  const json relabel = {{"metadata", {{"labels", {{"kueue.x-k8s.io/queue-name", "other"}}}}}};
  EXPECT_EQ(Patch(job_, relabel), "200");  // pending: may move to another queue
  AdmitWorkload("job-train");
  EXPECT_EQ(Patch(job_, {{"metadata", {{"labels", {{"kueue.x-k8s.io/queue-name", "third"}}}}}}),
            "422 metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"third\": field is "
            "immutable");
}

TEST_F(UpdateValidationTest, OtherKindsFollowTheirWebhooks) {
  ASSERT_EQ(Call("POST", "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/localqueues",
                 R"({"metadata":{"name":"lq"},"spec":{"clusterQueue":"a"}})")
                .code,
            201);
  EXPECT_EQ(Patch("/apis/kueue.x-k8s.io/v1beta1/namespaces/default/localqueues/lq",
                  {{"spec", {{"clusterQueue", "b"}}}}),
            "422 spec.clusterQueue: Invalid value: \"b\": field is immutable");
  ASSERT_EQ(Call("POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
                 R"({"metadata":{"name":"high"},"value":1000})")
                .code,
            201);
  EXPECT_EQ(Patch("/apis/scheduling.k8s.io/v1/priorityclasses/high", {{"value", 5}}),
            "422 value: Forbidden: may not be changed in an update.");
  ASSERT_EQ(Call("POST", "/api/v1/namespaces/default/pods",
                 R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"a"}]}})")
                .code,
            201);
  EXPECT_EQ(Patch("/api/v1/namespaces/default/pods/p",
                  {{"spec", {{"containers", {{{"name", "c"}, {"image", "b"}}}}}}}),
            "200");
  EXPECT_EQ(
      Patch("/api/v1/namespaces/default/pods/p", {{"spec", {{"nodeName", "n1"}}}}).substr(0, 26),
      "422 spec: Forbidden: pod u");
  ASSERT_EQ(
      Call("POST", "/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs",
           R"({"metadata":{"name":"v"},"spec":{"minAvailable":1,"tasks":[{"name":"t",)"
           R"("replicas":1,"template":{"spec":{"containers":[{"name":"c","image":"a"}]}}}]}})")
          .code,
      201);
  const std::string vj = "/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs/v";
  json scaled = Body(Call("GET", vj));
  scaled["spec"]["minAvailable"] = 2;
  scaled["spec"]["tasks"][0]["replicas"] = 2;
  EXPECT_EQ(Call("PUT", vj, scaled.dump()).code, 200);
  EXPECT_EQ(Patch(vj, {{"spec", {{"queue", "other"}}}}),
            "422 spec: Forbidden: job updates may not change fields other than `minAvailable`, "
            "`tasks[*].replicas under spec`");
}

}  // namespace
}  // namespace muster::server
