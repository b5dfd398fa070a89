// ResourceQuota: validation, what objects count, the 403 at create with upstream's
// message, and the status the quota controller writes.
#include "server/resource_quota.h"

#include <gtest/gtest.h>

#include "api_fixture.h"
#include "server/quota_controller.h"

namespace muster::server {
namespace {

using nlohmann::json;

const control::ResourceType& TypeOf(const std::string& kind, const std::string& group = "") {
  for (const auto& t : control::ResourceTypes()) {
    if (t.kind == kind && t.group == group) return t;
  }
  throw std::runtime_error("no kind " + kind);
}

json GpuPod(const std::string& name, int gpus, const std::string& phase = "Running") {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "team-a"}}},
          {"spec",
           {{"containers",
             {{{"name", "c"},
               {"image", "busybox"},
               {"resources",
                {{"limits", {{"nvidia.com/gpu", std::to_string(gpus)}, {"memory", "1Gi"}}},
                 {"requests", {{"cpu", "500m"}}}}}}}}}},
          {"status", {{"phase", phase}}}};
}

TEST(ResourceQuotaUsage, PodsCountRequestsDefaultedFromLimits) {
  QuotaAmounts u = UsageOf(TypeOf("Pod"), GpuPod("p", 2));
  EXPECT_EQ(u["pods"], 1000);
  EXPECT_EQ(u["count/pods"], 1000);
  EXPECT_EQ(u["requests.nvidia.com/gpu"], 2000);
  EXPECT_EQ(u["requests.cpu"], 500);
  EXPECT_EQ(u["cpu"], 500);
  EXPECT_EQ(u["requests.memory"], 1024LL * 1024 * 1024 * 1000);
  EXPECT_EQ(u["limits.memory"], 1024LL * 1024 * 1024 * 1000);
  EXPECT_EQ(u.count("limits.cpu"), 0u);
  EXPECT_EQ(u.count("limits.nvidia.com/gpu"), 0u);  // extended resources: requests only
  EXPECT_TRUE(UsageOf(TypeOf("Pod"), GpuPod("done", 2, "Succeeded")).empty());
}

TEST(ResourceQuotaUsage, ObjectsCountByKind) {
  EXPECT_EQ(UsageOf(TypeOf("Job", "batch"), json::object())["count/jobs.batch"], 1000);
  EXPECT_EQ(UsageOf(TypeOf("ConfigMap"), json::object())["configmaps"], 1000);
  json claim = {
      {"spec",
       {{"storageClassName", "local"}, {"resources", {{"requests", {{"storage", "10Gi"}}}}}}}};
  QuotaAmounts c = UsageOf(TypeOf("PersistentVolumeClaim"), claim);
  EXPECT_EQ(c["persistentvolumeclaims"], 1000);
  EXPECT_EQ(c["requests.storage"], 10LL * 1024 * 1024 * 1024 * 1000);
  EXPECT_EQ(c["local.storageclass.storage.k8s.io/requests.storage"], c["requests.storage"]);
  json node_port = {{"spec", {{"type", "NodePort"}, {"ports", {{{"port", 1}}, {{"port", 2}}}}}}};
  EXPECT_EQ(UsageOf(TypeOf("Service"), node_port)["services.nodeports"], 2000);
  EXPECT_EQ(FormatQuotaAmount("requests.memory", 1024LL * 1024 * 1024 * 1000), "1Gi");
  EXPECT_EQ(FormatQuotaAmount("requests.nvidia.com/gpu", 8000), "8");
  EXPECT_EQ(FormatQuotaAmount("requests.cpu", 500), "500m");
}

class ResourceQuotaApiTest : public testing::ApiFixture {
 protected:
  ApiResponse Quota(const std::string& name, json hard) {
    return Call("POST", "/api/v1/namespaces/team-a/resourcequotas",
                json{{"metadata", {{"name", name}}}, {"spec", {{"hard", std::move(hard)}}}}.dump());
  }
  ApiResponse Pod(const std::string& name, int gpus) {
    return Call("POST", "/api/v1/namespaces/team-a/pods", GpuPod(name, gpus).dump());
  }
};

TEST_F(ResourceQuotaApiTest, HardIsValidatedAsUpstream) {
  auto r = Quota("q", {{"gpus", "1"}, {"pods", "-1"}, {"requests.nvidia.com/gpu", "0.5"}});
  ASSERT_EQ(r.code, 422);
  const std::string message = Body(r)["message"];
  EXPECT_NE(message.find("spec.hard[gpus]: Invalid value: \"gpus\": must be a standard resource "
                         "for quota"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("spec.hard[pods]: Invalid value: \"-1\": must be greater than or equal "
                         "to 0"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("spec.hard[requests.nvidia.com/gpu]: Invalid value: \"0.5\""),
            std::string::npos)
      << message;
  auto scoped =
      Call("POST", "/api/v1/namespaces/team-a/resourcequotas",
           R"({"metadata":{"name":"s"},"spec":{"hard":{"pods":"1"},"scopes":["BestEffort"]}})");
  ASSERT_EQ(scoped.code, 201) << scoped.body;
  ASSERT_EQ(scoped.warnings.size(), 1u);  // scopes are not acted on: said so
}

TEST_F(ResourceQuotaApiTest, ACreatePastTheQuotaIs403WithUpstreamsMessage) {
  ASSERT_EQ(Quota("gpu-fence", {{"requests.nvidia.com/gpu", "4"}, {"pods", "10"}}).code, 201);
  auto over = Pod("big", 8);
  ASSERT_EQ(over.code, 403) << over.body;
  json b = Body(over);
  EXPECT_EQ(b["reason"], "Forbidden");
  EXPECT_EQ(b["message"],
            "pods \"big\" is forbidden: exceeded quota: gpu-fence, requested: "
            "requests.nvidia.com/gpu=8, used: requests.nvidia.com/gpu=0, limited: "
            "requests.nvidia.com/gpu=4");
  EXPECT_EQ(Pod("a", 3).code, 201);
  auto second = Pod("b", 2);
  ASSERT_EQ(second.code, 403);
  EXPECT_NE(Body(second)["message"].get<std::string>().find(
                "used: requests.nvidia.com/gpu=3, limited: requests.nvidia.com/gpu=4"),
            std::string::npos);
  EXPECT_EQ(Pod("c", 1).code, 201);
  // A pod that finished holds nothing: its GPUs are free again.
  json done = *store_->Get({"pods", "team-a", "a"});
  done["status"]["phase"] = "Succeeded";
  ASSERT_TRUE(store_->Update({"pods", "team-a", "a"}, done, WriteScope::kAll).ok());
  EXPECT_EQ(Pod("d", 3).code, 201);
  // Other namespaces are not fenced.
  auto elsewhere = GpuPod("free", 8);
  elsewhere["metadata"]["namespace"] = "team-b";
  EXPECT_EQ(Call("POST", "/api/v1/namespaces/team-b/pods", elsewhere.dump()).code, 201);
}

TEST_F(ResourceQuotaApiTest, ObjectCountsAreFenced) {
  ASSERT_EQ(Quota("counts", {{"configmaps", "1"}, {"count/jobs.batch", "0"}}).code, 201);
  auto cm = [&](const std::string& name) {
    return Call("POST", "/api/v1/namespaces/team-a/configmaps",
                json{{"metadata", {{"name", name}}}, {"data", {{"k", "v"}}}}.dump());
  };
  EXPECT_EQ(cm("one").code, 201);
  auto two = cm("two");
  ASSERT_EQ(two.code, 403);
  EXPECT_EQ(Body(two)["message"],
            "configmaps \"two\" is forbidden: exceeded quota: counts, requested: configmaps=1, "
            "used: configmaps=1, limited: configmaps=1");
  auto job = Call("POST", "/apis/batch/v1/namespaces/team-a/jobs",
                  R"({"metadata":{"name":"j"},"spec":{"template":{"spec":{"restartPolicy":"Never",)"
                  R"("containers":[{"name":"c","image":"busybox"}]}}}})");
  ASSERT_EQ(job.code, 403) << job.body;
  EXPECT_NE(Body(job)["message"].get<std::string>().find(
                "jobs.batch \"j\" is forbidden: exceeded quota: counts, requested: "
                "count/jobs.batch=1"),
            std::string::npos);
}

TEST_F(ResourceQuotaApiTest, TheControllerKeepsStatusUsedUpToDate) {
  ASSERT_EQ(Quota("fence", {{"requests.nvidia.com/gpu", "4"},
                            {"requests.memory", "16Gi"},
                            {"pods", "10"},
                            {"configmaps", "5"}})
                .code,
            201);
  ASSERT_EQ(Pod("a", 2).code, 201);
  QuotaController::Sync(*store_, "team-a");
  json status = (*store_->Get({"resourcequotas", "team-a", "fence"}))["status"];
  EXPECT_EQ(status["hard"]["requests.memory"], "16Gi");
  EXPECT_EQ(status["used"]["requests.nvidia.com/gpu"], "2");
  EXPECT_EQ(status["used"]["requests.memory"], "1Gi");
  EXPECT_EQ(status["used"]["pods"], "1");
  EXPECT_EQ(status["used"]["configmaps"], "0");
  ASSERT_EQ(Call("DELETE", "/api/v1/namespaces/team-a/pods/a").code, 200);
  QuotaController::Sync(*store_, "team-a");
  status = (*store_->Get({"resourcequotas", "team-a", "fence"}))["status"];
  EXPECT_EQ(status["used"]["requests.nvidia.com/gpu"], "0");
  // kubectl's REQUEST column: "name: used/hard", limits.* apart.
  auto table = Call("GET", "/api/v1/namespaces/team-a/resourcequotas/fence", "", "application/json",
                    "application/json;as=Table;v=v1;g=meta.k8s.io");
  json t = Body(table);
  ASSERT_EQ(t["columnDefinitions"].size(), 4u);
  EXPECT_EQ(t["columnDefinitions"][1]["name"], "Age");
  EXPECT_EQ(t["columnDefinitions"][2]["name"], "Request");
  EXPECT_EQ(t["rows"][0]["cells"][2],
            "configmaps: 0/5, pods: 0/10, requests.memory: 0/16Gi, requests.nvidia.com/gpu: 0/4");
  EXPECT_EQ(t["rows"][0]["cells"][3], "");
}

TEST_F(ResourceQuotaApiTest, DefaultServiceAccountPerNamespace) {
  ASSERT_EQ(Pod("a", 0).code, 201);  // makes namespace team-a
  QuotaController::EnsureDefaultAccount(*store_, "team-a");
  EXPECT_TRUE(store_->Get({"serviceaccounts", "team-a", "default"}).ok());
  QuotaController::EnsureDefaultAccount(*store_, "missing");
  EXPECT_FALSE(store_->Get({"serviceaccounts", "missing", "default"}).ok());
}

}  // namespace
}  // namespace muster::server
