# The Debian package: `cpack -G DEB` in the build tree makes
# baton_VERSION-REVISION_ARCH.deb with /usr/bin/baton and the parked keeper
# /usr/libexec/baton/baton-keeper, the systemd units in
# /lib/systemd/system, the example configuration as the conffile
# /etc/baton/baton.yaml, the docs in /usr/share/doc/baton, the man page
# baton(1), the bash completion and the maintainer scripts in packaging/debian
# (they create the `baton` user and group).
#
# The Debian revision comes from the top entry of packaging/debian/changelog,
# whose upstream part must equal the project's version: bump both together.
# Shared-library dependencies are computed by dpkg-shlibdeps (dpkg-dev).

set(BATON_DEBIAN_DIR ${PROJECT_SOURCE_DIR}/packaging/debian)

# Installing (and so `cpack`) takes what the build made and builds nothing
# more: otherwise it first builds every target of the tree, one compile at a
# time, tests included, when only the daemon, its keeper and the man page go
# into the package (scripts/test.sh builds just those in its normal tree).
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

# Where the units and the configuration go. Absolute, as Debian 12 wants them
# whatever the install prefix; change these for another layout.
set(BATON_SYSTEMD_UNIT_DIR "/lib/systemd/system" CACHE PATH "Where the systemd units are installed")
set(BATON_CONFIG_DIR "/etc/baton" CACHE PATH "Where the configuration is installed")

file(STRINGS ${BATON_DEBIAN_DIR}/changelog baton_changelog_top LIMIT_COUNT 1)
if(NOT baton_changelog_top MATCHES "^baton \\(([^)-]+)-([^)]+)\\)")
  message(FATAL_ERROR "packaging/debian/changelog: the first line must read "
                      "'baton (VERSION-REVISION) ...', not '${baton_changelog_top}'")
endif()
if(NOT CMAKE_MATCH_1 STREQUAL PROJECT_VERSION)
  message(FATAL_ERROR "packaging/debian/changelog is for version ${CMAKE_MATCH_1} but the "
                      "project is ${PROJECT_VERSION}: add a changelog entry")
endif()
set(baton_debian_revision ${CMAKE_MATCH_2})
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${BATON_DEBIAN_DIR}/changelog)

# Debian wants the changelog gzipped at level 9 without a name or timestamp
# in the header, so that the package is reproducible.
set(baton_changelog_gz ${PROJECT_BINARY_DIR}/packaging/changelog.Debian.gz)
file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/packaging)
execute_process(COMMAND gzip -9 -n -c ${BATON_DEBIAN_DIR}/changelog
                OUTPUT_FILE ${baton_changelog_gz}
                RESULT_VARIABLE baton_gzip_result)
if(NOT baton_gzip_result EQUAL 0)
  message(FATAL_ERROR "gzip of packaging/debian/changelog failed: ${baton_gzip_result}")
endif()

install(FILES ${PROJECT_SOURCE_DIR}/systemd/baton.service ${PROJECT_SOURCE_DIR}/systemd/baton@.service
        DESTINATION ${BATON_SYSTEMD_UNIT_DIR})
install(FILES ${PROJECT_SOURCE_DIR}/config/baton.yaml DESTINATION ${BATON_CONFIG_DIR})
install(FILES ${BATON_DEBIAN_DIR}/lintian-overrides DESTINATION share/lintian/overrides RENAME baton)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${BATON_DEBIAN_DIR}/copyright ${baton_changelog_gz}
        DESTINATION share/doc/baton)
# The pages README.md links to (docs/*.md, docs/stores/*.md), so its map works
# from the installed copy too.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION share/doc/baton/docs
        FILES_MATCHING PATTERN "*.md")
# The Prometheus alert rules, their promtool tests and the Grafana dashboard
# (docs/monitoring.md says how to load them).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/monitoring/ DESTINATION share/doc/baton/monitoring)
# baton(1), gzipped -9n, and the bash completion: generated at build time by
# the baton_docs target (CMakeLists.txt) from the binary's own tables.
if(TARGET baton_docs)
  install(FILES ${BATON_MAN_PAGE}.gz DESTINATION share/man/man1)
  install(FILES ${BATON_BASH_COMPLETION} DESTINATION share/bash-completion/completions
          RENAME baton)
endif()

set(CPACK_PACKAGE_NAME baton)
set(CPACK_PACKAGE_VENDOR "baton maintainers")
set(CPACK_PACKAGE_CONTACT "baton maintainers <maintainers@users.noreply.a-seed-8d4642ad.example>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "leader-election sidecar on Redis")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR DEB)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE ${baton_debian_revision})
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# CPack puts CPACK_PACKAGE_DESCRIPTION_SUMMARY first as the synopsis, indents
# these lines and turns the empty one into " .".
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION [=[Copies of one worker run on many machines; next to each runs baton. Every
baton competes for one lease in Redis, and only the holder's app works:
baton starts and stops it as a supervised command, runs hooks, or tells it
over a Unix socket. A new leader never starts while the old one may still
be working.

This package runs baton as the systemd service baton.service, or one
election per instance as baton@NAME.service.]=])
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# adduser: the postinst creates the system user. procps: /bin/kill, the units'
# ExecReload. dpkg-shlibdeps adds the linked libraries; libpq5 is opened only
# for store.kind postgres (src/libpq/libpq_on_demand.hpp), libzookeeper-st2
# only for store.kind zookeeper (src/zookeeper/zookeeper_on_demand.hpp) and
# libssl3 only for TLS (src/openssl/openssl_on_demand.hpp) and libsystemd0
# only under systemd (src/systemd/libsystemd_on_demand.hpp), so they are
# recommended.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser, procps")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libpq5, libzookeeper-st2, libssl3, libsystemd0")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "redis-server | postgresql | etcd-server | zookeeper")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${BATON_DEBIAN_DIR}/conffiles ${BATON_DEBIAN_DIR}/postinst ${BATON_DEBIAN_DIR}/prerm
    ${BATON_DEBIAN_DIR}/postrm)
# Maintainer scripts 0755 and the rest 0644 whatever the checkout's modes are.
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

include(CPack)
