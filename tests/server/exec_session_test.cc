// ExecSession with real commands (no pod: the server's own view): the client's frames
// in, the command's streams out as Kubernetes' remote-command messages, the exit status
// on the error channel and the close handshake, as kubectl exec sees them.
#include "server/exec_session.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "server/exec_protocol.h"
#include "websocket_test_util.h"

namespace muster::server {
namespace {

using nlohmann::json;
using testing::ClientFrame;
using websocket::Opcode;

struct Transcript {
  std::string out, err;
  std::optional<json> status;
  std::vector<testing::ServerFrame> control;  // pongs and the close frame
  bool ended = false;                         // Next said nullopt
};

class ExecSessionTest : public ::testing::Test {
 protected:
  std::unique_ptr<ExecSession> Start(std::vector<std::string> argv, ExecStreams streams,
                                     std::string protocol = exec_protocol::kV5) {
    ExecPlan plan;
    plan.argv = argv;
    plan.env = {"PATH=/usr/bin:/bin", "GREETING=hi"};
    auto process = StartExecProcess(plan, streams);
    EXPECT_TRUE(process.ok()) << process.status().ToString();
    if (!process.ok()) return nullptr;
    pid_ = process->pid;
    ExecSession::Options options;
    options.protocol = std::move(protocol);
    options.accept = "accept";
    options.command = std::move(argv);
    auto session =
        std::make_unique<ExecSession>(*process, std::move(options), [this] { released_ = true; });
    session->Start([this] { ++wakes_; }, [] {});
    return session;
  }

  static void Send(ExecSession& s, uint8_t stream, const std::string& data) {
    s.Receive(ClientFrame(Opcode::kBinary, exec_protocol::StreamMessage(stream, data)));
  }

  // Takes what the session sends until it ends (or 10 s pass).
  static Transcript Drain(ExecSession& s) {
    Transcript t;
    std::string bytes;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      auto next = s.Next(std::chrono::milliseconds(0));
      if (!next) {
        t.ended = true;
        break;
      }
      if (next->empty()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        continue;
      }
      bytes += *next;
      for (auto& f : testing::ReadServerFrames(bytes)) {
        if (f.op != Opcode::kBinary) {
          t.control.push_back(f);
          continue;
        }
        const auto stream = static_cast<uint8_t>(f.payload[0]);
        const std::string data = f.payload.substr(1);
        if (stream == exec_protocol::kStdout) t.out += data;
        if (stream == exec_protocol::kStderr) t.err += data;
        if (stream == exec_protocol::kError) t.status = json::parse(data);
      }
    }
    return t;
  }

  pid_t pid_ = 0;
  std::atomic<int> wakes_{0};
  bool released_ = false;
};

TEST_F(ExecSessionTest, StreamsOutputAndTheExitCode) {
  auto s = Start({"sh", "-c", "echo $GREETING; echo oops >&2; exit 3"}, ExecStreams{});
  ASSERT_TRUE(s);
  EXPECT_NE(s->HandshakeResponse().find("Sec-WebSocket-Protocol: v5.channel.k8s.io"),
            std::string::npos);
  Transcript t = Drain(*s);
  ASSERT_TRUE(t.ended);
  EXPECT_EQ(t.out, "hi\n");
  EXPECT_EQ(t.err, "oops\n");
  ASSERT_TRUE(t.status);
  EXPECT_EQ((*t.status)["status"], "Failure");
  EXPECT_EQ((*t.status)["reason"], "NonZeroExitCode");
  EXPECT_EQ((*t.status)["details"]["causes"][0]["reason"], "ExitCode");
  EXPECT_EQ((*t.status)["details"]["causes"][0]["message"], "3");
  ASSERT_FALSE(t.control.empty());
  EXPECT_EQ(t.control.back().op, Opcode::kClose);
  EXPECT_GT(wakes_.load(), 0);
  s.reset();
  EXPECT_TRUE(released_);
}

TEST_F(ExecSessionTest, StdinUntilV5ClosesIt) {
  auto s = Start({"cat"}, ExecStreams{.in = true, .out = true, .err = true});
  ASSERT_TRUE(s);
  Send(*s, exec_protocol::kStdin, "abc");
  Send(*s, exec_protocol::kStdin, "def\n");
  // v5's close of stream 0: cat sees the end of its input and exits 0.
  s->Receive(ClientFrame(Opcode::kBinary, std::string("\xff\x00", 2)));
  Transcript t = Drain(*s);
  ASSERT_TRUE(t.ended);
  EXPECT_EQ(t.out, "abcdef\n");
  ASSERT_TRUE(t.status);
  EXPECT_EQ((*t.status)["status"], "Success");
}

TEST_F(ExecSessionTest, PingIsAnsweredAndCloseEndsTheCommand) {
  auto s = Start({"sleep", "100"}, ExecStreams{});
  ASSERT_TRUE(s);
  s->Receive(ClientFrame(Opcode::kPing, "beat"));
  s->Receive(ClientFrame(Opcode::kClose, std::string("\x03\xe8", 2)));
  const auto started = std::chrono::steady_clock::now();
  Transcript t = Drain(*s);
  ASSERT_TRUE(t.ended);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
  ASSERT_EQ(t.control.size(), 2u);
  EXPECT_EQ(t.control[0].op, Opcode::kPong);
  EXPECT_EQ(t.control[0].payload, "beat");
  EXPECT_EQ(t.control[1].op, Opcode::kClose);
  EXPECT_FALSE(t.status);          // the client ended it: no status
  EXPECT_EQ(::kill(pid_, 0), -1);  // killed and reaped
}

TEST_F(ExecSessionTest, DroppingTheSessionKillsTheCommand) {
  auto s = Start({"sleep", "100"}, ExecStreams{});
  ASSERT_TRUE(s);
  s.reset();  // the connection went away
  EXPECT_EQ(::kill(pid_, 0), -1);
  EXPECT_TRUE(released_);
}

TEST_F(ExecSessionTest, ACommandThatDoesNotExistExits127) {
  auto s = Start({"no-such-command-here"}, ExecStreams{});
  ASSERT_TRUE(s);
  Transcript t = Drain(*s);
  EXPECT_NE(t.err.find("\"no-such-command-here\": executable file not found in $PATH"),
            std::string::npos)
      << t.err;
  ASSERT_TRUE(t.status);
  EXPECT_EQ((*t.status)["details"]["causes"][0]["message"], "127");
}

TEST_F(ExecSessionTest, TerminalTakesResizes) {
  auto s = Start({"sh", "-c", "sleep 0.3; stty size; test -t 0 && echo tty"},
                 ExecStreams{.in = true, .out = true, .err = true, .tty = true});
  ASSERT_TRUE(s);
  Send(*s, exec_protocol::kResize, R"({"Width":100,"Height":30})");
  Transcript t = Drain(*s);
  EXPECT_NE(t.out.find("30 100"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("tty"), std::string::npos) << t.out;
  EXPECT_TRUE(t.err.empty());  // a terminal carries both
}

TEST_F(ExecSessionTest, AProtocolErrorClosesWith1002) {
  auto s = Start({"sleep", "100"}, ExecStreams{});
  ASSERT_TRUE(s);
  s->Receive(std::string("\x82\x01x", 3));  // unmasked
  Transcript t = Drain(*s);
  ASSERT_TRUE(t.ended);
  ASSERT_FALSE(t.control.empty());
  const std::string& close = t.control.back().payload;
  ASSERT_GE(close.size(), 2u);
  EXPECT_EQ((static_cast<uint8_t>(close[0]) << 8) | static_cast<uint8_t>(close[1]), 1002);
}

TEST(ExecProtocolTest, PrefersV5ThenV4) {
  EXPECT_EQ(exec_protocol::ChooseProtocol("v4.channel.k8s.io, v5.channel.k8s.io"),
            "v5.channel.k8s.io");
  EXPECT_EQ(exec_protocol::ChooseProtocol("channel.k8s.io,v4.channel.k8s.io"), "v4.channel.k8s.io");
  EXPECT_FALSE(exec_protocol::ChooseProtocol("base64.channel.k8s.io"));
  EXPECT_EQ(json::parse(exec_protocol::ExitStatus(0, {"true"}))["status"], "Success");
  auto size = exec_protocol::ParseResize(R"({"Width":80,"Height":24})");
  ASSERT_TRUE(size);
  EXPECT_EQ(size->width, 80);
  EXPECT_FALSE(exec_protocol::ParseResize(R"({"Width":-1,"Height":24})"));
  EXPECT_FALSE(exec_protocol::ParseResize("nonsense"));
}

}  // namespace
}  // namespace muster::server
