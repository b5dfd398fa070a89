#include "kube/admission_webhook.h"

#include <gtest/gtest.h>

#include <string>

namespace muster::kube {
namespace {

using json = nlohmann::json;

std::string Base64Text(const std::string& text) {
  static const std::string kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (char c : text) {
    if (c == '=') break;
    const size_t v = kAlphabet.find(c);
    if (v == std::string::npos) ADD_FAILURE() << "not base64: " << c;
    bits = bits << 6 | static_cast<uint32_t>(v);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out += static_cast<char>(bits >> count & 0xff);
    }
  }
  return out;
}

json Review(const json& object, const std::string& operation = "CREATE") {
  const std::string api_version = object.value("apiVersion", "");
  const size_t slash = api_version.find('/');
  return json{{"apiVersion", "admission.k8s.io/v1"},
              {"kind", "AdmissionReview"},
              {"request",
               {{"uid", "705ab4f5-6393-11e8-b7cc-42010a800002"},
                {"kind",
                 {{"group", slash == std::string::npos ? "" : api_version.substr(0, slash)},
                  {"version", api_version.substr(slash + 1)},
                  {"kind", object.value("kind", "")}}},
                {"operation", operation},
                {"namespace", "team-a"},
                {"object", object}}}};
}

json Job(const std::string& api_version, const std::string& kind, json spec) {
  return json{{"apiVersion", api_version},
              {"kind", kind},
              {"metadata",
               {{"name", "train"},
                {"namespace", "team-a"},
                {"labels", {{"kueue.x-k8s.io/queue-name", "team-a"}}}}},
              {"spec", std::move(spec)}};
}

json BatchJob() {
  return Job("batch/v1", "Job", {{"parallelism", 2}, {"template", {{"spec", json::object()}}}});
}

json KubeflowJob(const std::string& kind) {
  const std::string version = kind == "MPIJob" ? "kubeflow.org/v2beta1" : "kubeflow.org/v1";
  const std::string replicas = kind == "PyTorchJob" ? "pytorchReplicaSpecs"
                               : kind == "TFJob"    ? "tfReplicaSpecs"
                                                    : "mpiReplicaSpecs";
  return Job(version, kind, {{replicas, {{"Worker", {{"replicas", 2}}}}}});
}

// The decoded JSON patch of an allowed response; null when there is none.
json PatchOf(const json& review) {
  const json& response = review.at("response");
  EXPECT_TRUE(response.at("allowed").get<bool>()) << review.dump();
  if (!response.contains("patch")) {
    EXPECT_FALSE(response.contains("patchType"));
    return nullptr;
  }
  EXPECT_EQ(response.at("patchType"), "JSONPatch");
  return json::parse(Base64Text(response.at("patch").get<std::string>()));
}

// Applies the webhook's patch to `object` and returns the result (the object itself
// when the webhook leaves it unchanged).
json Mutated(const json& object, const WebhookOptions& options = {}) {
  const json review = ReviewJobCreate(Review(object), options);
  EXPECT_EQ(review.at("apiVersion"), "admission.k8s.io/v1");
  EXPECT_EQ(review.at("kind"), "AdmissionReview");
  EXPECT_EQ(review.at("response").at("uid"), "705ab4f5-6393-11e8-b7cc-42010a800002");
  const json patch = PatchOf(review);
  if (patch.is_null()) return object;
  EXPECT_TRUE(patch.is_array());
  return object.patch(patch);  // throws (fails the test) when the patch does not apply
}

std::string DenialMessage(const json& review) {
  const json& response = review.at("response");
  EXPECT_FALSE(response.at("allowed").get<bool>()) << review.dump();
  EXPECT_FALSE(response.contains("patch"));
  return response.at("status").at("message").get<std::string>();
}

TEST(AdmissionWebhookTest, SuspendsQueuedBatchJobAndKeepsTheRest) {
  const json job = BatchJob();
  const json mutated = Mutated(job);
  EXPECT_EQ(mutated["spec"]["suspend"], true);
  json expected = job;
  expected["spec"]["suspend"] = true;
  EXPECT_EQ(mutated, expected);
}

TEST(AdmissionWebhookTest, PatchIsOneAddOperation) {
  const json patch = PatchOf(ReviewJobCreate(Review(BatchJob()), {}));
  EXPECT_EQ(patch, json::parse(R"([{"op":"add","path":"/spec/suspend","value":true}])"));
}

TEST(AdmissionWebhookTest, SuspendsJobThatAsksToRun) {
  json job = BatchJob();
  job["spec"]["suspend"] = false;
  EXPECT_EQ(Mutated(job)["spec"]["suspend"], true);
}

TEST(AdmissionWebhookTest, SuspendsJobSet) {
  const json jobset = Job("jobset.x-k8s.io/v1alpha2", "JobSet",
                          {{"replicatedJobs", json::array({{{"name", "workers"}}})}});
  const json mutated = Mutated(jobset);
  EXPECT_EQ(mutated["spec"]["suspend"], true);
  EXPECT_EQ(mutated["spec"]["replicatedJobs"], jobset["spec"]["replicatedJobs"]);
}

TEST(AdmissionWebhookTest, SuspendsKubeflowJobsThroughRunPolicy) {
  for (const std::string kind : {"PyTorchJob", "TFJob", "MPIJob"}) {
    SCOPED_TRACE(kind);
    json job = KubeflowJob(kind);
    // No runPolicy at all: the webhook adds the whole object.
    json mutated = Mutated(job);
    EXPECT_EQ(mutated["spec"]["runPolicy"], json({{"suspend", true}}));
    EXPECT_FALSE(mutated["spec"].contains("suspend"));
    // A runPolicy with other settings keeps them.
    job["spec"]["runPolicy"] = {{"cleanPodPolicy", "None"}, {"suspend", false}};
    mutated = Mutated(job);
    EXPECT_EQ(mutated["spec"]["runPolicy"], json({{"cleanPodPolicy", "None"}, {"suspend", true}}));
  }
}

TEST(AdmissionWebhookTest, AddsSpecWhenTheObjectHasNone) {
  json job = KubeflowJob("PyTorchJob");
  job.erase("spec");
  EXPECT_EQ(Mutated(job)["spec"], json({{"runPolicy", {{"suspend", true}}}}));
  job = BatchJob();
  job.erase("spec");
  EXPECT_EQ(Mutated(job)["spec"], json({{"suspend", true}}));
}

TEST(AdmissionWebhookTest, LeavesVolcanoJobUnchanged) {
  // Volcano Jobs have no suspend field: their PodGroup holds them until muster admits.
  const json vcjob = Job("batch.volcano.sh/v1alpha1", "Job", {{"queue", "team-a"}});
  EXPECT_TRUE(PatchOf(ReviewJobCreate(Review(vcjob), {})).is_null());
}

TEST(AdmissionWebhookTest, LeavesJobWithoutQueueNameUnlessConfigured) {
  json job = BatchJob();
  job["metadata"].erase("labels");
  EXPECT_TRUE(PatchOf(ReviewJobCreate(Review(job), {})).is_null());
  job["metadata"]["labels"] = {{"kueue.x-k8s.io/queue-name", ""}, {"app", "x"}};
  EXPECT_TRUE(PatchOf(ReviewJobCreate(Review(job), {})).is_null());

  WebhookOptions manage_all;
  manage_all.manage_jobs_without_queue_name = true;
  EXPECT_EQ(Mutated(job, manage_all)["spec"]["suspend"], true);
}

TEST(AdmissionWebhookTest, LeavesChildJobOfManagedOwnerUnchanged) {
  json child = BatchJob();
  child["metadata"]["ownerReferences"] = json::array({{{"apiVersion", "jobset.x-k8s.io/v1alpha2"},
                                                       {"kind", "JobSet"},
                                                       {"name", "train"},
                                                       {"uid", "1"},
                                                       {"controller", true}}});
  EXPECT_TRUE(PatchOf(ReviewJobCreate(Review(child), {})).is_null());

  // An MPIJob's launcher Job: the MPIJob is the workload.
  child["metadata"]["ownerReferences"][0]["apiVersion"] = "kubeflow.org/v2beta1";
  child["metadata"]["ownerReferences"][0]["kind"] = "MPIJob";
  WebhookOptions manage_all;
  manage_all.manage_jobs_without_queue_name = true;
  EXPECT_TRUE(PatchOf(ReviewJobCreate(Review(child), manage_all)).is_null());
}

TEST(AdmissionWebhookTest, SuspendsJobOwnedByUnmanagedController) {
  // A CronJob's Job (or an owner that is not the controller) is its own workload.
  json job = BatchJob();
  job["metadata"]["ownerReferences"] = json::array(
      {{{"apiVersion", "batch/v1"}, {"kind", "CronJob"}, {"name", "n"}, {"controller", true}},
       {{"apiVersion", "jobset.x-k8s.io/v1alpha2"}, {"kind", "JobSet"}, {"name", "n"}}});
  EXPECT_EQ(Mutated(job)["spec"]["suspend"], true);
}

TEST(AdmissionWebhookTest, LeavesAlreadySuspendedJobsUnchanged) {
  json job = BatchJob();
  job["spec"]["suspend"] = true;
  EXPECT_TRUE(PatchOf(ReviewJobCreate(Review(job), {})).is_null());
  json pytorch = KubeflowJob("PyTorchJob");
  pytorch["spec"]["runPolicy"] = {{"suspend", true}};
  EXPECT_TRUE(PatchOf(ReviewJobCreate(Review(pytorch), {})).is_null());
}

TEST(AdmissionWebhookTest, OnlyCreateIsMutated) {
  for (const std::string op : {"UPDATE", "DELETE", "CONNECT"}) {
    EXPECT_TRUE(PatchOf(ReviewJobCreate(Review(BatchJob(), op), {})).is_null()) << op;
  }
}

TEST(AdmissionWebhookTest, OtherKindsAreAllowedUnchanged) {
  json deployment = Job("apps/v1", "Deployment", {{"replicas", 1}});
  EXPECT_TRUE(PatchOf(ReviewJobCreate(Review(deployment), {})).is_null());
}

TEST(AdmissionWebhookTest, ClusterQueuesGetKueuesResourceInUseFinalizer) {
  json cq = {{"apiVersion", "kueue.x-k8s.io/v1beta1"},
             {"kind", "ClusterQueue"},
             {"metadata", {{"name", "research"}}},
             {"spec", {{"namespaceSelector", json::object()}}}};
  EXPECT_EQ(Mutated(cq)["metadata"]["finalizers"], json({"kueue.x-k8s.io/resource-in-use"}));
  cq["metadata"]["finalizers"] = {"example.com/keep"};
  EXPECT_EQ(Mutated(cq)["metadata"]["finalizers"],
            json({"example.com/keep", "kueue.x-k8s.io/resource-in-use"}));
  cq["metadata"]["finalizers"] = {"kueue.x-k8s.io/resource-in-use"};
  EXPECT_TRUE(PatchOf(ReviewJobCreate(Review(cq), {})).is_null()) << "already there";
  EXPECT_EQ(Mutated(cq)["spec"], json({{"namespaceSelector", json::object()}}));
}

TEST(AdmissionWebhookTest, ResourceFlavorsGetKueuesResourceInUseFinalizer) {
  json flavor = {{"apiVersion", "kueue.x-k8s.io/v1beta1"},
                 {"kind", "ResourceFlavor"},
                 {"metadata", {{"name", "a100"}}},
                 {"spec", {{"nodeLabels", {{"gpu", "a100"}}}}}};
  EXPECT_EQ(Mutated(flavor)["metadata"]["finalizers"], json({"kueue.x-k8s.io/resource-in-use"}));
  EXPECT_EQ(Mutated(flavor)["spec"], flavor["spec"]);
  // A LocalQueue gets none (Kueue's webhook adds none there).
  json lq = {{"apiVersion", "kueue.x-k8s.io/v1beta1"},
             {"kind", "LocalQueue"},
             {"metadata", {{"name", "team"}, {"namespace", "ml"}}},
             {"spec", {{"clusterQueue", "research"}}}};
  EXPECT_TRUE(PatchOf(ReviewJobCreate(Review(lq), {})).is_null());
}

TEST(AdmissionWebhookTest, KindFallsBackToTheObject) {
  json review = Review(BatchJob());
  review["request"].erase("kind");
  EXPECT_EQ(BatchJob().patch(PatchOf(ReviewJobCreate(review, {})))["spec"]["suspend"], true);
}

TEST(AdmissionWebhookTest, AnswersV1beta1ReviewInKind) {
  json review = Review(BatchJob());
  review["apiVersion"] = "admission.k8s.io/v1beta1";
  EXPECT_EQ(ReviewJobCreate(review, {})["apiVersion"], "admission.k8s.io/v1beta1");
}

TEST(AdmissionWebhookTest, MalformedReviewsAreDeniedWithAReason) {
  EXPECT_NE(DenialMessage(ReviewJobCreate(json::array(), {})).find("not a JSON object"),
            std::string::npos);
  EXPECT_NE(
      DenialMessage(ReviewJobCreate(json{{"kind", "AdmissionReview"}}, {})).find("apiVersion"),
      std::string::npos);

  json review = Review(BatchJob());
  review["kind"] = "Pod";
  EXPECT_NE(DenialMessage(ReviewJobCreate(review, {})).find("kind must be AdmissionReview"),
            std::string::npos);

  review = Review(BatchJob());
  review.erase("request");
  EXPECT_NE(DenialMessage(ReviewJobCreate(review, {})).find("request is missing"),
            std::string::npos);

  review = Review(BatchJob());
  review["request"]["uid"] = 42;
  EXPECT_NE(DenialMessage(ReviewJobCreate(review, {})).find("request.uid"), std::string::npos);

  review = Review(BatchJob());
  review["request"]["object"] = "job";
  json denied = ReviewJobCreate(review, {});
  EXPECT_NE(DenialMessage(denied).find("request.object"), std::string::npos);
  // The uid is known by then and must come back, or the API server discards the answer.
  EXPECT_EQ(denied["response"]["uid"], "705ab4f5-6393-11e8-b7cc-42010a800002");

  review = Review(BatchJob());
  review["request"]["object"]["spec"] = json::array();
  EXPECT_NE(DenialMessage(ReviewJobCreate(review, {})).find("object.spec is not an object"),
            std::string::npos);

  review = Review(KubeflowJob("TFJob"));
  review["request"]["object"]["spec"]["runPolicy"] = 7;
  EXPECT_NE(DenialMessage(ReviewJobCreate(review, {})).find("runPolicy is not an object"),
            std::string::npos);
}

TEST(AdmissionWebhookTest, OddlyTypedFieldsNeverThrow) {
  json review = Review(BatchJob());
  review["request"]["object"]["metadata"]["labels"] = json::array({1, 2});
  review["request"]["object"]["metadata"]["ownerReferences"] = json::array({"x", 3, nullptr});
  EXPECT_TRUE(PatchOf(ReviewJobCreate(review, {})).is_null());

  review = Review(BatchJob());
  review["request"]["object"]["metadata"]["ownerReferences"] = {{"controller", true}};
  review["request"]["kind"] = {{"group", 5}, {"kind", "Job"}};
  EXPECT_NO_THROW(ReviewJobCreate(review, {}));
}

TEST(AdmissionWebhookTest, BodyThatIsNotJsonIsDenied) {
  EXPECT_NE(DenialMessage(ReviewJobCreateBody("{not json", {})).find("not JSON"),
            std::string::npos);
  const json ok = ReviewJobCreateBody(Review(BatchJob()).dump(), {});
  EXPECT_EQ(BatchJob().patch(PatchOf(ok))["spec"]["suspend"], true);
}

// The Kueue tutorial's Jobs name no scheduler (the API server defaults the template's
// to default-scheduler before webhooks run): they get muster's at creation, when the
// template may still change. A template that names another scheduler keeps it.
TEST(AdmissionWebhookTest, TemplatesNamingNoSchedulerGetMustersAtCreation) {
  WebhookOptions options;
  options.scheduler_name = "muster";
  json job = BatchJob();
  EXPECT_EQ(Mutated(job, options)["spec"]["template"]["spec"]["schedulerName"], "muster");
  job["spec"]["template"]["spec"]["schedulerName"] = "default-scheduler";
  EXPECT_EQ(Mutated(job, options)["spec"]["template"]["spec"]["schedulerName"], "muster");
  job["spec"]["template"]["spec"]["schedulerName"] = "volcano";
  EXPECT_EQ(Mutated(job, options)["spec"]["template"]["spec"]["schedulerName"], "volcano");
  EXPECT_EQ(Mutated(job, options)["spec"]["suspend"], true);

  // Every template of a multi-template kind, each on its own.
  json pytorch = KubeflowJob("PyTorchJob");
  pytorch["spec"]["pytorchReplicaSpecs"]["Master"] = {
      {"replicas", 1}, {"template", {{"spec", {{"schedulerName", "other"}}}}}};
  pytorch["spec"]["pytorchReplicaSpecs"]["Worker"]["template"] = {{"spec", json::object()}};
  json mutated = Mutated(pytorch, options);
  EXPECT_EQ(mutated["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["schedulerName"],
            "other");
  EXPECT_EQ(mutated["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["schedulerName"],
            "muster");
  json jobset = Job(
      "jobset.x-k8s.io/v1alpha2", "JobSet",
      {{"replicatedJobs",
        json::array({{{"name", "workers"},
                      {"template", {{"spec", {{"template", {{"spec", json::object()}}}}}}}}})}});
  EXPECT_EQ(Mutated(jobset, options)["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
                                    ["spec"]["schedulerName"],
            "muster");

  // No scheduler name configured (the default options), or a job muster does not
  // queue: templates are left alone.
  EXPECT_FALSE(Mutated(BatchJob())["spec"]["template"]["spec"].contains("schedulerName"));
  json unqueued = BatchJob();
  unqueued["metadata"].erase("labels");
  EXPECT_EQ(Mutated(unqueued, options), unqueued);
}

}  // namespace
}  // namespace muster::kube
