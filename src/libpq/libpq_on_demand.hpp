// libpq, loaded when the postgres store is used rather than at every start.
//
// Linking libpq pulls in about twenty libraries (OpenSSL, Kerberos, LDAP,
// GnuTLS ...) whose relocations cost every daemon some 5 MB of resident
// memory, Redis users' standbys included. So baton does not link it: this
// component defines the libpq functions baton calls, each forwarding to the
// real one in libpq.so.5, which is opened (dlopen) on the first call.
// libpq-fe.h stays the interface; the code that uses it does not change.
#pragma once

#include <optional>
#include <string>

namespace baton {

/// Opens libpq.so.5 if not done yet. nullopt when it is usable, else why not
/// (for instance "libpq.so.5: cannot open shared object file ..."), in a form
/// that can follow "the postgres store needs libpq: ". Call it before any
/// other libpq function: they end the process when libpq is missing.
std::optional<std::string> libpq_load_error();

}  // namespace baton
