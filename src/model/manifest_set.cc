#include "model/manifest_set.h"

namespace muster::model {

const ObjectMeta& MetaOf(const JobObject& job) {
  return std::visit([](const auto& j) -> const ObjectMeta& { return j.meta; }, job);
}

}  // namespace muster::model
