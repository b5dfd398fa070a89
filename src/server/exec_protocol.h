// Kubernetes' remote-command stream protocol over WebSocket, as kube-apiserver and the
// kubelet speak it to `kubectl exec` (client-go's WebSocket executor, kubectl 1.30+):
// each binary message starts with a stream id (0 stdin, 1 stdout, 2 stderr, 3 the
// error channel, 4 terminal resizes); v5.channel.k8s.io adds 255, "close the stream
// named by the next byte" (kubectl's end of stdin). The error channel carries one
// metav1.Status when the command ends. Pure functions, no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace muster::server::exec_protocol {

inline constexpr char kV5[] = "v5.channel.k8s.io";
inline constexpr char kV4[] = "v4.channel.k8s.io";

inline constexpr uint8_t kStdin = 0;
inline constexpr uint8_t kStdout = 1;
inline constexpr uint8_t kStderr = 2;
inline constexpr uint8_t kError = 3;
inline constexpr uint8_t kResize = 4;
inline constexpr uint8_t kClose = 255;  // v5 only

// The protocol served for a Sec-WebSocket-Protocol header (comma-separated, in the
// client's order of preference): v5, else v4; nullopt when it offers neither.
std::optional<std::string> ChooseProtocol(std::string_view offered);

// A message on stream `stream`.
std::string StreamMessage(uint8_t stream, std::string_view data);

// The error channel's Status when the command ended with `exit_code` (128 + signal
// for a signal): Success for 0, else Failure with reason NonZeroExitCode and the code
// as the ExitCode cause, which kubectl turns into its own exit code.
std::string ExitStatus(int exit_code, const std::vector<std::string>& command);
// The error channel's Status when the command could not run at all.
std::string FailureStatus(const std::string& message);

struct TerminalSize {
  uint16_t width = 0;
  uint16_t height = 0;
};
// A resize message ({"Width":80,"Height":24}); nullopt when it is not one.
std::optional<TerminalSize> ParseResize(std::string_view payload);

}  // namespace muster::server::exec_protocol
