// A decoded pod template back as core/v1 JSON: what muster writes where Kubernetes
// shows a pod's spec (the Pod objects of `muster serve`'s executors). The model keeps
// the fields muster acts on; fields it does not model were warned about when the job
// was applied, so they do not appear here. Pure functions, no I/O.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "model/pod.h"

namespace muster::control {

// One container: name, image, command, args, workingDir, ports, env, envFrom,
// resources (limits and requests), volumeMounts, imagePullPolicy, restartPolicy.
nlohmann::json ContainerJson(const model::Container& container);

// The spec: containers, initContainers, volumes, nodeSelector, affinity.nodeAffinity,
// tolerations, priority, scheduling and naming fields, overhead.
nlohmann::json PodSpecJson(const model::PodSpec& spec);

// What kube-apiserver's defaulting adds to a Pod it stores (SetDefaults_Pod,
// SetDefaults_PodSpec, SetDefaults_Container): dnsPolicy, securityContext,
// schedulerName, serviceAccountName, enableServiceLinks, container termination
// message fields, imagePullPolicy by tag, a container's limits as its missing
// requests, port protocols, volume defaultModes.
// Fields already set are kept; any shape of JSON is taken (defaulting runs before
// validation), what is not an object left alone.
void DefaultPodSpecJson(nlohmann::json& spec);

// The pod's QoS class as the kubelet computes it (qos.GetPodQOS): Guaranteed when
// every container limits cpu and memory and requests what it limits, BestEffort when
// none requests or limits anything, Burstable otherwise.
std::string PodQosClass(const model::PodSpec& spec);

}  // namespace muster::control
