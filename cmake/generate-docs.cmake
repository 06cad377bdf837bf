# Run by the baton_docs target (CMakeLists.txt): the built binary prints its
# man page and bash completion; the man page is also gzipped as Debian wants
# it (-9, no name or timestamp, so the package stays reproducible).
#
#   cmake -DBATON=path/to/baton -DMAN=out/baton.1 -DCOMPLETION=out/baton.bash-completion -P generate-docs.cmake
foreach(var BATON MAN COMPLETION)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "generate-docs.cmake: -D${var}=... is required")
  endif()
endforeach()

execute_process(COMMAND ${BATON} __man OUTPUT_FILE ${MAN} RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${BATON} __man failed: ${result}")
endif()
execute_process(COMMAND gzip -9 -n -c ${MAN} OUTPUT_FILE ${MAN}.gz RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "gzip of ${MAN} failed: ${result}")
endif()
execute_process(COMMAND ${BATON} __completion bash OUTPUT_FILE ${COMPLETION} RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${BATON} __completion bash failed: ${result}")
endif()
