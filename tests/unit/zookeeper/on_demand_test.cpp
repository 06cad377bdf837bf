// The client's constants that zookeeper_on_demand.cpp defines (baton does
// not link the client) must be the library's own: each is compared with the
// value libzookeeper_st.so.2 exports.
#include "zookeeper/zookeeper_on_demand.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <zookeeper/zookeeper.h>

#include <string>
#include <vector>

namespace baton {
namespace {

TEST(zookeeper_on_demand, the_client_loads) {
  const auto error = zookeeper_client_load_error();
  EXPECT_FALSE(error.has_value()) << *error;
}

TEST(zookeeper_on_demand, constants_are_the_librarys_own) {
  void* lib = ::dlopen("libzookeeper_st.so.2", RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << ::dlerror();
  struct row {
    const char* name;
    int ours;
  };
  const std::vector<row> rows = {
      {"ZOOKEEPER_WRITE", ZOOKEEPER_WRITE},
      {"ZOOKEEPER_READ", ZOOKEEPER_READ},
      {"ZOO_PERSISTENT", ZOO_PERSISTENT},
      {"ZOO_EPHEMERAL", ZOO_EPHEMERAL},
      {"ZOO_PERM_READ", ZOO_PERM_READ},
      {"ZOO_PERM_ALL", ZOO_PERM_ALL},
      {"ZOO_EXPIRED_SESSION_STATE", ZOO_EXPIRED_SESSION_STATE},
      {"ZOO_AUTH_FAILED_STATE", ZOO_AUTH_FAILED_STATE},
      {"ZOO_CONNECTING_STATE", ZOO_CONNECTING_STATE},
      {"ZOO_ASSOCIATING_STATE", ZOO_ASSOCIATING_STATE},
      {"ZOO_CONNECTED_STATE", ZOO_CONNECTED_STATE},
      {"ZOO_READONLY_STATE", ZOO_READONLY_STATE},
      {"ZOO_NOTCONNECTED_STATE", ZOO_NOTCONNECTED_STATE},
      {"ZOO_CREATED_EVENT", ZOO_CREATED_EVENT},
      {"ZOO_DELETED_EVENT", ZOO_DELETED_EVENT},
      {"ZOO_CHANGED_EVENT", ZOO_CHANGED_EVENT},
      {"ZOO_CHILD_EVENT", ZOO_CHILD_EVENT},
      {"ZOO_SESSION_EVENT", ZOO_SESSION_EVENT},
      {"ZOO_NOTWATCHING_EVENT", ZOO_NOTWATCHING_EVENT},
  };
  for (const auto& r : rows) {
    const auto* theirs = static_cast<const int*>(::dlsym(lib, r.name));
    ASSERT_NE(theirs, nullptr) << r.name;
    EXPECT_EQ(r.ours, *theirs) << r.name;
  }
  const auto* acl = static_cast<const ACL_vector*>(::dlsym(lib, "ZOO_OPEN_ACL_UNSAFE"));
  ASSERT_NE(acl, nullptr);
  ASSERT_EQ(ZOO_OPEN_ACL_UNSAFE.count, acl->count);
  EXPECT_EQ(ZOO_OPEN_ACL_UNSAFE.data[0].perms, acl->data[0].perms);
  EXPECT_EQ(std::string(ZOO_OPEN_ACL_UNSAFE.data[0].id.scheme), acl->data[0].id.scheme);
  EXPECT_EQ(std::string(ZOO_OPEN_ACL_UNSAFE.data[0].id.id), acl->data[0].id.id);
  ::dlclose(lib);
}

TEST(zookeeper_on_demand, forwarders_reach_the_library) {
  EXPECT_STREQ(zerror(ZNONODE), "no node");
}

}  // namespace
}  // namespace baton
