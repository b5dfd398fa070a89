#include "server/exec_protocol.h"

#include <nlohmann/json.hpp>

#include "server/api_status.h"

namespace muster::server::exec_protocol {
namespace {

std::string_view TrimToken(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<std::string> ChooseProtocol(std::string_view offered) {
  bool v4 = false;
  size_t pos = 0;
  while (pos <= offered.size()) {
    size_t comma = offered.find(',', pos);
    if (comma == std::string_view::npos) comma = offered.size();
    const std::string_view p = TrimToken(offered.substr(pos, comma - pos));
    if (p == kV5) return std::string(kV5);
    if (p == kV4) v4 = true;
    pos = comma + 1;
  }
  if (v4) return std::string(kV4);
  return std::nullopt;
}

std::string StreamMessage(uint8_t stream, std::string_view data) {
  std::string out;
  out.reserve(data.size() + 1);
  out += static_cast<char>(stream);
  out += data;
  return out;
}

std::string ExitStatus(int exit_code, const std::vector<std::string>& command) {
  nlohmann::json status = {{"metadata", nlohmann::json::object()}};
  if (exit_code == 0) {
    status["status"] = "Success";
    return ToWire(status);
  }
  // The kubelet's words (its CRI exec error wrapped in the remote-command status).
  std::string joined;
  for (const std::string& arg : command) joined += (joined.empty() ? "" : " ") + arg;
  status["status"] = "Failure";
  status["message"] = "command terminated with non-zero exit code: error executing command [" +
                      joined + "], exit code " + std::to_string(exit_code);
  status["reason"] = "NonZeroExitCode";
  status["details"] = {
      {"causes",
       nlohmann::json::array({{{"reason", "ExitCode"}, {"message", std::to_string(exit_code)}}})}};
  return ToWire(status);
}

std::string FailureStatus(const std::string& message) {
  return ToWire(nlohmann::json{{"metadata", nlohmann::json::object()},
                               {"status", "Failure"},
                               {"message", message},
                               {"reason", "InternalError"},
                               {"code", 500}});
}

std::optional<TerminalSize> ParseResize(std::string_view payload) {
  nlohmann::json j = nlohmann::json::parse(payload, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  auto dimension = [&](const char* key) -> std::optional<uint16_t> {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_unsigned()) return std::nullopt;
    const uint64_t v = it->get<uint64_t>();
    if (v > 0xFFFF) return std::nullopt;
    return static_cast<uint16_t>(v);
  };
  auto width = dimension("Width");
  auto height = dimension("Height");
  if (!width || !height) return std::nullopt;
  return TerminalSize{*width, *height};
}

}  // namespace muster::server::exec_protocol
