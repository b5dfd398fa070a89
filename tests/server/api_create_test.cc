// The create path's shortcuts: the job the API decoded to validate a create travels
// with the store's change, so the scheduler does not decode it again, and the answer
// is the stored text, not the object serialised again. Both must be exactly what the
// long way gives.
#include <gtest/gtest.h>

#include <mutex>
#include <vector>

#include "api_fixture.h"
#include "control/store_snapshot.h"
#include "model/manifest_set.h"

namespace muster::server {
namespace {

using nlohmann::json;

class ApiCreateTest : public testing::ApiFixture {
 protected:
  void SetUp() override {
    ApiFixture::SetUp();
    store_->hub().Subscribe([this](const WatchHub::ChangePtr& change) {
      std::lock_guard<std::mutex> lock(mu_);
      changes_.push_back(change);
    });
  }
  // The last change published for `resource`.
  WatchHub::ChangePtr LastChange(const std::string& resource) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = changes_.rbegin(); it != changes_.rend(); ++it) {
      if ((*it)->resource == resource) return *it;
    }
    return nullptr;
  }

  std::mutex mu_;
  std::vector<WatchHub::ChangePtr> changes_;
};

const char kJob[] = R"({"apiVersion":"batch/v1","kind":"Job",
  "metadata":{"name":"train","labels":{"kueue.x-k8s.io/queue-name":"lq"},
              "annotations":{"note":"x"}},
  "spec":{"parallelism":2,"completions":2,"template":{"spec":{"restartPolicy":"Never",
    "containers":[{"name":"main","image":"busybox",
                   "resources":{"limits":{"nvidia.com/gpu":"2","cpu":"1"}}}]}}}})";

const char kPyTorchJob[] = R"({"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob",
  "metadata":{"generateName":"ddp-"},
  "spec":{"pytorchReplicaSpecs":{
    "Master":{"replicas":1,"template":{"spec":{"containers":[{"name":"pytorch",
      "image":"pytorch","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}},
    "Worker":{"replicas":3,"template":{"spec":{"containers":[{"name":"pytorch",
      "image":"pytorch","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}}}}})";

// What the scheduler builds from the handed-over decode equals what it builds from
// decoding the stored object.
void ExpectSameWorkload(const control::Change& change) {
  ASSERT_NE(change.decoded, nullptr);
  model::ManifestSet config;
  auto handed = control::DecodeJob(change.Object(), config, change.decoded.get());
  auto decoded = control::DecodeJob(change.Object(), config);
  ASSERT_TRUE(handed.ok()) << handed.status().ToString();
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(handed->key, decoded->key);
  EXPECT_EQ(handed->meta.name, decoded->meta.name);
  EXPECT_EQ(handed->meta.namespace_, decoded->meta.namespace_);
  EXPECT_EQ(handed->meta.labels, decoded->meta.labels);
  EXPECT_EQ(handed->meta.annotations, decoded->meta.annotations);
  EXPECT_EQ(handed->meta.order, decoded->meta.order);
  EXPECT_EQ(handed->meta.source.file, decoded->meta.source.file);
  EXPECT_EQ(handed->meta.source.line, decoded->meta.source.line);
  EXPECT_EQ(handed->local_queue, decoded->local_queue);
  EXPECT_EQ(handed->priority, decoded->priority);
  EXPECT_EQ(handed->min_available, decoded->min_available);
  ASSERT_EQ(handed->pod_sets.size(), decoded->pod_sets.size());
  for (size_t i = 0; i < handed->pod_sets.size(); ++i) {
    EXPECT_EQ(handed->pod_sets[i].name, decoded->pod_sets[i].name);
    EXPECT_EQ(handed->pod_sets[i].count, decoded->pod_sets[i].count);
    EXPECT_EQ(handed->pod_sets[i].tmpl.source.file, decoded->pod_sets[i].tmpl.source.file);
  }
}

TEST_F(ApiCreateTest, AJobCreateHandsItsDecodeToTheChange) {
  auto created = Call("POST", "/apis/batch/v1/namespaces/default/jobs", kJob);
  ASSERT_EQ(created.code, 201) << created.body;
  auto change = LastChange("jobs.batch");
  ASSERT_NE(change, nullptr);
  EXPECT_EQ(model::MetaOf(change->decoded->job).source.file, "store:Job train");
  ExpectSameWorkload(*change);

  created = Call("POST", "/apis/kubeflow.org/v1/namespaces/team/pytorchjobs", kPyTorchJob);
  ASSERT_EQ(created.code, 201) << created.body;
  change = LastChange("pytorchjobs.kubeflow.org");
  ASSERT_NE(change, nullptr);
  ExpectSameWorkload(*change);
}

TEST_F(ApiCreateTest, OnlyJobCreatesCarryADecode) {
  const char cq[] = R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ClusterQueue",
    "metadata":{"name":"cq"},"spec":{"namespaceSelector":{},"resourceGroups":[]}})";
  ASSERT_EQ(Call("POST", "/apis/kueue.x-k8s.io/v1beta1/clusterqueues", cq).code, 201);
  auto change = LastChange("clusterqueues.kueue.x-k8s.io");
  ASSERT_NE(change, nullptr);
  EXPECT_EQ(change->decoded, nullptr);
  // A status write is not decoded.
  ASSERT_EQ(Call("POST", "/apis/batch/v1/namespaces/default/jobs", kJob).code, 201);
  json job = Body(Call("GET", "/apis/batch/v1/namespaces/default/jobs/train"));
  job["status"] = {{"active", 1}};
  ASSERT_EQ(Call("PUT", "/apis/batch/v1/namespaces/default/jobs/train/status", job.dump()).code,
            200);
  change = LastChange("jobs.batch");
  ASSERT_NE(change, nullptr);
  EXPECT_EQ(change->type, control::ChangeType::kModified);
  EXPECT_EQ(change->decoded, nullptr);
}

// PUT and PATCH decode the job once too (to validate it) and hand that decode over;
// the stored object's status and server-set metadata, which the decode does not
// read, come from the stored object.
TEST_F(ApiCreateTest, UpdatesAndPatchesHandTheirDecodeToTheChange) {
  ASSERT_EQ(Call("POST", "/apis/batch/v1/namespaces/default/jobs", kJob).code, 201);
  json job = Body(Call("GET", "/apis/batch/v1/namespaces/default/jobs/train"));
  job["metadata"]["labels"]["extra"] = "y";
  job.erase("status");
  ASSERT_EQ(Call("PUT", "/apis/batch/v1/namespaces/default/jobs/train", job.dump()).code, 200);
  auto change = LastChange("jobs.batch");
  ASSERT_NE(change, nullptr);
  EXPECT_EQ(change->type, control::ChangeType::kModified);
  ExpectSameWorkload(*change);
  EXPECT_EQ(model::MetaOf(change->decoded->job).labels.at("extra"), "y");

  auto patched = Call("PATCH", "/apis/batch/v1/namespaces/default/jobs/train",
                      R"({"metadata":{"labels":{"patched":"z"}}})", "application/merge-patch+json");
  ASSERT_EQ(patched.code, 200) << patched.body;
  change = LastChange("jobs.batch");
  ASSERT_NE(change, nullptr);
  ExpectSameWorkload(*change);
  EXPECT_EQ(model::MetaOf(change->decoded->job).labels.at("patched"), "z");
}

TEST_F(ApiCreateTest, TheAnswerIsTheStoredObjectByteForByte) {
  struct Case {
    std::string collection, body, name;
  };
  const std::vector<Case> cases = {
      {"/apis/batch/v1/namespaces/default/jobs", kJob, "train"},
      {"/api/v1/namespaces/default/configmaps",
       R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},
           "data":{"k":"v \u00e9 \ud83d\ude00"}})",
       "c"},
      {"/apis/kueue.x-k8s.io/v1beta1/clusterqueues",
       R"({"metadata":{"name":"cq"},"spec":{"namespaceSelector":{},"resourceGroups":[]}})", "cq"},
  };
  for (const auto& c : cases) {
    auto created = Call("POST", c.collection + "?fieldManager=kubectl-create", c.body);
    ASSERT_EQ(created.code, 201) << created.body;
    auto got = Call("GET", c.collection + "/" + c.name);
    ASSERT_EQ(got.code, 200);
    EXPECT_EQ(created.body, got.body) << c.collection;
    json object = Body(created);
    EXPECT_FALSE(object["metadata"].value("uid", "").empty());
    EXPECT_FALSE(object["metadata"].value("resourceVersion", "").empty());
    EXPECT_FALSE(object["metadata"].value("creationTimestamp", "").empty());
    EXPECT_EQ(object["metadata"]["managedFields"][0]["manager"], "kubectl-create");
  }
}

}  // namespace
}  // namespace muster::server
