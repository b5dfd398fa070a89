// ExecSession: one `kubectl exec` on its upgraded (WebSocket) connection: the client's
// frames in (stdin, terminal resizes, v5's stream close, pings, the close handshake),
// the command's output out as stream messages, and when it ends its exit status on
// the error channel and a close frame (exec_protocol.h, websocket.h).
//
// Threads: the HTTP server's reactor hands it the client's bytes (Receive), its stream
// pump takes what is to be sent (Next); a thread of its own moves bytes between the
// process's pipes (or terminal) and those buffers, so an interactive shell answers at
// once and a slow side holds the other back (each buffer is bounded: a full output
// buffer stops reading the process, a full input buffer stops the reactor reading the
// client). Destroying it kills the command if it still runs (the client went away),
// as the kubelet's runtime does.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "server/exec_process.h"
#include "server/websocket.h"

namespace muster::server {

class ExecSession {
 public:
  struct Options {
    std::string protocol;              // exec_protocol::kV5 or kV4
    std::string accept;                // Sec-WebSocket-Accept
    std::vector<std::string> command;  // named in a non-zero exit's status
    size_t max_message = 1 << 20;      // a client message above this closes with 1009
    size_t buffer_bytes = 1 << 20;     // per direction, before the other side is held back
    // The kubelet's streaming-connection-idle-timeout: no byte from the client for
    // this long ends the session (clients ping every few seconds).
    std::chrono::milliseconds idle_timeout = std::chrono::hours(4);
  };

  // Takes `process` (its streams and its end); `on_end` runs when the session is
  // destroyed (the exec's slot is free again).
  ExecSession(ExecProcess process, Options options, std::function<void()> on_end = nullptr);
  ~ExecSession();
  ExecSession(const ExecSession&) = delete;
  ExecSession& operator=(const ExecSession&) = delete;

  // The 101 Switching Protocols head that upgrades the connection.
  std::string HandshakeResponse() const;

  // Starts moving bytes. `output_ready`: something can be sent (wake the pump);
  // `input_drained`: Receive may be called again after it said to stop. Both are
  // called from the session's thread.
  void Start(std::function<void()> output_ready, std::function<void()> input_drained);

  // Bytes from the client. False when its buffer is full: read no more from the
  // client until `input_drained`.
  bool Receive(std::string_view bytes);

  // What to send: frames, "" when nothing is there now, nullopt once everything
  // (the exit status and the close frame last) has been taken. `wait` is not used:
  // the session wakes its reader through `output_ready`.
  std::optional<std::string> Next(std::chrono::milliseconds wait);

 private:
  void Loop();
  // Decodes what the client sent; false when the session must end (close, error).
  bool HandleInput(std::string& raw);
  void Send(const std::string& frame);  // under no lock; takes mu_
  void ReadOutput(int& fd, uint8_t stream);
  void WriteStdin();
  void KillProcess();
  void Finish(std::optional<std::string> status, uint16_t close_code, const std::string& reason);

  ExecProcess process_;
  Options options_;
  std::function<void()> on_end_;
  std::function<void()> output_ready_, input_drained_;
  int wake_fd_ = -1;
  std::thread thread_;

  std::mutex mu_;
  std::string input_;            // from the client, not yet taken by the thread
  std::string output_;           // frames not yet taken by the pump
  bool stop_ = false;            // destroying
  bool done_ = false;            // the close frame is in output_ (or the session died)
  bool paused_ = false;          // Receive said to stop
  std::atomic<size_t> held_{0};  // input the thread holds (undecoded + stdin not written)

  // The thread's own.
  websocket::FrameDecoder decoder_;
  std::string stdin_;  // decoded stdin not yet written to the process
  bool close_stdin_ = false;
  bool exited_ = false;
  int exit_code_ = 0;
};

}  // namespace muster::server
