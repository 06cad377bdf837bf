// A client library opened (dlopen) on its first use rather than linked, so
// that only the daemons whose election needs it pay its memory: libpq for
// the postgres kind, the ZooKeeper C client for the zookeeper kind. The
// component that wraps one defines the library's functions it calls, each
// forwarding to the real one (BATON_ON_DEMAND_TARGET below); the code that
// uses the library keeps its own headers and does not change.
#pragma once

#include <mutex>
#include <optional>
#include <string>

namespace baton {

/// An environment variable set only while the library is being opened (and
/// only if the user has not set it): a switch its dependencies read in their
/// load-time constructors.
struct load_time_variable {
  const char* name = nullptr;
  const char* value = nullptr;
};

class on_demand_library {
 public:
  /// `soname` as dlopen takes it ("libpq.so.5"); `package`: the Debian
  /// package that installs it, named in the error; `what`: how messages
  /// call it ("libpq"); `while_opening`: see load_time_variable.
  on_demand_library(const char* soname, const char* package, const char* what,
                    load_time_variable while_opening = {})
      : soname_(soname), package_(package), what_(what), while_opening_(while_opening) {}
  on_demand_library(const on_demand_library&) = delete;
  on_demand_library& operator=(const on_demand_library&) = delete;

  /// Opens the library if not done yet (once; thread-safe). nullopt when it
  /// is usable, else why not, naming the package to install.
  std::optional<std::string> load_error() const;

  /// The library's function `name`. Called only after load_error() said
  /// the library is usable: a missing library or function here is a bug of
  /// ours, so it ends the process with the reason rather than returning a
  /// null pointer someone would call.
  void* function(const char* name) const;

 private:
  void open() const;

  const char* soname_;
  const char* package_;
  const char* what_;
  load_time_variable while_opening_;
  // Opened once, on the first ask, and never closed: forwarders keep
  // pointers into it.
  mutable std::once_flag opened_;
  mutable void* handle_ = nullptr;
  mutable std::string error_;
};

/// `fn`'s real counterpart in `library`, typed as `fn` (a forwarder of the
/// same signature).
template <typename Fn>
Fn real_function(const on_demand_library& library, Fn /*forwarder*/, const char* name) {
  return reinterpret_cast<Fn>(library.function(name));
}

}  // namespace baton

// In a forwarder: resolves the real function once (a function-local static:
// thread-safe) into `target`.
#define BATON_ON_DEMAND_TARGET(library, name) \
  static const auto target = ::baton::real_function(library, &::name, #name)
