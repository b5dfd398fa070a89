#include "core/status.h"

namespace muster {

std::string Status::ToString() const {
  if (ok()) return "OK";
  const char* name = "Unknown";
  switch (code_) {
    case StatusCode::kOk:
      name = "OK";
      break;
    case StatusCode::kInvalidArgument:
      name = "InvalidArgument";
      break;
    case StatusCode::kNotFound:
      name = "NotFound";
      break;
    case StatusCode::kAlreadyExists:
      name = "AlreadyExists";
      break;
    case StatusCode::kFailedPrecondition:
      name = "FailedPrecondition";
      break;
    case StatusCode::kConflict:
      name = "Conflict";
      break;
    case StatusCode::kUnavailable:
      name = "Unavailable";
      break;
    case StatusCode::kInternal:
      name = "Internal";
      break;
  }
  return std::string(name) + ": " + message_;
}

}  // namespace muster
