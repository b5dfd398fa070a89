// Manifest spellings of Kueue values, for logs and views (the decoder reads them in
// api/decode_kueue.cc).
#pragma once

#include "model/kueue.h"

namespace muster::model {

// spec.stopPolicy of a ClusterQueue or LocalQueue.
inline const char* StopPolicyName(StopPolicy p) {
  switch (p) {
    case StopPolicy::kNone:
      return "None";
    case StopPolicy::kHold:
      return "Hold";
    case StopPolicy::kHoldAndDrain:
      return "HoldAndDrain";
  }
  return "None";
}

}  // namespace muster::model
