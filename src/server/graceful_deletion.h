// Finalizers and metadata.deletionTimestamp, as kube-apiserver's registry keeps
// them: deleting an object that names finalizers only marks it (deletionTimestamp
// set, deletionGracePeriodSeconds 0) and it stays, terminating, until an update
// leaves it with none; a second delete changes nothing; an update can neither clear
// nor move the mark, nor add a finalizer while it is set (update_validation.h).
//
// "orphan" and "foregroundDeletion" are the garbage collector's own (owner_graph.h):
// "orphan" alone never holds an object (serve's collector orphans its dependents once
// it is gone); "foregroundDeletion" holds it until its dependents are gone.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "control/json_fields.h"

namespace muster::server {

using control::BeingDeleted;  // metadata.deletionTimestamp is set
// Names a finalizer other than the garbage collector's, or is a Namespace whose
// spec.finalizers names one (namespace_lifecycle.h): a delete only marks it.
bool HeldByFinalizers(const nlohmann::json& object);
// Sets the mark (deletionTimestamp `now`, RFC 3339; grace period 0; a Namespace's
// status.phase Terminating).
void MarkForDeletion(nlohmann::json& object, const std::string& now);
// The finalizers `next` names that `current` does not.
std::vector<std::string> AddedFinalizers(const nlohmann::json& current, const nlohmann::json& next);

}  // namespace muster::server
