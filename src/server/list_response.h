// The body of a LIST (not a Table) written from the store's text cache: an item
// stored at the version asked for is copied as stored, never parsed or re-serialised;
// one stored at another version (Kueue's v1beta1 / v1beta2) is parsed and presented.
// Selectors parse an item only to test it; what matches is still copied as stored.
// This is how a LIST of 10,000 Jobs stays a copy of their bytes.
#pragma once

#include <string>

#include "control/resource_types.h"
#include "core/status.h"
#include "server/api_handler.h"
#include "server/label_selector.h"
#include "server/object_store.h"

namespace muster::server {

// A request's labelSelector and fieldSelector (LIST, WATCH, DeleteCollection).
struct Selectors {
  LabelSelector labels;
  FieldSelector fields;
};
Result<Selectors> ParseSelectors(const ApiRequest& r);

std::string WriteListBody(const ObjectStore::TextList& list, const control::ResourceType& type,
                          const std::string& version, const LabelSelector& labels,
                          const FieldSelector& fields);

}  // namespace muster::server
