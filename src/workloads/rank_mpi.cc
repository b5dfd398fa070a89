// MPIJob (mpi-operator v2beta1): the launcher's hostfile and the env that points
// mpirun at it, per MPI implementation; K_MPI_JOB_ROLE on every pod.
#include <string>

#include "workloads/rank_internal.h"

namespace muster::workloads::internal {
namespace {

constexpr std::string_view kHostfilePath = "/etc/mpi/hostfile";
constexpr std::string_view kRshArgs = "-o ConnectionAttempts=10";

}  // namespace

void MpiIdentity(const model::Workload& w, int32_t pod_set, int32_t index,
                 const RankContext& context, PodIdentity* id) {
  (void)index;
  const std::string& role = w.pod_sets[pod_set].name;
  id->env["K_MPI_JOB_ROLE"] = role;
  if (role != "launcher") return;

  const std::string& impl = w.rank.mpi_implementation;
  bool hydra = impl == "Intel" || impl == "MPICH";
  int32_t worker = PodSetIndex(w, "worker");
  if (worker >= 0) {
    std::string slots = std::to_string(w.rank.slots_per_worker);
    for (int32_t k = 0; k < w.pod_sets[worker].count; ++k) {
      // OpenMPI reads "host slots=N"; the Hydra launchers (Intel MPI, MPICH) "host:N".
      // Workers resolve through the job's headless Service: "<worker>.<job>.<ns>.svc".
      id->mpi_hostfile +=
          AddressOf(w, context, worker, k, "." + w.meta.name + "." + w.meta.namespace_ + ".svc") +
          (hydra ? ":" : " slots=") + slots + "\n";
    }
  }
  if (impl == "Intel") {
    id->env["I_MPI_HYDRA_HOST_FILE"] = std::string(kHostfilePath);
    id->env["I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS"] = std::string(kRshArgs);
  } else if (impl == "MPICH") {
    id->env["HYDRA_HOST_FILE"] = std::string(kHostfilePath);
    id->env["HYDRA_LAUNCH_EXTRA_ARGS"] = std::string(kRshArgs);
  } else {
    id->env["OMPI_MCA_orte_keep_fqdn_hostnames"] = "true";
    id->env["OMPI_MCA_orte_default_hostfile"] = std::string(kHostfilePath);
    id->env["OMPI_MCA_plm_rsh_args"] = std::string(kRshArgs);
  }
}

}  // namespace muster::workloads::internal
