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

}  // namespace muster::control
