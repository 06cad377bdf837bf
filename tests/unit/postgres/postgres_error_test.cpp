// SQLSTATEs and connect failures map onto the codes that change what an
// operator does, and those onto the store-neutral conditions.
#include "postgres/postgres_error.hpp"

#include <gtest/gtest.h>

namespace baton {
namespace {

TEST(postgres_error, sqlstates_that_matter_have_their_own_code) {
  EXPECT_EQ(classify_sqlstate("57014"), postgres_errc::timeout);
  EXPECT_EQ(classify_sqlstate("55P03"), postgres_errc::timeout);
  EXPECT_EQ(classify_sqlstate("25006"), postgres_errc::not_primary);
  EXPECT_EQ(classify_sqlstate("42501"), postgres_errc::permission_denied);
  EXPECT_EQ(classify_sqlstate("42P01"), postgres_errc::missing_schema);
  EXPECT_EQ(classify_sqlstate("28P01"), postgres_errc::auth_failed);
  EXPECT_EQ(classify_sqlstate("57P01"), postgres_errc::connection_lost);
  EXPECT_EQ(classify_sqlstate("08006"), postgres_errc::connection_lost);
  EXPECT_EQ(classify_sqlstate("23505"), postgres_errc::server_error);
  EXPECT_EQ(classify_sqlstate(""), postgres_errc::server_error);
}

TEST(postgres_error, refused_credentials_are_auth_failures) {
  EXPECT_EQ(classify_connect_failure(
                "connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  password "
                "authentication failed for user \"baton\""),
            postgres_errc::auth_failed);
  EXPECT_EQ(classify_connect_failure("fe_sendauth: no password supplied"),
            postgres_errc::auth_failed);
  EXPECT_EQ(classify_connect_failure("connection to server at \"127.0.0.1\", port 1 failed: "
                                     "Connection refused"),
            postgres_errc::connect_failed);
}

TEST(postgres_error, codes_map_onto_store_conditions) {
  EXPECT_EQ(make_error_code(postgres_errc::connect_failed), store_errc::unavailable);
  EXPECT_EQ(make_error_code(postgres_errc::not_primary), store_errc::unavailable);
  EXPECT_EQ(make_error_code(postgres_errc::timeout), store_errc::timeout);
  EXPECT_EQ(make_error_code(postgres_errc::auth_failed), store_errc::auth);
  EXPECT_EQ(make_error_code(postgres_errc::unexpected_reply), store_errc::protocol);
  EXPECT_EQ(make_error_code(postgres_errc::permission_denied), store_errc::refused);
  EXPECT_EQ(make_error_code(postgres_errc::pooler), store_errc::refused);
  EXPECT_STREQ(store_error_kind(make_error_code(postgres_errc::timeout)), "timeout");
}

}  // namespace
}  // namespace baton
