// Reading fields of untyped Kubernetes objects in place: a field that is missing or
// of another type reads as empty and never throws (stored and watched objects are
// input, not trusted).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace muster::control {

// object[key] when `object` is an object and that field is one, else an empty object.
const nlohmann::json& ObjectField(const nlohmann::json& object, const char* key);

// object[key] when `object` is an object and that field is an array, else an empty array.
const nlohmann::json& ArrayField(const nlohmann::json& object, const char* key);

// object[key] when `object` is an object and that field is an integer, else 0.
int64_t IntField(const nlohmann::json& object, const char* key);

// metadata.generation of an object (0 when absent or not an integer: the API server
// counts from 1).
int64_t GenerationOf(const nlohmann::json& object);

// object[key] when `object` is an object and that field is a string, else "".
std::string StringField(const nlohmann::json& object, const char* key);

// metadata.deletionTimestamp is set (not null): the object is marked for deletion and
// stays while finalizers hold it.
bool BeingDeleted(const nlohmann::json& object);

// The garbage collector's finalizer of an object deleted with propagationPolicy
// Foreground: it stays until its dependents are gone.
inline constexpr const char* kForegroundFinalizer = "foregroundDeletion";

// The finalizer an object deleted with propagationPolicy Orphan leaves with: the
// garbage collector takes its dependents' references to it off.
inline constexpr const char* kOrphanFinalizer = "orphan";

// metadata.finalizers names `finalizer`.
bool HasFinalizer(const nlohmann::json& object, std::string_view finalizer);

// Being deleted in Foreground: marked, and holding kForegroundFinalizer.
bool DeletingDependents(const nlohmann::json& object);

// Adds `finalizer` to object.metadata.finalizers (made when missing); false when it
// was there, or when metadata or finalizers is of another type (validation answers).
bool AddFinalizer(nlohmann::json& object, const std::string& finalizer);

// Takes `finalizer` off object.metadata.finalizers (the field goes with its last
// entry); false when the object did not name it.
bool RemoveFinalizer(nlohmann::json& object, const std::string& finalizer);

// Takes the references to the owner `owner_uid` off object.metadata.ownerReferences
// (the field goes with its last entry), as an orphaning does; false when there were
// none.
bool RemoveOwnerReference(nlohmann::json& object, const std::string& owner_uid);

}  // namespace muster::control
