// The OpenAPI v3 schemas of the served kinds, for `kubectl explain` and the
// CustomResourceDefinitions (crd_catalog.h): one table of field documentation
// (openapi_field_docs.cc) from which every schema is generated. The schemas describe
// the top-level fields and the spec fields muster acts on, not every field a kind
// has, so every object in them carries `x-kubernetes-preserve-unknown-fields: true`:
// a client that validates against them (none of kubectl's commands do while the
// server advertises `fieldValidation`, which openapi.cc keeps) accepts what the
// server accepts. They change nothing about patches: the PATCH operations still
// declare no request body, so kubectl keeps choosing strategic merge patches from its
// compiled-in types only (built-in kinds) and JSON merge patches for custom resources.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "control/resource_types.h"

namespace muster::server {

// One documented field: `path` is dotted from the object's root ("spec.cohort"), an
// array's elements are "[]" ("spec.resourceGroups[].flavors"). `type`: string,
// integer, boolean, object, quantity (int or string), map (of strings), []string,
// []object. `version`: the only version that has the field ("" for every one).
struct FieldDoc {
  const char* path;
  const char* type;
  const char* description;
  const char* version = "";
};

struct KindDoc {
  const char* group;
  const char* kind;
  const char* description;
  std::vector<FieldDoc> fields;
};

// The table (openapi_field_docs.cc); kinds without an entry get the common fields only.
const std::vector<KindDoc>& KindDocs();

// Whether `group` is one of Kubernetes' own (compiled into kube-apiserver and kubectl)
// rather than one a CRD installs.
bool IsBuiltInGroup(const std::string& group);

// The components.schemas name of `type` at `version`: "io.k8s.api.batch.v1.Job",
// "io.x-k8s.kueue.v1beta1.ClusterQueue".
std::string SchemaName(const control::ResourceType& type, const std::string& version);

// The schema of `type` at `version`, with x-kubernetes-group-version-kind; its
// metadata is a $ref to kObjectMetaSchema.
nlohmann::json KindSchema(const control::ResourceType& type, const std::string& version);

inline constexpr const char* kObjectMetaSchema = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
// The ObjectMeta schema the kinds' metadata refers to.
nlohmann::json ObjectMetaSchema();

// The schema as a CRD's openAPIV3Schema: self-contained (metadata an object, no $ref)
// and without the group-version-kind extension.
nlohmann::json CrdSchema(const control::ResourceType& type, const std::string& version);

}  // namespace muster::server
