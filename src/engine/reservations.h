// Reservations for starving gangs (issue 4, point 7). A gang that has waited at
// least `reservationAfter` since its latest submit or requeue, and waits because
// nodes are short (a failed CanPlace, not quota), may hold a reservation: the nodes
// it would use once the running workloads there finish. Nothing else is placed on
// them until the gang starts, except backfill that cannot delay it: a workload with
// a known duration that ends by the gang's earliest start (the latest expected
// finish among the workloads it waits for), or one of higher priority. At most one
// reservation per cluster, like Volcano's single elected target job and the top of
// Slurm's backfill queue: the highest priority, then the longest waiting, then the
// key. No I/O; deterministic.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "admission/admission.h"
#include "core/clock.h"
#include "engine/decision_log.h"
#include "engine/workload_record.h"
#include "placement/placement.h"

namespace muster::engine {

// Pending reason of a workload that would fit only on nodes reserved for another gang.
inline constexpr const char* kReasonNodesReserved = "NodesReserved";

// The engine's record of a workload, or null when it does not know the key.
using RecordLookup = std::function<const WorkloadRecord*(const std::string&)>;
// The placement request of an assignment, without any reservation's exclusions.
using RequestBuilder = std::function<placement::PlacementRequest(const model::Workload&,
                                                                 const admission::Assignment&)>;

// When a running workload should finish: its latest start plus its declared
// duration (sim.duration). nullopt when it is not running or the duration is
// unknown (serve mode). An upper bound when it resumed from a checkpoint.
std::optional<Time> ExpectedFinish(const WorkloadRecord& record);
// When a pending workload began its current wait: its latest submit, eviction or
// start (a pod-failure restart requeues it some time after its start).
Time PendingSince(const WorkloadRecord& record);

struct Reservation {
  std::string holder;  // the starving gang's key
  int32_t priority = 0;
  Time pending_since = 0;  // the holder's
  std::string why;         // "reservationAfter 900s" | "sla-waiting-time 600s"
  Time made_at = 0;
  std::vector<placement::NodeIndex> nodes;  // ascending
  std::vector<std::string> node_names;      // sorted
  // Workloads that were on the reserved nodes when it was made but are not in the
  // gang's way (it fits beside them): they never delay it.
  std::set<std::string> beside;
  // Refreshed every pass: bound workloads on the reserved nodes it waits for, and
  // the latest expected finish among them (nullopt when one is unknown).
  std::vector<std::string> waits_for;
  std::optional<Time> earliest_start;
};

// What Update reads: the engine's records and queues, and placement.
struct ReservationInputs {
  Time now = 0;
  RecordLookup find;
  const admission::Admitter* admitter = nullptr;
  const placement::GangPlanner* planner = nullptr;
  const placement::ClusterState* cluster = nullptr;
  RequestBuilder request_for;
};

// The nodes a gang would use once some running workloads finish, and which.
struct ReservedNodes {
  std::vector<placement::NodeIndex> nodes;  // ascending
  std::vector<std::string> waits_for;       // sorted
  std::set<std::string> beside;
};

// Plans the gang as if running workloads were gone, soonest expected finish first
// (unknown finishes last, by start, then key): the shortest prefix of that order
// whose removal lets it fit, cut down by the planner's victim search to the
// workloads it really needs gone. Why not when it does not fit even on an empty
// cluster.
std::variant<ReservedNodes, std::string> PlanReservation(const placement::GangPlanner& planner,
                                                         const placement::ClusterState& cluster,
                                                         const placement::PlacementRequest& request,
                                                         const RecordLookup& find);

class ReservationBook {
 public:
  // nullopt disables reservations (SchedulerConfiguration reservationAfter).
  void SetReservationAfter(std::optional<double> seconds) { after_ = seconds; }
  const std::optional<double>& reservation_after() const { return after_; }
  // Volcano's sla plugin: a workload scheduled by Volcano's rules (in a Volcano
  // queue or none) that has waited longer than its sla-waiting-time since it was
  // submitted (its annotation, else `default_wait`) is starving too, whatever
  // reservationAfter says. `enabled` false: the plugin is off.
  void SetSla(bool enabled, std::optional<double> default_wait) {
    sla_ = enabled;
    sla_default_ = default_wait;
  }
  // The workload's sla-waiting-time when the plugin applies to it.
  std::optional<double> SlaWait(const model::Workload& workload) const;

  // A CanPlace with no assumed evictions failed on nodes with `reason` (the
  // pending reason admission reports): the workload may be starving. Within one
  // pass the largest gang probed wins (partial admission probes smaller counts).
  void NoteUnplaceable(const model::Workload& workload, const admission::Assignment& assignment,
                       const std::string& reason);
  // It fits: not starving.
  void NotePlaceable(const std::string& key) { unplaceable_.erase(key); }
  // An admission pass ended.
  void NewPass() { ++pass_; }

  // Once per admission pass: ends a reservation that no longer applies (holder
  // admitted, removed or not starving, reservations disabled, a higher priority
  // starving), re-plans one that lost nodes, elects a holder when there is none
  // and refreshes the earliest start. Entries for the decision log; empty when
  // the reservation did not change.
  std::vector<LogEntry> Update(const ReservationInputs& in);

  const std::optional<Reservation>& current() const { return current_; }
  bool IsHolder(const std::string& key) const { return current_ && current_->holder == key; }
  // Whether `workload` must stay off the reserved nodes now: everyone but the
  // holder, higher priorities and backfill that ends by the earliest start.
  bool MustAvoid(const model::Workload& workload, Time now) const;
  // Why a workload that fits only on reserved nodes waits (its pending message).
  std::string AvoidMessage(const model::Workload& workload) const;
  // What the holder's pending message adds ("holds a reservation on 4 nodes ...").
  std::string HolderNote() const;

 private:
  struct Unplaceable {
    admission::Assignment assignment;
    std::string reason;
    int64_t pods = 0;  // pods the probe asked for
    int64_t pass = 0;
  };
  struct Candidate {
    int32_t priority = 0;
    Time since = 0;
    std::string key;
    std::string why;  // which threshold it passed
  };
  // Starving workloads, best first.
  std::vector<Candidate> Candidates(const ReservationInputs& in);
  // Why the holder's reservation ends now ("" = it holds).
  std::string EndReason(const ReservationInputs& in,
                        const std::vector<Candidate>& candidates) const;
  std::optional<Reservation> Make(const ReservationInputs& in, const Candidate& c);
  void Refresh(const ReservationInputs& in);

  std::optional<double> after_;
  bool sla_ = true;
  std::optional<double> sla_default_;
  std::optional<Reservation> current_;
  std::map<std::string, Unplaceable> unplaceable_;
  std::map<std::string, Time> failed_at_;  // no reservation fit at this time: not retried then
  int64_t pass_ = 0;
};

}  // namespace muster::engine
