#include "libpq_on_demand.hpp"

#include <libpq-fe.h>

#include "on_demand/on_demand_library.hpp"

namespace baton {
namespace {

// Debian's libpq brings GnuTLS in through libldap (for LDAP lookups of
// connection settings), and GnuTLS initialises itself in a load-time
// constructor: about 0.6 MB of a standby's RSS for a library baton never
// calls. libldap initialises it itself when it opens an LDAPS connection.
const on_demand_library libpq("libpq.so.5", "libpq5", "libpq",
                              {.name = "GNUTLS_NO_IMPLICIT_INIT", .value = "1"});

}  // namespace

std::optional<std::string> libpq_load_error() { return libpq.load_error(); }

}  // namespace baton

#define BATON_LIBPQ(name) BATON_ON_DEMAND_TARGET(baton::libpq, name)

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
