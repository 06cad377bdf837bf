# Unity batches (BATON_UNITY): each target's .cpp files compiled a batch at a
# time, from generated files that #include them. asio's, Beast's and gtest's
# templates are then parsed, instantiated and optimised once per batch rather
# than once per file: the daemon's components compiled in 241 CPU-seconds
# instead of 526 at -O2 on the 2-core CI machine (cold cache).
#
# Not CMake's own CMAKE_UNITY_BUILD, for two reasons:
#   - its batch files name the sources by absolute path, so a build in another
#     directory (the Dockerfile's /src, a new clone) misses every compiler
#     cache entry; these name them relative to the batch file, and the
#     compiler cache makes the rest of the command line relative
#     (scripts/compiler-cache.sh), so the image's build stage hits the entries
#     the first tier's build wrote;
#   - the order. A file that compiles only because a neighbour in its batch
#     came first (an #include it forgot, a helper or constant of the
#     neighbour's it uses by mistake) compiles in one order and not in the
#     other. The normal tree builds "forward" (scripts/build.sh, the
#     Dockerfile) and the sanitizer tree "reverse" (scripts/sanitized-tree.sh),
#     so every such file fails one of the two builds in CI.
# A file's own helpers therefore need names no other file of its target uses.
#
#   off      each file compiled alone (the default: editors, plain builds)
#   forward  batches of BATON_UNITY_BATCH files in source order
#   reverse  the same, the files in the opposite order
set(BATON_UNITY "off" CACHE STRING "Compile each target's files in batches: off, forward or reverse")
set_property(CACHE BATON_UNITY PROPERTY STRINGS off forward reverse)
set(BATON_UNITY_BATCH 16 CACHE STRING "Files per unity batch (BATON_UNITY)")
if(NOT BATON_UNITY MATCHES "^(off|forward|reverse)$")
  message(FATAL_ERROR "BATON_UNITY must be off, forward or reverse, not '${BATON_UNITY}'")
endif()
if(NOT BATON_UNITY_BATCH MATCHES "^[1-9][0-9]*$")
  message(FATAL_ERROR "BATON_UNITY_BATCH must be a whole number of files, not '${BATON_UNITY_BATCH}'")
endif()

# Properties that make a file's compile differ from its target's: such a file
# is compiled alone, as CMake's own unity builds do.
set(baton_unity_own_settings COMPILE_DEFINITIONS COMPILE_OPTIONS COMPILE_FLAGS INCLUDE_DIRECTORIES
                             SKIP_UNITY_BUILD_INCLUSION)

# baton_unity(TARGET): replace TARGET's batchable .cpp files by batch files.
function(baton_unity target)
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY" OR type STREQUAL "UTILITY")
    return()
  endif()
  get_target_property(sources ${target} SOURCES)
  get_target_property(target_dir ${target} SOURCE_DIR)
  get_target_property(binary_dir ${target} BINARY_DIR)
  set(batchable)
  set(kept)
  foreach(source IN LISTS sources)
    if(source MATCHES "^\\$<" OR NOT source MATCHES "\\.cpp$")
      list(APPEND kept ${source})
      continue()
    endif()
    cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY ${target_dir} NORMALIZE OUTPUT_VARIABLE path)
    set(alone FALSE)
    foreach(property IN LISTS baton_unity_own_settings)
      get_source_file_property(value ${path} TARGET_DIRECTORY ${target} ${property})
      if(value)
        set(alone TRUE)
      endif()
    endforeach()
    if(alone)
      list(APPEND kept ${path})
    else()
      list(APPEND batchable ${path})
    endif()
  endforeach()
  list(LENGTH batchable count)
  if(count LESS 2)
    return()
  endif()
  if(BATON_UNITY STREQUAL "reverse")
    list(REVERSE batchable)
  endif()
  set(unity_dir ${binary_dir}/unity)
  set(batch_files)
  set(content "")
  math(EXPR last "${count} - 1")
  foreach(i RANGE ${last})
    list(GET batchable ${i} path)
    file(RELATIVE_PATH relative ${unity_dir} ${path})
    string(APPEND content "#include \"${relative}\"\n")
    math(EXPR filled "(${i} + 1) % ${BATON_UNITY_BATCH}")
    if(filled EQUAL 0 OR i EQUAL last)
      math(EXPR index "${i} / ${BATON_UNITY_BATCH}")
      set(file ${unity_dir}/${target}_${index}.cpp)
      file(CONFIGURE OUTPUT ${file} CONTENT "${content}" @ONLY)
      list(APPEND batch_files ${file})
      set(content "")
    endif()
  endforeach()
  set_property(TARGET ${target} PROPERTY SOURCES ${kept} ${batch_files})
endfunction()

# baton_unity_tree(DIR SKIP...): baton_unity for every target defined in DIR
# and below, but the targets named in SKIP.
function(baton_unity_tree dir)
  if(BATON_UNITY STREQUAL "off")
    return()
  endif()
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    if(NOT target IN_LIST ARGN)
      baton_unity(${target})
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    baton_unity_tree(${subdir} ${ARGN})
  endforeach()
endfunction()
