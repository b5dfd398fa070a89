#include "control/change.h"

namespace muster::control {

const char* ChangeTypeName(ChangeType type) {
  switch (type) {
    case ChangeType::kAdded:
      return "ADDED";
    case ChangeType::kModified:
      return "MODIFIED";
    case ChangeType::kDeleted:
      return "DELETED";
  }
  return "MODIFIED";
}

const nlohmann::json& NullObject() {
  static const nlohmann::json* const kNull = new nlohmann::json();  // never destroyed
  return *kNull;
}

}  // namespace muster::control
