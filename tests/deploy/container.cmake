# The container image and the orchestration examples.
#
# manifests_test (label unit, fast): docker/compose.yaml and docker/kubernetes/
# parse, agree with the Dockerfile (entrypoint, socket, volume, port) and use
# only flags and BATON_* variables the built binary knows.
find_package(yaml-cpp REQUIRED)
add_executable(manifests_test ${CMAKE_CURRENT_SOURCE_DIR}/manifests_test.cpp
                              ${CMAKE_CURRENT_SOURCE_DIR}/manifests_support.cpp)
target_link_libraries(manifests_test PRIVATE yaml-cpp GTest::gtest_main)
target_compile_definitions(manifests_test PRIVATE BATON_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
                                                  BATON_BINARY="$<TARGET_FILE:baton>")
baton_warnings(manifests_test)
add_dependencies(manifests_test baton)
gtest_discover_tests(manifests_test PROPERTIES LABELS unit DISCOVERY_TIMEOUT 30)

# deploy_container_image (label deploy, 2-5 minutes, root): builds the image
# from a debootstrapped Debian 12 with buildah and runs two containers of it
# against a local redis-server (image-test.sh), then plays docker/kubernetes/
# on it with podman kube play (kube-play-test.sh). The build stage's compile takes
# what it can from the compiler cache this build tree's compile filled (same
# flags), so the daemon is not compiled twice. Exit 77 = skipped (no root or
# no podman/buildah/catatonit). COST: ctest starts the longest tests first, also in a
# new build tree with no timings yet.
add_test(NAME deploy_container_image
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/image-test.sh ${PROJECT_SOURCE_DIR}
                 ${CMAKE_CURRENT_BINARY_DIR}/image-test)
set_tests_properties(deploy_container_image PROPERTIES LABELS deploy TIMEOUT 900 PROCESSORS 2
                                                       SKIP_RETURN_CODE 77 COST 300)
