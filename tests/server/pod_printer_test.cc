// PrintPod: the columns `kubectl get pods` shows, as kube-apiserver's printPod
// computes them from a pod's spec and status.
#include "server/pod_printer.h"

#include <gtest/gtest.h>

#include <vector>

#include "control/resource_types.h"
#include "server/table_printer.h"

namespace muster::server {
namespace {

using nlohmann::json;

constexpr int64_t kPrintedAt = 1'800'000'000;  // 2027-01-15T08:00:00Z

json Container(const json& state, bool ready, int restarts = 0) {
  return {{"name", "main"}, {"state", state}, {"ready", ready}, {"restartCount", restarts}};
}

json PodWith(const std::string& phase, const std::vector<json>& statuses) {
  return {
      {"metadata", {{"name", "p"}}},
      {"spec", {{"nodeName", "node-0"}, {"containers", {{{"name", "main"}}}}}},
      {"status", {{"phase", phase}, {"podIP", "10.0.0.7"}, {"containerStatuses", json(statuses)}}}};
}

TEST(PodPrinter, RunningCompletedAndFailedPods) {
  PodPrint p =
      PrintPod(PodWith("Running", {Container({{"running", json::object()}}, true)}), kPrintedAt);
  EXPECT_EQ(p.ready, "1/1");
  EXPECT_EQ(p.status, "Running");
  EXPECT_EQ(p.restarts, "0");
  EXPECT_EQ(p.ip, "10.0.0.7");
  EXPECT_EQ(p.node, "node-0");
  EXPECT_EQ(p.nominated_node, "<none>");
  EXPECT_EQ(p.readiness_gates, "<none>");

  p = PrintPod(
      PodWith("Succeeded",
              {Container({{"terminated", {{"exitCode", 0}, {"reason", "Completed"}}}}, false)}),
      kPrintedAt);
  EXPECT_EQ(p.ready, "0/1");
  EXPECT_EQ(p.status, "Completed");

  p = PrintPod(
      PodWith("Failed",
              {Container({{"terminated", {{"exitCode", 1}, {"reason", "Error"}}}}, false)}),
      kPrintedAt);
  EXPECT_EQ(p.status, "Error");
  // No reason: the signal, else the exit code.
  p = PrintPod(
      PodWith("Failed", {Container({{"terminated", {{"exitCode", 137}, {"signal", 9}}}}, false)}),
      kPrintedAt);
  EXPECT_EQ(p.status, "Signal:9");
  p = PrintPod(PodWith("Failed", {Container({{"terminated", {{"exitCode", 2}}}}, false)}),
               kPrintedAt);
  EXPECT_EQ(p.status, "ExitCode:2");
}

TEST(PodPrinter, WaitingReasonsAndRestarts) {
  json c = Container({{"waiting", {{"reason", "CrashLoopBackOff"}}}}, false, 3);
  c["lastState"] = {{"terminated", {{"exitCode", 1}, {"finishedAt", "2027-01-15T07:57:50Z"}}}};
  PodPrint p = PrintPod(PodWith("Running", {c}), kPrintedAt);
  EXPECT_EQ(p.status, "CrashLoopBackOff");
  EXPECT_EQ(p.restarts, "3 (2m10s ago)");

  json pending = PodWith("Pending", {});
  pending["spec"].erase("nodeName");
  pending["status"].erase("podIP");
  p = PrintPod(pending, kPrintedAt);
  EXPECT_EQ(p.ready, "0/1");
  EXPECT_EQ(p.status, "Pending");
  EXPECT_EQ(p.ip, "<none>");
  EXPECT_EQ(p.node, "<none>");

  pending["status"]["conditions"] = {
      {{"type", "PodScheduled"}, {"status", "False"}, {"reason", "SchedulingGated"}}};
  EXPECT_EQ(PrintPod(pending, kPrintedAt).status, "SchedulingGated");
}

TEST(PodPrinter, InitContainersAndTermination) {
  json pod = PodWith("Pending", {});
  pod["spec"]["initContainers"] = {{{"name", "a"}}, {{"name", "b"}}};
  pod["status"]["initContainerStatuses"] = {
      {{"name", "a"}, {"state", {{"terminated", {{"exitCode", 0}}}}}},
      {{"name", "b"}, {"state", {{"running", json::object()}}}}};
  EXPECT_EQ(PrintPod(pod, kPrintedAt).status, "Init:1/2");
  pod["status"]["initContainerStatuses"][1]["state"] = {
      {"terminated", {{"exitCode", 1}, {"reason", "Error"}}}};
  EXPECT_EQ(PrintPod(pod, kPrintedAt).status, "Init:Error");

  json running = PodWith("Running", {Container({{"running", json::object()}}, true)});
  running["metadata"]["deletionTimestamp"] = "2027-01-15T08:00:30Z";
  EXPECT_EQ(PrintPod(running, kPrintedAt).status, "Terminating");
  running["status"]["reason"] = "NodeLost";
  EXPECT_EQ(PrintPod(running, kPrintedAt).status, "Unknown");

  running["metadata"].erase("deletionTimestamp");
  running["spec"]["readinessGates"] = {{{"conditionType", "example.com/ready"}}};
  running["status"]["nominatedNodeName"] = "node-1";
  PodPrint p = PrintPod(running, kPrintedAt);
  EXPECT_EQ(p.readiness_gates, "0/1");
  EXPECT_EQ(p.nominated_node, "node-1");
}

TEST(PodPrinter, EachTableRowPrintsItsOwnPod) {
  // The Table's pod columns share one printing per row: every row gets its own.
  const control::ResourceType* type = control::FindByKind("v1", "Pod");
  ASSERT_NE(type, nullptr);
  json running = PodWith("Running", {Container({{"running", json::object()}}, true)});
  json failed = PodWith(
      "Failed", {Container({{"terminated", {{"exitCode", 1}, {"reason", "Error"}}}}, false)});
  failed["metadata"]["name"] = "q";
  TableOptions options;
  options.now_unix = kPrintedAt;
  json table = RenderTable(*type, {running, failed, running}, "1", options);
  ASSERT_EQ(table["rows"].size(), 3u);
  // NAME, READY, STATUS, ...
  EXPECT_EQ(table["rows"][0]["cells"][1], "1/1");
  EXPECT_EQ(table["rows"][0]["cells"][2], "Running");
  EXPECT_EQ(table["rows"][1]["cells"][0], "q");
  EXPECT_EQ(table["rows"][1]["cells"][1], "0/1");
  EXPECT_EQ(table["rows"][1]["cells"][2], "Error");
  EXPECT_EQ(table["rows"][2]["cells"][2], "Running");
}

}  // namespace
}  // namespace muster::server
