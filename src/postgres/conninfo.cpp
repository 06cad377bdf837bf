// PQconninfoParse is libpq's own parser, so what baton accepts is exactly
// what libpq will connect with. It allocates; both results are freed here.
#include "conninfo.hpp"

#include <libpq-fe.h>

#include <string_view>

namespace baton::postgres_detail {

conninfo_summary summarize_conninfo(const std::string& conninfo) {
  conninfo_summary out;
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &error);
  if (options == nullptr) {
    out.error = error != nullptr ? error : "out of memory";
    if (error != nullptr) PQfreemem(error);
    while (!out.error.empty() && (out.error.back() == '\n' || out.error.back() == ' ')) {
      out.error.pop_back();
    }
    return out;
  }
  std::string host, hostaddr, port, dbname, user;
  for (auto* o = options; o->keyword != nullptr; ++o) {
    if (o->val == nullptr || *o->val == '\0') continue;
    const std::string_view key = o->keyword;
    if (key == "host") host = o->val;
    if (key == "hostaddr") hostaddr = o->val;
    if (key == "port") port = o->val;
    if (key == "dbname") dbname = o->val;
    if (key == "user") user = o->val;
    if (key == "password") out.has_password = true;
  }
  PQconninfoFree(options);
  out.where = !host.empty() ? host : !hostaddr.empty() ? hostaddr : "(default host)";
  if (!port.empty()) out.where += ":" + port;
  if (!dbname.empty()) out.where += "/" + dbname;
  if (!user.empty()) out.where += " as " + user;
  return out;
}

}  // namespace baton::postgres_detail
