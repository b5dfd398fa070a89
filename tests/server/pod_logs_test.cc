// GET .../pods/{name}/log at the handler level: the file the executor writes under
// the data directory, served with the Kubernetes API server's query parameters
// and errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "server/api_handler.h"
#include "server/pod_log.h"
#include "server/pod_paths.h"

namespace muster::server {
namespace {

using nlohmann::json;

class PodLogsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("muster-logs-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    auto opened = ObjectStore::Open(dir_.string());
    ASSERT_TRUE(opened.ok());
    store_ = std::move(opened).value();
    handler_ = std::make_unique<ApiHandler>(*store_, "127.0.0.1:1");
    handler_->set_data_dir(dir_.string());
    ApiResult created = handler_->Handle(
        Request("POST", "/api/v1/namespaces/default/pods",
                R"({"metadata":{"name":"trainer"},"spec":{"containers":[{"name":"main"}]}})"));
    ASSERT_EQ(std::get<ApiResponse>(created).code, 201);
  }
  void TearDown() override {
    handler_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  static ApiRequest Request(std::string method, std::string path, std::string body = "",
                            std::map<std::string, std::string> query = {}) {
    ApiRequest r;
    r.method = std::move(method);
    r.path = std::move(path);
    r.query = std::move(query);
    r.body = std::move(body);
    r.content_type = "application/json";
    return r;
  }

  ApiResponse Logs(std::map<std::string, std::string> query = {},
                   const std::string& pod = "trainer") {
    ApiResult result = handler_->Handle(
        Request("GET", "/api/v1/namespaces/default/pods/" + pod + "/log", "", std::move(query)));
    auto* resp = std::get_if<ApiResponse>(&result);
    return resp ? *resp : ApiResponse{-1, "", "stream"};
  }

  void WriteLog(const std::string& text, bool previous = false, bool append = false) {
    const std::string path = PodLogPath(dir_.string(), "default", "trainer", previous);
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream out(path, append ? std::ios::app : std::ios::trunc);
    out << text;
  }

  void SetPhase(const std::string& phase) {
    ApiRequest patch = Request("PATCH", "/api/v1/namespaces/default/pods/trainer/status",
                               json{{"status", {{"phase", phase}}}}.dump());
    patch.content_type = "application/merge-patch+json";
    ApiResult result = handler_->Handle(patch);
    ASSERT_EQ(std::get<ApiResponse>(result).code, 200);
  }

  static std::string Message(const ApiResponse& r) {
    json body = json::parse(r.body, nullptr, false);
    return body.is_object() ? body.value("message", "") : "";
  }

  std::filesystem::path dir_;
  std::unique_ptr<ObjectStore> store_;
  std::unique_ptr<ApiHandler> handler_;
};

TEST(PodPathsTest, LayoutUnderDataDir) {
  EXPECT_EQ(PodProcessId("team-a", "w-0"), "team-a_w-0");
  EXPECT_EQ(PodDir("/var/m", "team-a", "w-0"), "/var/m/pods/team-a_w-0");
  EXPECT_EQ(PodDir("/var/m/", "team-a", "w-0"), "/var/m/pods/team-a_w-0");
  EXPECT_EQ(PodLogPath("/var/m", "ns", "p", false), "/var/m/pods/ns_p/log");
  EXPECT_EQ(PodLogPath("/var/m", "ns", "p", true), "/var/m/pods/ns_p/log.previous");
  EXPECT_EQ(ParsePodProcessId("team-a_w-0"),
            std::make_pair(std::string("team-a"), std::string("w-0")));
  EXPECT_FALSE(ParsePodProcessId("no-separator"));
  EXPECT_FALSE(ParsePodProcessId("_x"));
  EXPECT_EQ(ClaimDir("/var/m", "ns", "data"), "/var/m/volumes/ns/data");
}

TEST(PodLogPathTest, MatchesOnlyTheLogSubresource) {
  auto t = MatchPodLogPath("/api/v1/namespaces/team-a/pods/w-0/log");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->namespace_, "team-a");
  EXPECT_EQ(t->name, "w-0");
  EXPECT_FALSE(MatchPodLogPath("/api/v1/namespaces/team-a/pods/w-0"));
  EXPECT_FALSE(MatchPodLogPath("/api/v1/namespaces/team-a/pods/w-0/status"));
  EXPECT_FALSE(MatchPodLogPath("/apis/batch/v1/namespaces/a/jobs/j/log"));
}

TEST_F(PodLogsTest, ServesTheLogFileAsText) {
  WriteLog("epoch 1\nepoch 2\n");
  ApiResponse r = Logs();
  EXPECT_EQ(r.code, 200);
  EXPECT_EQ(r.content_type.rfind("text/plain", 0), 0u);
  EXPECT_EQ(r.body, "epoch 1\nepoch 2\n");
  // timestamps is accepted and ignored; the pod's own container is accepted.
  EXPECT_EQ(Logs({{"timestamps", "true"}, {"container", "main"}}).body, "epoch 1\nepoch 2\n");
}

TEST_F(PodLogsTest, PreviousReadsThePreviousAttempt) {
  WriteLog("now\n");
  ApiResponse missing = Logs({{"previous", "true"}});
  EXPECT_EQ(missing.code, 400);
  EXPECT_NE(Message(missing).find("previous terminated container"), std::string::npos);
  WriteLog("before\n", /*previous=*/true);
  EXPECT_EQ(Logs({{"previous", "true"}}).body, "before\n");
  EXPECT_EQ(Logs({{"previous", "false"}}).body, "now\n");
}

TEST_F(PodLogsTest, TailLines) {
  WriteLog("a\nb\nc\n");
  EXPECT_EQ(Logs({{"tailLines", "2"}}).body, "b\nc\n");
  EXPECT_EQ(Logs({{"tailLines", "3"}}).body, "a\nb\nc\n");
  EXPECT_EQ(Logs({{"tailLines", "10"}}).body, "a\nb\nc\n");
  EXPECT_EQ(Logs({{"tailLines", "0"}}).body, "");
  WriteLog("a\nb");  // the last line is not terminated yet
  EXPECT_EQ(Logs({{"tailLines", "1"}}).body, "b");
  EXPECT_EQ(Logs({{"tailLines", "-1"}}).code, 400);
  EXPECT_EQ(Logs({{"tailLines", "x"}}).code, 400);
}

TEST_F(PodLogsTest, LimitBytes) {
  WriteLog("abcdef\n");
  EXPECT_EQ(Logs({{"limitBytes", "3"}}).body, "abc");
  EXPECT_EQ(Logs({{"limitBytes", "100"}}).body, "abcdef\n");
  EXPECT_EQ(Logs({{"tailLines", "1"}, {"limitBytes", "2"}}).body, "ab");
  EXPECT_EQ(Logs({{"limitBytes", "0"}}).code, 400);
}

TEST_F(PodLogsTest, MissingPodIsNotFound) {
  ApiResponse r = Logs({}, "nope");
  EXPECT_EQ(r.code, 404);
  json body = json::parse(r.body);
  EXPECT_EQ(body["kind"], "Status");
  EXPECT_EQ(body["reason"], "NotFound");
  EXPECT_EQ(body["message"], "pods \"nope\" not found");
}

TEST_F(PodLogsTest, NoLogYetIsWaitingToStart) {
  ApiResponse r = Logs();
  EXPECT_EQ(r.code, 400);
  EXPECT_EQ(Message(r),
            "container \"main\" in pod \"trainer\" is waiting to start: ContainerCreating");
}

TEST_F(PodLogsTest, UnknownContainerIsRejected) {
  WriteLog("x\n");
  ApiResponse r = Logs({{"container", "sidecar"}});
  EXPECT_EQ(r.code, 400);
  EXPECT_EQ(Message(r), "container sidecar is not valid for pod trainer");
  EXPECT_EQ(Logs({{"container", ""}}).code, 200);
}

TEST_F(PodLogsTest, OnlyGetIsAllowed) {
  WriteLog("x\n");
  ApiResult r = handler_->Handle(Request("DELETE", "/api/v1/namespaces/default/pods/trainer/log"));
  EXPECT_EQ(std::get<ApiResponse>(r).code, 405);
}

TEST_F(PodLogsTest, FollowStreamsAppendedBytesUntilThePodFinishes) {
  WriteLog("line 1\nline 2\n");
  ApiResult result = handler_->Handle(Request("GET", "/api/v1/namespaces/default/pods/trainer/log",
                                              "", {{"follow", "true"}, {"tailLines", "1"}}));
  auto* stream = std::get_if<std::unique_ptr<LogStream>>(&result);
  ASSERT_NE(stream, nullptr);
  LogStream& s = **stream;
  EXPECT_EQ(s.Next(std::chrono::milliseconds(0)), "line 2\n");
  EXPECT_EQ(s.Next(std::chrono::milliseconds(0)), "");  // nothing new, pod still running
  WriteLog("line 3\n", false, /*append=*/true);
  EXPECT_EQ(s.Next(std::chrono::milliseconds(0)), "line 3\n");
  WriteLog("line 4\n", false, /*append=*/true);
  SetPhase("Succeeded");
  // What was written before the pod finished still arrives, then the stream ends.
  EXPECT_EQ(s.Next(std::chrono::milliseconds(0)), "line 4\n");
  EXPECT_EQ(s.Next(std::chrono::milliseconds(0)), std::nullopt);
}

TEST_F(PodLogsTest, FollowStartsOverWhenTheLogIsRotated) {
  WriteLog("a\n");
  ApiResult result = handler_->Handle(
      Request("GET", "/api/v1/namespaces/default/pods/trainer/log", "", {{"follow", "true"}}));
  auto* stream = std::get_if<std::unique_ptr<LogStream>>(&result);
  ASSERT_NE(stream, nullptr);
  EXPECT_EQ((*stream)->Next(std::chrono::milliseconds(0)), "a\n");
  // A restart: the supervisor moves log to log.previous and the new attempt writes a new log,
  // already longer than what was sent of the old one.
  const std::string log = PodLogPath(dir_.string(), "default", "trainer", false);
  std::filesystem::rename(log, PodLogPath(dir_.string(), "default", "trainer", true));
  WriteLog("second attempt\n");
  EXPECT_EQ((*stream)->Next(std::chrono::milliseconds(0)), "second attempt\n");
}

TEST_F(PodLogsTest, FollowEndsWhenThePodIsDeleted) {
  WriteLog("x\n");
  ApiResult result = handler_->Handle(
      Request("GET", "/api/v1/namespaces/default/pods/trainer/log", "", {{"follow", "1"}}));
  auto* stream = std::get_if<std::unique_ptr<LogStream>>(&result);
  ASSERT_NE(stream, nullptr);
  EXPECT_EQ((*stream)->Next(std::chrono::milliseconds(0)), "x\n");
  ApiResult deleted =
      handler_->Handle(Request("DELETE", "/api/v1/namespaces/default/pods/trainer"));
  ASSERT_EQ(std::get<ApiResponse>(deleted).code, 200);
  EXPECT_EQ((*stream)->Next(std::chrono::milliseconds(0)), std::nullopt);
}

TEST_F(PodLogsTest, FollowHonoursLimitBytesAcrossChunks) {
  WriteLog("abc");
  ApiResult result = handler_->Handle(Request("GET", "/api/v1/namespaces/default/pods/trainer/log",
                                              "", {{"follow", "true"}, {"limitBytes", "5"}}));
  auto* stream = std::get_if<std::unique_ptr<LogStream>>(&result);
  ASSERT_NE(stream, nullptr);
  EXPECT_EQ((*stream)->Next(std::chrono::milliseconds(0)), "abc");
  WriteLog("defgh", false, /*append=*/true);
  EXPECT_EQ((*stream)->Next(std::chrono::milliseconds(0)), "de");
  EXPECT_EQ((*stream)->Next(std::chrono::milliseconds(0)), std::nullopt);
}

// The shim rotates the live log to log.1, log.2 ...: a read covers every file, oldest
// first, and a tail reads backwards across them.
TEST_F(PodLogsTest, ReadsRotatedFilesInOrder) {
  const std::string log = PodLogPath(dir_.string(), "default", "trainer", false);
  WriteLog("line 5\n");
  std::ofstream(log + ".1") << "line 3\nline 4\n";
  std::ofstream(log + ".2") << "line 1\nline 2\n";
  EXPECT_EQ(Logs().body, "line 1\nline 2\nline 3\nline 4\nline 5\n");
  EXPECT_EQ(Logs({{"tailLines", "3"}}).body, "line 3\nline 4\nline 5\n");
  EXPECT_EQ(Logs({{"tailLines", "1"}}).body, "line 5\n");
  EXPECT_EQ(Logs({{"limitBytes", "9"}}).body, "line 1\nli");
}

// A log larger than one body is streamed in chunks; its tail is read from the end.
TEST_F(PodLogsTest, LargeLogsAreStreamedAndTailedFromTheEnd) {
  std::string big;
  for (int i = 0; i < 200000; ++i) big += "line " + std::to_string(i) + "\n";
  WriteLog(big);
  EXPECT_EQ(Logs({{"tailLines", "2"}}).body, "line 199998\nline 199999\n");
  ApiResult result =
      handler_->Handle(Request("GET", "/api/v1/namespaces/default/pods/trainer/log"));
  auto* stream = std::get_if<std::unique_ptr<LogStream>>(&result);
  ASSERT_NE(stream, nullptr);
  std::string all;
  while (auto chunk = (*stream)->Next(std::chrono::milliseconds(0))) {
    EXPECT_LE(chunk->size(), 64u << 10);
    all += *chunk;
  }
  EXPECT_EQ(all, big);
}

// Following across a rotation: what was appended to the old file before it was
// renamed arrives before the new file's start.
TEST_F(PodLogsTest, FollowReadsTheRotatedFileToItsEnd) {
  const std::string log = PodLogPath(dir_.string(), "default", "trainer", false);
  WriteLog("a\n");
  ApiResult result = handler_->Handle(
      Request("GET", "/api/v1/namespaces/default/pods/trainer/log", "", {{"follow", "true"}}));
  auto* stream = std::get_if<std::unique_ptr<LogStream>>(&result);
  ASSERT_NE(stream, nullptr);
  EXPECT_EQ((*stream)->Next(std::chrono::milliseconds(0)), "a\n");
  WriteLog("b\n", false, /*append=*/true);
  std::filesystem::rename(log, log + ".1");
  WriteLog("c\n");
  EXPECT_EQ((*stream)->Next(std::chrono::milliseconds(0)), "b\n");
  EXPECT_EQ((*stream)->Next(std::chrono::milliseconds(0)), "c\n");
}

}  // namespace
}  // namespace muster::server
