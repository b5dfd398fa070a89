// The pods/binding subresource through ApiHandler, as a scheduler (muster kube, the
// kube-scheduler) sends it to a Kubernetes API server.
#include "server/pod_binding.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "server/api_handler.h"

namespace muster::server {
namespace {

using nlohmann::json;

class PodBindingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("muster-binding-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    auto opened = ObjectStore::Open(dir_.string());
    ASSERT_TRUE(opened.ok());
    store_ = std::move(opened).value();
    handler_ = std::make_unique<ApiHandler>(*store_, "127.0.0.1:1");
    auto created =
        store_->Create({"pods", "team-a", "trainer-0"},
                       {{"apiVersion", "v1"},
                        {"kind", "Pod"},
                        {"metadata", {{"name", "trainer-0"}, {"namespace", "team-a"}}},
                        {"spec", {{"containers", {{{"name", "main"}, {"image", "pytorch"}}}}}},
                        {"status",
                         {{"phase", "Pending"},
                          {"conditions", {{{"type", "PodScheduled"}, {"status", "False"}}}}}}});
    ASSERT_TRUE(created.ok());
    uid_ = created->at("metadata").at("uid").get<std::string>();
  }
  void TearDown() override {
    handler_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  ApiResponse Bind(const std::string& pod, const json& binding, std::string method = "POST") {
    ApiRequest r;
    r.method = std::move(method);
    r.path = "/api/v1/namespaces/team-a/pods/" + pod + "/binding";
    r.content_type = "application/json";
    r.body = binding.dump();
    auto result = handler_->Handle(r);
    auto* response = std::get_if<ApiResponse>(&result);
    return response != nullptr ? *response : ApiResponse{-1, "", ""};
  }
  static json BindingTo(const std::string& pod, const std::string& node) {
    return {{"apiVersion", "v1"},
            {"kind", "Binding"},
            {"metadata", {{"name", pod}, {"namespace", "team-a"}}},
            {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
  }
  json Pod() { return store_->Get({"pods", "team-a", "trainer-0"}).value(); }

  std::filesystem::path dir_;
  std::unique_ptr<ObjectStore> store_;
  std::unique_ptr<ApiHandler> handler_;
  std::string uid_;
};

TEST_F(PodBindingTest, MatchesOnlyTheBindingSubresource) {
  auto target = MatchPodBindingPath("/api/v1/namespaces/ns/pods/p/binding");
  ASSERT_TRUE(target.has_value());
  EXPECT_EQ(target->namespace_, "ns");
  EXPECT_EQ(target->name, "p");
  EXPECT_FALSE(MatchPodBindingPath("/api/v1/namespaces/ns/pods/p/log"));
  EXPECT_FALSE(MatchPodBindingPath("/api/v1/namespaces/ns/pods/p"));
  EXPECT_FALSE(MatchPodBindingPath("/api/v1/pods/p/binding"));
}

TEST_F(PodBindingTest, BindSetsNodeNameAndScheduledCondition) {
  json binding = BindingTo("trainer-0", "gpu-node-3");
  binding["metadata"]["uid"] = uid_;
  binding["metadata"]["annotations"] = {{"muster.dev/placement", "numa-0"}};
  const int64_t rv_before = store_->resource_version();
  ApiResponse r = Bind("trainer-0", binding);
  ASSERT_EQ(r.code, 201) << r.body;
  json status = json::parse(r.body);
  EXPECT_EQ(status["kind"], "Status");
  EXPECT_EQ(status["status"], "Success");

  json pod = Pod();
  EXPECT_EQ(pod["spec"]["nodeName"], "gpu-node-3");
  EXPECT_EQ(pod["metadata"]["annotations"]["muster.dev/placement"], "numa-0");
  ASSERT_EQ(pod["status"]["conditions"].size(), 1u);
  EXPECT_EQ(pod["status"]["conditions"][0]["type"], "PodScheduled");
  EXPECT_EQ(pod["status"]["conditions"][0]["status"], "True");
  EXPECT_EQ(pod["status"]["phase"], "Pending");  // the kubelet's to change, not the binder's
  // One committed write: watchers (the reflector) see a MODIFIED pod.
  EXPECT_EQ(store_->resource_version(), rv_before + 1);
}

TEST_F(PodBindingTest, AlreadyBoundPodIsAConflict) {
  ASSERT_EQ(Bind("trainer-0", BindingTo("trainer-0", "gpu-node-3")).code, 201);
  // Upstream refuses any second binding, to the same node too: a binder that retries
  // after a lost answer reads the pod to learn where it went.
  for (const char* node : {"gpu-node-4", "gpu-node-3"}) {
    ApiResponse r = Bind("trainer-0", BindingTo("trainer-0", node));
    EXPECT_EQ(r.code, 409) << node;
    json status = json::parse(r.body);
    EXPECT_EQ(status["reason"], "Conflict");
    EXPECT_NE(status["message"].get<std::string>().find("already assigned to node \"gpu-node-3\""),
              std::string::npos)
        << status["message"];
  }
  EXPECT_EQ(Pod()["spec"]["nodeName"], "gpu-node-3");
}

TEST_F(PodBindingTest, MissingPodIsNotFound) {
  ApiResponse r = Bind("ghost", BindingTo("ghost", "gpu-node-3"));
  EXPECT_EQ(r.code, 404);
  EXPECT_EQ(json::parse(r.body)["reason"], "NotFound");
}

TEST_F(PodBindingTest, StaleUidIsAConflict) {
  json binding = BindingTo("trainer-0", "gpu-node-3");
  binding["metadata"]["uid"] = "uid-of-an-earlier-pod";
  EXPECT_EQ(Bind("trainer-0", binding).code, 409);
  EXPECT_FALSE(Pod()["spec"].contains("nodeName"));
}

TEST_F(PodBindingTest, MalformedBindingsAreRejected) {
  EXPECT_EQ(Bind("trainer-0", BindingTo("other-pod", "gpu-node-3")).code, 400);
  json no_node = BindingTo("trainer-0", "");
  EXPECT_EQ(Bind("trainer-0", no_node).code, 422);
  json wrong_kind = BindingTo("trainer-0", "gpu-node-3");
  wrong_kind["target"]["kind"] = "Pod";
  EXPECT_EQ(Bind("trainer-0", wrong_kind).code, 422);
  EXPECT_EQ(Bind("trainer-0", BindingTo("trainer-0", "gpu-node-3"), "PUT").code, 405);
  EXPECT_FALSE(Pod()["spec"].contains("nodeName"));
}

}  // namespace
}  // namespace muster::server
