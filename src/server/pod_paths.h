// Where a pod's local process lives under `muster serve --data DIR`: the executor
// runs pod <ns>/<name> in PodDir and sends its stdout+stderr to PodLogPath; the log
// endpoint reads the same files. Pure string functions, no I/O.
#pragma once

#include <string>

namespace muster::server {

// "<ns>_<name>": unambiguous because namespaces and pod names are DNS-1123 and
// cannot contain '_'.
std::string PodProcessId(const std::string& ns, const std::string& name);

// "<data_dir>/pods/<ns>_<name>".
std::string PodDir(const std::string& data_dir, const std::string& ns, const std::string& name);

// "<PodDir>/log" for the current attempt, "<PodDir>/log.1" for the previous one.
std::string PodLogPath(const std::string& data_dir, const std::string& ns, const std::string& name,
                       bool previous);

}  // namespace muster::server
