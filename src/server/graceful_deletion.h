// Finalizers and metadata.deletionTimestamp, as kube-apiserver's registry keeps
// them: deleting an object that names finalizers only marks it (deletionTimestamp
// set, deletionGracePeriodSeconds 0) and it stays, terminating, until an update
// leaves it with none; a second delete changes nothing; an update can neither clear
// nor move the mark, nor add a finalizer while it is set (update_validation.h).
//
// A Pod is deleted gracefully, as kube-apiserver's pod strategy does it: a delete
// marks it with deletionTimestamp = now + its grace period and
// deletionGracePeriodSeconds = that period, and it stays, Terminating, while its kubelet
// (serve's executor) stops its containers; the kubelet then deletes it with a period
// of 0. An update never removes an object whose mark has a period above 0.
//
// "orphan" and "foregroundDeletion" are the garbage collector's own (owner_graph.h):
// "orphan" alone never holds an object (serve's collector orphans its dependents once
// it is gone); "foregroundDeletion" holds it until its dependents are gone.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "control/json_fields.h"
#include "control/object_reader.h"

namespace muster::server {

using control::BeingDeleted;  // metadata.deletionTimestamp is set
// Names a finalizer other than the garbage collector's, or is a Namespace whose
// spec.finalizers names one (namespace_lifecycle.h): a delete only marks it.
bool HeldByFinalizers(const nlohmann::json& object);
// Sets the mark (deletionTimestamp `now`, RFC 3339, unless an earlier one is set;
// grace period 0; a Namespace's status.phase Terminating).
void MarkForDeletion(nlohmann::json& object, const std::string& now);
// metadata.deletionGracePeriodSeconds, 0 when absent.
int64_t DeletionGracePeriod(const nlohmann::json& object);
// The grace period a delete gives this Pod (kube-apiserver's CheckGracefulDelete):
// DeleteOptions.gracePeriodSeconds when the client sent one, else the pod's
// spec.terminationGracePeriodSeconds (30 when absent); 0 for a pod bound to no node
// or already Succeeded or Failed (nothing runs that could stop); a negative period
// is 1.
int64_t PodDeletionGracePeriod(const nlohmann::json& pod, std::optional<int64_t> requested);
// Marks `object` for a graceful deletion of `grace` seconds (> 0) from `now` (RFC
// 3339): deletionTimestamp now + grace and the period, or a shorter period than the
// mark already set (a second delete may shorten it, never lengthen it). False when
// nothing changed.
bool MarkForGracefulDeletion(nlohmann::json& object, const std::string& now, int64_t grace);
// A Pod marked for a graceful deletion that waits for its kubelet (a period above 0).
struct TerminatingPod {
  control::ObjectKey key;  // pods / namespace / name
  std::string uid;         // the kubelet's delete names it: not a pod made again since
  int64_t grace = 0;       // deletionGracePeriodSeconds
};
// `pod` as one, when its mark waits for its kubelet.
std::optional<TerminatingPod> TerminatingPodOf(const nlohmann::json& pod);
// Every such pod `store` holds: what an executor finds marked when it starts (the
// changes that marked them came before it).
std::vector<TerminatingPod> TerminatingPods(const control::ObjectReader& store);
// The finalizers `next` names that `current` does not.
std::vector<std::string> AddedFinalizers(const nlohmann::json& current, const nlohmann::json& next);

}  // namespace muster::server
