#include "server/exec_session.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "server/exec_protocol.h"

namespace muster::server {
namespace {

using SessionClock = std::chrono::steady_clock;

constexpr size_t kOutputReadBytes = 32 << 10;
// Output still arriving after the command exited (a background child holding its
// pipe) is waited for this long before the status is sent.
constexpr auto kDrainAfterExit = std::chrono::seconds(1);

void WakeEventFd(int fd) {
  const uint64_t one = 1;
  (void)!::write(fd, &one, sizeof one);
}

int WaitStatusExitCode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace

ExecSession::ExecSession(ExecProcess process, Options options, std::function<void()> on_end)
    : process_(process),
      options_(std::move(options)),
      on_end_(std::move(on_end)),
      decoder_(options_.max_message) {
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

ExecSession::~ExecSession() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  if (wake_fd_ >= 0) WakeEventFd(wake_fd_);
  if (thread_.joinable()) {
    thread_.join();
  } else {
    KillProcess();
  }
  process_.Close();
  if (wake_fd_ >= 0) ::close(wake_fd_);
  if (on_end_) on_end_();
}

std::string ExecSession::HandshakeResponse() const {
  return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
         "Sec-WebSocket-Accept: " +
         options_.accept + "\r\nSec-WebSocket-Protocol: " + options_.protocol + "\r\n\r\n";
}

void ExecSession::Start(std::function<void()> output_ready, std::function<void()> input_drained) {
  output_ready_ = std::move(output_ready);
  input_drained_ = std::move(input_drained);
  thread_ = std::thread([this] { Loop(); });
}

bool ExecSession::Receive(std::string_view bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  input_.append(bytes);
  WakeEventFd(wake_fd_);
  if (input_.size() + held_ >= options_.buffer_bytes) {
    paused_ = true;
    return false;
  }
  return true;
}

std::optional<std::string> ExecSession::Next(std::chrono::milliseconds /*wait*/) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!output_.empty()) {
    std::string out;
    out.swap(output_);
    // The thread stopped reading the command while the buffer was full.
    if (out.size() >= options_.buffer_bytes) WakeEventFd(wake_fd_);
    return out;
  }
  if (done_) return std::nullopt;
  return std::string();
}

void ExecSession::Send(const std::string& frame) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    output_ += frame;
  }
  if (output_ready_) output_ready_();
}

void ExecSession::Finish(std::optional<std::string> status, uint16_t close_code,
                         const std::string& reason) {
  std::string frames;
  if (status) {
    frames = websocket::EncodeFrame(websocket::Opcode::kBinary,
                                    exec_protocol::StreamMessage(exec_protocol::kError, *status));
  }
  frames += websocket::EncodeClose(close_code, reason);
  {
    std::lock_guard<std::mutex> lock(mu_);
    output_ += frames;
    done_ = true;
  }
  if (output_ready_) output_ready_();
}

void ExecSession::KillProcess() {
  if (exited_ || process_.pid <= 0) return;
  ::kill(-process_.pid, SIGKILL);
  ::kill(process_.pid, SIGKILL);
  int status = 0;
  while (::waitpid(process_.pid, &status, 0) < 0 && errno == EINTR) {
  }
  exited_ = true;
  exit_code_ = WaitStatusExitCode(status);
}

bool ExecSession::HandleInput(std::string& raw) {
  namespace ws = websocket;
  namespace ep = exec_protocol;
  ws::Message m;
  auto output_full = [&] {
    std::lock_guard<std::mutex> lock(mu_);
    return output_.size() >= options_.buffer_bytes;
  };
  // A client that sends without reading (pings, whose pongs pile up) is held back
  // like one whose stdin the command does not read: its bytes stay undecoded.
  while (stdin_.size() < options_.buffer_bytes && !output_full()) {
    const auto r = decoder_.Next(raw, m);
    if (r == ws::FrameDecoder::Result::kNeedMore) return true;
    if (r == ws::FrameDecoder::Result::kError) {
      KillProcess();
      Finish(std::nullopt, decoder_.close_code(), decoder_.error());
      return false;
    }
    switch (m.op) {
      case ws::Opcode::kPing:
        Send(ws::EncodeFrame(ws::Opcode::kPong, m.payload));
        break;
      case ws::Opcode::kPong:
        break;
      case ws::Opcode::kClose:
        // The client ends the session: the command goes with it, as with a dropped
        // connection; the close is answered.
        KillProcess();
        Finish(std::nullopt, ws::kCloseNormal, "");
        return false;
      default:  // a data message: a stream id, then its bytes
        if (m.payload.empty()) break;
        const auto stream = static_cast<uint8_t>(m.payload[0]);
        std::string_view data = std::string_view(m.payload).substr(1);
        if (stream == ep::kStdin) {
          if (process_.in >= 0 && !close_stdin_) stdin_.append(data);
        } else if (stream == ep::kResize) {
          if (auto size = ep::ParseResize(data); size && process_.tty && process_.out >= 0) {
            winsize w{};
            w.ws_col = size->width;
            w.ws_row = size->height;
            ::ioctl(process_.out, TIOCSWINSZ, &w);
          }
        } else if (stream == ep::kClose && options_.protocol == ep::kV5 && !data.empty() &&
                   static_cast<uint8_t>(data[0]) == ep::kStdin) {
          close_stdin_ = true;  // after what is buffered is written
        }
        break;
    }
  }
  return true;
}

void ExecSession::WriteStdin() {
  if (process_.in < 0) return;
  while (!stdin_.empty()) {
    const ssize_t n = ::write(process_.in, stdin_.data(), stdin_.size());
    if (n > 0) {
      stdin_.erase(0, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    // The command closed its stdin (EPIPE): what is left has nowhere to go.
    stdin_.clear();
    close_stdin_ = true;
    break;
  }
  if (close_stdin_ && stdin_.empty()) {
    ::close(process_.in);
    process_.in = -1;
  }
}

void ExecSession::ReadOutput(int& fd, uint8_t stream) {
  char buf[kOutputReadBytes];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  if (n > 0) {
    Send(websocket::EncodeFrame(
        websocket::Opcode::kBinary,
        exec_protocol::StreamMessage(stream, std::string_view(buf, static_cast<size_t>(n)))));
    return;
  }
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  // EOF, or EIO from a terminal whose last user closed it.
  ::close(fd);
  fd = -1;
}

void ExecSession::Loop() {
  std::string raw;
  auto last_input = SessionClock::now();
  std::optional<SessionClock::time_point> exited_at;
  // Readable once the command has exited (Linux 5.3); without it the loop polls.
  int pid_fd = static_cast<int>(::syscall(SYS_pidfd_open, process_.pid, 0));
  while (true) {
    bool stop = false;
    size_t pending_output = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!input_.empty()) last_input = SessionClock::now();
      raw += input_;
      input_.clear();
      stop = stop_;
      pending_output = output_.size();
    }
    if (stop) {
      KillProcess();  // the client went away (its connection dropped the session)
      break;
    }
    held_ = raw.size() + stdin_.size();
    if (!HandleInput(raw)) break;
    WriteStdin();
    held_ = raw.size() + stdin_.size();
    bool resume = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (paused_ && input_.size() + held_ < options_.buffer_bytes / 2) {
        paused_ = false;
        resume = true;
      }
    }
    if (resume && input_drained_) input_drained_();
    if (!exited_) {
      int status = 0;
      if (::waitpid(process_.pid, &status, WNOHANG) == process_.pid) {
        exited_ = true;
        exit_code_ = WaitStatusExitCode(status);
      }
    }
    const auto now = SessionClock::now();
    if (exited_ && !exited_at) exited_at = now;
    const bool outputs_open = process_.out >= 0 || process_.err >= 0;
    if (exited_ && (!outputs_open || now - *exited_at >= kDrainAfterExit)) {
      Finish(exec_protocol::ExitStatus(exit_code_, options_.command), websocket::kCloseNormal, "");
      break;
    }
    if (now - last_input >= options_.idle_timeout) {
      KillProcess();
      Finish(exec_protocol::FailureStatus("the exec session was idle for too long"),
             websocket::kCloseNormal, "idle");
      break;
    }
    pollfd fds[5];
    nfds_t n = 0;
    fds[n++] = {wake_fd_, POLLIN, 0};
    const bool room = pending_output < options_.buffer_bytes;
    int out_slot = -1, err_slot = -1, in_slot = -1;
    if (room && process_.out >= 0) {
      out_slot = static_cast<int>(n);
      fds[n++] = {process_.out, POLLIN, 0};
    }
    if (room && process_.err >= 0) {
      err_slot = static_cast<int>(n);
      fds[n++] = {process_.err, POLLIN, 0};
    }
    if (process_.in >= 0 && !stdin_.empty()) {
      in_slot = static_cast<int>(n);
      fds[n++] = {process_.in, POLLOUT, 0};
    }
    if (pid_fd >= 0 && !exited_) fds[n++] = {pid_fd, POLLIN, 0};
    int timeout_ms = 1000;
    if (exited_) timeout_ms = 20;
    if (pid_fd < 0 && !exited_) timeout_ms = 50;
    if (::poll(fds, n, timeout_ms) < 0 && errno != EINTR) break;
    if ((fds[0].revents & POLLIN) != 0) {
      uint64_t v = 0;
      (void)!::read(wake_fd_, &v, sizeof v);
    }
    auto ready = [&](int slot) { return slot >= 0 && fds[slot].revents != 0; };
    if (ready(out_slot)) ReadOutput(process_.out, exec_protocol::kStdout);
    if (ready(err_slot)) ReadOutput(process_.err, exec_protocol::kStderr);
    if (ready(in_slot)) WriteStdin();
  }
  if (pid_fd >= 0) ::close(pid_fd);
}

}  // namespace muster::server
