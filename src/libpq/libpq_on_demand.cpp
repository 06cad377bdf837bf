#include "libpq_on_demand.hpp"

#include <dlfcn.h>
#include <libpq-fe.h>

#include <cstdio>
#include <cstdlib>

namespace baton {
namespace {

struct loaded_library {
  void* handle = nullptr;
  std::string error;
};

const loaded_library& library() {
  static const loaded_library lib = [] {
    loaded_library l;
    // RTLD_LOCAL: libpq's own dependencies stay out of the global namespace.
    l.handle = ::dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
    if (l.handle == nullptr) {
      const char* why = ::dlerror();
      l.error = std::string(why != nullptr ? why : "libpq.so.5 could not be opened") +
                " (Debian: apt-get install libpq5)";
    }
    return l;
  }();
  return lib;
}

// The real function `name`, whose type is that of our forwarder. Missing
// libpq here is a bug of ours (validation asks libpq_load_error first), so
// it ends the process with the reason rather than calling a null pointer.
template <typename Fn>
Fn real(Fn /*forwarder*/, const char* name) {
  const auto& lib = library();
  void* symbol = lib.handle != nullptr ? ::dlsym(lib.handle, name) : nullptr;
  if (symbol == nullptr) {
    std::fprintf(stderr, "baton: libpq: %s: %s\n", name,
                 lib.handle == nullptr ? lib.error.c_str() : "no such function in libpq.so.5");
    std::abort();
  }
  return reinterpret_cast<Fn>(symbol);
}

}  // namespace

std::optional<std::string> libpq_load_error() {
  const auto& lib = library();
  if (lib.handle == nullptr) return lib.error;
  return std::nullopt;
}

}  // namespace baton

// Each forwarder resolves its target once (a function-local static: thread-safe).
#define BATON_LIBPQ(name) \
  static const auto target = baton::real(&::name, #name)

extern "C" {

PGconn* PQconnectStartParams(const char* const* keywords, const char* const* values,
                             int expand_dbname) {
  BATON_LIBPQ(PQconnectStartParams);
  return target(keywords, values, expand_dbname);
}
PostgresPollingStatusType PQconnectPoll(PGconn* conn) {
  BATON_LIBPQ(PQconnectPoll);
  return target(conn);
}
void PQfinish(PGconn* conn) {
  BATON_LIBPQ(PQfinish);
  target(conn);
}
ConnStatusType PQstatus(const PGconn* conn) {
  BATON_LIBPQ(PQstatus);
  return target(conn);
}
char* PQerrorMessage(const PGconn* conn) {
  BATON_LIBPQ(PQerrorMessage);
  return target(conn);
}
int PQsocket(const PGconn* conn) {
  BATON_LIBPQ(PQsocket);
  return target(conn);
}
int PQbackendPID(const PGconn* conn) {
  BATON_LIBPQ(PQbackendPID);
  return target(conn);
}
int PQsetnonblocking(PGconn* conn, int arg) {
  BATON_LIBPQ(PQsetnonblocking);
  return target(conn, arg);
}
PQnoticeProcessor PQsetNoticeProcessor(PGconn* conn, PQnoticeProcessor proc, void* arg) {
  BATON_LIBPQ(PQsetNoticeProcessor);
  return target(conn, proc, arg);
}
int PQsendQuery(PGconn* conn, const char* query) {
  BATON_LIBPQ(PQsendQuery);
  return target(conn, query);
}
int PQsendQueryParams(PGconn* conn, const char* command, int nParams, const Oid* paramTypes,
                      const char* const* paramValues, const int* paramLengths,
                      const int* paramFormats, int resultFormat) {
  BATON_LIBPQ(PQsendQueryParams);
  return target(conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats,
                resultFormat);
}
int PQsendPrepare(PGconn* conn, const char* stmtName, const char* query, int nParams,
                  const Oid* paramTypes) {
  BATON_LIBPQ(PQsendPrepare);
  return target(conn, stmtName, query, nParams, paramTypes);
}
int PQsendQueryPrepared(PGconn* conn, const char* stmtName, int nParams,
                        const char* const* paramValues, const int* paramLengths,
                        const int* paramFormats, int resultFormat) {
  BATON_LIBPQ(PQsendQueryPrepared);
  return target(conn, stmtName, nParams, paramValues, paramLengths, paramFormats, resultFormat);
}
int PQflush(PGconn* conn) {
  BATON_LIBPQ(PQflush);
  return target(conn);
}
int PQconsumeInput(PGconn* conn) {
  BATON_LIBPQ(PQconsumeInput);
  return target(conn);
}
int PQisBusy(PGconn* conn) {
  BATON_LIBPQ(PQisBusy);
  return target(conn);
}
PGresult* PQgetResult(PGconn* conn) {
  BATON_LIBPQ(PQgetResult);
  return target(conn);
}
PGnotify* PQnotifies(PGconn* conn) {
  BATON_LIBPQ(PQnotifies);
  return target(conn);
}
ExecStatusType PQresultStatus(const PGresult* res) {
  BATON_LIBPQ(PQresultStatus);
  return target(res);
}
char* PQresStatus(ExecStatusType status) {
  BATON_LIBPQ(PQresStatus);
  return target(status);
}
char* PQresultErrorMessage(const PGresult* res) {
  BATON_LIBPQ(PQresultErrorMessage);
  return target(res);
}
char* PQresultErrorField(const PGresult* res, int fieldcode) {
  BATON_LIBPQ(PQresultErrorField);
  return target(res, fieldcode);
}
int PQntuples(const PGresult* res) {
  BATON_LIBPQ(PQntuples);
  return target(res);
}
int PQnfields(const PGresult* res) {
  BATON_LIBPQ(PQnfields);
  return target(res);
}
char* PQgetvalue(const PGresult* res, int tup_num, int field_num) {
  BATON_LIBPQ(PQgetvalue);
  return target(res, tup_num, field_num);
}
int PQgetlength(const PGresult* res, int tup_num, int field_num) {
  BATON_LIBPQ(PQgetlength);
  return target(res, tup_num, field_num);
}
int PQgetisnull(const PGresult* res, int tup_num, int field_num) {
  BATON_LIBPQ(PQgetisnull);
  return target(res, tup_num, field_num);
}
void PQclear(PGresult* res) {
  BATON_LIBPQ(PQclear);
  target(res);
}
void PQfreemem(void* ptr) {
  BATON_LIBPQ(PQfreemem);
  target(ptr);
}
PQconninfoOption* PQconninfoParse(const char* conninfo, char** errmsg) {
  BATON_LIBPQ(PQconninfoParse);
  return target(conninfo, errmsg);
}
void PQconninfoFree(PQconninfoOption* connOptions) {
  BATON_LIBPQ(PQconninfoFree);
  target(connOptions);
}

}  // extern "C"
