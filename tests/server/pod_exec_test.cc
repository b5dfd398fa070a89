// The exec subresource at the handler: kube-apiserver's checks of the request (the
// query, the container, the pod's host and phase), the WebSocket upgrade it needs, and
// RBAC's verb for it; the session itself is exec_session_test.cc's.
#include "server/pod_exec.h"

#include <gtest/gtest.h>

#include "api_fixture.h"
#include "process_test_util.h"
#include "server/auth/request_attributes.h"
#include "server/pod_paths.h"
#include "server/process_supervisor.h"

namespace muster::server {
namespace {

using nlohmann::json;

TEST(ParseExecQueryTest, ReadsWhatKubectlSends) {
  auto r = ParseExecQuery(
      "command=sh&command=-c&command=echo+%22a+b%22&container=main&stdin=true&stdout=true&"
      "stderr=true&tty=true");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->command, (std::vector<std::string>{"sh", "-c", "echo \"a b\""}));
  EXPECT_EQ(r->container, "main");
  EXPECT_TRUE(r->streams.in);
  EXPECT_TRUE(r->streams.out);
  EXPECT_TRUE(r->streams.tty);
  EXPECT_FALSE(r->streams.err);  // the terminal carries it
}

TEST(ParseExecQueryTest, RefusesWhatTheKubeletRefuses) {
  auto none = ParseExecQuery("command=ls");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message(), "you must specify at least 1 of stdin, stdout, stderr");
  auto empty = ParseExecQuery("stdout=true");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("at least one command"), std::string::npos);
  auto huge = ParseExecQuery("stdout=true&command=" + std::string(70000, 'x'));
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("command: exceeds"), std::string::npos);
}

TEST(MatchPodExecPathTest, OnlyTheExecSubresource) {
  auto t = MatchPodExecPath("/api/v1/namespaces/team-a/pods/trainer/exec");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->namespace_, "team-a");
  EXPECT_EQ(t->name, "trainer");
  EXPECT_FALSE(MatchPodExecPath("/api/v1/namespaces/team-a/pods/trainer/log"));
  EXPECT_FALSE(MatchPodExecPath("/api/v1/namespaces/team-a/pods/exec"));
}

TEST(PodExecRbacTest, AWebSocketGetIsAuthorizedAsCreate) {
  auto a = auth::AttributesOf("GET", "/api/v1/namespaces/team-a/pods/trainer/exec", {}, {});
  EXPECT_EQ(a.verb, "create");
  EXPECT_EQ(a.resource, "pods");
  EXPECT_EQ(a.subresource, "exec");
  EXPECT_EQ(auth::AttributesOf("GET", "/api/v1/namespaces/a/pods/p/log", {}, {}).verb, "get");
}

class PodExecRouteTest : public testing::ApiFixture {
 protected:
  void Put(json pod) {
    pod["apiVersion"] = "v1";
    pod["kind"] = "Pod";
    pod["metadata"]["namespace"] = "default";
    ASSERT_TRUE(store_->Create({"pods", "default", pod["metadata"]["name"]}, pod).ok());
  }
  static json Pod(const std::string& name, const std::string& node, const std::string& phase,
                  json containers = json::array({{{"name", "main"}, {"image", "busybox"}}})) {
    json pod = {{"metadata", {{"name", name}}},
                {"spec", {{"containers", std::move(containers)}}},
                {"status", {{"phase", phase}}}};
    if (!node.empty()) pod["spec"]["nodeName"] = node;
    return pod;
  }
  ApiResponse Exec(const std::string& pod, const std::string& query, bool websocket = true) {
    ApiRequest r;
    r.method = "GET";
    r.path = "/api/v1/namespaces/default/pods/" + pod + "/exec";
    r.query_string = query;
    if (websocket) {
      r.upgrade.protocol = "websocket";
      r.upgrade.key = "dGhlIHNhbXBsZSBub25jZQ==";
      r.upgrade.version = "13";
      r.upgrade.protocols = "v5.channel.k8s.io,v4.channel.k8s.io";
    }
    auto result = handler_->Handle(r);
    auto* resp = std::get_if<ApiResponse>(&result);
    return resp ? *resp : ApiResponse{-1, "", "session"};
  }
  static std::string Message(const ApiResponse& r) { return Body(r).value("message", ""); }
};

TEST_F(PodExecRouteTest, ChecksThePodAsKubeApiserverDoes) {
  Put(Pod("two", "node-0", "Running",
          json::array({{{"name", "a"}, {"image", "x"}}, {{"name", "b"}, {"image", "x"}}})));
  Put(Pod("pending", "", "Pending"));
  Put(Pod("done", "node-0", "Succeeded"));
  const std::string q = "command=ls&stdout=true";

  ApiResponse r = Exec("missing", q);
  EXPECT_EQ(r.code, 404);
  r = Exec("two", q);
  EXPECT_EQ(r.code, 400);
  EXPECT_EQ(Message(r), "a container name must be specified for pod two, choose one of: [a b]");
  r = Exec("two", q + "&container=c");
  EXPECT_EQ(Message(r), "container c is not valid for pod two");
  r = Exec("two", q + "&container=b");
  EXPECT_NE(Message(r).find("is not run by muster serve"), std::string::npos) << Message(r);
  r = Exec("pending", q);
  EXPECT_EQ(Message(r), "pod pending does not have a host assigned");
  r = Exec("done", q);
  EXPECT_EQ(Message(r),
            "cannot exec into a container in a completed pod; current phase is Succeeded");
  r = Exec("two", "command=ls&container=a");
  EXPECT_EQ(Message(r), "you must specify at least 1 of stdin, stdout, stderr");
}

TEST_F(PodExecRouteTest, NeedsAnExecutorWhosePodRuns) {
  Put(Pod("p", "node-0", "Running"));
  const std::string q = "command=ls&stdout=true";
  // No executor behind the API (this fixture): said, never a crash.
  ApiResponse r = Exec("p", q);
  EXPECT_EQ(r.code, 400);
  EXPECT_EQ(Message(r), "this server runs no pods: exec is not available");
  // The emulated executor's pods run nothing.
  PodExec emulated{PodExec::Config{}};
  handler_->set_pod_exec(&emulated);
  r = Exec("p", q);
  EXPECT_EQ(r.code, 400);
  EXPECT_NE(Message(r).find("emulated executor"), std::string::npos) << Message(r);
  // A local executor whose pod has no process (yet, or any more).
  ProcessSupervisor processes((dir_ / "pods").string());
  PodExec local{PodExec::Config{.processes = &processes, .data_dir = dir_.string()}};
  handler_->set_pod_exec(&local);
  r = Exec("p", q);
  EXPECT_EQ(Message(r), "container main of pod p: its container is not running");
  handler_->set_pod_exec(nullptr);
}

TEST_F(PodExecRouteTest, ARunningPodsCommandGetsASession) {
  Put(Pod("p", "node-0", "Running"));
  ProcessSupervisor processes((dir_ / "pods").string());
  ProcessSpec spec;
  spec.id = PodProcessId("default", "p");
  spec.argv = {"sleep", "30"};
  spec.env = {{"POD_VAR", "from-the-pod"}};
  ASSERT_TRUE(processes.Start(spec).ok());
  PodExec local{PodExec::Config{.processes = &processes, .data_dir = dir_.string()}};
  // Until its command is exec'd the process is the server's copy: never entered.
  ExecRequest early;
  early.command = {"env"};
  ASSERT_TRUE(testing_util::WaitFor([&] {
    auto plan = local.Plan("default", "p", "", early);
    if (!plan.ok()) {
      EXPECT_EQ(plan.status().message(), "its container is not running");
    }
    return plan.ok();
  }));
  handler_->set_pod_exec(&local);
  // Everything else right, but no WebSocket: said last (kubectl's SPDY fallback shows
  // the checks before it).
  ApiResponse r = Exec("p", "command=true&stdout=true", /*websocket=*/false);
  EXPECT_EQ(r.code, 400);
  EXPECT_NE(Message(r).find("upgraded to a WebSocket"), std::string::npos) << Message(r);
  // The plan: the pod's environment and working directory.
  ExecRequest request;
  request.command = {"env"};
  auto plan = local.Plan("default", "p", "", request);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_NE(std::find(plan->env.begin(), plan->env.end(), "POD_VAR=from-the-pod"), plan->env.end());
  EXPECT_EQ(plan->working_dir, (dir_ / "pods" / "default_p" / "work").string());
  EXPECT_EQ(local.Plan("default", "p", "sub", request)->working_dir,
            (dir_ / "pods" / "default_p" / "work" / "sub").string());
  // With one: a session, which holds a slot until it ends.
  ApiRequest req;
  req.method = "GET";
  req.path = "/api/v1/namespaces/default/pods/p/exec";
  req.query_string = "command=true&stdout=true";
  req.upgrade = {"websocket", "dGhlIHNhbXBsZSBub25jZQ==", "13", "v4.channel.k8s.io"};
  {
    ApiResult result = handler_->Handle(req);
    auto* session = std::get_if<std::unique_ptr<ExecSession>>(&result);
    ASSERT_NE(session, nullptr);
    EXPECT_NE((*session)->HandshakeResponse().find("Sec-WebSocket-Protocol: v4.channel.k8s.io"),
              std::string::npos);
    for (size_t i = 1; i < 64; ++i) ASSERT_TRUE(local.Acquire());
    EXPECT_FALSE(local.Acquire());  // 64 open
    ApiResponse busy = Exec("p", "command=true&stdout=true");
    EXPECT_EQ(busy.code, 429);
    for (size_t i = 1; i < 64; ++i) local.Release();
  }
  EXPECT_TRUE(local.Acquire());  // the session's slot is free again
  local.Release();
  handler_->set_pod_exec(nullptr);
  processes.Terminate(spec.id, 0);
  processes.WaitAll(10);
}

}  // namespace
}  // namespace muster::server
