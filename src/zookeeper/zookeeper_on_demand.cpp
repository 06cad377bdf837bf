#include "zookeeper_on_demand.hpp"

#include <zookeeper/zookeeper.h>

#include "on_demand/on_demand_library.hpp"

namespace baton {
namespace {

const on_demand_library client("libzookeeper_st.so.2", "libzookeeper-st2", "zookeeper client");

}  // namespace

std::optional<std::string> zookeeper_client_load_error() { return client.load_error(); }

}  // namespace baton

#define BATON_ZOO(name) BATON_ON_DEMAND_TARGET(baton::client, name)

extern "C" {

// The client's constants, as libzookeeper_st.so.2 defines them.
const int ZOOKEEPER_WRITE = 1 << 0;
const int ZOOKEEPER_READ = 1 << 1;
const int ZOO_PERSISTENT = 0;
const int ZOO_EPHEMERAL = 1;
const int ZOO_PERM_READ = 1 << 0;
const int ZOO_PERM_ALL = 0x1f;
const int ZOO_EXPIRED_SESSION_STATE = -112;
const int ZOO_AUTH_FAILED_STATE = -113;
const int ZOO_CONNECTING_STATE = 1;
const int ZOO_ASSOCIATING_STATE = 2;
const int ZOO_CONNECTED_STATE = 3;
const int ZOO_READONLY_STATE = 5;
const int ZOO_NOTCONNECTED_STATE = 999;
const int ZOO_CREATED_EVENT = 1;
const int ZOO_DELETED_EVENT = 2;
const int ZOO_CHANGED_EVENT = 3;
const int ZOO_CHILD_EVENT = 4;
const int ZOO_SESSION_EVENT = -1;
const int ZOO_NOTWATCHING_EVENT = -2;

static struct ACL baton_open_acl[] = {
    {0x1f, {const_cast<char*>("world"), const_cast<char*>("anyone")}}};
struct ACL_vector ZOO_OPEN_ACL_UNSAFE = {1, baton_open_acl};

void zoo_set_debug_level(ZooLogLevel level) {
  BATON_ZOO(zoo_set_debug_level);
  target(level);
}
zhandle_t* zookeeper_init(const char* host, watcher_fn fn, int recv_timeout,
                          const clientid_t* clientid, void* context, int flags) {
  BATON_ZOO(zookeeper_init);
  return target(host, fn, recv_timeout, clientid, context, flags);
}
int zookeeper_close(zhandle_t* zh) {
  BATON_ZOO(zookeeper_close);
  return target(zh);
}
int zoo_add_auth(zhandle_t* zh, const char* scheme, const char* cert, int cert_len,
                 void_completion_t completion, const void* data) {
  BATON_ZOO(zoo_add_auth);
  return target(zh, scheme, cert, cert_len, completion, data);
}
int zoo_state(zhandle_t* zh) {
  BATON_ZOO(zoo_state);
  return target(zh);
}
const clientid_t* zoo_client_id(zhandle_t* zh) {
  BATON_ZOO(zoo_client_id);
  return target(zh);
}
int zoo_recv_timeout(zhandle_t* zh) {
  BATON_ZOO(zoo_recv_timeout);
  return target(zh);
}
struct sockaddr* zookeeper_get_connected_host(zhandle_t* zh, struct sockaddr* addr,
                                              socklen_t* addr_len) {
  BATON_ZOO(zookeeper_get_connected_host);
  return target(zh, addr, addr_len);
}
int zookeeper_interest(zhandle_t* zh, int* fd, int* interest, struct timeval* tv) {
  BATON_ZOO(zookeeper_interest);
  return target(zh, fd, interest, tv);
}
int zookeeper_process(zhandle_t* zh, int events) {
  BATON_ZOO(zookeeper_process);
  return target(zh, events);
}
int zoo_aget(zhandle_t* zh, const char* path, int watch, data_completion_t completion,
             const void* data) {
  BATON_ZOO(zoo_aget);
  return target(zh, path, watch, completion, data);
}
int zoo_awget(zhandle_t* zh, const char* path, watcher_fn watcher, void* watcher_ctx,
              data_completion_t completion, const void* data) {
  BATON_ZOO(zoo_awget);
  return target(zh, path, watcher, watcher_ctx, completion, data);
}
int zoo_aget_children(zhandle_t* zh, const char* path, int watch, strings_completion_t completion,
                      const void* data) {
  BATON_ZOO(zoo_aget_children);
  return target(zh, path, watch, completion, data);
}
int zoo_awget_children(zhandle_t* zh, const char* path, watcher_fn watcher, void* watcher_ctx,
                       strings_completion_t completion, const void* data) {
  BATON_ZOO(zoo_awget_children);
  return target(zh, path, watcher, watcher_ctx, completion, data);
}
int zoo_awexists(zhandle_t* zh, const char* path, watcher_fn watcher, void* watcher_ctx,
                 stat_completion_t completion, const void* data) {
  BATON_ZOO(zoo_awexists);
  return target(zh, path, watcher, watcher_ctx, completion, data);
}
int zoo_acreate2(zhandle_t* zh, const char* path, const char* value, int valuelen,
                 const struct ACL_vector* acl, int mode, string_stat_completion_t completion,
                 const void* data) {
  BATON_ZOO(zoo_acreate2);
  return target(zh, path, value, valuelen, acl, mode, completion, data);
}
int zoo_amulti(zhandle_t* zh, int count, const zoo_op_t* ops, zoo_op_result_t* results,
               void_completion_t completion, const void* data) {
  BATON_ZOO(zoo_amulti);
  return target(zh, count, ops, results, completion, data);
}
void zoo_create_op_init(zoo_op_t* op, const char* path, const char* value, int valuelen,
                        const struct ACL_vector* acl, int mode, char* path_buffer,
                        int path_buffer_len) {
  BATON_ZOO(zoo_create_op_init);
  target(op, path, value, valuelen, acl, mode, path_buffer, path_buffer_len);
}
void zoo_delete_op_init(zoo_op_t* op, const char* path, int version) {
  BATON_ZOO(zoo_delete_op_init);
  target(op, path, version);
}
void zoo_set_op_init(zoo_op_t* op, const char* path, const char* buffer, int buflen, int version,
                     struct Stat* stat) {
  BATON_ZOO(zoo_set_op_init);
  target(op, path, buffer, buflen, version, stat);
}
void zoo_check_op_init(zoo_op_t* op, const char* path, int version) {
  BATON_ZOO(zoo_check_op_init);
  target(op, path, version);
}
const char* zerror(int c) {
  BATON_ZOO(zerror);
  return target(c);
}

}  // extern "C"
