# The systemd units and the Debian package.
#
# unit:   systemd-analyze verify (no output at all) and systemd-analyze security
#         (exposure level at most baton_max_exposure) for both units, without
#         installing them.
# deploy: cpack builds the .deb and lintian finds no error in it; then a
#         Debian 12 container installs it and boots with systemd-nspawn, and
#         baton must come up, lead, and be restarted by the watchdog when it
#         hangs (nspawn-boot.sh). Both need root.

set(baton_units_dir ${PROJECT_SOURCE_DIR}/systemd)
set(baton_unit_check ${CMAKE_CURRENT_SOURCE_DIR}/systemd-unit-check.sh)
# What the units reach now (systemd 252), so that a weakened sandbox fails;
# lower it when the units get stricter.
set(baton_max_exposure 1.5)

foreach(unit IN ITEMS baton.service baton@.service)
  # A template is checked as one of its instances.
  string(REPLACE "@." "@demo." checked ${unit})
  string(REPLACE "@" "_template" test_suffix ${unit})
  string(REPLACE ".service" "" test_suffix ${test_suffix})
  add_test(NAME systemd_verify_${test_suffix}
           COMMAND ${baton_unit_check} verify $<TARGET_FILE:baton> ${baton_units_dir}/${unit} ${checked})
  add_test(NAME systemd_security_${test_suffix}
           COMMAND ${baton_unit_check} security $<TARGET_FILE:baton> ${baton_units_dir}/${unit}
                   ${checked} ${baton_max_exposure})
  set_tests_properties(systemd_verify_${test_suffix} systemd_security_${test_suffix}
                       PROPERTIES LABELS unit SKIP_RETURN_CODE 77 TIMEOUT 60)
endforeach()

set(baton_deb_dir ${CMAKE_CURRENT_BINARY_DIR}/deb)
add_test(NAME deb_package_lintian
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/deb-package-check.sh ${PROJECT_BINARY_DIR} ${baton_deb_dir})
set_tests_properties(deb_package_lintian PROPERTIES
                     LABELS deploy SKIP_RETURN_CODE 77 TIMEOUT 300 FIXTURES_SETUP baton_deb COST 100)

# The container's root file system lives under the build tree and is removed
# afterwards; debootstrap is most of the time. COST (here and above): ctest
# starts the longest tests first, also in a new build tree with no timings yet.
add_test(NAME nspawn_boot_deb
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/nspawn-boot.sh ${baton_deb_dir}
                 ${CMAKE_CURRENT_BINARY_DIR}/nspawn-boot)
set_tests_properties(nspawn_boot_deb PROPERTIES
                     LABELS deploy SKIP_RETURN_CODE 77 TIMEOUT 480 FIXTURES_REQUIRED baton_deb
                     RESOURCE_LOCK nspawn COST 100)
