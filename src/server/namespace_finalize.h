// PUT /api/v1/namespaces/<name>/finalize, as kube-apiserver serves it: the one way to
// change a Namespace's spec.finalizers (an update keeps them, namespace_lifecycle.h).
// Only spec.finalizers of the body is read; each is "kubernetes" or a qualified name
// (example.com/x). A Namespace being deleted that is left with no finalizer goes.
#pragma once

#include "server/api_handler.h"
#include "server/object_store.h"
#include "server/request_target.h"

namespace muster::server {

ApiResult HandleNamespaceFinalize(ObjectStore& store, const RequestTarget& t, const ApiRequest& r);

}  // namespace muster::server
