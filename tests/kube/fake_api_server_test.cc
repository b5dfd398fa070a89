// The fake API server's own contract, through KubeClient over HTTP: what it serves,
// the faults it injects and the request log tests assert on.
#include "kube/fake_api_server.h"

#include <gtest/gtest.h>

#include "kube/kube_client.h"

namespace muster::kube {
namespace {

using nlohmann::json;
using testing::FakeApiServer;

json PodJson(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec", {{"containers", {{{"name", "main"}, {"image", "busybox"}}}}}}};
}

class FakeApiServerTest : public ::testing::Test {
 protected:
  FakeApiServer fake_;
  KubeClient client_{fake_.connection()};
};

TEST_F(FakeApiServerTest, ServesObjectsCreatedInTheStoreAndOverHttp) {
  fake_.Create(PodJson("a"));
  HttpResponse created =
      client_.Request("POST", "/api/v1/namespaces/default/pods", PodJson("b").dump());
  ASSERT_EQ(created.code, 201) << created.body;
  EXPECT_TRUE(fake_.store().Get({"pods", "default", "b"}).ok());
  HttpResponse list = client_.Get("/api/v1/pods");
  ASSERT_EQ(list.code, 200);
  EXPECT_EQ(json::parse(list.body)["items"].size(), 2u);
}

TEST_F(FakeApiServerTest, InjectedFailuresAnswerStatusThenServe) {
  // Created over HTTP, so stored with the API server's defaults a PUT must repeat.
  ASSERT_EQ(client_.Request("POST", "/api/v1/namespaces/default/pods", PodJson("a").dump()).code,
            201);
  fake_.FailNext("PUT", "/pods/a", 409, 2);
  json pod = fake_.store().Get({"pods", "default", "a"}).value();
  pod["metadata"]["labels"]["x"] = "1";
  for (int i = 0; i < 2; ++i) {
    HttpResponse r = client_.Request("PUT", "/api/v1/namespaces/default/pods/a", pod.dump());
    ASSERT_EQ(r.code, 409);
    json status = json::parse(r.body);
    EXPECT_EQ(status["kind"], "Status");
    EXPECT_EQ(status["reason"], "Conflict");
  }
  // Other methods and paths were never affected; the third PUT is served.
  EXPECT_EQ(client_.Get("/api/v1/namespaces/default/pods/a").code, 200);
  EXPECT_EQ(client_.Request("PUT", "/api/v1/namespaces/default/pods/a", pod.dump()).code, 200);
  EXPECT_EQ(fake_.CountRequests("PUT", "/pods/a"), 3);
  EXPECT_EQ(fake_.CountRequests("", "/pods/a"), 4);
}

TEST_F(FakeApiServerTest, PagesListsWithContinueTokens) {
  for (const char* name : {"a", "b", "c", "d", "e"}) fake_.Create(PodJson(name));
  std::vector<std::string> names;
  std::string token;
  std::string first_rv;
  int pages = 0;
  do {
    HttpResponse r =
        client_.Get("/api/v1/pods?limit=2" + (token.empty() ? "" : "&continue=" + token));
    ASSERT_EQ(r.code, 200) << r.body;
    json list = json::parse(r.body);
    for (const auto& p : list["items"]) names.push_back(p["metadata"]["name"]);
    if (first_rv.empty()) first_rv = list["metadata"]["resourceVersion"];
    EXPECT_EQ(list["metadata"]["resourceVersion"], first_rv);  // one snapshot
    token = list["metadata"].value("continue", "");
    if (pages == 0) fake_.Create(PodJson("late"));  // not in this list's snapshot
    ++pages;
  } while (!token.empty());
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c", "d", "e"}));
  EXPECT_EQ(client_.Get("/api/v1/pods?limit=2&continue=99:2").code, 410);
}

TEST_F(FakeApiServerTest, BindsPodsLikeTheApiServer) {
  fake_.Create(PodJson("a"));
  const json binding = {{"apiVersion", "v1"},
                        {"kind", "Binding"},
                        {"metadata", {{"name", "a"}}},
                        {"target", {{"kind", "Node"}, {"name", "gpu-0"}}}};
  const std::string path = "/api/v1/namespaces/default/pods/a/binding";
  EXPECT_EQ(client_.Request("POST", path, binding.dump()).code, 201);
  EXPECT_EQ(fake_.store().Get({"pods", "default", "a"})->at("spec").at("nodeName"), "gpu-0");
  EXPECT_EQ(client_.Request("POST", path, binding.dump()).code, 409);
  EXPECT_EQ(
      client_.Request("POST", "/api/v1/namespaces/default/pods/zz/binding", binding.dump()).code,
      400);  // the Binding names another pod
}

TEST_F(FakeApiServerTest, AbsentResourcesAnswer404UntilInstalled) {
  fake_.SetAbsent("/apis/kubeflow.org/", true);
  HttpResponse r = client_.Get("/apis/kubeflow.org/v1/pytorchjobs");
  EXPECT_EQ(r.code, 404);
  EXPECT_EQ(json::parse(r.body)["reason"], "NotFound");
  EXPECT_EQ(client_.Get("/api/v1/pods").code, 200);
  fake_.SetAbsent("/apis/kubeflow.org/", false);
  EXPECT_EQ(client_.Get("/apis/kubeflow.org/v1/pytorchjobs").code, 200);
}

TEST_F(FakeApiServerTest, WatchFaultsShapeTheStream) {
  fake_.Create(PodJson("a"));
  const std::string rv = std::to_string(fake_.store().resource_version());
  std::vector<json> events;
  auto collect = [&](std::string_view line) {
    events.push_back(json::parse(line));
    return true;
  };
  const std::string watch = "/api/v1/pods?watch=1&resourceVersion=" + rv;

  fake_.GoneOnNextWatch("watch=1");
  EXPECT_EQ(client_.Stream(watch, collect).code, 200);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["type"], "ERROR");
  EXPECT_EQ(events[0]["object"]["code"], 410);

  events.clear();
  fake_.EndWatchesAfter(2);
  fake_.Create(PodJson("b"));
  fake_.Create(PodJson("c"));
  fake_.Create(PodJson("d"));
  EXPECT_EQ(client_.Stream(watch, collect).code, 200);  // ends by itself after two
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0]["object"]["metadata"]["name"], "b");
  EXPECT_EQ(events[1]["object"]["metadata"]["name"], "c");
  EXPECT_EQ(fake_.CountRequests("GET", "watch=1"), 2);
}

}  // namespace
}  // namespace muster::kube
